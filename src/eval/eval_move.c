// eval_move.c - Reference evaluation of data-movement nodes: Reshape, Broadcast, Transpose,
// Concat, Slice, Pad, Tile, DepthToSpace, SpaceToDepth, Trilu and OneHot.
//
// Most routines walk the result with an odometer and compute the flat source offset of each
// element, copying elements as bytes, so they work for every kind. The source offset is
// checked against the source's shape first: a malformed attribute fails, it never reads
// outside the operand.
#include <stdlib.h>

#include "eval/eval_internal.h"
#include "index_math.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

glow_status glow_ev_reshape(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    int64_t count = ev_numel(&ins[0].type);
    if (count != ev_numel(&outs[0].type))
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': %lld elements reshaped to %lld",
                         KIND_NAME(n), (long long)count, (long long)ev_numel(&outs[0].type));
    if (count)
        memcpy(outs[0].data, ins[0].data, (size_t)count * ev_size(ins[0].type.dtype));
    return GLOW_OK;
}

/* Copies src into dst where src_stride[i] is the source step for result dim i (0 for
 * broadcast dims). */
static void gather_strided(const glow_tensor *src, glow_tensor *dst, const int64_t *src_stride,
                           int64_t base)
{
    const glow_type *t = &dst->type;
    size_t es = ev_size(t->dtype);
    int64_t idx[GLOW_MAX_DIMS] = { 0 }, count = ev_numel(t);
    for (int64_t i = 0; i < count; i++) {
        int64_t off = base;
        for (int k = 0; k < t->rank; k++)
            off += idx[k] * src_stride[k];
        ev_copy(dst->data, i, src->data, off, es);
        ev_next(t->rank, t->dims, idx);
    }
}

glow_status glow_ev_broadcast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    int shift = y->rank - x->rank;
    if (shift < 0)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': cannot broadcast rank %d to rank %d",
                         KIND_NAME(n), x->rank, y->rank);
    int64_t xs[GLOW_MAX_DIMS], stride[GLOW_MAX_DIMS] = { 0 };
    ev_strides(x, xs);
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] != 1 && x->dims[i] != y->dims[i + shift])
            return glow_fail(d, GLOW_ERR_BAD_SHAPE,
                             "%s '%s': operand dim %d (%lld) does not broadcast to %lld",
                             KIND_NAME(n), i, (long long)x->dims[i],
                             (long long)y->dims[i + shift]);
        stride[i + shift] = x->dims[i] == 1 ? 0 : xs[i];
    }
    gather_strided(&ins[0], &outs[0], stride, 0);
    return GLOW_OK;
}

glow_status glow_ev_transpose(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int np = 0;
    const int64_t *perm = glow_node_ints(n, GA_PERM, &np);
    bool seen[GLOW_MAX_DIMS] = { false };
    if (np != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': perm has %d entries for rank %d",
                         KIND_NAME(n), np, x->rank);
    int64_t xs[GLOW_MAX_DIMS], stride[GLOW_MAX_DIMS], dims[GLOW_MAX_DIMS];
    ev_strides(x, xs);
    for (int i = 0; i < np; i++) {
        if (perm[i] < 0 || perm[i] >= np || seen[perm[i]])
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': perm is not a permutation",
                             KIND_NAME(n));
        seen[perm[i]] = true;
        dims[i] = x->dims[perm[i]];
        stride[i] = xs[perm[i]];
    }
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, np, dims, d));
    gather_strided(&ins[0], &outs[0], stride, 0);
    return GLOW_OK;
}

