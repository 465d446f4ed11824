// dtype.c - Element kind tables, exact f16/bf16 conversions, and element access through f64/i64.
//
// The half-precision conversions work on bit patterns with integer arithmetic so results do
// not depend on the host's FPU modes: round to nearest even, subnormals both ways, overflow to
// infinity, and NaN payloads kept (a payload that would vanish becomes a quiet NaN).
#include <math.h>
#include <string.h>

#include "graph/graph.h"
#include "typed_math.h"

typedef struct {
    const char *name;
    size_t bytes;
    glow_dtype_class cls;
    int onnx;
} dtype_info;

static const dtype_info dtype_table[] = {
#define DTYPE(id, name, bytes, cls, onnx) [GLOW_##id] = { name, bytes, cls, onnx },
#include "dtypes.def"
#undef DTYPE
};

static const dtype_info *info(glow_dtype t)
{
    if ((unsigned)t >= GLOW_DTYPE_COUNT)
        GLOW_UNREACHABLE();
    return &dtype_table[t];
}

const char *glow_dtype_name(glow_dtype t)
{
    if ((unsigned)t >= GLOW_DTYPE_COUNT)
        return "?";
    return dtype_table[t].name;
}

size_t glow_dtype_size(glow_dtype t) { return info(t)->bytes; }
glow_dtype_class glow_dtype_class_of(glow_dtype t) { return info(t)->cls; }
bool glow_dtype_is_float(glow_dtype t) { return info(t)->cls == DC_FLOAT; }
bool glow_dtype_is_quantized(glow_dtype t) { return info(t)->cls == DC_QUANT; }

void glow_dtype_qrange(glow_dtype t, int32_t *lo, int32_t *hi)
{
    switch (t) {
    case GLOW_I8Q: *lo = -128; *hi = 127; break;
    case GLOW_U8Q: *lo = 0; *hi = 255; break;
    case GLOW_I16Q: *lo = -32768; *hi = 32767; break;
    default: *lo = INT32_MIN; *hi = INT32_MAX; break;
    }
}

bool glow_dtype_is_lowbit(glow_dtype t) { return t >= GLOW_F8E4M3FN && t <= GLOW_I2; }

int glow_dtype_file_bits(glow_dtype t)
{
    switch (t) {
    case GLOW_U4: case GLOW_I4: case GLOW_F4E2M1: return 4;
    case GLOW_U2: case GLOW_I2: return 2;
    default: return 8 * (int)info(t)->bytes;
    }
}

int glow_dtype_kernel_code(glow_dtype t)
{
    _Static_assert(GLOW_BOOL + 1 == GK_DT_BOOL && GLOW_I2 - GLOW_F8E4M3FN == GK_DT_I2 - GK_DT_F8E4M3FN,
                   "kernel codes follow dtypes.def");
    if (t <= GLOW_BOOL)
        return (int)t + 1;
    if (glow_dtype_is_lowbit(t))
        return (int)(t - GLOW_F8E4M3FN) + GK_DT_F8E4M3FN;
    return 0;
}

bool glow_dtype_is_int(glow_dtype t)
{
    glow_dtype_class c = info(t)->cls;
    return c == DC_SINT || c == DC_UINT;
}

bool glow_dtype_from_onnx(int onnx_code, glow_dtype *out)
{
    if (onnx_code <= 0)
        return false;
    for (int t = 0; t < GLOW_DTYPE_COUNT; t++) {
        if (dtype_table[t].onnx == onnx_code) {
            *out = (glow_dtype)t;
            return true;
        }
    }
    return false;
}

int glow_dtype_to_onnx(glow_dtype t) { return info(t)->onnx; }

bool glow_dtype_from_name(const char *name, glow_dtype *out)
{
    for (int t = 0; t < GLOW_DTYPE_COUNT; t++) {
        if (strcmp(dtype_table[t].name, name) == 0) {
            *out = (glow_dtype)t;
            return true;
        }
    }
    return false;
}

/* ---- half precision ---- */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* The conversions are kernels/typed_math.h's, which the typed kernels and the evaluator's
 * element access share. */
float glow_f16_to_f32(uint16_t h) { return gk_f16_to_f32(h); }
uint16_t glow_f32_to_f16(float f) { return gk_f32_to_f16(f); }
float glow_bf16_to_f32(uint16_t h) { return gk_bf16_to_f32(h); }
uint16_t glow_f32_to_bf16(float f) { return gk_f32_to_bf16(f); }

