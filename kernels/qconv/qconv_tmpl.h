// qconv_tmpl.h - Int8 convolution (group 1) on NHWC bytes, written once for the SIMD variants:
// qconv_avx512vnni.c (16 output channels per zmm, vpdpbusd) and qconv_avxvnni.c (8 per ymm, the
// VEX vpdpbusd). qconv_avx2.c (vpmaddwd, no VNNI) has its own tile code for the same contract,
// and qconv_scalar.c is its plain-C reference.
//
// Contract (kernels.def row qconv u8):
// - x is [N][H][W][xcs] bytes: channels [0, C) are data, xcs >= C, xcs % 4 == 0; the bytes
//   [C, xcs) are arbitrary (the packed weights are 0 there). y is [N][OH][OW][ycs], ycs >= M;
//   the kernel writes channels [0, M) of each pixel and nothing else.
// - x bytes are u8; with x_flip = 1 they are i8 and are XORed with 0x80 on load (i8 v becomes
//   u8 v + 128; the caller passes x_zero already shifted by 128). Weights are s8, packed by
//   gk_qpack_conv (qpack.h, which also documents the layout and each row's block, vlen).
// - For each output pixel and channel m: acc = bias[m] + sum over the KH*KW*C taps of x~ * w,
//   where x~ is the input byte (after the flip) or x_zero for taps in the padding, and bias is
//   the packer's corrected bias (bias_in - x_zero * sum w), so acc = bias_in + sum((x - zx) w).
//   y = gk_requant(acc, mult[m], y_zero, y_lo, y_hi) (qmath.h) stored as one byte: [y_lo, y_hi]
//   is the kind's range (0..255 for u8, -128..127 for i8) narrowed by a fused Relu or Clip.
// - post_mult != 0 folds a RescaleQuantized of the result in: the byte stored is
//   gk_requant(y - y_zero, post_mult, post_zero, lo, hi) of that y, [lo, hi] the range of i8
//   (post_i8) or u8. res != NULL instead folds a residual Add (and the rescale after it) in:
//   the byte stored is gk_qres_apply of y and the residual byte at y's place (qres.h).
// - Pads are top/left ph/pw; bottom/right follow from oh/ow. Dilations dh/dw, strides sh/sw.
// - The U units (output-channel block pair x tile of output pixels) are shared as units.h's
//   gk_units shares them: work NULL, thread tid computes [tid * U / nthreads, (tid + 1) * U /
//   nthreads); with a counter (zero before the call), the threads take guided runs from it.
//   Every unit is computed the same way whoever runs it, so results are identical for every
//   thread count. No allocation: the one stack array is a QZ-byte row of the padding value.
//
// Approach: a register tile of NM (1 or 2) output-channel blocks of QV lanes times NP output
// pixels (AVX-512: 2 x 12 zmm accumulators). For each tap and each 4 input channels it loads NM
// weight vectors (4 channels x QV outputs) and broadcasts 4 input bytes per pixel: one
// broadcast feeds NM dot products and one weight vector NP. The tile's pixels are consecutive
// in the flattened [N][OH][OW] output (a tile may cross rows and images: fully connected
// layers with a batch are 1x1 pixels in a row), each with its own input pointer per tap; a tap
// in the padding points the pixel at `zrow`, bytes holding x_zero (pre-flipped), so padding
// costs no branch in the dot-product loop and contributes exactly x_zero * w. Taps whose
// channels exceed QZ bytes are walked in chunks of QZ so that the row stays bounded. Tail
// tiles compute NP in {QNP, QNP_MID, 4, 2, 1} pixels, the missing ones repeating the last
// pixel (never stored). 1x1 stride-1 unpadded convolutions and FC layers (GEMMs over pixels)
// take a tile of their own without the per-tap pointer setup (q_tile_rows).
//
// The ISA file defines, before including this: QV (lanes = output channels per block), QNP
// (pixels per tile), QNP_MID, QNM (1 or 2 blocks per tile), GK_QFN (the kernel's name), the
// types qacc (an accumulator), qwt (one weight vector) and qxv (one broadcast), and
// q_zero(), q_wload(p), q_xload(p, flip), q_dot(acc, x, w) and q_sum(acc) -> qi32 (QV int32
// lanes in channel order).
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../kernels.h"
#include "../qmath.h"
#include "../units.h"
#include "qres.h"

