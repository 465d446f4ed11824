// pwdw_tmpl.h - The fused pointwise-expand + depthwise convolution of inverted-residual blocks
// (MobileNet v2) on the channel-blocked layout: y = act2(dw(act1(x * W1 + b1)) + b2 [+ res]),
// the 1x1 expansion's output never stored whole. Included after conv_tmpl.h by
// conv_avx512.c / conv_avx2.c (one template for both vector lengths): the 1x1 part runs
// conv_tmpl.h's tile_1x1 and the depthwise part its dw_row, so every output is computed by
// exactly the instructions of the unfused pair (cpu.conv_nchwc then cpu.dwconv_nchwc), and the
// fused kernel's results are bit-identical to theirs.
//
// The walk (pwdw_plan.h): a work unit is (image, band of output rows, pair of expanded channel
// blocks). The pair's 1x1 weights stay in L1 over the band. Input rows of the expansion are
// computed into a ring of R rows per block (the thread's scratch slot), as many at a time as
// the ring allows without overwriting a row the current output row still reads, and without
// crossing the ring's end (so that a run of rows is one flattened run of pixels for the 1x1
// tile); then the depthwise convolution reads them from the ring for each output row.
#include "pwdw_plan.h"

/* One 1x1 tile of the expansion: npw pixels from q, the first `live` of them stored. The
 * same dispatch as conv_tile's 1x1 case, written here rather than called: through conv_tile,
 * or an inline helper both share, the one-block model of features.2 took 7-17 % more
 * instructions to compile (callgrind) for the same object code. */
#define PWDW_TILE(q, live)                                                               \
    do {                                                                                 \
        if (NM > 1)                                                                      \
            tile_1x1(s, 2, NP, (live), true, xi, (q), w, o, bias, NULL, act, alpha, beta, &ck); \
        else                                                                             \
            tile_1x1(s, 1, NP, (live), true, xi, (q), w, o, bias, NULL, act, alpha, beta, &ck); \
    } while (0)

/* Expanded rows [a, b) of image x (a < b) into the ring's slots from `slot` (no wrap): the 1x1
 * convolution over the run's (b - a) * iw pixels as one flattened row in tiles of npw pixels,
 * all input blocks in one chunk (the unfused kernel's chunks store and reload exact partial
 * sums: the same values).
 * Every tile is a whole one: a run that is not a multiple of npw ends with a tile moved back
 * to end at the run's end, which computes some pixels a second time. That is safe here (one
 * chunk, no residual, the ring apart from the input) and gives the same values, since a pixel
 * sums its inputs in one order in any tile. A tile with a run-time count of stored pixels
 * instead, which the run lengths need (each run is a run-time number of rows), kept LLVM from
 * specializing the one tile instance it shares with the whole tiles: on AVX2 the expansion of
 * MobileNet v2's features.2 (16 -> 96 channels at 112x112) ran 2.5x slower than the unfused
 * 1x1, and the model 11 % slower. Only a run shorter than one tile (rows narrower than npw,
 * rows of at most 11 pixels; with iw >= npw the test folds away) keeps the partial tile. */
GK_INLINE void pwdw_expand(conv_shape *s, int NM, size_t npw, const float *x, size_t a,
                           size_t b, size_t iw, float *ring, size_t slot, const float *w,
                           const float *bias, int act, float alpha, float beta)
{
    const conv_chunk ck = { 0, s->cb, true, true };
    size_t npix = (b - a) * iw;
    s->iw = s->ow = npix;
    const float *xi = x + a * iw * s->cv;
    float *o = ring + slot * iw * GK_VLEN;
    const int NP = (int)npw;
    if (iw < npw && npix < npw) {
        PWDW_TILE(0, (int)npix);
        return;
    }
    /* One call site: each one is a copy of the tile once inlined. */
    for (size_t q0 = 0; q0 < npix; q0 += npw)
        PWDW_TILE(q0 + npw <= npix ? q0 : npix - npw, NP);
}
#undef PWDW_TILE

