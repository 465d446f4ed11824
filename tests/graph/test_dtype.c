// test_dtype.c - Element kind tables, exact f16/bf16 conversions against a double-arithmetic
// reference, and element access through f64/i64.
#include <float.h>
#include <math.h>

#include "check.h"
#include "graph/graph.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Value of a binary16 pattern computed with ldexp, independent of the library. */
static double ref_f16_value(uint16_t h)
{
    int exp = (h >> 10) & 31, mant = h & 1023;
    double v = exp == 0 ? ldexp(mant, -24) : ldexp(1024 + mant, exp - 25);
    return (h & 0x8000) ? -v : v;
}

static double ref_bf16_value(uint16_t h)
{
    int exp = (h >> 7) & 255, mant = h & 127;
    double v = exp == 0 ? ldexp(mant, -133) : ldexp(128 + mant, exp - 134);
    return (h & 0x8000) ? -v : v;
}

/* Correct rounding of a finite f32 to a format with `mant_bits` stored mantissa bits, minimum
 * normal exponent `emin` and largest finite value `maxf`, computed in double (exact here, as
 * every quantity has at most 24 significant bits). nearbyint rounds halfway cases to even. */
static double ref_round(float f, int mant_bits, int emin, double maxf)
{
    double a = fabs((double)f);
    int e;
    if (a < ldexp(1, emin)) {
        e = emin;
    } else {
        frexp(a, &e);
        e -= 1;   /* a = 1.xxx * 2^e */
    }
    double q = ldexp(1, e - mant_bits);
    double r = nearbyint(a / q) * q;
    if (r > maxf)
        r = INFINITY;
    return signbit(f) ? -r : r;
}

static int f16_mismatches, bf16_mismatches;

static void check_f16_rounding(float f)
{
    uint16_t h = glow_f32_to_f16(f);
    if (isnan(f)) {
        f16_mismatches += !((h & 0x7c00) == 0x7c00 && (h & 0x3ff));
        return;
    }
    double want = isinf(f) ? f : ref_round(f, 10, -14, 65504.0);
    double got = ref_f16_value(h);
    if ((h & 0x7c00) == 0x7c00)
        got = (h & 0x8000) ? -INFINITY : INFINITY;
    bool ok = got == want && !signbit(got) == !signbit(want);
    if (!ok && f16_mismatches < 10)
        fprintf(stderr, "f32->f16 %.9g (0x%08x): got 0x%04x (%.9g), want %.9g\n", f,
                bits_of(f), h, got, want);
    f16_mismatches += !ok;
}

static void check_bf16_rounding(float f)
{
    uint16_t h = glow_f32_to_bf16(f);
    if (isnan(f)) {
        bf16_mismatches += !((h & 0x7f80) == 0x7f80 && (h & 0x7f));
        return;
    }
    double maxbf = ldexp(255, 120);   /* (2 - 2^-7) * 2^127 */
    double want = isinf(f) ? f : ref_round(f, 7, -126, maxbf);
    double got = ref_bf16_value(h);
    if ((h & 0x7f80) == 0x7f80)
        got = (h & 0x8000) ? -INFINITY : INFINITY;
    bool ok = got == want && !signbit(got) == !signbit(want);
    if (!ok && bf16_mismatches < 10)
        fprintf(stderr, "f32->bf16 %.9g (0x%08x): got 0x%04x, want %.9g\n", f, bits_of(f), h,
                want);
    bf16_mismatches += !ok;
}

