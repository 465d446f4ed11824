// qwino_avx2.c - Int8 3x3 stride-1 convolution as an exact integer Winograd F(2x2,3x3), for
// AVX2 without VNNI: the qconv contract (qconv_tmpl.h) restricted to kh = kw = 3, strides and
// dilations 1, C <= GK_QWINO_MAX_C, weights packed by gk_qwino_pack (qwpack.h, which derives
// the transforms and why the integers are exact). The bytes written are the direct kernels'.
//
// Why: without VNNI a multiply-add of int8 costs half a vpmaddwd lane pair, only twice the f32
// FMA's rate, and the f32 path has Winograd F(4x4,3x3) (2.25 multiplies per output where the
// direct kernel has 9). Here the 16 transformed products per 2x2 outputs are 4 multiplies per
// output, in int16 pairs (vpmaddwd), 2.25x fewer than the direct int8 kernel's.
//
// Work unit: a group of output blocks (8 channels each) x a group of up to WT 2x2 tiles of
// output pixels, consecutive in the flattened [N][TH][TW] tiles. Per chunk of WKC input
// channels the tiles' inputs are transformed once into vbuf ([tile][16][WKC] int16, padded), then for
// each block and each of the 16 positions a register tile of WT accumulators (one per tile, 8
// outputs each) runs over the chunk's channel pairs (gk_qdot_avx2 with int16 weights), and is
// kept in mbuf between chunks. Last, per block and tile, the output transform, the shift by 2,
// the bias, the requantization and the stores of the pixels inside the output.
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../qmath.h"
#include "../units.h"
#include "qavx2.h"
#include "qwpack.h"

#define WT 12   /* tiles per register tile */
#define WKC 128 /* input channels per chunk: vbuf is WT x WTS int16 (48 KiB) */
/* vbuf's tile stride: 16 rows of WKC and 64 bytes more, so that the register tile's 12 rows
 * of one position are not 4 KiB apart (one L1 set: they evicted each other, 2-5x slower). */
#define WTS (16 * WKC + 32)
#define WG 4    /* output blocks per unit: mbuf is WG x 16 x WT accumulators (24 KiB) */

typedef struct {
    const uint8_t *x;
    const int16_t *u;
    uint8_t *y;
    int64_t h, w, xcs, m, ycs, oh, ow, ph, pw;
    int64_t th, tw, cv; /* tiles per column and row; C rounded up to 16 */
    int x_zero;
    uint8_t flip;
    gk_qreq_avx2 rq;
} wshape;

/* 16 channels of one input pixel widened to int16 (XORed with flip first); only the bytes
 * before xcs are read (the last pixel's tail chunk). */
GK_INLINE __m256i load16(const uint8_t *px, int64_t c0, int64_t xcs, __m128i flip)
{
    __m128i b;
    if (c0 + 16 <= xcs) {
        b = _mm_loadu_si128((const __m128i *)(px + c0));
    } else {
        uint8_t t[16] = { 0 };
        memcpy(t, px + c0, (size_t)(xcs - c0));
        b = _mm_loadu_si128((const __m128i *)t);
    }
    return _mm256_cvtepu8_epi16(_mm_xor_si128(b, flip));
}

/* Tile `tile`'s 4x4 input patch, channels [c0, c0 + kn) (kn a multiple of 16), transformed:
 * dst[e * WKC + c - c0] = (B^T d B)[e] for e = 4i + j. Pixels outside the input are x_zero. */
