// qconv_avx2.c - Int8 convolution with AVX2 and no VNNI: vpmaddwd on activations widened to
// int16 once per tile of output pixels, 8 output channels per block, a register tile of 1
// output block x 12 output pixels. Same contract as the VNNI variants (qconv_tmpl.h), same
// packed bytes (qpack.h, vlen 8) in another order within each 4 channels (gk_qpack_conv_isa);
// qconv_scalar.c is the reference.
//
// Why vpmaddwd and not vpmaddubsw: vpmaddubsw sums two u8 x s8 products into a saturating
// int16, and 255 * 127 * 2 = 64770 > 32767, so it would saturate where the reference does not.
// vpmaddwd sums two int16 x int16 products into int32: here the products are (u8 input or
// x_zero, 0..255) x (s8 weight, -128..127), at most 2 * 255 * 128 = 65280 in magnitude per pair,
// and the int32 accumulators wrap exactly as the reference's (qconv_scalar.c sums in uint32).
//
// Cost model (why the widening happens first): without VNNI each 16 multiply-adds take a
// vpmaddwd and a vpaddd, and both compete with any shuffle for the vector ports. The previous
// form widened the 4 broadcast input bytes of every pixel and tap with a shuffle inside the
// dot-product loop (one per 2 vpmaddwd); it ran at 0.8-1.2x the f32 kernel. Here the tile's
// inputs are widened once into a stack buffer laid out like the packed weights (per pixel, the
// taps in [KH][KW] order, each tap's C rounded up to 4 channels, padding taps holding x_zero),
// so the loop over the whole reduction is one run per pixel of 32-bit broadcast loads (2
// int16 channels, a pure load), no shuffle on the inputs and no bounds check. The buffer is
// reused by up to QG output blocks, which makes the widening a few percent of the work.
//
// Lane layout of one block: the avx2 packing (gk_qpack_conv_isa, qpack.h) holds, per 2 input
// channels, 8 outputs x 2 channels of s8, which widen to one ymm of int16; vpmaddwd of it with
// the broadcast pair (x0 x1) gives the 8 outputs' partial sums in channel order, one
// accumulator per pixel and block. A tile is 1 block x 12 pixels: 12 accumulators, the weight
// vector, the broadcast and the product, 15 of the 16 ymm (the 2-block x 6-pixel tile of the
// 4-channel layout needed all 16 and clang spilled in some of its tail variants).
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../qmath.h"
#include "../units.h"
#include "qavx2.h"

#define QNP 12    /* output pixels per tile */
#define QK 2048   /* int16 of one pixel's widened reduction in the buffer (a chunk of KH*KW*C4) */
#define QKS (QK + 32) /* the buffer's pixel stride: rows not 4 KiB apart (cache sets) */
#define QG 8      /* output blocks (of 8 channels) per work unit, sharing the widened tile */

/* The shape of one call. */
typedef struct {
    const uint8_t *x;
    const int8_t *wp;
    uint8_t *y;
    int64_t h, w, xcs, m, ycs, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw;
    int64_t cbytes; /* C rounded up to 4: int16 per tap in the buffer, bytes per tap of weights */
    int64_t k;      /* kh * kw * cbytes: the reduction length */
    int x_zero;
    uint8_t flip;   /* 0x80 for i8 inputs, else 0 */
    gk_qreq_avx2 rq; /* the requantization */
} qshape;

/* n bytes (a multiple of 4) at src, XORed with flip, as int16 at dst. */
GK_INLINE void widen(int16_t *dst, const uint8_t *src, int64_t n, __m128i flip)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i b = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + i)), flip);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_cvtepu8_epi16(b));
    }
    if (i + 8 <= n) {
        __m128i b = _mm_xor_si128(_mm_loadl_epi64((const __m128i *)(src + i)), flip);
        _mm_storeu_si128((__m128i *)(dst + i), _mm_cvtepu8_epi16(b));
        i += 8;
    }
    for (; i < n; i += 4) {
        int32_t v;
        memcpy(&v, src + i, 4);
        __m128i b = _mm_xor_si128(_mm_cvtsi32_si128(v), flip);
        _mm_storel_epi64((__m128i *)(dst + i), _mm_cvtepu8_epi16(b));
    }
}

