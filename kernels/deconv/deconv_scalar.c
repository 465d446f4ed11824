// deconv_scalar.c - Reference f32 ConvTranspose, NCHW, over 1-3 spatial dims padded to three
// ([D][H][W], missing ones of size 1): groups, strides, dilations, pads (output_padding is in
// the result's shape). Gathers instead of scattering: each output row sums, per input channel
// and kernel tap, the input elements that land on it, so threads own whole output planes
// (n, m) and write nothing another thread writes. Sums run in double, as the evaluator's.
#include "kernels.h"

/* Accumulators per output row chunk: a stack row of doubles, no allocation (the backend
 * passes strides up to 64 along W, so a chunk holds at least 16 columns of every phase). */
#define CHUNK 1024

/* The input index of output o through tap k (o = i * s - pad + k * dil), or -1 when none. */
static inline int64_t source_of(int64_t o, int64_t k, int64_t s, int64_t dil, int64_t pad,
                                int64_t in)
{
    int64_t t = o + pad - k * dil;
    if (t < 0 || t % s)
        return -1;
    return t / s < in ? t / s : -1;
}

/* For four output channels at once (weights wv[0..4), accumulator rows a0..a3):
 * a[ox % s][ox / s - j0] += wv * xr[ix] for the outputs ox = ix * s - off (off = pad -
 * k * dil) in columns j = ox / s of [j0, j0 + nj) and below ow. Each accumulator holds one
 * row per phase ox % s, so both sides of the loop are contiguous and it vectorizes; each
 * input element is read once for the four. */
static inline void row_taps(double *restrict a0, double *restrict a1, double *restrict a2,
                            double *restrict a3, int64_t nj, const float *restrict xr,
                            const double *wv, int64_t j0, int64_t s, int64_t off, int64_t in,
                            int64_t ow)
{
    int64_t q = ((-off) % s + s) % s, base = (-off - q) / s;   /* ox = (ix + base) * s + q */
    int64_t jhi = j0 + nj, jmax = q < ow ? (ow - 1 - q) / s + 1 : 0;
    if (jhi > jmax)
        jhi = jmax;
    int64_t ilo = j0 - base, ihi = jhi - base;
    if (ilo < 0)
        ilo = 0;
    if (ihi > in)
        ihi = in;
    int64_t at = q * nj + base - j0;
    double w0 = wv[0], w1 = wv[1], w2 = wv[2], w3 = wv[3];
    for (int64_t ix = ilo; ix < ihi; ix++) {
        double v = xr[ix];
        a0[at + ix] += w0 * v;
        a1[at + ix] += w1 * v;
        a2[at + ix] += w2 * v;
        a3[at + ix] += w3 * v;
    }
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
    /* The thread's planes (b, oc) in runs of up to four channels of one image and group;
     * a run of fewer computes the missing channels with zero weights and drops them. */
    for (int64_t p = lo, nr; p < hi; p += nr) {
        int64_t b = p / m, oc = p % m, g = oc / mg, mm = oc % mg;
        nr = mg - mm < 4 ? mg - mm : 4;
        nr = hi - p < nr ? hi - p : nr;
        /* Columns j of the output row per chunk: ox = j * sw + phase. */
        int64_t nj = CHUNK / sw, ncols = (ow + sw - 1) / sw;
        for (int64_t oz = 0; oz < od; oz++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t j0 = 0; j0 < ncols; j0 += nj) {
                    double acc[4][CHUNK];
                    for (int r = 0; r < 4; r++)
                        for (int64_t i = 0; i < nj * sw; i++)
                            acc[r][i] = 0;
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
                                for (int64_t kx = 0; kx < kw; kx++) {
                                    int64_t t = (kz * kh + ky) * kw + kx;
                                    double wv[4] = { 0, 0, 0, 0 };
                                    for (int64_t r = 0; r < nr; r++)
                                        wv[r] = wc[r * ksz + t];
                                    row_taps(acc[0], acc[1], acc[2], acc[3], nj, xr, wv, j0,
                                             sw, pw - kx * dw, wd, ow);
                                }
                            }
                        }
                    }
                    int64_t j1 = j0 + nj < ncols ? j0 + nj : ncols;
                    for (int64_t r = 0; r < nr; r++) {
                        float *yr = y + (((p + r) * od + oz) * oh + oy) * ow;
                        double bv = bias ? (double)bias[oc + r] : 0.0;
                        for (int64_t q = 0; q < sw; q++)
                            for (int64_t j = j0; j < j1 && j * sw + q < ow; j++)
                                yr[j * sw + q] = (float)(acc[r][q * nj + j - j0] + bv);
                    }
                }
    }
}