#define QZ 4096 /* bytes of the padding row: channel chunk of one tap */
#define QPATCH 1024 /* most bytes of one pixel's gathered taps (q_tile_rows) */
#define QWL1 (24 * 1024) /* most weight bytes walked tile by tile (half of a 48 KiB L1) */
#ifndef GK_INLINE
#define GK_INLINE static inline __attribute__((always_inline))
#endif

/* The shape of one call, shared by the tiles. */
typedef struct {
    const uint8_t *x, *zrow;
    const int8_t *wp;
    uint8_t *y;
    int64_t h, w, xcs, m, ycs, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw;
    int64_t cbytes; /* C rounded up to a multiple of 4: bytes per tap of one pixel */
    int64_t wblock; /* bytes between output blocks of the packed weights */
    int y_zero;
    float f_lo, f_hi; /* y_lo - y_zero, y_hi - y_zero */
    /* The folded rescale (post_mult != 0), its range as f_lo/f_hi. */
    float post_mult, pf_lo, pf_hi;
    int post_zero;
    gk_qres res; /* a folded residual Add (res.res != NULL; qres.h) */
    /* A kernel row's taps are one run of kw * cbytes bytes in the input as in the weights
     * (dw == 1, xcs == cbytes), walked as one tap where a tile's pixels have all of it. */
    int fuse_row;
    /* 1x1, stride 1, no padding: pixel q's input is x + q * xcs (a GEMM over pixels). */
    int gemm;
    /* Gather each pixel's taps into `patch` and run them as one GEMM row (q_tile_rows):
     * kbytes = kh * kw * cbytes bytes per pixel, at most QPATCH. */
    int use_patch;
    int64_t kbytes;
    uint8_t *patch;
} qshape;

/* The bias and multipliers of a tile's output blocks, and how many channels each stores. */
typedef struct {
    const int32_t *bias[2];
    const float *mult[2];
    int count[2];
} qblocks;

/* --- Requantization of QV int32 lanes plus the bias and the store of the first `count`
 * bytes: exactly gk_requant per lane. gk_requant rounds the product clamped to +-2^22, adds
 * the zero point and saturates to [lo, hi]; clamping the product to [lo - zero, hi - zero]
 * instead and adding the zero point after rounding gives the same integers, since those
 * bounds are integers inside +-2^22 and rounding is monotonic (an integer rounds to itself).
 * cvtps2dq rounds to nearest even under the default MXCSR. (Starting the accumulators from
 * the bias instead of adding it here made gcc keep most of them on the stack in the tile's
 * loop, 2x slower, for one add saved per vector.) --- */
#if QV == 16
typedef __m512i qi32;

/* gk_qres_avx2 (qavx2.h) on 16 lanes: the residual Add of the first `count` channels at rp on
 * f, the convolution's clamped product; a masked load reads no byte past them. roundscale
 * with immediate 8 rounds to an integer, to nearest even. */
GK_INLINE __m512 q_res16(__m512 f, const uint8_t *rp, int count, const gk_qres *q)
{
    __m128i b = _mm_maskz_loadu_epi8((__mmask16)((1u << count) - 1), rp);
    __m512i v = q->r_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    __m512 rv = _mm512_cvtepi32_ps(_mm512_sub_epi32(v, _mm512_set1_epi32(q->r_zero)));
    __m512 d = _mm512_roundscale_ps(f, GK_QNEAR);
    __m512 sum = _mm512_add_ps(_mm512_mul_ps(d, _mm512_set1_ps(q->ma)),
                               _mm512_mul_ps(rv, _mm512_set1_ps(q->mb)));
    if (!q->post)
        return sum;
    sum = _mm512_min_ps(_mm512_max_ps(sum, _mm512_set1_ps((float)(q->a_lo - q->a_zero))),
                        _mm512_set1_ps((float)(q->a_hi - q->a_zero)));
    return _mm512_mul_ps(_mm512_roundscale_ps(sum, GK_QNEAR), _mm512_set1_ps(q->p_mult));
}

