// gk_lowbit.h - The low-bit element kinds' conversions: float8 (e4m3fn, e4m3fnuz, e5m2,
// e5m2fnuz, e8m0), float4 e2m1, and the 4- and 2-bit integers, as ONNX's Cast defines them.
//
// In memory every one of these kinds takes one byte per element (docs/onnx-import.md): a
// float8 byte is its bit pattern, a float4 byte holds its 4-bit pattern in the low nibble,
// and the 4- and 2-bit integers hold their value (sign-extended for the signed ones). Only
// tensor files and model constants pack them; src/onnx unpacks at that boundary.
//
// Conversions work on bit patterns with integer arithmetic and exact power-of-two scalings of
// doubles (no libm calls, so bundles need nothing extra and results do not depend on FPU
// modes). Rounding is to nearest even; what overflow gives follows ONNX's Cast tables:
// - saturate (the default): +-Inf and finite values beyond the largest finite value become
//   +-that value; NaN stays NaN;
// - no saturate: they become +-Inf where the kind has one (e5m2), NaN otherwise;
// - the "uz" kinds (e4m3fnuz, e5m2fnuz) have one NaN (0x80) and no -0 (a -0 result is 0);
// - float4 e2m1 has no NaN or infinity: it always saturates and NaN gives 0x8 (what ONNX's
//   reference produces);
// - e8m0 is an unsigned power of two 2^(e-127), 0xff NaN: the sign is ignored and the
//   exponent is rounded up (the default), down, or to nearest (ties up), as round_mode says.
#ifndef GK_LOWBIT_H
#define GK_LOWBIT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Cast modes, ORed into a Cast's target kind code above its low 8 bits (the kernels' cast
 * takes the target as one constant): saturate=0, and e8m0's round_mode. */
enum { GK_CAST_NO_SATURATE = 1 << 8, GK_CAST_ROUND_DOWN = 1 << 9, GK_CAST_ROUND_NEAREST = 1 << 10 };

/* The layout of a minifloat kind (not e8m0): mantissa bits, exponent bias, sign bit, the
 * largest finite magnitude's code, and its NaN and infinity handling. */
typedef struct gk_minifloat {
    int mbits, bias;
    uint8_t sign, maxcode;
    bool uz, inf, nan;
} gk_minifloat;

static inline gk_minifloat gk_minifloat_of(int t)
{
    switch (t) {
    case 14: return (gk_minifloat){ 3, 7, 0x80, 0x7e, false, false, true };   /* e4m3fn */
    case 15: return (gk_minifloat){ 3, 8, 0x80, 0x7f, true, false, true };    /* e4m3fnuz */
    case 16: return (gk_minifloat){ 2, 15, 0x80, 0x7b, false, true, true };   /* e5m2 */
    case 17: return (gk_minifloat){ 2, 16, 0x80, 0x7f, true, false, true };   /* e5m2fnuz */
    default: return (gk_minifloat){ 1, 1, 0x08, 0x07, false, false, false };  /* f4e2m1 */
    }
}