static void transform_in(const wshape *s, int64_t tile, int64_t c0, int64_t kn, int16_t *dst)
{
    int64_t tpi = s->th * s->tw, ni = tile / tpi, ty = tile % tpi / s->tw, tx = tile % s->tw;
    int64_t iy0 = 2 * ty - s->ph, ix0 = 2 * tx - s->pw;
    const uint8_t *px[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int64_t iy = iy0 + i, ix = ix0 + j;
            px[i * 4 + j] = (uint64_t)iy < (uint64_t)s->h && (uint64_t)ix < (uint64_t)s->w
                                ? s->x + ((ni * s->h + iy) * s->w + ix) * s->xcs
                                : NULL;
        }
    __m128i flip = _mm_set1_epi8((char)s->flip);
    __m256i zero = _mm256_set1_epi16((int16_t)s->x_zero);
    for (int64_t cc = 0; cc < kn; cc += 16) {
        __m256i d[16], t[16];
        for (int k = 0; k < 16; k++)
            d[k] = px[k] ? load16(px[k], c0 + cc, s->xcs, flip) : zero;
        /* B^T d: rows. */
        for (int j = 0; j < 4; j++) {
            t[0 + j] = _mm256_sub_epi16(d[0 + j], d[8 + j]);
            t[4 + j] = _mm256_add_epi16(d[4 + j], d[8 + j]);
            t[8 + j] = _mm256_sub_epi16(d[8 + j], d[4 + j]);
            t[12 + j] = _mm256_sub_epi16(d[4 + j], d[12 + j]);
        }
        /* (B^T d) B: columns. */
        for (int i = 0; i < 16; i += 4) {
            d[i + 0] = _mm256_sub_epi16(t[i + 0], t[i + 2]);
            d[i + 1] = _mm256_add_epi16(t[i + 1], t[i + 2]);
            d[i + 2] = _mm256_sub_epi16(t[i + 2], t[i + 1]);
            d[i + 3] = _mm256_sub_epi16(t[i + 1], t[i + 3]);
        }
        for (int e = 0; e < 16; e++)
            _mm256_storeu_si256((__m256i *)(dst + e * WKC + cc), d[e]);
    }
}

/* The 2x2 outputs of one tile from its 16 accumulators m[e * WT] (A^T M A = 4 S), shifted
 * back to S, plus the bias, requantized and stored where inside the output. */
GK_INLINE void transform_out(const wshape *s, const __m256i *m, int64_t tile, int64_t m0,
                             int count, __m256i bv, __m256 mv)
{
    __m256i t0[4], t1[4];
    for (int j = 0; j < 4; j++) {
        __m256i a = m[(0 + j) * WT], b = m[(4 + j) * WT], c = m[(8 + j) * WT],
                d = m[(12 + j) * WT];
        t0[j] = _mm256_add_epi32(_mm256_add_epi32(a, b), c);
        t1[j] = _mm256_sub_epi32(_mm256_sub_epi32(b, c), d);
    }
    __m256i y[4] = {
        _mm256_add_epi32(_mm256_add_epi32(t0[0], t0[1]), t0[2]),
        _mm256_sub_epi32(_mm256_sub_epi32(t0[1], t0[2]), t0[3]),
        _mm256_add_epi32(_mm256_add_epi32(t1[0], t1[1]), t1[2]),
        _mm256_sub_epi32(_mm256_sub_epi32(t1[1], t1[2]), t1[3]),
    };
    int64_t tpi = s->th * s->tw, ni = tile / tpi, ty = tile % tpi / s->tw, tx = tile % s->tw;
    int64_t oy = 2 * ty, ox = 2 * tx;
    bool right = ox + 1 < s->ow;
    for (int i = 0; i < 2 && oy + i < s->oh; i++) {
        int64_t at = ((ni * s->oh + oy + i) * s->ow + ox) * s->ycs + m0;
        __m256i r0 = gk_qrequant_avx2(_mm256_add_epi32(_mm256_srai_epi32(y[2 * i], 2), bv),
                                      mv, &s->rq, at, count);
        /* Past the right edge: computed, never stored (its residual is not read). */
        __m256i r1 = gk_qrequant_avx2(
            _mm256_add_epi32(_mm256_srai_epi32(y[2 * i + 1], 2), bv), mv, &s->rq,
            right ? at + s->ycs : at, count);
        uint8_t *yp = s->y + at;
        gk_qstore2_avx2(yp, right ? yp + s->ycs : NULL, r0, r1, count);
    }
}

