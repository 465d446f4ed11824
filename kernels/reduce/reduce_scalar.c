// reduce_scalar.c - Reference reductions. The f32 kernel reduces the middle dim of an
// [outer, n, inner] view (sum, mean, max, min); the `any` kernel reduces any set of axes of
// any numeric kind as a strided walk: up to four kept dims select a result, up to four reduced
// dims (extents and strides in elements of x, row-major order) visit its operands. Both
// accumulate as the evaluator does (src/eval/eval_reduce.c) in the same order, so results are
// the evaluator's bit for bit: float kinds (and L2, LogSum, LogSumExp of integers) in double,
// rounded once; integer kinds in wrapping 64-bit arithmetic. Split over the results.
#include "gk_dtype.h"
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

/* The extents and strides of the reduced dims, outermost first. */
typedef struct {
    int64_t n[4], s[4];
} red_walk;

/* Visits every operand of the result at `base` in row-major order of the reduced dims. */
#define FOR_REDUCED(w, base, at)                                              \
    for (int64_t a0_ = 0; a0_ < (w)->n[0]; a0_++)                             \
        for (int64_t a1_ = 0; a1_ < (w)->n[1]; a1_++)                         \
            for (int64_t a2_ = 0; a2_ < (w)->n[2]; a2_++)                     \
                for (int64_t a3_ = 0, at = (base) + a0_ * (w)->s[0] + a1_ * (w)->s[1] + \
                                           a2_ * (w)->s[2];                   \
                     a3_ < (w)->n[3]; a3_++, at += (w)->s[3])

/* One result of a float-computed reduction (float kinds; L2, LogSum, LogSumExp of any). */
static inline double reduce_float(int op, int dt, const void *x, int64_t base,
                                  const red_walk *w, int64_t count)
{
    double shift = 0;
    if (op == GK_RED_LOG_SUM_EXP) {
        double mx = -INFINITY;
        FOR_REDUCED(w, base, at)
            mx = fmax(mx, gk_ldf(dt, x, at));
        shift = isfinite(mx) ? mx : 0;
    }
    double acc = op == GK_RED_PROD ? 1 : op == GK_RED_MAX ? -INFINITY
               : op == GK_RED_MIN ? INFINITY : 0;
    FOR_REDUCED(w, base, at) {
        double v = gk_ldf(dt, x, at);
        switch (op) {
        case GK_RED_MAX: acc = isnan(v) || v > acc ? v : acc; break;
        case GK_RED_MIN: acc = isnan(v) || v < acc ? v : acc; break;
        case GK_RED_PROD: acc *= v; break;
        case GK_RED_L1: acc += fabs(v); break;
        case GK_RED_L2: case GK_RED_SUM_SQUARE: acc += v * v; break;
        case GK_RED_LOG_SUM_EXP: acc += exp(v - shift); break;
        default: acc += v; break; /* Sum, Mean, LogSum */
        }
    }
    switch (op) {
    case GK_RED_MEAN: return acc / (double)count;
    case GK_RED_L2: return sqrt(acc);
    case GK_RED_LOG_SUM: return log(acc);
    case GK_RED_LOG_SUM_EXP: return shift + log(acc);
    default: return acc;
    }
}

/* One result of an integer reduction: wrapping 64-bit arithmetic, the kind's own order. */
static inline int64_t reduce_int(int op, int dt, const void *x, int64_t base,
                                 const red_walk *w, int64_t count)
{
    bool uns = gk_dt_is_unsigned(dt);
    unsigned bits = (unsigned)gk_dt_size(dt) * 8;
    uint64_t all = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    int64_t lowest = uns ? 0 : (int64_t)(UINT64_MAX << (bits - 1));
    int64_t highest = (int64_t)(uns ? all : all >> 1);
    int64_t acc = op == GK_RED_PROD ? 1 : op == GK_RED_MAX ? lowest
                : op == GK_RED_MIN ? highest : 0;
    FOR_REDUCED(w, base, at) {
        int64_t v = gk_ldi(dt, x, at);
        uint64_t ua = (uint64_t)acc, uv = (uint64_t)v;
        bool less = uns ? ua < uv : acc < v, more = uns ? uv < ua : v < acc;
        switch (op) {
        case GK_RED_MAX: acc = less ? v : acc; break;
        case GK_RED_MIN: acc = more ? v : acc; break;
        case GK_RED_PROD: acc = (int64_t)(ua * uv); break;
        case GK_RED_L1: acc = (int64_t)(ua + (!uns && v < 0 ? 0 - uv : uv)); break;
        case GK_RED_SUM_SQUARE: acc = (int64_t)(ua + uv * uv); break;
        default: acc = (int64_t)(ua + uv); break; /* Sum, Mean */
        }
    }
    if (op == GK_RED_MEAN)
        acc = count == 0 ? 0 : uns ? (int64_t)((uint64_t)acc / (uint64_t)count) : acc / count;
    return acc;
}

void gk_reduce_any_scalar(int op, int dt, int64_t k0, int64_t k1, int64_t k2, int64_t k3,
                          int64_t ks0, int64_t ks1, int64_t ks2, int64_t ks3, int64_t r0,
                          int64_t r1, int64_t r2, int64_t r3, int64_t rs0, int64_t rs1,
                          int64_t rs2, int64_t rs3, const void *x, void *y, int tid,
                          int nthreads)
{
    red_walk w = { { r0, r1, r2, r3 }, { rs0, rs1, rs2, rs3 } };
    int64_t count = r0 * r1 * r2 * r3, lo, hi;
    bool use_f = gk_dt_is_float(dt) || op == GK_RED_L2 || op == GK_RED_LOG_SUM ||
                 op == GK_RED_LOG_SUM_EXP;
    gk_split(k0 * k1 * k2 * k3, 1, tid, nthreads, &lo, &hi);
    for (int64_t j = lo; j < hi; j++) {
        int64_t i3 = j % k3, i2 = j / k3 % k2, i1 = j / (k3 * k2) % k1, i0 = j / (k3 * k2 * k1);
        int64_t base = i0 * ks0 + i1 * ks1 + i2 * ks2 + i3 * ks3;
        if (use_f)
            gk_stf(dt, y, j, reduce_float(op, dt, x, base, &w, count));
        else
            gk_sti(dt, y, j, reduce_int(op, dt, x, base, &w, count));
    }
}
