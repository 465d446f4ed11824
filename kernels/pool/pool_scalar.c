// pool_scalar.c - Reference f32 2-D max and average pooling, NCHW, with strides, dilations
// and pads, computed as the evaluator does (average in double). Split over planes (n, c).
#include "kernels.h"

/* Taps [*lo, *hi) of a window starting at `start` that fall inside [0, in). */
static inline void taps(int64_t start, int64_t k, int64_t dil, int64_t in, int64_t *lo,
                        int64_t *hi)
{
    int64_t a = 0, b = k;
    if (start < 0)
        a = (-start + dil - 1) / dil;
    int64_t last = in - 1 - start;
    if (last < 0)
        b = 0;
    else if (last / dil + 1 < b)
        b = last / dil + 1;
    *lo = a;
    *hi = b > a ? b : a;
}

void gk_maxpool2d_f32_scalar(const float *x, float *y, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                             int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                             int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(planes, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        const float *xp = x + p * h * w;
        float *yp = y + p * oh * ow;
        for (int64_t oy = 0; oy < oh; oy++) {
            int64_t ylo, yhi;
            taps(oy * sh - ph, kh, dh, h, &ylo, &yhi);
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t xlo, xhi;
                taps(ox * sw - pw, kw, dw, w, &xlo, &xhi);
                float best = -INFINITY;
                int any = 0;
                for (int64_t ky = ylo; ky < yhi; ky++)
                    for (int64_t kx = xlo; kx < xhi; kx++) {
                        float v = xp[(oy * sh - ph + ky * dh) * w + ox * sw - pw + kx * dw];
                        if (!any || v > best)
                            best = v, any = 1;
                    }
                yp[oy * ow + ox] = best;
            }
        }
    }
}

/* Pads: begin (ph0, pw0) and end (ph1, pw1); with count_include_pad the divisor counts the
 * taps inside [-begin, in + end), otherwise only those inside the input. */
void gk_avgpool2d_f32_scalar(const float *x, float *y, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                             int64_t sw, int64_t dh, int64_t dw, int64_t ph0, int64_t pw0,
                             int64_t ph1, int64_t pw1, int count_include_pad, int tid,
                             int nthreads)
{
    int64_t lo, hi;
    gk_split(planes, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        const float *xp = x + p * h * w;
        float *yp = y + p * oh * ow;
        for (int64_t oy = 0; oy < oh; oy++) {
            int64_t ylo, yhi, ys = oy * sh - ph0, ycnt = 0;
            taps(ys, kh, dh, h, &ylo, &yhi);
            for (int64_t k = 0; k < kh; k++)
                ycnt += ys + k * dh >= -ph0 && ys + k * dh < h + ph1;
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t xlo, xhi, xs = ox * sw - pw0, xcnt = 0;
                taps(xs, kw, dw, w, &xlo, &xhi);
                for (int64_t k = 0; k < kw; k++)
                    xcnt += xs + k * dw >= -pw0 && xs + k * dw < w + pw1;
                double acc = 0;
                for (int64_t ky = ylo; ky < yhi; ky++)
                    for (int64_t kx = xlo; kx < xhi; kx++)
                        acc += xp[(ys + ky * dh) * w + xs + kx * dw];
                int64_t count = count_include_pad ? ycnt * xcnt : (yhi - ylo) * (xhi - xlo);
                yp[oy * ow + ox] = (float)(acc / (double)count);
            }
        }
    }
}
