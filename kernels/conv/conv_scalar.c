// conv_scalar.c - Reference f32 2-D convolution, NCHW, direct: groups, strides, dilations,
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
