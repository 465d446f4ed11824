// test_cpu_lstm.c - What makes an unrolled LSTM fast on the cpu backend: the vectorizable
// Sigmoid and Tanh of kernels/scalar_math.h (within a few ulp of the double-precision functions
// over the whole f32 range, NaN, infinities and -0 as the library's), the recurrent steps of an
// LSTM layer (a [1, H] x [H, 4H] packed GEMM, the gate Sigmoids and Tanhs, the cell update)
// against the interpreter with 1 and 2 threads, and the schedule: such a program (its input
// projection GEMM big enough to share, the steps' GEMMs not) runs on thread 0 alone without a
// barrier, while a program whose shared GEMM outweighs its serial steps keeps its threads.
#include "cpu/cpu_diff.h"
#include "scalar_math.h"

/* |got - want| in units of the last place of want (as a float); 0 when both are the same
 * NaN or infinity. */
static double ulps(float got, double want)
{
    if (want != want)
        return got != got ? 0 : INFINITY;
    if (isinf(want) || isinf(got))
        return got == want ? 0 : INFINITY;
    double unit = fabs(want) < 1.17549435e-38 ? 1.40129846e-45 : ldexp(1.0, ilogb(want) - 23);
    return fabs(got - want) / unit;
}

/* The worst errors seen so far: e^x, tanh, sigmoid. */
static double worst[3];

static void check_point(float x)
{
    double e[3] = { 0, ulps(gk_tanh_f32(x), tanh((double)x)), 0 };
    if (x > -87.0f && x < 88.0f)
        e[0] = ulps(gk_exp_vec_f32(x), exp((double)x));
    /* Below -88.37 the sigmoid is subnormal and comes out as 0. */
    if (!(x < -88.0f))
        e[2] = ulps(gk_sigmoid_f32(x), 1 / (1 + exp(-(double)x)));
    for (int i = 0; i < 3; i++)
        worst[i] = e[i] > worst[i] ? e[i] : worst[i];
}

/* Every 4099th f32 bit pattern (both signs, all exponents) and the edges of the formulas. */
static void test_math(void)
{
    static const float edges[] = { 0.0f, -0.0f, 0.625f, -0.625f, 0.62499994f, 88.3762589f,
                                   88.37627f, -87.3365479f, -87.33656f, 1e-30f, -1e-30f,
                                   9.0f, -9.0f, 44.0f, 1e-3f };
    for (uint64_t b = 0; b < ((uint64_t)1 << 32); b += 4099) {
        uint32_t u = (uint32_t)b;
        float x;
        memcpy(&x, &u, sizeof x);
        check_point(x);
    }
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_point(edges[i]);
    CHECK(worst[0] <= 2);
    CHECK(worst[1] <= 2);
    CHECK(worst[2] <= 3);
    CHECK(gk_sigmoid_f32(-100.0f) == 0.0f && gk_sigmoid_f32(100.0f) == 1.0f);
    CHECK(gk_sigmoid_f32(INFINITY) == 1.0f && gk_sigmoid_f32(-INFINITY) == 0.0f);
    CHECK(gk_tanh_f32(INFINITY) == 1.0f && gk_tanh_f32(-INFINITY) == -1.0f);
    CHECK(gk_tanh_f32(-0.0f) == 0.0f && signbit(gk_tanh_f32(-0.0f)));
    CHECK(gk_tanh_f32(NAN) != gk_tanh_f32(NAN) && gk_sigmoid_f32(NAN) != gk_sigmoid_f32(NAN));
}

/* --- the recurrent steps of one LSTM layer, as the ONNX importer unrolls them --- */

enum { H = 128, T = 5, I = 40 };

/* A [rows, cols] f32 constant in [-scale, scale]. */
static glow_value scaled_cst(int64_t rows, int64_t cols, float scale)
{
    static int count;
    char name[32];
    snprintf(name, sizeof name, "r%d", count++);
    glow_type ty = glow_type_make(GLOW_F32, 2, DIMS(rows, cols));
    float *data = rand_data(rows * cols);
    for (int64_t i = 0; i < rows * cols; i++)
        data[i] *= scale / 2;
    glow_value v = glow_val(glow_constant_create(M, name, &ty, data), 0);
    free(data);
    return v;
}

/* Rows [r0, r1) and columns [c0, c1) of the 2-D value x. */
static glow_value rows_cols(glow_value x, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    static const int64_t one[2] = { 1, 1 };
    int64_t st[2] = { r0, c0 }, en[2] = { r1, c1 };
    glow_attr a[] = { GLOW_AINTS(STARTS, st, 2), GLOW_AINTS(ENDS, en, 2),
                      GLOW_AINTS(STEPS, one, 2) };
    return node(NK_SLICE, &x, 1, a, 3);
}

/* Columns [from, to) of the [rows, n] value x. */
static glow_value cols(glow_value x, int64_t rows, int64_t from, int64_t to)
{
    return rows_cols(x, 0, rows, from, to);
}

static glow_value bin(glow_node_kind k, glow_value a, glow_value b)
{
    return node(k, (glow_value[]){ a, b }, 2, NULL, 0);
}

static glow_value un(glow_node_kind k, glow_value a) { return node(k, &a, 1, NULL, 0); }

/* The input projections x = in W ([T, I] x [I, 4H], one GEMM the threads would share), then
 * T steps of gates = h R + x_t, i, o, f = Sigmoid, g = Tanh of the four quarters,
 * c = f c + i g, h = o Tanh(c); the output is the last h. */
static void case_lstm(void)
{
    glow_value in = input("in", 2, DIMS(T, I)), h = input("h0", 2, DIMS(1, H));
    glow_value c = input("c0", 2, DIMS(1, H)), r = scaled_cst(H, 4 * H, 0.2f);
    glow_value x = bin(NK_MATMUL, in, scaled_cst(I, 4 * H, 0.3f));
    for (int t = 0; t < T; t++) {
        glow_value g = bin(NK_ADD, bin(NK_MATMUL, h, r), rows_cols(x, t, t + 1, 0, 4 * H));
        glow_value i = un(NK_SIGMOID, cols(g, 1, 0, H)), o = un(NK_SIGMOID, cols(g, 1, H, 2 * H));
        glow_value f = un(NK_SIGMOID, cols(g, 1, 2 * H, 3 * H));
        glow_value z = un(NK_TANH, cols(g, 1, 3 * H, 4 * H));
        c = bin(NK_ADD, bin(NK_MUL, f, c), bin(NK_MUL, i, z));
        h = bin(NK_MUL, o, un(NK_TANH, c));
    }
    output(h);
}

/* A [32, 128] x [128, 512] GEMM (2M multiply-adds) and a Tanh of its result: work worth
 * sharing, and nothing serial to outweigh it. */
static void case_wide_gemm(void)
{
    glow_value a = input("a", 2, DIMS(32, H));
    output(un(NK_TANH, bin(NK_MATMUL, a, scaled_cst(H, 4 * H, 0.2f))));
}

int main(void)
{
    test_math();
    set_trials();
    for (int t = 0; t < trials; t++) {
        diff("LSTM steps", case_lstm, 100 + (uint64_t)t, 1e-5, true);
        CHECK(plan_serial);
        CHECK_EQ(barriers, 0);
        CHECK(chains > 0);
        diff("shared GEMM", case_wide_gemm, 200 + (uint64_t)t, 1e-5, true);
        CHECK(!plan_serial);
        CHECK(barriers > 0);
    }
    free_inputs();
    return CHECK_DONE();
}