GK_INLINE void fill(int16_t *dst, int64_t n, __m256i v)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), v);
    for (; i < n; i += 4)
        _mm_storel_epi64((__m128i *)(dst + i), _mm256_castsi256_si128(v));
}

/* Output pixel q's reduction elements [k0, k0 + kn) widened into dst: tap by tap, the input
 * pixel's channel bytes, or x_zero for a tap in the padding. k0 and kn are multiples of 4.
 * When a kernel row's taps are adjacent in the input (dw == 1, xcs == cbytes), the run of them
 * inside the input is widened as one (the 7x7 first layer: 4 bytes per tap otherwise). */
static void widen_pixel(const qshape *s, int64_t q, int64_t k0, int64_t kn, int16_t *dst)
{
    int64_t ohw = s->oh * s->ow, n = q / ohw, oy = q % ohw / s->ow, ox = q % s->ow;
    const uint8_t *img = s->x + n * s->h * s->w * s->xcs;
    __m128i flip = _mm_set1_epi8((char)s->flip);
    __m256i zero = _mm256_set1_epi16((int16_t)s->x_zero);
    bool fuse = s->dw == 1 && s->xcs == s->cbytes;
    int64_t tap = k0 / s->cbytes, c = k0 % s->cbytes, done = 0;
    while (done < kn) {
        int64_t kx = tap % s->kw;
        int64_t iy = oy * s->sh - s->ph + tap / s->kw * s->dh;
        int64_t ix = ox * s->sw - s->pw + kx * s->dw;
        int64_t run = s->cbytes - c;
        bool in = (uint64_t)iy < (uint64_t)s->h && (uint64_t)ix < (uint64_t)s->w;
        if (in && fuse) {
            /* Taps kx .. last of this row are inside: ix + (last - kx) < w. */
            int64_t last = s->kw - 1 < kx + s->w - 1 - ix ? s->kw - 1 : kx + s->w - 1 - ix;
            run += (last - kx) * s->cbytes;
        }
        if (run > kn - done)
            run = kn - done;
        if (in)
            widen(dst + done, img + (iy * s->w + ix) * s->xcs + c, run, flip);
        else
            fill(dst + done, run, zero);
        done += run;
        tap += (c + run) / s->cbytes;
        c = (c + run) % s->cbytes;
    }
}

/* The whole reduction of output pixel (qn, oy, ox) widened into dst (the layers whose k fits
 * one chunk, most of them): as widen_pixel, but kernel row by kernel row, without its
 * divisions per run of taps (the first layers' rows are 3-7 taps of 4 bytes, and the
 * divisions took a third of their time). */
static void widen_whole(const qshape *s, int64_t qn, int64_t oy, int64_t ox, int16_t *dst)
{
    const uint8_t *img = s->x + qn * s->h * s->w * s->xcs;
    __m128i flip = _mm_set1_epi8((char)s->flip);
    __m256i zero = _mm256_set1_epi16((int16_t)s->x_zero);
    int64_t iy0 = oy * s->sh - s->ph, ix0 = ox * s->sw - s->pw, rowk = s->kw * s->cbytes;
    bool row_in = ix0 >= 0 && ix0 + (s->kw - 1) * s->dw < s->w;
    bool fuse = row_in && s->dw == 1 && s->xcs == s->cbytes;
    for (int64_t ky = 0; ky < s->kh; ky++, dst += rowk) {
        int64_t iy = iy0 + ky * s->dh;
        if ((uint64_t)iy >= (uint64_t)s->h) {
            fill(dst, rowk, zero);
            continue;
        }
        const uint8_t *src = img + iy * s->w * s->xcs;
        if (fuse) {
            widen(dst, src + ix0 * s->xcs, rowk, flip);
            continue;
        }
        for (int64_t kx = 0; kx < s->kw; kx++) {
            int64_t ix = ix0 + kx * s->dw;
            if (row_in || (uint64_t)ix < (uint64_t)s->w)
                widen(dst + kx * s->cbytes, src + ix * s->xcs, s->cbytes, flip);
            else
                fill(dst + kx * s->cbytes, s->cbytes, zero);
        }
    }
}

