// move_scalar.c - Reference data movement on 4-byte elements: transpose of up to 6 dims
// (output dims with the input strides permuted onto them). Split over the outermost dim.
#include "kernels.h"

/* d0..d5: output dims (leading ones 1 for lower ranks); s0..s5: the input element stride
 * of each output dim. Elements are copied as 32-bit words, so any 4-byte kind works. */
/* The outer loops stay loops: with every dim a constant, LLVM otherwise unrolls the whole
 * nest of a small transpose or broadcast into thousands of straight-line moves, which its
 * instruction selection then takes tens of seconds over (tests/fuzz/regressions/
 * broadcast_transpose_compile_time); the innermost loop is still unrolled and vectorized. */
#if defined(__clang__)
#define OUTER_LOOP _Pragma("clang loop unroll(disable)")
#else
#define OUTER_LOOP
#endif

void gk_transpose_b32_scalar(const uint32_t *x, uint32_t *y, int64_t d0, int64_t d1, int64_t d2,
                             int64_t d3, int64_t d4, int64_t d5, int64_t s0, int64_t s1,
                             int64_t s2, int64_t s3, int64_t s4, int64_t s5, int tid,
                             int nthreads)
{
    int64_t lo, hi;
    gk_split(d0, 1, tid, nthreads, &lo, &hi);
    int64_t inner = d1 * d2 * d3 * d4 * d5;
    OUTER_LOOP
    for (int64_t i0 = lo; i0 < hi; i0++) {
        uint32_t *yo = y + i0 * inner;
        OUTER_LOOP
        for (int64_t i1 = 0; i1 < d1; i1++)
            OUTER_LOOP
            for (int64_t i2 = 0; i2 < d2; i2++)
                OUTER_LOOP
                for (int64_t i3 = 0; i3 < d3; i3++)
                    OUTER_LOOP
                    for (int64_t i4 = 0; i4 < d4; i4++) {
                        const uint32_t *xr = x + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 +
                                             i4 * s4;
                        for (int64_t i5 = 0; i5 < d5; i5++)
                            *yo++ = xr[i5 * s5];
                    }
    }
}
