// qdwconv_avx2.c - Quantized 8-bit NHWC depthwise convolution with AVX2: taps in pairs, one
// vpmaddwd per pair and 8 channels. Same contract, packing (qdwpack.h) and work units as the
// template the AVX-512 variant uses (qdwconv_tmpl.h); qdwconv_scalar.c is the reference.
//
// Why not the template at 8 lanes: it widens each tap's 8 input bytes to int32 lanes and
// multiplies one tap per instruction (vpmaddwd with zero high halves): per 8 multiply-adds a
// widening load, an XOR, a multiply and an add, half the f32 FMA's rate. Pairing two taps' bytes
// as int16 pairs lets one vpmaddwd sum both taps' products for 8 channels.
//
// The row-pair path (most shapes, all of MobileNet's): kernel rows 2j and 2j + 1 form pair j
// (an odd last row is paired with a zero weight). Per work unit (an output row) and 16-channel
// block, the input rows the pairs read are widened once into a stack buffer, column by column,
// as int16 pairs (row 2j's byte, row 2j + 1's byte) of 16 channels, the pads as x_zero; then
// every output pixel sums, per pair and kernel column, one vpmaddwd of the buffer at its
// column with the pair's interleaved weights per 8 channels: no shuffle in the pixel loop, and
// one widening per input byte and pair instead of one per tap. 3x3: 12 vpmaddwd per pixel and
// 16 channels (the 3rd row's pair is half zero) plus 7 shuffles per buffer column. The previous
// form (each pixel's taps paired and widened in the pixel loop, 4 shuffles per 2 vpmaddwd) ran
// at 0.76x the f32 depthwise kernel; this one at 1.05x (docs/quantization.md).
// The other path (more than QDW_PK pairs x columns, or a strip under 4 pixels) pairs the taps
// of each pixel in order and widens them in the pixel loop.
//
// Exactness: an input is 0..255 (u8, i8 flipped, or x_zero in the pads), a packed weight
// w - z_w fits int16 (|w - z_w| <= 255), so a pair sum is at most 2 * 255 * 255 in magnitude,
// inside int32; the int32 accumulators wrap as the reference's.
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../q8.h"
#include "../qconv/qavx2.h"
#include "qdwpack.h"

#define GK_INLINE static inline __attribute__((always_inline))

#define QDW_PAIRS 32              /* tap pairs whose interleaved weights are on the stack */
#define QDW_G8 (GK_Q_CHUNK / 8)   /* 8-channel groups of a chunk */
#define QDW_COLS 256              /* columns of the row-pair path's buffer (2 ymm each: 16 KiB) */
#define QDW_PK 32                 /* most row pairs x kernel columns of the row-pair path */

/* 16 bytes at p, or the first n (< 16) and zeros. */
GK_INLINE __m128i load16(const uint8_t *p, int64_t n)
{
    if (n >= 16)
        return _mm_loadu_si128((const __m128i *)p);
    uint8_t t[16] = { 0 };
    memcpy(t, p, (size_t)n);
    return _mm_loadu_si128((const __m128i *)t);
}

/* The shape of one call. */
typedef struct {
    const uint8_t *x, *zrow;
    const int16_t *wp;
    const int32_t *bias;
    const float *mult;
    uint8_t *y;
    int64_t c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh, dw, ph, pw, cp, taps, npairs;
    int x_zero, y_zero, lo, hi;
} qdw;

/* The multipliers of the 16 channels from ch, m of them (zeros past m), in mv[0..1]. */
GK_INLINE void load_mult(const qdw *s, int64_t ch, int64_t m, __m256 *mv)
{
    float mt[16] = { 0 };
    const float *mp = s->mult + ch;
    if (m < 16) {
        memcpy(mt, mp, (size_t)m * sizeof(float));
        mp = mt;
    }
    mv[0] = _mm256_loadu_ps(mp);
    mv[1] = _mm256_loadu_ps(mp + 8);
}

