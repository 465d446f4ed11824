// qconv_avx512vnni.c - Int8 convolution with AVX-512 VNNI (qconv_tmpl.h): 16 output channels
// per zmm, vpdpbusd (4 u8 inputs x 4 s8 weights summed into each int32 lane), a register tile
// of 2 output blocks x 12 output pixels (24 accumulators, 2 weights, 1 broadcast, 1 flip mask).
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define QV 16
#define QNP 12
#define QNP_MID 8
#define QNM 2
#define GK_QFN gk_qconv_u8_avx512vnni
#define GK_INLINE static inline __attribute__((always_inline))

typedef __m512i qacc;
typedef __m512i qwt;
typedef __m512i qxv;

GK_INLINE qacc q_zero(void) { return _mm512_setzero_si512(); }
GK_INLINE qwt q_wload(const int8_t *p) { return _mm512_loadu_si512(p); }
/* 4 input bytes into every lane, XORed with 0x80 for i8 inputs. */
GK_INLINE qxv q_xload(const uint8_t *p, int flip)
{
    int32_t v;
    memcpy(&v, p, 4);
    __m512i x = _mm512_set1_epi32(v);
    return flip ? _mm512_xor_si512(x, _mm512_set1_epi32((int32_t)0x80808080u)) : x;
}
/* a += the 4-byte dot products of x (u8) and w (s8) in each int32 lane. gcc (the native build)
 * gets the instruction from an asm statement: with the intrinsic it copied the accumulators
 * around every vpdpbusd and kept some of them on the stack (up to 2x slower tiles). */
GK_INLINE qacc q_dot(qacc a, qxv x, qwt w)
{
#if defined(__clang__)
    return _mm512_dpbusd_epi32(a, x, w);
#else
    __asm__("vpdpbusd %2, %1, %0" : "+v"(a) : "v"(x), "v"(w));
    return a;
#endif
}
GK_INLINE __m512i q_sum(qacc a) { return a; }

#include "qconv_tmpl.h"