static inline double gk_lb_bits_f64(uint64_t u)
{
    double f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static inline uint64_t gk_lb_f64_bits(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* 2^e for e in [-1022, 1023], exactly. */
static inline double gk_lb_pow2(int e) { return gk_lb_bits_f64((uint64_t)(e + 1023) << 52); }

static inline double gk_minifloat_to_f64(int t, uint8_t b)
{
    gk_minifloat f = gk_minifloat_of(t);
    int ebits = f.sign == 0x80 ? 7 - f.mbits : 3 - f.mbits;
    uint8_t mag = b & (uint8_t)(f.sign - 1);
    bool neg = (b & f.sign) != 0;
    int e = mag >> f.mbits, m = mag & ((1 << f.mbits) - 1);
    if (f.uz && b == 0x80)
        return gk_lb_bits_f64(0x7ff8000000000000ull);
    if (!f.uz && f.nan && !f.inf && mag == 0x7f)
        return gk_lb_bits_f64(0x7ff8000000000000ull | (uint64_t)neg << 63);
    if (f.inf && e == (1 << ebits) - 1)
        return gk_lb_bits_f64((m ? 0x7ff8000000000000ull : 0x7ff0000000000000ull) |
                              (uint64_t)neg << 63);
    double v = e == 0 ? (double)m * gk_lb_pow2(1 - f.bias - f.mbits)
                      : (double)(m | 1 << f.mbits) * gk_lb_pow2(e - f.bias - f.mbits);
    return neg ? -v : v;
}

static inline uint8_t gk_f64_to_minifloat(int t, double v, bool saturate)
{
    gk_minifloat f = gk_minifloat_of(t);
    uint64_t u = gk_lb_f64_bits(v);
    uint8_t sign = (u >> 63) ? f.sign : 0;
    int be = (int)((u >> 52) & 0x7ff);
    bool sat = saturate || !f.nan;
    uint8_t over = sat ? (uint8_t)(sign | f.maxcode)
                       : f.uz ? 0x80 : f.inf ? (uint8_t)(sign | 0x7c) : (uint8_t)(sign | 0x7f);
    if (be == 0x7ff) {
        if (u & 0xfffffffffffffull)   /* NaN */
            return !f.nan ? f.sign : f.uz ? 0x80 : (uint8_t)(sign | (f.inf ? 0x7e : 0x7f));
        return over;
    }
    int emin = 1 - f.bias;
    int e = be - 1023;   /* floor(log2|v|) for normal doubles; subnormals round to 0 below */
    if (e > 64)
        return over;
    int eq = (e < emin ? emin : e) - f.mbits;   /* exponent of one unit in the last place */
    double n = gk_lb_bits_f64(u & ~(1ull << 63)) * gk_lb_pow2(-eq);
    /* Round half to even; n < 2^(mbits+2), so it fits an int. */
    int r = (int)n;
    double frac = n - (double)r;
    if (frac > 0.5 || (frac == 0.5 && (r & 1)))
        r++;
    int code;
    if (r < (1 << f.mbits)) {
        code = r;   /* subnormal (or zero), e == emin */
    } else {
        int ee = eq + f.mbits;
        if (r >= (2 << f.mbits)) {   /* rounding carried into the next binade */
            r >>= 1;
            ee++;
        }
        code = (ee + f.bias) << f.mbits | (r - (1 << f.mbits));
    }
    if (code > f.maxcode)
        return over;
    if (code == 0 && f.uz)
        return 0;
    return (uint8_t)(sign | code);
}

/* e8m0: 2^(b-127); 0xff is NaN. */
static inline double gk_e8m0_to_f64(uint8_t b)
{
    if (b == 0xff)
        return gk_lb_bits_f64(0x7ff8000000000000ull);
    return gk_lb_pow2((int)b - 127);
}

static inline uint8_t gk_f64_to_e8m0(double v, int mode)
{
    uint64_t u = gk_lb_f64_bits(v) & ~(1ull << 63);
    bool saturate = !(mode & GK_CAST_NO_SATURATE);
    if ((u >> 52) == 0x7ff)
        return (u & 0xfffffffffffffull) || !saturate ? 0xff : 0xfe;
    int e = (int)(u >> 52) - 1023;
    uint64_t m = u & 0xfffffffffffffull;
    if (u == 0)
        return 0;
    if (mode & GK_CAST_ROUND_DOWN)
        ;
    else if (mode & GK_CAST_ROUND_NEAREST)
        e += (m >> 51) & 1;   /* at or above 1.5 * 2^e: ties go up */
    else
        e += m != 0;
    int code = e + 127;
    if (code < 0)
        return 0;
    if (code > 0xfe)
        return saturate ? 0xfe : 0xff;
    return (uint8_t)code;
}

/* The 4- and 2-bit integers wrap modulo 2^bits, as ONNX casts between integers do. */
static inline int8_t gk_wrap_i4(int64_t v) { return (int8_t)((int)(((uint64_t)v & 15) ^ 8) - 8); }
static inline uint8_t gk_wrap_u4(int64_t v) { return (uint8_t)((uint64_t)v & 15); }
static inline int8_t gk_wrap_i2(int64_t v) { return (int8_t)((int)(((uint64_t)v & 3) ^ 2) - 2); }
static inline uint8_t gk_wrap_u2(int64_t v) { return (uint8_t)((uint64_t)v & 3); }

#endif
