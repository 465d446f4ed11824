// eval_dyn.c - Reference evaluation of the nodes whose result shapes depend on the data:
// NonZero, Unique, Compress, NonMaxSuppression and FirstK (docs/dynamic-shapes.md).
//
// Each result buffer has the node's upper-bound type. The routine writes the actual elements
// compactly - row-major in the actual shape, as if the buffer had that shape - zeroes the rest
// of the buffer (so a run's outputs do not depend on an earlier run's), and stores the count
// along the dynamic axis in the last result, an i64 scalar. The runtime reads that count when
// it hands out a graph output (glow_exec_output).
#include <stdlib.h>

#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

static void zero_tail(glow_tensor *t, int64_t used)
{
    size_t es = glow_dtype_size(t->type.dtype), total = glow_type_bytes(&t->type);
    size_t at = (size_t)used * es;
    if (at < total)
        memset((uint8_t *)t->data + at, 0, total - at);
}

static void set_count(glow_tensor *outs, int nout, int64_t count)
{
    *(int64_t *)outs[nout - 1].data = count;
}

static bool is_nonzero(const glow_tensor *t, size_t i)
{
    if (ev_is_float(t->type.dtype)) {
        double v = glow_load_f64(t->type.dtype, t->data, i);
        return v != 0 || isnan(v);
    }
    return glow_load_i64(t->type.dtype, t->data, i) != 0;
}

static glow_status no_memory(const glow_node *n, glow_diag *d)
{
    return glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': out of memory for its temporaries",
                     KIND_NAME(n));
}

/* --- NonZero --- */

static glow_status ev_nonzero(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    const glow_tensor *x = &ins[0];
    int64_t numel = ev_numel(&x->type), rows = x->type.rank ? x->type.rank : 1;
    int64_t bound[2] = { rows, numel };
    GLOW_TRY(glow_ev_expect_shape(n, "result 0", &outs[0].type, 2, bound, d));
    int64_t nnz = 0;
    for (int64_t i = 0; i < numel; i++)
        nnz += is_nonzero(x, (size_t)i);
    int64_t strides[GLOW_MAX_DIMS];
    glow_type_strides(&x->type, strides);
    int64_t *y = outs[0].data;
    for (int64_t i = 0, j = 0; i < numel; i++) {
        if (!is_nonzero(x, (size_t)i))
            continue;
        for (int r = 0; r < x->type.rank; r++)
            y[r * nnz + j] = i / strides[r] % x->type.dims[r];
        if (x->type.rank == 0)
            y[j] = 0;
        j++;
    }
    zero_tail(&outs[0], rows * nnz);
    set_count(outs, (int)n->nout, nnz);
    return GLOW_OK;
}

/* --- Unique --- */

typedef glow_slices slices;

static int slice_cmp(const slices *s, int64_t a, int64_t b)
{
    glow_dtype t = s->x->type.dtype;
    bool fl = ev_is_float(t);
    for (int64_t o = 0; o < s->outer; o++) {
        for (int64_t j = 0; j < s->inner; j++) {
            size_t ia = (size_t)((o * s->len + a) * s->inner + j);
            size_t ib = (size_t)((o * s->len + b) * s->inner + j);
            if (fl) {
                double u = glow_load_f64(t, s->x->data, ia), v = glow_load_f64(t, s->x->data, ib);
                if (u != v)
                    return u < v ? -1 : 1;
            } else {
                int64_t u = glow_load_i64(t, s->x->data, ia), v = glow_load_i64(t, s->x->data, ib);
                if (u != v)
                    return u < v ? -1 : 1;
            }
        }
    }
    return 0;
}

/* Stable merge sort of slice positions, so equal slices keep their input order and each
 * group's first member is its first occurrence. */
