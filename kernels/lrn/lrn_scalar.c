// lrn_scalar.c - Reference f32 LRN over [N][C][S] (S: the spatial dims flattened), computed as
// the evaluator does: the squares of the channel window summed in double, then
// x / (bias + alpha / size * sum)^beta. Split over planes (n, c).
#include "kernels.h"

/* Positions per chunk of the sum row (a stack row of doubles, no allocation). */
#define CHUNK 256

void gk_lrn_f32_scalar(const float *x, float *y, int64_t n, int64_t c, int64_t s, int64_t size,
                       double alpha, double beta, double bias, int tid, int nthreads)
{
    int64_t before = (size - 1) / 2, after = size - 1 - before, lo, hi;
    double scale = alpha / (double)size;
    gk_split(n * c, 1, tid, nthreads, &lo, &hi);
    for (int64_t p = lo; p < hi; p++) {
        int64_t b = p / c, ch = p % c;
        int64_t j0 = ch - before < 0 ? 0 : ch - before;
        int64_t j1 = ch + after >= c ? c - 1 : ch + after;
        for (int64_t s0 = 0; s0 < s; s0 += CHUNK) {
            int64_t len = s0 + CHUNK < s ? CHUNK : s - s0;
            double sq[CHUNK];
            for (int64_t i = 0; i < len; i++)
                sq[i] = 0;
            for (int64_t j = j0; j <= j1; j++) {
                const float *xr = x + (b * c + j) * s + s0;
                for (int64_t i = 0; i < len; i++) {
                    double v = xr[i];
                    sq[i] += v * v;
                }
            }
            const float *xr = x + p * s + s0;
            float *yr = y + p * s + s0;
            for (int64_t i = 0; i < len; i++)
                yr[i] = (float)((double)xr[i] / pow(bias + scale * sq[i], beta));
        }
    }
}
