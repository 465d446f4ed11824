// onnx_ops_reduce.c - Loaders for ONNX reductions, ArgMax/ArgMin, TopK, CumSum and CumProd.
//
// The graph's reduction nodes carry fully normalized axes (non-negative, sorted, every dim
// listed when ONNX means "all"), so ONNX's defaults, negative axes and axes-as-input forms are
// resolved here. Inputs that decide a result shape (axes, K, axis) must be constants at
// import: onnx_input_ints reports a run-time value as unsupported.
#include <string.h>

#include "onnx/onnx_internal.h"

/* The `keepdims`-style 0/1 integer attribute `name`. */
static glow_status flag_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                             int64_t dflt, int64_t *out)
{
    GLOW_TRY(onnx_attr_check(cx, np, name, 2));
    *out = onnx_attr_int(np, name, dflt);
    if (*out != 0 && *out != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' must be 0 or 1, not %lld", name,
                         (long long)*out);
    return GLOW_OK;
}

/* Normalizes axes for `rank` into out (sorted, non-negative); duplicates fail. */
static glow_status normalize_axes(onnx_ctx *cx, const Onnx__NodeProto *np, const int64_t *axes,
                                  int n, int rank, int64_t *out)
{
    bool seen[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < n; i++) {
        int a;
        GLOW_TRY(onnx_axis(cx, np, axes[i], rank, &a));
        if (seen[a])
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %lld is listed twice in 'axes'",
                             (long long)axes[i]);
        seen[a] = true;
    }
    int k = 0;
    for (int a = 0; a < rank; a++)
        if (seen[a])
            out[k++] = a;
    return GLOW_OK;
}

/* A Reduce* op. `input_since` is the opset from which axes come as the optional input 1
 * (13 for ReduceSum, 18 for the rest) instead of the attribute. */