static void slice_sort(const slices *s, int64_t *v, int64_t *tmp, int64_t n)
{
    if (n < 2)
        return;
    int64_t h = n / 2;
    slice_sort(s, v, tmp, h);
    slice_sort(s, v + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = slice_cmp(s, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

int64_t glow_unique_groups(const glow_slices *s, bool sorted, int64_t *ord, int64_t *tmp,
                           int64_t *first, int64_t *count, int64_t *inv)
{
    int64_t n = s->len, ng = 0;
    for (int64_t i = 0; i < n; i++)
        ord[i] = i;
    slice_sort(s, ord, tmp, n);
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || slice_cmp(s, ord[i - 1], ord[i]) != 0) {
            first[ng] = ord[i];
            count[ng++] = 0;
        }
        count[ng - 1]++;
        inv[ord[i]] = ng - 1;
    }
    if (sorted)
        return ng;
    /* Renumber the groups by first occurrence; ord and tmp are free again. */
    int64_t *rank_of = ord, next = 0;
    for (int64_t g = 0; g < ng; g++)
        rank_of[g] = -1;
    int64_t *f2 = tmp;
    int64_t *c2 = malloc((size_t)(ng ? ng : 1) * sizeof *c2);
    if (!c2)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = inv[i];
        if (rank_of[g] < 0) {
            rank_of[g] = next;
            f2[next] = first[g];
            c2[next++] = count[g];
        }
        inv[i] = rank_of[g];
    }
    memcpy(first, f2, (size_t)ng * sizeof *first);
    memcpy(count, c2, (size_t)ng * sizeof *count);
    free(c2);
    return ng;
}

static glow_status ev_unique(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             glow_diag *d)
{
    const glow_type *xt = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), xt->rank, &axis, d));
    slices s = { &ins[0], 1, xt->dims[axis], 1 };
    for (int i = 0; i < xt->rank; i++) {
        if (i < axis)
            s.outer *= xt->dims[i];
        else if (i > axis)
            s.inner *= xt->dims[i];
    }
    bool second = glow_node_int(n, GA_K, 0) == 1;
    int64_t len[1] = { s.len };
    GLOW_TRY(glow_ev_expect_shape(n, "result 1", &outs[1].type, 1, len, d));
    if (second)
        GLOW_TRY(glow_ev_expect_shape(n, "result 0", &outs[0].type, 1, len, d));
    else if (!glow_type_same_shape(&outs[0].type, xt) || outs[0].type.dtype != xt->dtype)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result 0 is not the input's type",
                         KIND_NAME(n));
    size_t m = (size_t)(s.len > 0 ? s.len : 1);
    int64_t *buf = malloc(5 * m * sizeof *buf);
    if (!buf)
        return no_memory(n, d);
    int64_t *ord = buf, *tmp = buf + m, *first = buf + 2 * m, *count = buf + 3 * m,
            *inv = buf + 4 * m;
    int64_t ng = glow_unique_groups(&s, glow_node_int(n, GA_SORTED, 1) != 0, ord, tmp, first, count,
                               inv);
    if (ng < 0) {
        free(buf);
        return no_memory(n, d);
    }
    int64_t *r1 = outs[1].data;
    if (second) {
        memcpy(outs[0].data, inv, (size_t)s.len * sizeof *inv);
        memcpy(r1, count, (size_t)ng * sizeof *count);
    } else {
        size_t es = glow_dtype_size(xt->dtype), row = (size_t)s.inner * es;
        uint8_t *y = outs[0].data;
        const uint8_t *x = ins[0].data;
        for (int64_t o = 0; o < s.outer; o++)
            for (int64_t g = 0; g < ng; g++)
                memcpy(y + (size_t)(o * ng + g) * row,
                       x + (size_t)(o * s.len + first[g]) * row, row);
        zero_tail(&outs[0], s.outer * ng * s.inner);
        memcpy(r1, first, (size_t)ng * sizeof *first);
    }
    zero_tail(&outs[1], ng);
    set_count(outs, (int)n->nout, ng);
    free(buf);
    return GLOW_OK;
}

/* --- Compress --- */

