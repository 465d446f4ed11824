// softmax_scalar.c - Reference f32 softmax over one axis of an [outer, axis, inner] view,
// max-subtracted, accumulated in double, and Hardmax of any float kind over the same view.
// Split over the outer*inner independent vectors.
#include "gk_dtype.h"
#include "kernels.h"

void gk_softmax_f32_scalar(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner,
                           int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(outer * inner, 1, tid, nthreads, &lo, &hi);
    for (int64_t v = lo; v < hi; v++) {
        int64_t o = v / inner, i = v % inner;
        const float *xv = x + o * axis * inner + i;
        float *yv = y + o * axis * inner + i;
        float mx = -INFINITY;
        for (int64_t a = 0; a < axis; a++)
            mx = xv[a * inner] > mx ? xv[a * inner] : mx;
        double sum = 0;
        for (int64_t a = 0; a < axis; a++)
            sum += exp((double)xv[a * inner] - mx);
        for (int64_t a = 0; a < axis; a++)
            yv[a * inner] = (float)(exp((double)xv[a * inner] - mx) / sum);
    }
}

/* 1 at the first maximum of each vector (none when every element is NaN: then the first), 0
 * elsewhere, as the evaluator's softmax routine computes Hardmax. */
void gk_hardmax_any_scalar(int dt, int64_t outer, int64_t axis, int64_t inner, const void *x,
                           void *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(outer * inner, 1, tid, nthreads, &lo, &hi);
    for (int64_t v = lo; v < hi; v++) {
        int64_t base = v / inner * axis * inner + v % inner, arg = 0;
        double mx = -INFINITY;
        for (int64_t a = 0; a < axis; a++) {
            double e = gk_ldf(dt, x, base + a * inner);
            if (e > mx)
                mx = e, arg = a;
        }
        for (int64_t a = 0; a < axis; a++)
            gk_stf(dt, y, base + a * inner, a == arg);
    }
}
