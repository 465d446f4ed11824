// infer_prim.c - Type inference for the primitives that lowering produces: Splat, InsertTensor.
#include <inttypes.h>
#include <math.h>

#include "graph/infer_internal.h"

/* SPLAT has no operands, so its whole type (shape and element kind) is the declared one;
 * `value` is the real value every element takes. */
static glow_status infer_splat(infer_cx *cx)
{
    if (!cx->declared || cx->ndeclared < 1)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "needs a declared result type");
    const glow_type *r = &cx->declared[0];
    if ((unsigned)r->dtype >= GLOW_DTYPE_COUNT)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "declared result has an unknown element kind");
    if (r->rank > GLOW_MAX_DIMS)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result has rank %d", r->rank);
    for (int k = 0; k < r->rank; k++)
        if (r->dims[k] < 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s has a negative dim",
                         ts(r).s);
    set_out(cx, 0, r);
    return GLOW_OK;
}

/* INSERT_TENSOR(big, small) {starts}: small must lie inside big at `starts`. */
static glow_status infer_insert(infer_cx *cx)
{
    const glow_type *big = in_type(cx, 0), *small = in_type(cx, 1);
    if (!glow_type_equal(big, small) && !(big->dtype == small->dtype &&
                                          big->scale == small->scale &&
                                          big->offset == small->offset))
        return ifail(cx, GLOW_ERR_BAD_TYPE, "inserted %s differs in element kind from %s",
                     ts(small).s, ts(big).s);
    if (small->rank != big->rank)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "inserted %s and destination %s differ in rank",
                     ts(small).s, ts(big).s);
    const int64_t *st;
    GLOW_TRY(want_ints(cx, GA_STARTS, big->rank, &st));
    for (int k = 0; k < big->rank; k++) {
        int64_t end;
        if (st[k] < 0 || !add_ok(st[k], small->dims[k], &end) || end > big->dims[k])
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "inserted %s at offset %" PRId64 " of dim %d does not fit in %s",
                         ts(small).s, st[k], k, ts(big).s);
    }
    set_out(cx, 0, big);
    return GLOW_OK;
}

glow_status infer_prim(infer_cx *cx, bool *handled)
{
    *handled = true;
    switch (cx->n->kind) {
    case NK_SPLAT: return infer_splat(cx);
    case NK_INSERT_TENSOR: return infer_insert(cx);
    default:
        *handled = false;
        return GLOW_OK;
    }
}
