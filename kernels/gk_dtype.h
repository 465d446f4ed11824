// gk_dtype.h - Element kinds for the kernels that run any numeric kind: the codes the backend
// passes (a constant `int dt` argument, so every switch below folds away once a kernel is
// inlined), and element loads and stores with the reference evaluator's conversions.
//
// The evaluator (src/eval/eval_internal.h) widens float kinds to double and integer kinds to
// 64 bits, computes, and narrows once on the way out: floats round to nearest (f16 and bf16
// through f32), floats stored to an integer kind truncate toward zero with NaN giving 0 and
// out-of-range values saturating, integers wrap. The functions here do the same, and the
// f16/bf16 conversions are bit-for-bit those of src/graph/dtype.c (the kernel tests compare
// them over every f16 pattern), since the kernel library cannot call into src/.
#ifndef GK_DTYPE_H
#define GK_DTYPE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gk_lowbit.h"

/* Element kind codes; values are part of the kernels' calling convention (never change). */
typedef enum {
    GK_DT_F32 = 1,
    GK_DT_F16 = 2,
    GK_DT_BF16 = 3,
    GK_DT_F64 = 4,
    GK_DT_I8 = 5,
    GK_DT_U8 = 6,
    GK_DT_I16 = 7,
    GK_DT_U16 = 8,
    GK_DT_I32 = 9,
    GK_DT_U32 = 10,
    GK_DT_I64 = 11,
    GK_DT_U64 = 12,
    GK_DT_BOOL = 13,
    /* The low-bit kinds (gk_lowbit.h), one byte per element; in dtypes.def's order. */
    GK_DT_F8E4M3FN = 14,
    GK_DT_F8E4M3FNUZ = 15,
    GK_DT_F8E5M2 = 16,
    GK_DT_F8E5M2FNUZ = 17,
    GK_DT_U4 = 18,
    GK_DT_I4 = 19,
    GK_DT_F4E2M1 = 20,
    GK_DT_F8E8M0 = 21,
    GK_DT_U2 = 22,
    GK_DT_I2 = 23,
} gk_dtype;

/* --- half precision: bit-pattern arithmetic, independent of the host's FPU modes --- */

static inline uint32_t gk_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float gk_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Exact: subnormals normalized, NaN payloads moved to the top of the f32 mantissa. Without
 * branches, so loops over f16 elements vectorize: a normal's exponent is rebiased in place, a
 * subnormal is its mantissa times 2^-24 (an exact int conversion and a scaling whose result
 * is a normal f32, so flush-to-zero modes cannot touch it); every f16 pattern gives the bits
 * of src/graph/dtype.c's conversion. */
static inline float gk_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fffu;
    uint32_t e = em >> 10, m = em & 0x3ffu;
    uint32_t normal = (em << 13) + ((uint32_t)(127 - 15) << 23);
    uint32_t special = 0x7f800000u | m << 13;
    uint32_t sub = gk_f32_bits((float)m * 0x1p-24f);
    return gk_bits_f32(sign | (e == 0x1f ? special : e == 0 ? sub : normal));
}

/* Round to nearest even, subnormals, overflow to infinity; a NaN payload that would vanish
 * becomes a quiet NaN. */
static inline uint16_t gk_f32_to_f16(float f)
{
    uint32_t u = gk_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t exp = (u >> 23) & 0xff;
    uint32_t mant = u & 0x7fffff;
    if (exp == 0xff) {
        if (mant == 0)
            return sign | 0x7c00;
        uint32_t m = mant >> 13;
        return sign | 0x7c00 | (uint16_t)(m ? m : 0x200);
    }
    int e = (int)exp - 127;
    if (e > 15)
        return sign | 0x7c00;
    if (e >= -14) {
        /* Normal range; a mantissa carry from rounding correctly bumps the exponent, and
         * from the top binade gives infinity (65520 and up). */
        uint32_t h = (uint32_t)(e + 15) << 10 | (mant >> 13);
        uint32_t rem = mant & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
            h++;
        return sign | (uint16_t)h;
    }
    if (exp == 0)   /* f32 subnormals are far below half of f16's smallest subnormal */
        return sign;
    /* f16 subnormal: the value in units of 2^-24 is m24 * 2^(e+1). */
    uint32_t m24 = mant | 0x800000;
    int s = -(e + 1);
    if (s > 24)
        return sign;
    uint32_t h = m24 >> s;
    uint32_t rem = m24 & ((1u << s) - 1);
    uint32_t half = 1u << (s - 1);
    if (rem > half || (rem == half && (h & 1)))
        h++;
    return sign | (uint16_t)h;
}

