// pad_scalar.c - Reference Pad (reflect, edge and wrap modes) and Trilu of any element kind,
// by element size. Both write every element of the result, split over the threads by rows
// (the last dim) as one run of rows per thread.
#include "index_math.h"
#include "kernels.h"

static inline void pad(const uint8_t *x, uint8_t *y, size_t es, int mode, const int64_t *d,
                       const int64_t *n, const int64_t *p, int tid, int nthreads)
{
    int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4], lo, hi, i[5], xs[6];
    xs[5] = 1;
    for (int k = 4; k >= 0; k--)
        xs[k] = xs[k + 1] * n[k + 1];
    gk_split(rows, 1, tid, nthreads, &lo, &hi);
    if (lo >= hi || d[5] <= 0)
        return;
    int64_t r = lo;
    for (int k = 4; k >= 0; k--) {
        i[k] = r % d[k];
        r /= d[k];
    }
    for (r = lo; r < hi; r++) {
        int64_t xo = 0;
        for (int k = 0; k < 5; k++)
            xo += gk_pad_index(mode, i[k] - p[k], n[k]) * xs[k];
        uint8_t *yr = y + r * d[5] * (int64_t)es;
        for (int64_t j = 0; j < d[5]; j++)
            memcpy(yr + j * (int64_t)es, x + (xo + gk_pad_index(mode, j - p[5], n[5])) *
                                                 (int64_t)es, es);
        for (int k = 4; k >= 0 && ++i[k] == d[k]; k--)
            i[k] = 0;
    }
}

static inline void trilu(const uint8_t *x, uint8_t *y, size_t es, int64_t mats, int64_t rows,
                         int64_t cols, int upper, int64_t k, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(mats * rows, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t i = r % rows;
        const uint8_t *xr = x + r * cols * (int64_t)es;
        uint8_t *yr = y + r * cols * (int64_t)es;
        for (int64_t j = 0; j < cols; j++) {
            bool keep = upper ? j - i >= k : j - i <= k;
            if (keep)
                memcpy(yr + j * (int64_t)es, xr + j * (int64_t)es, es);
            else
                memset(yr + j * (int64_t)es, 0, es);
        }
    }
}

#define PAD_KERNEL(dtype, T)                                                                  \
    void gk_pad_##dtype##_scalar(const T *x, T *y, int mode, int64_t d0, int64_t d1,          \
                                 int64_t d2, int64_t d3, int64_t d4, int64_t d5, int64_t n0,  \
                                 int64_t n1, int64_t n2, int64_t n3, int64_t n4, int64_t n5,  \
                                 int64_t p0, int64_t p1, int64_t p2, int64_t p3, int64_t p4,  \
                                 int64_t p5, int tid, int nthreads)                           \
    {                                                                                         \
        const int64_t d[6] = { d0, d1, d2, d3, d4, d5 }, n[6] = { n0, n1, n2, n3, n4, n5 };   \
        const int64_t p[6] = { p0, p1, p2, p3, p4, p5 };                                      \
        pad((const uint8_t *)x, (uint8_t *)y, sizeof(T), mode, d, n, p, tid, nthreads);       \
    }
PAD_KERNEL(u8, uint8_t)
PAD_KERNEL(b16, uint16_t)
PAD_KERNEL(b32, uint32_t)
PAD_KERNEL(b64, uint64_t)

#define TRILU_KERNEL(dtype, T)                                                                \
    void gk_trilu_##dtype##_scalar(const T *x, T *y, int64_t mats, int64_t rows,              \
                                   int64_t cols, int upper, int64_t k, int tid, int nthreads) \
    {                                                                                         \
        trilu((const uint8_t *)x, (uint8_t *)y, sizeof(T), mats, rows, cols, upper, k, tid,   \
              nthreads);                                                                      \
    }
TRILU_KERNEL(u8, uint8_t)
TRILU_KERNEL(b16, uint16_t)
TRILU_KERNEL(b32, uint32_t)
TRILU_KERNEL(b64, uint64_t)
