// simd.h - The vector vocabulary of the blocked-layout kernel templates (AVX-512, AVX2 or
// NEON).
//
// A kernel family is written once as a template header (conv_tmpl.h, gemm_tmpl.h, ...) against
// these macros; its <family>_avx512.c / <family>_avx2.c / <family>_neon.c file defines GK_VLEN
// (16, 8 or 4), includes this header and then the template. The block size of the
// channel-blocked layout equals the vector length, so NCHWc16 goes with AVX-512, NCHWc8 with
// AVX2 and NCHWc4 with NEON (aarch64 bundles: kernels/cross.cmake builds the _neon files for
// aarch64 only). GK_FN(op) names a kernel gk_<op>_f32_<isa> (STYLE.md section 8). GK_NREGS is
// the ISA's count of vector registers, which sizes the templates' register tiles.
#ifndef GK_SIMD_H
#define GK_SIMD_H

#if !defined(GK_VLEN)
#error "define GK_VLEN (16 for AVX-512, 8 for AVX2, 4 for NEON) before including simd.h"
#endif

#if GK_VLEN == 4
#include <arm_neon.h>
#else
#include <immintrin.h>
#endif
#include <stddef.h>
#include <stdint.h>

#define GK_CAT3(a, b, c) a##b##c
#define GK_XCAT3(a, b, c) GK_CAT3(a, b, c)

#if GK_VLEN == 16
#define GK_SUFFIX _f32_avx512
#define GK_NREGS 32
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
#define GK_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#elif GK_VLEN == 8
#define GK_SUFFIX _f32_avx2
#define GK_NREGS 16
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
#define GK_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#elif GK_VLEN == 4
/* NEON (ARMv8-A's baseline: every aarch64 CPU has it), 32 registers of 4 floats. */
#define GK_SUFFIX _f32_neon
#define GK_NREGS 32
typedef float32x4_t gk_vec;
#define VZERO() vdupq_n_f32(0.0f)
#define VSET1(x) vdupq_n_f32(x)
#define VLOAD(p) vld1q_f32(p)
#define VSTORE(p, v) vst1q_f32((p), (v))
#define VBCAST(p) vld1q_dup_f32(p)
/* a * b + c, rounded once as _mm*_fmadd_ps (vfmaq_f32 takes the addend first). */
#define VFMA(a, b, c) vfmaq_f32((c), (a), (b))
#define VADD(a, b) vaddq_f32((a), (b))
#define VSUB(a, b) vsubq_f32((a), (b))
#define VNEG(a) vnegq_f32(a)
#define VMUL(a, b) vmulq_f32((a), (b))
/* max and min as the x86 instructions define them, a > b ? a : b and a < b ? a : b: the
 * second operand when either is NaN, which the templates rely on (relu keeps a NaN input,
 * see act_vec) and which keeps the aarch64 results the x86 ones. NEON's fmax/fmin would
 * return NaN for a NaN in either operand instead. */
#define VMAX(a, b) gk_neon_max((a), (b))
#define VMIN(a, b) gk_neon_min((a), (b))
#define VSEL_NEG(a, b) vbslq_f32(vcltzq_f32(a), (b), (a))
#define GK_PREFETCH(p) __builtin_prefetch((p), 0, 3)
static inline __attribute__((always_inline)) gk_vec gk_neon_max(gk_vec a, gk_vec b)
{
    return vbslq_f32(vcgtq_f32(a, b), a, b);
}
static inline __attribute__((always_inline)) gk_vec gk_neon_min(gk_vec a, gk_vec b)
{
    return vbslq_f32(vcltq_f32(a, b), a, b);
}
#else
#error "GK_VLEN must be 16, 8 or 4"
#endif

#define GK_FN(op) GK_XCAT3(gk_, op, GK_SUFFIX)
#define GK_INLINE static inline __attribute__((always_inline))
/* X(0) ... X(11): the register tiles are written with one named variable per row or pixel,
 * guarded by `i < COUNT`, so they stay in registers whatever the compiler unrolls. */
#define GK_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

#include "units.h"

#endif
