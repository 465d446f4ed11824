// qmath.h - The integer reference of quantized arithmetic, one element at a time: quantize,
// dequantize, requantize (an int32 accumulator to 8 or 16 bits through an f32 multiplier).
// Written once here and included by the int8 kernels (kernels/q*) and by the reference
// evaluator (src/eval/eval_quant.c), so the interpreter and the CPU backend compute the same
// integers (docs/quantization.md, "Arithmetic").
//
// A quantized value q of scale s and offset z stands for the real number s * (q - z).
// Requantization is "fp32 requantization": the exact int32 accumulator is converted to f32
// (round to nearest even, exact below 2^24), multiplied by one f32 multiplier M (one rounded
// multiply: the kernels are built with -ffp-contract=off), rounded to the nearest integer with
// ties to even, offset by the result's zero point and saturated. Every SIMD lane does exactly
// this (cvtdq2ps, mulps, cvtps2dq under the default rounding mode; the clamp below keeps every
// value inside cvtps2dq's range), so vector and scalar code agree bit for bit.
#ifndef GK_QMATH_H
#define GK_QMATH_H

#include <stdint.h>

/* Values beyond +-2^22 saturate every 8- and 16-bit result anyway; clamping first makes the
 * rounding trick below exact (and keeps NaN out: it becomes 0). */
#define GK_Q_LIMIT 4194304.0f

/* v rounded to the nearest integer, ties to even, after clamping to [-2^22, 2^22]; NaN -> 0.
 * Adding and subtracting 1.5 * 2^23 rounds in the FPU's default mode (to nearest even). */
static inline int32_t gk_q_round(float v)
{
    if (!(v > -GK_Q_LIMIT))
        v = v == v ? -GK_Q_LIMIT : 0.0f;
    if (v > GK_Q_LIMIT)
        v = GK_Q_LIMIT;
    float r = (v + 12582912.0f) - 12582912.0f;
    return (int32_t)r;
}

static inline int32_t gk_q_clamp(int32_t q, int32_t lo, int32_t hi)
{
    return q < lo ? lo : q > hi ? hi : q;
}

/* The requantization multiplier of an accumulator of scale `in_scale` into a result of scale
 * `out_scale`, rounded once from double (compile time and the evaluator alike). */
static inline float gk_q_multiplier(double in_scale, double out_scale)
{
    return (float)(in_scale / out_scale);
}

/* acc (int32, real value acc * in_scale) into a result of zero point `zero`, saturated to
 * [lo, hi] (the result kind's range, narrowed by a fused Relu or Clip). */
static inline int32_t gk_requant(int32_t acc, float mult, int32_t zero, int32_t lo, int32_t hi)
{
    return gk_q_clamp(gk_q_round((float)acc * mult) + zero, lo, hi);
}

/* ONNX QuantizeLinear: saturate(round(x / scale) + zero), the division in f32. */
static inline int32_t gk_quantize(float x, float scale, int32_t zero, int32_t lo, int32_t hi)
{
    return gk_q_clamp(gk_q_round(x / scale) + zero, lo, hi);
}

/* Activations folded into a requantization (gk_q_act_range). */
enum { GK_QACT_NONE, GK_QACT_RELU, GK_QACT_CLIP };

/* The range [*lo, *hi] of a result of scale `scale` and zero point `zero` narrowed by a folded
 * activation: Relu raises lo to the zero point (real 0), Clip(a, b) clamps to the quantized
 * bounds. The evaluator and the backend's kernel calls both narrow through this. */
static inline void gk_q_act_range(int act, double a, double b, float scale, int32_t zero,
                                  int32_t *lo, int32_t *hi)
{
    if (act == GK_QACT_RELU) {
        *lo = *lo > zero ? *lo : zero;
    } else if (act == GK_QACT_CLIP) {
        int32_t qa = gk_quantize((float)a, scale, zero, *lo, *hi);
        int32_t qb = gk_quantize((float)b, scale, zero, *lo, *hi);
        *lo = qa > *lo ? qa : *lo;
        *hi = qb < *hi ? qb : *hi;
    }
}

/* ONNX DequantizeLinear: (q - zero) * scale in f32. */
static inline float gk_dequantize(int32_t q, float scale, int32_t zero)
{
    return (float)(q - zero) * scale;
}

/* Quantized Add of two operands already offset (a - z_a, b - z_b) into a result of zero point
 * `zero`: two rounded f32 multiplies (ma = s_a / s_y, mb = s_b / s_y), one rounded add, then
 * rounded and saturated as gk_requant. Sub is Add with mb negated: (float)b * -mb is exactly
 * -((float)b * mb) and p + -q exactly p - q, so both give the same integers. */
static inline int32_t gk_qadd(int32_t a, int32_t b, float ma, float mb, int32_t zero, int32_t lo,
                              int32_t hi)
{
    float pa = (float)a * ma;
    float pb = (float)b * mb;
    return gk_q_clamp(gk_q_round(pa + pb) + zero, lo, hi);
}

/* The multiplier of a quantized AveragePool output averaging `count` taps: the accumulator
 * sum(x - z_x) has scale s_x, the mean s_x / count; rounded once from double. */
static inline float gk_q_avg_multiplier(double sx, double sy, int64_t count)
{
    return (float)(sx / (sy * (double)count));
}

#endif
