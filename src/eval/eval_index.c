// eval_index.c - Reference evaluation of index-driven nodes: Gather, GatherElements, GatherND,
// ScatterElements, ScatterND and ReverseSequence.
//
// Index operands come from data, not from the graph's shapes, so every index is checked:
// negative indices count from the end (ONNX) and anything outside [-size, size) fails with
// GLOW_ERR_RUNTIME naming the node, the index and its position.
#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

/* Resolves a negative index and checks its range. */
static glow_status fix_index(const glow_node *n, int64_t *v, int64_t size, int64_t pos,
                             glow_diag *d)
{
    if (*v < -size || *v >= size)
        return glow_fail(d, GLOW_ERR_RUNTIME,
                         "%s '%s': index %lld at position %lld is out of range [%lld, %lld)",
                         KIND_NAME(n), (long long)*v, (long long)pos, (long long)-size,
                         (long long)size);
    if (*v < 0)
        *v += size;
    return GLOW_OK;
}

glow_status glow_ev_gather(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_type *x = &ins[0].type, *ix = &ins[1].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), x->rank, &axis, d));
    int rank = x->rank + ix->rank - 1;
    if (rank > GLOW_MAX_DIMS)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result rank %d too large",
                         KIND_NAME(n), rank);
    int64_t dims[GLOW_MAX_DIMS];
    int r = 0;
    for (int i = 0; i < axis; i++)
        dims[r++] = x->dims[i];
    for (int i = 0; i < ix->rank; i++)
        dims[r++] = ix->dims[i];
    for (int i = axis + 1; i < x->rank; i++)
        dims[r++] = x->dims[i];
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, rank, dims, d));
    int64_t outer = ev_prod(x->dims, 0, axis), size = x->dims[axis];
    int64_t inner = ev_prod(x->dims, axis + 1, x->rank), q = ev_numel(ix);
    size_t es = ev_size(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < q; i++) {
            int64_t v = ev_index(&ins[1], i);
            GLOW_TRY(fix_index(n, &v, size, i, d));
            if (inner)
                memcpy((char *)outs[0].data + (size_t)((o * q + i) * inner) * es,
                       (const char *)ins[0].data + (size_t)((o * size + v) * inner) * es,
                       (size_t)inner * es);
        }
    return GLOW_OK;
}

/* GatherElements and ScatterElements: indices of the data's rank, no larger than the data
 * along every axis but `axis`. */
static glow_status elements_check(const glow_node *n, const glow_type *x, const glow_type *ix,
                                  int axis, glow_diag *d)
{
    if (ix->rank != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': indices rank %d differs from data "
                         "rank %d", KIND_NAME(n), ix->rank, x->rank);
    for (int i = 0; i < x->rank; i++)
        if (i != axis && ix->dims[i] > x->dims[i])
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': indices dim %d exceeds data's",
                             KIND_NAME(n), i);
    return GLOW_OK;
}

glow_status glow_ev_gather_elements(const glow_node *n, const glow_tensor *ins,
                                    glow_tensor *outs, glow_diag *d)
{
    const glow_type *x = &ins[0].type, *ix = &ins[1].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), x->rank, &axis, d));
    GLOW_TRY(elements_check(n, x, ix, axis, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, ix->rank, ix->dims, d));
    int64_t xs[GLOW_MAX_DIMS], idx[GLOW_MAX_DIMS] = { 0 }, count = ev_numel(ix);
    ev_strides(x, xs);
    size_t es = ev_size(x->dtype);
    for (int64_t i = 0; i < count; i++) {
        int64_t v = ev_index(&ins[1], i), off = 0;
        GLOW_TRY(fix_index(n, &v, x->dims[axis], i, d));
        for (int k = 0; k < x->rank; k++)
            off += (k == axis ? v : idx[k]) * xs[k];
        ev_copy(outs[0].data, i, ins[0].data, off, es);
        ev_next(ix->rank, ix->dims, idx);
    }
    return GLOW_OK;
}

/* Shared shape logic of GatherND and ScatterND: data [B..., D...], indices [B..., P..., m]
 * with `b` batch dims. Computes the number of index tuples per batch and the slice size. */
typedef struct {
    int64_t batches, per, m, slice, batch_stride;
    int64_t xs[GLOW_MAX_DIMS];
} nd_shape;

