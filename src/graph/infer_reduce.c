// infer_reduce.c - Type inference for reductions, arg-max/min, top-k, cumulative ops, trilu.
#include <inttypes.h>

#include "graph/infer_internal.h"

/* Reduces x over the sorted, non-negative `axes` (an empty list reduces nothing). */
static glow_status infer_reduce_axes(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_numeric(cx, 0, "input"));
    int na;
    const int64_t *axes = attr_ints(cx, GA_AXES, &na);
    int64_t keep = attr_i(cx, GA_KEEPDIMS, 1);
    if (keep != 0 && keep != 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "keepdims %" PRId64 " must be 0 or 1", keep);
    bool red[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < na; i++) {
        if (axes[i] < 0 || axes[i] >= x->rank || (i > 0 && axes[i] <= axes[i - 1]))
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "'axes' must be sorted, distinct and within [0, %d) for input %s",
                         x->rank, ts(x).s);
        red[axes[i]] = true;
    }
    int64_t dims[GLOW_MAX_DIMS];
    int o = 0;
    for (int k = 0; k < x->rank; k++) {
        if (!red[k])
            dims[o++] = x->dims[k];
        else if (keep)
            dims[o++] = 1;
    }
    set_out_dims(cx, 0, x->dtype, o, dims);
    return GLOW_OK;
}

static glow_status infer_arg(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_numeric(cx, 0, "input"));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    int64_t keep = attr_i(cx, GA_KEEPDIMS, 1);
    if (keep != 0 && keep != 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "keepdims %" PRId64 " must be 0 or 1", keep);
    if (x->dims[axis] == 0)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "input %s is empty along axis %d", ts(x).s, axis);
    int64_t dims[GLOW_MAX_DIMS];
    int o = 0;
    for (int k = 0; k < x->rank; k++) {
        if (k != axis)
            dims[o++] = x->dims[k];
        else if (keep)
            dims[o++] = 1;
    }
    set_out_dims(cx, 0, GLOW_I64, o, dims);
    return GLOW_OK;
}

static glow_status infer_topk(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_numeric(cx, 0, "input"));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    int64_t k = attr_i(cx, GA_K, 0);
    if (k < 0 || k > x->dims[axis])
        return ifail(cx, GLOW_ERR_BAD_ATTR, "k %" PRId64 " is outside [0, %" PRId64
                     "] for input %s along axis %d", k, x->dims[axis], ts(x).s, axis);
    int64_t dims[GLOW_MAX_DIMS];
    for (int i = 0; i < x->rank; i++)
        dims[i] = i == axis ? k : x->dims[i];
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    if (cx->nout > 1)
        set_out_dims(cx, 1, GLOW_I64, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_cum(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_numeric(cx, 0, "input"));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    set_out(cx, 0, x);
    return GLOW_OK;
}

static glow_status infer_trilu(infer_cx *cx)
{
    GLOW_TRY(want_rank(cx, 0, "input", 2, GLOW_MAX_DIMS));
    set_out(cx, 0, in_type(cx, 0));
    return GLOW_OK;
}

glow_status infer_reduce(infer_cx *cx, bool *handled)
{
    *handled = true;
    if (glow_node_kind_flags(cx->n->kind) & NF_REDUCE)
        return infer_reduce_axes(cx);
    switch (cx->n->kind) {
    case NK_ARG_MAX:
    case NK_ARG_MIN:
        return infer_arg(cx);
    case NK_TOPK: return infer_topk(cx);
    case NK_CUMSUM:
    case NK_CUMPROD:
        return infer_cum(cx);
    case NK_TRILU: return infer_trilu(cx);
    default:
        *handled = false;
        return GLOW_OK;
    }
}
