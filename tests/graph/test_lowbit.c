// test_lowbit.c - The low-bit kinds (float8, float4, e8m0, 4- and 2-bit integers): every
// pattern's value against an independent ldexp reference, rounding and overflow by ONNX's
// Cast tables, the Cast modes, and the packing of tensor files.
#include <math.h>

#include "check.h"
#include "graph/graph.h"
#include "onnx/onnx.h"
#include "../../kernels/gk_dtype.h"

typedef struct fmt {
    glow_dtype t;
    int ebits, mbits, bias;
    bool uz, inf;   /* uz: 0x80 is the only NaN, no -0; inf: IEEE-style specials (e5m2) */
} fmt;

static const fmt fmts[] = {
    { GLOW_F8E4M3FN, 4, 3, 7, false, false },
    { GLOW_F8E4M3FNUZ, 4, 3, 8, true, false },
    { GLOW_F8E5M2, 5, 2, 15, false, true },
    { GLOW_F8E5M2FNUZ, 5, 2, 16, true, false },
    { GLOW_F4E2M1, 2, 1, 1, false, false },
};

/* Value of pattern b of format f, from the layout alone (NAN for NaN patterns). */
static double ref_value(const fmt *f, unsigned b)
{
    int nb = 1 + f->ebits + f->mbits;
    unsigned sign = 1u << (nb - 1), mag = b & (sign - 1);
    int e = (int)(mag >> f->mbits), m = (int)(mag & ((1u << f->mbits) - 1));
    bool neg = (b & sign) != 0;
    if (f->uz && b == sign)
        return NAN;
    if (nb == 8 && !f->uz && !f->inf && mag == 0x7f)
        return NAN;
    if (f->inf && e == (1 << f->ebits) - 1)
        return m ? NAN : neg ? -INFINITY : INFINITY;
    double v = e == 0 ? ldexp(m, 1 - f->bias - f->mbits)
                      : ldexp(m + (1 << f->mbits), e - f->bias - f->mbits);
    return neg ? -v : v;
}

static double load(glow_dtype t, uint8_t b) { return glow_load_f64(t, &b, 0); }

static uint8_t store(glow_dtype t, double v)
{
    uint8_t b = 0xaa;
    glow_store_f64(t, &b, 0, v);
    return b;
}

/* Every pattern decodes to the reference value and encodes back to itself (the NaNs to the
 * kind's NaN, -0 of the uz kinds does not exist). */
static void test_patterns(void)
{
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        const fmt *f = &fmts[k];
        int n = 1 << (1 + f->ebits + f->mbits), bad = 0;
        for (int b = 0; b < n; b++) {
            double want = ref_value(f, (unsigned)b), got = load(f->t, (uint8_t)b);
            if (isnan(want) ? !isnan(got) : got != want || signbit(got) != signbit(want))
                bad++;
            if (!isnan(want) && !isinf(want) && store(f->t, want) != b)
                bad++;
        }
        CHECK_EQ(bad, 0);
    }
}

/* Round to nearest even at every halfway point between neighbouring finite values. */
static void test_ties(void)
{
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        const fmt *f = &fmts[k];
        int half = 1 << (f->ebits + f->mbits), bad = 0;
        for (int b = 0; b + 1 < half; b++) {
            double lo = ref_value(f, (unsigned)b), hi = ref_value(f, (unsigned)b + 1);
            if (!isfinite(lo) || !isfinite(hi))
                continue;
            uint8_t want = (uint8_t)((b & 1) ? b + 1 : b);
            if (store(f->t, (lo + hi) / 2) != want)
                bad++;
            if (store(f->t, nextafter((lo + hi) / 2, 0)) != b ||
                store(f->t, nextafter((lo + hi) / 2, INFINITY)) != b + 1)
                bad++;
        }
        CHECK_EQ(bad, 0);
    }
}

/* ONNX's Cast tables for overflow, infinity, NaN and signed zero. */
static void test_specials(void)
{
    /* saturate (the default store) */
    CHECK_EQ(store(GLOW_F8E4M3FN, 1e6), 0x7e);
    CHECK_EQ(store(GLOW_F8E4M3FN, -INFINITY), 0xfe);
    CHECK_EQ(store(GLOW_F8E4M3FN, 464.0), 0x7e);    /* halfway to 480: even is 448 */
    CHECK_EQ(store(GLOW_F8E4M3FN, 465.0), 0x7e);    /* beyond: saturates */
    CHECK_EQ(store(GLOW_F8E4M3FN, NAN), 0x7f);
    CHECK_EQ(store(GLOW_F8E4M3FN, -1e-9), 0x80);
    CHECK_EQ(store(GLOW_F8E4M3FNUZ, INFINITY), 0x7f);
    CHECK_EQ(store(GLOW_F8E4M3FNUZ, NAN), 0x80);
    CHECK_EQ(store(GLOW_F8E4M3FNUZ, -1e-9), 0x00);
    CHECK_EQ(store(GLOW_F8E5M2, INFINITY), 0x7b);
    CHECK_EQ(store(GLOW_F8E5M2, NAN), 0x7e);
    CHECK_EQ(store(GLOW_F8E5M2FNUZ, -1e6), 0xff);
    CHECK_EQ(store(GLOW_F4E2M1, 9.0), 0x7);
    CHECK_EQ(store(GLOW_F4E2M1, -INFINITY), 0xf);
    CHECK_EQ(store(GLOW_F4E2M1, -3.5), 0xe);        /* tie between 3 and 4: 4 is even */
    CHECK_EQ(store(GLOW_F4E2M1, NAN), 0x8);
    /* saturate = 0 through the kernels' Cast modes */
    int m = GK_CAST_NO_SATURATE;
    uint8_t b;
    gk_stf_mode(GK_DT_F8E4M3FN, &b, 0, 1e6, m);
    CHECK_EQ(b, 0x7f);
    gk_stf_mode(GK_DT_F8E4M3FN, &b, 0, -INFINITY, m);
    CHECK_EQ(b, 0xff);
    gk_stf_mode(GK_DT_F8E4M3FNUZ, &b, 0, -1e6, m);
    CHECK_EQ(b, 0x80);
    gk_stf_mode(GK_DT_F8E5M2, &b, 0, 1e6, m);
    CHECK_EQ(b, 0x7c);
    gk_stf_mode(GK_DT_F8E5M2, &b, 0, -INFINITY, m);
    CHECK_EQ(b, 0xfc);
    gk_stf_mode(GK_DT_F8E5M2FNUZ, &b, 0, INFINITY, m);
    CHECK_EQ(b, 0x80);
    gk_stf_mode(GK_DT_F8E5M2, &b, 0, 57344.0, m);   /* the largest finite value stays */
    CHECK_EQ(b, 0x7b);
}

