// fuse_softmax.c - Div(Exp(x), Broadcast(ReduceSum(Exp(x), axis a, keepdims))) becomes
// Softmax(x, axis a).
// Requires: verified graph. Keeps: topological order; results within float rounding (Softmax
// subtracts the max first, so it is the same where the pattern does not overflow, and
// better where it does).
//
// The Exp must feed only the sum and the division; models that subtract the max themselves
// (Exp(x - max)) fold too, x then being the difference.
#include "opt/opt_internal.h"

static void fuse(opt_cx *cx, glow_node *div)
{
    glow_node *e = div->ins[0].node, *den = div->ins[1].node;
    if (e->kind != NK_EXP || e->nusers != 2)
        return;
    if (den->kind == NK_BROADCAST && opt_single_use(div->ins[1]))
        den = den->ins[0].node;
    if (den->kind != NK_REDUCE_SUM || den->ins[0].node != e || den->nusers != 1 ||
        !glow_node_int(den, GA_KEEPDIMS, 1))
        return;
    int naxes = 0;
    const int64_t *axes = glow_node_ints(den, GA_AXES, &naxes);
    if (naxes != 1)
        return;
    glow_attr a = GLOW_AI(AXIS, axes[0]);
    glow_node *sm = opt_build(cx, div, div, NULL, NK_SOFTMAX, e->ins, 1, &a, 1, NULL);
    if (sm)
        opt_replace(cx, div, glow_val(sm, 0));
}

void glow_pass_fuse_softmax(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_DIV && glow_dtype_is_float(n->outs[0].dtype))
            fuse(cx, n);
    }
}
