// qconv_avxvnni.c - Int8 convolution with AVX-VNNI (qconv_tmpl.h): the VEX-encoded vpdpbusd
// of Alder Lake / Zen 5 on ymm, 8 output channels per vector, a register tile of 2 output blocks
// x 6 output pixels (12 accumulators, 2 weights, 1 broadcast, 1 flip mask of 16 ymm).
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define QV 8
#define QNP 6
#define QNP_MID 6
#define QNM 2
#define GK_QFN gk_qconv_u8_avxvnni
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
/* a += the 4-byte dot products of x (u8) and w (s8) in each int32 lane. gcc (the native build)
 * gets the instruction from an asm statement: with the intrinsic it copied the accumulators
 * around every vpdpbusd and kept some of them on the stack (up to 2x slower tiles). */
GK_INLINE qacc q_dot(qacc a, qxv x, qwt w)
{
#if defined(__clang__)
    return _mm256_dpbusd_avx_epi32(a, x, w);
#else
    __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(a) : "x"(x), "x"(w));
    return a;
#endif
}
GK_INLINE __m256i q_sum(qacc a) { return a; }

#include "qconv_tmpl.h"
