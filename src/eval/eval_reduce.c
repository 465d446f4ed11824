// eval_reduce.c - Reference evaluation of reductions and along-axis ops: Reduce*, ArgMax/ArgMin,
// TopK, CumSum/CumProd, Softmax/LogSoftmax/Hardmax and MatMul.
//
// Float kinds accumulate in f64 and round once at the end; integer kinds accumulate in 64-bit
// wrapping arithmetic and are truncated to their width, like the elementwise ops.
#include <stdlib.h>

#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

/* Splits a shape around `axis` into outer x size x inner, the layout of every along-axis op. */
static void split_axis(const glow_type *t, int axis, int64_t *outer, int64_t *size,
                       int64_t *inner)
{
    *outer = ev_prod(t->dims, 0, axis);
    *size = t->dims[axis];
    *inner = ev_prod(t->dims, axis + 1, t->rank);
}

/* Smallest and largest value of an integer kind, as the 64-bit pattern ev_ldi returns. */
static int64_t int_min(glow_dtype t)
{
    unsigned bits = (unsigned)ev_size(t) * 8;
    return ev_is_unsigned(t) ? 0 : (int64_t)(UINT64_MAX << (bits - 1));
}

static int64_t int_max(glow_dtype t)
{
    unsigned bits = (unsigned)ev_size(t) * 8;
    uint64_t all = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    return (int64_t)(ev_is_unsigned(t) ? all : all >> 1);
}

static bool int_less(glow_dtype t, int64_t a, int64_t b)
{
    return ev_is_unsigned(t) ? (uint64_t)a < (uint64_t)b : a < b;
}

/* Reductions over the sorted, non-negative `axes`. Empty reductions give the identity of
 * the operation (0, 1, the kind's lowest/highest value; Mean of nothing is NaN or 0). */
