// qavx2.h - The pieces the AVX2 int8 convolutions share (qconv_avx2.c, the direct kernel, and
// qwino_avx2.c, Winograd F(2x2,3x3)): the register tile's dot products over int16 rows
// (vpmaddwd), the requantization of a block of 8 int32 accumulators, the store of two pixels'
// bytes, a block's bias and multipliers, and the split of the output blocks into groups.
// Included by AVX2 kernel files only (static inline, -mavx2).
#ifndef GK_QAVX2_H
#define GK_QAVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "qres.h"

#ifndef GK_INLINE
#define GK_INLINE static inline __attribute__((always_inline))
#endif

/* The requantization of one call: y_lo/y_hi less y_zero as floats, the folded rescale
 * (post_mult != 0) with its range less post_zero, and the folded residual Add (res.res != NULL,
 * qres.h) of qconv_tmpl.h's contract. */
typedef struct {
    float f_lo, f_hi, post_mult, pf_lo, pf_hi;
    int y_zero, post_zero;
    gk_qres res;
} gk_qreq_avx2;

static inline gk_qreq_avx2 gk_qreq_avx2_of(int y_zero, int y_lo, int y_hi, float post_mult,
                                           int post_zero, int post_i8, const uint8_t *res,
                                           const float *rq, int rmode)
{
    gk_qreq_avx2 r = { (float)(y_lo - y_zero), (float)(y_hi - y_zero), post_mult,
                       (float)((post_i8 ? -128 : 0) - post_zero),
                       (float)((post_i8 ? 127 : 255) - post_zero), y_zero, post_zero,
                       gk_qres_of(res, rq, rmode) };
    return r;
}

/* The first n (< 8) bytes at p as the low bytes of an integer, and the low n bytes of v stored
 * at p, one byte at a time: a memcpy of a variable length is a library call, and a call in a
 * tile's store clobbers every vector register, so the tile's accumulators lived on the stack
 * around it, for whole blocks too. */
GK_INLINE uint64_t gk_qload_part(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

GK_INLINE void gk_qstore_part(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The first `count` (<= 8) residual bytes at rp less their zero point, as floats. A partial
 * block reads no byte past its channels: past them lie the next pixel's, which another thread
 * may be writing. */
GK_INLINE __m256 gk_qres_load_avx2(const uint8_t *rp, int count, const gk_qres *q)
{
    __m128i b = count == 8 ? _mm_loadl_epi64((const __m128i *)rp)
                           : _mm_cvtsi64_si128((long long)gk_qload_part(rp, count));
    __m256i v = q->r_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(v, _mm256_set1_epi32(q->r_zero)));
}

/* The residual Add (qres.h) on one block: f is the convolution's product clamped to [f_lo,
 * f_hi] (its byte less y_zero, before rounding); the result is the product to round into
 * o_zero and [o_lo, o_hi], as gk_qres_apply computes it: the rounded f times ma plus the
 * residual times mb (two products and a sum, each rounded as there: the kernels build with
 * -ffp-contract=off), then, with a rescale after the Add, clamped to the Add's range less its
 * zero point (the same integers as clamping after rounding: the bounds are integers), rounded
 * and times p_mult. roundps rounds to nearest even, as gk_q_round. */
GK_INLINE __m256 gk_qres_avx2(__m256 f, const uint8_t *rp, int count, const gk_qres *q)
{
    __m256 s = _mm256_add_ps(_mm256_mul_ps(_mm256_round_ps(f, GK_QNEAR), _mm256_set1_ps(q->ma)),
                             _mm256_mul_ps(gk_qres_load_avx2(rp, count, q),
                                           _mm256_set1_ps(q->mb)));
    if (!q->post)
        return s;
    s = _mm256_min_ps(_mm256_max_ps(s, _mm256_set1_ps((float)(q->a_lo - q->a_zero))),
                      _mm256_set1_ps((float)(q->a_hi - q->a_zero)));
    return _mm256_mul_ps(_mm256_round_ps(s, GK_QNEAR), _mm256_set1_ps(q->p_mult));
}

/* gk_qres_avx2 on f, then rounded into the stored byte's zero point and range: the block's
 * result lanes, in [o_lo, o_hi]. */
GK_INLINE __m256i gk_qres_round_avx2(__m256 f, const uint8_t *rp, int count, const gk_qres *q)
{
    f = gk_qres_avx2(f, rp, count, q);
    f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps((float)(q->o_lo - q->o_zero))),
                      _mm256_set1_ps((float)(q->o_hi - q->o_zero)));
    return _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(q->o_zero));
}

/* The pixels (or tiles) of unit t when `total` are split into `parts` runs as t * total /
 * parts: total / parts or one more. The value is `live` itself, written as a choice between
 * those two so that, with the shape constant, the kernels' dispatch on it keeps two tile
 * widths and folds the others away (all seven were compiled: over a second of code generation
 * for each 3x3 layer of ResNet-50). */