static void test_tables(void)
{
    CHECK_STR_EQ(glow_dtype_name(GLOW_F32), "f32");
    CHECK_STR_EQ(glow_dtype_name(GLOW_BF16), "bf16");
    CHECK_STR_EQ(glow_dtype_name(GLOW_I8Q), "i8q");
    CHECK_EQ(glow_dtype_size(GLOW_F64), 8);
    CHECK_EQ(glow_dtype_size(GLOW_BOOL), 1);
    CHECK_EQ(glow_dtype_size(GLOW_I32Q), 4);
    CHECK(glow_dtype_is_float(GLOW_F16));
    CHECK(!glow_dtype_is_float(GLOW_I32));
    CHECK(glow_dtype_is_int(GLOW_U16) && glow_dtype_is_int(GLOW_I64));
    CHECK(!glow_dtype_is_int(GLOW_BOOL) && !glow_dtype_is_int(GLOW_U8Q));
    CHECK(glow_dtype_is_quantized(GLOW_U8Q));
    CHECK_EQ(glow_dtype_class_of(GLOW_U32), DC_UINT);
    glow_dtype t;
    CHECK(glow_dtype_from_onnx(1, &t) && t == GLOW_F32);
    CHECK(glow_dtype_from_onnx(7, &t) && t == GLOW_I64);
    CHECK(glow_dtype_from_onnx(16, &t) && t == GLOW_BF16);
    CHECK(!glow_dtype_from_onnx(0, &t));
    CHECK(glow_dtype_from_onnx(8, &t) && t == GLOW_STRING);   /* handles (graph.h, glow_str) */
    CHECK(!glow_dtype_from_onnx(-1, &t));
    CHECK_EQ(glow_dtype_to_onnx(GLOW_BOOL), 9);
    CHECK_EQ(glow_dtype_to_onnx(GLOW_I8Q), 0);
    CHECK(glow_dtype_from_name("u64", &t) && t == GLOW_U64);
    CHECK(!glow_dtype_from_name("float", &t));
}

static void test_f16_all_patterns(void)
{
    int decode_bad = 0, roundtrip_bad = 0, nan_bad = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = glow_f16_to_f32(h);
        bool is_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        bool is_inf = (h & 0x7fff) == 0x7c00;
        if (is_nan) {
            uint16_t back = glow_f32_to_f16(f);
            nan_bad += !isnan(f) || !!signbit(f) != !!(h & 0x8000) ||
                       !((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
            continue;
        }
        double want = is_inf ? ((h & 0x8000) ? -INFINITY : INFINITY) : ref_f16_value(h);
        decode_bad += (double)f != want || !signbit(f) != !signbit(want);
        roundtrip_bad += glow_f32_to_f16(f) != h;
    }
    CHECK_EQ(decode_bad, 0);
    CHECK_EQ(roundtrip_bad, 0);
    CHECK_EQ(nan_bad, 0);
}

static void test_bf16_all_patterns(void)
{
    int decode_bad = 0, roundtrip_bad = 0, nan_bad = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float f = glow_bf16_to_f32(h);
        bool is_nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
        bool is_inf = (h & 0x7fff) == 0x7f80;
        if (is_nan) {
            nan_bad += !isnan(f) || !isnan(glow_bf16_to_f32(glow_f32_to_bf16(f)));
            continue;
        }
        double want = is_inf ? ((h & 0x8000) ? -INFINITY : INFINITY) : ref_bf16_value(h);
        decode_bad += (double)f != want || !signbit(f) != !signbit(want);
        roundtrip_bad += glow_f32_to_bf16(f) != h;
    }
    CHECK_EQ(decode_bad, 0);
    CHECK_EQ(roundtrip_bad, 0);
    CHECK_EQ(nan_bad, 0);
}

