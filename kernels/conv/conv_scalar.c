// conv_scalar.c - Reference f32 convolution, NCHW, direct: 2-D, and 1-D to 3-D with the spatial
// dims padded to three ([D][H][W], missing ones of size 1); groups, strides, dilations,
// asymmetric pads, optional bias and a fused activation. Split over output planes (n, m).
//
// The loops run tap by tap over whole output rows, with each tap's valid column range worked
// out in advance, so the innermost loop has no bounds checks and (stride 1) reads and writes
// contiguous memory - the form LLVM vectorizes once the shapes are constants. The any-kind
// kernels (Conv and ConvTranspose of f16, bf16, f64) have the same shape over a row of double
// accumulators.
#include "gk_dtype.h"
#include "kernels.h"

/* First and one-past-last output index o with 0 <= o*stride + off < in. */
static inline void valid_range(int64_t off, int64_t stride, int64_t in, int64_t out,
                               int64_t *lo, int64_t *hi)
{
    int64_t a = 0, b = out;
    if (off < 0)
        a = (-off + stride - 1) / stride;
    int64_t last = in - 1 - off;
    if (last < 0)
        b = 0;
    else if (last / stride + 1 < b)
        b = last / stride + 1;
    *lo = a;
    *hi = b > a ? b : a;
}

/* One output plane, tap by tap over whole output rows. */
static inline void plane_general(const float *xg, const float *wm, float *yp, int64_t cg,
                                 int64_t h, int64_t wd, int64_t kh, int64_t kw, int64_t oh,
                                 int64_t ow, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                                 int64_t ph, int64_t pw)
{
    int64_t in_plane = h * wd;
    for (int64_t ic = 0; ic < cg; ic++) {
        const float *xc = xg + ic * in_plane;
        for (int64_t ky = 0; ky < kh; ky++) {
            int64_t ylo, yhi;
            valid_range(ky * dh - ph, sh, h, oh, &ylo, &yhi);
            for (int64_t kx = 0; kx < kw; kx++) {
                float wv = wm[(ic * kh + ky) * kw + kx];
                int64_t xlo, xhi, xoff = kx * dw - pw;
                valid_range(xoff, sw, wd, ow, &xlo, &xhi);
                for (int64_t oy = ylo; oy < yhi; oy++) {
                    const float *xr = xc + (oy * sh + ky * dh - ph) * wd + xoff;
                    float *yr = yp + oy * ow;
                    for (int64_t ox = xlo; ox < xhi; ox++)
                        yr[ox] += wv * xr[ox * sw];
                }
            }
        }
    }
}

/* One output plane of a 1x1, stride-1, unpadded convolution: whole planes at once, a long
 * contiguous vector loop even where rows are short (7x7 or 14x14 feature maps). */
static inline void plane_1x1(const float *xg, const float *wm, float *yp, int64_t cg,
                             int64_t plane)
{
    for (int64_t ic = 0; ic < cg; ic++) {
        float wv = wm[ic];
        const float *xc = xg + ic * plane;
        for (int64_t i = 0; i < plane; i++)
            yp[i] += wv * xc[i];
    }
}

void gk_conv2d_f32_scalar(const float *x, const float *w, const float *bias, float *y,
                          int64_t n, int64_t c, int64_t h, int64_t wd, int64_t m, int64_t kh,
                          int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                          int64_t dw, int64_t ph, int64_t pw, int64_t group, int act,
                          double alpha, double beta, int tid, int nthreads)
{
    int64_t cg = c / group, mg = m / group, plane = oh * ow, in_plane = h * wd;
    bool pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0 &&
                     oh == h && ow == wd;
    int64_t lo, hi;
    gk_split(n * m, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t b = p / m, oc = p % m, g = oc / mg;
        float *yp = y + p * plane;
        float bv = bias ? bias[oc] : 0.0f;
        for (int64_t i = 0; i < plane; i++)
            yp[i] = bv;
        const float *xg = x + (b * c + g * cg) * in_plane;
        const float *wm = w + oc * cg * kh * kw;
        if (pointwise)
            plane_1x1(xg, wm, yp, cg, plane);
        else
            plane_general(xg, wm, yp, cg, h, wd, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw);
        if (act != GK_ACT_NONE)
            for (int64_t i = 0; i < plane; i++)
                yp[i] = gk_act(act, yp[i], alpha, beta);
    }
}