/* ---- element access ---- */

/* Float to integer conversions saturate (and send NaN to 0) instead of hitting C's
 * undefined behavior for out-of-range values; in range they truncate like a C cast. */
static int64_t f64_to_i64(double v, double lo, double hi)
{
    if (isnan(v))
        return 0;
    if (v <= lo)
        return (int64_t)lo;
    if (v >= hi)
        return (int64_t)hi;
    return (int64_t)v;
}

static int64_t f64_to_i64_full(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    if (v < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static uint64_t f64_to_u64(double v)
{
    if (isnan(v) || v <= 0)
        return 0;
    if (v >= 18446744073709551616.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

/* Rounds to f32 with "round to odd" (truncate, then set the last bit if anything was lost).
 * A second rounding to f16 or bf16 from there is correctly rounded, which plain
 * f64 -> f32 -> f16 rounding is not (1 + 2^-11 + 2^-30 would tie and go down). */
static float f64_to_f32_odd(double v)
{
    float f = (float)v;
    if (!isfinite(f) || (double)f == v)
        return f;
    if (fabs((double)f) > fabs(v))
        f = nextafterf(f, 0.0f);
    uint32_t u = f32_bits(f);
    return bits_f32(u | 1);
}

double glow_load_f64(glow_dtype t, const void *base, size_t i)
{
    switch (t) {
    case GLOW_F32: return ((const float *)base)[i];
    case GLOW_F16: return glow_f16_to_f32(((const uint16_t *)base)[i]);
    case GLOW_BF16: return glow_bf16_to_f32(((const uint16_t *)base)[i]);
    case GLOW_F64: return ((const double *)base)[i];
    case GLOW_U64: return (double)((const uint64_t *)base)[i];
    case GLOW_F8E4M3FN: case GLOW_F8E4M3FNUZ: case GLOW_F8E5M2: case GLOW_F8E5M2FNUZ:
    case GLOW_F4E2M1: case GLOW_F8E8M0:
        return gk_ldf(glow_dtype_kernel_code(t), base, (int64_t)i);
    case GLOW_STRING: return glow_str_to_f64(glow_str_at(base, i));
    default: return (double)glow_load_i64(t, base, i);
    }
}

int64_t glow_load_i64(glow_dtype t, const void *base, size_t i)
{
    switch (t) {
    case GLOW_F32:
    case GLOW_F16:
    case GLOW_BF16:
    case GLOW_F64:
    case GLOW_F8E4M3FN: case GLOW_F8E4M3FNUZ: case GLOW_F8E5M2: case GLOW_F8E5M2FNUZ:
    case GLOW_F4E2M1: case GLOW_F8E8M0: return f64_to_i64_full(glow_load_f64(t, base, i));
    case GLOW_I8: case GLOW_I4: case GLOW_I2:
    case GLOW_I8Q: return ((const int8_t *)base)[i];
    case GLOW_U8: case GLOW_U4: case GLOW_U2:
    case GLOW_U8Q: return ((const uint8_t *)base)[i];
    case GLOW_I16:
    case GLOW_I16Q: return ((const int16_t *)base)[i];
    case GLOW_U16: return ((const uint16_t *)base)[i];
    case GLOW_I32:
    case GLOW_I32Q: return ((const int32_t *)base)[i];
    case GLOW_U32: return ((const uint32_t *)base)[i];
    case GLOW_I64: return ((const int64_t *)base)[i];
    case GLOW_U64: return (int64_t)((const uint64_t *)base)[i];
    case GLOW_BOOL: return ((const uint8_t *)base)[i] != 0;
    case GLOW_STRING: return f64_to_i64_full(glow_load_f64(t, base, i));
    case GLOW_DTYPE_COUNT: break;
    }
    GLOW_UNREACHABLE();
}

void glow_store_f64(glow_dtype t, void *base, size_t i, double v)
{
    switch (t) {
    case GLOW_F32: ((float *)base)[i] = (float)v; return;
    case GLOW_F16: ((uint16_t *)base)[i] = glow_f32_to_f16(f64_to_f32_odd(v)); return;
    case GLOW_BF16: ((uint16_t *)base)[i] = glow_f32_to_bf16(f64_to_f32_odd(v)); return;
    case GLOW_F64: ((double *)base)[i] = v; return;
    case GLOW_I8:
    case GLOW_I8Q: ((int8_t *)base)[i] = (int8_t)f64_to_i64(v, INT8_MIN, INT8_MAX); return;
    case GLOW_U8:
    case GLOW_U8Q: ((uint8_t *)base)[i] = (uint8_t)f64_to_i64(v, 0, UINT8_MAX); return;
    case GLOW_I16:
    case GLOW_I16Q: ((int16_t *)base)[i] = (int16_t)f64_to_i64(v, INT16_MIN, INT16_MAX); return;
    case GLOW_U16: ((uint16_t *)base)[i] = (uint16_t)f64_to_i64(v, 0, UINT16_MAX); return;
    case GLOW_I32:
    case GLOW_I32Q: ((int32_t *)base)[i] = (int32_t)f64_to_i64(v, INT32_MIN, INT32_MAX); return;
    case GLOW_U32: ((uint32_t *)base)[i] = (uint32_t)f64_to_i64(v, 0, UINT32_MAX); return;
    case GLOW_I64: ((int64_t *)base)[i] = f64_to_i64_full(v); return;
    case GLOW_U64: ((uint64_t *)base)[i] = f64_to_u64(v); return;
    case GLOW_BOOL: ((uint8_t *)base)[i] = v != 0; return;
    /* Cast's defaults: saturating round to nearest even, e8m0 rounding up, integers wrap. */
    case GLOW_F8E4M3FN: case GLOW_F8E4M3FNUZ: case GLOW_F8E5M2: case GLOW_F8E5M2FNUZ:
    case GLOW_F4E2M1: case GLOW_F8E8M0: case GLOW_U4: case GLOW_I4: case GLOW_U2: case GLOW_I2:
        gk_stf(glow_dtype_kernel_code(t), base, (int64_t)i, v);
        return;
    case GLOW_STRING: return; /* a number's text needs a store for its bytes (graph.h) */
    case GLOW_DTYPE_COUNT: break;
    }
    GLOW_UNREACHABLE();
}

void glow_store_i64(glow_dtype t, void *base, size_t i, int64_t v)
{
    switch (t) {
    case GLOW_F32: ((float *)base)[i] = (float)v; return;
    case GLOW_F16: ((uint16_t *)base)[i] = glow_f32_to_f16(f64_to_f32_odd((double)v)); return;
    case GLOW_BF16: ((uint16_t *)base)[i] = glow_f32_to_bf16(f64_to_f32_odd((double)v)); return;
    case GLOW_F64: ((double *)base)[i] = (double)v; return;
    /* Narrowing integer stores wrap modulo 2^bits, as C conversions do on every target we
     * support. */
    case GLOW_I8:
    case GLOW_I8Q: ((int8_t *)base)[i] = (int8_t)v; return;
    case GLOW_U8:
    case GLOW_U8Q: ((uint8_t *)base)[i] = (uint8_t)v; return;
    case GLOW_I16:
    case GLOW_I16Q: ((int16_t *)base)[i] = (int16_t)v; return;
    case GLOW_U16: ((uint16_t *)base)[i] = (uint16_t)v; return;
    case GLOW_I32:
    case GLOW_I32Q: ((int32_t *)base)[i] = (int32_t)v; return;
    case GLOW_U32: ((uint32_t *)base)[i] = (uint32_t)v; return;
    case GLOW_I64: ((int64_t *)base)[i] = v; return;
    case GLOW_U64: ((uint64_t *)base)[i] = (uint64_t)v; return;
    case GLOW_BOOL: ((uint8_t *)base)[i] = v != 0; return;
    case GLOW_U4: case GLOW_I4: case GLOW_U2: case GLOW_I2:
        gk_sti(glow_dtype_kernel_code(t), base, (int64_t)i, v);
        return;
    case GLOW_F8E4M3FN: case GLOW_F8E4M3FNUZ: case GLOW_F8E5M2: case GLOW_F8E5M2FNUZ:
    case GLOW_F4E2M1: case GLOW_F8E8M0:
        gk_stf(glow_dtype_kernel_code(t), base, (int64_t)i, (double)v);
        return;
    case GLOW_STRING: return;
    case GLOW_DTYPE_COUNT: break;
    }
    GLOW_UNREACHABLE();
}