/* The requantized 16 channels of accumulators a0 (channels 0-7) and a1 (8-15) with the
 * multipliers mv, as bytes at yp: the first m (all 16 when m >= 16). */
GK_INLINE void store16(const qdw *s, uint8_t *yp, const __m256 *mv, __m256i a0, __m256i a1,
                       int64_t m)
{
    /* gk_requant's integers (qavx2.h; the epilogue is about half of this kernel's time). */
    __m128i bytes = gk_qbytes16_avx2(_mm256_mul_ps(_mm256_cvtepi32_ps(a0), mv[0]),
                                     _mm256_mul_ps(_mm256_cvtepi32_ps(a1), mv[1]), s->y_zero,
                                     s->lo, s->hi);
    if (m >= 16) {
        _mm_storeu_si128((__m128i *)yp, bytes);
    } else {
        uint8_t t[16];
        _mm_storeu_si128((__m128i *)t, bytes);
        memcpy(yp, t, (size_t)m);
    }
}

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
        __m256 mv[2];
        load_mult(s, c0 + o, m, mv);
        store16(s, yp + o, mv, a0, a1, m);
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

/* --- The row-pair path (most shapes): the kernel rows in pairs, their inputs widened once per
 * output row and 16-channel block. --- */

/* The interleaved weights of a 16-channel block at channel cb: for row pair j (kernel rows 2j,
 * 2j + 1; a zero weight for a row past kh) and column kx, wv[(j * kw + kx) * 2 + half] holds
 * channels half * 8 .. + 7 as int16 pairs (row 2j, row 2j + 1). */
static void row_weights(const qdw *s, __m256i *wv, int64_t npr, int64_t cb)
{
    for (int64_t j = 0; j < npr; j++)
        for (int64_t kx = 0; kx < s->kw; kx++)
            for (int64_t half = 0; half < 2; half++) {
                const int16_t *wa = s->wp + (2 * j * s->kw + kx) * s->cp + cb + half * 8;
                __m128i va = _mm_loadu_si128((const __m128i *)wa);
                __m128i vb = 2 * j + 1 < s->kh
                                 ? _mm_loadu_si128((const __m128i *)(wa + s->kw * s->cp))
                                 : _mm_setzero_si128();
                wv[(j * s->kw + kx) * 2 + half] =
                    _mm256_set_m128i(_mm_unpackhi_epi16(va, vb), _mm_unpacklo_epi16(va, vb));
            }
}

/* The widened inputs of output row oy (image b) for the channels [cb, cb + m) (m <= 16; lanes
 * past m are zeros) and the input columns [ix0, ix0 + ncols): for row pair j and column i,
 * rb[(j * ncols + i) * 2 + half] holds channels half * 8 .. + 7 as int16 pairs (input row of
 * kernel row 2j, of kernel row 2j + 1), x_zero for a tap in the pads (rows and columns), 0 for
 * the row past an odd kh (its weight is 0). Bytes are flipped first for i8 inputs. */
