// merge_rescale.c - A RescaleQuantized that is the only user of a node which requantizes its
// result anyway (a quantized product, convolution, arithmetic, pool, activation, Quantize)
// disappears into it: the node produces the rescaled type directly, one rounding instead of
// two.
// Requires: verified graph. Keeps: topological order; results within one quantization step
// (one rounding fewer).
#include "opt/opt_internal.h"

static bool requantizes(const glow_node *p)
{
    if (p->nout != 1 || !glow_dtype_is_quantized(p->outs[0].dtype))
        return false;
    switch (p->kind) {
    case NK_CHANNELWISE_QCONV: case NK_FULLY_CONNECTED: case NK_MATMUL: case NK_ADD:
    case NK_SUB: case NK_MUL: case NK_MAX: case NK_MIN: case NK_RELU: case NK_CLIP:
    case NK_AVG_POOL: case NK_MAX_POOL: case NK_QUANTIZE: case NK_RESCALE_QUANTIZED:
        return true;
    default:
        return false;
    }
}

void glow_pass_merge_rescale(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind != NK_RESCALE_QUANTIZED)
            continue;
        glow_node *p = n->ins[0].node;
        if (!requantizes(p) || !opt_single_use(n->ins[0]))
            continue;
        glow_node *r = opt_build(cx, n, p, NULL, p->kind, p->ins, (int)p->nin, p->attrs,
                                 (int)p->nattr, &n->outs[0]);
        if (r)
            opt_replace(cx, n, glow_val(r, 0));
    }
}
