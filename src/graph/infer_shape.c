// infer_shape.c - Type inference for data movement: reshape, broadcast, transpose, concat,
// slice, pad, tile, gathers and scatters, depth/space, resize, one-hot, reverse-sequence.
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "graph/infer_internal.h"

/* RESHAPE and BROADCAST take the shape from the declared type, the element kind (and
 * quantization) from the operand. */
static glow_status infer_declared_shape(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    if (!cx->declared)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "needs a declared result type");
    const glow_type *r = &cx->declared[0];
    if (r->dtype != x->dtype)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "declared result %s changes the element kind of %s",
                     ts(r).s, ts(x).s);
    if (r->rank > GLOW_MAX_DIMS)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result has rank %d", r->rank);
    for (int k = 0; k < r->rank; k++)
        if (r->dims[k] < 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s has a negative dim",
                         ts(r).s);
    if (cx->n->kind == NK_RESHAPE) {
        int64_t a = 1, b = 1;
        for (int k = 0; k < x->rank; k++)
            if (!mul_ok(a, x->dims[k], &a))
                return ifail(cx, GLOW_ERR_TOO_LARGE, "operand %s is too large", ts(x).s);
        for (int k = 0; k < r->rank; k++)
            if (!mul_ok(b, r->dims[k], &b))
                return ifail(cx, GLOW_ERR_TOO_LARGE, "declared result %s is too large",
                             ts(r).s);
        if (a != b)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "declared result %s has %" PRId64 " elements, operand %s has %" PRId64,
                         ts(r).s, b, ts(x).s, a);
    } else {
        if (r->rank < x->rank)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s has lower rank than %s",
                         ts(r).s, ts(x).s);
        int off = r->rank - x->rank;
        for (int k = 0; k < x->rank; k++)
            if (x->dims[k] != 1 && x->dims[k] != r->dims[off + k])
                return ifail(cx, GLOW_ERR_BAD_SHAPE,
                             "operand %s cannot broadcast to declared result %s (dim %d)",
                             ts(x).s, ts(r).s, k);
    }
    set_out_dims(cx, 0, x->dtype, r->rank, r->dims);
    return GLOW_OK;
}