static void row_build(const qdw *s, __m256i *rb, int64_t npr, int64_t b, int64_t oy, int64_t cb,
                      int64_t m, int64_t ix0, int64_t ncols, int flip)
{
    __m128i fv = _mm_set1_epi8((char)(flip ? 0x80 : 0)), zx = _mm_set1_epi8((char)s->x_zero);
    __m256i zpair = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(zx, zx));
    __m256i zone = _mm256_cvtepu8_epi32(zx);
    /* The columns inside the input: [i_lo, i_hi). */
    int64_t i_lo = ix0 < 0 ? -ix0 : 0, i_hi = s->w - ix0 < ncols ? s->w - ix0 : ncols;
    if (i_hi < i_lo)
        i_hi = i_lo;
    for (int64_t j = 0; j < npr; j++) {
        int64_t iya = oy * s->sh - s->ph + 2 * j * s->dh, iyb = iya + s->dh;
        bool has_b = 2 * j + 1 < s->kh;
        /* Input rows at their first inside column, or a row in the pads: zrow (x_zero as the
         * kernel reads it, before the flip), stepped by 0. */
        const uint8_t *pa = s->zrow, *pb = s->zrow;
        int64_t sa = 0, sb = 0, n = i_hi - i_lo;
        if (n > 0 && (uint64_t)iya < (uint64_t)s->h)
            pa = s->x + ((b * s->h + iya) * s->w + ix0 + i_lo) * s->xcs + cb, sa = s->xcs;
        if (n > 0 && has_b && (uint64_t)iyb < (uint64_t)s->h)
            pb = s->x + ((b * s->h + iyb) * s->w + ix0 + i_lo) * s->xcs + cb, sb = s->xcs;
        __m256i *r = rb + j * ncols * 2;
        __m256i zv = has_b ? zpair : zone;
        for (int64_t i = 0; i < i_lo; i++)
            r[2 * i] = r[2 * i + 1] = zv;
        for (int64_t i = i_hi; i < ncols; i++)
            r[2 * i] = r[2 * i + 1] = zv;
        r += 2 * i_lo;
        if (has_b) {
            for (int64_t i = 0; i < n; i++) {
                __m128i xa = _mm_xor_si128(load16(pa + i * sa, m), fv);
                __m128i xb = _mm_xor_si128(load16(pb + i * sb, m), fv);
                r[2 * i] = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(xa, xb));
                r[2 * i + 1] = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(xa, xb));
            }
        } else {
            /* A row alone: each byte zero-extended to the low half of an int32 pair. */
            for (int64_t i = 0; i < n; i++) {
                __m128i xa = _mm_xor_si128(load16(pa + i * sa, m), fv);
                r[2 * i] = _mm256_cvtepu8_epi32(xa);
                r[2 * i + 1] = _mm256_cvtepu8_epi32(_mm_srli_si128(xa, 8));
            }
        }
    }
}

/* Output pixels [ox0, ox0 + os) of row oy for the block at channel cb (m channels stored):
 * per pixel, one vpmaddwd per row pair, kernel column and 8 channels, the widened inputs at
 * column (ox - ox0) * sw + kx * dw of rb. NPR and KW are constants in the 3x3 instance (clang
 * unrolls the taps and keeps its 12 weight vectors in registers), 0 elsewhere (the shape's). */
GK_INLINE void row_pixels(const qdw *s, const __m256i *rb, const __m256i *wv, int64_t npr,
                          int64_t ncols, uint8_t *yp, int64_t cb, int64_t m, int64_t os,
                          const int NPR, const int KW)
{
    int64_t np = NPR ? NPR : npr, kw = KW ? KW : s->kw;
    __m256i b0 = _mm256_loadu_si256((const __m256i *)(s->bias + cb));
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(s->bias + cb + 8));
    __m256 mv[2];
    load_mult(s, cb, m, mv);
    for (int64_t o = 0; o < os; o++) {
        __m256i a0 = b0, a1 = b1;
        for (int64_t j = 0; j < np; j++)
            for (int64_t kx = 0; kx < kw; kx++) {
                const __m256i *v = rb + (j * ncols + o * s->sw + kx * s->dw) * 2;
                const __m256i *w = wv + (j * kw + kx) * 2;
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(v[0], w[0]));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(v[1], w[1]));
            }
        store16(s, yp + o * s->ycs, mv, a0, a1, m);
    }
}

/* One work unit (image b, output row oy, channels [c0, c0 + cn)) on the row-pair path: per
 * 16-channel block its weights interleaved, then per strip of at most `strip` output pixels
 * the inputs widened and the pixels computed. */
