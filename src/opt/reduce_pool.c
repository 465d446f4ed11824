// reduce_pool.c - ReduceMean over H and W of an f32 N, C, H, W tensor becomes an AveragePool
// with the whole spatial extent as kernel (global average pooling), followed by a Reshape when
// the reduction drops the dims.
//
// Only 2-D f32 pooling: that is what the pooling kernels (the cpu backend's blocked ones
// among them) run, while other ranks and float kinds have none, and the reduction kernels
// run every ReduceMean as fast as a pool would.
// Requires: verified graph. Keeps: topological order; results within float rounding.
#include "opt/opt_internal.h"

static void rewrite(opt_cx *cx, glow_node *n)
{
    const glow_type *t = glow_value_type(n->ins[0]);
    int naxes = 0;
    const int64_t *axes = glow_node_ints(n, GA_AXES, &naxes);
    int sp = t->rank - 2;
    if (t->rank != 4 || naxes != sp || t->dtype != GLOW_F32)
        return;
    int64_t kernel[2], ones[2], pads[4] = { 0 };
    for (int k = 0; k < sp; k++) {
        if (axes[k] != k + 2)
            return;
        kernel[k] = t->dims[k + 2];
        ones[k] = 1;
    }
    glow_attr a[5] = { GLOW_AINTS(KERNEL, kernel, sp), GLOW_AINTS(STRIDES, ones, sp),
                       GLOW_AINTS(PADS, pads, 2 * sp), GLOW_AINTS(DILATIONS, ones, sp),
                       GLOW_AI(COUNT_INCLUDE_PAD, 0) };
    bool keep = glow_node_int(n, GA_KEEPDIMS, 1) != 0;
    glow_node *p = opt_build(cx, n, n, keep ? NULL : "pool", NK_AVG_POOL, n->ins, 1, a, 5,
                             NULL);
    if (!p)
        return;
    glow_node *r = p;
    if (!glow_type_equal(&p->outs[0], &n->outs[0])) {
        r = opt_build(cx, n, n, NULL, NK_RESHAPE, &(glow_value){ p, 0 }, 1, NULL, 0,
                      &n->outs[0]);
        if (!r)
            return;
    }
    opt_replace(cx, n, glow_val(r, 0));
}

void glow_pass_reduce_pool(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_REDUCE_MEAN)
            rewrite(cx, n);
    }
}
