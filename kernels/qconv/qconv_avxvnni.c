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

#include "qymm.h"

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

#include "qconv_tmpl.h"
