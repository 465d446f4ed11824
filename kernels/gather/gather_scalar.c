// gather_scalar.c - Reference index-driven data movement of any element kind, by element
// size: Gather, GatherElements, GatherND, and ScatterElements / ScatterND without reduction.
//
// Indices are i32 (i32 non-NULL) or i64, negative ones counting from the end as ONNX says.
// The backend selects these kernels only for constant indices it has checked against the
// data's shape (the evaluator fails a run on a bad index, which a kernel cannot); an index
// still out of range reads zero bits and writes nothing, never outside a buffer. The
// gathers split their rows over the threads; the scatters run on thread 0 alone, so updates
// land in index order (with duplicate indices the last one wins, as in the evaluator).
#include "kernels.h"

/* Index e of the index tensor wrapped into [0, size), or -1 when out of range. */
static inline int64_t index_at(const int32_t *i32, const int64_t *i64, int64_t e, int64_t size)
{
    int64_t v = i32 ? i32[e] : i64[e];
    if (v < 0)
        v += size;
    return v >= 0 && v < size ? v : -1;
}

static inline void copy_or_zero(uint8_t *dst, const uint8_t *src, size_t bytes)
{
    if (src)
        memcpy(dst, src, bytes);
    else
        memset(dst, 0, bytes);
}

static inline void gather(const uint8_t *x, const int32_t *i32, const int64_t *i64, uint8_t *y,
                          size_t es, int64_t outer, int64_t size, int64_t inner, int64_t q,
                          int tid, int nthreads)
{
    int64_t lo, hi;
    size_t row = (size_t)inner * es;
    gk_split(outer * q, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t o = r / q, v = index_at(i32, i64, r % q, size);
        copy_or_zero(y + r * (int64_t)row, v < 0 ? NULL : x + (o * size + v) * (int64_t)row,
                     row);
    }
}

/* Offset in the data of index element e at position i[0..6) of the index tensor, the
 * coordinate along `axis` replaced by the index; -1 when out of range. */
static inline int64_t elements_offset(const int32_t *i32, const int64_t *i64, int64_t e,
                                      const int64_t *i, int axis, int64_t size,
                                      const int64_t *s)
{
    int64_t v = index_at(i32, i64, e, size), off = 0;
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

static inline void gather_elements(const uint8_t *x, const int32_t *i32, const int64_t *i64,
                                   uint8_t *y, size_t es, int axis, int64_t size,
                                   const int64_t *d, const int64_t *s, int tid, int nthreads)
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
        int64_t off = elements_offset(i32, i64, e, i, axis, size, s);
        copy_or_zero(y + e * (int64_t)es, off < 0 ? NULL : x + off * (int64_t)es, es);
        next_index(d, i);
    }
}

/* Offset of index tuple p (m entries) over dims e[0..m) with strides s, or -1. */
static inline int64_t tuple_offset(const int32_t *i32, const int64_t *i64, int64_t p,
                                   int64_t m, const int64_t *e, const int64_t *s)
{
    int64_t off = 0;
    for (int64_t j = 0; j < m; j++) {
        int64_t v = index_at(i32, i64, p * m + j, e[j]);
        if (v < 0)
            return -1;
        off += v * s[j];
    }
    return off;
}

static inline void gather_nd(const uint8_t *x, const int32_t *i32, const int64_t *i64,
                             uint8_t *y, size_t es, int64_t batches, int64_t per, int64_t m,
                             int64_t slice, int64_t batch_stride, const int64_t *e,
                             const int64_t *s, int tid, int nthreads)
{
    int64_t lo, hi;
    size_t row = (size_t)slice * es;
    gk_split(batches * per, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t off = tuple_offset(i32, i64, p, m, e, s);
        copy_or_zero(y + p * (int64_t)row,
                     off < 0 ? NULL : x + ((p / per) * batch_stride + off) * (int64_t)es, row);
    }
}

static inline void scatter_elements(const uint8_t *x, const int32_t *i32, const int64_t *i64,
                                    const uint8_t *upd, uint8_t *y, size_t es, int64_t count,
                                    int axis, int64_t size, const int64_t *d,
                                    const int64_t *s, int tid)
{
    if (tid != 0)
        return;
    if (x != y)
        memcpy(y, x, (size_t)count * es);
    int64_t n = d[0] * d[1] * d[2] * d[3] * d[4] * d[5], i[6] = { 0 };
    for (int64_t e = 0; e < n; e++) {
        int64_t off = elements_offset(i32, i64, e, i, axis, size, s);
        if (off >= 0)
            memcpy(y + off * (int64_t)es, upd + e * (int64_t)es, es);
        next_index(d, i);
    }
}

