// qdwconv_avx2.c - Quantized 8-bit NHWC depthwise convolution with AVX2: the taps in pairs, one
// vpmaddwd per pair and 8 channels. Same contract, packing (qdwpack.h) and work units as the
// template the AVX-512 variant uses (qdwconv_tmpl.h); qdwconv_scalar.c is the reference.
//
// Why not the template at 8 lanes: it widens each tap's 8 input bytes to int32 lanes and
// multiplies one tap per instruction (vpmaddwd with zero high halves): per 8 multiply-adds a
// widening load, an XOR, a multiply and an add, half the f32 FMA's rate (0.6x the f32 depthwise
// on a MobileNet v2 layer). Here two taps' bytes of 16 channels are interleaved (vpunpck[lh]bw)
// and zero-extended to int16 pairs, so one vpmaddwd sums both taps' products for 8 channels:
// per 32 multiply-adds two loads, two unpacks, two extensions, two vpmaddwd and two vpaddd.
// The weights are interleaved the same way once per work unit ([pair][8 channels][2] int16 on
// the stack, an odd last tap paired with a zero weight), so the inner loop only loads them.
// Exactness: an input is 0..255 (u8, i8 flipped, or x_zero in the pads), a packed weight
// w - z_w fits int16 (|w - z_w| <= 255), so a pair sum is at most 2 * 255 * 255 in magnitude,
// inside int32; the int32 accumulators wrap as the reference's.
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../q8.h"
#include "qdwpack.h"

#define GK_INLINE static inline __attribute__((always_inline))

#define QDW_PAIRS 32              /* tap pairs whose interleaved weights are on the stack */
#define QDW_G8 (GK_Q_CHUNK / 8)   /* 8-channel groups of a chunk */

/* 16 bytes at p, or the first n (< 16) and zeros. */
GK_INLINE __m128i load16(const uint8_t *p, int64_t n)
{
    if (n >= 16)
        return _mm_loadu_si128((const __m128i *)p);
    uint8_t t[16] = { 0 };
    memcpy(t, p, (size_t)n);
    return _mm_loadu_si128((const __m128i *)t);
}

/* Rounds, offsets and saturates like q_round_sat (qsimd.h): v clamped to +-GK_Q_LIMIT, rounded
 * to nearest even, + zero, clamped to [lo, hi]. */
GK_INLINE __m256i round_sat(__m256 v, __m256i zero, __m256i lo, __m256i hi)
{
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-GK_Q_LIMIT)), _mm256_set1_ps(GK_Q_LIMIT));
    return _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(v), zero), lo),
                            hi);
}

/* The shape of one call. */
typedef struct {
    const uint8_t *x, *zrow;
    const int16_t *wp;
    const int32_t *bias;
    const float *mult;
    uint8_t *y;
    int64_t c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh, dw, ph, pw, cp, taps, npairs;
    int y_zero, lo, hi;
} qdw;

/* The pairs [p0, p1) of one pixel's taps (pointers tp, the pads at zrow) for the channels
 * [0, cn) of the chunk: accumulators from the bias (p0 == 0) or from acc, and back to acc or,
 * after the last pair, requantized and stored at yp. */
GK_INLINE void pixel(const qdw *s, const uint8_t *const *tp, const __m256i (*wpair)[QDW_G8],
                     int64_t p0, int64_t p1, int64_t c0, int64_t cn, __m256i *acc, uint8_t *yp,
                     const int FLIP)
{
    const __m128i flip = _mm_set1_epi8((char)0x80);
    for (int64_t o = 0; o < cn; o += 16) {
        int64_t m = cn - o;
        __m256i a0, a1;
        if (p0 == 0) {
            a0 = _mm256_loadu_si256((const __m256i *)(s->bias + c0 + o));
            a1 = _mm256_loadu_si256((const __m256i *)(s->bias + c0 + o + 8));
        } else {
            a0 = acc[o / 8];
            a1 = acc[o / 8 + 1];
        }
        for (int64_t j = 0; j < p1 - p0; j++) {
            __m128i xa = load16(tp[2 * j] + o, m), xb = load16(tp[2 * j + 1] + o, m);
            if (FLIP) {
                xa = _mm_xor_si128(xa, flip);
                xb = _mm_xor_si128(xb, flip);
            }
            __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(xa, xb));
            __m256i hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(xa, xb));
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(lo, wpair[j][o / 8]));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(hi, wpair[j][o / 8 + 1]));
        }
        if (p1 < s->npairs) {
            acc[o / 8] = a0;
            acc[o / 8 + 1] = a1;
            continue;
        }
        float mt[16] = { 0 };
        const float *mp = s->mult + c0 + o;
        if (m < 16) {
            memcpy(mt, mp, (size_t)m * sizeof(float));
            mp = mt;
        }
        __m256i z = _mm256_set1_epi32(s->y_zero), l = _mm256_set1_epi32(s->lo);
        __m256i h = _mm256_set1_epi32(s->hi);
        __m256i r0 = round_sat(_mm256_mul_ps(_mm256_cvtepi32_ps(a0), _mm256_loadu_ps(mp)), z, l, h);
        __m256i r1 = round_sat(_mm256_mul_ps(_mm256_cvtepi32_ps(a1), _mm256_loadu_ps(mp + 8)), z,
                               l, h);
        /* int16 (exact: lanes in -128..255) in channel order, then each one's low byte. */
        __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(r0, r1), _MM_SHUFFLE(3, 1, 2, 0));
        __m256i sel = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                                       0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
        __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(w16, sel),
                                             _MM_SHUFFLE(3, 1, 2, 0));
        __m128i bytes = _mm256_castsi256_si128(b);
        if (m >= 16) {
            _mm_storeu_si128((__m128i *)(yp + o), bytes);
        } else {
            uint8_t t[16];
            _mm_storeu_si128((__m128i *)t, bytes);
            memcpy(yp + o, t, (size_t)m);
        }
    }
}