GK_INLINE void q_store(uint8_t *y, qi32 acc, const int32_t *bias, const float *mult,
                       const qshape *s, int count)
{
    __m512i a = _mm512_add_epi32(acc, _mm512_loadu_si512(bias));
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_loadu_ps(mult));
    f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(s->f_lo)), _mm512_set1_ps(s->f_hi));
    __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(s->y_zero));
    if (s->res.res) {
        const gk_qres *q = &s->res;
        f = q_res16(f, q->res + (y - s->y), count, q);
        f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps((float)(q->o_lo - q->o_zero))),
                          _mm512_set1_ps((float)(q->o_hi - q->o_zero)));
        r = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(q->o_zero));
    } else if (s->post_mult != 0.0f) {
        /* r - y_zero is the rounded product before the zero point was added. */
        f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtps_epi32(f)), _mm512_set1_ps(s->post_mult));
        f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(s->pf_lo)), _mm512_set1_ps(s->pf_hi));
        r = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(s->post_zero));
    }
    /* vpmovdb keeps the low byte: the value itself for u8 and i8 results alike. */
    _mm512_mask_cvtepi32_storeu_epi8(y, (__mmask16)((1u << count) - 1), r);
}
#else
#include "qavx2.h"

typedef __m256i qi32;

GK_INLINE void q_store(uint8_t *y, qi32 acc, const int32_t *bias, const float *mult,
                       const qshape *s, int count)
{
    __m256i a = _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)bias));
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_loadu_ps(mult));
    f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(s->f_lo)), _mm256_set1_ps(s->f_hi));
    __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(s->y_zero));
    if (s->res.res) {
        r = gk_qres_round_avx2(f, s->res.res + (y - s->y), count, &s->res);
    } else if (s->post_mult != 0.0f) {
        /* r - y_zero is the rounded product before the zero point was added. */
        f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtps_epi32(f)), _mm256_set1_ps(s->post_mult));
        f = _mm256_min_ps(_mm256_max_ps(f, _mm256_set1_ps(s->pf_lo)), _mm256_set1_ps(s->pf_hi));
        r = _mm256_add_epi32(_mm256_cvtps_epi32(f), _mm256_set1_epi32(s->post_zero));
    }
    /* The low byte of each lane: bytes 0, 4, 8, 12 of each 128-bit half, then both halves. */
    __m256i sel = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                   0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    __m256i b = _mm256_shuffle_epi8(r, sel);
    __m128i bytes = _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    if (count == 8)
        _mm_storel_epi64((__m128i *)y, bytes);
    else
        gk_qstore_part(y, (uint64_t)_mm_cvtsi128_si64(bytes), count);
}

/* Two pixels' blocks at once (y1 NULL: the first alone), the same bytes as q_store on each.
 * Without a folded rescale (with or without a residual), through gk_qbytes16_avx2 (qavx2.h):
 * 16 vector instructions for the 16 outputs where two q_stores take 20. The 1x1 expansions'
 * short reductions (16-64 bytes) leave the requantization a large share of their time. */