static inline void scatter_nd(const uint8_t *x, const int32_t *i32, const int64_t *i64,
                              const uint8_t *upd, uint8_t *y, size_t es, int64_t count,
                              int64_t per, int64_t m, int64_t slice, const int64_t *e,
                              const int64_t *s, int tid)
{
    if (tid != 0)
        return;
    if (x != y)
        memcpy(y, x, (size_t)count * es);
    size_t row = (size_t)slice * es;
    for (int64_t p = 0; p < per; p++) {
        int64_t off = tuple_offset(i32, i64, p, m, e, s);
        if (off >= 0)
            memcpy(y + off * (int64_t)es, upd + p * (int64_t)row, row);
    }
}

#define GATHER_KERNELS(dtype, T)                                                              \
    void gk_gather_##dtype##_scalar(const T *x, const int32_t *i32, const int64_t *i64, T *y, \
                                    int64_t outer, int64_t size, int64_t inner, int64_t q,    \
                                    int tid, int nthreads)                                    \
    {                                                                                         \
        gather((const uint8_t *)x, i32, i64, (uint8_t *)y, sizeof(T), outer, size, inner, q,  \
               tid, nthreads);                                                                \
    }                                                                                         \
    void gk_gather_elements_##dtype##_scalar(                                                 \
        const T *x, const int32_t *i32, const int64_t *i64, T *y, int axis, int64_t size,     \
        int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t s0,   \
        int64_t s1, int64_t s2, int64_t s3, int64_t s4, int64_t s5, int tid, int nthreads)    \
    {                                                                                         \
        const int64_t d[6] = { d0, d1, d2, d3, d4, d5 }, s[6] = { s0, s1, s2, s3, s4, s5 };   \
        gather_elements((const uint8_t *)x, i32, i64, (uint8_t *)y, sizeof(T), axis, size, d, \
                        s, tid, nthreads);                                                    \
    }                                                                                         \
    void gk_gather_nd_##dtype##_scalar(                                                       \
        const T *x, const int32_t *i32, const int64_t *i64, T *y, int64_t batches,            \
        int64_t per, int64_t m, int64_t slice, int64_t batch_stride, int64_t e0, int64_t e1,  \
        int64_t e2, int64_t e3, int64_t e4, int64_t e5, int64_t s0, int64_t s1, int64_t s2,   \
        int64_t s3, int64_t s4, int64_t s5, int tid, int nthreads)                            \
    {                                                                                         \
        const int64_t e[6] = { e0, e1, e2, e3, e4, e5 }, s[6] = { s0, s1, s2, s3, s4, s5 };   \
        gather_nd((const uint8_t *)x, i32, i64, (uint8_t *)y, sizeof(T), batches, per, m,     \
                  slice, batch_stride, e, s, tid, nthreads);                                  \
    }                                                                                         \
    void gk_scatter_elements_##dtype##_scalar(                                                \
        const T *x, const int32_t *i32, const int64_t *i64, const T *upd, T *y,               \
        int64_t count, int axis, int64_t size, int64_t d0, int64_t d1, int64_t d2,            \
        int64_t d3, int64_t d4, int64_t d5, int64_t s0, int64_t s1, int64_t s2, int64_t s3,   \
        int64_t s4, int64_t s5, int tid, int nthreads)                                        \
    {                                                                                         \
        const int64_t d[6] = { d0, d1, d2, d3, d4, d5 }, s[6] = { s0, s1, s2, s3, s4, s5 };   \
        scatter_elements((const uint8_t *)x, i32, i64, (const uint8_t *)upd, (uint8_t *)y,    \
                         sizeof(T), count, axis, size, d, s, tid);                            \
    }                                                                                         \
    void gk_scatter_nd_##dtype##_scalar(                                                      \
        const T *x, const int32_t *i32, const int64_t *i64, const T *upd, T *y,               \
        int64_t count, int64_t per, int64_t m, int64_t slice, int64_t e0, int64_t e1,         \
        int64_t e2, int64_t e3, int64_t e4, int64_t e5, int64_t s0, int64_t s1, int64_t s2,   \
        int64_t s3, int64_t s4, int64_t s5, int tid, int nthreads)                            \
    {                                                                                         \
        const int64_t e[6] = { e0, e1, e2, e3, e4, e5 }, s[6] = { s0, s1, s2, s3, s4, s5 };   \
        scatter_nd((const uint8_t *)x, i32, i64, (const uint8_t *)upd, (uint8_t *)y,          \
                   sizeof(T), count, per, m, slice, e, s, tid);                               \
    }
GATHER_KERNELS(u8, uint8_t)
GATHER_KERNELS(b16, uint16_t)
GATHER_KERNELS(b32, uint32_t)
GATHER_KERNELS(b64, uint64_t)