static inline float gk_bf16_to_f32(uint16_t h) { return gk_bits_f32((uint32_t)h << 16); }

static inline uint16_t gk_f32_to_bf16(float f)
{
    uint32_t u = gk_f32_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffff)) {
        uint16_t h = (uint16_t)(u >> 16);
        return (h & 0x7f) ? h : (uint16_t)(h | 0x40);
    }
    /* Adding 0x7fff plus the kept LSB rounds to nearest even; a carry into the exponent is
     * the correct result, up to infinity. */
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* --- element access --- */

/* float8, float4 and e8m0: stored as bit patterns, computed with as f64. */
static inline bool gk_dt_is_minifloat(int t)
{
    return (t >= GK_DT_F8E4M3FN && t <= GK_DT_F8E5M2FNUZ) || t == GK_DT_F4E2M1;
}
static inline bool gk_dt_is_float(int t)
{
    return (t >= GK_DT_F32 && t <= GK_DT_F64) || gk_dt_is_minifloat(t) || t == GK_DT_F8E8M0;
}
/* Unsigned integers and bool compare as uint64_t; signed ones as int64_t. */
static inline bool gk_dt_is_unsigned(int t)
{
    return t == GK_DT_U8 || t == GK_DT_U16 || t == GK_DT_U32 || t == GK_DT_U64 ||
           t == GK_DT_BOOL || t == GK_DT_U4 || t == GK_DT_U2;
}

static inline int gk_dt_size(int t)
{
    switch (t) {
    case GK_DT_F32: case GK_DT_I32: case GK_DT_U32: return 4;
    case GK_DT_F16: case GK_DT_BF16: case GK_DT_I16: case GK_DT_U16: return 2;
    case GK_DT_F64: case GK_DT_I64: case GK_DT_U64: return 8;
    default: return 1;
    }
}

/* Element i of any kind as f64 (u64 as unsigned, bool as 0/1). */
static inline double gk_ldf(int t, const void *p, int64_t i)
{
    switch (t) {
    case GK_DT_F32: return ((const float *)p)[i];
    case GK_DT_F16: return gk_f16_to_f32(((const uint16_t *)p)[i]);
    case GK_DT_BF16: return gk_bf16_to_f32(((const uint16_t *)p)[i]);
    case GK_DT_F64: return ((const double *)p)[i];
    case GK_DT_I8: return ((const int8_t *)p)[i];
    case GK_DT_U8: return ((const uint8_t *)p)[i];
    case GK_DT_I16: return ((const int16_t *)p)[i];
    case GK_DT_U16: return ((const uint16_t *)p)[i];
    case GK_DT_I32: return ((const int32_t *)p)[i];
    case GK_DT_U32: return ((const uint32_t *)p)[i];
    case GK_DT_I64: return (double)((const int64_t *)p)[i];
    case GK_DT_U64: return (double)((const uint64_t *)p)[i];
    case GK_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case GK_DT_F8E8M0: return gk_e8m0_to_f64(((const uint8_t *)p)[i]);
    case GK_DT_I4: case GK_DT_I2: return ((const int8_t *)p)[i];
    case GK_DT_U4: case GK_DT_U2: return ((const uint8_t *)p)[i];
    default:
        if (gk_dt_is_minifloat(t))
            return gk_minifloat_to_f64(t, ((const uint8_t *)p)[i]);
        return 0;
    }
}