/* Deterministic xorshift so failures reproduce. */
static uint32_t rng_state = 0x12345678u;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void test_rounding(void)
{
    /* Edge values: limits, overflow threshold, subnormals and halfway cases. */
    const float edges[] = {
        0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 65536.0f, 1e10f,
        FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN, -NAN,
        0x1p-24f, 0x1p-25f, 0x1.000002p-25f, 0x1.8p-24f, 0x1.8p-23f, 0x1p-26f, 0x1p-14f,
        0x1.ff8p-15f, 0x1.ffcp-15f, 0x1.ffep-15f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f,
        1.0f + 0x1.000002p-11f, 2048.0f + 1.0f, 2048.0f + 3.0f, 0.1f, 1.0f / 3.0f, 0x1p-149f,
        FLT_MIN, 0x1.fep127f, 0x1.ff0p127f, 0x1.ff8p127f, 0x1.fefffep127f, 1.0f + 0x1p-8f,
        1.0f + 0x3p-8f, 0x1p-133f, 0x1p-134f, 0x1.8p-133f, 0x1.000002p-134f,
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        check_f16_rounding(edges[i]);
        check_bf16_rounding(edges[i]);
    }
    /* Exact expectations for the documented cases. */
    CHECK_EQ(glow_f32_to_f16(65504.0f), 0x7bff);
    CHECK_EQ(glow_f32_to_f16(65520.0f), 0x7c00);
    CHECK_EQ(glow_f32_to_f16(65519.99f), 0x7bff);
    CHECK_EQ(glow_f32_to_f16(0x1p-24f), 0x0001);
    CHECK_EQ(glow_f32_to_f16(0x1p-25f), 0x0000);         /* tie to even: 0 */
    CHECK_EQ(glow_f32_to_f16(0x1.8p-24f), 0x0002);       /* tie to even: 2 units */
    CHECK_EQ(glow_f32_to_f16(-0x1.000002p-25f), 0x8001);
    CHECK_EQ(glow_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    CHECK_EQ(glow_f32_to_f16(1.0f + 0x3p-11f), 0x3c02);
    CHECK_EQ(glow_f32_to_f16(-0.0f), 0x8000);
    CHECK_EQ(glow_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    CHECK_EQ(glow_f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);
    CHECK_EQ(glow_f32_to_bf16(0x1.ff8p127f), 0x7f80);     /* rounds past the max: inf */
    CHECK_EQ(glow_f32_to_bf16(INFINITY), 0x7f80);
    CHECK(isnan(glow_f16_to_f32(glow_f32_to_f16(NAN))));
    /* A NaN whose payload sits only in bits bf16 drops must stay NaN. */
    CHECK(isnan(glow_bf16_to_f32(glow_f32_to_bf16(float_of(0x7f800001u)))));
    CHECK(isnan(glow_f16_to_f32(glow_f32_to_f16(float_of(0x7f800001u)))));

    /* Random values: half spread over f16's exponent range, half arbitrary bit patterns. */
    for (int i = 0; i < 4000; i++) {
        uint32_t r = rnd();
        float f;
        if (i & 1) {
            uint32_t exp = 127 - 27 + (rnd() % 46);   /* 2^-27 .. 2^18 */
            f = float_of((r & 0x807fffffu) | exp << 23);
        } else {
            f = float_of(r);
        }
        check_f16_rounding(f);
        check_bf16_rounding(f);
        /* Exact halfway points for f16: a representable value plus half a unit. */
        uint32_t hb = rnd() & 0x7bff;
        double lo = ref_f16_value((uint16_t)hb), hi = ref_f16_value((uint16_t)(hb + 1));
        check_f16_rounding((float)((lo + hi) / 2));
    }
    CHECK_EQ(f16_mismatches, 0);
    CHECK_EQ(bf16_mismatches, 0);
}

static void test_load_store(void)
{
    unsigned char buf[64];
    for (int t = 0; t < GLOW_DTYPE_COUNT; t++) {
        if (glow_dtype_is_lowbit((glow_dtype)t))
            continue;   /* 3 and 5 do not all fit them: tests/graph/test_lowbit.c */
        if (t == GLOW_STRING)
            continue;   /* stores need a string store: tests/eval/test_eval_string.c */
        memset(buf, 0, sizeof(buf));
        glow_store_f64((glow_dtype)t, buf, 2, 3.0);
        CHECK_NEAR(glow_load_f64((glow_dtype)t, buf, 2), t == GLOW_BOOL ? 1.0 : 3.0, 0);
        CHECK_EQ(glow_load_i64((glow_dtype)t, buf, 2), t == GLOW_BOOL ? 1 : 3);
        CHECK_EQ(glow_load_i64((glow_dtype)t, buf, 1), 0);
        glow_store_i64((glow_dtype)t, buf, 3, 5);
        CHECK_EQ(glow_load_i64((glow_dtype)t, buf, 3), t == GLOW_BOOL ? 1 : 5);
    }
    /* C truncation toward zero; bool is v != 0; integer stores wrap. */
    glow_store_f64(GLOW_I32, buf, 0, -3.7);
    CHECK_EQ(glow_load_i64(GLOW_I32, buf, 0), -3);
    glow_store_f64(GLOW_BOOL, buf, 0, 0.25);
    CHECK_EQ(glow_load_i64(GLOW_BOOL, buf, 0), 1);
    glow_store_f64(GLOW_BOOL, buf, 0, 0.0);
    CHECK_EQ(glow_load_i64(GLOW_BOOL, buf, 0), 0);
    glow_store_i64(GLOW_U8, buf, 0, 300);
    CHECK_EQ(glow_load_i64(GLOW_U8, buf, 0), 44);
    glow_store_i64(GLOW_I8Q, buf, 0, -5);
    CHECK_EQ(glow_load_i64(GLOW_I8Q, buf, 0), -5);
    CHECK_EQ(glow_load_f64(GLOW_I8Q, buf, 0), -5);   /* raw integer, not dequantized */
    glow_store_i64(GLOW_I64, buf, 0, INT64_MIN);
    CHECK(glow_load_i64(GLOW_I64, buf, 0) == INT64_MIN);
    glow_store_i64(GLOW_U64, buf, 0, -1);
    CHECK(glow_load_f64(GLOW_U64, buf, 0) == 18446744073709551615.0);
    /* Out-of-range float stores saturate rather than invoking undefined behavior. */
    glow_store_f64(GLOW_I8, buf, 0, 1e9);
    CHECK_EQ(glow_load_i64(GLOW_I8, buf, 0), 127);
    glow_store_f64(GLOW_I32, buf, 0, NAN);
    CHECK_EQ(glow_load_i64(GLOW_I32, buf, 0), 0);
    /* f64 -> f16 rounds once: 1 + 2^-11 + 2^-30 is above the tie, so it goes up. */
    glow_store_f64(GLOW_F16, buf, 0, 1.0 + 0x1p-11 + 0x1p-30);
    CHECK_EQ(((uint16_t *)buf)[0], 0x3c01);
    glow_store_f64(GLOW_F16, buf, 0, 1.0 + 0x1p-11);
    CHECK_EQ(((uint16_t *)buf)[0], 0x3c00);
    glow_store_f64(GLOW_BF16, buf, 0, 1.0 + 0x1p-8 + 0x1p-40);
    CHECK_EQ(((uint16_t *)buf)[0], 0x3f81);
    glow_store_f64(GLOW_F16, buf, 0, -1e-300);
    CHECK_EQ(((uint16_t *)buf)[0], 0x8000);
    glow_store_f64(GLOW_F16, buf, 0, 1e300);
    CHECK_EQ(((uint16_t *)buf)[0], 0x7c00);
    glow_store_f64(GLOW_F16, buf, 0, 2.5);
    CHECK_NEAR(glow_load_f64(GLOW_F16, buf, 0), 2.5, 0);
    glow_store_f64(GLOW_F32, buf, 0, 0.1);
    CHECK(glow_load_f64(GLOW_F32, buf, 0) == (double)0.1f);
}

int main(void)
{
    test_tables();
    test_f16_all_patterns();
    test_bf16_all_patterns();
    test_rounding();
    test_load_store();
    return CHECK_DONE();
}
