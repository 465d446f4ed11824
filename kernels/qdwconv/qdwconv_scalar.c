// qdwconv_scalar.c - Quantized 8-bit depthwise convolution on NHWC, one channel at a time:
// the reference of the AVX variants. Weights and bias as qdwpack.h packs them.
#include "../kernels.h"
#include "../q8.h"
#include "qdwpack.h"

void gk_qdwconv_q8_scalar(const uint8_t *x, const int16_t *wp, const int32_t *bias,
                          const float *mult, uint8_t *y, int x_flip, int x_zero, int y_zero,
                          int lo, int hi, int64_t n, int64_t c, int64_t h, int64_t w,
                          int64_t xcs, int64_t oh, int64_t ow, int64_t ycs, int64_t kh,
                          int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                          int64_t pw, unsigned *work, int tid, int nthreads)
{
    gk_units it;
    int64_t chunks = gk_q_units_of(n, oh, c, work, tid, nthreads, &it);
    int64_t cp = gk_qdw_cpad(c);
    int32_t flip = x_flip ? 0x80 : 0;
    for (size_t uu; gk_units_next(&it, &uu);) {
        int64_t u = (int64_t)uu, r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, c1 = c0 + GK_Q_CHUNK < c ? c0 + GK_Q_CHUNK : c;
        int64_t y0, y1;
        gk_q_taps(oy, sh, ph, dh, kh, h, &y0, &y1);
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t x0, x1;
            gk_q_taps(ox, sw, pw, dw, kw, w, &x0, &x1);
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs;
            for (int64_t ch = c0; ch < c1; ch++) {
                int32_t acc = bias[ch];
                for (int64_t ky = 0; ky < kh; ky++)
                    for (int64_t kx = 0; kx < kw; kx++) {
                        int32_t v = x_zero; /* a tap in the pads */
                        if (ky >= y0 && ky < y1 && kx >= x0 && kx < x1)
                            v = x[((b * h + oy * sh - ph + ky * dh) * w + ox * sw - pw +
                                   kx * dw) * xcs + ch] ^ flip;
                        acc += v * wp[(ky * kw + kx) * cp + ch];
                    }
                yp[ch] = (uint8_t)gk_requant(acc, mult[ch], y_zero, lo, hi);
            }
        }
    }
}
