// conv_tmpl.h - Direct and depthwise convolution on the channel-blocked layout, written once for
// any vector length V (conv_avx512.c: V = 16, conv_avx2.c: V = 8, conv_neon.c: V = 4).
//
// The micro-kernel keeps an NM x NP tile of outputs in registers: NM (1 or 2) output-channel
// blocks of V lanes times NP output pixels. For each input channel c of each tap it loads NM
// weight vectors (the V output channels of that c) and broadcasts the NP input values, so one
// broadcast feeds NM FMAs and one weight vector NP FMAs; with AVX-512 that is 2 x 12 = 24
// accumulators. Pixels whose every tap lies inside the input ("interior") use fixed offsets from
// one pointer; pixels near the borders, rows shorter than a tile and tail tiles go through the
// "gathered" tile, which computes one pointer per pixel and tap and points missing taps at zeros
// (padding costs no branch in the FMA loop). The tile's pixels are consecutive in the flattened
// output plane, so the store is contiguous in both cases; bias, residual and activation are
// applied to the registers before it.
#include <math.h>
#include <stdbool.h>

#include "../act_vec.h"
#include "conv_plan.h"

#if GK_NREGS == 32
#define NP_MAX 12 /* 2 x 12 accumulators + 2 weights + 1 broadcast of 32 zmm / NEON registers */
#define NPD 8     /* depthwise: pixels per tile */
#else
#define NP_MAX 6  /* 2 x 6 accumulators + 2 weights + 1 broadcast of 16 ymm registers */
#define NPD 8     /* depthwise: 8 FMA chains cover the FMA latency on two pipes */
#endif
/* The cpu backend computes the tile width with conv_plan.h's gk_conv_np_max(V). */
_Static_assert(NP_MAX == (GK_VLEN == 8 ? 6 : 12), "gk_conv_np_max disagrees with NP_MAX");

static const float gk_zeros[GK_VLEN];

/* Prefetches the cache lines of floats [p, p + count) into L1. The tiles call it for the input
 * the next tile will read, one block (or one kernel row) at a time: the blocked layout spreads
 * a tile's input over one plane per channel block, too many concurrent streams for the
 * hardware prefetchers when the layer's input is not in the caches. */
GK_INLINE void prefetch_floats(const float *p, size_t count)
{
    for (size_t i = 0; i < count; i += 16)
        GK_PREFETCH(p + i);
}

/* The tiles below name their registers a0_<p> / a1_<p> (output block 0 / 1, pixel p) and
 * ptr<p> instead of using arrays, and guard each pixel with `p < NP`: once NM and NP are
 * constants every compiler keeps them in registers without relying on loop unrolling and
 * scalar replacement of arrays (clang would otherwise merge the tile sizes into one loop over
 * an array in memory). NP_MAX <= 12 (GK_REP12). */
