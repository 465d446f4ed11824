// qpool_scalar.c - Quantized 8-bit max and average pooling on NHWC, one channel at a time: the
// reference of the AVX variants. Work units are (output row, chunk of GK_Q_CHUNK channels).
#include "../kernels.h"
#include "../q8.h"

void gk_qmaxpool_q8_scalar(const uint8_t *x, uint8_t *y, int x_signed, int64_t n, int64_t c,
                           int64_t h, int64_t w, int64_t xcs, int64_t oh, int64_t ow,
                           int64_t ycs, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                           int64_t dh, int64_t dw, int64_t ph, int64_t pw, int tid, int nthreads)
{
    int64_t u0, u1;
    int64_t chunks = gk_q_units(n, oh, c, tid, nthreads, &u0, &u1);
    int32_t init = x_signed ? -128 : 0; /* the kind's minimum: padding never wins */
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, c1 = c0 + GK_Q_CHUNK < c ? c0 + GK_Q_CHUNK : c;
        int64_t y0, y1;
        gk_q_taps(oy, sh, ph, dh, kh, h, &y0, &y1);
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t x0, x1;
            gk_q_taps(ox, sw, pw, dw, kw, w, &x0, &x1);
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs;
            for (int64_t ch = c0; ch < c1; ch++) {
                int32_t m = init;
                for (int64_t ky = y0; ky < y1; ky++) {
                    const uint8_t *row = x + (b * h + oy * sh - ph + ky * dh) * w * xcs + ch;
                    for (int64_t kx = x0; kx < x1; kx++) {
                        int32_t v = gk_q_load(row + (ox * sw - pw + kx * dw) * xcs, x_signed);
                        m = v > m ? v : m;
                    }
                }
                yp[ch] = (uint8_t)m;
            }
        }
    }
}

void gk_qavgpool_q8_scalar(const uint8_t *x, uint8_t *y, int x_signed, int x_zero, double sx,
                           double sy, int y_zero, int lo, int hi, int64_t n, int64_t c,
                           int64_t h, int64_t w, int64_t xcs, int64_t oh, int64_t ow,
                           int64_t ycs, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                           int64_t dh, int64_t dw, int64_t ph, int64_t pw, int64_t phe,
                           int64_t pwe, int count_include_pad, int tid, int nthreads)
{
    int64_t u0, u1;
    int64_t chunks = gk_q_units(n, oh, c, tid, nthreads, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, c1 = c0 + GK_Q_CHUNK < c ? c0 + GK_Q_CHUNK : c;
        int64_t y0, y1, py0, py1;
        gk_q_taps(oy, sh, ph, dh, kh, h, &y0, &y1);
        gk_q_taps(oy, sh, 0, dh, kh, ph + h + phe, &py0, &py1); /* taps inside the pads */
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t x0, x1, px0, px1;
            gk_q_taps(ox, sw, pw, dw, kw, w, &x0, &x1);
            gk_q_taps(ox, sw, 0, dw, kw, pw + w + pwe, &px0, &px1);
            int64_t inside = (y1 - y0) * (x1 - x0);
            int64_t count = count_include_pad ? (py1 - py0) * (px1 - px0) : inside;
            /* No tap counted: acc is 0 and the output y_zero, as 0 * inf -> NaN -> 0 does. */
            float mult = count ? gk_q_avg_multiplier(sx, sy, count) : 0.0f;
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs;
            for (int64_t ch = c0; ch < c1; ch++) {
                int32_t acc = 0;
                for (int64_t ky = y0; ky < y1; ky++) {
                    const uint8_t *row = x + (b * h + oy * sh - ph + ky * dh) * w * xcs + ch;
                    for (int64_t kx = x0; kx < x1; kx++)
                        acc += gk_q_load(row + (ox * sw - pw + kx * dw) * xcs, x_signed);
                }
                acc -= (int32_t)inside * x_zero;
                yp[ch] = (uint8_t)gk_requant(acc, mult, y_zero, lo, hi);
            }
        }
    }
}