static glow_status infer_transpose(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    const int64_t *perm;
    GLOW_TRY(want_ints(cx, GA_PERM, x->rank, &perm));
    bool seen[GLOW_MAX_DIMS] = { false };
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0; k < x->rank; k++) {
        if (perm[k] < 0 || perm[k] >= x->rank || seen[perm[k]])
            return ifail(cx, GLOW_ERR_BAD_ATTR, "'perm' is not a permutation of %d dims",
                         x->rank);
        seen[perm[k]] = true;
        dims[k] = x->dims[perm[k]];
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_concat(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
    int64_t dims[GLOW_MAX_DIMS];
    memcpy(dims, x->dims, sizeof dims);
    for (uint32_t i = 1; i < cx->n->nin; i++) {
        const glow_type *t = in_type(cx, (int)i);
        if (t->dtype != x->dtype)
            return ifail(cx, GLOW_ERR_BAD_TYPE, "operand %u %s differs in element kind from "
                         "operand 0 %s", i, ts(t).s, ts(x).s);
        bool ok = t->rank == x->rank;
        for (int k = 0; ok && k < x->rank; k++)
            ok = k == axis || t->dims[k] == x->dims[k];
        if (!ok)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "operand %u %s does not match operand 0 %s outside axis %d", i,
                         ts(t).s, ts(x).s, axis);
        if (!add_ok(dims[axis], t->dims[axis], &dims[axis]))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "concatenated axis is too large");
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_slice(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    const int64_t *st, *en, *sp;
    GLOW_TRY(want_ints(cx, GA_STARTS, x->rank, &st));
    GLOW_TRY(want_ints(cx, GA_ENDS, x->rank, &en));
    GLOW_TRY(want_ints(cx, GA_STEPS, x->rank, &sp));
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0; k < x->rank; k++) {
        int64_t d = x->dims[k];
        /* Clamped ranges: [0, d] going forward, [-1, d-1] going backward. */
        bool ok = sp[k] > 0 ? (st[k] >= 0 && st[k] <= d && en[k] >= 0 && en[k] <= d)
                  : sp[k] < 0 ? (st[k] >= -1 && st[k] <= d - 1 && en[k] >= -1 && en[k] <= d - 1)
                              : false;
        if (!ok)
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "dim %d: start %" PRId64 ", end %" PRId64 ", step %" PRId64
                         " is not a clamped slice of size %" PRId64, k, st[k], en[k], sp[k], d);
        int64_t span = sp[k] > 0 ? en[k] - st[k] : st[k] - en[k];
        int64_t step = sp[k] > 0 ? sp[k] : sp[k] == INT64_MIN ? INT64_MAX : -sp[k];
        dims[k] = span <= 0 ? 0 : (span - 1) / step + 1;
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_pad(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    const int64_t *pads;
    GLOW_TRY(want_ints(cx, GA_PADS, 2 * x->rank, &pads));
    GLOW_TRY(want_str_in(cx, GA_MODE, "constant reflect edge wrap"));
    const char *mode = attr_s(cx, GA_MODE, "constant");
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0; k < x->rank; k++) {
        int64_t b = pads[k], e = pads[x->rank + k], d = x->dims[k];
        if (d > ((int64_t)1 << 60))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "input %s is too large", ts(x).s);
        if (b < -d || e < -d || b > ((int64_t)1 << 40) || e > ((int64_t)1 << 40) ||
            b + e + d < 0)
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "pads %" PRId64 " and %" PRId64 " of dim %d leave a negative size "
                         "for input %s", b, e, k, ts(x).s);
        if (strcmp(mode, "reflect") == 0 && (b > 0 || e > 0) && (b >= d || e >= d))
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "reflect pads %" PRId64 " and %" PRId64 " of dim %d must be smaller "
                         "than its size %" PRId64, b, e, k, d);
        if (strcmp(mode, "constant") != 0 && (b > 0 || e > 0) && d == 0)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "%s padding of empty dim %d", mode, k);
        dims[k] = d + b + e;
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_tile(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    const int64_t *rep;
    GLOW_TRY(want_ints(cx, GA_REPEATS, x->rank, &rep));
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0; k < x->rank; k++) {
        if (rep[k] < 0)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "repeats[%d] = %" PRId64 " is negative", k,
                         rep[k]);
        if (!mul_ok(x->dims[k], rep[k], &dims[k]))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "tiled dim %d is too large", k);
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_gather(infer_cx *cx)
{
    const glow_node *n = cx->n;
    const glow_type *x = in_type(cx, 0), *ix = in_type(cx, 1);
    GLOW_TRY(want_index(cx, 1, "indices"));
    GLOW_TRY(want_rank(cx, 0, "data", 1, GLOW_MAX_DIMS));
    int64_t dims[GLOW_MAX_DIMS];
    int r = x->rank, q = ix->rank, axis;
    switch (n->kind) {
    case NK_GATHER:
        GLOW_TRY(want_axis(cx, GA_AXIS, r, &axis));
        if (r + q - 1 > GLOW_MAX_DIMS)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "data %s and indices %s give rank %d (max %d)",
                         ts(x).s, ts(ix).s, r + q - 1, GLOW_MAX_DIMS);
        {
            int o = 0;
            for (int k = 0; k < axis; k++)
                dims[o++] = x->dims[k];
            for (int k = 0; k < q; k++)
                dims[o++] = ix->dims[k];
            for (int k = axis + 1; k < r; k++)
                dims[o++] = x->dims[k];
            set_out_dims(cx, 0, x->dtype, o, dims);
        }
        return GLOW_OK;
    case NK_GATHER_ELEMENTS:
        GLOW_TRY(want_axis(cx, GA_AXIS, r, &axis));
        if (q != r)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "indices %s must have the rank of data %s",
                         ts(ix).s, ts(x).s);
        for (int k = 0; k < r; k++)
            if (k != axis && ix->dims[k] > x->dims[k])
                return ifail(cx, GLOW_ERR_BAD_SHAPE,
                             "indices %s exceed data %s in dim %d", ts(ix).s, ts(x).s, k);
        set_out_dims(cx, 0, x->dtype, r, ix->dims);
        return GLOW_OK;
    default: {   /* GATHER_ND */
        int64_t b = attr_i(cx, GA_BATCH_DIMS, 0);
        if (q < 1)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "indices %s must have rank >= 1", ts(ix).s);
        if (b < 0 || b >= q || b >= r)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "batch_dims %" PRId64
                         " must be less than the ranks of data %s and indices %s", b, ts(x).s,
                         ts(ix).s);
        for (int k = 0; k < b; k++)
            if (x->dims[k] != ix->dims[k])
                return ifail(cx, GLOW_ERR_BAD_SHAPE,
                             "data %s and indices %s differ in batch dim %d", ts(x).s,
                             ts(ix).s, k);
        int64_t last = ix->dims[q - 1];
        if (last < 1 || last > r - b)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "indices %s index %" PRId64 " dims, data %s has %d after batch dims",
                         ts(ix).s, last, ts(x).s, (int)(r - b));
        int o = 0;
        for (int k = 0; k < q - 1; k++)
            dims[o++] = ix->dims[k];
        for (int k = (int)(b + last); k < r; k++)
            dims[o++] = x->dims[k];
        set_out_dims(cx, 0, x->dtype, o, dims);
        return GLOW_OK;
    }
    }
}

