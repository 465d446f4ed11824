// minmax_clip.c - Max(x, splat a) and Min(x, splat b) become Clip, and Clip(Clip(x)) with
// overlapping ranges becomes one Clip, so Relu6 written as Min(Max(x, 0), 6) is one node.
// Requires: verified graph. Keeps: topological order; results bit-exact.
//
// Two Clips merge only when max(a1, a2) <= min(b1, b2): with disjoint ranges the result is a
// constant bound, which a single Clip with min > max would not give.
#include <math.h>

#include "opt/opt_internal.h"

static void to_clip(opt_cx *cx, glow_node *n)
{
    for (int side = 0; side < 2; side++) {
        double v;
        if (!opt_splat_value(n->ins[1 - side], &v) || isnan(v))
            continue;
        double lo = n->kind == NK_MAX ? v : -INFINITY, hi = n->kind == NK_MIN ? v : INFINITY;
        glow_attr a[2] = { GLOW_AF(MIN, lo), GLOW_AF(MAX, hi) };
        glow_node *c = opt_build(cx, n, n, NULL, NK_CLIP, &n->ins[side], 1, a, 2, NULL);
        if (c)
            opt_replace(cx, n, glow_val(c, 0));
        return;
    }
}

static void merge(opt_cx *cx, glow_node *n)
{
    glow_node *in = n->ins[0].node;
    double lo = fmax(glow_node_float(in, GA_MIN, -INFINITY), glow_node_float(n, GA_MIN, -INFINITY));
    double hi = fmin(glow_node_float(in, GA_MAX, INFINITY), glow_node_float(n, GA_MAX, INFINITY));
    if (!(lo <= hi))
        return;
    glow_node_set_float(n, GA_MIN, lo);
    glow_node_set_float(n, GA_MAX, hi);
    opt_set_operand(n, 0, in->ins[0]);
    cx->changes++;
}

void glow_pass_minmax_clip(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (!glow_dtype_is_float(n->outs[0].dtype) || n->nout != 1)
            continue;
        if (n->kind == NK_MAX || n->kind == NK_MIN)
            to_clip(cx, n);
        else if (n->kind == NK_CLIP && n->ins[0].node->kind == NK_CLIP &&
                 opt_single_use(n->ins[0]))
            merge(cx, n);
    }
}
