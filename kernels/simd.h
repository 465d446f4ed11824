// simd.h - The vector vocabulary of the blocked-layout kernel templates (AVX-512 or AVX2).
//
// A kernel family is written once as a template header (conv_tmpl.h, gemm_tmpl.h, ...) against
// these macros; its <family>_avx512.c / <family>_avx2.c file defines GK_VLEN (16 or 8), includes
// this header and then the template. The block size of the channel-blocked layout equals the
// vector length, so NCHWc16 goes with AVX-512 and NCHWc8 with AVX2. GK_FN(op) names a kernel
// gk_<op>_f32_<isa> (STYLE.md section 8).
#ifndef GK_SIMD_H
#define GK_SIMD_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(GK_VLEN)
#error "define GK_VLEN (16 for AVX-512, 8 for AVX2) before including simd.h"
#endif

#define GK_CAT3(a, b, c) a##b##c
#define GK_XCAT3(a, b, c) GK_CAT3(a, b, c)

#if GK_VLEN == 16
#define GK_SUFFIX _f32_avx512
typedef __m512 gk_vec;
#define VZERO() _mm512_setzero_ps()
#define VSET1(x) _mm512_set1_ps(x)
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps((p), (v))
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VMIN(a, b) _mm512_min_ps((a), (b))
/* Lanes where a < 0 take b, the others keep a (leaky relu without a branch). */
#define VSEL_NEG(a, b) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), VZERO(), _CMP_LT_OQ), (a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#elif GK_VLEN == 8
#define GK_SUFFIX _f32_avx2
typedef __m256 gk_vec;
#define VZERO() _mm256_setzero_ps()
#define VSET1(x) _mm256_set1_ps(x)
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps((p), (v))
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VMIN(a, b) _mm256_min_ps((a), (b))
#define VSEL_NEG(a, b) _mm256_blendv_ps((a), (b), _mm256_cmp_ps((a), VZERO(), _CMP_LT_OQ))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#else
#error "GK_VLEN must be 16 or 8"
#endif

#define GK_FN(op) GK_XCAT3(gk_, op, GK_SUFFIX)
#define GK_INLINE static inline __attribute__((always_inline))
/* X(0) ... X(11): the register tiles are written with one named variable per row or pixel,
 * guarded by `i < COUNT`, so they stay in registers whatever the compiler unrolls. */
#define GK_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

/* Thread tid's share [lo, hi) of `total` work units: contiguous, disjoint, depending only on
 * (total, nthreads); each unit is computed the same way whoever computes it. */
GK_INLINE void gk_share(size_t total, int tid, int nthreads, size_t *lo, size_t *hi)
{
    *lo = total * (size_t)tid / (size_t)nthreads;
    *hi = total * (size_t)(tid + 1) / (size_t)nthreads;
}

/* The work units [0, total) of one kernel call, as a thread sees them. Without a counter
 * (work == NULL) they are thread tid's static share; with one, threads take runs of units from
 * the shared counter *work (zero before the call; the backend clears its counters at the start
 * of every run), so a thread that falls behind (its core busy with something else) takes
 * fewer. A run is a 1 / (2 * nthreads) share of the units left ("guided" scheduling): long
 * runs while much is left, few atomics for small units (a depthwise row), and single units at
 * the end, so the threads reach the barrier close together even when units are large (a
 * deep convolution has a few dozen). A unit computes the same outputs whichever thread runs
 * it: results are identical either way and for every thread count. */
typedef struct gk_units {
    size_t next, hi, total, share;
    unsigned *work;
} gk_units;

GK_INLINE gk_units gk_units_of(size_t total, unsigned *work, int tid, int nthreads)
{
    gk_units it = { 0, 0, total, 2 * (size_t)nthreads, total < (1u << 31) ? work : NULL };
    if (!it.work)
        gk_share(total, tid, nthreads, &it.next, &it.hi);
    return it;
}

GK_INLINE int gk_units_next(gk_units *it, size_t *u)
{
    if (it->next >= it->hi) {
        if (!it->work)
            return 0;
        unsigned base = __atomic_load_n(it->work, __ATOMIC_RELAXED), run;
        do {
            if (base >= it->total)
                return 0;
            run = (unsigned)((it->total - base) / it->share);
            run = run ? run : 1;
        } while (!__atomic_compare_exchange_n(it->work, &base, base + run, 1, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));
        it->next = base;
        it->hi = (size_t)base + run;
    }
    *u = it->next++;
    return 1;
}

#endif
