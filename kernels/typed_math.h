// typed_math.h - The elementwise math of every element kind, one element at a time: f16/bf16
// conversions, loads and stores that widen each kind to f64 or a 64-bit integer, the unary and
// binary ops, Cast. Written once here and included by the typed kernels (kernels/typed) and by
// the reference evaluator (src/eval/eval_elem.c, eval_internal.h) and src/graph/dtype.c, so the
// CPU backend and the interpreter compute the same bits for every kind.
//
// Element kinds are gk_dtype codes (gk_dtype.h, with the loads, stores and f16/bf16
// conversions). Float kinds compute in f64 and round once on
// the store (f16/bf16 via f32); integer kinds compute in 64 bits with unsigned arithmetic
// (wrapping, never undefined) and are truncated to their width on the store. With constant
// kind and op codes (the backend's calls) every switch below folds away after inlining.
#ifndef GK_TYPED_MATH_H
#define GK_TYPED_MATH_H

#include "gk.h"
#include "gk_dtype.h"

/* --- unary ops --- */

/* Round half to even, independent of the current rounding mode. */
static inline double gk_round_half_even(double x)
{
    double f = floor(x), diff = x - f;
    if (diff > 0.5)
        return f + 1;
    if (diff < 0.5)
        return f;
    return fmod(f, 2.0) == 0 ? f : f + 1;
}

/* log(1 + exp(x)) without overflow for large x. */
static inline double gk_softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* Unary op (gk_typed_unary) of a float kind's value, with its parameters p and q. */
static inline double gk_unary_f64(int op, double p, double q, double x)
{
    switch (op) {
    case GK_TU_RELU: return x > 0 ? x : (x == x ? 0 : x);
    case GK_TU_SIGMOID: return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    case GK_TU_TANH: return tanh(x);
    case GK_TU_EXP: return exp(x);
    case GK_TU_LOG: return log(x);
    case GK_TU_SQRT: return sqrt(x);
    case GK_TU_ABS: return fabs(x);
    case GK_TU_NEG: return -x;
    case GK_TU_FLOOR: return floor(x);
    case GK_TU_CEIL: return ceil(x);
    case GK_TU_ROUND: return isfinite(x) ? gk_round_half_even(x) : x;
    case GK_TU_RECIPROCAL: return 1 / x;
    case GK_TU_ERF: return erf(x);
    case GK_TU_SIN: return sin(x);
    case GK_TU_COS: return cos(x);
    case GK_TU_TAN: return tan(x);
    case GK_TU_ASIN: return asin(x);
    case GK_TU_ACOS: return acos(x);
    case GK_TU_ATAN: return atan(x);
    case GK_TU_SINH: return sinh(x);
    case GK_TU_COSH: return cosh(x);
    case GK_TU_ASINH: return asinh(x);
    case GK_TU_ACOSH: return acosh(x);
    case GK_TU_ATANH: return atanh(x);
    case GK_TU_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x; /* keeps NaN and signed zero */
    case GK_TU_ISNAN: return isnan(x);
    case GK_TU_ISINF: return isinf(x) && ((x > 0 && p != 0) || (x < 0 && q != 0));
    case GK_TU_SOFTPLUS: return gk_softplus(x);
    case GK_TU_SOFTSIGN: return x / (1 + fabs(x));
    case GK_TU_ELU: return x < 0 ? p * (exp(x) - 1) : x;
    case GK_TU_SELU: return x <= 0 ? q * (p * exp(x) - p) : q * x;
    case GK_TU_CELU: return fmax(0, x) + fmin(0, p * (exp(x / p) - 1));
    case GK_TU_LEAKY_RELU: return x < 0 ? p * x : x;
    case GK_TU_THRESHOLDED_RELU: return x > p ? x : 0;
    case GK_TU_HARD_SIGMOID: return fmax(0, fmin(1, p * x + q));
    case GK_TU_HARD_SWISH: return x * fmax(0, fmin(1, x / 6 + 0.5));
    case GK_TU_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case GK_TU_GELU_TANH:
        /* sqrt(2 / pi), pi written out: M_PI is not ISO C. */
        return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) *
                                   (x + 0.044715 * x * x * x)));
    case GK_TU_MISH: return x * tanh(gk_softplus(x));
    case GK_TU_SHRINK: return x < -p ? x + q : x > p ? x - q : 0;
    case GK_TU_CLIP: {
        /* min(max(x, lo), hi) as ONNX defines it: with lo > hi every element becomes hi. */
        double y = x < p ? p : x;
        return y > q ? q : y;
    }
    default: return x;
    }
}

