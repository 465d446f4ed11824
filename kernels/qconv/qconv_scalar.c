// qconv_scalar.c - Int8 convolution (group 1) in plain C: the reference of the qconv contract
// (qconv_tmpl.h) and the portable variant (aarch64 bundles). Weights packed with vlen = 1
// (qpack.h): [M][KH][KW][C4 * 4], so each output channel reads its taps contiguously.
#include "../kernels.h"
#include "../qmath.h"
#include "../units.h"
#include "qres.h"

void gk_qconv_u8_scalar(const uint8_t *x, const int8_t *wp, const int32_t *bias,
                        const float *mult, uint8_t *y, int64_t n, int64_t h, int64_t w, int64_t c,
                        int64_t xcs, int64_t m, int64_t ycs, int64_t kh, int64_t kw, int64_t oh,
                        int64_t ow, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                        int64_t pw, int x_zero, int x_flip, int y_zero, int y_lo, int y_hi,
                        float post_mult, int post_zero, int post_i8, const uint8_t *res,
                        const float *rq, int rmode, unsigned *work, int tid, int nthreads)
{
    gk_qres rs = gk_qres_of(res, rq, rmode);
    int64_t cb = (c + 3) / 4 * 4, ohw = oh * ow;
    uint8_t flip = x_flip ? 0x80 : 0;
    gk_units it = gk_units_of((size_t)(n * ohw), work, tid, nthreads);
    for (size_t qq; gk_units_next(&it, &qq);) {
        int64_t q = (int64_t)qq, ni = q / ohw, oy = q % ohw / ow, ox = q % ow;
        uint8_t *yp = y + q * ycs;
        for (int64_t mi = 0; mi < m; mi++) {
            /* Unsigned arithmetic wraps as the SIMD accumulators do, without UB in C. */
            uint32_t acc = (uint32_t)bias[mi];
            const int8_t *wm = wp + mi * kh * kw * cb;
            for (int64_t ky = 0; ky < kh; ky++)
                for (int64_t kx = 0; kx < kw; kx++) {
                    int64_t iy = oy * sh - ph + ky * dh, ix = ox * sw - pw + kx * dw;
                    const int8_t *wt = wm + (ky * kw + kx) * cb;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
                        for (int64_t ci = 0; ci < c; ci++)
                            acc += (uint32_t)(x_zero * wt[ci]);
                        continue;
                    }
                    const uint8_t *xp = x + ((ni * h + iy) * w + ix) * xcs;
                    for (int64_t ci = 0; ci < c; ci++)
                        acc += (uint32_t)((int32_t)(uint8_t)(xp[ci] ^ flip) * wt[ci]);
                }
            int32_t v = gk_requant((int32_t)acc, mult[mi], y_zero, y_lo, y_hi);
            if (rs.res)
                v = gk_qres_apply(&rs, v, y_zero, rs.res[q * ycs + mi]);
            else if (post_mult != 0.0f)
                v = gk_requant(v - y_zero, post_mult, post_zero, post_i8 ? -128 : 0,
                               post_i8 ? 127 : 255);
            yp[mi] = (uint8_t)v;
        }
    }
}