glow_status glow_ev_reduce(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int na = 0;
    const int64_t *axes = glow_node_ints(n, GA_AXES, &na);
    bool keep = glow_node_int(n, GA_KEEPDIMS, 1) != 0, red[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < na; i++) {
        if (axes[i] < 0 || axes[i] >= x->rank || red[axes[i]])
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': bad axis %lld for rank %d",
                             KIND_NAME(n), (long long)axes[i], x->rank);
        red[axes[i]] = true;
    }
    glow_type kt = *x; /* the keepdims shape, which has the result's layout either way */
    int64_t dims[GLOW_MAX_DIMS], ks[GLOW_MAX_DIMS];
    int rank = 0;
    for (int i = 0; i < x->rank; i++) {
        kt.dims[i] = red[i] ? 1 : x->dims[i];
        if (keep || !red[i])
            dims[rank++] = kt.dims[i];
    }
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, rank, dims, d));
    ev_strides(&kt, ks);
    for (int i = 0; i < x->rank; i++)
        if (red[i])
            ks[i] = 0;
    glow_node_kind k = n->kind;
    glow_dtype t = x->dtype;
    int64_t m = ev_numel(&kt), count = ev_numel(x), per = m ? count / m : 0;
    bool use_f = ev_is_float(t) || k == NK_REDUCE_L2 || k == NK_REDUCE_LOG_SUM ||
                 k == NK_REDUCE_LOG_SUM_EXP;
    double *fa = use_f ? malloc((size_t)(m ? m : 1) * sizeof *fa) : NULL;
    int64_t *ia = use_f ? NULL : malloc((size_t)(m ? m : 1) * sizeof *ia);
    if (!fa && !ia)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': out of memory", KIND_NAME(n));
    for (int64_t j = 0; j < m; j++) {
        if (use_f)
            fa[j] = k == NK_REDUCE_PROD ? 1 : k == NK_REDUCE_MAX || k == NK_REDUCE_LOG_SUM_EXP
                  ? -INFINITY : k == NK_REDUCE_MIN ? INFINITY : 0;
        else
            ia[j] = k == NK_REDUCE_PROD ? 1 : k == NK_REDUCE_MAX ? int_min(t)
                  : k == NK_REDUCE_MIN ? int_max(t) : 0;
    }
    /* LogSumExp takes two sweeps: the maxima, then the shifted sums. */
    double *shift = NULL;
    if (k == NK_REDUCE_LOG_SUM_EXP) {
        int64_t idx[GLOW_MAX_DIMS] = { 0 };
        for (int64_t i = 0; i < count; i++) {
            int64_t o = 0;
            for (int a = 0; a < x->rank; a++)
                o += idx[a] * ks[a];
            fa[o] = fmax(fa[o], ev_ldf(t, ins[0].data, i));
            ev_next(x->rank, x->dims, idx);
        }
        shift = fa;
        fa = malloc((size_t)(m ? m : 1) * sizeof *fa);
        if (!fa) {
            free(shift);
            return glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': out of memory", KIND_NAME(n));
        }
        for (int64_t j = 0; j < m; j++) {
            shift[j] = isfinite(shift[j]) ? shift[j] : 0;
            fa[j] = 0;
        }
    }
    int64_t idx[GLOW_MAX_DIMS] = { 0 };
    for (int64_t i = 0; i < count; i++) {
        int64_t o = 0;
        for (int a = 0; a < x->rank; a++)
            o += idx[a] * ks[a];
        ev_next(x->rank, x->dims, idx);
        if (use_f) {
            double v = ev_ldf(t, ins[0].data, i), *acc = &fa[o];
            switch (k) {
            case NK_REDUCE_MAX: *acc = isnan(v) || v > *acc ? v : *acc; break;
            case NK_REDUCE_MIN: *acc = isnan(v) || v < *acc ? v : *acc; break;
            case NK_REDUCE_PROD: *acc *= v; break;
            case NK_REDUCE_L1: *acc += fabs(v); break;
            case NK_REDUCE_L2: case NK_REDUCE_SUM_SQUARE: *acc += v * v; break;
            case NK_REDUCE_LOG_SUM_EXP: *acc += exp(v - shift[o]); break;
            default: *acc += v; break; /* Sum, Mean, LogSum */
            }
        } else {
            int64_t v = ev_ldi(t, ins[0].data, i), *acc = &ia[o];
            uint64_t ua = (uint64_t)*acc, uv = (uint64_t)v;
            switch (k) {
            case NK_REDUCE_MAX: *acc = int_less(t, *acc, v) ? v : *acc; break;
            case NK_REDUCE_MIN: *acc = int_less(t, v, *acc) ? v : *acc; break;
            case NK_REDUCE_PROD: *acc = (int64_t)(ua * uv); break;
            case NK_REDUCE_L1:
                *acc = (int64_t)(ua + (!ev_is_unsigned(t) && v < 0 ? 0 - uv : uv));
                break;
            case NK_REDUCE_SUM_SQUARE: *acc = (int64_t)(ua + uv * uv); break;
            default: *acc = (int64_t)(ua + uv); break; /* Sum, Mean */
            }
        }
    }
    for (int64_t j = 0; j < m; j++) {
        if (use_f) {
            double v = fa[j];
            if (k == NK_REDUCE_MEAN)
                v /= (double)per;
            else if (k == NK_REDUCE_L2)
                v = sqrt(v);
            else if (k == NK_REDUCE_LOG_SUM)
                v = log(v);
            else if (k == NK_REDUCE_LOG_SUM_EXP)
                v = shift[j] + log(v);
            ev_stf(outs[0].type.dtype, outs[0].data, j, v);
        } else {
            int64_t v = ia[j];
            if (k == NK_REDUCE_MEAN)
                v = per == 0 ? 0 : ev_is_unsigned(t) ? (int64_t)((uint64_t)v / (uint64_t)per)
                                                     : v / per;
            ev_sti(outs[0].type.dtype, outs[0].data, j, v);
        }
    }
    free(fa);
    free(ia);
    free(shift);
    return GLOW_OK;
}

/* Result shape of an along-axis op that removes (or keeps as 1) `axis`. */
static glow_status axis_result(const glow_node *n, const glow_type *x, int axis, bool keep,
                               int64_t size, const glow_type *y, glow_diag *d)
{
    int64_t dims[GLOW_MAX_DIMS];
    int rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (i != axis || keep)
            dims[rank++] = i == axis ? size : x->dims[i];
    return glow_ev_expect_shape(n, "result", y, rank, dims, d);
}