/* One output volume of the 3-D form, tap by tap over whole output rows: per input channel
 * and tap (kz, ky, kx) in the evaluator's order, so each output sums its terms in the same
 * order as the evaluator's column-buffer loop. */
static inline void volume_general(const float *xg, const float *wm, float *yp, int64_t cg,
                                  const int64_t *in, const int64_t *out, const int64_t *k,
                                  const int64_t *s, const int64_t *dl, const int64_t *pd)
{
    int64_t in_vol = in[0] * in[1] * in[2];
    for (int64_t ic = 0; ic < cg; ic++) {
        const float *xc = xg + ic * in_vol;
        for (int64_t kz = 0; kz < k[0]; kz++) {
            int64_t zlo, zhi, zoff = kz * dl[0] - pd[0];
            valid_range(zoff, s[0], in[0], out[0], &zlo, &zhi);
            for (int64_t ky = 0; ky < k[1]; ky++) {
                int64_t ylo, yhi, yoff = ky * dl[1] - pd[1];
                valid_range(yoff, s[1], in[1], out[1], &ylo, &yhi);
                for (int64_t kx = 0; kx < k[2]; kx++) {
                    float wv = wm[((ic * k[0] + kz) * k[1] + ky) * k[2] + kx];
                    int64_t xlo, xhi, xoff = kx * dl[2] - pd[2];
                    valid_range(xoff, s[2], in[2], out[2], &xlo, &xhi);
                    for (int64_t oz = zlo; oz < zhi; oz++)
                        for (int64_t oy = ylo; oy < yhi; oy++) {
                            const float *xr =
                                xc + ((oz * s[0] + zoff) * in[1] + oy * s[1] + yoff) * in[2] +
                                xoff;
                            float *yr = yp + (oz * out[1] + oy) * out[2];
                            for (int64_t ox = xlo; ox < xhi; ox++)
                                yr[ox] += wv * xr[ox * s[2]];
                        }
                }
            }
        }
    }
}

/* The strided form's column buffer, on the stack: kdim x positions floats (128 KiB). */
#define COL_FLOATS 32768
#define COL_MIN_POSITIONS 16

/* col[kk][q] = the input under tap kk (ic, kz, ky, kx) of output position q0 + q (positions
 * flattened over [OD][OH][OW]), 0 in the padding. */
static inline void unfold(const float *xg, float *col, int64_t cg, int64_t q0, int64_t nq,
                          const int64_t *in, const int64_t *out, const int64_t *k,
                          const int64_t *s, const int64_t *dl, const int64_t *pd)
{
    int64_t kk = 0, in_vol = in[0] * in[1] * in[2];
    for (int64_t ic = 0; ic < cg; ic++)
        for (int64_t kz = 0; kz < k[0]; kz++)
            for (int64_t ky = 0; ky < k[1]; ky++)
                for (int64_t kx = 0; kx < k[2]; kx++, kk++) {
                    float *dst = col + kk * nq;
                    int64_t oz = q0 / (out[1] * out[2]), oy = q0 / out[2] % out[1];
                    int64_t ox = q0 % out[2];
                    for (int64_t q = 0; q < nq; q++) {
                        int64_t iz = oz * s[0] - pd[0] + kz * dl[0];
                        int64_t iy = oy * s[1] - pd[1] + ky * dl[1];
                        int64_t ix = ox * s[2] - pd[2] + kx * dl[2];
                        bool inside = iz >= 0 && iz < in[0] && iy >= 0 && iy < in[1] &&
                                      ix >= 0 && ix < in[2];
                        dst[q] = inside ? xg[ic * in_vol + (iz * in[1] + iy) * in[2] + ix] : 0;
                        if (++ox == out[2]) {
                            ox = 0;
                            if (++oy == out[1])
                                oy = 0, oz++;
                        }
                    }
                }
}