/* Unary op of an integer kind t's value. Clip bounds saturate to the kind's range so that
 * i64 values near 2^63 compare exactly. */
static inline int64_t gk_unary_i64(int op, int t, double p, double q, int64_t x)
{
    bool u = gk_dt_is_unsigned(t);
    switch (op) {
    case GK_TU_RELU: return !u && x < 0 ? 0 : x;
    case GK_TU_ABS: return !u && x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case GK_TU_NEG: return (int64_t)(0 - (uint64_t)x);
    case GK_TU_SIGN: return u ? x != 0 : (x > 0) - (x < 0);
    case GK_TU_BITWISE_NOT: return ~x;
    case GK_TU_SHRINK: return gk_f2i(t, gk_unary_f64(op, p, q, (double)x));
    case GK_TU_CLIP: {
        int64_t lo = gk_f2i(t, ceil(p)), hi = gk_f2i(t, floor(q));
        /* Lower bound first, then the upper one, so that lo > hi gives hi (ONNX). */
        if (u) {
            uint64_t uy = (uint64_t)x < (uint64_t)lo ? (uint64_t)lo : (uint64_t)x;
            return uy > (uint64_t)hi ? hi : (int64_t)uy;
        }
        int64_t y = x < lo ? lo : x;
        return y > hi ? hi : y;
    }
    default: return x;
    }
}

/* y[i] = op(x[i]) from kind tx to kind ty: Not on the truth of x, float kinds in f64, integer
 * kinds in 64 bits. */
static inline void gk_unary_elem(int op, int tx, int ty, double p, double q, const void *x,
                                 void *y, int64_t i)
{
    if (op == GK_TU_NOT)
        gk_sti(ty, y, i, !gk_ldi(tx, x, i));
    else if (gk_dt_is_float(tx))
        gk_stf(ty, y, i, gk_unary_f64(op, p, q, gk_ldf(tx, x, i)));
    else
        gk_sti(ty, y, i, gk_unary_i64(op, tx, p, q, gk_ldi(tx, x, i)));
}

/* --- binary ops --- */

static inline double gk_binary_f64(int op, double a, double b)
{
    switch (op) {
    case GK_TB_ADD: return a + b;
    case GK_TB_SUB: return a - b;
    case GK_TB_MUL: return a * b;
    case GK_TB_DIV: return a / b;
    case GK_TB_MOD: case GK_TB_FMOD: {
        /* fmod=1 is C fmod (sign of the dividend); fmod=0 follows the divisor's sign. */
        double r = fmod(a, b);
        if (op == GK_TB_MOD && r != 0 && ((r < 0) != (b < 0)))
            r += b;
        return r;
    }
    case GK_TB_POW: return pow(a, b);
    case GK_TB_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case GK_TB_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case GK_TB_PRELU: return a < 0 ? a * b : a;
    case GK_TB_EQUAL: return a == b;
    case GK_TB_LESS: return a < b;
    case GK_TB_LESS_EQUAL: return a <= b;
    case GK_TB_GREATER: return a > b;
    case GK_TB_GREATER_EQUAL: return a >= b;
    default: return 0;
    }
}

/* Integer power by squaring, wrapping modulo 2^64 (a negative exponent gives the truncated
 * reciprocal: 1 for base 1, +-1 for base -1, else 0). */
static inline int64_t gk_ipow(int64_t a, int64_t e, bool e_unsigned)
{
    if (!e_unsigned && e < 0)
        return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a, ue = (uint64_t)e;
    while (ue) {
        if (ue & 1)
            r *= base;
        base *= base;
        ue >>= 1;
    }
    return (int64_t)r;
}

/* Integer binary ops of kind t. Division and Mod by zero give 0 (numpy's result; ONNX leaves
 * it undefined) and INT64_MIN / -1 wraps, so no input traps. Div truncates toward zero as C
 * and ONNX do; Mod takes the sign of the divisor (Python), FMod of the dividend (C). BitShift
 * works on the kind's bit pattern; shifting by the width or more gives 0. */
