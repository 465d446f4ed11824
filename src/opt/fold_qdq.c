// fold_qdq.c - Conversions that cancel: Quantize(Dequantize(q)) becomes q when the types
// match and one RescaleQuantized otherwise; a RescaleQuantized to its operand's own type goes;
// two RescaleQuantized in a row become one; Reinterpret(Reinterpret(x)) back to x's type is
// x. Imported QDQ models and the quantizer's boundaries leave such pairs.
// Requires: verified graph. Keeps: topological order; results bit-exact except where two
// roundings become one (Quantize(Dequantize), Rescale(Rescale)): within one quantization
// step of the result, as Glow's quantization optimizations are.
#include "opt/opt_internal.h"

static bool is_quantized(glow_value v)
{
    return glow_dtype_is_quantized(glow_value_type(v)->dtype);
}

void glow_pass_fold_qdq(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->nin != 1)
            continue;
        glow_value x = n->ins[0];
        const glow_type *y = &n->outs[0];
        glow_node *p = x.node;
        if (n->kind == NK_QUANTIZE && p->kind == NK_DEQUANTIZE && is_quantized(p->ins[0])) {
            glow_value q = p->ins[0];
            if (glow_type_equal(glow_value_type(q), y)) {
                opt_replace(cx, n, q);
            } else {
                glow_node *r = opt_build(cx, n, n, NULL, NK_RESCALE_QUANTIZED, &q, 1, NULL, 0,
                                         y);
                if (r)
                    opt_replace(cx, n, glow_val(r, 0));
            }
        } else if (n->kind == NK_RESCALE_QUANTIZED && glow_type_equal(glow_value_type(x), y)) {
            opt_replace(cx, n, x);
        } else if (n->kind == NK_RESCALE_QUANTIZED && p->kind == NK_RESCALE_QUANTIZED) {
            glow_node *r = opt_build(cx, n, n, NULL, NK_RESCALE_QUANTIZED, p->ins, 1, NULL, 0,
                                     y);
            if (r)
                opt_replace(cx, n, glow_val(r, 0));
        } else if (n->kind == NK_REINTERPRET && p->kind == NK_REINTERPRET &&
                   glow_type_equal(glow_value_type(p->ins[0]), y)) {
            opt_replace(cx, n, p->ins[0]);
        }
    }
}
