// fold_pad.c - Folds a constant Pad of the spatial dims into the padding of the Conv,
// AveragePool or MaxPool that reads it.
// Requires: verified graph. Keeps: topological order; results bit-exact.
//
// Which pad value a consumer's own padding stands for decides what may fold: Conv pads with
// zeros, so only a zero Pad folds into it; AveragePool with count_include_pad=1 averages the
// padding as zeros, so a zero Pad folds there too (with count_include_pad=0 the explicit
// zeros would count and the implicit ones would not: no fold); MaxPool's padding never wins
// a max, which is a -inf Pad, not a zero one (zero would lose to negative inputs). Negative
// pads (crops) and pads of N or C never fold. The Pad stays for other users.
#include <math.h>
#include <string.h>

#include "opt/opt_internal.h"

static bool pad_value_ok(const glow_node *c, double value)
{
    switch (c->kind) {
    case NK_CONV:
        return value == 0;
    case NK_AVG_POOL:
        return value == 0 && glow_node_int(c, GA_COUNT_INCLUDE_PAD, 0) != 0;
    case NK_MAX_POOL:
        return isinf(value) && value < 0;
    default:
        return false;
    }
}

static void fold(opt_cx *cx, glow_node *c)
{
    glow_node *pad = c->ins[0].node;
    if (pad->kind != NK_PAD || strcmp(glow_node_str(pad, GA_MODE, "constant"), "constant"))
        return;
    if (!pad_value_ok(c, glow_node_float(pad, GA_VALUE, 0)))
        return;
    int rank = glow_value_type(pad->ins[0])->rank, npads = 0, ncp = 0;
    const int64_t *pp = glow_node_ints(pad, GA_PADS, &npads);
    const int64_t *cp = glow_node_ints(c, GA_PADS, &ncp);
    int sp = rank - 2;
    if (rank < 3 || npads != 2 * rank || ncp != 2 * sp)
        return;
    int64_t np[2 * GLOW_MAX_DIMS];
    for (int k = 0; k < rank; k++) {
        if (pp[k] < 0 || pp[rank + k] < 0)
            return;
        if (k < 2 && (pp[k] || pp[rank + k]))
            return;
    }
    int nk = 0;
    const int64_t *kernel = glow_node_ints(c, GA_KERNEL, &nk);
    for (int k = 0; k < sp; k++) {
        np[k] = cp[k] + pp[2 + k];
        np[sp + k] = cp[sp + k] + pp[rank + 2 + k];
        /* A pool window made only of padding has no element of its own, which the pool's
         * implicit padding may treat differently from explicit values. */
        if (c->kind != NK_CONV && (nk != sp || np[k] >= kernel[k] || np[sp + k] >= kernel[k]))
            return;
    }
    glow_node *nc = opt_build(cx, c, c, NULL, c->kind, c->ins, (int)c->nin, c->attrs,
                              (int)c->nattr, &c->outs[0]);
    if (!nc)
        return;
    opt_set_operand(nc, 0, pad->ins[0]);
    glow_node_set_ints(nc, GA_PADS, np, 2 * sp);
    glow_diag_clear(cx->d);
    if (glow_infer_types(nc, cx->d) != GLOW_OK || !glow_type_equal(&nc->outs[0], &c->outs[0])) {
        glow_diag_clear(cx->d);
        opt_erase(nc);
        return;
    }
    opt_replace(cx, c, glow_val(nc, 0));
}

void glow_pass_fold_pad(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if ((n->kind == NK_CONV || n->kind == NK_AVG_POOL ||
             (n->kind == NK_MAX_POOL && n->nout == 1)) && n->nin >= 1)
            fold(cx, n);
    }
}