/* Tiles [t0, t0 + live) (live <= NP) of output blocks [mb0, mb1) (at most WG). */
GK_INLINE void unit(const wshape *s, int16_t *vbuf, __m256i (*mbuf)[16 * WT],
                    const int32_t *bias, const float *mult, int64_t t0, int live, int64_t mb0,
                    int64_t mb1, const int NP)
{
    for (int64_t c0 = 0; c0 < s->cv; c0 += WKC) {
        int64_t kn = s->cv - c0 < WKC ? s->cv - c0 : WKC;
        for (int p = 0; p < live; p++)
            transform_in(s, t0 + p, c0, kn, vbuf + p * WTS);
        for (int64_t mb = mb0; mb < mb1; mb++) {
            __m256i *acc = mbuf[mb - mb0];
            for (int e = 0; e < 16; e++) {
                const int16_t *row[WT];
                for (int p = 0; p < WT; p++)
                    row[p] = vbuf + (p < live ? p : live - 1) * WTS + e * WKC;
                if (c0 == 0)
                    for (int p = 0; p < WT; p++)
                        acc[e * WT + p] = _mm256_setzero_si256();
                gk_qdot_avx2(acc + e * WT, row, s->u + ((mb * 16 + e) * s->cv + c0) * 8, kn,
                             NP, true);
            }
        }
    }
    for (int64_t mb = mb0; mb < mb1; mb++) {
        __m256i bv;
        __m256 mv;
        int count = gk_qblock_avx2(bias, mult, s->m, mb, &bv, &mv);
        for (int p = 0; p < live; p++)
            transform_out(s, mbuf[mb - mb0] + p, t0 + p, mb * 8, count, bv, mv);
    }
}

void gk_qwino_u8_avx2(const uint8_t *x, const int8_t *wp, const int32_t *bias, const float *mult,
                      uint8_t *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t xcs,
                      int64_t m, int64_t ycs, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                      int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                      int x_zero, int x_flip, int y_zero, int y_lo, int y_hi, float post_mult,
                      int post_zero, int post_i8, const uint8_t *res, const float *rq,
                      int rmode, unsigned *work, int tid, int nthreads)
{
    (void)kh, (void)kw, (void)sh, (void)sw, (void)dh, (void)dw;
    int16_t vbuf[WT * WTS] __attribute__((aligned(32)));
    __m256i mbuf[WG][16 * WT];
    wshape s = { x, (const int16_t *)(const void *)wp, y, h, w, xcs, m, ycs, oh, ow, ph, pw,
                 (oh + 1) / 2, (ow + 1) / 2, gk_qwino_cv(c), x_zero,
                 (uint8_t)(x_flip ? 0x80 : 0),
                 gk_qreq_avx2_of(y_zero, y_lo, y_hi, post_mult, post_zero, post_i8, res, rq,
                                  rmode) };
    int64_t mblocks = (m + 7) / 8, nt = n * s.th * s.tw, tgroups = (nt + WT - 1) / WT;
    int64_t groups = gk_qgroups_avx2(mblocks, tgroups, nthreads, WG), units = groups * tgroups;
    gk_units it = gk_units_of((size_t)units, work, tid, nthreads);
    for (size_t uu; gk_units_next(&it, &uu);) {
        int64_t u = (int64_t)uu, g = u / tgroups, t = u % tgroups;
        int64_t mb0 = g * mblocks / groups, mb1 = (g + 1) * mblocks / groups;
        int64_t t0 = t * nt / tgroups;
        int live = gk_qlive_avx2((int)((t + 1) * nt / tgroups - t0), nt, tgroups);
        if (live > 8)
            unit(&s, vbuf, mbuf, bias, mult, t0, live, mb0, mb1, 12);
        else if (live > 4)
            unit(&s, vbuf, mbuf, bias, mult, t0, live, mb0, mb1, 8);
        else if (live > 2)
            unit(&s, vbuf, mbuf, bias, mult, t0, live, mb0, mb1, 4);
        else
            unit(&s, vbuf, mbuf, bias, mult, t0, live, mb0, mb1, 2);
    }
}
