// gather_scalar.c - Reference index-driven data movement of any element kind, by element
// size: Gather, GatherElements, GatherND, ScatterElements / ScatterND (with or without a
// reduction), OneHot (whose indices may be anything: one out of range only selects the off
// value) and ReverseSequence.
//
// Indices are of any integer kind, negative ones counting from the end as ONNX says; they are
// data, computed at run time. An index out of range (a sequence length too long) is an error
// of the run, as in the evaluator: the kernel records it in the run's error record (gk_ops.h
// GK_ERR_*; the backend reports it after the run, a bundle returns nonzero) and touches no
// byte outside a buffer for it: a gather reads zero bits, a scatter skips the update. The
// gathers split their rows over the threads; the scatters run on thread 0 alone, so updates
// land in index order (with duplicate indices the last one wins, as in the evaluator).
#include "gk_dtype.h"
#include "kernels.h"

/* Where the indices come from and where a bad one is reported. */
typedef struct ix_src {
    int t;               /* gk_dtype of the indices */
    const void *p;
    int64_t *err;        /* the run's error record */
    int64_t code;        /* this instruction's */
} ix_src;

/* Records a failure unless one is already recorded (by any thread): only the thread whose
 * code lands writes the details, read by the host once every thread is done. */
static inline void fail(const ix_src *ix, int64_t v, int64_t pos, int64_t bound)
{
    int64_t none = 0;
    if (__atomic_compare_exchange_n(&ix->err[GK_ERR_CODE], &none, ix->code, 0,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        ix->err[GK_ERR_VALUE] = v;
        ix->err[GK_ERR_POS] = pos;
        ix->err[GK_ERR_BOUND] = bound;
    }
}

/* Index e wrapped into [0, size), or -1 (recorded) when out of range. */
static inline int64_t index_at(const ix_src *ix, int64_t e, int64_t size)
{
    int64_t v = gk_ldi(ix->t, ix->p, e), w = v < 0 ? v + size : v;
    if (w >= 0 && w < size && !(gk_dt_is_unsigned(ix->t) && v < 0))
        return w;
    fail(ix, v, e, size);
    return -1;
}

static inline void copy_or_zero(uint8_t *dst, const uint8_t *src, size_t bytes)
{
    if (src)
        memcpy(dst, src, bytes);
    else
        memset(dst, 0, bytes);
}

/* dst = dst (red) src for element kind t, or src when red is 0: the evaluator's combine. */
static inline void combine(uint8_t *dst, const uint8_t *src, size_t es, int red, int t)
{
    if (!red) {
        memcpy(dst, src, es);
    } else if (gk_dt_is_float(t)) {
        double a = gk_ldf(t, dst, 0), b = gk_ldf(t, src, 0);
        double v = red == GK_SCATTER_ADD ? a + b : red == GK_SCATTER_MUL ? a * b
                 : red == GK_SCATTER_MAX ? (a >= b ? a : b) : (a <= b ? a : b);
        gk_stf(t, dst, 0, v);
    } else {
        int64_t a = gk_ldi(t, dst, 0), b = gk_ldi(t, src, 0);
        bool ge = gk_dt_is_unsigned(t) ? (uint64_t)a >= (uint64_t)b : a >= b;
        int64_t v = red == GK_SCATTER_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
                  : red == GK_SCATTER_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                  : red == GK_SCATTER_MAX ? (ge ? a : b) : (ge ? b : a);
        gk_sti(t, dst, 0, v);
    }
}

static inline void gather(const uint8_t *x, const ix_src *ix, uint8_t *y, size_t es,
                          int64_t outer, int64_t size, int64_t inner, int64_t q, int tid,
                          int nthreads)
{
    int64_t lo, hi;
    size_t row = (size_t)inner * es;
    gk_split(outer * q, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t o = r / q, v = index_at(ix, r % q, size);
        copy_or_zero(y + r * (int64_t)row, v < 0 ? NULL : x + (o * size + v) * (int64_t)row,
                     row);
    }
}

/* Offset in the data of index element e at position i[0..6) of the index tensor, the
 * coordinate along `axis` replaced by the index; -1 when out of range. */
static inline int64_t elements_offset(const ix_src *ix, int64_t e, const int64_t *i, int axis,
                                      int64_t size, const int64_t *s)
{
    int64_t v = index_at(ix, e, size), off = 0;
    if (v < 0)
        return -1;
    for (int k = 0; k < 6; k++)
        off += (k == axis ? v : i[k]) * s[k];
    return off;
}

static inline void next_index(const int64_t *d, int64_t *i)
{
    for (int k = 5; k >= 0 && ++i[k] == d[k]; k--)
        i[k] = 0;
}

static inline void gather_elements(const uint8_t *x, const ix_src *ix, uint8_t *y, size_t es,
                                   int axis, int64_t size, const int64_t *d, const int64_t *s,
                                   int tid, int nthreads)
{
    int64_t n = d[0] * d[1] * d[2] * d[3] * d[4] * d[5], lo, hi, i[6];
    gk_split(n, 1, tid, nthreads, &lo, &hi);
    if (lo >= hi)
        return;
    int64_t r = lo;
    for (int k = 5; k >= 0; k--) {
        i[k] = r % d[k];
        r /= d[k];
    }
    for (int64_t e = lo; e < hi; e++) {
        int64_t off = elements_offset(ix, e, i, axis, size, s);
        copy_or_zero(y + e * (int64_t)es, off < 0 ? NULL : x + off * (int64_t)es, es);
        next_index(d, i);
    }
}

/* Offset of index tuple p (m entries) over dims e[0..m) with strides s, or -1. */
static inline int64_t tuple_offset(const ix_src *ix, int64_t p, int64_t m, const int64_t *e,
                                   const int64_t *s)
{
    int64_t off = 0;
    for (int64_t j = 0; j < m; j++) {
        int64_t v = index_at(ix, p * m + j, e[j]);
        if (v < 0)
            return -1;
        off += v * s[j];
    }
    return off;
}

static inline void gather_nd(const uint8_t *x, const ix_src *ix, uint8_t *y, size_t es,
                             int64_t batches, int64_t per, int64_t m, int64_t slice,
                             int64_t batch_stride, const int64_t *e, const int64_t *s, int tid,
                             int nthreads)
{
    int64_t lo, hi;
    size_t row = (size_t)slice * es;
    gk_split(batches * per, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t off = tuple_offset(ix, p, m, e, s);
        copy_or_zero(y + p * (int64_t)row,
                     off < 0 ? NULL : x + ((p / per) * batch_stride + off) * (int64_t)es, row);
    }
}

static inline void scatter_elements(const uint8_t *x, const ix_src *ix, const uint8_t *upd,
                                    uint8_t *y, size_t es, int64_t count, int red, int t,
                                    int axis, int64_t size, const int64_t *d, const int64_t *s,
                                    int tid)
{
    if (tid != 0)
        return;
    if (x != y)
        memcpy(y, x, (size_t)count * es);
    int64_t n = d[0] * d[1] * d[2] * d[3] * d[4] * d[5], i[6] = { 0 };
    for (int64_t e = 0; e < n; e++) {
        int64_t off = elements_offset(ix, e, i, axis, size, s);
        if (off >= 0)
            combine(y + off * (int64_t)es, upd + e * (int64_t)es, es, red, t);
        next_index(d, i);
    }
}

static inline void scatter_nd(const uint8_t *x, const ix_src *ix, const uint8_t *upd,
                              uint8_t *y, size_t es, int64_t count, int red, int t, int64_t per,
                              int64_t m, int64_t slice, const int64_t *e, const int64_t *s,
                              int tid)
{
    if (tid != 0)
        return;
    if (x != y)
        memcpy(y, x, (size_t)count * es);
    for (int64_t p = 0; p < per; p++) {
        int64_t off = tuple_offset(ix, p, m, e, s);
        for (int64_t j = 0; off >= 0 && j < slice; j++)
            combine(y + (off + j) * (int64_t)es, upd + (p * slice + j) * (int64_t)es, es, red,
                    t);
    }
}

/* Index e of OneHot's indices as the evaluator reads it: floats truncated, a u64 beyond
 * int64 simply out of range. */
static inline int64_t hot_index(int ti, const void *idx, int64_t e)
{
    if (gk_dt_is_float(ti))
        return gk_f2i(GK_DT_I64, gk_ldf(ti, idx, e));
    int64_t v = gk_ldi(ti, idx, e);
    return gk_dt_is_unsigned(ti) && v < 0 ? INT64_MAX : v;
}

static inline void one_hot(int ti, const void *idx, const uint8_t *values, uint8_t *y,
                           size_t es, int64_t outer, int64_t depth, int64_t inner, int tid,
                           int nthreads)
{
    int64_t lo, hi;
    gk_split(outer * depth, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t o = r / depth, j = r % depth;
        uint8_t *yr = y + r * inner * (int64_t)es;
        for (int64_t i = 0; i < inner; i++) {
            int64_t v = hot_index(ti, idx, o * inner + i);
            if (v < 0 && v >= -depth)
                v += depth;
            memcpy(yr + i * (int64_t)es, values + (v == j ? (int64_t)es : 0), es);
        }
    }
}

/* Rows (a, b) of [d0][d1][inner] split over the threads; the time step is a (time_first)
 * or b, the batch the other. */
static inline void reverse_sequence(const uint8_t *x, const ix_src *lens, uint8_t *y,
                                    size_t es, int time_first, int64_t d0, int64_t d1,
                                    int64_t inner, int tid, int nthreads)
{
    int64_t lo, hi, steps = time_first ? d0 : d1;
    size_t row = (size_t)inner * es;
    gk_split(d0 * d1, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t a = r / d1, b = r % d1, t = time_first ? a : b, batch = time_first ? b : a;
        int64_t len = gk_ldi(lens->t, lens->p, batch);
        if (len < 0 || len > steps) {
            fail(lens, len, batch, steps);
            len = 0;
        }
        int64_t from = t < len ? len - 1 - t : t;
        int64_t src = time_first ? from * d1 + b : a * d1 + from;
        memcpy(y + r * (int64_t)row, x + src * (int64_t)row, row);
    }
}

#define D6 const int64_t d[6] = { d0, d1, d2, d3, d4, d5 }, s[6] = { s0, s1, s2, s3, s4, s5 }
#define E6 const int64_t e[6] = { e0, e1, e2, e3, e4, e5 }, s[6] = { s0, s1, s2, s3, s4, s5 }
#define IX const ix_src ix = { ti, idx, err, code }

#define GATHER_KERNELS(dtype, T)                                                              \
    void gk_gather_##dtype##_scalar(const T *x, int ti, const void *idx, T *y, int64_t outer, \
                                    int64_t size, int64_t inner, int64_t q, int64_t *err,     \
                                    int64_t code, int tid, int nthreads)                      \
    {                                                                                         \
        IX;                                                                                   \
        gather((const uint8_t *)x, &ix, (uint8_t *)y, sizeof(T), outer, size, inner, q, tid,  \
               nthreads);                                                                     \
    }                                                                                         \
    void gk_gather_elements_##dtype##_scalar(                                                 \
        const T *x, int ti, const void *idx, T *y, int axis, int64_t size, int64_t d0,        \
        int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t s0, int64_t s1,   \
        int64_t s2, int64_t s3, int64_t s4, int64_t s5, int64_t *err, int64_t code, int tid,  \
        int nthreads)                                                                         \
    {                                                                                         \
        IX;                                                                                   \
        D6;                                                                                   \
        gather_elements((const uint8_t *)x, &ix, (uint8_t *)y, sizeof(T), axis, size, d, s,   \
                        tid, nthreads);                                                       \
    }                                                                                         \
    void gk_gather_nd_##dtype##_scalar(                                                       \
        const T *x, int ti, const void *idx, T *y, int64_t batches, int64_t per, int64_t m,   \
        int64_t slice, int64_t batch_stride, int64_t e0, int64_t e1, int64_t e2, int64_t e3,  \
        int64_t e4, int64_t e5, int64_t s0, int64_t s1, int64_t s2, int64_t s3, int64_t s4,   \
        int64_t s5, int64_t *err, int64_t code, int tid, int nthreads)                        \
    {                                                                                         \
        IX;                                                                                   \
        E6;                                                                                   \
        gather_nd((const uint8_t *)x, &ix, (uint8_t *)y, sizeof(T), batches, per, m, slice,   \
                  batch_stride, e, s, tid, nthreads);                                         \
    }                                                                                         \
    void gk_scatter_elements_##dtype##_scalar(                                                \
        const T *x, int ti, const void *idx, const T *upd, T *y, int64_t count, int red,      \
        int t, int axis, int64_t size, int64_t d0, int64_t d1, int64_t d2, int64_t d3,        \
        int64_t d4, int64_t d5, int64_t s0, int64_t s1, int64_t s2, int64_t s3, int64_t s4,   \
        int64_t s5, int64_t *err, int64_t code, int tid, int nthreads)                        \
    {                                                                                         \
        IX;                                                                                   \
        D6;                                                                                   \
        scatter_elements((const uint8_t *)x, &ix, (const uint8_t *)upd, (uint8_t *)y,         \
                         sizeof(T), count, red, t, axis, size, d, s, tid);                    \
    }                                                                                         \
    void gk_scatter_nd_##dtype##_scalar(                                                      \
        const T *x, int ti, const void *idx, const T *upd, T *y, int64_t count, int red,      \
        int t, int64_t per, int64_t m, int64_t slice, int64_t e0, int64_t e1, int64_t e2,     \
        int64_t e3, int64_t e4, int64_t e5, int64_t s0, int64_t s1, int64_t s2, int64_t s3,   \
        int64_t s4, int64_t s5, int64_t *err, int64_t code, int tid, int nthreads)            \
    {                                                                                         \
        IX;                                                                                   \
        E6;                                                                                   \
        scatter_nd((const uint8_t *)x, &ix, (const uint8_t *)upd, (uint8_t *)y, sizeof(T),    \
                   count, red, t, per, m, slice, e, s, tid);                                  \
    }                                                                                         \
    void gk_one_hot_##dtype##_scalar(int ti, const void *idx, const T *values, T *y,          \
                                     int64_t outer, int64_t depth, int64_t inner, int tid,    \
                                     int nthreads)                                            \
    {                                                                                         \
        one_hot(ti, idx, (const uint8_t *)values, (uint8_t *)y, sizeof(T), outer, depth,      \
                inner, tid, nthreads);                                                        \
    }                                                                                         \
    void gk_reverse_sequence_##dtype##_scalar(const T *x, int tl, const void *lens, T *y,     \
                                              int time_first, int64_t d0, int64_t d1,         \
                                              int64_t inner, int64_t *err, int64_t code,      \
                                              int tid, int nthreads)                          \
    {                                                                                         \
        const ix_src ls = { tl, lens, err, code };                                            \
        reverse_sequence((const uint8_t *)x, &ls, (uint8_t *)y, sizeof(T), time_first, d0,    \
                         d1, inner, tid, nthreads);                                           \
    }
GATHER_KERNELS(u8, uint8_t)
GATHER_KERNELS(b16, uint16_t)
GATHER_KERNELS(b32, uint32_t)
GATHER_KERNELS(b64, uint64_t)