static glow_status nd_check(const glow_node *n, const glow_type *x, const glow_type *ix,
                            int64_t b, nd_shape *s, glow_diag *d)
{
    if (ix->rank < 1 || b < 0 || b >= ix->rank || b > x->rank)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': bad indices rank %d or batch_dims "
                         "%lld", KIND_NAME(n), ix->rank, (long long)b);
    s->m = ix->dims[ix->rank - 1];
    if (s->m < 0 || s->m > x->rank - b)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': index tuples of %lld entries for "
                         "data rank %d", KIND_NAME(n), (long long)s->m, x->rank);
    for (int i = 0; i < b; i++)
        if (ix->dims[i] != x->dims[i])
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': batch dim %d differs",
                             KIND_NAME(n), i);
    ev_strides(x, s->xs);
    s->batches = ev_prod(x->dims, 0, (int)b);
    s->per = ev_prod(ix->dims, (int)b, ix->rank - 1);
    s->slice = ev_prod(x->dims, (int)(b + s->m), x->rank);
    s->batch_stride = ev_prod(x->dims, (int)b, x->rank);
    return GLOW_OK;
}

/* Flat data offset of index tuple p (global tuple number) in batch bi. */
static glow_status nd_offset(const glow_node *n, const glow_tensor *x, const glow_tensor *ix,
                             int64_t b, const nd_shape *s, int64_t bi, int64_t p, int64_t *off,
                             glow_diag *d)
{
    *off = bi * s->batch_stride;
    for (int64_t j = 0; j < s->m; j++) {
        int64_t v = ev_index(ix, p * s->m + j);
        GLOW_TRY(fix_index(n, &v, x->type.dims[b + j], p * s->m + j, d));
        *off += v * s->xs[b + j];
    }
    return GLOW_OK;
}

glow_status glow_ev_gather_nd(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    const glow_type *x = &ins[0].type, *ix = &ins[1].type;
    int64_t b = glow_node_int(n, GA_BATCH_DIMS, 0);
    nd_shape s;
    GLOW_TRY(nd_check(n, x, ix, b, &s, d));
    int rank = ix->rank - 1 + x->rank - (int)(b + s.m), r = 0;
    int64_t dims[GLOW_MAX_DIMS];
    if (rank > GLOW_MAX_DIMS)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result rank %d too large",
                         KIND_NAME(n), rank);
    for (int i = 0; i < ix->rank - 1; i++)
        dims[r++] = ix->dims[i];
    for (int i = (int)(b + s.m); i < x->rank; i++)
        dims[r++] = x->dims[i];
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, rank, dims, d));
    size_t es = ev_size(x->dtype);
    for (int64_t bi = 0; bi < s.batches; bi++)
        for (int64_t pi = 0; pi < s.per; pi++) {
            int64_t p = bi * s.per + pi, off;
            GLOW_TRY(nd_offset(n, &ins[0], &ins[1], b, &s, bi, p, &off, d));
            if (s.slice)
                memcpy((char *)outs[0].data + (size_t)(p * s.slice) * es,
                       (const char *)ins[0].data + (size_t)off * es, (size_t)s.slice * es);
        }
    return GLOW_OK;
}

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

static glow_status reduction_of(const glow_node *n, reduction *r, glow_diag *d)
{
    const char *s = glow_node_str(n, GA_REDUCTION, "none");
    *r = !strcmp(s, "none") ? RED_NONE : !strcmp(s, "add") ? RED_ADD : !strcmp(s, "mul")
       ? RED_MUL : !strcmp(s, "max") ? RED_MAX : !strcmp(s, "min") ? RED_MIN : (reduction)-1;
    if ((int)*r < 0)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': unknown reduction '%s'",
                         KIND_NAME(n), s);
    return GLOW_OK;
}

/* dst[di] = dst[di] (reduction) src[si], in the element kind's arithmetic. */
static void combine(glow_dtype t, void *dst, int64_t di, const void *src, int64_t si,
                    reduction r)
{
    if (r == RED_NONE) {
        ev_copy(dst, di, src, si, ev_size(t));
    } else if (ev_is_float(t)) {
        double a = ev_ldf(t, dst, di), b = ev_ldf(t, src, si);
        double v = r == RED_ADD ? a + b : r == RED_MUL ? a * b
                 : r == RED_MAX ? (a >= b ? a : b) : (a <= b ? a : b);
        ev_stf(t, dst, di, v);
    } else {
        int64_t a = ev_ldi(t, dst, di), b = ev_ldi(t, src, si);
        bool u = ev_is_unsigned(t);
        bool a_ge = u ? (uint64_t)a >= (uint64_t)b : a >= b;
        int64_t v = r == RED_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
                  : r == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                  : r == RED_MAX ? (a_ge ? a : b) : (a_ge ? b : a);
        ev_sti(t, dst, di, v);
    }
}