static void row_unit(const qdw *s, __m256i *rb, __m256i *wv, int64_t npr, int64_t strip,
                     int64_t b, int64_t oy, int64_t c0, int64_t cn, int flip)
{
    bool k3 = npr == 2 && s->kw == 3;
    for (int64_t o = 0; o < cn; o += 16) {
        int64_t cb = c0 + o, m = cn - o < 16 ? cn - o : 16;
        row_weights(s, wv, npr, cb);
        for (int64_t ox0 = 0; ox0 < s->ow; ox0 += strip) {
            int64_t os = s->ow - ox0 < strip ? s->ow - ox0 : strip;
            int64_t ncols = (os - 1) * s->sw + (s->kw - 1) * s->dw + 1;
            row_build(s, rb, npr, b, oy, cb, m, ox0 * s->sw - s->pw, ncols, flip);
            uint8_t *yp = s->y + ((b * s->oh + oy) * s->ow + ox0) * s->ycs + cb;
            if (k3)
                row_pixels(s, rb, wv, npr, ncols, yp, cb, m, os, 2, 3);
            else
                row_pixels(s, rb, wv, npr, ncols, yp, cb, m, os, 0, 0);
        }
    }
}

void gk_qdwconv_q8_avx2(const uint8_t *x, const int16_t *wp, const int32_t *bias,
                        const float *mult, uint8_t *y, int x_flip, int x_zero, int y_zero, int lo,
                        int hi, int64_t n, int64_t c, int64_t h, int64_t w, int64_t xcs,
                        int64_t oh, int64_t ow, int64_t ycs, int64_t kh, int64_t kw, int64_t sh,
                        int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                        unsigned *work, int tid, int nthreads)
{
    gk_units it;
    int64_t chunks = gk_q_units_of(n, oh, c, work, tid, nthreads, &it);
    /* The padding value as the kernel reads it (flipped on load like the input). */
    uint8_t zrow[GK_Q_CHUNK + 16];
    memset(zrow, (x_zero ^ (x_flip ? 0x80 : 0)) & 0xff, sizeof zrow);
    qdw s = { x, zrow, wp, bias, mult, y, c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh, dw, ph,
              pw, gk_qdw_cpad(c), kh * kw, (kh * kw + 1) / 2, x_zero, y_zero, lo, hi };
    /* The row-pair path when its weights fit in wv and a strip holds at least 4 pixels. */
    int64_t npr = (kh + 1) / 2, ncols = QDW_COLS / npr - (kw - 1) * dw - 1;
    int64_t strip = ncols < 0 ? 0 : ncols / sw + 1;
    if (npr * kw <= QDW_PK && strip >= 4) {
        __m256i rb[QDW_COLS * 2], wv[QDW_PK * 2];
        for (size_t uu; gk_units_next(&it, &uu);) {
            int64_t u = (int64_t)uu, r = u / chunks, c0 = u % chunks * GK_Q_CHUNK;
            row_unit(&s, rb, wv, npr, strip, r / oh, r % oh, c0,
                     c - c0 < GK_Q_CHUNK ? c - c0 : GK_Q_CHUNK, x_flip);
        }
        return;
    }
    __m256i wpair[QDW_PAIRS][QDW_G8];
    __m256i acc[QDW_G8];
    const uint8_t *tp[2 * QDW_PAIRS];
    int64_t off[2 * QDW_PAIRS];
    bool have_off = false;
    for (size_t uu; gk_units_next(&it, &uu);) {
        int64_t u = (int64_t)uu, r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, cn = c - c0 < GK_Q_CHUNK ? c - c0 : GK_Q_CHUNK;
        /* 8-channel groups with weights: whole 16-channel blocks, inside the packed cp. */
        int64_t g8 = (cn + 15) / 16 * 2;
        /* Up to QDW_PAIRS pairs (64 taps) the weights are interleaved once per unit; a larger
         * kernel interleaves them per pixel and batch of pairs. */
        bool one = s.npairs <= QDW_PAIRS;
        if (one)
            interleave(&s, wpair, 0, s.npairs, c0, g8);
        if (one && !have_off) {
            for (int64_t t = 0; t < 2 * s.npairs; t++)
                off[t] = t < s.taps ? (t / kw * dh * w + t % kw * dw) * xcs : 0;
            have_off = true;
        }
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
