// qconv_avx2.c - Int8 convolution with AVX2 and no VNNI (qconv_tmpl.h), 8 output channels per
// block, a register tile of 1 output block x 6 output pixels.
//
// vpmaddubsw (u8 x s8 pairs summed into int16) would saturate: 255 * 127 * 2 = 64770 > 32767,
// and the saturated results would differ from the reference. Instead both operands are widened
// to int16 (the 4 input bytes zero-extended and broadcast to every 64-bit group, the 32 weight
// bytes of a block sign-extended into two ymm) and multiplied by vpmaddwd, which sums two
// int16 x int16 products into int32: at most 2 * 255 * 128 in magnitude, no saturation and no
// overflow. Each output channel then holds two partial sums (its input channels 4c, 4c+1 and
// 4c+2, 4c+3), in two accumulators per pixel (channels 0-3 and 4-7), added pairwise at the end.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define QV 8
#define QNP 6
#define QNP_MID 6
#define QNM 1
#define GK_QFN gk_qconv_u8_avx2
#define GK_INLINE static inline __attribute__((always_inline))

/* lo: output channels 0-3, hi: 4-7, each channel's two partial sums in adjacent lanes. */
typedef struct {
    __m256i lo, hi;
} qacc;
typedef qacc qwt;
typedef __m256i qxv;

GK_INLINE qacc q_zero(void)
{
    qacc a = { _mm256_setzero_si256(), _mm256_setzero_si256() };
    return a;
}
/* 8 output channels x 4 input channels of s8 as two vectors of 16 int16. */
GK_INLINE qwt q_wload(const int8_t *p)
{
    qwt w = { _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)p)),
              _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(p + 16))) };
    return w;
}
/* 4 input bytes (XORed with 0x80 for i8 inputs) as 4 int16 repeated in every 64 bits: the
 * broadcast dword interleaved with zero bytes (one load-broadcast and one shuffle). */
GK_INLINE qxv q_xload(const uint8_t *p, int flip)
{
    int32_t v;
    memcpy(&v, p, 4);
    __m256i x = _mm256_set1_epi32(v);
    if (flip)
        x = _mm256_xor_si256(x, _mm256_set1_epi32((int32_t)0x80808080u));
    return _mm256_unpacklo_epi8(x, _mm256_setzero_si256());
}
GK_INLINE qacc q_dot(qacc a, qxv x, qwt w)
{
    a.lo = _mm256_add_epi32(a.lo, _mm256_madd_epi16(x, w.lo));
    a.hi = _mm256_add_epi32(a.hi, _mm256_madd_epi16(x, w.hi));
    return a;
}
/* Pairwise sums: hadd gives channels 0 1 4 5 | 2 3 6 7, the permute puts them in order. */
GK_INLINE __m256i q_sum(qacc a)
{
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(a.lo, a.hi), _MM_SHUFFLE(3, 1, 2, 0));
}

#include "qconv_tmpl.h"
