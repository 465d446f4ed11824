// strided_scalar.c - Reference data movement of any element kind by element size: the 6-D
// strided copy (Slice, Transpose, Broadcast, Tile, DepthToSpace, SpaceToDepth) and the
// insertion of a box into a copy of a tensor (InsertTensor).
//
// Both walk rows: the last dim is one row, the first five dims are split over the threads as
// one run of rows (gk_split), each thread decoding its first row's index once and counting
// on from there. Each element moves as a unit of its size (memcpy of a constant size, one load
// and store once inlined), so the bits of every kind are kept.
#include "kernels.h"

/* The row index r of dims d[0..5) as an index i[0..5). */
static inline void row_index(int64_t r, const int64_t *d, int64_t *i)
{
    for (int k = 4; k >= 0; k--) {
        i[k] = r % d[k];
        r /= d[k];
    }
}

static inline void next_row(const int64_t *d, int64_t *i)
{
    for (int k = 4; k >= 0 && ++i[k] == d[k]; k--)
        i[k] = 0;
}

static inline void strided(const uint8_t *x, uint8_t *y, size_t es, const int64_t *d,
                           const int64_t *s, const int64_t *t, int tid, int nthreads)
{
    int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4], lo, hi, i[5];
    if (d[5] <= 0)
        return;
    gk_split(rows, 1, tid, nthreads, &lo, &hi);
    if (lo >= hi)
        return;
    row_index(lo, d, i);
    for (int64_t r = lo; r < hi; r++) {
        int64_t xo = 0, yo = 0;
        for (int k = 0; k < 5; k++) {
            xo += i[k] * s[k];
            yo += i[k] * t[k];
        }
        const uint8_t *xr = x + xo * (int64_t)es;
        uint8_t *yr = y + yo * (int64_t)es;
        if (s[5] == 1 && t[5] == 1)
            memcpy(yr, xr, (size_t)d[5] * es);
        else
            for (int64_t j = 0; j < d[5]; j++)
                memcpy(yr + j * t[5] * (int64_t)es, xr + j * s[5] * (int64_t)es, es);
        next_row(d, i);
    }
}

static inline void insert(const uint8_t *big, const uint8_t *small, uint8_t *y, size_t es,
                          const int64_t *d, const int64_t *b, const int64_t *n, int tid,
                          int nthreads)
{
    int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4], lo, hi, i[5];
    size_t row = (size_t)d[5] * es;
    gk_split(rows, 1, tid, nthreads, &lo, &hi);
    if (lo >= hi || d[5] <= 0)
        return;
    row_index(lo, d, i);
    for (int64_t r = lo; r < hi; r++) {
        /* Row r of y is big's row r, then small's row over [b5, b5 + n5) when r is in the
         * box; the same thread writes both, in this order. */
        if (big != y)
            memcpy(y + r * (int64_t)row, big + r * (int64_t)row, row);
        bool in = n[5] > 0;
        int64_t so = 0;
        for (int k = 0; k < 5; k++) {
            in = in && i[k] >= b[k] && i[k] < b[k] + n[k];
            so = so * n[k] + (i[k] - b[k]);
        }
        if (in)
            memcpy(y + r * (int64_t)row + b[5] * (int64_t)es,
                   small + so * n[5] * (int64_t)es, (size_t)n[5] * es);
        next_row(d, i);
    }
}

#define STRIDED_KERNEL(dtype, T)                                                              \
    void gk_strided_##dtype##_scalar(const T *x, T *y, int64_t d0, int64_t d1, int64_t d2,    \
                                     int64_t d3, int64_t d4, int64_t d5, int64_t s0,          \
                                     int64_t s1, int64_t s2, int64_t s3, int64_t s4,          \
                                     int64_t s5, int64_t t0, int64_t t1, int64_t t2,          \
                                     int64_t t3, int64_t t4, int64_t t5, int tid,             \
                                     int nthreads)                                            \
    {                                                                                         \
        const int64_t d[6] = { d0, d1, d2, d3, d4, d5 }, s[6] = { s0, s1, s2, s3, s4, s5 };   \
        const int64_t t[6] = { t0, t1, t2, t3, t4, t5 };                                      \
        strided((const uint8_t *)x, (uint8_t *)y, sizeof(T), d, s, t, tid, nthreads);         \
    }
STRIDED_KERNEL(u8, uint8_t)
STRIDED_KERNEL(b16, uint16_t)
STRIDED_KERNEL(b32, uint32_t)
STRIDED_KERNEL(b64, uint64_t)

#define INSERT_KERNEL(dtype, T)                                                               \
    void gk_insert_##dtype##_scalar(const T *big, const T *small, T *y, int64_t d0,           \
                                    int64_t d1, int64_t d2, int64_t d3, int64_t d4,           \
                                    int64_t d5, int64_t b0, int64_t b1, int64_t b2,           \
                                    int64_t b3, int64_t b4, int64_t b5, int64_t n0,           \
                                    int64_t n1, int64_t n2, int64_t n3, int64_t n4,           \
                                    int64_t n5, int tid, int nthreads)                        \
    {                                                                                         \
        const int64_t d[6] = { d0, d1, d2, d3, d4, d5 }, b[6] = { b0, b1, b2, b3, b4, b5 };   \
        const int64_t n[6] = { n0, n1, n2, n3, n4, n5 };                                      \
        insert((const uint8_t *)big, (const uint8_t *)small, (uint8_t *)y, sizeof(T), d, b,  \
               n, tid, nthreads);                                                             \
    }
INSERT_KERNEL(u8, uint8_t)
INSERT_KERNEL(b16, uint16_t)
INSERT_KERNEL(b32, uint32_t)
INSERT_KERNEL(b64, uint64_t)