static glow_status ev_compress(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                               glow_diag *d)
{
    const glow_type *xt = &ins[0].type, *ct = &ins[1].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), xt->rank, &axis, d));
    if (!glow_type_same_shape(&outs[0].type, xt) || outs[0].type.dtype != xt->dtype ||
        ct->rank != 1)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand or result shapes do not "
                         "match", KIND_NAME(n));
    int64_t outer = 1, inner = 1, len = xt->dims[axis];
    for (int i = 0; i < xt->rank; i++) {
        if (i < axis)
            outer *= xt->dims[i];
        else if (i > axis)
            inner *= xt->dims[i];
    }
    /* The spec ignores condition values past the axis' end; a shorter one selects nothing
     * beyond its own end. */
    int64_t use = ct->dims[0] < len ? ct->dims[0] : len, cnt = 0;
    for (int64_t i = 0; i < use; i++)
        cnt += is_nonzero(&ins[1], (size_t)i);
    size_t row = (size_t)inner * glow_dtype_size(xt->dtype);
    uint8_t *y = outs[0].data;
    const uint8_t *x = ins[0].data;
    for (int64_t o = 0, j = 0; o < outer; o++)
        for (int64_t i = 0; i < use; i++)
            if (is_nonzero(&ins[1], (size_t)i))
                memcpy(y + (size_t)j++ * row, x + (size_t)(o * len + i) * row, row);
    zero_tail(&outs[0], outer * cnt * inner);
    set_count(outs, (int)n->nout, cnt);
    return GLOW_OK;
}

/* --- NonMaxSuppression --- */

typedef struct box {
    double y1, x1, y2, x2;
} box;

/* A box as (min corner, max corner): corner boxes may give either diagonal, center boxes are
 * [x_center, y_center, width, height]. */
static box load_box(const glow_tensor *t, size_t at, bool center)
{
    double v[4];
    for (int i = 0; i < 4; i++)
        v[i] = glow_load_f64(t->type.dtype, t->data, at + (size_t)i);
    box b;
    if (center) {
        b = (box){ v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2 };
    } else {
        b = (box){ fmin(v[0], v[2]), fmin(v[1], v[3]), fmax(v[0], v[2]), fmax(v[1], v[3]) };
    }
    return b;
}

/* Whether a and b overlap by more than the threshold (intersection over union); boxes without
 * area never suppress. */
static bool suppresses(box a, box b, double iou_threshold)
{
    double iy = fmin(a.y2, b.y2) - fmax(a.y1, b.y1), ix = fmin(a.x2, b.x2) - fmax(a.x1, b.x1);
    if (iy <= 0 || ix <= 0)
        return false;
    double inter = iy * ix;
    double aa = (a.y2 - a.y1) * (a.x2 - a.x1), ab = (b.y2 - b.y1) * (b.x2 - b.x1);
    double uni = aa + ab - inter;
    if (aa <= 0 || ab <= 0 || uni <= 0)
        return false;
    return inter / uni > iou_threshold;
}

typedef struct cand {
    double score;
    int64_t index;
} cand;

