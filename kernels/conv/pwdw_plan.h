// pwdw_plan.h - How the fused pointwise-expand + depthwise convolution (pwdw_tmpl.h) walks a
// layer: the ring of expanded rows each thread keeps, and the bands of output rows its work
// units cover. Plain C shared by the kernel and the cpu backend (src/backend/cpu/fuse_pwdw.c),
// which sizes the kernel's scratch operand with the same functions.
//
// A work unit is (image, band of output rows, pair of expanded channel blocks). It computes the
// expanded rows its band reads, a few at a time, into a ring of R rows per block (one thread's
// scratch slot), and runs the depthwise convolution over them as soon as an output row's input
// rows are there. A row is computed once per unit; only the rows shared by two bands (the
// halo, kh - sh rows) are computed twice. Every pixel of the expanded tensor is computed by the
// same instructions whichever unit computes it, so the split changes no result.
#ifndef GK_PWDW_PLAN_H
#define GK_PWDW_PLAN_H

#include <stddef.h>

/* Bytes of one thread's ring (both blocks of a pair). The depthwise reads each expanded row
 * kh times right after it is written, so the ring should sit in L1 (32 KiB on Zen 4, 48 on
 * Zen 5) beside the pair's 1x1 weights (C * 2V floats: 20 KiB at C = 160, V = 16) and the
 * input rows streaming through. On narrow planes it also lets several rows run as one
 * flattened run of pixels, which fills the 1x1 register tile (12 pixels with AVX-512): a 14x14
 * plane is one run of 196 pixels instead of 14 runs of 14. Rows of 112 pixels (14 KiB for a
 * pair at V = 16) exceed it: the ring then holds kh rows (42 KiB, L1/L2). */
#ifndef GK_PWDW_RING_BYTES
#define GK_PWDW_RING_BYTES ((size_t)32 << 10)
#endif

/* Rows of the ring: what the budget holds, at most the ih input rows, at least the kh rows one
 * output row reads (dilation 1). */
static inline size_t gk_pwdw_ring_rows(size_t ih, size_t iw, size_t kh, size_t v)
{
    size_t row = 2 * iw * v * sizeof(float);
    size_t r = GK_PWDW_RING_BYTES / (row ? row : 1);
    if (r > ih)
        r = ih;
    return r < kh ? kh : r;
}

/* Scratch floats of one thread: the ring of both blocks of a pair, [2][R][iw][v]. */
static inline size_t gk_pwdw_slot_floats(size_t ih, size_t iw, size_t kh, size_t v)
{
    return 2 * gk_pwdw_ring_rows(ih, iw, kh, v) * iw * v;
}

/* Bands of output rows per (image, pair): one when the pairs of all images give each of the
 * nthreads threads three units or more (no halo computed twice); otherwise enough bands for
 * that, at most one per output row. The halo rows a band recomputes produce the same values,
 * so the band count may follow the thread count without changing any result. */
static inline size_t gk_pwdw_bands(size_t n, size_t pairs, size_t oh, size_t nthreads)
{
    size_t units = n * pairs, want = 3 * nthreads;
    size_t b = units >= want ? 1 : (want + units - 1) / units;
    return b > oh ? (oh ? oh : 1) : b;
}

#endif
