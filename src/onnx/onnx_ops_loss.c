// onnx_ops_loss.c - Loaders for NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, built
// from gathers, selects and reductions.
//
// Both losses pick, for every sample position, the (log-)probability of its target class:
// GATHER_ELEMENTS along the class axis with the targets as indices. ignore_index is handled
// the way ONNX's function body does it: ignored targets are replaced by class 0 before the
// gather (they may lie outside [0, C)), and their loss and weight are forced to zero with
// WHERE, so an ignored position contributes nothing to the sum or to the mean's divisor.
#include <string.h>

#include "onnx/onnx_internal.h"

/* Sums every element of v into a scalar. */
static glow_status reduce_all(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                              glow_value v, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    if (t->rank == 0) {
        *out = v;
        return GLOW_OK;
    }
    int64_t axes[GLOW_MAX_DIMS];
    for (int i = 0; i < t->rank; i++)
        axes[i] = i;
    glow_attr a[2] = { GLOW_AINTS(AXES, axes, t->rank), GLOW_AI(KEEPDIMS, 0) };
    return onnx_build(cx, np, kind, &v, 1, a, 2, NULL, 0, out);
}

/* The loss of NegativeLogLikelihoodLoss over logp [N, C, d...] (already log-probabilities),
 * target [N, d...] and optional weight [C]; `reduction` is none, sum or mean. */
static glow_status nll_loss(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value logp,
                            glow_value target, const glow_value *weight, const char *reduction,
                            glow_value *out)
{
    const glow_type xt = *glow_value_type(logp), tt = *glow_value_type(target);
    if (!glow_dtype_is_float(xt.dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input must be floating point, not %s",
                         glow_dtype_name(xt.dtype));
    if (tt.dtype != GLOW_I64 && tt.dtype != GLOW_I32)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "target must be i32 or i64, not %s",
                         glow_dtype_name(tt.dtype));
    if (xt.rank < 2 || tt.rank != xt.rank - 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input has rank %d and target rank %d; "
                         "expected [N, C, d...] and [N, d...]", xt.rank, tt.rank);
    for (int i = 0; i < tt.rank; i++)
        if (tt.dims[i] != xt.dims[i == 0 ? 0 : i + 1])
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "target dim %d is %lld, input has "
                             "%lld there", i, (long long)tt.dims[i],
                             (long long)xt.dims[i == 0 ? 0 : i + 1]);
    if (weight) {
        const glow_type *wt = glow_value_type(*weight);
        if (wt->rank != 1 || wt->dims[0] != xt.dims[1] || wt->dtype != xt.dtype)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "weight must be %s[%lld]",
                             glow_dtype_name(xt.dtype), (long long)xt.dims[1]);
    }
    bool mean = strcmp(reduction, "mean") == 0, sum = strcmp(reduction, "sum") == 0;
    if (!mean && !sum && strcmp(reduction, "none") != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "reduction '%s' (none, sum or mean)",
                         reduction);

    const Onnx__AttributeProto *ii_attr = onnx_attr(np, "ignore_index");
    glow_value idx = target, mask = { 0 };
    glow_value fzero = { 0 };
    if (ii_attr) {
        fzero = onnx_sub_scalar(cx, np, "zero", xt.dtype, 0.0);
        int64_t ii = onnx_attr_int(np, "ignore_index", 0);
        glow_value iiv = onnx_sub_scalar(cx, np, "ignore_index", tt.dtype, (double)ii);
        glow_value izero = onnx_sub_scalar(cx, np, "class0", tt.dtype, 0.0);
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_EQUAL, (glow_value[]){ target, iiv }, 2, NULL,
                                     0, &mask));
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ mask, izero, target }, 3,
                                     NULL, 0, &idx));
    }
    /* [N, d...] -> [N, 1, d...] indices for a gather along the class axis. */
    int64_t udims[GLOW_MAX_DIMS];
    udims[0] = tt.dims[0];
    udims[1] = 1;
    for (int i = 1; i < tt.rank; i++)
        udims[i + 1] = tt.dims[i];
    glow_value uidx, picked, loss;
    GLOW_TRY(onnx_reshape(cx, np, idx, xt.rank, udims, &uidx));
    glow_attr ax1 = GLOW_AI(AXIS, 1);
    GLOW_TRY(onnx_build(cx, np, NK_GATHER_ELEMENTS, (glow_value[]){ logp, uidx }, 2, &ax1, 1,
                        NULL, 0, &picked));
    GLOW_TRY(onnx_reshape(cx, np, picked, tt.rank, tt.dims, &picked));
    GLOW_TRY(onnx_build(cx, np, NK_NEG, &picked, 1, NULL, 0, NULL, 0, &loss));
    if (ii_attr)
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ mask, fzero, loss }, 3,
                                     NULL, 0, &loss));

    /* Per-position weights: weight[target] (0 where ignored), or the not-ignored mask. */
    glow_value w = { 0 };
    bool have_w = false;
    if (weight) {
        glow_attr ax0 = GLOW_AI(AXIS, 0);
        GLOW_TRY(onnx_build(cx, np, NK_GATHER, (glow_value[]){ *weight, idx }, 2, &ax0, 1, NULL,
                            0, &w));
        if (ii_attr)
            GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ mask, fzero, w }, 3,
                                         NULL, 0, &w));
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ loss, w }, 2, NULL, 0,
                                     &loss));
        have_w = true;
    } else if (ii_attr && mean) {
        glow_value one = onnx_sub_scalar(cx, np, "one", xt.dtype, 1.0);
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ mask, fzero, one }, 3,
                                     NULL, 0, &w));
        have_w = true;
    }
    if (!mean && !sum) {
        *out = loss;
        return GLOW_OK;
    }
    if (sum || !have_w)
        return reduce_all(cx, np, sum ? NK_REDUCE_SUM : NK_REDUCE_MEAN, loss, out);
    /* The mean is weighted: divided by the weights' sum, not the position count. */
    glow_value lsum, wsum;
    GLOW_TRY(reduce_all(cx, np, NK_REDUCE_SUM, loss, &lsum));
    GLOW_TRY(reduce_all(cx, np, NK_REDUCE_SUM, w, &wsum));
    return onnx_build_elemwise(cx, np, NK_DIV, (glow_value[]){ lsum, wsum }, 2, NULL, 0, out);
}