/* Output pixels [q0, q0 + live) (live <= NP) of output blocks [mb0, mb1): per chunk of the
 * reduction, the pixels' inputs widened into buf, then each block's dot products (the
 * accumulators of all the blocks in memory between chunks); then the stores, two pixels at a
 * time. With one chunk (most layers) each block goes from its bias to its stores in registers:
 * with a short reduction (1x1 16->64: 8 vpmaddwd per accumulator) the accumulators' trips
 * through memory and the bias copies were a fifth of the time. */
GK_INLINE void tile(const qshape *s, int16_t *buf, const int32_t *bias, const float *mult,
                    int64_t q0, int live, int64_t mb0, int64_t mb1, const int NP)
{
    const int16_t *row[QNP];
    for (int p = 0; p < QNP; p++)
        row[p] = buf + (p < live ? p : live - 1) * QKS;
    if (s->k <= QK) {
        /* One chunk: each block's accumulators stay in registers from the bias to the store. */
        int64_t ohw = s->oh * s->ow, qn = q0 / ohw, qy = q0 % ohw / s->ow, qx = q0 % s->ow;
        for (int p = 0; p < live; p++) {
            widen_whole(s, qn, qy, qx, buf + p * QKS);
            if (++qx == s->ow) {
                qx = 0;
                if (++qy == s->oh)
                    qy = 0, qn++;
            }
        }
        for (int64_t mb = mb0; mb < mb1; mb++) {
            int64_t m0 = mb * 8;
            __m256i bv;
            __m256 mv;
            int count = gk_qblock_avx2(bias, mult, s->m, mb, &bv, &mv);
            __m256i a[QNP];
            for (int p = 0; p < QNP; p++)
                a[p] = bv;
            gk_qdot_avx2(a, row, s->wp + mb * s->k * 8, s->k, NP, false);
            int64_t at = q0 * s->ycs + m0;
            uint8_t *y = s->y + at;
            for (int p = 0; p < NP; p += 2) {
                if (p >= live)
                    break;
                __m256i r0 = gk_qrequant_avx2(a[p], mv, &s->rq, at + p * s->ycs, count);
                if (p + 1 < live)
                    gk_qstore2_avx2(y + p * s->ycs, y + (p + 1) * s->ycs, r0,
                                    gk_qrequant_avx2(a[p + 1 < NP ? p + 1 : p], mv, &s->rq,
                                                     at + (p + 1) * s->ycs, count),
                                    count);
                else
                    gk_qstore2_avx2(y + p * s->ycs, NULL, r0, r0, count);
            }
        }
        return;
    }
    __m256i acc[QG][QNP];
    __m256 mv[QG];
    for (int64_t mb = mb0; mb < mb1; mb++) {
        /* Bias and multipliers of a block past M zero-padded to whole vectors. */
        __m256i bv;
        gk_qblock_avx2(bias, mult, s->m, mb, &bv, &mv[mb - mb0]);
        for (int p = 0; p < QNP; p++)
            acc[mb - mb0][p] = bv;
    }
    for (int64_t k0 = 0; k0 < s->k; k0 += QK) {
        int64_t kn = s->k - k0 < QK ? s->k - k0 : QK;
        for (int p = 0; p < live; p++)
            widen_pixel(s, q0 + p, k0, kn, buf + p * QKS);
        for (int64_t mb = mb0; mb < mb1; mb++)
            gk_qdot_avx2(acc[mb - mb0], row, s->wp + mb * s->k * 8 + k0 * 8, kn, NP, false);
    }
    for (int64_t mb = mb0; mb < mb1; mb++) {
        int64_t m0 = mb * 8;
        int count = s->m - m0 < 8 ? (int)(s->m - m0) : 8;
        int64_t at = q0 * s->ycs + m0;
        uint8_t *y = s->y + at;
        for (int p = 0; p < live; p += 2) {
            __m256i r0 = gk_qrequant_avx2(acc[mb - mb0][p], mv[mb - mb0], &s->rq,
                                          at + p * s->ycs, count);
            if (p + 1 < live)
                gk_qstore2_avx2(y + p * s->ycs, y + (p + 1) * s->ycs, r0,
                                gk_qrequant_avx2(acc[mb - mb0][p + 1], mv[mb - mb0], &s->rq,
                                                 at + (p + 1) * s->ycs, count),
                                count);
            else
                gk_qstore2_avx2(y + p * s->ycs, NULL, r0, r0, count);
        }
    }
}