static glow_status infer_scatter(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0), *ix = in_type(cx, 1), *u = in_type(cx, 2);
    GLOW_TRY(want_index(cx, 1, "indices"));
    GLOW_TRY(want_same_dtype(cx, 0, 2, "data", "updates"));
    GLOW_TRY(want_str_in(cx, GA_REDUCTION, "none add mul max min"));
    GLOW_TRY(want_rank(cx, 0, "data", 1, GLOW_MAX_DIMS));
    if (cx->n->kind == NK_SCATTER_ELEMENTS) {
        int axis;
        GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
        if (ix->rank != x->rank || !glow_type_same_shape(ix, u))
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "indices %s and updates %s must have one shape, of the rank of data %s",
                         ts(ix).s, ts(u).s, ts(x).s);
        for (int k = 0; k < x->rank; k++)
            if (k != axis && ix->dims[k] > x->dims[k])
                return ifail(cx, GLOW_ERR_BAD_SHAPE, "indices %s exceed data %s in dim %d",
                             ts(ix).s, ts(x).s, k);
    } else {
        int q = ix->rank;
        if (q < 1 || ix->dims[q - 1] < 1 || ix->dims[q - 1] > x->rank)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "indices %s do not index data %s", ts(ix).s,
                         ts(x).s);
        int kk = (int)ix->dims[q - 1];
        int64_t want[GLOW_MAX_DIMS * 2];
        int o = 0;
        for (int k = 0; k < q - 1; k++)
            want[o++] = ix->dims[k];
        for (int k = kk; k < x->rank; k++)
            want[o++] = x->dims[k];
        bool ok = u->rank == o;
        for (int k = 0; ok && k < o; k++)
            ok = u->dims[k] == want[k];
        if (!ok)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "updates %s must have shape indices[:-1] + data[%d:] for indices %s "
                         "and data %s", ts(u).s, kk, ts(ix).s, ts(x).s);
    }
    set_out(cx, 0, x);
    return GLOW_OK;
}

static glow_status infer_depth_space(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_rank(cx, 0, "input", 4, 4));
    int64_t b = attr_i(cx, GA_BLOCKSIZE, 0), bb;
    if (b < 1 || !mul_ok(b, b, &bb))
        return ifail(cx, GLOW_ERR_BAD_ATTR, "blocksize %" PRId64 " must be >= 1", b);
    int64_t dims[4] = { x->dims[0] };
    if (cx->n->kind == NK_DEPTH_TO_SPACE) {
        GLOW_TRY(want_str_in(cx, GA_MODE, "DCR CRD"));
        if (x->dims[1] % bb != 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "input %s channels are not a multiple of blocksize^2 = %" PRId64,
                         ts(x).s, bb);
        dims[1] = x->dims[1] / bb;
        if (!mul_ok(x->dims[2], b, &dims[2]) || !mul_ok(x->dims[3], b, &dims[3]))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "result is too large");
    } else {
        if (x->dims[2] % b != 0 || x->dims[3] % b != 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "input %s height and width are not multiples of blocksize %" PRId64,
                         ts(x).s, b);
        if (!mul_ok(x->dims[1], bb, &dims[1]))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "result is too large");
        dims[2] = x->dims[2] / b;
        dims[3] = x->dims[3] / b;
    }
    set_out_dims(cx, 0, x->dtype, 4, dims);
    return GLOW_OK;
}