glow_status glow_ev_scatter_elements(const glow_node *n, const glow_tensor *ins,
                                     glow_tensor *outs, glow_diag *d)
{
    const glow_type *x = &ins[0].type, *ix = &ins[1].type;
    int axis;
    reduction red;
    GLOW_TRY(reduction_of(n, &red, d));
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), x->rank, &axis, d));
    GLOW_TRY(glow_ev_expect_shape(n, "updates", &ins[2].type, ix->rank, ix->dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    GLOW_TRY(elements_check(n, x, ix, axis, d));
    int64_t count = ev_numel(x);
    if (count)
        memcpy(outs[0].data, ins[0].data, (size_t)count * ev_size(x->dtype));
    int64_t xs[GLOW_MAX_DIMS], idx[GLOW_MAX_DIMS] = { 0 }, nidx = ev_numel(ix);
    ev_strides(x, xs);
    for (int64_t i = 0; i < nidx; i++) {
        int64_t v = ev_index(&ins[1], i), off = 0;
        GLOW_TRY(fix_index(n, &v, x->dims[axis], i, d));
        for (int k = 0; k < x->rank; k++)
            off += (k == axis ? v : idx[k]) * xs[k];
        combine(x->dtype, outs[0].data, off, ins[2].data, i, red);
        ev_next(ix->rank, ix->dims, idx);
    }
    return GLOW_OK;
}

glow_status glow_ev_scatter_nd(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                               glow_diag *d)
{
    const glow_type *x = &ins[0].type, *ix = &ins[1].type;
    reduction red;
    nd_shape s;
    GLOW_TRY(reduction_of(n, &red, d));
    GLOW_TRY(nd_check(n, x, ix, 0, &s, d));
    int64_t dims[GLOW_MAX_DIMS];
    int rank = ix->rank - 1 + x->rank - (int)s.m, r = 0;
    if (rank > GLOW_MAX_DIMS)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': updates rank %d too large",
                         KIND_NAME(n), rank);
    for (int i = 0; i < ix->rank - 1; i++)
        dims[r++] = ix->dims[i];
    for (int i = (int)s.m; i < x->rank; i++)
        dims[r++] = x->dims[i];
    GLOW_TRY(glow_ev_expect_shape(n, "updates", &ins[2].type, rank, dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    int64_t count = ev_numel(x);
    if (count)
        memcpy(outs[0].data, ins[0].data, (size_t)count * ev_size(x->dtype));
    /* Updates apply in index order, so with duplicate indices and no reduction the last
     * one wins (ONNX leaves the order unspecified). */
    for (int64_t p = 0; p < s.per; p++) {
        int64_t off;
        GLOW_TRY(nd_offset(n, &ins[0], &ins[1], 0, &s, 0, p, &off, d));
        for (int64_t j = 0; j < s.slice; j++)
            combine(x->dtype, outs[0].data, off + j, ins[2].data, p * s.slice + j, red);
    }
    return GLOW_OK;
}

glow_status glow_ev_reverse_sequence(const glow_node *n, const glow_tensor *ins,
                                     glow_tensor *outs, glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int64_t ta = glow_node_int(n, GA_TIME_AXIS, 0), ba = glow_node_int(n, GA_BATCH_AXIS, 1);
    if (x->rank < 2 || ta < 0 || ta > 1 || ba < 0 || ba > 1 || ta == ba)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': time_axis %lld and batch_axis %lld "
                         "must be 0 and 1 in some order on rank >= 2", KIND_NAME(n),
                         (long long)ta, (long long)ba);
    GLOW_TRY(glow_ev_expect_shape(n, "sequence_lens", &ins[1].type, 1, &x->dims[ba], d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    for (int64_t b = 0; b < x->dims[ba]; b++) {
        int64_t len = ev_index(&ins[1], b);
        if (len < 0 || len > x->dims[ta])
            return glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': sequence length %lld of batch "
                             "%lld outside [0, %lld]", KIND_NAME(n), (long long)len,
                             (long long)b, (long long)x->dims[ta]);
    }
    int64_t xs[GLOW_MAX_DIMS], idx[GLOW_MAX_DIMS] = { 0 }, count = ev_numel(x);
    ev_strides(x, xs);
    size_t es = ev_size(x->dtype);
    for (int64_t i = 0; i < count; i++) {
        int64_t t = idx[ta], len = ev_index(&ins[1], idx[ba]);
        int64_t src = i + ((t < len ? len - 1 - t : t) - t) * xs[ta];
        ev_copy(outs[0].data, i, ins[0].data, src, es);
        ev_next(x->rank, x->dims, idx);
    }
    return GLOW_OK;
}
