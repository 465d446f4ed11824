// scalar_math.h - The f32 reference math, one element at a time: the unary and binary
// elementwise ops, the fused activations, and a row of the matrix product. Written once here
// and included by the scalar kernels (kernels/eltwise, kernels/matmul) and by the reference
// evaluator (src/eval), so the CPU backend and the interpreter compute the same bits.
//
// Every function is static inline: the kernels are compiled to bitcode and inlined into
// generated code, and the evaluator inlines them into its plain loops, so none of them is a
// call at run time (Sigmoid and Tanh are polynomials here, not expf/tanhf, so that the JIT
// vectorizes them). The kernels are built with -ffp-contract=off and the evaluator as ISO
// C11, so an a*b+c here is a rounded multiply and a rounded add everywhere, never a fused
// multiply-add, and each lane of a vector computes the bits of the scalar code.
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

/* e^x for the sigmoid and tanh below, within 2 ulp, in straight-line f32 arithmetic that the
 * JIT vectorizes (expf and tanhf are scalar library calls, 60% of an unrolled LSTM's time):
 * x = n ln2 + r with |r| <= ln2 / 2 (n from the 1.5 * 2^23 rounding trick, ln2 in two parts
 * so n * hi is exact), e^r = 1 + r + r^2 P(r) (P a relative minimax fit, error 3e-9), times
 * 2^n built in the exponent bits. +inf above 88.37 (where 2^n would not be normal), 0 below
 * -87.33; NaN stays NaN. */
static inline float gk_exp_vec_f32(float x)
{
    float t = x * 1.44269504f + 12582912.0f;
    float n = t - 12582912.0f;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.38149655e-3f;
    p = p * r + 8.36871471e-3f;
    p = p * r + 4.16683815e-2f;
    p = p * r + 1.66665211e-1f;
    p = p * r + 4.99999940e-1f;
    p = (p * r) * r + r + 1.0f;
    uint32_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float e = p * scale;
    e = x > 88.3762589f ? INFINITY : e;
    return x < -87.3365479f ? 0.0f : e;
}

/* tanh within 2 ulp, vectorizable: x + x^3 Q(x^2) below |x| = 0.625 (Q a relative minimax
 * fit, error 4e-9), 1 - 2 / (e^2|x| + 1) above, with x's sign (-0 stays -0). */
static inline float gk_tanh_f32(float x)
{
    float a = fabsf(x), x2 = x * x;
    float q = -5.70508977e-3f;
    q = q * x2 + 2.06392296e-2f;
    q = q * x2 + -5.37397824e-2f;
    q = q * x2 + 1.33314431e-1f;
    q = q * x2 + -3.33332807e-1f;
    float small = x + (x * x2) * q;
    float big = 1.0f - 2.0f / (gk_exp_vec_f32(2.0f * a) + 1.0f);
    return copysignf(a < 0.625f ? small : big, x);
}

/* 1 / (1 + e^-x), within 3 ulp (0 below -88.37, where the result would be subnormal). */
static inline float gk_sigmoid_f32(float x) { return 1.0f / (1.0f + gk_exp_vec_f32(-x)); }

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
