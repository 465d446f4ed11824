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
} gk_dtype;

static inline bool gk_dt_is_float(int dt) { return dt >= GK_DT_F32 && dt <= GK_DT_F64; }
/* Unsigned kinds and bool compare as uint64_t, signed ones as int64_t. */
static inline bool gk_dt_is_unsigned(int dt)
{
    return dt == GK_DT_U8 || dt == GK_DT_U16 || dt == GK_DT_U32 || dt == GK_DT_U64 ||
           dt == GK_DT_BOOL;
}

static inline int64_t gk_dt_size(int dt)
{
    switch (dt) {
    case GK_DT_F16: case GK_DT_BF16: case GK_DT_I16: case GK_DT_U16: return 2;
    case GK_DT_F32: case GK_DT_I32: case GK_DT_U32: return 4;
    case GK_DT_F64: case GK_DT_I64: case GK_DT_U64: return 8;
    default: return 1;
    }
}

static inline uint32_t gk_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float gk_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float gk_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return gk_bits_f32(sign | 0x7f800000u | m << 13);
    if (e == 0) {
        if (m == 0)
            return gk_bits_f32(sign);
        /* A subnormal half is exactly m * 2^-24, which a float holds. */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    return gk_bits_f32(sign | (e + 112) << 23 | m << 13);
}

/* Round to nearest even; NaN keeps its top payload bits (or becomes a quiet NaN). */
static inline uint16_t gk_f32_to_f16(float f)
{
    uint32_t u = gk_f32_bits(f), mant = u & 0x7fffff;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    int e = (int)((u >> 23) & 0xff) - 127;
    if (e == 128) {
        uint32_t m = mant >> 13;
        return sign | 0x7c00 | (uint16_t)(mant == 0 ? 0 : m ? m : 0x200);
    }
    if (e > 15)
        return sign | 0x7c00;
    uint32_t h, rem, half;
    if (e >= -14) {
        /* A carry out of the mantissa moves to the exponent, up to infinity. */
        h = (uint32_t)(e + 15) << 10 | mant >> 13;
        rem = mant & 0x1fff;
        half = 0x1000;
    } else {
        int s = -(e + 1); /* the value in units of 2^-24 is (mant | 2^23) >> s */
        if (e == -127 || s > 24)
            return sign;
        uint32_t m24 = mant | 0x800000;
        h = m24 >> s;
        rem = m24 & ((1u << s) - 1);
        half = 1u << (s - 1);
    }
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
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* Element i of an integer kind as int64_t (u64 keeps its bit pattern, bool is 0/1). */
static inline int64_t gk_ldi(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case GK_DT_I8: return ((const int8_t *)p)[i];
    case GK_DT_U8: return ((const uint8_t *)p)[i];
    case GK_DT_I16: return ((const int16_t *)p)[i];
    case GK_DT_U16: return ((const uint16_t *)p)[i];
    case GK_DT_I32: return ((const int32_t *)p)[i];
    case GK_DT_U32: return ((const uint32_t *)p)[i];
    case GK_DT_I64: case GK_DT_U64: return ((const int64_t *)p)[i];
    case GK_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0;
    }
}

/* Element i of any kind as double (u64 as unsigned). */
static inline double gk_ldf(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case GK_DT_F32: return ((const float *)p)[i];
    case GK_DT_F16: return gk_f16_to_f32(((const uint16_t *)p)[i]);
    case GK_DT_BF16: return gk_bf16_to_f32(((const uint16_t *)p)[i]);
    case GK_DT_F64: return ((const double *)p)[i];
    case GK_DT_U64: return (double)((const uint64_t *)p)[i];
    default: return (double)gk_ldi(dt, p, i);
    }
}

/* Stores an integer: wraps modulo 2^bits, bool stores v != 0. */
static inline void gk_sti(int dt, void *p, int64_t i, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (dt) {
    case GK_DT_I8: case GK_DT_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case GK_DT_I16: case GK_DT_U16: ((uint16_t *)p)[i] = (uint16_t)u; break;
    case GK_DT_I32: case GK_DT_U32: ((uint32_t *)p)[i] = (uint32_t)u; break;
    case GK_DT_I64: case GK_DT_U64: ((uint64_t *)p)[i] = u; break;
    case GK_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}

/* A double to an integer kind: truncation toward zero, NaN -> 0, saturation at the limits. */
static inline int64_t gk_f2i(int dt, double v)
{
    if (v != v)
        return 0;
    double lo, hi;
    switch (dt) {
    case GK_DT_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case GK_DT_U8: lo = 0; hi = UINT8_MAX; break;
    case GK_DT_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case GK_DT_U16: lo = 0; hi = UINT16_MAX; break;
    case GK_DT_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case GK_DT_U32: lo = 0; hi = UINT32_MAX; break;
    case GK_DT_BOOL: return v != 0;
    case GK_DT_U64:
        if (v <= 0)
            return 0;
        return v >= 18446744073709551616.0 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)v;
    default:
        /* i64: 2^63 is the first double above the range. */
        if (v >= 9223372036854775808.0)
            return INT64_MAX;
        return v < -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
    }
    return v <= lo ? (int64_t)lo : v >= hi ? (int64_t)hi : (int64_t)v;
}

/* Stores a double to any kind: floats round to nearest (f16/bf16 via f32), integer kinds go
 * through gk_f2i, bool stores v != 0. */
static inline void gk_stf(int dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case GK_DT_F32: ((float *)p)[i] = (float)v; break;
    case GK_DT_F16: ((uint16_t *)p)[i] = gk_f32_to_f16((float)v); break;
    case GK_DT_BF16: ((uint16_t *)p)[i] = gk_f32_to_bf16((float)v); break;
    case GK_DT_F64: ((double *)p)[i] = v; break;
    case GK_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: gk_sti(dt, p, i, gk_f2i(dt, v)); break;
    }
}

#endif
