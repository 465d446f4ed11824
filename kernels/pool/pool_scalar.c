// pool_scalar.c - Reference max, average and Lp pooling, NCHW, with strides, dilations and
// pads, computed as the evaluator does (average and Lp in double): f32 2-D, and 1-D to 3-D
// with the spatial dims padded to three, f32 or any kind (one body, the kind a constant once
// inlined). Split over planes (n, c).
#include "gk_dtype.h"
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

/* MaxPool over [D][H][W] (missing dims of size 1). idx (may be NULL) gets the flattened
 * input index of each maximum, the first in window order on ties, as the evaluator's; a
 * window with no tap inside the input gives -inf and index 0. */
static inline void maxpool3d(int dt, const void *x, void *y, int64_t *idx, int64_t planes,
                             int64_t d, int64_t h, int64_t w, int64_t od, int64_t oh,
                             int64_t ow, int64_t kd, int64_t kh, int64_t kw, int64_t sd,
                             int64_t sh, int64_t sw, int64_t dd, int64_t dh, int64_t dw,
                             int64_t pd, int64_t ph, int64_t pw, int tid, int nthreads)
{
    int64_t in_vol = d * h * w, vol = od * oh * ow, lo, hi;
    gk_split(planes, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t yi = p * vol;
        for (int64_t oz = 0; oz < od; oz++) {
            int64_t zlo, zhi, zs = oz * sd - pd;
            taps(zs, kd, dd, d, &zlo, &zhi);
            for (int64_t oy = 0; oy < oh; oy++) {
                int64_t ylo, yhi, ys = oy * sh - ph;
                taps(ys, kh, dh, h, &ylo, &yhi);
                for (int64_t ox = 0; ox < ow; ox++, yi++) {
                    int64_t xlo, xhi, xs = ox * sw - pw, arg = -1;
                    taps(xs, kw, dw, w, &xlo, &xhi);
                    double best = -INFINITY;
                    for (int64_t kz = zlo; kz < zhi; kz++)
                        for (int64_t ky = ylo; ky < yhi; ky++) {
                            int64_t row = p * in_vol + ((zs + kz * dd) * h + ys + ky * dh) * w;
                            for (int64_t kx = xlo; kx < xhi; kx++) {
                                int64_t at = row + xs + kx * dw;
                                double v = gk_ldf(dt, x, at);
                                if (arg < 0 || v > best)
                                    best = v, arg = at;
                            }
                        }
                    arg = arg < 0 ? 0 : arg;
                    if (gk_dt_is_float(dt))
                        gk_stf(dt, y, yi, best);
                    else   /* integers: the maximum's own bits */
                        memcpy((char *)y + yi * gk_dt_size(dt),
                               (const char *)x + arg * gk_dt_size(dt), (size_t)gk_dt_size(dt));
                    if (idx)
                        idx[yi] = arg;
                }
            }
        }
    }
}

void gk_maxpool3d_f32_scalar(const float *x, float *y, int64_t *idx, int64_t planes,
                             int64_t d, int64_t h, int64_t w, int64_t od, int64_t oh,
                             int64_t ow, int64_t kd, int64_t kh, int64_t kw, int64_t sd,
                             int64_t sh, int64_t sw, int64_t dd, int64_t dh, int64_t dw,
                             int64_t pd, int64_t ph, int64_t pw, int tid, int nthreads)
{
    maxpool3d(GK_DT_F32, x, y, idx, planes, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, dd, dh,
              dw, pd, ph, pw, tid, nthreads);
}

/* Any numeric kind dt: compared as the evaluator compares them (as double); floats store the
 * maximum's value, integers copy its element. */
void gk_maxpool3d_any_scalar(int dt, const void *x, void *y, int64_t *idx, int64_t planes,
                             int64_t d, int64_t h, int64_t w, int64_t od, int64_t oh,
                             int64_t ow, int64_t kd, int64_t kh, int64_t kw, int64_t sd,
                             int64_t sh, int64_t sw, int64_t dd, int64_t dh, int64_t dw,
                             int64_t pd, int64_t ph, int64_t pw, int tid, int nthreads)
{
    maxpool3d(dt, x, y, idx, planes, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, dd, dh, dw, pd,
              ph, pw, tid, nthreads);
}

/* Taps of a window starting at `start` inside [-pad_begin, in + pad_end): the divisor of
 * count_include_pad. */
static inline int64_t padded_taps(int64_t start, int64_t k, int64_t dil, int64_t in,
                                  int64_t pb, int64_t pe)
{
    int64_t cnt = 0;
    for (int64_t t = 0; t < k; t++)
        cnt += start + t * dil >= -pb && start + t * dil < in + pe;
    return cnt;
}

