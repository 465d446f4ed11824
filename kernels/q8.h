// q8.h - What the quantized 8-bit kernels (kernels/q*, dtype q8 in kernels.def) share whatever
// their ISA: reading a byte as u8 or i8, the in-bounds taps of a pooling or convolution window,
// and the split of NHWC work into (output row, channel chunk) units.
#ifndef GK_Q8_H
#define GK_Q8_H

#include "gk.h"
#include "qmath.h"
#include "units.h"

/* Channels per work unit of the NHWC kernels: a whole number of vectors of every ISA (64 bytes
 * = one AVX-512 byte vector, four of its int32 vectors), so only the last chunk of a pixel has
 * a tail. Splitting channels as well as rows keeps every thread busy on a global pooling, whose
 * output has a single row. */
#define GK_Q_CHUNK 64

/* The byte at p as u8, or as i8 when is_signed. */
static inline int32_t gk_q_load(const uint8_t *p, int is_signed)
{
    return is_signed ? (int32_t)(int8_t)*p : (int32_t)*p;
}

/* First and one-past-last tap t in [0, k) of output o whose input position o*s - p + t*d lies
 * in [0, size); t0 == t1 when none does. */
static inline void gk_q_taps(int64_t o, int64_t s, int64_t p, int64_t d, int64_t k, int64_t size,
                             int64_t *t0, int64_t *t1)
{
    int64_t base = o * s - p;
    int64_t a = base < 0 ? (-base + d - 1) / d : 0;
    int64_t b = size > base ? (size - base + d - 1) / d : 0;
    if (b > k)
        b = k;
    if (a > b)
        a = b;
    *t0 = a;
    *t1 = b;
}

/* Thread tid's units of an NHWC kernel: [*u0, *u1) of n * oh * chunks, unit u being output row
 * u / chunks (image and row) and channel chunk u % chunks. */
static inline int64_t gk_q_units(int64_t n, int64_t oh, int64_t c, int tid, int nthreads,
                                 int64_t *u0, int64_t *u1)
{
    int64_t chunks = (c + GK_Q_CHUNK - 1) / GK_Q_CHUNK;
    gk_split(n * oh * chunks, 1, tid, nthreads, u0, u1);
    return chunks;
}

/* The same units as the threads take them with a counter (units.h; work NULL: a static share):
 * *it yields unit numbers. A depthwise layer's units are output rows, whose cost differs
 * little, but a thread whose core is busy elsewhere then takes fewer instead of holding the
 * others at the next barrier. */
static inline int64_t gk_q_units_of(int64_t n, int64_t oh, int64_t c, unsigned *work, int tid,
                                    int nthreads, gk_units *it)
{
    int64_t chunks = (c + GK_Q_CHUNK - 1) / GK_Q_CHUNK;
    *it = gk_units_of((size_t)(n * oh * chunks), work, tid, nthreads);
    return chunks;
}

#endif
