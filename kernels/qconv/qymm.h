// qymm.h - The qconv_tmpl.h pieces of the two ymm variants that take 4 input bytes per int32
// lane (qconv_avxvnni.c with vpdpbusd, qconv7_avx2.c with vpmaddubsw): the vector types, zero,
// the weight load and the broadcast of 4 input bytes. Each file adds its q_dot.
#ifndef GK_QYMM_H
#define GK_QYMM_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#ifndef GK_INLINE
#define GK_INLINE static inline __attribute__((always_inline))
#endif

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
GK_INLINE __m256i q_sum(qacc a) { return a; }

#endif