/* Four output channels (weights w, rows kdim apart; results y0..y3) over nq positions of
 * the column buffer: each output sums its bias and then the taps in kk order, as one channel
 * at a time would, and each column row is read once for the four. */
static inline void four_channels(const float *restrict col, int64_t nq, int64_t kdim,
                                 const float *restrict w, const float *restrict bias,
                                 float *restrict y0, float *restrict y1, float *restrict y2,
                                 float *restrict y3)
{
    for (int64_t q = 0; q < nq; q++) {
        y0[q] = bias ? bias[0] : 0.0f;
        y1[q] = bias ? bias[1] : 0.0f;
        y2[q] = bias ? bias[2] : 0.0f;
        y3[q] = bias ? bias[3] : 0.0f;
    }
    for (int64_t kk = 0; kk < kdim; kk++) {
        const float *cr = col + kk * nq;
        float a0 = w[kk], a1 = w[kdim + kk], a2 = w[2 * kdim + kk], a3 = w[3 * kdim + kk];
        for (int64_t q = 0; q < nq; q++) {
            float v = cr[q];
            y0[q] += a0 * v;
            y1[q] += a1 * v;
            y2[q] += a2 * v;
            y3[q] += a3 * v;
        }
    }
}

/* Output channels [oc0, oc1) of one image and group through the column buffer, a band of
 * positions at a time: y[q] = bias + sum_kk w[kk] * col[kk][q], in the evaluator's kk order.
 * For strided convolutions (a 1-D front-end with a long kernel and a large hop), whose
 * direct form reads the input with a stride in its innermost loop. */
static inline void channels_unfolded(const float *xg, const float *w, const float *bias,
                                     float *y, int64_t oc0, int64_t oc1, int64_t cg,
                                     const int64_t *in, const int64_t *out, const int64_t *k,
                                     const int64_t *s, const int64_t *dl, const int64_t *pd,
                                     int act, double alpha, double beta)
{
    int64_t kdim = cg * k[0] * k[1] * k[2], vol = out[0] * out[1] * out[2];
    int64_t band = COL_FLOATS / kdim;
    float col[COL_FLOATS];
    for (int64_t q0 = 0; q0 < vol; q0 += band) {
        int64_t nq = vol - q0 < band ? vol - q0 : band;
        unfold(xg, col, cg, q0, nq, in, out, k, s, dl, pd);
        int64_t oc = oc0;
        for (; oc + 4 <= oc1; oc += 4)
            four_channels(col, nq, kdim, w + oc * kdim, bias ? bias + oc : NULL,
                          y + oc * vol + q0, y + (oc + 1) * vol + q0, y + (oc + 2) * vol + q0,
                          y + (oc + 3) * vol + q0);
        for (; oc < oc1; oc++) {
            const float *wm = w + oc * kdim;
            float *yq = y + oc * vol + q0;
            float bv = bias ? bias[oc] : 0.0f;
            for (int64_t q = 0; q < nq; q++)
                yq[q] = bv;
            for (int64_t kk = 0; kk < kdim; kk++) {
                float wv = wm[kk];
                const float *cr = col + kk * nq;
                for (int64_t q = 0; q < nq; q++)
                    yq[q] += wv * cr[q];
            }
        }
        if (act != GK_ACT_NONE)
            for (int64_t oc = oc0; oc < oc1; oc++)
                for (int64_t q = 0; q < nq; q++)
                    y[oc * vol + q0 + q] = gk_act(act, y[oc * vol + q0 + q], alpha, beta);
    }
}

