// norm_scalar.c - Reference local response normalization (LRN) of any float kind: each element
// of [n, c, s] divided by (bias + alpha / size * sum of squares over the channel window)^beta,
// the window `size` channels wide and clipped at the edges, in double as the evaluator
// computes it (src/eval/eval_norm.c), rounded once. The other normalizations are lowered to
// elementwise ops and reductions. Split over the n*c*s results.
#include "gk_dtype.h"
#include "kernels.h"

void gk_lrn_any_scalar(int dt, double alpha, double beta, double bias, int64_t size, int64_t n,
                       int64_t c, int64_t s, const void *x, void *y, int tid, int nthreads)
{
    int64_t lo, hi, before = (size - 1) / 2, after = size - 1 - before;
    gk_split(n * c * s, 1, tid, nthreads, &lo, &hi);
    for (int64_t at = lo; at < hi; at++) {
        int64_t b = at / (c * s), ch = at / s % c, p = at % s;
        int64_t j0 = ch - before < 0 ? 0 : ch - before;
        int64_t j1 = ch + after >= c ? c - 1 : ch + after;
        double sq = 0;
        for (int64_t j = j0; j <= j1; j++) {
            double v = gk_ldf(dt, x, (b * c + j) * s + p);
            sq += v * v;
        }
        gk_stf(dt, y, at, gk_ldf(dt, x, at) / pow(bias + alpha / (double)size * sq, beta));
    }
}
