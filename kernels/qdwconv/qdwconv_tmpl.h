// qdwconv_tmpl.h - Quantized 8-bit depthwise convolution on NHWC, for AVX-512 (qdwconv_avx512.c,
// 16 channels per vector; it also builds at 8 lanes, but qdwconv_avx2.c has its own kernel with
// the taps in pairs, faster without AVX-512's wide int32 vectors). Each vector holds
// one int32 accumulator per channel: the input bytes widen to int32 lanes (their high 16 bits
// zero), the packed int16 weights (qdwpack.h) sign-extend, and madd_epi16 multiplies them, one
// cheap instruction where mullo_epi32 would be two. Taps in the pads read x_zero, which the
// packed bias has already subtracted; pixels whose window lies inside the input take a loop
// without bounds checks, four at a time where they can. A work unit is one output row's chunk
// of GK_Q_CHUNK channels.
#include "qdwpack.h"

/* acc + the taps of one output pixel for the QL channels at channel offset `ch`, every tap
 * inside the input. `at` is the x offset of the window's first tap (for channel `ch`). */
GK_INLINE qvi qdw_taps_inside(qvi acc, const uint8_t *x, int64_t at, const int16_t *wt,
                              int64_t cp, int64_t m, qvi flip, int64_t w, int64_t xcs,
                              int64_t kh, int64_t kw, int64_t dh, int64_t dw)
{
    for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
            qvi xv = QI_XOR(q_load8(x + (at + (ky * dh * w + kx * dw) * xcs), m, 0), flip);
            acc = QI_ADD(acc, QI_MUL16(xv, QI_LOAD16(wt + (ky * kw + kx) * cp)));
        }
    return acc;
}

/* The same for four output pixels `step` bytes apart in x, every tap of each inside the input:
 * each tap's weights are loaded once for the four, which halves the instructions per tap. */
GK_INLINE void qdw_taps_inside4(qvi acc[4], const uint8_t *x, int64_t at, int64_t step,
                                const int16_t *wt, int64_t cp, int64_t m, qvi flip, int64_t w,
                                int64_t xcs, int64_t kh, int64_t kw, int64_t dh, int64_t dw)
{
    for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
            qvi wv = QI_LOAD16(wt + (ky * kw + kx) * cp);
            int64_t t = at + (ky * dh * w + kx * dw) * xcs;
            for (int j = 0; j < 4; j++)
                acc[j] = QI_ADD(acc[j],
                                QI_MUL16(QI_XOR(q_load8(x + (t + j * step), m, 0), flip), wv));
        }
}

void QFN(qdwconv)(const uint8_t *x, const int16_t *wp, const int32_t *bias, const float *mult,
                  uint8_t *y, int x_flip, int x_zero, int y_zero, int lo, int hi, int64_t n,
                  int64_t c, int64_t h, int64_t w, int64_t xcs, int64_t oh, int64_t ow,
                  int64_t ycs, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                  int64_t dw, int64_t ph, int64_t pw, unsigned *work, int tid, int nthreads)
{
    gk_units it;
    int64_t chunks = gk_q_units_of(n, oh, c, work, tid, nthreads, &it);
    int64_t cp = gk_qdw_cpad(c);
    qvi flip = QI_SET1(x_flip ? 0x80 : 0), zx = QI_SET1(x_zero);
    qvi z = QI_SET1(y_zero), l = QI_SET1(lo), hv = QI_SET1(hi);
    for (size_t uu; gk_units_next(&it, &uu);) {
        int64_t u = (int64_t)uu, r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, cn = c - c0 < GK_Q_CHUNK ? c - c0 : GK_Q_CHUNK;
        int64_t y0, y1;
        gk_q_taps(oy, sh, ph, dh, kh, h, &y0, &y1);
        /* Offsets, not pointers, until a tap is inside: the window may start before x. */
        int64_t xrow = (b * h + oy * sh - ph) * w * xcs;
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t x0, x1;
            gk_q_taps(ox, sw, pw, dw, kw, w, &x0, &x1);
            bool inside = y0 == 0 && y1 == kh && x0 == 0 && x1 == kw;
            int64_t at = xrow + (ox * sw - pw) * xcs;
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs;
            if (inside && ox + 4 <= ow && (ox + 3) * sw - pw + (kw - 1) * dw < w) {
                /* Four pixels inside the input (the first is, and the fourth's last tap). */
                for (int64_t ch = c0; ch < c0 + cn; ch += QL) {
                    int64_t m = c0 + cn - ch;
                    qvi acc[4];
                    for (int j = 0; j < 4; j++)
                        acc[j] = QI_LOAD32(bias + ch);
                    qdw_taps_inside4(acc, x, at + ch, sw * xcs, wp + ch, cp, m, flip, w, xcs, kh,
                                     kw, dh, dw);
                    qvf mv = q_loadf(mult + ch, m);
                    for (int j = 0; j < 4; j++)
                        q_store8(yp + j * ycs + ch,
                                 q_round_sat(QF_MUL(QF_CVT(acc[j]), mv), z, l, hv), m);
                }
                ox += 3;
                continue;
            }
            for (int64_t ch = c0; ch < c0 + cn; ch += QL) {
                int64_t m = c0 + cn - ch;
                qvi acc = QI_LOAD32(bias + ch); /* bias and weights are padded to cp >= ch + QL */
                if (inside) {
                    acc = qdw_taps_inside(acc, x, at + ch, wp + ch, cp, m, flip, w, xcs, kh, kw,
                                          dh, dw);
                } else {
                    for (int64_t ky = 0; ky < kh; ky++)
                        for (int64_t kx = 0; kx < kw; kx++) {
                            qvi xv = zx;
                            if (ky >= y0 && ky < y1 && kx >= x0 && kx < x1)
                                xv = QI_XOR(q_load8(x + (at + ch + (ky * dh * w + kx * dw) * xcs),
                                                    m, 0),
                                            flip);
                            acc = QI_ADD(acc, QI_MUL16(xv, QI_LOAD16(wp + (ky * kw + kx) * cp +
                                                                     ch)));
                        }
                }
                qvf mv = q_loadf(mult + ch, m);
                q_store8(yp + ch, q_round_sat(QF_MUL(QF_CVT(acc), mv), z, l, hv), m);
            }
        }
    }
}