glow_status glow_ev_concat(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_type *y = &outs[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), y->rank, &axis, d));
    int64_t dims[GLOW_MAX_DIMS], total = 0;
    memcpy(dims, y->dims, sizeof dims);
    for (uint32_t i = 0; i < n->nin; i++) {
        dims[axis] = ins[i].type.dims[axis];
        char what[32];
        snprintf(what, sizeof what, "operand %u", i);
        GLOW_TRY(glow_ev_expect_shape(n, what, &ins[i].type, y->rank, dims, d));
        total += dims[axis];
    }
    dims[axis] = total;
    GLOW_TRY(glow_ev_expect_shape(n, "result", y, y->rank, dims, d));
    size_t es = ev_size(y->dtype);
    int64_t outer = ev_prod(y->dims, 0, axis), inner = ev_prod(y->dims, axis + 1, y->rank);
    char *dst = outs[0].data;
    for (int64_t o = 0; o < outer; o++) {
        for (uint32_t i = 0; i < n->nin; i++) {
            size_t chunk = (size_t)(ins[i].type.dims[axis] * inner) * es;
            if (chunk) {
                memcpy(dst, (const char *)ins[i].data + (size_t)o * chunk, chunk);
                dst += chunk;
            }
        }
    }
    return GLOW_OK;
}

glow_status glow_ev_slice(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int ns = 0, ne = 0, nst = 0;
    const int64_t *starts = glow_node_ints(n, GA_STARTS, &ns);
    const int64_t *ends = glow_node_ints(n, GA_ENDS, &ne);
    const int64_t *steps = glow_node_ints(n, GA_STEPS, &nst);
    if (ns != x->rank || ne != x->rank || nst != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_ATTR,
                         "%s '%s': starts/ends/steps need one entry per dim (rank %d)",
                         KIND_NAME(n), x->rank);
    int64_t xs[GLOW_MAX_DIMS], stride[GLOW_MAX_DIMS], dims[GLOW_MAX_DIMS], base = 0;
    ev_strides(x, xs);
    for (int i = 0; i < x->rank; i++) {
        int64_t dim = x->dims[i], s = starts[i], e = ends[i], st = steps[i];
        /* A step beyond the dim's size selects at most one element either way; bounding it
         * keeps the count and stride arithmetic below from overflowing. */
        if (st > dim + 1)
            st = dim + 1;
        if (st < -(dim + 1))
            st = -(dim + 1);
        /* Clamped attributes lie in [-1, dim] (-1 as an end means "before index 0"). */
        if (st == 0 || s < -1 || s > dim || e < -1 || e > dim)
            return glow_fail(d, GLOW_ERR_BAD_ATTR,
                             "%s '%s': dim %d: start %lld, end %lld, step %lld are not clamped "
                             "to size %lld", KIND_NAME(n), i, (long long)s, (long long)e,
                             (long long)st, (long long)dim);
        int64_t cnt = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
        dims[i] = cnt < 0 ? 0 : cnt;
        if (dims[i] > 0 && (s < 0 || s >= dim))
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': dim %d: start %lld outside [0, %lld)",
                             KIND_NAME(n), i, (long long)s, (long long)dim);
        base += dims[i] > 0 ? s * xs[i] : 0;
        stride[i] = st * xs[i];
    }
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, dims, d));
    gather_strided(&ins[0], &outs[0], stride, base);
    return GLOW_OK;
}

glow_status glow_ev_pad(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d)
{
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    int np = 0;
    const int64_t *pads = glow_node_ints(n, GA_PADS, &np);
    const char *ms = glow_node_str(n, GA_MODE, "constant");
    int mode = !strcmp(ms, "constant") ? GK_PAD_CONSTANT
             : !strcmp(ms, "reflect") ? GK_PAD_REFLECT
             : !strcmp(ms, "edge") ? GK_PAD_EDGE : !strcmp(ms, "wrap") ? GK_PAD_WRAP : -1;
    if (mode < 0)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': unknown mode '%s'", KIND_NAME(n), ms);
    if (np != 2 * x->rank)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': pads has %d entries for rank %d",
                         KIND_NAME(n), np, x->rank);
    int64_t dims[GLOW_MAX_DIMS], xs[GLOW_MAX_DIMS];
    for (int i = 0; i < x->rank; i++) {
        int64_t lo = pads[i], hi = pads[i + x->rank];
        if (lo < -x->dims[i] || hi < -x->dims[i] || lo > INT32_MAX || hi > INT32_MAX)
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': pads of dim %d out of range",
                             KIND_NAME(n), i);
        dims[i] = x->dims[i] + lo + hi;
        if (dims[i] > 0 && x->dims[i] == 0 && mode != 0)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': cannot %s-pad an empty dim %d",
                             KIND_NAME(n), ms, i);
    }
    GLOW_TRY(glow_ev_expect_shape(n, "result", y, x->rank, dims, d));
    ev_strides(x, xs);
    size_t es = ev_size(y->dtype);
    uint64_t fill = 0;
    ev_stf(y->dtype, &fill, 0, glow_node_float(n, GA_VALUE, 0.0));
    int64_t idx[GLOW_MAX_DIMS] = { 0 }, count = ev_numel(y);
    for (int64_t o = 0; o < count; o++) {
        int64_t off = 0;
        for (int k = 0; k < y->rank && off >= 0; k++) {
            int64_t s = gk_pad_index(mode, idx[k] - pads[k], x->dims[k]);
            off = s < 0 ? -1 : off + s * xs[k];
        }
        if (off < 0)
            memcpy((char *)outs[0].data + (size_t)o * es, &fill, es);
        else
            ev_copy(outs[0].data, o, ins[0].data, off, es);
        ev_next(y->rank, y->dims, idx);
    }
    return GLOW_OK;
}