GK_INLINE void q_store2(uint8_t *y0, uint8_t *y1, qi32 acc0, qi32 acc1, const int32_t *bias,
                        const float *mult, const qshape *s, int count)
{
    __m128i bytes;
    if (s->post_mult != 0.0f) {
        uint8_t t[16];
        q_store(t, acc0, bias, mult, s, 8);
        q_store(t + 8, acc1, bias, mult, s, 8);
        bytes = _mm_loadu_si128((const __m128i *)t);
    } else {
        __m256i bv = _mm256_loadu_si256((const __m256i *)bias);
        __m256 mv = _mm256_loadu_ps(mult);
        __m256 f0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc0, bv)), mv);
        __m256 f1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc1, bv)), mv);
        if (s->res.res) {
            /* The convolution's bytes exactly (both clamps), then the residual's step; pixel
             * 1's residual is read only when it is stored. */
            const gk_qres *q = &s->res;
            __m256 lo = _mm256_set1_ps(s->f_lo), hi = _mm256_set1_ps(s->f_hi);
            int64_t at = y0 - s->y;
            f0 = gk_qres_avx2(_mm256_min_ps(_mm256_max_ps(f0, lo), hi), q->res + at, count, q);
            f1 = gk_qres_avx2(_mm256_min_ps(_mm256_max_ps(f1, lo), hi),
                              q->res + (y1 ? y1 - s->y : at), count, q);
            bytes = gk_qbytes16_avx2(f0, f1, q->o_zero, q->o_lo, q->o_hi);
        } else {
            /* f_lo and f_hi are y_lo - y_zero and y_hi - y_zero, integers. */
            bytes = gk_qbytes16_avx2(f0, f1, s->y_zero, (int)s->f_lo + s->y_zero,
                                     (int)s->f_hi + s->y_zero);
        }
    }
    gk_qstore_bytes2_avx2(y0, y1, bytes, count);
}
#endif

/* The tile names its registers per pixel (a0_<p>, a1_<p>: output block 0 / 1) instead of
 * using arrays and guards each pixel with `p < NP`: with NM and NP constants they stay in
 * registers whatever the compiler unrolls (as in conv_tmpl.h). QNP <= 12. */
#define Q_REP12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

#define QPIX_DECL(p)                                                                         \
    const uint8_t *img##p = s->x, *pt##p = s->zrow;                                          \
    int64_t iy##p = 0, ix##p = 0;                                                            \
    qacc a0_##p = q_zero(), a1_##p = q_zero();
/* Pixel p of the tile (the last live one again past `live`): its image and the input row and
 * column of its top-left tap; (qn, qy, qx) steps from pixel to pixel without dividing. */
#define QPIX_INIT(p)                                                                         \
    if (p < NP) {                                                                            \
        img##p = s->x + qn * s->h * s->w * s->xcs;                                           \
        iy##p = qy * s->sh - s->ph;                                                          \
        ix##p = qx * s->sw - s->pw;                                                          \
        if (p + 1 < live && ++qx == s->ow) {                                                 \
            qx = 0;                                                                          \
            if (++qy == s->oh)                                                               \
                qy = 0, qn++;                                                                \
        }                                                                                    \
    }
/* Pixel p's bytes of kernel row ky when all its kw taps are inside the input; all_in says
 * whether every pixel's are. */
#define QPIX_ROW(p)                                                                          \
    if (p < NP) {                                                                            \
        int64_t y_ = iy##p + ky * s->dh, x_ = ix##p;                                         \
        bool in_ = (uint64_t)y_ < (uint64_t)s->h && x_ >= 0 && x_ + s->kw <= s->w;           \
        pt##p = in_ ? img##p + (y_ * s->w + x_) * s->xcs : s->zrow;                          \
        all_in &= in_;                                                                       \
    }
/* Pixel p's bytes of tap (ky, kx), channel chunk c0, or the padding row. */
#define QPIX_PTR(p)                                                                          \
    if (p < NP) {                                                                            \
        int64_t y_ = iy##p + ky * s->dh, x_ = ix##p + kx * s->dw;                            \
        pt##p = (uint64_t)y_ < (uint64_t)s->h && (uint64_t)x_ < (uint64_t)s->w               \
                    ? img##p + (y_ * s->w + x_) * s->xcs + c0                                \
                    : s->zrow;                                                               \
    }
