// qsimd.h - The vector vocabulary of the quantized 8-bit kernel templates (qeltwise_tmpl.h,
// qpool_tmpl.h, qdwconv_tmpl.h), for AVX-512 (GK_VLEN 16) or AVX2 (GK_VLEN 8).
//
// Arithmetic runs on QL = GK_VLEN int32 or f32 lanes, one per byte element; the max pool works
// on QB bytes directly. Loads and stores take a count n: a whole vector when n >= QL (QB), only
// the first n elements otherwise (AVX-512: masked, never touching the bytes past them; AVX2:
// through a small local buffer). Every lane computes exactly what qmath.h computes for one
// element: cvtepi32_ps, mul_ps (and add_ps), clamp to +-GK_Q_LIMIT, cvtps_epi32 in the default
// rounding mode (nearest, ties to even), + zero point, clamp to [lo, hi].
#ifndef GK_QSIMD_H
#define GK_QSIMD_H

#include "simd.h"
#include "q8.h"

#define QL GK_VLEN

#if GK_VLEN == 16
#define QFN(op) GK_XCAT3(gk_, op, _q8_avx512)
#define QB 64
typedef __m512i qvi;
typedef __m512 qvf;
typedef __m512i qvb;
#define QI_SET1(v) _mm512_set1_epi32(v)
#define QI_ADD(a, b) _mm512_add_epi32((a), (b))
#define QI_SUB(a, b) _mm512_sub_epi32((a), (b))
#define QI_MUL(a, b) _mm512_mullo_epi32((a), (b))
#define QI_MAX(a, b) _mm512_max_epi32((a), (b))
#define QI_MIN(a, b) _mm512_min_epi32((a), (b))
#define QI_XOR(a, b) _mm512_xor_si512((a), (b))
/* a * b of lanes whose high 16 bits are zero in a (b's low 16 bits an int16). */
#define QI_MUL16(a, b) _mm512_madd_epi16((a), (b))
#define QF_SET1(v) _mm512_set1_ps(v)
#define QF_CVT(a) _mm512_cvtepi32_ps(a)
#define QF_ADD(a, b) _mm512_add_ps((a), (b))
#define QF_MUL(a, b) _mm512_mul_ps((a), (b))
#define QF_DIV(a, b) _mm512_div_ps((a), (b))
#define QF_MAX(a, b) _mm512_max_ps((a), (b))
#define QF_MIN(a, b) _mm512_min_ps((a), (b))
#define QF_RNE(a) _mm512_cvtps_epi32(a)
#define QF_NAN_TO_ZERO(a) _mm512_maskz_mov_ps(_mm512_cmp_ps_mask((a), (a), _CMP_ORD_Q), (a))

