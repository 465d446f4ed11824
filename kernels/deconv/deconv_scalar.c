// deconv_scalar.c - Reference f32 ConvTranspose, NCHW, over 1-3 spatial dims padded to three
// ([D][H][W], missing ones of size 1): groups, strides, dilations, pads (output_padding is in
// the result's shape). Gathers instead of scattering: each output row sums, per input channel
// and kernel tap, the input elements that land on it, so threads own whole output planes
// (n, m) and write nothing another thread writes. Sums run in double, as the evaluator's.
#include "kernels.h"

/* Output positions per accumulator chunk: a stack row of doubles, no allocation. */
#define CHUNK 512

static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q * b > a ? q - 1 : q;
}

/* The input index of output o through tap k (o = i * s - pad + k * dil), or -1 when none. */
static inline int64_t source_of(int64_t o, int64_t k, int64_t s, int64_t dil, int64_t pad,
                                int64_t in)
{
    int64_t t = o + pad - k * dil;
    if (t < 0 || t % s)
        return -1;
    return t / s < in ? t / s : -1;
}

/* acc[ox - ox0] += wv * xr[ix] for the outputs ox in [ox0, ox1) that input ix reaches through
 * a tap at offset off = pad - k * dil: ox = ix * s - off. */
static inline void row_taps(double *acc, const float *xr, double wv, int64_t ox0, int64_t ox1,
                            int64_t s, int64_t off, int64_t in)
{
    int64_t ilo = floor_div(ox0 + off + s - 1, s), ihi = floor_div(ox1 - 1 + off, s) + 1;
    if (ilo < 0)
        ilo = 0;
    if (ihi > in)
        ihi = in;
    double *a = acc + (-off - ox0);
    for (int64_t ix = ilo; ix < ihi; ix++)
        a[ix * s] += wv * (double)xr[ix];
}

void gk_deconv3d_f32_scalar(const float *x, const float *w, const float *bias, float *y,
                            int64_t n, int64_t c, int64_t d, int64_t h, int64_t wd, int64_t m,
                            int64_t kd, int64_t kh, int64_t kw, int64_t od, int64_t oh,
                            int64_t ow, int64_t sd, int64_t sh, int64_t sw, int64_t dd,
                            int64_t dh, int64_t dw, int64_t pd, int64_t ph, int64_t pw,
                            int64_t group, int tid, int nthreads)
{
    int64_t cg = c / group, mg = m / group, ksz = kd * kh * kw, in_vol = d * h * wd;
    int64_t lo, hi;
    gk_split(n * m, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t b = p / m, oc = p % m, g = oc / mg, mm = oc % mg;
        double bv = bias ? (double)bias[oc] : 0.0;
        for (int64_t oz = 0; oz < od; oz++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox0 = 0; ox0 < ow; ox0 += CHUNK) {
                    int64_t ox1 = ox0 + CHUNK < ow ? ox0 + CHUNK : ow;
                    double acc[CHUNK];
                    for (int64_t i = 0; i < ox1 - ox0; i++)
                        acc[i] = 0;
                    for (int64_t ic = g * cg; ic < (g + 1) * cg; ic++) {
                        const float *xc = x + (b * c + ic) * in_vol;
                        const float *wc = w + (ic * mg + mm) * ksz;
                        for (int64_t kz = 0; kz < kd; kz++) {
                            int64_t iz = source_of(oz, kz, sd, dd, pd, d);
                            if (iz < 0)
                                continue;
                            for (int64_t ky = 0; ky < kh; ky++) {
                                int64_t iy = source_of(oy, ky, sh, dh, ph, h);
                                if (iy < 0)
                                    continue;
                                const float *xr = xc + (iz * h + iy) * wd;
                                for (int64_t kx = 0; kx < kw; kx++)
                                    row_taps(acc, xr, (double)wc[(kz * kh + ky) * kw + kx],
                                             ox0, ox1, sw, pw - kx * dw, wd);
                            }
                        }
                    }
                    float *yr = y + ((p * od + oz) * oh + oy) * ow;
                    for (int64_t i = 0; i < ox1 - ox0; i++)
                        yr[ox0 + i] = (float)(acc[i] + bv);
                }
    }
}