/* Reads input/target/weight and the reduction shared by both losses. */
static glow_status loss_inputs(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value *x,
                               glow_value *target, glow_value *weight, bool *has_weight,
                               const char **reduction)
{
    GLOW_TRY(onnx_attr_check(cx, np, "reduction", 3));
    GLOW_TRY(onnx_attr_check(cx, np, "ignore_index", 2));
    GLOW_TRY(onnx_input(cx, np, 0, x));
    GLOW_TRY(onnx_input(cx, np, 1, target));
    *has_weight = onnx_has_input(np, 2);
    if (*has_weight)
        GLOW_TRY(onnx_input(cx, np, 2, weight));
    *reduction = onnx_attr_str(cx, np, "reduction", "mean");
    return GLOW_OK;
}

glow_status load_nll_loss(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, target, weight, loss;
    bool has_w;
    const char *reduction;
    GLOW_TRY(loss_inputs(cx, np, &x, &target, &weight, &has_w, &reduction));
    GLOW_TRY(nll_loss(cx, np, x, target, has_w ? &weight : NULL, reduction, &loss));
    return onnx_set_output(cx, np, 0, loss);
}

/* SoftmaxCrossEntropyLoss = NegativeLogLikelihoodLoss of LogSoftmax over the class axis;
 * the optional second output is that log-probability tensor. */
glow_status load_sce_loss(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, target, weight, logp, loss;
    bool has_w;
    const char *reduction;
    GLOW_TRY(loss_inputs(cx, np, &x, &target, &weight, &has_w, &reduction));
    if (glow_value_type(x)->rank < 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "scores have rank %d, expected >= 2",
                         glow_value_type(x)->rank);
    glow_attr ax1 = GLOW_AI(AXIS, 1);
    GLOW_TRY(onnx_build(cx, np, NK_LOG_SOFTMAX, &x, 1, &ax1, 1, NULL, 0, &logp));
    GLOW_TRY(nll_loss(cx, np, logp, target, has_w ? &weight : NULL, reduction, &loss));
    GLOW_TRY(onnx_set_output(cx, np, 0, loss));
    return onnx_set_output(cx, np, 1, logp);
}