glow_status glow_ev_tile(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    int nr = 0;
    const int64_t *rep = glow_node_ints(n, GA_REPEATS, &nr);
    int64_t dims[GLOW_MAX_DIMS], xs[GLOW_MAX_DIMS];
    if (nr != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': repeats has %d entries for rank %d",
                         KIND_NAME(n), nr, x->rank);
    for (int i = 0; i < nr; i++)
        if (rep[i] < 0 || !glow_mul_overflow_i64(x->dims[i], rep[i], &dims[i]))
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': bad repeat %lld for dim %d",
                             KIND_NAME(n), (long long)rep[i], i);
    GLOW_TRY(glow_ev_expect_shape(n, "result", y, x->rank, dims, d));
    ev_strides(x, xs);
    size_t es = ev_size(y->dtype);
    int64_t idx[GLOW_MAX_DIMS] = { 0 }, count = ev_numel(y);
    for (int64_t o = 0; o < count; o++) {
        int64_t off = 0;
        for (int k = 0; k < y->rank; k++)
            off += (idx[k] % x->dims[k]) * xs[k];
        ev_copy(outs[0].data, o, ins[0].data, off, es);
        ev_next(y->rank, y->dims, idx);
    }
    return GLOW_OK;
}

/* DepthToSpace and SpaceToDepth share one loop over the NCHW depth-side tensor `deep`
 * [N, C*b*b, H, W] and the space-side tensor [N, C, H*b, W*b]; `crd` selects the channel order
 * c*b*b + i*b + j (CRD) instead of (i*b + j)*C + c (DCR, SpaceToDepth's only order). */
static void d2s_walk(const glow_tensor *deep, const glow_tensor *space, int64_t b, bool crd,
                     bool to_space)
{
    const int64_t *sd = space->type.dims;
    int64_t N = sd[0], C = sd[1], H = deep->type.dims[2], W = deep->type.dims[3];
    size_t es = ev_size(deep->type.dtype);
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H * b; h++)
                for (int64_t w = 0; w < W * b; w++) {
                    int64_t i = h % b, j = w % b;
                    int64_t dc = crd ? c * b * b + i * b + j : (i * b + j) * C + c;
                    int64_t doff = ((nn * C * b * b + dc) * H + h / b) * W + w / b;
                    int64_t soff = ((nn * C + c) * H * b + h) * W * b + w;
                    if (to_space)
                        ev_copy(space->data, soff, deep->data, doff, es);
                    else
                        ev_copy(deep->data, doff, space->data, soff, es);
                }
}