GK_INLINE int gk_qlive_avx2(int live, int64_t total, int64_t parts)
{
    return live > total / parts ? (int)((total + parts - 1) / parts) : (int)(total / parts);
}

/* One accumulator per pixel (8 outputs in order), named so that they stay in registers. */
#define QREP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define QACC_LOAD(p)                                                                         \
    __m256i a##p = acc[p];                                                                   \
    const int16_t *b##p = row[p];
#define QACC_DOT(p)                                                                          \
    if (p < NP) {                                                                            \
        int32_t v_;                                                                          \
        memcpy(&v_, b##p + i, 4);                                                            \
        a##p = _mm256_add_epi32(a##p, _mm256_madd_epi16(_mm256_set1_epi32(v_), wv));         \
    }
#define QACC_SAVE(p)                                                                         \
    if (p < NP)                                                                              \
        acc[p] = a##p;

/* acc (one per pixel, NP <= 12 a constant) += the dot products of kn int16 elements of each
 * pixel's row with one block's weights: per 2 elements, 8 outputs x 2 channels, as s8 from w
 * (sign-extended on load), or as int16 when w16 (a constant). */
GK_INLINE void gk_qdot_avx2(__m256i *acc, const int16_t *const *row, const void *w, int64_t kn,
                            const int NP, const bool w16)
{
    QREP12(QACC_LOAD)
    for (int64_t i = 0; i < kn; i += 2) {
        __m256i wv = w16 ? _mm256_loadu_si256((const __m256i *)((const int16_t *)w + i * 8))
                         : _mm256_cvtepi8_epi16(
                               _mm_loadu_si128((const __m128i *)((const int8_t *)w + i * 8)));
        QREP12(QACC_DOT)
    }
    QREP12(QACC_SAVE)
}

#undef QACC_LOAD
#undef QACC_DOT
#undef QACC_SAVE

/* Requantization of one pixel's block (its accumulators started from the bias): exactly
 * gk_requant per lane, then the residual Add of the `count` channels at byte `at` of the
 * residual (the block's place in y) when there is one. gk_requant rounds the product clamped
 * to +-2^22, adds the zero point and saturates to [lo, hi]; clamping the product to [lo -
 * zero, hi - zero] instead and adding the zero point after rounding gives the same integers,
 * since those bounds are integers inside +-2^22 and rounding is monotonic. cvtps2dq rounds to
 * nearest even under the default MXCSR. The result lanes lie in [lo, hi], inside -128..255. */
GK_INLINE __m256i gk_qrequant_avx2(__m256i acc, __m256 mv, const gk_qreq_avx2 *r, int64_t at,
                                   int count)
{
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), mv);
    f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(r->f_lo)), _mm256_set1_ps(r->f_hi));
    if (r->res.res)
        return gk_qres_round_avx2(f, r->res.res + at, count, &r->res);
    if (r->post_mult != 0.0f) {
        /* The rounded product before the zero point was added, rescaled once more. */
        f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtps_epi32(f)),
                          _mm256_set1_ps(r->post_mult));
        f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(r->pf_lo)), _mm256_set1_ps(r->pf_hi));
        return _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(r->post_zero));
    }
    return _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(r->y_zero));
}

/* The bytes of 16 products, f0's lanes then f1's, requantized to exactly gk_requant's
 * integers with zero point `zero` and range [lo, hi], in fewer steps than q_round_sat's
 * clamps: the product clamped above only, to hi - zero (an integer: rounding it, or any
 * product beyond it, gives hi - zero, as rounding then clamping would; without it a product
 * of 2^31 or more would round to INT_MIN); rounded (to nearest even); saturated to int16, the
 * zero point added with saturation; saturated to bytes, and [lo, hi] applied to the bytes. A
 * product under -2^15 (or under -2^31, which cvtps2dq makes INT_MIN) saturates to the bytes'
 * floor and the clamp lifts it to lo, as the reference's clamp to -GK_Q_LIMIT and then to lo
 * does. Bytes saturate unsigned when lo >= 0 (every result is then 0..255), else signed (an
 * i8 result). 10 vector instructions for 16 outputs where both clamps in float and the zero
 * point in int32 take 11. Used by the int8 depthwise kernel's epilogue (about half its time)
 * and the AVX2 conv tile's two-pixel store (qconv_tmpl.h). */