/* Higher score first; equal scores keep the lower box index first. */
static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static glow_status ev_nms(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_type *bt = &ins[0].type, *st = &ins[1].type;
    if (bt->rank != 3 || bt->dims[2] != 4 || st->rank != 3 || st->dims[0] != bt->dims[0] ||
        st->dims[2] != bt->dims[1])
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': boxes and scores must be [B, N, 4] "
                         "and [B, C, N]", KIND_NAME(n));
    int64_t B = bt->dims[0], N = bt->dims[1], C = st->dims[1];
    int64_t k = glow_node_int(n, GA_K, 0);
    int64_t bound[2] = { B * C * k, 3 };
    GLOW_TRY(glow_ev_expect_shape(n, "result 0", &outs[0].type, 2, bound, d));
    bool center = !strcmp(glow_node_str(n, GA_MODE, "corner"), "center");
    int64_t per_class = glow_load_i64(ins[2].type.dtype, ins[2].data, 0);
    double iou = glow_load_f64(ins[3].type.dtype, ins[3].data, 0);
    double thr = glow_load_f64(ins[4].type.dtype, ins[4].data, 0);
    /* The bound k is the per-class limit known at compile time: the run-time one may only
     * lower it. */
    if (per_class > k)
        per_class = k;
    cand *cs = malloc((size_t)(N > 0 ? N : 1) * sizeof *cs);
    box *sel = malloc((size_t)(N > 0 ? N : 1) * sizeof *sel);
    if (!cs || !sel) {
        free(cs);
        free(sel);
        return no_memory(n, d);
    }
    int64_t *y = outs[0].data, rows = 0;
    for (int64_t b = 0; b < B; b++) {
        for (int64_t c = 0; c < C && per_class > 0; c++) {
            int64_t nc = 0;
            for (int64_t i = 0; i < N; i++) {
                double s = glow_load_f64(st->dtype, ins[1].data, (size_t)((b * C + c) * N + i));
                if (s > thr)
                    cs[nc++] = (cand){ s, i };
            }
            qsort(cs, (size_t)nc, sizeof *cs, cand_cmp);
            int64_t nsel = 0;
            for (int64_t i = 0; i < nc && nsel < per_class; i++) {
                box cb = load_box(&ins[0], (size_t)((b * N + cs[i].index) * 4), center);
                bool keep = true;
                for (int64_t j = 0; j < nsel && keep; j++)
                    keep = !suppresses(sel[j], cb, iou);
                if (!keep)
                    continue;
                sel[nsel++] = cb;
                y[rows * 3] = b;
                y[rows * 3 + 1] = c;
                y[rows * 3 + 2] = cs[i].index;
                rows++;
            }
        }
    }
    free(cs);
    free(sel);
    zero_tail(&outs[0], rows * 3);
    set_count(outs, (int)n->nout, rows);
    return GLOW_OK;
}

/* --- FirstK --- */

static glow_status ev_first_k(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    const glow_type *xt = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, 0), xt->rank, &axis, d));
    if (!glow_type_same_shape(&outs[0].type, xt) || outs[0].type.dtype != xt->dtype ||
        ev_numel(&ins[1].type) != 1)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand or result shapes do not "
                         "match", KIND_NAME(n));
    int64_t outer = 1, inner = 1, len = xt->dims[axis];
    for (int i = 0; i < xt->rank; i++) {
        if (i < axis)
            outer *= xt->dims[i];
        else if (i > axis)
            inner *= xt->dims[i];
    }
    int64_t k = glow_load_i64(ins[1].type.dtype, ins[1].data, 0);
    if (k < 0 || k > len)
        return glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': k = %lld is outside [0, %lld]",
                         KIND_NAME(n), (long long)k, (long long)len);
    size_t es = glow_dtype_size(xt->dtype), row = (size_t)(k * inner) * es;
    uint8_t *y = outs[0].data;
    const uint8_t *x = ins[0].data;
    /* Row o moves down to o * k: memmove, since the result may share the operand's buffer. */
    for (int64_t o = 0; o < outer; o++)
        memmove(y + (size_t)o * row, x + (size_t)(o * len * inner) * es, row);
    zero_tail(&outs[0], outer * k * inner);
    set_count(outs, (int)n->nout, k);
    return GLOW_OK;
}

glow_status glow_ev_dyn(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d)
{
    const glow_type *c = &outs[n->nout - 1].type;
    if (c->dtype != GLOW_I64 || ev_numel(c) != 1)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': the last result must be the i64 "
                         "count", KIND_NAME(n));
    switch (n->kind) {
    case NK_NON_ZERO: return ev_nonzero(n, ins, outs, d);
    case NK_UNIQUE: return ev_unique(n, ins, outs, d);
    case NK_COMPRESS: return ev_compress(n, ins, outs, d);
    case NK_NON_MAX_SUPPRESSION: return ev_nms(n, ins, outs, d);
    case NK_FIRST_K: return ev_first_k(n, ins, outs, d);
    default:
        return glow_fail(d, GLOW_ERR_INTERNAL, "%s '%s': not a data-dependent kind",
                         KIND_NAME(n));
    }
}