#define QPIX_DOT(p)                                                                          \
    if (p < NP) {                                                                            \
        qxv v_ = q_xload(pt##p + c, FLIP);                                                   \
        a0_##p = q_dot(a0_##p, v_, w0);                                                      \
        if (NM > 1)                                                                          \
            a1_##p = q_dot(a1_##p, v_, w1);                                                  \
    }
#define QPIX_STORE(p)                                                                        \
    if (p < NP && p < live) {                                                                \
        uint8_t *y_ = s->y + (q0 + p) * s->ycs + mb0 * QV;                                   \
        q_store(y_, q_sum(a0_##p), bk->bias[0], bk->mult[0], s, bk->count[0]);               \
        if (NM > 1)                                                                          \
            q_store(y_ + QV, q_sum(a1_##p), bk->bias[1], bk->mult[1], s, bk->count[1]);      \
    }
/* Pixels p and p1 = p + 1 (QV == 8): q_store2 on the pair, p alone when p1 is past the tile. */
#define QPIX_STORE2(p, p1)                                                                   \
    if (p < NP && p < live) {                                                                \
        uint8_t *y_ = s->y + (q0 + p) * s->ycs + mb0 * QV;                                   \
        uint8_t *y1_ = p1 < NP && p1 < live ? y_ + s->ycs : NULL;                            \
        q_store2(y_, y1_, q_sum(a0_##p), q_sum(a0_##p1), bk->bias[0], bk->mult[0], s,         \
                 bk->count[0]);                                                              \
        if (NM > 1)                                                                          \
            q_store2(y_ + QV, y1_ ? y1_ + QV : NULL, q_sum(a1_##p), q_sum(a1_##p1),          \
                     bk->bias[1], bk->mult[1], s, bk->count[1]);                             \
    }
#if QV == 16
#define Q_STORE_TILE Q_REP12(QPIX_STORE)
#else
#define Q_STORE_TILE                                                                         \
    QPIX_STORE2(0, 1) QPIX_STORE2(2, 3) QPIX_STORE2(4, 5) QPIX_STORE2(6, 7) QPIX_STORE2(8, 9)  \
    QPIX_STORE2(10, 11)
#endif
/* The dot products of `bytes` consecutive channel bytes from the pixels' pointers, with the
 * weights from wt (and wt + wblock for the second output block). Never unrolled: with the
 * shapes constant, clang-14 unrolls short runs whole (a 3x3 row of 16 channels: 12 steps) and
 * hoists the later steps' weight loads and broadcasts, which spills the accumulators (SqueezeNet's
 * first layer and 3x3 16->64 layers ran at half the speed of the same kernel built by gcc). */
#define QDOT_RUN(wt, bytes)                                                                  \
    _Pragma("GCC unroll 1")                                                                  \
    for (int64_t c = 0; c < (bytes); c += 4) {                                               \
        qwt w0 = q_wload((wt) + c * QV);                                                     \
        qwt w1 = NM > 1 ? q_wload((wt) + s->wblock + c * QV) : w0;                           \
        Q_REP12(QPIX_DOT)                                                                    \
    }

/* Output pixels [q0, q0 + live) (live <= NP) of output blocks mb0 .. mb0 + NM - 1. */
GK_INLINE void q_tile(const qshape *s, const qblocks *bk, int64_t q0, int live, int64_t mb0,
                      const int NM, const int NP, const int FLIP)
{
    int64_t ohw = s->oh * s->ow, c0 = 0;
    int64_t qn = q0 / ohw, qy = q0 % ohw / s->ow, qx = q0 % s->ow;
    Q_REP12(QPIX_DECL)
    Q_REP12(QPIX_INIT)
    const int8_t *wb = s->wp + mb0 * s->wblock;
    for (; c0 < s->cbytes; c0 += QZ) {
        int64_t cn = s->cbytes - c0 < QZ ? s->cbytes - c0 : QZ;
        for (int64_t ky = 0; ky < s->kh; ky++) {
            if (s->fuse_row) {
                bool all_in = true;
                Q_REP12(QPIX_ROW)
                if (all_in) {
                    const int8_t *wt = wb + ky * s->kw * s->cbytes * QV;
                    QDOT_RUN(wt, s->kw * s->cbytes)
                    continue;
                }
            }
            for (int64_t kx = 0; kx < s->kw; kx++) {
                const int8_t *wt = wb + ((ky * s->kw + kx) * s->cbytes + c0) * QV;
                Q_REP12(QPIX_PTR)
                QDOT_RUN(wt, cn)
            }
        }
    }
    Q_STORE_TILE
}

/* Pixel p's row of `bytes` at rows + p * stride (the last live one again past `live`). */
#define QPIX_DECL_ROW(p)                                                                     \
    const uint8_t *pt##p = rows + (p < live ? p : live - 1) * stride;                        \
    qacc a0_##p = q_zero(), a1_##p = q_zero();

/* q_tile for pixels whose whole reduction is one row of `bytes` bytes in the weights' order,
 * pixel p's at rows + p * stride: a GEMM. A 1x1 stride-1 unpadded convolution or an FC layer
 * reads its input rows in place (stride xcs, bytes cbytes); a small kernel reads the rows
 * q_gather_tile wrote (patch, kbytes). No per-tap pointer setup and no bounds checks: what
 * they cost was a quarter of the time of 1x1 64->256 layers. A function of its own rather
 * than a branch inside q_tile. */
GK_INLINE void q_tile_rows(const qshape *s, const qblocks *bk, const uint8_t *rows,
                           int64_t stride, int64_t bytes, int64_t q0, int live, int64_t mb0,
                           const int NM, const int NP, const int FLIP)
{
    Q_REP12(QPIX_DECL_ROW)
    const int8_t *wb = s->wp + mb0 * s->wblock;
    QDOT_RUN(wb, bytes)
    Q_STORE_TILE
}

/* Pixel (qn, qy, qx)'s taps in weight order ((ky, kx), then cbytes channel bytes) into dst,
 * x_zero bytes (pre-flipped: zrow's) for taps in the padding: the bytes the tap-by-tap walk
 * of q_tile reads, so the dot products and their sums are the same. */
GK_INLINE void q_gather(const qshape *s, uint8_t *dst, int64_t qn, int64_t qy, int64_t qx)
{
    const uint8_t *img = s->x + qn * s->h * s->w * s->xcs;
    int64_t iy = qy * s->sh - s->ph, ix = qx * s->sw - s->pw, rowb = s->kw * s->cbytes;
    bool row_whole = s->dw == 1 && s->xcs == s->cbytes && ix >= 0 && ix + s->kw <= s->w;
    for (int64_t ky = 0; ky < s->kh; ky++, dst += rowb) {
        int64_t y_ = iy + ky * s->dh;
        if ((uint64_t)y_ >= (uint64_t)s->h) {
            memcpy(dst, s->zrow, (size_t)rowb);
            continue;
        }
        const uint8_t *row = img + y_ * s->w * s->xcs;
        if (row_whole) {
            memcpy(dst, row + ix * s->xcs, (size_t)rowb);
            continue;
        }
        for (int64_t kx = 0; kx < s->kw; kx++) {
            int64_t x_ = ix + kx * s->dw;
            memcpy(dst + kx * s->cbytes,
                   (uint64_t)x_ < (uint64_t)s->w ? row + x_ * s->xcs : s->zrow,
                   (size_t)s->cbytes);
        }
    }
}

/* The patch rows of output pixels [q0, q0 + live). */
GK_INLINE void q_gather_tile(const qshape *s, int64_t q0, int live)
{
    int64_t ohw = s->oh * s->ow;
    int64_t qn = q0 / ohw, qy = q0 % ohw / s->ow, qx = q0 % s->ow;
    for (int p = 0; p < live; p++) {
        q_gather(s, s->patch + p * s->kbytes, qn, qy, qx);
        if (++qx == s->ow) {
            qx = 0;
            if (++qy == s->oh)
                qy = 0, qn++;
        }
    }
}

/* The tile for `live` pixels: NP rounded up to one of the compiled tile widths; GEMMs take
 * q_tile_rows for their full tiles (q_tile for the few others, FC layers of a small batch). */
GK_INLINE void q_tile_np(const qshape *s, const qblocks *bk, int64_t q0, int live, int64_t mb0,
                         const int NM, const int FLIP)
{
    /* A kernel of few bytes per pixel (kh * kw * cbytes <= QPATCH) runs on the patch rows
     * q_gather_tile filled for these pixels: with 3 or 16 channels a 3x3 row is 12 or 48
     * bytes, too few dot products to pay for q_tile's per-row setup and per-tap border path
     * (SqueezeNet's first layer and its 55x55 and 13x13 3x3 layers). */
    const uint8_t *patch = s->patch;
    int64_t kb = s->kbytes;
    if (s->use_patch) {
        if (live > QNP_MID)
            q_tile_rows(s, bk, patch, kb, kb, q0, live, mb0, NM, QNP, FLIP);
        else if (live > 4)
            q_tile_rows(s, bk, patch, kb, kb, q0, live, mb0, NM, QNP_MID, FLIP);
        else
            q_tile_rows(s, bk, patch, kb, kb, q0, live, mb0, NM, 4, FLIP);
    } else if (s->gemm && live > QNP_MID)
        q_tile_rows(s, bk, s->x + q0 * s->xcs, s->xcs, s->cbytes, q0, live, mb0, NM, QNP, FLIP);
    else if (live > QNP_MID)
        q_tile(s, bk, q0, live, mb0, NM, QNP, FLIP);
    else if (live > 4)
        q_tile(s, bk, q0, live, mb0, NM, QNP_MID, FLIP);
    else if (live > 2)
        q_tile(s, bk, q0, live, mb0, NM, 4, FLIP);
    else if (live == 2)
        q_tile(s, bk, q0, live, mb0, NM, 2, FLIP);
    else
        q_tile(s, bk, q0, live, mb0, NM, 1, FLIP);
}

void GK_QFN(const uint8_t *x, const int8_t *wp, const int32_t *bias, const float *mult,
            uint8_t *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t xcs, int64_t m,
            int64_t ycs, int64_t kh, int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw,
            int64_t dh, int64_t dw, int64_t ph, int64_t pw, int x_zero, int x_flip, int y_zero,
            int y_lo, int y_hi, float post_mult, int post_zero, int post_i8, const uint8_t *res,
            const float *rq, int rmode, unsigned *work, int tid, int nthreads)
{
    uint8_t zrow[QZ];
    uint8_t patch[QNP * QPATCH] __attribute__((aligned(64)));
    qshape s = { x, zrow, wp, y, h, w, xcs, m, ycs, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw,
                 (c + 3) / 4 * 4, 0, y_zero, (float)(y_lo - y_zero), (float)(y_hi - y_zero),
                 post_mult, (float)((post_i8 ? -128 : 0) - post_zero),
                 (float)((post_i8 ? 127 : 255) - post_zero), post_zero,
                 gk_qres_of(res, rq, rmode), 0, 0, 0, 0, patch };
    s.wblock = kh * kw * s.cbytes * QV;
    s.fuse_row = kw > 1 && dw == 1 && xcs == s.cbytes && s.cbytes <= QZ;
    s.gemm = kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 && oh == h && ow == w;
    s.kbytes = kh * kw * s.cbytes;
    s.use_patch = kh * kw > 1 && s.kbytes <= QPATCH;
    /* The flip is applied on load to padding bytes too, so they are stored pre-flipped. A
     * patch copies a whole kernel row of padding from it (kw * cbytes <= QPATCH < QZ). */
    int64_t zbytes = s.use_patch ? kw * s.cbytes : s.cbytes;
    memset(zrow, (x_zero ^ (x_flip ? 0x80 : 0)) & 0xff, (size_t)(zbytes < QZ ? zbytes : QZ));
    int64_t mblocks = (m + QV - 1) / QV, pairs = (mblocks + QNM - 1) / QNM;
    int64_t nq = n * oh * ow, tiles = (nq + QNP - 1) / QNP, units = pairs * tiles;
    /* Pixels of the last tile when it is not whole. A tile holds QNP pixels or these: written
     * as that choice, the count is one of two constants when the shape is, and q_tile_np's
     * dispatch keeps two tiles instead of compiling all eight. */
    int tail = (int)(nq % QNP);
    gk_units it = gk_units_of((size_t)units, work, tid, nthreads);
    /* Bias and multipliers of a block past M, zero-padded to whole vectors. */
    int32_t btail[QV];
    float mtail[QV];
    /* Block pairs outermost: a thread's consecutive units reuse the same weights. Tiles
     * outermost when all the weights fit in L1 (a layer of few channels): gathered patch rows
     * then serve every block pair instead of being gathered again for each (SqueezeNet's first
     * layer: 0.78x the cycles), and threads write different pixels. Block pairs outermost, two
     * threads taking runs of units sweep the same pixels for different channels at once, and
     * an output pixel of 96-192 channels is one to three cache lines: each line went back and
     * forth between the cores (MobileNet v2 int8 at 2 threads 8 % faster with this, at 1
     * thread 3 %; Zen 3). With a residual to add, tiles outermost too unless the weights are
     * more than twice the residual's bytes: block pairs outermost read 8 bytes of each of its
     * pixels' lines per sweep over the pixels, and a residual larger than the caches came from
     * memory once per block (ResNet-50's 28x28 128->512 layers: the folded Add cost more than
     * its own pass; its 7x7 512->2048 ones, and MobileNet v2's 7x7 960->160, keep their
     * weights' order). */
    int64_t wbytes = mblocks * s.wblock;
    bool tiles_out = wbytes <= QWL1 || (s.res.res && 2 * nq * ycs > wbytes);
    int64_t gathered = -1;
    for (size_t uu; gk_units_next(&it, &uu);) {
        int64_t u = (int64_t)uu, mb0 = u / tiles * QNM, q0 = u % tiles * QNP;
        if (tiles_out)
            mb0 = u % pairs * QNM, q0 = u / pairs * QNP;
        int nm = mblocks - mb0 < QNM ? (int)(mblocks - mb0) : QNM;
        int live = nq - q0 < QNP ? tail : QNP;
        qblocks bk;
        for (int b = 0; b < 2; b++) {
            int64_t m0 = (mb0 + (b < nm ? b : 0)) * QV;
            int count = m - m0 < QV ? (int)(m - m0) : QV;
            bk.bias[b] = bias + m0;
            bk.mult[b] = mult + m0;
            bk.count[b] = count;
            if (count < QV && b < nm) {
                memset(btail, 0, sizeof btail);
                memset(mtail, 0, sizeof mtail);
                memcpy(btail, bias + m0, (size_t)count * sizeof(int32_t));
                memcpy(mtail, mult + m0, (size_t)count * sizeof(float));
                bk.bias[b] = btail;
                bk.mult[b] = mtail;
            }
        }
        if (s.use_patch && q0 != gathered) {
            q_gather_tile(&s, q0, live);
            gathered = q0;
        }
        if (QNM > 1 && nm > 1 && x_flip)
            q_tile_np(&s, &bk, q0, live, mb0, 2, 1);
        else if (QNM > 1 && nm > 1)
            q_tile_np(&s, &bk, q0, live, mb0, 2, 0);
        else if (x_flip)
            q_tile_np(&s, &bk, q0, live, mb0, 1, 1);
        else
            q_tile_np(&s, &bk, q0, live, mb0, 1, 0);
    }
}
