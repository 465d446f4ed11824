// gk.h - What every kernel file shares: thread splitting of the outer loop and the fused
// activation epilogue. Kernels are compiled to bitcode and inlined into generated code, so
// these helpers are static inline and fold away once the arguments are constants.
#ifndef GK_H
#define GK_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gk_ops.h"

/* Thread tid's share [*lo, *hi) of n items: contiguous, disjoint, covering [0, n), and a
 * multiple of `grain` items except for the last share (grain keeps vector tails at the end
 * of a share instead of at every thread boundary). The split depends only on (n, nthreads),
 * so every thread count computes every item exactly as one thread would. */
static inline void gk_split(int64_t n, int64_t grain, int tid, int nthreads, int64_t *lo,
                            int64_t *hi)
{
    if (nthreads <= 1) {
        *lo = 0;
        *hi = n;
        return;
    }
    int64_t chunks = (n + grain - 1) / grain;
    int64_t per = chunks / nthreads, extra = chunks % nthreads;
    int64_t c0 = tid * per + (tid < extra ? tid : extra);
    int64_t c1 = c0 + per + (tid < extra ? 1 : 0);
    *lo = c0 * grain < n ? c0 * grain : n;
    *hi = c1 * grain < n ? c1 * grain : n;
}

/* The fused activation `act` (GK_ACT_*) of one value in double, as the evaluator applies it to
 * a Conv, Gemm or MatMul result of any float kind (alpha/beta: Clip's bounds, LeakyRelu's
 * slope). */
static inline double gk_act_f64(int act, double v, double alpha, double beta)
{
    switch (act) {
    case GK_ACT_RELU: return v < 0 ? 0 : v;
    case GK_ACT_CLIP: v = v < alpha ? alpha : v; return v > beta ? beta : v;
    case GK_ACT_LEAKY_RELU: return v < 0 ? v * alpha : v;
    case GK_ACT_SIGMOID: return 1 / (1 + exp(-v));
    case GK_ACT_TANH: return tanh(v);
    default: return v;
    }
}

/* The fused activation the kernels apply to an f32 value: computed in double, rounded once. */
static inline float gk_act(int act, float x, double alpha, double beta)
{
    return (float)gk_act_f64(act, x, alpha, beta);
}

#endif