/* Three-way order of elements i and j of x where NaN is above everything (numpy's order). */
static int order(glow_dtype t, const void *x, int64_t i, int64_t j)
{
    if (ev_is_float(t)) {
        double a = ev_ldf(t, x, i), b = ev_ldf(t, x, j);
        if (isnan(a) || isnan(b))
            return isnan(a) - isnan(b);
        return (a > b) - (a < b);
    }
    int64_t a = ev_ldi(t, x, i), b = ev_ldi(t, x, j);
    return int_less(t, b, a) - int_less(t, a, b);
}

glow_status glow_ev_arg(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), x->rank, &axis, d));
    bool keep = glow_node_int(n, GA_KEEPDIMS, 1) != 0;
    bool last = glow_node_int(n, GA_SELECT_LAST, 0) != 0;
    int sign = n->kind == NK_ARG_MAX ? 1 : -1;
    GLOW_TRY(axis_result(n, x, axis, keep, 1, &outs[0].type, d));
    int64_t outer, size, inner;
    split_axis(x, axis, &outer, &size, &inner);
    if (size == 0 && outer * inner > 0)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': reducing an empty axis",
                         KIND_NAME(n));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * size * inner + in, best = 0;
            for (int64_t j = 1; j < size; j++) {
                int c = sign * order(x->dtype, ins[0].data, base + j * inner,
                                     base + best * inner);
                if (c > 0 || (c == 0 && last))
                    best = j;
            }
            ((int64_t *)outs[0].data)[o * inner + in] = best;
        }
    return GLOW_OK;
}

/* One line of TopK's operand: element j is x[base + j * inner]. */
typedef struct {
    glow_dtype t;
    const void *x;
    int64_t base, inner;
    int sign; /* 1: largest first, -1: smallest first */
} topk_line;

/* Whether line element a goes before b; ties keep the lower index first (ONNX). */
static bool topk_before(const topk_line *l, int64_t a, int64_t b)
{
    int c = l->sign * order(l->t, l->x, l->base + a * l->inner, l->base + b * l->inner);
    return c ? c > 0 : a < b;
}

/* Bottom-up merge sort of the index array v (n entries, scratch tmp of the same size). */
static void topk_sort(const topk_line *l, int64_t *v, int64_t *tmp, int64_t n)
{
    int64_t *src = v, *dst = tmp;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = topk_before(l, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        int64_t *sw = src;
        src = dst, dst = sw;
    }
    if (src != v)
        memcpy(v, src, (size_t)n * sizeof *v);
}

glow_status glow_ev_topk(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, -1), x->rank, &axis, d));
    int64_t k = glow_node_int(n, GA_K, -1), outer, size, inner;
    split_axis(x, axis, &outer, &size, &inner);
    if (k < 0 || k > size)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': k = %lld outside [0, %lld]",
                         KIND_NAME(n), (long long)k, (long long)size);
    for (uint32_t i = 0; i < n->nout; i++)
        GLOW_TRY(axis_result(n, x, axis, true, k, &outs[i].type, d));
    int64_t *perm = malloc((size_t)(size ? size : 1) * 2 * sizeof *perm);
    if (!perm)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': out of memory", KIND_NAME(n));
    size_t es = ev_size(x->dtype);
    /* Results are always sorted, which also satisfies sorted = 0. */
    topk_line l = { x->dtype, ins[0].data, 0, inner, glow_node_int(n, GA_LARGEST, 1) ? 1 : -1 };
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            l.base = o * size * inner + in;
            for (int64_t j = 0; j < size; j++)
                perm[j] = j;
            topk_sort(&l, perm, perm + size, size);
            for (int64_t j = 0; j < k; j++) {
                int64_t dst = (o * k + j) * inner + in;
                ev_copy(outs[0].data, dst, ins[0].data, l.base + perm[j] * inner, es);
                if (n->nout > 1)
                    ((int64_t *)outs[1].data)[dst] = perm[j];
            }
        }
    free(perm);
    return GLOW_OK;
}

