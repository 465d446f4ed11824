// scan_scalar.c - Reference along-axis kernels of any numeric kind over an [outer, size, inner]
// view: ArgMax/ArgMin, CumSum/CumProd and TopK, computing what the evaluator computes
// (src/eval/eval_reduce.c) for every element kind. Each splits the outer*inner independent
// lines over the threads.
//
// Elements are ordered as the evaluator orders them (numpy's order): NaN above every number
// and equal to another NaN, integers by their kind's signedness.
#include "gk_dtype.h"
#include "kernels.h"

/* Three-way order of elements i and j of x. */
static inline int scan_order(int dt, const void *x, int64_t i, int64_t j)
{
    if (gk_dt_is_float(dt)) {
        double a = gk_ldf(dt, x, i), b = gk_ldf(dt, x, j);
        if (isnan(a) || isnan(b))
            return isnan(a) - isnan(b);
        return (a > b) - (a < b);
    }
    int64_t a = gk_ldi(dt, x, i), b = gk_ldi(dt, x, j);
    if (gk_dt_is_unsigned(dt))
        return ((uint64_t)a > (uint64_t)b) - ((uint64_t)a < (uint64_t)b);
    return (a > b) - (a < b);
}

void gk_arg_any_scalar(int sign, int last, int dt, int64_t outer, int64_t size, int64_t inner,
                       const void *x, int64_t *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(outer * inner, 1, tid, nthreads, &lo, &hi);
    for (int64_t l = lo; l < hi; l++) {
        int64_t base = l / inner * size * inner + l % inner, best = 0;
        for (int64_t j = 1; j < size; j++) {
            int c = sign * scan_order(dt, x, base + j * inner, base + best * inner);
            if (c > 0 || (c == 0 && last))
                best = j;
        }
        y[l] = best;
    }
}

void gk_cumulative_any_scalar(int prod, int exclusive, int reverse, int dt, int64_t outer,
                              int64_t size, int64_t inner, const void *x, void *y, int tid,
                              int nthreads)
{
    int64_t lo, hi;
    gk_split(outer * inner, 1, tid, nthreads, &lo, &hi);
    bool fl = gk_dt_is_float(dt);
    for (int64_t l = lo; l < hi; l++) {
        int64_t base = l / inner * size * inner + l % inner;
        double fa = prod ? 1 : 0;
        uint64_t ia = prod ? 1 : 0;
        for (int64_t s = 0; s < size; s++) {
            int64_t at = base + (reverse ? size - 1 - s : s) * inner;
            if (exclusive) {
                if (fl)
                    gk_stf(dt, y, at, fa);
                else
                    gk_sti(dt, y, at, (int64_t)ia);
            }
            if (fl) {
                double v = gk_ldf(dt, x, at);
                fa = prod ? fa * v : fa + v;
            } else {
                uint64_t v = (uint64_t)gk_ldi(dt, x, at);
                ia = prod ? ia * v : ia + v;
            }
            if (!exclusive) {
                if (fl)
                    gk_stf(dt, y, at, fa);
                else
                    gk_sti(dt, y, at, (int64_t)ia);
            }
        }
    }
}

/* Whether line element a goes before b: by value (sign 1: largest first), ties by index. */
static inline bool topk_before(int sign, int dt, const void *x, int64_t base, int64_t inner,
                               int64_t a, int64_t b)
{
    int c = sign * scan_order(dt, x, base + a * inner, base + b * inner);
    return c ? c > 0 : a < b;
}

/* The k first elements of each line in the order above (a total order, so the result is the
 * evaluator's stable sort's prefix): the j-th is the first of the elements after the
 * (j-1)-th, found by a scan of the line, so the kernel needs no scratch. */
void gk_topk_any_scalar(int largest, int dt, int64_t outer, int64_t size, int64_t inner,
                        int64_t k, const void *x, void *values, int64_t *indices, int tid,
                        int nthreads)
{
    int64_t lo, hi, es = gk_dt_size(dt);
    int sign = largest ? 1 : -1;
    gk_split(outer * inner, 1, tid, nthreads, &lo, &hi);
    for (int64_t l = lo; l < hi; l++) {
        int64_t o = l / inner, in = l % inner, base = o * size * inner + in, prev = -1;
        for (int64_t j = 0; j < k; j++) {
            int64_t best = -1;
            for (int64_t e = 0; e < size; e++) {
                if (prev >= 0 && !topk_before(sign, dt, x, base, inner, prev, e))
                    continue;
                if (best < 0 || topk_before(sign, dt, x, base, inner, e, best))
                    best = e;
            }
            int64_t dst = (o * k + j) * inner + in;
            memcpy((char *)values + dst * es, (const char *)x + (base + best * inner) * es,
                   (size_t)es);
            if (indices)
                indices[dst] = best;
            prev = best;
        }
    }
}