/* AveragePool (p = 0) or LpPool (p >= 1) over [D][H][W]: the sum of the taps inside the input
 * (of |x|^p for Lp) in double, divided by their count (or with count_include_pad by the taps
 * inside the input plus the model's pads: begin pd/ph/pw, end pde/phe/pwe), or its p-th root. */
static inline void avgpool3d(int dt, const void *x, void *y, int64_t planes, int64_t d,
                             int64_t h, int64_t w, int64_t od, int64_t oh, int64_t ow,
                             int64_t kd, int64_t kh, int64_t kw, int64_t sd, int64_t sh,
                             int64_t sw, int64_t dd, int64_t dh, int64_t dw, int64_t pd,
                             int64_t ph, int64_t pw, int64_t pde, int64_t phe, int64_t pwe,
                             int count_include_pad, int64_t p, int tid, int nthreads)
{
    int64_t in_vol = d * h * w, vol = od * oh * ow, lo, hi;
    gk_split(planes, 1, tid, nthreads, &lo, &hi);
    for (int64_t q = lo; q < hi; q++) {
        int64_t yi = q * vol;
        for (int64_t oz = 0; oz < od; oz++) {
            int64_t zlo, zhi, zs = oz * sd - pd;
            taps(zs, kd, dd, d, &zlo, &zhi);
            int64_t zcnt = padded_taps(zs, kd, dd, d, pd, pde);
            for (int64_t oy = 0; oy < oh; oy++) {
                int64_t ylo, yhi, ys = oy * sh - ph;
                taps(ys, kh, dh, h, &ylo, &yhi);
                int64_t ycnt = padded_taps(ys, kh, dh, h, ph, phe);
                for (int64_t ox = 0; ox < ow; ox++, yi++) {
                    int64_t xlo, xhi, xs = ox * sw - pw;
                    taps(xs, kw, dw, w, &xlo, &xhi);
                    int64_t xcnt = padded_taps(xs, kw, dw, w, pw, pwe);
                    double acc = 0;
                    for (int64_t kz = zlo; kz < zhi; kz++)
                        for (int64_t ky = ylo; ky < yhi; ky++) {
                            int64_t row = q * in_vol + ((zs + kz * dd) * h + ys + ky * dh) * w + xs;
                            if (p > 0)
                                for (int64_t kx = xlo; kx < xhi; kx++)
                                    acc += pow(fabs(gk_ldf(dt, x, row + kx * dw)), (double)p);
                            else
                                for (int64_t kx = xlo; kx < xhi; kx++)
                                    acc += gk_ldf(dt, x, row + kx * dw);
                        }
                    int64_t count = count_include_pad ? zcnt * ycnt * xcnt
                                                      : (zhi - zlo) * (yhi - ylo) * (xhi - xlo);
                    gk_stf(dt, y, yi, p > 0 ? pow(acc, 1.0 / (double)p) : acc / (double)count);
                }
            }
        }
    }
}

void gk_avgpool3d_f32_scalar(const float *x, float *y, int64_t planes, int64_t d, int64_t h,
                             int64_t w, int64_t od, int64_t oh, int64_t ow, int64_t kd,
                             int64_t kh, int64_t kw, int64_t sd, int64_t sh, int64_t sw,
                             int64_t dd, int64_t dh, int64_t dw, int64_t pd, int64_t ph,
                             int64_t pw, int64_t pde, int64_t phe, int64_t pwe,
                             int count_include_pad, int64_t p, int tid, int nthreads)
{
    avgpool3d(GK_DT_F32, x, y, planes, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, dd, dh, dw,
              pd, ph, pw, pde, phe, pwe, count_include_pad, p, tid, nthreads);
}

/* Any float kind dt, summed and rounded as the evaluator does. */
void gk_avgpool3d_any_scalar(int dt, const void *x, void *y, int64_t planes, int64_t d,
                             int64_t h, int64_t w, int64_t od, int64_t oh, int64_t ow,
                             int64_t kd, int64_t kh, int64_t kw, int64_t sd, int64_t sh,
                             int64_t sw, int64_t dd, int64_t dh, int64_t dw, int64_t pd,
                             int64_t ph, int64_t pw, int64_t pde, int64_t phe, int64_t pwe,
                             int count_include_pad, int64_t p, int tid, int nthreads)
{
    avgpool3d(dt, x, y, planes, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, dd, dh, dw, pd, ph,
              pw, pde, phe, pwe, count_include_pad, p, tid, nthreads);
}