glow_status glow_ev_cumulative(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                               glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), x->rank, &axis, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    bool excl = glow_node_int(n, GA_EXCLUSIVE, 0) != 0;
    bool rev = glow_node_int(n, GA_REVERSE, 0) != 0, prod = n->kind == NK_CUMPROD;
    int64_t outer, size, inner;
    split_axis(x, axis, &outer, &size, &inner);
    glow_dtype t = x->dtype;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double fa = prod ? 1 : 0;
            uint64_t ia = prod ? 1 : 0;
            for (int64_t s = 0; s < size; s++) {
                int64_t at = (o * size + (rev ? size - 1 - s : s)) * inner + in;
                if (excl) {
                    if (ev_is_float(t))
                        ev_stf(t, outs[0].data, at, fa);
                    else
                        ev_sti(t, outs[0].data, at, (int64_t)ia);
                }
                if (ev_is_float(t)) {
                    double v = ev_ldf(t, ins[0].data, at);
                    fa = prod ? fa * v : fa + v;
                } else {
                    uint64_t v = (uint64_t)ev_ldi(t, ins[0].data, at);
                    ia = prod ? ia * v : ia + v;
                }
                if (!excl) {
                    if (ev_is_float(t))
                        ev_stf(t, outs[0].data, at, fa);
                    else
                        ev_sti(t, outs[0].data, at, (int64_t)ia);
                }
            }
        }
    return GLOW_OK;
}

glow_status glow_ev_softmax(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, -1), x->rank, &axis, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    int64_t outer, size, inner;
    split_axis(x, axis, &outer, &size, &inner);
    glow_dtype t = x->dtype;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * size * inner + in, arg = 0;
            double mx = -INFINITY, sum = 0;
            for (int64_t s = 0; s < size; s++) {
                double v = ev_ldf(t, ins[0].data, base + s * inner);
                if (v > mx)
                    mx = v, arg = s;
            }
            for (int64_t s = 0; s < size; s++)
                sum += exp(ev_ldf(t, ins[0].data, base + s * inner) - mx);
            for (int64_t s = 0; s < size; s++) {
                int64_t at = base + s * inner;
                double v = ev_ldf(t, ins[0].data, at), r;
                if (n->kind == NK_SOFTMAX)
                    r = exp(v - mx) / sum;
                else if (n->kind == NK_LOG_SOFTMAX)
                    r = v - mx - log(sum);
                else
                    r = s == arg;
                ev_stf(t, outs[0].data, at, r);
            }
        }
    return GLOW_OK;
}

/* Batched [..., M, K] x [..., K, N] with identical batch dims. */
glow_status glow_ev_matmul(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_type *a = &ins[0].type, *b = &ins[1].type;
    int r = a->rank;
    if (r < 2 || b->rank != r)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operands need equal ranks >= 2 "
                         "(%d and %d)", KIND_NAME(n), a->rank, b->rank);
    int64_t M = a->dims[r - 2], K = a->dims[r - 1], N = b->dims[r - 1];
    int64_t bdims[GLOW_MAX_DIMS], ydims[GLOW_MAX_DIMS];
    memcpy(bdims, a->dims, sizeof bdims);
    bdims[r - 2] = K, bdims[r - 1] = N;
    GLOW_TRY(glow_ev_expect_shape(n, "operand 1", b, r, bdims, d));
    memcpy(ydims, a->dims, sizeof ydims);
    ydims[r - 1] = N;
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, r, ydims, d));
    glow_dtype t = a->dtype;
    int64_t batches = ev_prod(a->dims, 0, r - 2);
    for (int64_t bt = 0; bt < batches; bt++)
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double fs = 0;
                uint64_t is = 0;
                for (int64_t q = 0; q < K; q++) {
                    int64_t ia = (bt * M + i) * K + q, ib = (bt * K + q) * N + j;
                    if (ev_is_float(t))
                        fs += ev_ldf(t, ins[0].data, ia) * ev_ldf(t, ins[1].data, ib);
                    else
                        is += (uint64_t)ev_ldi(t, ins[0].data, ia) *
                              (uint64_t)ev_ldi(t, ins[1].data, ib);
                }
                int64_t iy = (bt * M + i) * N + j;
                if (ev_is_float(t))
                    ev_stf(t, outs[0].data, iy, fs);
                else
                    ev_sti(t, outs[0].data, iy, (int64_t)is);
            }
    return GLOW_OK;
}
