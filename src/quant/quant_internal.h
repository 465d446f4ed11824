// quant_internal.h - What the quantizer's files (quantize.c, weights.c) share.
#ifndef GLOW_QUANT_INTERNAL_H
#define GLOW_QUANT_INTERNAL_H

#include "quant/quant.h"

typedef struct quant_cx {
    glow_function *f;
    const glow_quant_options *o;
    glow_quant_lookup look;
    void *look_ctx;
    glow_diag *d;
    glow_status status;
    int nquantized;
} quant_cx;

/* glow_build placed before `before`, named "<base>/<what>" (base's name when what is NULL);
 * NULL with cx->status set on failure. */
glow_node *quant_build(quant_cx *cx, glow_node *before, const glow_node *base,
                       const char *what, glow_node_kind k, const glow_value *ins, int nin,
                       const glow_attr *attrs, int nattr, const glow_type *declared);

/* Operand v of `user` as a quantized value: the quantized value behind a Dequantize, a
 * Quantize of a constant (folded later), or Quantize(v) with v's recorded range. `want` (may
 * be NULL) asks for one exact type, rescaling when needed. False when v has no range. */
bool quant_operand(quant_cx *cx, glow_node *user, glow_value v, const glow_type *want,
                   glow_value *out);

/* How a converted node replaces n (and the activation folded into it). */
typedef void (*quant_replace_fn)(quant_cx *cx, glow_node *n, glow_node *act, glow_node *q);

/* weights.c: Conv -> ChannelwiseQuantizedConv and FullyConnected with int8 weights and int32
 * biases computed here; result type *yt, activation `act` folded (may be NULL). */
bool quant_conv(quant_cx *cx, glow_node *n, glow_node *act, const glow_type *yt,
                quant_replace_fn replace);
bool quant_fc(quant_cx *cx, glow_node *n, glow_node *act, const glow_type *yt,
              quant_replace_fn replace);
/* The min and max of a float constant. */
void quant_constant_minmax(const glow_node *c, double *lo, double *hi);
/* Sets fused_act/fused_alpha/fused_beta of q from a Relu or Clip node. */
void quant_fold_act(glow_node *q, const glow_node *act);

#endif