GK_INLINE __m128i gk_qbytes16_avx2(__m256 f0, __m256 f1, int zero, int lo, int hi)
{
    __m256 fhi = _mm256_set1_ps((float)(hi - zero));
    f0 = _mm256_min_ps(f0, fhi);
    f1 = _mm256_min_ps(f1, fhi);
    /* Per 128-bit lane the int16 are f0's 0-3, f1's 0-3 (low lane) and 4-7, 4-7 (high). */
    __m256i w16 = _mm256_packs_epi32(_mm256_cvtps_epi32(f0), _mm256_cvtps_epi32(f1));
    w16 = _mm256_adds_epi16(w16, _mm256_set1_epi16((int16_t)zero));
    bool u = lo >= 0;
    __m256i w8 = u ? _mm256_packus_epi16(w16, w16) : _mm256_packs_epi16(w16, w16);
    /* Dwords 0 and 4 are f0's bytes 0-3 and 4-7, 1 and 5 f1's. */
    __m128i b = _mm256_castsi256_si128(
        _mm256_permutevar8x32_epi32(w8, _mm256_setr_epi32(0, 4, 1, 5, 0, 4, 1, 5)));
    __m128i l = _mm_set1_epi8((char)lo), h = _mm_set1_epi8((char)hi);
    return u ? _mm_min_epu8(_mm_max_epu8(b, l), h) : _mm_min_epi8(_mm_max_epi8(b, l), h);
}

/* Two pixels' bytes v (pixel 0's 8, then pixel 1's): the first `count` of each at y0 and y1
 * (y1 NULL: pixel 0's alone). Also the store of qconv_tmpl.h's two-pixel epilogue. */
GK_INLINE void gk_qstore_bytes2_avx2(uint8_t *y0, uint8_t *y1, __m128i v, int count)
{
    if (count == 8) {
        _mm_storel_epi64((__m128i *)y0, v);
        if (y1)
            _mm_storel_epi64((__m128i *)y1, _mm_unpackhi_epi64(v, v)); /* unaligned-safe */
    } else {
        gk_qstore_part(y0, (uint64_t)_mm_cvtsi128_si64(v), count);
        if (y1)
            gk_qstore_part(y1, (uint64_t)_mm_extract_epi64(v, 1), count);
    }
}

/* The first `count` channels of two pixels' requantized blocks r0, r1 (y1 NULL: r0 alone) as
 * bytes: the low byte of each lane, which is the u8 or i8 value. The pack to int16 is exact
 * (every lane is within -128..255); one shuffle picks each int16's low byte and one permute
 * puts each pixel's 8 bytes together, 3 shuffles for two pixels. */
GK_INLINE void gk_qstore2_avx2(uint8_t *y0, uint8_t *y1, __m256i r0, __m256i r1, int count)
{
    __m256i w = _mm256_packs_epi32(r0, r1); /* r0 0-3, r1 0-3 | r0 4-7, r1 4-7 */
    __m256i sel = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1,
                                   0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    __m256i b = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, sel),
                                            _mm256_setr_epi32(0, 4, 1, 5, 2, 3, 6, 7));
    gk_qstore_bytes2_avx2(y0, y1, _mm256_castsi256_si128(b), count); /* r0 0-7, r1 0-7 */
}

/* Output block mb's bias and multipliers (zeros past the m channels); returns how many of its
 * 8 channels are real. */
GK_INLINE int gk_qblock_avx2(const int32_t *bias, const float *mult, int64_t m, int64_t mb,
                             __m256i *bv, __m256 *mv)
{
    int64_t m0 = mb * 8;
    int count = m - m0 < 8 ? (int)(m - m0) : 8;
    if (count == 8) {
        *bv = _mm256_loadu_si256((const __m256i *)(bias + m0));
        *mv = _mm256_loadu_ps(mult + m0);
        return count;
    }
    int32_t bt[8] = { 0 };
    float mt[8] = { 0 };
    memcpy(bt, bias + m0, (size_t)count * sizeof(int32_t));
    memcpy(mt, mult + m0, (size_t)count * sizeof(float));
    *bv = _mm256_loadu_si256((const __m256i *)bt);
    *mv = _mm256_loadu_ps(mt);
    return count;
}

/* How many groups of output blocks split the work: the fewest of at most qg blocks each (a
 * widened tile serves all of a group's blocks), more when the units (groups x tiles) would
 * share out unevenly between the threads. Small late layers have few tiles (7x7: 5), and
 * 5 units of one group on 2 threads keep one thread idle a third of the time. With 20 units
 * per thread or an even share (within 1/8) the split stays; groups never go below 2 blocks
 * (a group of 1 block widens a tile for 12 vpmaddwd per element pair, i.e. as often as it
 * computes). The bytes are the same whatever the split. */
static inline int64_t gk_qgroups_avx2(int64_t mblocks, int64_t tiles, int nthreads, int qg)
{
    int64_t groups = (mblocks + qg - 1) / qg;
    for (int64_t g = groups; g <= (mblocks + 1) / 2; g++) {
        int64_t units = g * tiles, most = (units + nthreads - 1) / nthreads;
        if (units >= 20 * (int64_t)nthreads || most * nthreads * 8 <= units * 9)
            return g;
    }
    return groups;
}

#endif
