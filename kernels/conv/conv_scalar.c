// conv_scalar.c - Reference f32 convolution, NCHW, direct: 2-D, and 1-D to 3-D with the spatial
// dims padded to three ([D][H][W], missing ones of size 1); groups, strides, dilations,
// asymmetric pads, optional bias and a fused activation. Split over output planes (n, m).
//
// The loops run tap by tap over whole output rows, with each tap's valid column range worked
// out in advance, so the innermost loop has no bounds checks and (stride 1) reads and writes
// contiguous memory - the form LLVM vectorizes once the shapes are constants.
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