void gk_qconv_u8_avx2(const uint8_t *x, const int8_t *wp, const int32_t *bias, const float *mult,
                      uint8_t *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t xcs,
                      int64_t m, int64_t ycs, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                      int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                      int x_zero, int x_flip, int y_zero, int y_lo, int y_hi, float post_mult,
                      int post_zero, int post_i8, const uint8_t *res, const float *rq,
                      int rmode, unsigned *work, int tid, int nthreads)
{
    /* The widened inputs of one tile; 32-byte aligned for the broadcast loads' sake. */
    int16_t buf[QNP * QKS] __attribute__((aligned(32)));
    qshape s = { x, wp, y, h, w, xcs, m, ycs, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw,
                 (c + 3) / 4 * 4, 0, x_zero, (uint8_t)(x_flip ? 0x80 : 0),
                 gk_qreq_avx2_of(y_zero, y_lo, y_hi, post_mult, post_zero, post_i8, res, rq,
                                  rmode) };
    s.k = kh * kw * s.cbytes;
    int64_t mblocks = (m + 7) / 8, nq = n * oh * ow, tiles = (nq + QNP - 1) / QNP;
    int64_t groups = gk_qgroups_avx2(mblocks, tiles, nthreads, QG), units = groups * tiles;
    gk_units it = gk_units_of((size_t)units, work, tid, nthreads);
    /* Block groups outermost: a thread's consecutive units reuse the same weights. Tiles
     * outermost when the weights fit in half of L1: threads then write different pixels
     * instead of different channels of the same pixels' cache lines (qconv_tmpl.h; MobileNet
     * v2 8-bit int8 2 % faster at 2 threads, the same at 1), and with a residual unless the
     * weights are more than twice its bytes (qconv_tmpl.h says why). */
    int64_t wbytes = mblocks * s.k * 8;
    bool tiles_out = wbytes <= 24 * 1024 || (s.rq.res.res && 2 * nq * ycs > wbytes);
    for (size_t uu; gk_units_next(&it, &uu);) {
        int64_t u = (int64_t)uu;
        /* Groups split the blocks evenly (20 blocks: 7, 7 and 6, not 8, 8 and 4), tiles the
         * pixels (49 pixels: 4 tiles of 10 and one of 9, not 4 of 12 and one pixel alone, which
         * would load every weight for one multiply-add). */
        int64_t g = u / tiles, t = u % tiles;
        if (tiles_out)
            g = u % groups, t = u / groups;
        int64_t mb0 = g * mblocks / groups, mb1 = (g + 1) * mblocks / groups;
        int64_t q0 = t * nq / tiles;
        int live = gk_qlive_avx2((int)((t + 1) * nq / tiles - q0), nq, tiles);
        /* The smallest compiled tile width holding them (the missing pixels repeat the last). */
        if (live > 10)
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 12);
        else if (live > 8)
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 10);
        else if (live > 6)
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 8);
        else if (live > 4)
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 6);
        else if (live > 2)
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 4);
        else if (live == 2)
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 2);
        else
            tile(&s, buf, bias, mult, q0, live, mb0, mb1, 1);
    }
}
