// infer_internal.h - What the type-inference files (infer*.c) and the verifier share.
#ifndef GLOW_INFER_INTERNAL_H
#define GLOW_INFER_INTERNAL_H

#include "graph/graph.h"

/* Results held inside infer_cx; a node with more (IF and LOOP take any number) gets a heap
 * array, freed by infer_release. */
#define INFER_MAX_OUT 4

/* One inference run. Inference never writes to the node: results go to `out`, so the
 * verifier can recompute a node's types and compare them with what it holds. */
typedef struct infer_cx {
    const glow_node *n;
    glow_diag *d;
    /* The node's own result types (declared by the builder or computed earlier); NULL when
     * the builder gave none. Kinds like RESHAPE take their result shape from here. */
    const glow_type *declared;
    int ndeclared;
    glow_type *out; /* `cap` entries: `small`, or the heap when nout is larger */
    glow_type small[INFER_MAX_OUT];
    int cap;
    int nout;     /* results to produce: the node's count (at least 1, at most max_out) */
} infer_cx;

/* A type spelled out for messages, e.g. "f32[1, 3, 224, 224]". The struct lives until the
 * end of the full expression, so `ts(t).s` can be passed straight to a printf. */
typedef struct tstr {
    char s[112];
} tstr;
tstr ts(const glow_type *t);

/* Runs the full inference for n into cx (operand counts, attributes, dtypes, shapes).
 * `declared` (may be NULL) holds `nout` result types; nout 0 means the kind's max_out.
 * On success the caller reads cx->out and then calls infer_release; on failure nothing is
 * held. */
glow_status infer_run(infer_cx *cx, const glow_node *n, const glow_type *declared, int nout,
                      glow_diag *d);
void infer_release(infer_cx *cx);

/* Fails with "<Kind> '<name>': <message>". */
glow_status ifail(infer_cx *cx, glow_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* a * b into *out; false on int64 overflow. */
static inline bool mul_ok(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool add_ok(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

static inline const glow_type *in_type(const infer_cx *cx, int i)
{
    return glow_value_type(cx->n->ins[i]);
}
int64_t attr_i(const infer_cx *cx, glow_attr_id a, int64_t dflt);
double attr_f(const infer_cx *cx, glow_attr_id a, double dflt);
/* An int-list attribute; *count is 0 (and NULL returned) when absent. */
const int64_t *attr_ints(const infer_cx *cx, glow_attr_id a, int *count);
const char *attr_s(const infer_cx *cx, glow_attr_id a, const char *dflt);
/* The int list `a` must hold exactly `want` values. */
glow_status want_ints(infer_cx *cx, glow_attr_id a, int want, const int64_t **vals);
/* The string attribute must be one of the space-separated words in `allowed`. */
glow_status want_str_in(infer_cx *cx, glow_attr_id a, const char *allowed);
/* A single-axis attribute must lie in [0, limit). */
glow_status want_axis(infer_cx *cx, glow_attr_id a, int limit, int *axis);

/* Dtype families, for operand checks. `role` names the operand in messages. */
glow_status want_float(infer_cx *cx, int i, const char *role);   /* float or quantized */
glow_status want_numeric(infer_cx *cx, int i, const char *role); /* anything but bool */
glow_status want_index(infer_cx *cx, int i, const char *role);   /* i32 or i64 */
glow_status want_same_dtype(infer_cx *cx, int i, int j, const char *ri, const char *rj);
glow_status want_rank(infer_cx *cx, int i, const char *role, int lo, int hi);

/* Sets result i to `t` (quantized results keep the declared scale and offset). */
void set_out(infer_cx *cx, int i, const glow_type *t);
void set_out_dims(infer_cx *cx, int i, glow_dtype dt, int rank, const int64_t *dims);

/* The result kind of a computation on operands of kind x: for quantized x the declared
 * result's kind when it is quantized or i32 (the raw accumulator), else x. */
glow_dtype quant_result_kind(const infer_cx *cx, glow_dtype x);

/* Families, one per file. Each handles the kinds it returns true for in *handled. */
glow_status infer_nn(infer_cx *cx, bool *handled);      /* infer_nn.c */
glow_status infer_shape(infer_cx *cx, bool *handled);   /* infer_shape.c */
glow_status infer_reduce(infer_cx *cx, bool *handled);  /* infer_reduce.c */
glow_status infer_prim(infer_cx *cx, bool *handled);    /* infer_prim.c */
glow_status infer_quant(infer_cx *cx, bool *handled);   /* infer_quant.c */
glow_status infer_dyn(infer_cx *cx, bool *handled);     /* infer_dyn.c */
glow_status infer_loop(infer_cx *cx, bool *handled);    /* infer_control.c */
glow_status infer_string(infer_cx *cx, bool *handled);  /* infer_string.c */

#endif