/* Element i of an integer or bool kind as int64_t (u64 keeps its bit pattern). */
static inline int64_t gk_ldi(int t, const void *p, int64_t i)
{
    switch (t) {
    case GK_DT_I8: return ((const int8_t *)p)[i];
    case GK_DT_U8: return ((const uint8_t *)p)[i];
    case GK_DT_I16: return ((const int16_t *)p)[i];
    case GK_DT_U16: return ((const uint16_t *)p)[i];
    case GK_DT_I32: return ((const int32_t *)p)[i];
    case GK_DT_U32: return ((const uint32_t *)p)[i];
    case GK_DT_I64: return ((const int64_t *)p)[i];
    case GK_DT_U64: return (int64_t)((const uint64_t *)p)[i];
    case GK_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    case GK_DT_I4: case GK_DT_I2: return ((const int8_t *)p)[i];
    case GK_DT_U4: case GK_DT_U2: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

/* An integer to an integer or bool kind: integers wrap modulo 2^bits (as C and ONNX casts
 * between integers do), bool stores v != 0. */
static inline void gk_sti(int t, void *p, int64_t i, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case GK_DT_I8: case GK_DT_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case GK_DT_I16: case GK_DT_U16: ((uint16_t *)p)[i] = (uint16_t)u; break;
    case GK_DT_I32: case GK_DT_U32: ((uint32_t *)p)[i] = (uint32_t)u; break;
    case GK_DT_I64: case GK_DT_U64: ((uint64_t *)p)[i] = u; break;
    case GK_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case GK_DT_I4: ((int8_t *)p)[i] = gk_wrap_i4(v); break;
    case GK_DT_U4: ((uint8_t *)p)[i] = gk_wrap_u4(v); break;
    case GK_DT_I2: ((int8_t *)p)[i] = gk_wrap_i2(v); break;
    case GK_DT_U2: ((uint8_t *)p)[i] = gk_wrap_u2(v); break;
    default: break;
    }
}

/* Float to integer without undefined behaviour: truncates toward zero, NaN gives 0 and
 * out-of-range values saturate to the kind's limits (ONNX leaves these cases undefined). */
static inline int64_t gk_f2i(int t, double v)
{
    if (v != v)
        return 0;
    if (t == GK_DT_U64) {
        if (v <= 0)
            return 0;
        if (v >= 18446744073709551616.0)
            return (int64_t)UINT64_MAX;
        return (int64_t)(uint64_t)v;
    }
    double lo, hi;
    switch (t) {
    case GK_DT_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case GK_DT_U8: lo = 0; hi = UINT8_MAX; break;
    case GK_DT_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case GK_DT_U16: lo = 0; hi = UINT16_MAX; break;
    case GK_DT_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case GK_DT_U32: lo = 0; hi = UINT32_MAX; break;
    case GK_DT_BOOL: return v != 0;
    default:
        /* i64, and the 4- and 2-bit integers, which then wrap as ONNX's Cast to them does.
         * 2^63 is the first double above the range. */
        if (v >= 9223372036854775808.0)
            return INT64_MAX;
        if (v < -9223372036854775808.0)
            return INT64_MIN;
        return (int64_t)v;
    }
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

/* An f64 to any kind: float kinds round to nearest even (f16/bf16 via f32; the low-bit
 * floats with the Cast modes in `mode`, gk_lowbit.h), integer kinds go through gk_f2i, bool
 * stores v != 0 (so NaN is true). */
static inline void gk_stf_mode(int t, void *p, int64_t i, double v, int mode)
{
    switch (t) {
    case GK_DT_F8E8M0: ((uint8_t *)p)[i] = gk_f64_to_e8m0(v, mode); return;
    case GK_DT_F8E4M3FN: case GK_DT_F8E4M3FNUZ: case GK_DT_F8E5M2: case GK_DT_F8E5M2FNUZ:
    case GK_DT_F4E2M1:
        ((uint8_t *)p)[i] = gk_f64_to_minifloat(t, v, !(mode & GK_CAST_NO_SATURATE));
        return;
    default: break;
    }
    switch (t) {
    case GK_DT_F32: ((float *)p)[i] = (float)v; break;
    case GK_DT_F16: ((uint16_t *)p)[i] = gk_f32_to_f16((float)v); break;
    case GK_DT_BF16: ((uint16_t *)p)[i] = gk_f32_to_bf16((float)v); break;
    case GK_DT_F64: ((double *)p)[i] = v; break;
    case GK_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: gk_sti(t, p, i, gk_f2i(t, v)); break;
    }
}

static inline void gk_stf(int t, void *p, int64_t i, double v) { gk_stf_mode(t, p, i, v, 0); }

#endif
