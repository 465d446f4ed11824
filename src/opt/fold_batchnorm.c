// fold_batchnorm.c - Folds an inference BatchNormalization into the Conv, FullyConnected or
// Gemm that produces its operand: with s = scale / sqrt(var + eps), the weights of output
// channel c scale by s[c] and the bias becomes (b - mean) * s + bias.
// Requires: verified graph. Keeps: topological order; results within float rounding.
//
// The producer must have no other user (the others need the unnormalized values) and constant
// float weights, bias and BN parameters.
#include <math.h>
#include <stdlib.h>

#include "opt/opt_internal.h"

static bool param(glow_value v, int64_t C, double *out)
{
    const glow_node *n = v.node;
    const glow_type *t = &n->outs[0];
    if (n->kind != NK_CONSTANT || !n->payload.data || !glow_dtype_is_float(t->dtype) ||
        glow_type_numel(t) != C)
        return false;
    for (int64_t c = 0; c < C; c++)
        out[c] = glow_load_f64(t->dtype, n->payload.data, (size_t)c);
    return true;
}

static void fold(opt_cx *cx, glow_node *bn)
{
    glow_node *p = bn->ins[0].node;
    int64_t C;
    if (p->nusers != 1 || !opt_affine_foldable(p, &C) || C <= 0 ||
        !glow_type_equal(&p->outs[0], &bn->outs[0]))
        return;
    double *v = glow_xcalloc((size_t)C * 4, sizeof *v);
    double *scale = v, *bias = v + C, *mean = v + 2 * C, *var = v + 3 * C;
    if (param(bn->ins[1], C, scale) && param(bn->ins[2], C, bias) &&
        param(bn->ins[3], C, mean) && param(bn->ins[4], C, var)) {
        double eps = glow_node_float(bn, GA_EPSILON, 1e-5);
        for (int64_t c = 0; c < C; c++) {
            double s = scale[c] / sqrt(var[c] + eps);
            scale[c] = s;                    /* s */
            bias[c] = bias[c] - mean[c] * s; /* t */
        }
        opt_affine_fold(cx, p, bn, scale, bias);
    }
    free(v);
}

void glow_pass_fold_batchnorm(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_BATCH_NORM)
            fold(cx, n);
    }
}
