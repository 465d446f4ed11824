// qconv7_avx2.c - Int8 convolution with AVX2 and no VNNI for weights of 7 bits (every packed
// weight in [-64, 63], as `glowc quantize --reduce-range` makes them): the qconv contract
// (qconv_tmpl.h) with the VNNI files' packing (qpack.h, vlen 8, 4 channels per int32 lane) and
// vpmaddubsw in place of vpdpbusd.
//
// Why it is exact: vpmaddubsw sums two u8 x s8 products into a saturating int16; with
// |w| <= 64 a pair is at most 2 * 255 * 64 = 32640 <= 32767, so it never saturates, and
// vpmaddwd by ones then sums the two pairs of each lane into int32 (the 4-channel dot product
// vpdpbusd gives). Full s8 weights would saturate (255 * 127 * 2 > 32767): the backend takes
// this kernel only when every weight of the layer fits (qprepare.c), else qconv_avx2.c.
//
// Why: per 32 multiply-adds this takes a broadcast, vpmaddubsw, vpmaddwd and vpaddd; the
// int16 kernel (qconv_avx2.c) takes two broadcasts, two vpmaddwd and two vpaddd. On Zen 3 the
// vector pipes run about 1.4 vpmaddwd + vpaddd pairs a cycle, so the int16 form is only ~1.4x
// the f32 FMA rate.
//
// Register tile: 1 output block x 12 pixels (12 accumulators, the weights, the broadcast that
// becomes the product, the ones: 15 of the 16 ymm).
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define QV 8
#define QNP 12
#define QNP_MID 8
#define QNM 1
#define GK_QFN gk_qconv7_u8_avx2
#define GK_INLINE static inline __attribute__((always_inline))

typedef __m256i qacc;
typedef __m256i qwt;
typedef __m256i qxv;

GK_INLINE qacc q_zero(void) { return _mm256_setzero_si256(); }
GK_INLINE qwt q_wload(const int8_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
/* 4 input bytes into every lane, XORed with 0x80 for i8 inputs. */
GK_INLINE qxv q_xload(const uint8_t *p, int flip)
{
    int32_t v;
    memcpy(&v, p, 4);
    __m256i x = _mm256_set1_epi32(v);
    return flip ? _mm256_xor_si256(x, _mm256_set1_epi32((int32_t)0x80808080u)) : x;
}
/* a += the 4-byte dot products of x (u8) and w (s8, |w| <= 64) in each int32 lane. */
GK_INLINE qacc q_dot(qacc a, qxv x, qwt w)
{
    __m256i p = _mm256_maddubs_epi16(x, w);
    return _mm256_add_epi32(a, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}
GK_INLINE __m256i q_sum(qacc a) { return a; }

#include "qconv_tmpl.h"