static glow_status reduce(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind, int input_since)
{
    glow_value x, out;
    bool axes_input = opset >= input_since;
    GLOW_TRY(onnx_check_inputs(cx, np, 1, axes_input ? 2 : 1));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *tx = glow_value_type(x);
    int64_t keepdims, noop;
    GLOW_TRY(flag_attr(cx, np, "keepdims", 1, &keepdims));
    GLOW_TRY(flag_attr(cx, np, "noop_with_empty_axes", 0, &noop));
    GLOW_TRY(onnx_attr_check(cx, np, "axes", 7));

    const int64_t *axes = NULL;
    int n = 0;
    if (axes_input && onnx_has_input(np, 1)) {
        int64_t *vals;
        GLOW_TRY(onnx_input_ints(cx, np, 1, &vals, &n));
        axes = vals;
    } else {
        /* The attribute (older opsets; tolerated in newer ones when the input is absent). */
        n = onnx_attr_ints(np, "axes", &axes);
        if (n < 0)
            n = 0;
    }
    if (n > GLOW_MAX_DIMS * 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'axes' has %d entries for rank %d", n,
                         tx->rank);
    if (n == 0 && noop && axes_input)
        return onnx_set_output(cx, np, 0, x);   /* the spec's identity */

    int64_t norm[GLOW_MAX_DIMS];
    int nnorm = tx->rank;
    if (n == 0) {
        for (int i = 0; i < tx->rank; i++)
            norm[i] = i;
    } else {
        GLOW_TRY(normalize_axes(cx, np, axes, n, tx->rank, norm));
        nnorm = n;
    }
    glow_attr a[2] = { GLOW_AINTS(AXES, norm, nnorm), GLOW_AI(KEEPDIMS, keepdims) };
    /* Opset 20 allows bool for ReduceMax/ReduceMin (any/all): reduce 0/1 as u8, whose empty
     * max 0 and min 255 read back as false and true, the identities of or and and. */
    bool as_u8 = tx->dtype == GLOW_BOOL && (kind == NK_REDUCE_MAX || kind == NK_REDUCE_MIN);
    if (as_u8)
        GLOW_TRY(onnx_cast(cx, np, x, GLOW_U8, &x));
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, a, 2, NULL, 0, &out));
    if (as_u8)
        GLOW_TRY(onnx_cast(cx, np, out, GLOW_BOOL, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* ReduceSum, ReduceMean, ... (the row's kind). ReduceSum takes its axes as an input from
 * opset 13, the others from opset 18. */
glow_status load_reduce(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return reduce(cx, np, opset, kind, kind == NK_REDUCE_SUM ? 13 : 18);
}

/* ArgMax / ArgMin: axis (default 0), keepdims, select_last_index (opset 12+). */
glow_status load_arg_reduce(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                            glow_node_kind kind)
{
    glow_value x, out;
    GLOW_TRY(onnx_check_inputs(cx, np, 1, 1));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    int64_t keepdims, last;
    int axis;
    GLOW_TRY(flag_attr(cx, np, "keepdims", 1, &keepdims));
    GLOW_TRY(flag_attr(cx, np, "select_last_index", 0, &last));
    GLOW_TRY(onnx_attr_check(cx, np, "axis", 2));
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), glow_value_type(x)->rank, &axis));
    glow_attr a[3] = { GLOW_AI(AXIS, axis), GLOW_AI(KEEPDIMS, keepdims),
                       GLOW_AI(SELECT_LAST, last) };
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, a, 3, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* TopK: k is an attribute in opset 1 and a constant 1-element input from opset 10; largest
 * and sorted appear in opset 11. Outputs: values, i64 indices. */
glow_status load_topk(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    if (opset >= 10 && !onnx_input_known(cx, np, 1))
        return load_topk_dyn(cx, np, opset, kind);
    glow_value x, out;
    GLOW_TRY(onnx_check_inputs(cx, np, opset >= 10 ? 2 : 1, opset >= 10 ? 2 : 1));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *tx = glow_value_type(x);
    int axis;
    GLOW_TRY(onnx_attr_check(cx, np, "axis", 2));
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", -1), tx->rank, &axis));
    int64_t k, largest, sorted;
    if (opset >= 10) {
        int64_t *vals;
        int n;
        GLOW_TRY(onnx_input_ints(cx, np, 1, &vals, &n));
        if (n != 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 1 ('K') must hold one value, "
                             "holds %d", n);
        k = vals[0];
    } else {
        GLOW_TRY(onnx_attr_check(cx, np, "k", 2));
        if (!onnx_attr(np, "k"))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'k' is required");
        k = onnx_attr_int(np, "k", 0);
    }
    if (k < 0 || k > tx->dims[axis])
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "k = %lld is outside [0, %lld] (the size "
                         "of axis %d)", (long long)k, (long long)tx->dims[axis], axis);
    GLOW_TRY(flag_attr(cx, np, "largest", 1, &largest));
    GLOW_TRY(flag_attr(cx, np, "sorted", 1, &sorted));
    glow_attr a[4] = { GLOW_AI(AXIS, axis), GLOW_AI(K, k), GLOW_AI(LARGEST, largest),
                       GLOW_AI(SORTED, sorted) };
    GLOW_TRY(onnx_build(cx, np, NK_TOPK, &x, 1, a, 4, NULL, 0, &out));
    GLOW_TRY(onnx_set_output(cx, np, 0, out));
    if (!onnx_has_output(np, 1))
        return GLOW_OK;
    if (out.node->nout < 2)
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "the TopK node lost its indices result");
    return onnx_set_output(cx, np, 1, glow_val(out.node, 1));
}

/* CumSum (opset 11) and CumProd (opset 26): the axis is a constant 0-D input. */
static glow_status cumulative(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind)
{
    glow_value x, out;
    GLOW_TRY(onnx_check_inputs(cx, np, 2, 2));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    int64_t *vals, exclusive, reverse;
    int n, axis;
    GLOW_TRY(onnx_input_ints(cx, np, 1, &vals, &n));
    if (n != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 1 ('axis') must hold one value, "
                         "holds %d", n);
    GLOW_TRY(onnx_axis(cx, np, vals[0], glow_value_type(x)->rank, &axis));
    GLOW_TRY(flag_attr(cx, np, "exclusive", 0, &exclusive));
    GLOW_TRY(flag_attr(cx, np, "reverse", 0, &reverse));
    glow_attr a[3] = { GLOW_AI(AXIS, axis), GLOW_AI(EXCLUSIVE, exclusive),
                       GLOW_AI(REVERSE, reverse) };
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, a, 3, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_cumsum(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return cumulative(cx, np, NK_CUMSUM);
}

glow_status load_cumprod(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return cumulative(cx, np, NK_CUMPROD);
}
