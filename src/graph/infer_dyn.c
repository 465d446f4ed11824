// infer_dyn.c - Type inference for the nodes with data-dependent result shapes (NonZero,
// Unique, Compress, NonMaxSuppression, FirstK): each result gets its upper bound, and the last
// result is the i64 scalar count the node finds at run time (docs/dynamic-shapes.md). Also the
// lazy control-flow node IF, whose result types come from its branches.
#include <inttypes.h>

#include "graph/infer_internal.h"

static void set_count(infer_cx *cx)
{
    glow_type c = glow_type_scalar(GLOW_I64);
    set_out(cx, cx->nout - 1, &c);
}

static glow_status want_nout(infer_cx *cx, int n)
{
    if (cx->nout != n)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "has %d results, expected %d (the last one is the "
                     "run-time count)", cx->nout, n);
    return GLOW_OK;
}

static glow_status infer_nonzero(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_nout(cx, 2));
    if (glow_dtype_is_quantized(x->dtype))
        return ifail(cx, GLOW_ERR_BAD_TYPE, "input %s is quantized", ts(x).s);
    int64_t dims[2] = { x->rank ? x->rank : 1, glow_type_numel(x) };
    set_out_dims(cx, 0, GLOW_I64, 2, dims);
    set_count(cx);
    return GLOW_OK;
}

static glow_status infer_unique(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_nout(cx, 3));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    if (glow_dtype_is_quantized(x->dtype))
        return ifail(cx, GLOW_ERR_BAD_TYPE, "input %s is quantized", ts(x).s);
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    int64_t k = attr_i(cx, GA_K, 0);
    if (k != 0 && k != 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "k = %" PRId64 " must be 0 (values, first indices) "
                     "or 1 (inverse indices, counts)", k);
    int64_t n = x->dims[axis];
    if (k == 0) {
        set_out(cx, 0, x);
        set_out_dims(cx, 1, GLOW_I64, 1, &n);
    } else {
        set_out_dims(cx, 0, GLOW_I64, 1, &n);
        set_out_dims(cx, 1, GLOW_I64, 1, &n);
    }
    set_count(cx);
    return GLOW_OK;
}

static glow_status infer_compress(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0), *c = in_type(cx, 1);
    GLOW_TRY(want_nout(cx, 2));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    GLOW_TRY(want_rank(cx, 1, "condition", 1, 1));
    if (glow_dtype_is_quantized(c->dtype))
        return ifail(cx, GLOW_ERR_BAD_TYPE, "condition %s is quantized", ts(c).s);
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    set_out(cx, 0, x);
    set_count(cx);
    return GLOW_OK;
}

static glow_status infer_nms(infer_cx *cx)
{
    const glow_type *b = in_type(cx, 0), *s = in_type(cx, 1);
    GLOW_TRY(want_nout(cx, 2));
    GLOW_TRY(want_str_in(cx, GA_MODE, "corner center"));
    if (b->rank != 3 || b->dims[2] != 4 || s->rank != 3 || s->dims[0] != b->dims[0] ||
        s->dims[2] != b->dims[1])
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "boxes %s and scores %s must be [B, N, 4] and "
                     "[B, C, N]", ts(b).s, ts(s).s);
    if (!glow_dtype_is_float(b->dtype) || s->dtype != b->dtype)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "boxes %s and scores %s must be of one float kind",
                     ts(b).s, ts(s).s);
    for (int i = 2; i < 5; i++)
        if (glow_type_numel(in_type(cx, i)) != 1 || glow_dtype_is_quantized(in_type(cx, i)->dtype))
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "operand %d %s must hold one number", i,
                         ts(in_type(cx, i)).s);
    int64_t k = attr_i(cx, GA_K, 0), rows;
    if (k < 0 || k > b->dims[1])
        return ifail(cx, GLOW_ERR_BAD_ATTR, "bound k = %" PRId64 " is outside [0, %" PRId64 "]",
                     k, b->dims[1]);
    if (!mul_ok(b->dims[0], s->dims[1], &rows) || !mul_ok(rows, k, &rows))
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "the bound overflows");
    int64_t dims[2] = { rows, 3 };
    set_out_dims(cx, 0, GLOW_I64, 2, dims);
    set_count(cx);
    return GLOW_OK;
}

static glow_status infer_first_k(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0), *k = in_type(cx, 1);
    GLOW_TRY(want_nout(cx, 2));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    if (glow_type_numel(k) != 1 || !glow_dtype_is_int(k->dtype))
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "k %s must be one integer", ts(k).s);
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    set_out(cx, 0, x);
    set_count(cx);
    return GLOW_OK;
}

/* IF: the results are its branches' outputs, declared by the importer (LOOP's rule is in
 * infer_control.c). */
static glow_status infer_if(infer_cx *cx)
{
    int64_t k = attr_i(cx, GA_K, 0);
    if (!cx->declared || cx->ndeclared < cx->nout)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "its result types must be declared (its body's)");
    if (k < 0 || k > (int64_t)cx->n->nin - 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "k = %" PRId64 " does not fit %u operands and %d "
                     "results", k, cx->n->nin, cx->nout);
    const glow_type *c = in_type(cx, 0);
    if (c->dtype != GLOW_BOOL || glow_type_numel(c) != 1)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "the condition %s must be one bool", ts(c).s);
    for (int i = 0; i < cx->nout; i++)
        set_out(cx, i, &cx->declared[i]);
    return GLOW_OK;
}

glow_status infer_dyn(infer_cx *cx, bool *handled)
{
    *handled = true;
    switch (cx->n->kind) {
    case NK_NON_ZERO: return infer_nonzero(cx);
    case NK_UNIQUE: return infer_unique(cx);
    case NK_COMPRESS: return infer_compress(cx);
    case NK_NON_MAX_SUPPRESSION: return infer_nms(cx);
    case NK_FIRST_K: return infer_first_k(cx);
    case NK_IF:
        return infer_if(cx);
    default:
        *handled = false;
        return GLOW_OK;
    }
}
