// onnx_write_internal.h - What the ONNX writer's two files share: the writer's state, value
// names, initializers, the QDQ helpers (onnx_write.c) and the per-kind node mapping
// (onnx_write_ops.c).
#ifndef GLOW_ONNX_WRITE_INTERNAL_H
#define GLOW_ONNX_WRITE_INTERNAL_H

#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

/* Results per node the name tables hold (no kind has more than 3). */
#define WX_MAX_RES 4

typedef struct wx {
    glow_arena a;                 /* every proto structure and name */
    const glow_function *f;
    GLOW_VEC(Onnx__NodeProto *) nodes;
    GLOW_VEC(Onnx__TensorProto *) inits;
    glow_strmap taken;            /* ONNX names in use */
    glow_strmap shared;           /* small initializers by content key -> name */
    const char **names;           /* [node id * WX_MAX_RES + res]: a value's ONNX name */
    const char **fnames;          /* the same: its dequantized (float) name, once made */
    uint32_t nids;
    const glow_node *at;          /* the node being written, for messages */
    glow_status status;           /* first failure (its message is in d) */
    glow_diag *d;
} wx;

/* --- onnx_write.c --- */

/* Records a failure naming the node being written ("node 'x' (Kind): ..."); returns it. */
glow_status wx_fail(wx *w, glow_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A fresh name derived from base ("conv1", "conv1_2", ...). */
const char *wx_unique(wx *w, const char *base);
/* The ONNX element type of a dtype: quantized kinds are their integer storage. 0: none. */
int wx_onnx_dtype(glow_dtype t);
/* The ONNX name of v: a graph input, an initializer for a Constant (written on first use),
 * or the name of a node result. Quantized values are their integers (uint8, int8, int32). */
const char *wx_val(wx *w, glow_value v);
/* v as a float: v itself, or a DequantizeLinear of it (one per value) when quantized. */
const char *wx_fval(wx *w, glow_value v);
/* Adds an initializer (data borrowed: it must outlive the write) named after base. */
const char *wx_init(wx *w, const char *base, int onnx_dtype, int rank, const int64_t *dims,
                    const void *data);
/* A 1-D int64 initializer (shapes, axes, starts, ...). */
const char *wx_ints(wx *w, const char *base, int n, const int64_t *v);
/* A scalar initializer of dtype t (a plain kind) holding v. */
const char *wx_scalar(wx *w, const char *base, glow_dtype t, double v);
/* Appends a node; its inputs and outputs are copied (NULL or "" inputs: omitted optional
 * ones). */
Onnx__NodeProto *wx_node(wx *w, const char *op, const char *name, int nin, const char **ins,
                         int nout, const char **outs);
void wx_attr_int(wx *w, Onnx__NodeProto *p, const char *name, int64_t v);
void wx_attr_float(wx *w, Onnx__NodeProto *p, const char *name, float v);
void wx_attr_ints(wx *w, Onnx__NodeProto *p, const char *name, int n, const int64_t *v);
void wx_attr_str(wx *w, Onnx__NodeProto *p, const char *name, const char *s);
void wx_add_input(wx *w, Onnx__NodeProto *p, const char *name);
/* Where result v of a node is computed in float: v's own name, or a temporary that
 * wx_result_end quantizes into v when v is quantized. */
const char *wx_result_begin(wx *w, glow_value v);
void wx_result_end(wx *w, glow_value v, const char *fname);
/* DequantizeLinear(q, scale, zero point) into `into`, or a new name made from base when it is
 * NULL; per-axis (axis 0) when n > 1. Returns the result's name. */
const char *wx_dequantize(wx *w, const char *q, glow_dtype qt, int n, const float *scales,
                          const int32_t *zps, const char *base, const char *into);
/* QuantizeLinear(x) into the name of quantized value v. */
void wx_quantize_into(wx *w, const char *x, glow_value v);

/* --- onnx_write_ops.c --- */

/* Writes one function node (not Save) as ONNX nodes. */
glow_status wx_write_node(wx *w, const glow_node *n);

#endif