static inline int64_t gk_binary_i64(int op, int t, int64_t a, int64_t b)
{
    bool u = gk_dt_is_unsigned(t);
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case GK_TB_ADD: return (int64_t)(ua + ub);
    case GK_TB_SUB: return (int64_t)(ua - ub);
    case GK_TB_MUL: return (int64_t)(ua * ub);
    case GK_TB_DIV:
        if (b == 0)
            return 0;
        if (u)
            return (int64_t)(ua / ub);
        return b == -1 ? (int64_t)(0 - ua) : a / b;
    case GK_TB_MOD: case GK_TB_FMOD: {
        if (b == 0)
            return 0;
        if (u)
            return (int64_t)(ua % ub);
        if (b == -1)
            return 0;
        int64_t r = a % b;
        if (op == GK_TB_MOD && r != 0 && ((r < 0) != (b < 0)))
            r += b;
        return r;
    }
    case GK_TB_MAX: return u ? (ua > ub ? a : b) : (a > b ? a : b);
    case GK_TB_MIN: return u ? (ua < ub ? a : b) : (a < b ? a : b);
    case GK_TB_PRELU: return !u && a < 0 ? (int64_t)(ua * ub) : a;
    case GK_TB_BITWISE_AND: case GK_TB_AND: return a & b;
    case GK_TB_BITWISE_OR: case GK_TB_OR: return a | b;
    case GK_TB_BITWISE_XOR: case GK_TB_XOR: return a ^ b;
    case GK_TB_SHL: case GK_TB_SHR: {
        unsigned bits = (unsigned)gk_dt_size(t) * 8;
        uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        if ((ub & mask) >= bits)
            return 0;
        return (int64_t)(op == GK_TB_SHL ? ua << (ub & mask) : (ua & mask) >> (ub & mask));
    }
    case GK_TB_EQUAL: return a == b;
    case GK_TB_LESS: return u ? ua < ub : a < b;
    case GK_TB_LESS_EQUAL: return u ? ua <= ub : a <= b;
    case GK_TB_GREATER: return u ? ua > ub : a > b;
    case GK_TB_GREATER_EQUAL: return u ? ua >= ub : a >= b;
    default: return 0;
    }
}

/* y[i] = op(a[i], b[i]) with a of kind ta, b of kind tb, y of kind ty: in f64 when a is of a
 * float kind; Pow of an integer base in f64 (float exponent, saturated back) or by squaring;
 * everything else in 64-bit integers. */
static inline void gk_binary_elem(int op, int ta, int tb, int ty, const void *a, const void *b,
                                  void *y, int64_t i)
{
    if (gk_dt_is_float(ta))
        gk_stf(ty, y, i, gk_binary_f64(op, gk_ldf(ta, a, i), gk_ldf(tb, b, i)));
    else if (op == GK_TB_POW && gk_dt_is_float(tb))
        gk_sti(ty, y, i, gk_f2i(ty, pow(gk_ldf(ta, a, i), gk_ldf(tb, b, i))));
    else if (op == GK_TB_POW)
        gk_sti(ty, y, i, gk_ipow(gk_ldi(ta, a, i), gk_ldi(tb, b, i), gk_dt_is_unsigned(tb)));
    else
        gk_sti(ty, y, i, gk_binary_i64(op, ta, gk_ldi(ta, a, i), gk_ldi(tb, b, i)));
}

/* --- Cast --- */

/* y[i] = x[i] from kind tx to kind ty:
 * - float -> float rounds to nearest even (f64 -> f16/bf16 goes through f32; the low-bit
 *   floats follow the Cast modes ORed into ty above its low byte, gk_lowbit.h);
 * - float -> integer truncates toward zero, NaN gives 0, out-of-range values saturate (the
 *   4- and 2-bit integers wrap instead, as ONNX's reference does);
 * - integer -> integer wraps modulo 2^bits; integer -> float rounds to nearest, straight to
 *   f32 (one rounding) when the target is 32-bit or narrower;
 * - anything -> bool is v != 0 (NaN is true); bool -> anything is 0 or 1. */
static inline void gk_cast_elem(int tx, int ty_mode, const void *x, void *y, int64_t i)
{
    int ty = ty_mode & 0xff, mode = ty_mode & ~0xff;
    if (gk_dt_is_float(tx)) {
        gk_stf_mode(ty, y, i, gk_ldf(tx, x, i), mode);
    } else if (gk_dt_is_float(ty)) {
        int64_t v = gk_ldi(tx, x, i);
        bool u = gk_dt_is_unsigned(tx);
        double g = u ? (double)(uint64_t)v : (double)v;
        float f = u ? (float)(uint64_t)v : (float)v;
        gk_stf_mode(ty, y, i, ty == GK_DT_F64 ? g : (double)f, mode);
    } else {
        gk_sti(ty, y, i, gk_ldi(tx, x, i));
    }
}

#endif