GK_INLINE __mmask16 q_mask16(int64_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/* n bytes at p (u8, or i8 when sgn) widened to int32 lanes. */
GK_INLINE qvi q_load8(const uint8_t *p, int64_t n, int sgn)
{
    __m128i b = n >= 16 ? _mm_loadu_si128((const __m128i *)p)
                        : _mm_maskz_loadu_epi8(q_mask16(n), p);
    return sgn ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

/* The low byte of the first n int32 lanes to p. */
GK_INLINE void q_store8(uint8_t *p, qvi v, int64_t n)
{
    __m128i b = _mm512_cvtepi32_epi8(v);
    if (n >= 16)
        _mm_storeu_si128((__m128i *)p, b);
    else
        _mm_mask_storeu_epi8(p, q_mask16(n), b);
}

/* A full vector of int32 at p; QL int16 at p widened (sign-extended) to int32 lanes. */
#define QI_LOAD32(p) _mm512_loadu_si512((const void *)(p))
#define QI_LOAD16(p) _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(p)))

GK_INLINE qvf q_loadf(const float *p, int64_t n)
{
    return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(q_mask16(n), p);
}

GK_INLINE void q_storef(float *p, qvf v, int64_t n)
{
    if (n >= 16)
        _mm512_storeu_ps(p, v);
    else
        _mm512_mask_storeu_ps(p, q_mask16(n), v);
}

GK_INLINE __mmask64 q_mask64(int64_t n)
{
    return n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
}

GK_INLINE qvb q_loadb(const uint8_t *p, int64_t n)
{
    return n >= 64 ? _mm512_loadu_si512((const void *)p) : _mm512_maskz_loadu_epi8(q_mask64(n), p);
}

GK_INLINE void q_storeb(uint8_t *p, qvb v, int64_t n)
{
    if (n >= 64)
        _mm512_storeu_si512((void *)p, v);
    else
        _mm512_mask_storeu_epi8(p, q_mask64(n), v);
}

#define QB_SET1(v) _mm512_set1_epi8((char)(v))
#define QB_MAX_U(a, b) _mm512_max_epu8((a), (b))
#define QB_MAX_S(a, b) _mm512_max_epi8((a), (b))

#elif GK_VLEN == 8
#define QFN(op) GK_XCAT3(gk_, op, _q8_avx2)
#define QB 32
typedef __m256i qvi;
typedef __m256 qvf;
typedef __m256i qvb;
#define QI_SET1(v) _mm256_set1_epi32(v)
#define QI_ADD(a, b) _mm256_add_epi32((a), (b))
#define QI_SUB(a, b) _mm256_sub_epi32((a), (b))
#define QI_MUL(a, b) _mm256_mullo_epi32((a), (b))
#define QI_MAX(a, b) _mm256_max_epi32((a), (b))
#define QI_MIN(a, b) _mm256_min_epi32((a), (b))
#define QI_XOR(a, b) _mm256_xor_si256((a), (b))
#define QI_MUL16(a, b) _mm256_madd_epi16((a), (b))
#define QF_SET1(v) _mm256_set1_ps(v)
#define QF_CVT(a) _mm256_cvtepi32_ps(a)
#define QF_ADD(a, b) _mm256_add_ps((a), (b))
#define QF_MUL(a, b) _mm256_mul_ps((a), (b))
#define QF_DIV(a, b) _mm256_div_ps((a), (b))
#define QF_MAX(a, b) _mm256_max_ps((a), (b))
#define QF_MIN(a, b) _mm256_min_ps((a), (b))
#define QF_RNE(a) _mm256_cvtps_epi32(a)
#define QF_NAN_TO_ZERO(a) _mm256_and_ps(_mm256_cmp_ps((a), (a), _CMP_ORD_Q), (a))

GK_INLINE qvi q_load8(const uint8_t *p, int64_t n, int sgn)
{
    __m128i b;
    if (n >= 8) {
        b = _mm_loadl_epi64((const __m128i *)p);
    } else {
        uint8_t t[8] = { 0 };
        memcpy(t, p, (size_t)n);
        b = _mm_loadl_epi64((const __m128i *)t);
    }
    return sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
}

GK_INLINE void q_store8(uint8_t *p, qvi v, int64_t n)
{
    /* Byte 0 of each int32 into bytes 0-3 of each 128-bit half, then the halves side by side. */
    const __m128i pick = _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i lo = _mm_shuffle_epi8(_mm256_castsi256_si128(v), pick);
    __m128i hi = _mm_shuffle_epi8(_mm256_extracti128_si256(v, 1), pick);
    __m128i b = _mm_unpacklo_epi32(lo, hi);
    if (n >= 8) {
        _mm_storel_epi64((__m128i *)p, b);
    } else {
        uint8_t t[8];
        _mm_storel_epi64((__m128i *)t, b);
        memcpy(p, t, (size_t)n);
    }
}

#define QI_LOAD32(p) _mm256_loadu_si256((const __m256i *)(p))
#define QI_LOAD16(p) _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(p)))

GK_INLINE __m256i q_maskf(int64_t n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

GK_INLINE qvf q_loadf(const float *p, int64_t n)
{
    return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, q_maskf(n));
}

GK_INLINE void q_storef(float *p, qvf v, int64_t n)
{
    if (n >= 8)
        _mm256_storeu_ps(p, v);
    else
        _mm256_maskstore_ps(p, q_maskf(n), v);
}

GK_INLINE qvb q_loadb(const uint8_t *p, int64_t n)
{
    if (n >= 32)
        return _mm256_loadu_si256((const __m256i *)p);
    uint8_t t[32] = { 0 };
    memcpy(t, p, (size_t)n);
    return _mm256_loadu_si256((const __m256i *)t);
}

GK_INLINE void q_storeb(uint8_t *p, qvb v, int64_t n)
{
    if (n >= 32) {
        _mm256_storeu_si256((__m256i *)p, v);
    } else {
        uint8_t t[32];
        _mm256_storeu_si256((__m256i *)t, v);
        memcpy(p, t, (size_t)n);
    }
}

#define QB_SET1(v) _mm256_set1_epi8((char)(v))
#define QB_MAX_U(a, b) _mm256_max_epu8((a), (b))
#define QB_MAX_S(a, b) _mm256_max_epi8((a), (b))
#endif

/* Round to nearest even and saturate, as gk_requant after its multiply: v clamped to
 * +-GK_Q_LIMIT (never NaN here: multipliers are finite), + zero, clamped to [lo, hi]. */
GK_INLINE qvi q_round_sat(qvf v, qvi zero, qvi lo, qvi hi)
{
    v = QF_MIN(QF_MAX(v, QF_SET1(-GK_Q_LIMIT)), QF_SET1(GK_Q_LIMIT));
    return QI_MIN(QI_MAX(QI_ADD(QF_RNE(v), zero), lo), hi);
}

#endif