#define DECL_ACC(p) gk_vec a0_##p = VZERO(), a1_##p = VZERO(); const float *ptr##p = gk_zeros;
#define FMA_PIX(p)                                  \
    if (p < NP) {                                   \
        gk_vec v_ = VBCAST(ptr##p + c);             \
        a0_##p = VFMA(w0, v_, a0_##p);              \
        if (NM > 1)                                 \
            a1_##p = VFMA(w1, v_, a1_##p);          \
    }
/* The accumulators of the tile's first `live` pixels start from bias (+ residual) in the first
 * chunk of input blocks, from the partial sums stored in `out` in the later ones. */
#define INIT_PIX(p)                                                                          \
    if (p < NP && p < live) {                                                                \
        if (ck->first) {                                                                     \
            a0_##p = b0;                                                                     \
            a1_##p = b1;                                                                     \
            if (res) {                                                                       \
                a0_##p = VADD(a0_##p, VLOAD(res + p * GK_VLEN));                             \
                if (NM > 1)                                                                  \
                    a1_##p = VADD(a1_##p, VLOAD(res + ostride + p * GK_VLEN));               \
            }                                                                                \
        } else {                                                                             \
            a0_##p = VLOAD(out + p * GK_VLEN);                                               \
            if (NM > 1)                                                                      \
                a1_##p = VLOAD(out + ostride + p * GK_VLEN);                                 \
        }                                                                                    \
    }
#define STORE_PIX(p)                                                                         \
    if (p < NP && p < live) {                                                                \
        gk_vec v0_ = a0_##p, v1_ = a1_##p;                                                   \
        if (ck->last) {                                                                      \
            v0_ = act_vec(v0_, act, alpha, beta);                                            \
            v1_ = act_vec(v1_, act, alpha, beta);                                            \
        }                                                                                    \
        VSTORE(out + p * GK_VLEN, v0_);                                                      \
        if (NM > 1)                                                                          \
            VSTORE(out + ostride + p * GK_VLEN, v1_);                                        \
    }
/* The c loop of one tap: NM weight vectors, NP broadcasts, NM * NP FMAs per input channel.
 * With 8 lanes (AVX2) it is unrolled whole: cv is a constant after specialization, so every
 * broadcast becomes a fixed offset and the 8-trip loop's branches go. A partial unroll (LLVM's
 * own choice for -mcpu=znver3, or "unroll 2") keeps the next iteration's broadcasts live and
 * spills accumulators: ResNet-50 b1 ran 1.29x slower with it. The whole unroll ran ResNet-50,
 * VGG-19, GoogLeNet, MobileNet-v2 and SqueezeNet 6-10% faster at one thread (median of the
 * per-run ratios, the two builds alternating run by run in one process). With 16 lanes the
 * loop stays rolled (one iteration holds 24 FMAs; unrolling is unmeasured there). */
#if GK_VLEN == 8
#define TAP_UNROLL _Pragma("GCC unroll 8")
#elif GK_VLEN == 4
#define TAP_UNROLL _Pragma("GCC unroll 4") /* NEON: whole as with AVX2 (unmeasured on hardware) */
#else
#define TAP_UNROLL _Pragma("GCC unroll 1")
#endif
#define TAP_FMAS(wp)                                                            \
    TAP_UNROLL                                                                  \
    for (size_t c = 0; c < cv; c++) {                                           \
        gk_vec w0 = VLOAD((wp) + c * GK_VLEN);                                  \
        gk_vec w1 = NM > 1 ? VLOAD((wp) + s->w_mstride + c * GK_VLEN) : w0;     \
        GK_REP12(FMA_PIX)                                                          \
    }
/* Start of a tile (out/res at its first pixel): accumulators set for this chunk. */
#define INIT_TILE()                                                                   \
    size_t ostride = s->out_bstride;                                                  \
    do {                                                                              \
        gk_vec b0 = bias ? VLOAD(bias) : VZERO();                                     \
        gk_vec b1 = bias && NM > 1 ? VLOAD(bias + GK_VLEN) : VZERO();                 \
        GK_REP12(INIT_PIX)                                                               \
    } while (0)
/* Store of the tile's first `live` pixels: partial sums, or in the last chunk the activation
 * of the finished sums. */
#define STORE_TILE()                                                                  \
    do {                                                                              \
        GK_REP12(STORE_PIX)                                                              \
        if (ck->last && act >= GK_ACT_SIGMOID) {                                      \
            act_slow(out, (size_t)live * GK_VLEN, act);                               \
            if (NM > 1)                                                               \
                act_slow(out + ostride, (size_t)live * GK_VLEN, act);                 \
        }                                                                             \
    } while (0)

/* Shape of one convolution, shared by the tile routines. */
typedef struct {
    size_t cb, cv, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    size_t in_bstride;  /* floats between input blocks: ih * iw * cv */
    size_t w_mstride;   /* floats between output blocks' weights: cb * kh * kw * cv * V */
    size_t out_bstride; /* floats between output blocks: oh * ow * V */
} conv_shape;

/* The chunk of input blocks [b0, b1) a tile sums now; first / last chunk of the reduction. */
typedef struct {
    size_t b0, b1;
    bool first, last;
} conv_chunk;

/* The taps of kernel row `ip` (weights from wp on): one pointer per pixel, as in the gathered
 * tile, so that with run-time strides each broadcast address is a register plus the constant
 * 4c. UNROLL: a pragma for the loop, or nothing. */
#define ROW_PTR(p) if (p < NP) ptr##p = ipx + (size_t)p * pstride;
#define TAP_ROW(UNROLL)                                                                      \
    UNROLL                                                                                   \
    for (size_t x = 0; x < s->kw; x++) {                                                     \
        const float *ipx = ip + x * s->dw * cv;                                              \
        GK_REP12(ROW_PTR)                                                                    \
        TAP_FMAS(wp)                                                                         \
        wp += cv * GK_VLEN;                                                                  \
    }

/* Interior tile: NP pixels of one output row starting at input column iw0 = ox * sw - pw,
 * all columns of the window inside the input; rows restricted to [y0, y1). `in` points at
 * (block 0, row iy0 (may be "negative": only rows in [y0, y1) are read), column iw0). */
GK_INLINE void tile_interior(const conv_shape *s, int NM, int NP, const float *in, ptrdiff_t iy0,
                             size_t y0, size_t y1, const float *w, float *out, const float *bias,
                             const float *res, int act, float alpha, float beta,
                             const conv_chunk *ck)
{
    GK_REP12(DECL_ACC)
    const int live = NP;
    INIT_TILE();
    const size_t cv = s->cv, pstride = s->sw * cv, rowlen = s->iw * cv;
    for (size_t b = ck->b0; b < ck->b1; b++) {
        for (size_t y = y0; y < y1; y++) {
            const float *ip = in + b * s->in_bstride +
                              (ptrdiff_t)((iy0 + (ptrdiff_t)(y * s->dh)) * (ptrdiff_t)rowlen);
            const float *wp = w + ((b * s->kh + y) * s->kw) * cv * GK_VLEN;
            /* The columns the next tile of this row adds to this one's window. */
            prefetch_floats(ip + (NP * s->sw + (s->kw - 1) * s->dw) * cv, NP * s->sw * cv);
            /* A row of few taps is unrolled whole (LeNet's 5x5 on one channel ran 5 % slower
             * rolled); a long one stays a loop: ResNet-50's 7x7 first layer unrolled was 147
             * broadcasts in one body, 0.37 s of loop strength reduction at compile time for
             * no speed (same share of the run rolled), and GoogLeNet's 3x3 layers 1 s in all.
             * But with AVX2's 8 channels a block and the stride equal to the dilation, pixel
             * p's next tap is pixel p + 1's tap: the rolled body's 48 broadcasts sit at 48
             * consecutive offsets that recur one iteration later, and LSR's search over them
             * took 0.45 s per such layer (a 3x3 or 5x5 stride-1 layer: 0.78 s rolled, 0.33 s
             * unrolled, one-layer models); unrolled there, as before. Rolled stride-2 rows,
             * NEON's 4-channel rows and the 7x7 first layer (3 channels) are cheap. */
            if (s->kw * cv < 16 || (GK_VLEN == 8 && s->sw == s->dw)) {
                TAP_ROW()
            } else {
                TAP_ROW(_Pragma("GCC unroll 1"))
            }
        }
    }
    STORE_TILE();
}
#undef TAP_ROW
#undef ROW_PTR

/* 1x1 tile without padding: NP consecutive pixels of the flattened output plane from q0 (any
 * rows, any stride), every tap inside the input; the pixel offsets are computed once and the
 * loop runs over the input blocks only. Dead pixels (p >= live) read pixel 0, not stored. */
GK_INLINE void tile_1x1(const conv_shape *s, int NM, int NP, int live, bool flat,
                        const float *in, size_t q0, const float *w, float *out,
                        const float *bias, const float *res, int act, float alpha, float beta,
                        const conv_chunk *ck)
{
    GK_REP12(DECL_ACC)
    out += q0 * GK_VLEN;
    res = res ? res + q0 * GK_VLEN : NULL;
    INIT_TILE();
    const size_t cv = s->cv;
    /* A flattened plane is one row: no division (a run-time one per tile when the plane's
     * size is a run-time value, 2 % of MobileNet v2 on Zen 3). */
    size_t qy_ = flat ? 0 : q0 / s->ow, qx_ = flat ? q0 : q0 % s->ow;
#define DECL_OFF(p)                                                                      \
    size_t off##p = p < live ? (qy_ * s->sh * s->iw + qx_ * s->sw) * cv : 0;               \
    if (++qx_ == s->ow && !flat)                                                         \
        qx_ = 0, qy_++;
    GK_REP12(DECL_OFF)
#undef DECL_OFF
    const float *wp = w + ck->b0 * cv * GK_VLEN;
    /* The next tile's pixels (as many floats as this tile spans), when they continue this
     * tile's row. */
    size_t pf = (size_t)NP * s->sw * cv;
    for (size_t b = ck->b0; b < ck->b1; b++) {
        const float *ib = in + b * s->in_bstride;
#define SET_PTR(p) if (p < NP) ptr##p = ib + off##p;
        GK_REP12(SET_PTR)
#undef SET_PTR
        prefetch_floats(ptr0 + pf, pf);
        TAP_FMAS(wp)
        wp += cv * GK_VLEN;
    }
    STORE_TILE();
}

/* Gathered tile: NP consecutive pixels of the flattened output plane from index q0, any
 * position; a tap outside the input reads gk_zeros. Only the first `live` pixels exist (the
 * plane's last tile): the others read zeros for every tap and are not stored, so one tile
 * size serves every tail (fewer instantiations, less code for the JIT to optimize). */
GK_INLINE void tile_gather(const conv_shape *s, int NM, int NP, int live, const float *in,
                           size_t q0, const float *w, float *out, const float *bias,
                           const float *res, int act, float alpha, float beta,
                           const conv_chunk *ck)
{
    GK_REP12(DECL_ACC)
    /* Pixel positions by stepping along the row (one division per tile: with run-time sizes
     * a division per pixel cost a third of a chunk's FMA time). */
    size_t qy_ = q0 / s->ow, qx_ = q0 % s->ow;
#define DECL_POS(p)                                                                      \
    ptrdiff_t iy##p = (ptrdiff_t)(qy_ * s->sh) - (ptrdiff_t)s->ph;                         \
    ptrdiff_t ix##p = (ptrdiff_t)(qx_ * s->sw) - (ptrdiff_t)s->pw;                         \
    if (p >= live)                                                                       \
        iy##p = -((ptrdiff_t)1 << 40); /* every row out of range */                      \
    if (++qx_ == s->ow)                                                                  \
        qx_ = 0, qy_++;
    GK_REP12(DECL_POS)
#undef DECL_POS
    const size_t cv = s->cv;
    const float *wp = w + ck->b0 * s->kh * s->kw * cv * GK_VLEN;
    out += q0 * GK_VLEN;
    res = res ? res + q0 * GK_VLEN : NULL;
    INIT_TILE();
    for (size_t b = ck->b0; b < ck->b1; b++) {
        const float *ib = in + b * s->in_bstride;
        for (size_t y = 0; y < s->kh; y++) {
            for (size_t x = 0; x < s->kw; x++) {
                ptrdiff_t dy = (ptrdiff_t)(y * s->dh), dx = (ptrdiff_t)(x * s->dw);
#define SET_PTR(p)                                                                      \
    if (p < NP) {                                                                       \
        ptrdiff_t r_ = iy##p + dy, c_ = ix##p + dx;                                      \
        ptr##p = (size_t)r_ < s->ih && (size_t)c_ < s->iw                               \
                     ? ib + ((size_t)r_ * s->iw + (size_t)c_) * cv : gk_zeros;          \
    }
                GK_REP12(SET_PTR)
#undef SET_PTR
                TAP_FMAS(wp)
                wp += cv * GK_VLEN;
            }
        }
    }
    STORE_TILE();
}

#define NP_HALF (NP_MAX / 2)

/* The tile width for a plane of P pixels (conv_plan.h). */
GK_INLINE size_t conv_width(size_t P, bool half) { return gk_conv_width(P, half, NP_MAX); }

/* The tile of pixels [q0, q0 + np) at the plane's width npw: a 1x1 tile for unpadded 1x1
 * convolutions; a half-width gathered tile for a tail of NP_HALF pixels or fewer (still enough
 * FMA chains to keep both pipes busy, less dead work); an interior tile when they are npw
 * pixels of one row whose windows lie inside the input columns [ox_lo, ox_hi); else a
 * gathered tile. Narrower tiles would leave FMA chains latency-bound, so borders get
 * full-width gathered tiles too. Each pixel sums its taps in one order whichever tile computes
 * it, so the width changes no result.
 * npw goes to the tiles as their NP, a run-time value here: inlined with constant shapes
 * (the JIT, bundles) it is a constant, and each tile is the one register tile of that width.
 * Instantiating every width here instead (a branch per width, each with a constant NP) put 6x
 * the tiles into the kernel before specialization, and LLVM's simplification of that generic
 * body doubled ResNet-50's compile time. Unspecialized (natively compiled: the tests,
 * kernels_bench) the tiles test p < NP per pixel, which cost little there. */
GK_INLINE void conv_tile(const conv_shape *s, int NM, bool is1x1, bool flat, size_t q0,
                         size_t np, size_t npw, size_t ox_lo, size_t ox_hi, const float *in,
                         const float *w, float *out, const float *bias, const float *res,
                         int act, float alpha, float beta, const conv_chunk *ck)
{
    const int NP = (int)npw;
    if (is1x1) {
        if (NM > 1)
            tile_1x1(s, 2, NP, (int)np, flat, in, q0, w, out, bias, res, act, alpha, beta,
                     ck);
        else
            tile_1x1(s, 1, NP, (int)np, flat, in, q0, w, out, bias, res, act, alpha, beta,
                     ck);
        return;
    }
    if (np <= NP_HALF) {
        if (NM > 1)
            tile_gather(s, 2, NP_HALF, (int)np, in, q0, w, out, bias, res, act, alpha, beta,
                        ck);
        else
            tile_gather(s, 1, NP_HALF, (int)np, in, q0, w, out, bias, res, act, alpha, beta,
                        ck);
        return;
    }
    size_t oy = q0 / s->ow, ox = q0 % s->ow;
    if (np < npw || ox < ox_lo || ox + npw > ox_hi) {
        if (NM > 1)
            tile_gather(s, 2, NP, (int)np, in, q0, w, out, bias, res, act, alpha, beta, ck);
        else
            tile_gather(s, 1, NP, (int)np, in, q0, w, out, bias, res, act, alpha, beta, ck);
        return;
    }
    ptrdiff_t iy0 = (ptrdiff_t)(oy * s->sh) - (ptrdiff_t)s->ph;
    size_t y0 = 0, y1 = s->kh;
    while (y0 < y1 && iy0 + (ptrdiff_t)(y0 * s->dh) < 0)
        y0++;
    while (y1 > y0 && iy0 + (ptrdiff_t)((y1 - 1) * s->dh) >= (ptrdiff_t)s->ih)
        y1--;
    const float *ip = in + (ox * s->sw - s->pw) * s->cv;
    float *op = out + q0 * GK_VLEN;
    const float *rp = res ? res + q0 * GK_VLEN : NULL;
    if (NM > 1)
        tile_interior(s, 2, NP, ip, iy0, y0, y1, w, op, bias, rp, act, alpha, beta, ck);
    else
        tile_interior(s, 1, NP, ip, iy0, y0, y1, w, op, bias, rp, act, alpha, beta, ck);
}

/* Cache blocking of the direct convolution (bytes): a pair of output blocks' weights for one
 * chunk of input blocks stays near (L1, partly L2) while the tiles of a tile group use it; a
 * tile group's input (all its blocks) stays in L2 while every pair of output blocks reads it.
 * The chunk may fill a 32 KiB L1: fewer partial-sum passes paid more than weights that stay
 * in L1 beside the input (16 KiB -> 32 KiB, median per-run ratio with bench/ab: ResNet-50 b1
 * 0.978 and at 2 threads 0.988, b8 0.983, GoogLeNet b1 0.978, VGG-19 b1 0.990, SqueezeNet
 * 0.993, MobileNet-v2 1.000; 8 KiB: ResNet-50 b1 1.032). */
#ifndef CONV_L1_WEIGHTS
#define CONV_L1_WEIGHTS ((size_t)32 << 10)
#endif
#ifndef CONV_L2_INPUT
#define CONV_L2_INPUT ((size_t)128 << 10)
#endif
#ifndef CONV_L2_FIT
#define CONV_L2_FIT ((size_t)384 << 10)
#endif
#ifndef CONV_L2_INPUT_BIG
#define CONV_L2_INPUT_BIG ((size_t)320 << 10)
#endif
/* Weights larger than this are counted as bytes from L3 or memory each time a tile group
 * reads them again (smaller ones stay in L2). */
#ifndef CONV_W_UNCACHED
#define CONV_W_UNCACHED ((size_t)256 << 10)
#endif

void GK_FN(conv2d_nchwc)(float *out, const float *in, const float *wt, const float *bias,
                         const float *res, size_t n, size_t groups, size_t cb, size_t cv,
                         size_t ih, size_t iw, size_t mb, size_t oh, size_t ow, size_t kh,
                         size_t kw, size_t sh, size_t sw, size_t ph, size_t pw, size_t dh,
                         size_t dw, int form, size_t npw_c, size_t tail_c, int act, float alpha,
                         float beta, unsigned *work, int tid, int nthreads)
{
    conv_shape s = { cb, cv, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, 0, 0, 0 };
    /* The form (conv_plan.h), folded with constant shapes as conv_width below needs. The cpu
     * backend passes the form, the tile width and the last tile's (npw_c, tail_c) as
     * constants, the values derived here, so that they fold when the sizes do not. */
    int f = form ? form : gk_conv_form(ih, iw, oh, ow, kh, kw, sh, sw, ph, pw);
    bool is1x1 = f != GK_CONV_TILED;
    if (f == GK_CONV_FLAT) {
        s.iw = s.ow = ih * iw;
        s.ih = s.oh = 1;
    }
    s.in_bstride = s.ih * s.iw * cv;
    s.w_mstride = cb * kh * kw * cv * GK_VLEN;
    s.out_bstride = s.oh * s.ow * GK_VLEN;
    /* Output columns whose whole window lies inside the input rows' extent. */
    size_t ox_lo = (s.pw + s.sw - 1) / s.sw, ox_hi = 0;
    size_t span = (s.kw - 1) * s.dw;
    if (s.iw + s.pw > span)
        ox_hi = (s.iw + s.pw - span - 1) / s.sw + 1;
    if (ox_hi > s.ow)
        ox_hi = s.ow;
    if (ox_lo > ox_hi)
        ox_lo = ox_hi;
    /* The reduction over the cb input blocks runs in chunks of kc blocks (partial sums kept in
     * `out`); the chunks depend only on the shape, so every thread count sums alike. */
    size_t blk_bytes = 2 * kh * kw * cv * GK_VLEN * sizeof(float);
    size_t kc = CONV_L1_WEIGHTS / blk_bytes;
    kc = kc < 1 ? 1 : kc > cb ? cb : kc;
    size_t nchunks = (cb + kc - 1) / kc;
    kc = (cb + nchunks - 1) / nchunks;
    /* Work units are (group, tile group, pair of output blocks), the pair fastest: the tile
     * group's input stays in L2 while the pairs read it. The tiles of all images form one
     * sequence (tt of them), so that a tile group can span images: at batch 8 the weights of
     * a deep layer are then read for several images at once, not once per image. */
    size_t mpg = mb / groups, pairs = (mpg + 1) / 2;
    /* The plane's tile width (a constant once the shape is: see conv_width). */
    size_t plane = oh * ow, npw = form ? npw_c : conv_width(plane, !is1x1); /* flat or not */
    size_t tiles = (plane + npw - 1) / npw, tt = n * tiles;
    /* Input bytes a tile reads over all blocks: a strided 1x1 tile reads only its own rows,
     * and of each pixel's row segment a cache line at most. */
    size_t pix = s.sw * cv * sizeof(float), line = cv * sizeof(float) > 64 ? cv * sizeof(float) : 64;
    size_t tile_in = is1x1 ? npw * (pix < line ? pix : line) * cb
                           : npw * sh * sw * cb * cv * sizeof(float);
    /* Every tile group reads all the weights again: when they are large (they come from L3
     * or memory), larger groups, fewer passes. */
    size_t wbytes = mb / groups * s.w_mstride * sizeof(float);
    size_t budget = wbytes > CONV_L2_INPUT * 4 ? CONV_L2_INPUT_BIG : CONV_L2_INPUT;
    /* The group's input stays in L2 across the pairs only beside one pair's weights. */
    size_t wpair = wbytes / pairs;
    if (budget + wpair > CONV_L2_FIT)
        budget = wpair < CONV_L2_FIT ? CONV_L2_FIT - wpair : 0;
    size_t tg = budget / tile_in;
    tg = tg < 1 ? 1 : tg > tt ? tt : tg;
    size_t ngr = (tt + tg - 1) / tg;
    if (groups * ngr * pairs < 8) { /* some parallelism for the thread split */
        size_t want_gr = (8 + groups * pairs - 1) / (groups * pairs);
        ngr = want_gr < tt ? want_gr : tt;
    }
    tg = (tt + ngr - 1) / ngr;
    ngr = (tt + tg - 1) / tg;
    /* Pairs per unit. One: a tile group's input stays in L2 while consecutive units (the pairs)
     * read it, and every tile group reads all the weights again. When that moves many bytes
     * (large weights, or an input needing many tile groups), units of several pairs can move
     * fewer: a unit runs its chunks of input blocks outermost, and for each chunk its pairs
     * over its tiles, so the chunk's input, the pairs' weight chunks and the partial sums stay
     * in L2 (the fit below) and the unit reads its input and weights once. Estimated bytes:
     * tile groups x weights + pair groups x input. Smaller chunks of input blocks are tried
     * too (more partial-sum passes, smaller footprint). The choice depends only on the shape. */
    size_t npg = pairs;
    {
        size_t in_bytes = tt * tile_in;
        size_t want = groups >= 8 ? 1 : (8 + groups - 1) / groups;
        size_t best = (wbytes > CONV_W_UNCACHED ? ngr : 1) * wbytes + in_bytes;
        best -= best / 10; /* only a clear gain changes the scheme */
        /* kc, then chunks of 8 and of 4 blocks where smaller (kt is read once, before kc
         * changes below). */
        for (size_t kt = kc; kt >= 1; kt = kt > 4 ? (kt > 8 ? 8 : 4) : 0) {
            size_t nck = (cb + kt - 1) / kt, kc1 = (cb + nck - 1) / nck;
            for (size_t tg1 = 1;; tg1 = tg1 * 2 < tt ? tg1 * 2 : tt) {
                size_t ng1 = (tt + tg1 - 1) / tg1;
                for (size_t pg1 = 2; pg1 <= pairs; pg1 = pg1 * 2 < pairs || pg1 == pairs ?
                                                             pg1 * 2 : pairs) {
                    size_t np1 = (pairs + pg1 - 1) / pg1;
                    size_t fit = tile_in / cb * kc1 * tg1 +
                                 pg1 * tg1 * npw * 2 * GK_VLEN * sizeof(float) +
                                 pg1 * kc1 * blk_bytes;
                    size_t cost = ng1 * wbytes + np1 * in_bytes;
                    if (ng1 * np1 >= want && fit <= CONV_L2_FIT && cost < best) {
                        best = cost;
                        tg = tg1;
                        npg = np1;
                        kc = kc1;
                    }
                    if (pg1 == pairs)
                        break;
                }
                if (tg1 == tt)
                    break;
            }
        }
        ngr = (tt + tg - 1) / tg;
    }
    size_t pg = (pairs + npg - 1) / npg;
    npg = (pairs + pg - 1) / pg;
    size_t total = groups * ngr * npg;
    gk_units units = gk_units_of(total, work, tid, nthreads);
    size_t plane_in = groups * cb * s.in_bstride, plane_out = mb * s.out_bstride;
    size_t tail = form ? tail_c : plane % npw;
    for (size_t u; gk_units_next(&units, &u);) {
        size_t pgi = u % npg, grp = u / npg % ngr, g = u / (npg * ngr);
        size_t p0 = pgi * pg, p1 = p0 + pg < pairs ? p0 + pg : pairs;
        size_t r0 = grp * tg, r1 = r0 + tg < tt ? r0 + tg : tt;
        for (size_t k0 = 0; k0 < cb; k0 += kc) {
            conv_chunk ck = { k0, k0 + kc < cb ? k0 + kc : cb, k0 == 0, k0 + kc >= cb };
            for (size_t pair = p0; pair < p1; pair++) {
                size_t m0 = g * mpg + pair * 2;
                /* Written so that constant shapes fold it (and the tail size below) to a
                 * constant: the JIT then keeps only the tile sizes this layer uses. */
                int NM = mpg % 2 == 0 || pair + 1 < pairs ? 2 : 1;
                const float *wp = wt + m0 * s.w_mstride;
                const float *bp = bias ? bias + m0 * GK_VLEN : NULL;
                for (size_t r = r0; r < r1; r++) {
                    size_t img = r / tiles, rt = r % tiles;
                    size_t np = rt + 1 == tiles && tail ? tail : npw;
                    const float *ip = in + img * plane_in + g * cb * s.in_bstride;
                    float *op = out + img * plane_out + m0 * s.out_bstride;
                    const float *rp = res ? res + img * plane_out + m0 * s.out_bstride : NULL;
                    conv_tile(&s, NM, is1x1, f == GK_CONV_FLAT, rt * npw, np, npw, ox_lo,
                              ox_hi, ip, wp, op, bp, rp, act, alpha, beta, &ck);
                }
            }
        }
    }
}

/* Depthwise interior tile: NT pixels of one output row from column ox, one FMA chain each, in
 * named registers d_<p> (clang kept an array of them in memory). Kernel row y reads input row
 * iy0 + y * dh of the block at ib, minus `wrap` when that is wrap or more: the fused
 * pointwise-depthwise kernel (pwdw_tmpl.h) keeps its input rows in a ring of `wrap` rows; the
 * plain kernel passes PTRDIFF_MAX, and the test folds away once inlined. */
GK_INLINE void dw_tile(int NT, const float *ib, const float *w, gk_vec b, float *orow,
                       const float *rrow, size_t ox, ptrdiff_t iy0, size_t y0, size_t y1,
                       ptrdiff_t wrap, size_t iw, size_t kw, size_t sw, size_t pw, size_t dh,
                       size_t dw, int act, float alpha, float beta)
{
    const size_t V = GK_VLEN;
#define DW_DECL(p) gk_vec d_##p = b;
    GK_REP12(DW_DECL)
#undef DW_DECL
    const float *ip0 = ib + (ox * sw - pw) * V;
    for (size_t y = y0; y < y1; y++) {
        ptrdiff_t r = iy0 + (ptrdiff_t)(y * dh);
        if (r >= wrap)
            r -= wrap;
        const float *ip = ip0 + r * (ptrdiff_t)(iw * V);
        for (size_t x = 0; x < kw; x++) {
            gk_vec wv = VLOAD(w + (y * kw + x) * V);
            const float *ipx = ip + x * dw * V;
#define DW_FMA(p)                                                          \
    if (p < NT)                                                            \
        d_##p = VFMA(VLOAD(ipx + (size_t)p * sw * V), wv, d_##p);
            GK_REP12(DW_FMA)
#undef DW_FMA
        }
    }
#define DW_STORE(p)                                                                  \
    if (p < NT) {                                                                    \
        gk_vec v_ = d_##p;                                                           \
        if (rrow)                                                                    \
            v_ = VADD(v_, VLOAD(rrow + (ox + (size_t)p) * V));                       \
        VSTORE(orow + (ox + (size_t)p) * V, act_vec(v_, act, alpha, beta));          \
    }
    GK_REP12(DW_STORE)
#undef DW_STORE
}

/* The output columns [ox_lo, ox_hi) of a depthwise row whose whole window lies inside the
 * input columns. */
GK_INLINE void dw_cols(size_t iw, size_t ow, size_t kw, size_t sw, size_t pw, size_t dw,
                       size_t *ox_lo, size_t *ox_hi)
{
    size_t lo = (pw + sw - 1) / sw, hi = 0, span = (kw - 1) * dw;
    if (iw + pw > span)
        hi = (iw + pw - span - 1) / sw + 1;
    if (hi > ow)
        hi = ow;
    if (lo > hi)
        lo = hi;
    *ox_lo = lo;
    *ox_hi = hi;
}

/* One output row of one channel block: kernel rows [y0, y1) read input rows iy0 + y * dh of
 * ib (as dw_tile, `wrap` for a ring of rows), bias b, optional residual row, activation.
 * Interior pixels in tiles of NPD (their tail in one of NPD / 2); pixels near the borders
 * skip the taps outside the input, per pixel (the work per output is small, so the test costs
 * little). Each pixel sums its taps in the same order on either path. */
GK_INLINE void dw_row(const float *ib, const float *w, gk_vec b, float *orow, const float *rrow,
                      ptrdiff_t iy0, size_t y0, size_t y1, ptrdiff_t wrap, size_t iw, size_t ow,
                      size_t kw, size_t sw, size_t pw, size_t dh, size_t dw, size_t ox_lo,
                      size_t ox_hi, int act, float alpha, float beta)
{
    const size_t V = GK_VLEN;
    size_t ox = 0;
    while (ox < ow) {
        size_t np = 1;
        if (ox >= ox_lo && ox + NPD <= ox_hi) {
            np = NPD;
            dw_tile(NPD, ib, w, b, orow, rrow, ox, iy0, y0, y1, wrap, iw, kw, sw, pw, dh, dw,
                    act, alpha, beta);
        } else if (ox >= ox_lo && ox + NPD / 2 <= ox_hi) {
            np = NPD / 2;
            dw_tile(NPD / 2, ib, w, b, orow, rrow, ox, iy0, y0, y1, wrap, iw, kw, sw, pw, dh,
                    dw, act, alpha, beta);
        } else {
            gk_vec acc = b;
            ptrdiff_t ix0 = (ptrdiff_t)(ox * sw) - (ptrdiff_t)pw;
            for (size_t y = y0; y < y1; y++) {
                ptrdiff_t r = iy0 + (ptrdiff_t)(y * dh);
                if (r >= wrap)
                    r -= wrap;
                for (size_t x = 0; x < kw; x++) {
                    size_t col = (size_t)(ix0 + (ptrdiff_t)(x * dw));
                    if (col < iw)
                        acc = VFMA(VLOAD(ib + ((size_t)r * iw + col) * V),
                                   VLOAD(w + (y * kw + x) * V), acc);
                }
            }
            if (rrow)
                acc = VADD(acc, VLOAD(rrow + ox * V));
            VSTORE(orow + ox * V, act_vec(acc, act, alpha, beta));
        }
        if (act >= GK_ACT_SIGMOID)
            act_slow(orow + ox * V, np * V, act);
        ox += np;
    }
}

/* The kernel rows [*y0, *y1) of an output row whose window starts at input row iy0 that fall
 * inside the ih input rows. */
GK_INLINE void dw_taps(ptrdiff_t iy0, size_t ih, size_t kh, size_t dh, size_t *y0, size_t *y1)
{
    size_t a = 0, b = kh;
    while (a < b && iy0 + (ptrdiff_t)(a * dh) < 0)
        a++;
    while (b > a && iy0 + (ptrdiff_t)((b - 1) * dh) >= (ptrdiff_t)ih)
        b--;
    *y0 = a;
    *y1 = b;
}

/* Depthwise: one weight vector per tap, a work unit per output row of one channel block. */
void GK_FN(dwconv2d_nchwc)(float *out, const float *in, const float *wt, const float *bias,
                           const float *res, size_t n, size_t cb, size_t ih, size_t iw,
                           size_t oh, size_t ow, size_t kh, size_t kw, size_t sh, size_t sw,
                           size_t ph, size_t pw, size_t dh, size_t dw, int act, float alpha,
                           float beta, unsigned *work, int tid, int nthreads)
{
    const size_t V = GK_VLEN;
    size_t total = n * cb * oh;
    gk_units units = gk_units_of(total, work, tid, nthreads);
    size_t ox_lo, ox_hi;
    dw_cols(iw, ow, kw, sw, pw, dw, &ox_lo, &ox_hi);
    for (size_t u; gk_units_next(&units, &u);) {
        size_t oy = u % oh, blk = u / oh; /* blk = img * cb + channel block */
        const float *ib = in + blk * ih * iw * V;
        const float *w = wt + (blk % cb) * kh * kw * V;
        gk_vec b = bias ? VLOAD(bias + (blk % cb) * V) : VZERO();
        float *orow = out + (blk * oh + oy) * ow * V;
        const float *rrow = res ? res + (blk * oh + oy) * ow * V : NULL;
        ptrdiff_t iy0 = (ptrdiff_t)(oy * sh) - (ptrdiff_t)ph;
        size_t y0, y1;
        dw_taps(iy0, ih, kh, dh, &y0, &y1);
        dw_row(ib, w, b, orow, rrow, iy0, y0, y1, PTRDIFF_MAX, iw, ow, kw, sw, pw, dh, dw, ox_lo,
               ox_hi, act, alpha, beta);
    }
}