void gk_conv3d_f32_scalar(const float *x, const float *w, const float *bias, float *y,
                          int64_t n, int64_t c, int64_t d, int64_t h, int64_t wd, int64_t m,
                          int64_t kd, int64_t kh, int64_t kw, int64_t od, int64_t oh,
                          int64_t ow, int64_t sd, int64_t sh, int64_t sw, int64_t dd,
                          int64_t dh, int64_t dw, int64_t pd, int64_t ph, int64_t pw,
                          int64_t group, int act, double alpha, double beta, int tid,
                          int nthreads)
{
    const int64_t in[3] = { d, h, wd }, out[3] = { od, oh, ow }, k[3] = { kd, kh, kw };
    const int64_t s[3] = { sd, sh, sw }, dl[3] = { dd, dh, dw }, pad[3] = { pd, ph, pw };
    int64_t cg = c / group, mg = m / group, vol = od * oh * ow, in_vol = d * h * wd;
    bool pointwise = kd == 1 && kh == 1 && kw == 1 && sd == 1 && sh == 1 && sw == 1 &&
                     pd == 0 && ph == 0 && pw == 0 && vol == in_vol;
    int64_t lo, hi;
    gk_split(n * m, 1, tid, nthreads, &lo, &hi);
    if (sw > 1 && cg * kd * kh * kw <= COL_FLOATS / COL_MIN_POSITIONS) {
        /* The thread's channels in runs of one image and group, each run unfolded once. */
        for (int64_t p = lo; p < hi;) {
            int64_t b = p / m, g = p % m / mg, end = b * m + (g + 1) * mg;
            end = end < hi ? end : hi;
            channels_unfolded(x + (b * c + g * cg) * in_vol, w, bias, y + b * m * vol,
                              p % m, end - b * m, cg, in, out, k, s, dl, pad, act, alpha,
                              beta);
            p = end;
        }
        return;
    }
    for (int64_t p = lo; p < hi; p++) {
        int64_t b = p / m, oc = p % m, g = oc / mg;
        float *yp = y + p * vol;
        float bv = bias ? bias[oc] : 0.0f;
        for (int64_t i = 0; i < vol; i++)
            yp[i] = bv;
        const float *xg = x + (b * c + g * cg) * in_vol;
        const float *wm = w + oc * cg * kd * kh * kw;
        if (pointwise)
            plane_1x1(xg, wm, yp, cg, vol);
        else
            volume_general(xg, wm, yp, cg, in, out, k, s, dl, pad);
        if (act != GK_ACT_NONE)
            for (int64_t i = 0; i < vol; i++)
                yp[i] = gk_act(act, yp[i], alpha, beta);
    }
}

/* Output columns per accumulator row of the any-kind kernels (on the stack). */
#define ANY_COLS 512

/* Convolution terms of output row (oz, oy), columns [o0, o1), into acc: x * w in double for
 * every tap inside the input, in (input channel, kz, ky, kx) order, as the evaluator's generic
 * loop adds them; tap by tap over the columns the tap reaches (no bounds checks inside). x
 * starts at the group's first input channel, w at the output channel's weights. */
