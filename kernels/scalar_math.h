// scalar_math.h - The f32 reference math, one element at a time: the unary and binary
// elementwise ops, the fused activations, and a row of the matrix product. Written once here
// and included by the scalar kernels (kernels/eltwise, kernels/matmul) and by the reference
// evaluator (src/eval), so the CPU backend and the interpreter compute the same bits.
//
// Every function is static inline: the kernels are compiled to bitcode and inlined into
// generated code, and the evaluator inlines them into its plain loops, so none of them is a
// call at run time. Each expression is exactly what both callers computed before they shared
// it; the kernels are built with -ffp-contract=off and the evaluator as ISO C11, so an a*b+c
// here is a rounded multiply and a rounded add everywhere, never a fused multiply-add.
// NaN conventions: Relu keeps NaN, Max and Min return NaN when either operand is NaN.
#ifndef GK_SCALAR_MATH_H
#define GK_SCALAR_MATH_H

#include "gk.h"

/* --- unary ops --- */

/* max(x, 0), but NaN stays NaN (x > 0 alone would turn it into 0). */
static inline float gk_relu_f32(float x) { return x > 0 ? x : (x == x ? 0.0f : x); }
static inline float gk_neg_f32(float x) { return -x; }
static inline float gk_abs_f32(float x) { return fabsf(x); }
static inline float gk_sqrt_f32(float x) { return sqrtf(x); }
static inline float gk_exp_f32(float x) { return expf(x); }
static inline float gk_tanh_f32(float x) { return tanhf(x); }
/* 1 / (1 + e^-x), with e^x / (1 + e^x) for negative x so that e^-x cannot overflow. */
static inline float gk_sigmoid_f32(float x)
{
    return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
}

/* Computed in double and rounded once, as the evaluator's generic path computes every op of
 * a float kind (logf would differ from it in the last bit for some inputs). */
static inline float gk_log_f32(float x) { return (float)log((double)x); }

/* --- binary ops --- */

static inline float gk_add_f32(float a, float b) { return a + b; }
static inline float gk_sub_f32(float a, float b) { return a - b; }
static inline float gk_mul_f32(float a, float b) { return a * b; }
static inline float gk_div_f32(float a, float b) { return a / b; }
static inline float gk_max_f32(float a, float b)
{
    return a != a || b != b ? NAN : a > b ? a : b;
}
static inline float gk_min_f32(float a, float b)
{
    return a != a || b != b ? NAN : a < b ? a : b;
}
/* In double, rounded once, as gk_log_f32. */
static inline float gk_pow_f32(float a, float b) { return (float)pow((double)a, (double)b); }

/* --- fused activations: gk_act_f64 and gk_act, in gk.h --- */

/* --- matrix product --- */

/* One row of a matrix product: y[0..n) = a[0..k) x w[k, n] (w row-major). i-k-j order: y is
 * zeroed, then each a[i] times row i of w is added, so the inner loop streams contiguous rows
 * and vectorizes over n; every y[j] sums its k products in order i = 0..k-1. */
static inline void gk_matmul_row_f32(int64_t k, int64_t n, const float *a, const float *w,
                                     float *restrict y)
{
    for (int64_t j = 0; j < n; j++)
        y[j] = 0.0f;
    for (int64_t i = 0; i < k; i++) {
        const float *restrict wr = w + i * n;
        float av = a[i];
        for (int64_t j = 0; j < n; j++)
            y[j] += av * wr[j];
    }
}

#endif
