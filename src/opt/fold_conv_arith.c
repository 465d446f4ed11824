// fold_conv_arith.c - Folds Mul/Add/Sub/Div of a Conv (or FullyConnected/Gemm) result by a
// per-channel constant into the producer's weights and bias.
// Requires: verified graph. Keeps: topological order; results within float rounding.
//
// The constant may be a splat or constant over every dim but the channel (dim 1): the
// importer materializes a [1, C, 1, 1] operand broadcast to the full shape, which
// opt_per_channel recognizes. y*k scales the channel, y+k and y-k shift it, k-y negates and
// shifts, y/k scales by 1/k; k/y is not affine and stays.
#include <stdlib.h>

#include "opt/opt_internal.h"

static void fold(opt_cx *cx, glow_node *n)
{
    for (int side = 0; side < 2; side++) {
        glow_node *p = n->ins[side].node;
        glow_value k = n->ins[1 - side];
        int64_t C;
        if (p->nusers != 1 || !opt_affine_foldable(p, &C) || C <= 0)
            continue;
        if (n->kind == NK_DIV && side == 1)
            continue;
        double *v = glow_xcalloc((size_t)C * 3, sizeof *v);
        double *kv = v, *s = v + C, *t = v + 2 * C;
        bool ok = opt_per_channel(k, &n->outs[0], kv);
        for (int64_t c = 0; ok && c < C; c++) {
            switch (n->kind) {
            case NK_MUL: s[c] = kv[c]; t[c] = 0; break;
            case NK_ADD: s[c] = 1; t[c] = kv[c]; break;
            case NK_SUB: s[c] = side ? -1 : 1; t[c] = side ? kv[c] : -kv[c]; break;
            default: s[c] = 1 / kv[c]; t[c] = 0; ok = kv[c] != 0; break;
            }
        }
        if (ok)
            opt_affine_fold(cx, p, n, s, t);
        free(v);
        if (ok)
            return;
    }
}

void glow_pass_fold_conv_arith(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if ((n->kind == NK_MUL || n->kind == NK_ADD || n->kind == NK_SUB || n->kind == NK_DIV) &&
            glow_dtype_is_float(n->outs[0].dtype))
            fold(cx, n);
    }
}