/* The weights of pairs [p0, p1), 8-channel groups [0, g8) of the chunk at c0, as int16 pairs
 * (tap 2j, tap 2j + 1; a zero weight past the last tap) in wpair[j - p0][g]. */
static void interleave(const qdw *s, __m256i (*wpair)[QDW_G8], int64_t p0, int64_t p1,
                       int64_t c0, int64_t g8)
{
    for (int64_t j = p0; j < p1; j++)
        for (int64_t g = 0; g < g8; g++) {
            const int16_t *wa = s->wp + 2 * j * s->cp + c0 + g * 8;
            __m128i va = _mm_loadu_si128((const __m128i *)wa);
            __m128i vb = 2 * j + 1 < s->taps ? _mm_loadu_si128((const __m128i *)(wa + s->cp))
                                             : _mm_setzero_si128();
            wpair[j - p0][g] = _mm256_set_m128i(_mm_unpackhi_epi16(va, vb),
                                                _mm_unpacklo_epi16(va, vb));
        }
}

void gk_qdwconv_q8_avx2(const uint8_t *x, const int16_t *wp, const int32_t *bias,
                        const float *mult, uint8_t *y, int x_flip, int x_zero, int y_zero, int lo,
                        int hi, int64_t n, int64_t c, int64_t h, int64_t w, int64_t xcs,
                        int64_t oh, int64_t ow, int64_t ycs, int64_t kh, int64_t kw, int64_t sh,
                        int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw, int tid,
                        int nthreads)
{
    int64_t u0, u1;
    int64_t chunks = gk_q_units(n, oh, c, tid, nthreads, &u0, &u1);
    /* The padding value as the kernel reads it (flipped on load like the input). */
    uint8_t zrow[GK_Q_CHUNK + 16];
    memset(zrow, (x_zero ^ (x_flip ? 0x80 : 0)) & 0xff, sizeof zrow);
    qdw s = { x, zrow, wp, bias, mult, y, c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh, dw, ph,
              pw, gk_qdw_cpad(c), kh * kw, (kh * kw + 1) / 2, y_zero, lo, hi };
    __m256i wpair[QDW_PAIRS][QDW_G8];
    __m256i acc[QDW_G8];
    const uint8_t *tp[2 * QDW_PAIRS];
    int64_t off[2 * QDW_PAIRS];
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, cn = c - c0 < GK_Q_CHUNK ? c - c0 : GK_Q_CHUNK;
        /* 8-channel groups with weights: whole 16-channel blocks, inside the packed cp. */
        int64_t g8 = (cn + 15) / 16 * 2;
        /* Up to QDW_PAIRS pairs (64 taps) the weights are interleaved once per unit; a larger
         * kernel interleaves them per pixel and batch of pairs. */
        bool one = s.npairs <= QDW_PAIRS;
        if (one)
            interleave(&s, wpair, 0, s.npairs, c0, g8);
        if (one && u == u0)
            for (int64_t t = 0; t < 2 * s.npairs; t++)
                off[t] = t < s.taps ? (t / kw * dh * w + t % kw * dw) * xcs : 0;
        for (int64_t ox = 0; ox < ow; ox++) {
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs + c0;
            for (int64_t p0 = 0; p0 < s.npairs; p0 += QDW_PAIRS) {
                int64_t p1 = s.npairs - p0 < QDW_PAIRS ? s.npairs : p0 + QDW_PAIRS;
                if (!one)
                    interleave(&s, wpair, p0, p1, c0, g8);
                int64_t iy0 = oy * sh - ph, ix0 = ox * sw - pw;
                if (one && iy0 >= 0 && iy0 + (kh - 1) * dh < h && ix0 >= 0 &&
                    ix0 + (kw - 1) * dw < w) {
                    /* The whole window inside: the taps' fixed offsets (the odd last one's
                     * partner reads the first tap again, its weight 0). */
                    const uint8_t *at = x + ((b * h + iy0) * w + ix0) * xcs + c0;
                    for (int64_t t = 0; t < 2 * s.npairs; t++)
                        tp[t] = at + off[t];
                } else {
                    for (int64_t t = 2 * p0; t < 2 * p1; t++) {
                        int64_t iy = iy0 + t / kw * dh, ix = ix0 + t % kw * dw;
                        tp[t - 2 * p0] = t < s.taps && (uint64_t)iy < (uint64_t)h &&
                                                 (uint64_t)ix < (uint64_t)w
                                             ? x + ((b * h + iy) * w + ix) * xcs + c0
                                             : zrow;
                    }
                }
                if (x_flip)
                    pixel(&s, tp, wpair, p0, p1, c0, cn, acc, yp, 1);
                else
                    pixel(&s, tp, wpair, p0, p1, c0, cn, acc, yp, 0);
            }
        }
    }
}
