// qconv7_avx2.c - Int8 convolution with AVX2 and no VNNI for weights of 7 bits (every packed
// weight in [-64, 64]; `glowc quantize --reduce-range` makes them [-63, 63]): the qconv contract
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

#include "qymm.h"

/* a += the 4-byte dot products of x (u8) and w (s8, |w| <= 64) in each int32 lane. */
GK_INLINE qacc q_dot(qacc a, qxv x, qwt w)
{
    __m256i p = _mm256_maddubs_epi16(x, w);
    return _mm256_add_epi32(a, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

#include "qconv_tmpl.h"
