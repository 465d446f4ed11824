// reduce_scalar.c - Reference f32 reductions (sum, mean, max, min) over the middle dim of an
// [outer, n, inner] view, accumulated in double in index order as the evaluator does, so the
// results are the evaluator's bit for bit. Split over the outer*inner results.
#include "kernels.h"

void gk_reduce_f32_scalar(int op, int64_t outer, int64_t n, int64_t inner, const float *x,
                          float *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(outer * inner, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        int64_t o = r / inner, i = r % inner;
        const float *xv = x + o * n * inner + i;
        double acc = op == GK_RED_MAX ? -INFINITY : op == GK_RED_MIN ? INFINITY : 0;
        for (int64_t a = 0; a < n; a++) {
            double v = xv[a * inner];
            switch (op) {
            case GK_RED_MAX: acc = isnan(v) || v > acc ? v : acc; break;
            case GK_RED_MIN: acc = isnan(v) || v < acc ? v : acc; break;
            default: acc += v; break;
            }
        }
        if (op == GK_RED_MEAN)
            acc /= (double)n;
        y[r] = (float)acc;
    }
}