static glow_status infer_resize(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_str_in(cx, GA_MODE, "nearest linear cubic"));
    GLOW_TRY(want_str_in(cx, GA_COORD_MODE, "half_pixel half_pixel_symmetric pytorch_half_pixel "
                                            "align_corners asymmetric tf_crop_and_resize "
                                            "tf_half_pixel_for_nn"));
    GLOW_TRY(want_str_in(cx, GA_NEAREST_MODE, "round_prefer_floor round_prefer_ceil floor ceil"));
    const glow_attr *sc = glow_node_attr(cx->n, GA_SCALES);
    if (sc->n != x->rank)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "'scales' has %u values, expected %d", sc->n,
                     x->rank);
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0; k < x->rank; k++) {
        double s = sc->v.floats[k], want = floor((double)x->dims[k] * s);
        if (!(s > 0) || !(want < 9e15))
            return ifail(cx, GLOW_ERR_BAD_ATTR, "scales[%d] = %g is not a usable scale", k, s);
        if (!cx->declared) {
            dims[k] = (int64_t)want;
            continue;
        }
        const glow_type *r = &cx->declared[0];
        /* Scales computed from ONNX 'sizes' are rounded, so allow one element of slack. */
        if (r->rank != x->rank || fabs((double)r->dims[k] - (double)x->dims[k] * s) > 1.0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "declared result %s does not match input %s scaled by %g in dim %d",
                         ts(r).s, ts(x).s, s, k);
        dims[k] = r->dims[k];
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_one_hot(infer_cx *cx)
{
    const glow_type *ix = in_type(cx, 0), *dep = in_type(cx, 1), *val = in_type(cx, 2);
    GLOW_TRY(want_numeric(cx, 0, "indices"));
    if (glow_type_numel(dep) != 1)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "depth %s must hold one value", ts(dep).s);
    if (glow_type_numel(val) != 2 || val->rank > 1)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "values %s must have shape [2]", ts(val).s);
    if (ix->rank + 1 > GLOW_MAX_DIMS)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "indices %s have too many dims", ts(ix).s);
    int axis;
    GLOW_TRY(want_axis(cx, GA_AXIS, ix->rank + 1, &axis));
    int64_t depth = attr_i(cx, GA_DEPTH, 0);
    if (depth < 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "depth %" PRId64 " must be >= 1", depth);
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0, o = 0; k <= ix->rank; k++)
        dims[k] = k == axis ? depth : ix->dims[o++];
    glow_type r = glow_type_make(val->dtype, ix->rank + 1, dims);
    r.scale = val->scale;
    r.offset = val->offset;
    set_out(cx, 0, &r);
    return GLOW_OK;
}

static glow_status infer_reverse_sequence(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0), *len = in_type(cx, 1);
    GLOW_TRY(want_rank(cx, 0, "input", 2, GLOW_MAX_DIMS));
    GLOW_TRY(want_index(cx, 1, "sequence_lens"));
    int64_t ta = attr_i(cx, GA_TIME_AXIS, 0), ba = attr_i(cx, GA_BATCH_AXIS, 1);
    if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return ifail(cx, GLOW_ERR_BAD_ATTR, "time_axis %" PRId64 " and batch_axis %" PRId64
                     " must be 0 and 1 in some order", ta, ba);
    if (len->rank != 1 || len->dims[0] != x->dims[ba])
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "sequence_lens %s must have shape [%" PRId64 "]",
                     ts(len).s, x->dims[ba]);
    set_out(cx, 0, x);
    return GLOW_OK;
}

glow_status infer_shape(infer_cx *cx, bool *handled)
{
    *handled = true;
    switch (cx->n->kind) {
    case NK_RESHAPE:
    case NK_BROADCAST:
        return infer_declared_shape(cx);
    case NK_TRANSPOSE: return infer_transpose(cx);
    case NK_CONCAT: return infer_concat(cx);
    case NK_SLICE: return infer_slice(cx);
    case NK_PAD: return infer_pad(cx);
    case NK_TILE: return infer_tile(cx);
    case NK_GATHER:
    case NK_GATHER_ELEMENTS:
    case NK_GATHER_ND:
        return infer_gather(cx);
    case NK_SCATTER_ELEMENTS:
    case NK_SCATTER_ND:
        return infer_scatter(cx);
    case NK_DEPTH_TO_SPACE:
    case NK_SPACE_TO_DEPTH:
        return infer_depth_space(cx);
    case NK_RESIZE: return infer_resize(cx);
    case NK_ONE_HOT: return infer_one_hot(cx);
    case NK_REVERSE_SEQUENCE: return infer_reverse_sequence(cx);
    default:
        *handled = false;
        return GLOW_OK;
    }
}