static glow_status d2s_common(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              bool to_space, glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int64_t b = glow_node_int(n, GA_BLOCKSIZE, 0);
    if (x->rank != 4)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand must have rank 4, not %d",
                         KIND_NAME(n), x->rank);
    if (b <= 0 || b > 4096)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': bad blocksize %lld", KIND_NAME(n),
                         (long long)b);
    int64_t dims[4] = { x->dims[0], x->dims[1], x->dims[2], x->dims[3] };
    bool crd = false;
    if (to_space) {
        const char *mode = glow_node_str(n, GA_MODE, "DCR");
        crd = strcmp(mode, "CRD") == 0;
        if (!crd && strcmp(mode, "DCR") != 0)
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': unknown mode '%s'", KIND_NAME(n),
                             mode);
        if (dims[1] % (b * b))
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': %lld channels not divisible by "
                             "blocksize^2", KIND_NAME(n), (long long)dims[1]);
        dims[1] /= b * b, dims[2] *= b, dims[3] *= b;
    } else {
        if (dims[2] % b || dims[3] % b)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': spatial dims not divisible by "
                             "blocksize %lld", KIND_NAME(n), (long long)b);
        dims[1] *= b * b, dims[2] /= b, dims[3] /= b;
    }
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, 4, dims, d));
    if (to_space)
        d2s_walk(&ins[0], &outs[0], b, crd, true);
    else
        d2s_walk(&outs[0], &ins[0], b, false, false);
    return GLOW_OK;
}

glow_status glow_ev_depth_to_space(const glow_node *n, const glow_tensor *ins,
                                   glow_tensor *outs, glow_diag *d)
{
    return d2s_common(n, ins, outs, true, d);
}

glow_status glow_ev_space_to_depth(const glow_node *n, const glow_tensor *ins,
                                   glow_tensor *outs, glow_diag *d)
{
    return d2s_common(n, ins, outs, false, d);
}

glow_status glow_ev_trilu(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    if (x->rank < 2)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand must have rank >= 2",
                         KIND_NAME(n));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    bool upper = glow_node_int(n, GA_UPPER, 1) != 0;
    int64_t k = glow_node_int(n, GA_K, 0);
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t mats = ev_prod(x->dims, 0, x->rank - 2);
    size_t es = ev_size(x->dtype);
    /* The result starts zeroed (glow_tensor_alloc), so only the kept triangle is copied. */
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++)
                if (upper ? j - i >= k : j - i <= k) {
                    int64_t off = (m * rows + i) * cols + j;
                    ev_copy(outs[0].data, off, ins[0].data, off, es);
                }
    return GLOW_OK;
}

/* OneHot(indices, depth, values[off, on]): the depth comes from the attribute. Indices in
 * [-depth, -1] count from the end; others outside [0, depth) give an all-off row (ONNX). */
glow_status glow_ev_one_hot(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    const glow_type *ix = &ins[0].type, *y = &outs[0].type;
    int64_t depth = glow_node_int(n, GA_DEPTH, -1);
    if (depth < 0 || ix->rank + 1 > GLOW_MAX_DIMS)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': bad depth %lld or rank", KIND_NAME(n),
                         (long long)depth);
    if (ev_numel(&ins[2].type) != 2)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': values must hold [off, on]",
                         KIND_NAME(n));
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, -1), ix->rank + 1, &axis, d));
    int64_t dims[GLOW_MAX_DIMS];
    for (int i = 0, j = 0; i < ix->rank + 1; i++)
        dims[i] = i == axis ? depth : ix->dims[j++];
    GLOW_TRY(glow_ev_expect_shape(n, "result", y, ix->rank + 1, dims, d));
    int64_t outer = ev_prod(ix->dims, 0, axis), inner = ev_prod(ix->dims, axis, ix->rank);
    size_t es = ev_size(y->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < depth; j++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t at = o * inner + i;
                int64_t v = ev_is_float(ix->dtype) ? ev_f2i(GLOW_I64, ev_ldf(ix->dtype,
                                                                         ins[0].data, at))
                                                    : ev_ldi(ix->dtype, ins[0].data, at);
                if (ev_is_unsigned(ix->dtype) && v < 0)
                    v = INT64_MAX; /* a u64 beyond i64 is simply out of range */
                if (v < 0 && v >= -depth)
                    v += depth;
                ev_copy(outs[0].data, (o * depth + j) * inner + i, ins[2].data, v == j, es);
            }
    return GLOW_OK;
}