void GK_FN(pwdw_nchwc)(float *out, const float *in, const float *w1, const float *b1,
                       const float *w2, const float *b2, const float *res, float *scratch,
                       size_t slots, size_t n, size_t cb, size_t cv, size_t ih, size_t iw,
                       size_t mb, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh,
                       size_t sw, size_t ph, size_t pw, int act1, float alpha1, float beta1,
                       int act2, float alpha2, float beta2, unsigned *work, int tid,
                       int nthreads)
{
    const size_t V = GK_VLEN;
    /* One scratch slot per thread: threads past the slots take no units (the others take
     * theirs from the counter, or share the static split among themselves). */
    int nth = (size_t)nthreads < slots ? nthreads : (int)slots;
    if (tid >= nth || !n || !oh || !ow)
        return;
    const size_t R = gk_pwdw_ring_rows(ih, iw, kh, V);
    float *ring = scratch + (size_t)tid * gk_pwdw_slot_floats(ih, iw, kh, V);
    const size_t ring_block = R * iw * V; /* floats between the pair's two rings */
    /* The 1x1 tile's width for a run of R rows, the usual run (conv_tmpl.h's conv_width: a 7x7
     * plane's 49 pixels as 4 x 10 + 9, not 4 x 12 + 1); shorter runs end in a partial tile.
     * A constant once the JIT inlines the kernel with constant shapes. */
    const size_t npw = conv_width(R * iw, false);
    size_t pairs = (mb + 1) / 2, bands = gk_pwdw_bands(n, pairs, oh, (size_t)nth);
    size_t bh = (oh + bands - 1) / bands;
    bands = (oh + bh - 1) / bh;
    /* The 1x1 shape (pwdw_expand sets its row length per run): stride 1, no pads; input blocks
     * ih * iw * cv apart, the pair's second block's weights and ring one block further. */
    conv_shape s = { cb, cv, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0 };
    s.in_bstride = ih * iw * cv;
    s.w_mstride = cb * cv * V;
    s.out_bstride = ring_block;
    size_t ox_lo, ox_hi;
    dw_cols(iw, ow, kw, sw, pw, 1, &ox_lo, &ox_hi);
    gk_units units = gk_units_of(n * bands * pairs, work, tid, nth);
    for (size_t u; gk_units_next(&units, &u);) {
        size_t pair = u % pairs, band = u / pairs % bands, img = u / (pairs * bands);
        size_t m0 = 2 * pair;
        /* Written so that it folds to 2 for an even block count (no single-block tiles). */
        int NM = mb % 2 == 0 || m0 + 1 < mb ? 2 : 1;
        size_t oy0 = band * bh, oy1 = oy0 + bh < oh ? oy0 + bh : oh;
        const float *x = in + img * cb * s.in_bstride;
        const float *wp = w1 + m0 * s.w_mstride, *bp = b1 ? b1 + m0 * V : NULL;
        /* The band reads input rows below e1; rows below `next` are computed (those the
         * current output row reads are still in the ring). */
        ptrdiff_t last = (ptrdiff_t)((oy1 - 1) * sh) - (ptrdiff_t)ph + (ptrdiff_t)kh;
        size_t e1 = last < 0 ? 0 : (size_t)last > ih ? ih : (size_t)last, next = 0;
        for (size_t oy = oy0; oy < oy1; oy++) {
            ptrdiff_t iy0 = (ptrdiff_t)(oy * sh) - (ptrdiff_t)ph, base = 0;
            size_t y0, y1;
            dw_taps(iy0, ih, kh, 1, &y0, &y1);
            if (y0 < y1) {
                size_t lo = (size_t)(iy0 + (ptrdiff_t)y0), need = (size_t)(iy0 + (ptrdiff_t)y1);
                next = next < lo ? lo : next;
                while (next < need) {
                    /* Up to R rows from lo (older slots are free), not past the band's rows
                     * nor the ring's end. */
                    size_t slot = next % R, lim = lo + R < e1 ? lo + R : e1;
                    if (lim > next + (R - slot))
                        lim = next + (R - slot);
                    pwdw_expand(&s, NM, npw, x, next, lim, iw, ring, slot, wp, bp, act1,
                                alpha1, beta1);
                    next = lim;
                }
                /* Kernel row y reads ring slot base + y (minus R past the end). */
                base = (ptrdiff_t)(lo % R) - (ptrdiff_t)y0;
            }
            for (int j = 0; j < NM; j++) {
                size_t blk = m0 + (size_t)j, row = ((img * mb + blk) * oh + oy) * ow * V;
                gk_vec b = b2 ? VLOAD(b2 + blk * V) : VZERO();
                dw_row(ring + (size_t)j * ring_block, w2 + blk * kh * kw * V, b, out + row,
                       res ? res + row : NULL, base, y0, y1, (ptrdiff_t)R, iw, ow, kw, sw, pw, 1,
                       1, ox_lo, ox_hi, act2, alpha2, beta2);
            }
        }
    }
}