static inline void conv_row_any(int dt, const void *x, int64_t x0, const void *w, int64_t w0,
                                double *acc, int64_t oz, int64_t oy, int64_t o0, int64_t o1,
                                int64_t cg, const int64_t *in, const int64_t *out,
                                const int64_t *k, const int64_t *s, const int64_t *dl,
                                const int64_t *pd)
{
    int64_t in_vol = in[0] * in[1] * in[2];
    for (int64_t ic = 0; ic < cg; ic++)
        for (int64_t kz = 0; kz < k[0]; kz++) {
            int64_t iz = oz * s[0] - pd[0] + kz * dl[0];
            for (int64_t ky = 0; ky < k[1] && iz >= 0 && iz < in[0]; ky++) {
                int64_t iy = oy * s[1] - pd[1] + ky * dl[1];
                if (iy < 0 || iy >= in[1])
                    continue;
                int64_t row = x0 + ic * in_vol + (iz * in[1] + iy) * in[2];
                int64_t wt = w0 + ((ic * k[0] + kz) * k[1] + ky) * k[2];
                for (int64_t kx = 0; kx < k[2]; kx++) {
                    double wv = gk_ldf(dt, w, wt + kx);
                    int64_t lo, hi, off = kx * dl[2] - pd[2];
                    valid_range(off, s[2], in[2], out[2], &lo, &hi);
                    lo = lo > o0 ? lo : o0;
                    hi = hi < o1 ? hi : o1;
                    for (int64_t ox = lo; ox < hi; ox++)
                        acc[ox - o0] += gk_ldf(dt, x, row + ox * s[2] + off) * wv;
                }
            }
        }
}

/* The input index of output o through tap k (o = i * s - pad + k * dil), or -1 when none. */
static inline int64_t source_any(int64_t o, int64_t k, int64_t s, int64_t dil, int64_t pad,
                                 int64_t in)
{
    int64_t t = o + pad - k * dil;
    return t >= 0 && t % s == 0 && t / s < in ? t / s : -1;
}

/* ceil(a / b) for b > 0. */
static inline int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -(-a / b);
}

/* ConvTranspose terms of output row (oz, oy), columns [o0, o1), into acc: x * w in double
 * over the input elements that land on each output, in (input channel, iz, iy, ix) order as
 * the evaluator's scatter adds them - taps in descending (kz, ky, kx) order. x starts at the
 * group's first input channel, w at its weights for the output channel. */
static inline void deconv_row_any(int dt, const void *x, int64_t x0, const void *w,
                                  int64_t w0, double *acc, int64_t oz, int64_t oy, int64_t o0,
                                  int64_t o1, int64_t cg, int64_t mg, const int64_t *in,
                                  const int64_t *k, const int64_t *s, const int64_t *dl,
                                  const int64_t *pd)
{
    int64_t in_vol = in[0] * in[1] * in[2], ksz = k[0] * k[1] * k[2];
    for (int64_t ic = 0; ic < cg; ic++)
        for (int64_t kz = k[0] - 1; kz >= 0; kz--) {
            int64_t iz = source_any(oz, kz, s[0], dl[0], pd[0], in[0]);
            for (int64_t ky = k[1] - 1; ky >= 0 && iz >= 0; ky--) {
                int64_t iy = source_any(oy, ky, s[1], dl[1], pd[1], in[1]);
                if (iy < 0)
                    continue;
                int64_t row = x0 + ic * in_vol + (iz * in[1] + iy) * in[2];
                int64_t wt = w0 + ic * mg * ksz + (kz * k[1] + ky) * k[2];
                for (int64_t kx = k[2] - 1; kx >= 0; kx--) {
                    /* ox = ix * s - t for the ix inside the input and the columns. */
                    int64_t t = pd[2] - kx * dl[2];
                    int64_t lo = ceil_div(o0 + t, s[2]), hi = ceil_div(o1 + t, s[2]);
                    lo = lo > 0 ? lo : 0;
                    hi = hi < in[2] ? hi : in[2];
                    double wv = gk_ldf(dt, w, wt + kx);
                    for (int64_t ix = lo; ix < hi; ix++)
                        acc[ix * s[2] - t - o0] += gk_ldf(dt, x, row + ix) * wv;
                }
            }
        }
}

/* Conv (tr false) or ConvTranspose (tr true) of any float kind dt, a row of double
 * accumulators at a time: a convolution's outputs start from the bias, as the evaluator's
 * generic loop; a transposed one's from 0, the bias added after its terms, as its scatter.
 * Rounded once. Split over output planes (n, m). */
