// infer_control.c - Type inference for LOOP (nodes.def): its results are its body's, declared
// by the importer; inference checks that the operands, the scan attributes and those declared
// types fit together, so a LOOP the verifier accepts can be run slice by slice. A LOOP that may
// stop early (scan_count) has one more result, the i64 count of iterations run.
#include <inttypes.h>
#include <stdlib.h>

#include "graph/infer_internal.h"

/* The scan attributes of one side (inputs or outputs): `n` axes and directions, each axis
 * within its tensor's rank and each direction 0 or 1. types[i] is scan tensor i. */
static glow_status check_scans(infer_cx *cx, const char *side, glow_attr_id axes_id,
                               glow_attr_id dirs_id, const glow_type *const *types, int n,
                               int64_t *len)
{
    const int64_t *axes = NULL, *dirs = NULL;
    if (n == 0) {
        int ca, cd;
        attr_ints(cx, axes_id, &ca);
        attr_ints(cx, dirs_id, &cd);
        if (ca || cd)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "scan %s attributes without scan %s", side,
                         side);
        return GLOW_OK;
    }
    GLOW_TRY(want_ints(cx, axes_id, n, &axes));
    GLOW_TRY(want_ints(cx, dirs_id, n, &dirs));
    for (int i = 0; i < n; i++) {
        const glow_type *t = types[i];
        if (axes[i] < 0 || axes[i] >= t->rank || (dirs[i] != 0 && dirs[i] != 1))
            return ifail(cx, GLOW_ERR_BAD_ATTR, "scan %s %d: axis %" PRId64 " direction %"
                         PRId64 " for %s", side, i, axes[i], dirs[i], ts(t).s);
        int64_t l = t->dims[axes[i]];
        if (*len >= 0 && l != *len)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "scan %s %d %s has %" PRId64 " slices, "
                         "another scan %" PRId64, side, i, ts(t).s, l, *len);
        *len = l;
    }
    return GLOW_OK;
}

static glow_status infer_loop_node(infer_cx *cx)
{
    const glow_node *n = cx->n;
    int64_t k = attr_i(cx, GA_K, 0), s = attr_i(cx, GA_SCAN_INPUTS, 0);
    if (!cx->declared || cx->ndeclared < cx->nout)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "its result types must be declared (its body's)");
    if (k < 0 || s < 0 || k > cx->nout || 2 + k + s > (int64_t)n->nin)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "k = %" PRId64 " and %" PRId64 " scan inputs do "
                     "not fit %u operands and %d results", k, s, n->nin, cx->nout);
    const glow_type *m = in_type(cx, 0), *c = in_type(cx, 1);
    if (c->dtype != GLOW_BOOL || glow_type_numel(c) != 1)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "the condition %s must be one bool", ts(c).s);
    if (!glow_dtype_is_int(m->dtype) || glow_type_numel(m) != 1)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "the trip count %s must be one integer", ts(m).s);
    for (int i = 0; i < k; i++)
        if (!glow_type_equal(in_type(cx, 2 + i), &cx->declared[i]))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "carried value %d is %s, its result %s", i,
                         ts(in_type(cx, 2 + i)).s, ts(&cx->declared[i]).s);
    int64_t counted = attr_i(cx, GA_SCAN_COUNT, 0);
    if (counted != 0 && counted != 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "scan_count = %" PRId64 " must be 0 or 1", counted);
    int nsout = cx->nout - (int)k - (int)counted;
    if (counted) {
        /* The count is of iterations, so it bounds the scan outputs only: scan inputs would
         * be read past it. Axis 0 forward keeps the slices run at the front (compact). */
        const glow_type *c = &cx->declared[cx->nout - 1];
        if (s != 0 || nsout < 1 || c->dtype != GLOW_I64 || c->rank != 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "scan_count needs scan outputs, no scan "
                         "inputs and a last result i64 [] (%d scan inputs, %d scan outputs, "
                         "last %s)", (int)s, nsout, ts(c).s);
        int na, nd;
        const int64_t *axes = attr_ints(cx, GA_SCAN_OUT_AXES, &na);
        const int64_t *dirs = attr_ints(cx, GA_SCAN_OUT_DIRS, &nd);
        for (int j = 0; j < na && j < nd; j++)
            if (axes[j] != 0 || dirs[j] != 0)
                return ifail(cx, GLOW_ERR_BAD_ATTR, "scan_count needs scan outputs on axis 0, "
                             "forward (scan output %d: axis %" PRId64 ", direction %" PRId64
                             ")", j, axes[j], dirs[j]);
    }
    const glow_type **types = glow_xcalloc((size_t)(s + nsout + 1), sizeof *types);
    for (int j = 0; j < s; j++)
        types[j] = in_type(cx, 2 + (int)k + j);
    for (int j = 0; j < nsout; j++)
        types[s + j] = &cx->declared[k + j];
    int64_t len = -1;
    glow_status st = check_scans(cx, "input", GA_SCAN_IN_AXES, GA_SCAN_IN_DIRS, types, (int)s,
                                 &len);
    if (st == GLOW_OK)
        st = check_scans(cx, "output", GA_SCAN_OUT_AXES, GA_SCAN_OUT_DIRS, types + s, nsout,
                         &len);
    free(types);
    GLOW_TRY(st);
    for (int i = 0; i < cx->nout; i++)
        set_out(cx, i, &cx->declared[i]);
    return GLOW_OK;
}

glow_status infer_loop(infer_cx *cx, bool *handled)
{
    *handled = cx->n->kind == NK_LOOP;
    return *handled ? infer_loop_node(cx) : GLOW_OK;
}