static void test_e8m0(void)
{
    CHECK_EQ(store(GLOW_F8E8M0, 0.0), 0x00);
    CHECK_EQ(store(GLOW_F8E8M0, 1.0), 0x7f);
    CHECK_EQ(store(GLOW_F8E8M0, 1.1), 0x80);           /* rounds up by default */
    CHECK_EQ(store(GLOW_F8E8M0, -0.124), 0x7c);        /* the sign is ignored */
    CHECK_EQ(store(GLOW_F8E8M0, 1e300), 0xfe);
    CHECK_EQ(store(GLOW_F8E8M0, NAN), 0xff);
    CHECK(load(GLOW_F8E8M0, 0x00) == ldexp(1, -127));
    CHECK(load(GLOW_F8E8M0, 0xfe) == ldexp(1, 127));
    CHECK(isnan(load(GLOW_F8E8M0, 0xff)));
    CHECK_EQ(gk_f64_to_e8m0(1.9, GK_CAST_ROUND_DOWN), 0x7f);
    CHECK_EQ(gk_f64_to_e8m0(1.4, GK_CAST_ROUND_NEAREST), 0x7f);
    CHECK_EQ(gk_f64_to_e8m0(1.5, GK_CAST_ROUND_NEAREST), 0x80);
    CHECK_EQ(gk_f64_to_e8m0(INFINITY, GK_CAST_NO_SATURATE), 0xff);
    CHECK_EQ(gk_f64_to_e8m0(INFINITY, 0), 0xfe);
}

/* Floats truncate, then every integer wraps modulo 2^bits (ONNX's reference Cast). */
static void test_ints(void)
{
    int8_t b;
    glow_store_f64(GLOW_I4, &b, 0, -9.0);
    CHECK_EQ(b, 7);
    glow_store_f64(GLOW_I4, &b, 0, 8.0);
    CHECK_EQ(b, -8);
    glow_store_f64(GLOW_I4, &b, 0, -2.7);
    CHECK_EQ(b, -2);
    glow_store_i64(GLOW_U4, &b, 0, 17);
    CHECK_EQ(b, 1);
    glow_store_i64(GLOW_I2, &b, 0, 2);
    CHECK_EQ(b, -2);
    glow_store_f64(GLOW_U2, &b, 0, -1.0);
    CHECK_EQ(b, 3);
    CHECK_EQ(glow_load_i64(GLOW_I2, &b, 0), 3);
}

/* 4-bit tensors are packed two per byte in files, low nibble first; an odd count pads. */
static void test_packing(void)
{
    static const glow_dtype kinds[] = { GLOW_I4, GLOW_U4, GLOW_F4E2M1, GLOW_I2, GLOW_U2,
                                        GLOW_F8E5M2 };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        glow_dtype t = kinds[k];
        int64_t dims[1] = { 7 };
        glow_type ty = glow_type_make(t, 1, dims);
        glow_tensor a, back;
        glow_diag d = { 0 };
        CHECK(glow_tensor_alloc(&a, &ty, &d) == GLOW_OK);
        for (int i = 0; i < 7; i++)
            glow_store_i64(t == GLOW_F4E2M1 || t == GLOW_F8E5M2 ? GLOW_U4 : t, a.data,
                           (size_t)i, i - 3);
        uint8_t *pb;
        size_t n;
        CHECK(glow_tensor_to_pb(&a, "x", &pb, &n, &d) == GLOW_OK);
        CHECK(glow_tensor_read_pb(pb, n, &back, NULL, &d) == GLOW_OK);
        CHECK(back.type.dtype == t && back.type.dims[0] == 7);
        CHECK(memcmp(back.data, a.data, 7) == 0);
        if (t == GLOW_I4) {
            /* -3, -2 -> 0xed: the first element in the low nibble. */
            static const uint8_t want[4] = { 0xed, 0x0f, 0x21, 0x03 };
            bool found = false;
            for (size_t i = 0; i + 4 <= n; i++)
                found |= memcmp(pb + i, want, 4) == 0;
            CHECK(found);
        }
        free(pb);
        glow_tensor_free(&a);
        glow_tensor_free(&back);
    }
}

int main(void)
{
    test_patterns();
    test_ties();
    test_specials();
    test_e8m0();
    test_ints();
    test_packing();
    return CHECK_DONE();
}