static inline void window_any(bool tr, int dt, const void *x, const void *w, const void *bias,
                              void *y, int64_t n, int64_t c, int64_t m, const int64_t *in,
                              const int64_t *out, const int64_t *k, const int64_t *s,
                              const int64_t *dl, const int64_t *pd, int64_t group, int tid,
                              int nthreads)
{
    int64_t cg = c / group, mg = m / group, ksz = k[0] * k[1] * k[2];
    int64_t in_vol = in[0] * in[1] * in[2], lo, hi;
    gk_split(n * m, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t b = p / m, oc = p % m, x0 = (b * c + oc / mg * cg) * in_vol;
        int64_t w0 = tr ? (oc / mg * cg * mg + oc % mg) * ksz : oc * cg * ksz;
        double bv = bias ? gk_ldf(dt, bias, oc) : 0.0;
        for (int64_t oz = 0; oz < out[0]; oz++)
            for (int64_t oy = 0; oy < out[1]; oy++)
                for (int64_t o0 = 0; o0 < out[2]; o0 += ANY_COLS) {
                    int64_t o1 = out[2] - o0 < ANY_COLS ? out[2] : o0 + ANY_COLS;
                    double acc[ANY_COLS];
                    for (int64_t ox = o0; ox < o1; ox++)
                        acc[ox - o0] = tr ? 0.0 : bv;
                    if (tr)
                        deconv_row_any(dt, x, x0, w, w0, acc, oz, oy, o0, o1, cg, mg, in, k, s,
                                       dl, pd);
                    else
                        conv_row_any(dt, x, x0, w, w0, acc, oz, oy, o0, o1, cg, in, out, k, s,
                                     dl, pd);
                    int64_t yr = ((p * out[0] + oz) * out[1] + oy) * out[2];
                    for (int64_t ox = o0; ox < o1; ox++)
                        gk_stf(dt, y, yr + ox, tr ? acc[ox - o0] + bv : acc[ox - o0]);
                }
    }
}

void gk_conv3d_any_scalar(int dt, const void *x, const void *w, const void *bias, void *y,
                          int64_t n, int64_t c, int64_t d, int64_t h, int64_t wd, int64_t m,
                          int64_t kd, int64_t kh, int64_t kw, int64_t od, int64_t oh,
                          int64_t ow, int64_t sd, int64_t sh, int64_t sw, int64_t dd,
                          int64_t dh, int64_t dw, int64_t pd, int64_t ph, int64_t pw,
                          int64_t group, int tid, int nthreads)
{
    const int64_t in[3] = { d, h, wd }, out[3] = { od, oh, ow }, k[3] = { kd, kh, kw };
    const int64_t s[3] = { sd, sh, sw }, dl[3] = { dd, dh, dw }, pad[3] = { pd, ph, pw };
    window_any(false, dt, x, w, bias, y, n, c, m, in, out, k, s, dl, pad, group, tid, nthreads);
}

void gk_deconv3d_any_scalar(int dt, const void *x, const void *w, const void *bias, void *y,
                            int64_t n, int64_t c, int64_t d, int64_t h, int64_t wd, int64_t m,
                            int64_t kd, int64_t kh, int64_t kw, int64_t od, int64_t oh,
                            int64_t ow, int64_t sd, int64_t sh, int64_t sw, int64_t dd,
                            int64_t dh, int64_t dw, int64_t pd, int64_t ph, int64_t pw,
                            int64_t group, int tid, int nthreads)
{
    const int64_t in[3] = { d, h, wd }, out[3] = { od, oh, ow }, k[3] = { kd, kh, kw };
    const int64_t s[3] = { sd, sh, sw }, dl[3] = { dd, dh, dw }, pad[3] = { pd, ph, pw };
    window_any(true, dt, x, w, bias, y, n, c, m, in, out, k, s, dl, pad, group, tid, nthreads);
}
