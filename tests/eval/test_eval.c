// test_eval.c - The reference evaluator on elementwise nodes and casts, with hand-computed results.
#include "eval_check.h"

static void test_unary(void)
{
    float x[] = { -2, -1, 0, 1, 2.5f };
    glow_node *c = cst(GLOW_F32, 1, DIMS(5), x);
    glow_type t = ty(GLOW_F32, 1, DIMS(5));
    EXPECT(mk1(NK_RELU, c, t), 0, 0, 0, 1, 2.5);
    EXPECT_F(mk1(NK_SIGMOID, c, t), 1e-6, 0.119202922, 0.268941421, 0.5, 0.731058579,
             0.924141820);
    EXPECT_F(mk1(NK_ERF, c, t), 1e-6, -0.995322265, -0.842700793, 0, 0.842700793, 0.999593048);
    glow_node *g = mk1(NK_GELU, c, t);
    glow_node_set_str(g, GA_APPROXIMATE, "none");
    EXPECT_F(g, 1e-6, -0.045500264, -0.158655254, 0, 0.841344746, 2.484475317);
    g = mk1(NK_GELU, c, t);
    glow_node_set_str(g, GA_APPROXIMATE, "tanh");
    EXPECT_F(g, 1e-6, -0.045402306, -0.158808009, 0, 0.841191991, 2.484915734);
    EXPECT_F(mk1(NK_HARD_SWISH, c, t), 1e-6, -0.333333333, -0.333333333, 0, 0.666666667,
             2.291666667);
    g = mk1(NK_SELU, c, t);
    glow_node_set_float(g, GA_ALPHA, 1.67326319217681884765625);
    glow_node_set_float(g, GA_GAMMA, 1.05070102214813232421875);
    EXPECT_F(g, 1e-6, -1.520166468, -1.111330737, 0, 1.050701022, 2.626752555);
    g = mk1(NK_ELU, c, t);
    glow_node_set_float(g, GA_ALPHA, 1.0);
    EXPECT_F(g, 1e-6, -0.864664717, -0.632120559, 0, 1, 2.5);
    g = mk1(NK_CELU, c, t);
    glow_node_set_float(g, GA_ALPHA, 2.0);
    EXPECT_F(g, 1e-6, -1.264241118, -0.786938680, 0, 1, 2.5);
    EXPECT_F(mk1(NK_SOFTPLUS, c, t), 1e-6, 0.126928011, 0.313261687, 0.693147181, 1.313261687,
             2.578889734);
    EXPECT_F(mk1(NK_MISH, c, t), 1e-6, -0.252501483, -0.303401461, 0, 0.865098388,
             2.471392305);
    g = mk1(NK_SHRINK, c, t);
    glow_node_set_float(g, GA_LAMBD, 1.5);
    glow_node_set_float(g, GA_BIAS, 0.5);
    EXPECT(g, -1.5, 0, 0, 0, 2.0);
    g = mk1(NK_CLIP, c, t);
    glow_node_set_float(g, GA_MIN, -1);
    glow_node_set_float(g, GA_MAX, 1.5);
    EXPECT(g, -1, -1, 0, 1, 1.5);
    /* min > max: ONNX computes min(max(x, lo), hi), so every element is max. */
    g = mk1(NK_CLIP, c, t);
    glow_node_set_float(g, GA_MIN, 1);
    glow_node_set_float(g, GA_MAX, -1);
    EXPECT(g, -1, -1, -1, -1, -1);
    EXPECT(mk1(NK_NEG, c, t), 2, 1, 0, -1, -2.5);

    float r[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f };
    glow_node *cr = cst(GLOW_F32, 1, DIMS(7), r);
    EXPECT(mk1(NK_ROUND, cr, ty(GLOW_F32, 1, DIMS(7))), 0, 2, 2, -0.0, -2, 2, -3);

    float sp[] = { INFINITY, -INFINITY, NAN, 1, -3 };
    glow_node *cs = cst(GLOW_F32, 1, DIMS(5), sp);
    glow_type b5 = ty(GLOW_BOOL, 1, DIMS(5));
    g = mk1(NK_ISINF, cs, b5);
    glow_node_set_int(g, GA_DETECT_POS, 1);
    glow_node_set_int(g, GA_DETECT_NEG, 0);
    EXPECT(g, 1, 0, 0, 0, 0);
    EXPECT(mk1(NK_ISNAN, cs, b5), 0, 0, 1, 0, 0);
    EXPECT(mk1(NK_SIGN, cs, t), 1, -1, NAN, 1, -1);

    /* Integer unary ops wrap and never trap. */
    int32_t xi[] = { INT32_MIN, -5, 0, 7 };
    glow_node *ci = cst(GLOW_I32, 1, DIMS(4), xi);
    glow_type ti = ty(GLOW_I32, 1, DIMS(4));
    EXPECT(mk1(NK_ABS, ci, ti), INT32_MIN, 5, 0, 7);
    EXPECT(mk1(NK_NEG, ci, ti), INT32_MIN, 5, 0, -7);
    EXPECT(mk1(NK_SIGN, ci, ti), -1, -1, 0, 1);
    EXPECT(mk1(NK_RELU, ci, ti), 0, 0, 0, 7);
    g = mk1(NK_CLIP, ci, ti);
    glow_node_set_float(g, GA_MIN, -3);
    EXPECT(g, -3, -3, 0, 7);
    g = mk1(NK_CLIP, ci, ti);
    glow_node_set_float(g, GA_MIN, 4);
    glow_node_set_float(g, GA_MAX, 2);
    EXPECT(g, 2, 2, 2, 2);
    uint8_t xu[] = { 0, 1, 200 };
    glow_node *cu = cst(GLOW_U8, 1, DIMS(3), xu);
    EXPECT(mk1(NK_NEG, cu, ty(GLOW_U8, 1, DIMS(3))), 0, 255, 56);
    EXPECT(mk1(NK_BITWISE_NOT, cu, ty(GLOW_U8, 1, DIMS(3))), 255, 254, 55);
    g = mk1(NK_CLIP, cu, ty(GLOW_U8, 1, DIMS(3)));
    glow_node_set_float(g, GA_MIN, 100);
    glow_node_set_float(g, GA_MAX, 50);
    EXPECT(g, 50, 50, 50);
}

static void test_binary(void)
{
    uint8_t ua[] = { 250, 3, 128 }, ub[] = { 10, 5, 2 };
    glow_type tu = ty(GLOW_U8, 1, DIMS(3));
    glow_node *a8 = cst(GLOW_U8, 1, DIMS(3), ua), *b8 = cst(GLOW_U8, 1, DIMS(3), ub);
    EXPECT(mk2(NK_ADD, a8, b8, tu), 4, 8, 130);
    EXPECT(mk2(NK_SUB, a8, b8, tu), 240, 254, 126);
    EXPECT(mk2(NK_MUL, a8, b8, tu), 196, 15, 0);
    EXPECT(mk2(NK_GREATER, a8, b8, ty(GLOW_BOOL, 1, DIMS(3))), 1, 0, 1);

    /* Integer Div truncates toward zero; division by zero gives 0. */
    int32_t ia[] = { -7, 7, -7, 7, 5, INT32_MIN }, ib[] = { 2, -2, -3, 0, 0, -1 };
    glow_type ti = ty(GLOW_I32, 1, DIMS(6));
    glow_node *ca = cst(GLOW_I32, 1, DIMS(6), ia), *cb = cst(GLOW_I32, 1, DIMS(6), ib);
    EXPECT(mk2(NK_DIV, ca, cb, ti), -3, -3, 2, 0, 0, INT32_MIN);
    /* Mod: fmod=0 takes the divisor's sign, fmod=1 the dividend's. */
    glow_node *m = mk2(NK_MOD, ca, cb, ti);
    glow_node_set_int(m, GA_FMOD, 0);
    EXPECT(m, 1, -1, -1, 0, 0, 0);
    m = mk2(NK_MOD, ca, cb, ti);
    glow_node_set_int(m, GA_FMOD, 1);
    EXPECT(m, -1, 1, -1, 0, 0, 0);
    int64_t ma[] = { -7, 7, -7, 7 }, mb[] = { 3, -3, -3, 3 };
    glow_type t64 = ty(GLOW_I64, 1, DIMS(4));
    glow_node *c1 = cst(GLOW_I64, 1, DIMS(4), ma), *c2 = cst(GLOW_I64, 1, DIMS(4), mb);
    m = mk2(NK_MOD, c1, c2, t64);
    glow_node_set_int(m, GA_FMOD, 0);
    EXPECT(m, 2, -2, -1, 1);
    float fa[] = { -7.5f, 7.5f, 1, NAN }, fb[] = { 2, -2, 3, 1 };
    glow_type tf = ty(GLOW_F32, 1, DIMS(4));
    glow_node *f1 = cst(GLOW_F32, 1, DIMS(4), fa), *f2 = cst(GLOW_F32, 1, DIMS(4), fb);
    m = mk2(NK_MOD, f1, f2, tf);
    glow_node_set_int(m, GA_FMOD, 1);
    EXPECT(m, -1.5, 1.5, 1, NAN);
    EXPECT(mk2(NK_MAX, f1, f2, tf), 2, 7.5, 3, NAN);
    EXPECT_F(mk2(NK_DIV, f1, f2, tf), 1e-7, -3.75, -3.75, 1.0 / 3, NAN);
    EXPECT(mk2(NK_PRELU, f1, f2, tf), -15, 7.5, 1, NAN);
    EXPECT(mk2(NK_EQUAL, f1, f1, ty(GLOW_BOOL, 1, DIMS(4))), 1, 1, 1, 0);
    EXPECT(mk2(NK_LESS_EQUAL, f1, f2, ty(GLOW_BOOL, 1, DIMS(4))), 1, 0, 1, 0);

    /* Pow: integer base with integer or float exponent, float base. */
    int64_t pb[] = { 2, 3, -2, 5 }, pe[] = { 10, -1, 3, 0 };
    glow_node *p1 = cst(GLOW_I64, 1, DIMS(4), pb), *p2 = cst(GLOW_I64, 1, DIMS(4), pe);
    EXPECT(mk2(NK_POW, p1, p2, t64), 1024, 0, -8, 1);
    float pf[] = { 0.5f, 2, 1, -1 };
    glow_node *p3 = cst(GLOW_F32, 1, DIMS(4), pf);
    EXPECT_F(mk2(NK_POW, p1, p3, t64), 0, 1, 9, -2, 0);
    EXPECT_F(mk2(NK_POW, f2, p1, tf), 1e-7, 4, -8, 1.0 / 9, 1);

    /* u64 compares as unsigned; i64 as signed. */
    uint64_t u1[] = { UINT64_MAX, 1 }, u2[] = { 1, 2 };
    glow_node *cu1 = cst(GLOW_U64, 1, DIMS(2), u1), *cu2 = cst(GLOW_U64, 1, DIMS(2), u2);
    EXPECT(mk2(NK_GREATER, cu1, cu2, ty(GLOW_BOOL, 1, DIMS(2))), 1, 0);
    glow_node *cs1 = cst(GLOW_I64, 1, DIMS(2), u1), *cs2 = cst(GLOW_I64, 1, DIMS(2), u2);
    EXPECT(mk2(NK_GREATER, cs1, cs2, ty(GLOW_BOOL, 1, DIMS(2))), 0, 0);

    /* BitShift on u8: bits shifted out vanish, shifting by >= 8 gives 0. */
    uint8_t sa[] = { 1, 1, 255, 200 }, sb[] = { 7, 8, 4, 1 };
    glow_type tu4 = ty(GLOW_U8, 1, DIMS(4));
    glow_node *s1 = cst(GLOW_U8, 1, DIMS(4), sa), *s2 = cst(GLOW_U8, 1, DIMS(4), sb);
    glow_node *sh = mk2(NK_BITSHIFT, s1, s2, tu4);
    glow_node_set_str(sh, GA_DIRECTION, "LEFT");
    EXPECT(sh, 128, 0, 240, 144);
    sh = mk2(NK_BITSHIFT, s1, s2, tu4);
    glow_node_set_str(sh, GA_DIRECTION, "RIGHT");
    EXPECT(sh, 0, 0, 15, 100);
    EXPECT(mk2(NK_BITWISE_XOR, s1, s2, tu4), 6, 9, 251, 201);

    /* Logical ops and Where. */
    uint8_t l1[] = { 0, 0, 1, 1 }, l2[] = { 0, 1, 0, 1 };
    glow_type tb = ty(GLOW_BOOL, 1, DIMS(4));
    glow_node *b1 = cst(GLOW_BOOL, 1, DIMS(4), l1), *b2 = cst(GLOW_BOOL, 1, DIMS(4), l2);
    EXPECT(mk2(NK_AND, b1, b2, tb), 0, 0, 0, 1);
    EXPECT(mk2(NK_OR, b1, b2, tb), 0, 1, 1, 1);
    EXPECT(mk2(NK_XOR, b1, b2, tb), 0, 1, 1, 0);
    EXPECT(mk1(NK_NOT, b1, tb), 1, 1, 0, 0);
    glow_node *w[3] = { b2, c1, c2 };
    EXPECT(mk(NK_WHERE, 3, w, 1, &t64), 3, 7, -3, 7);

    /* f16 arithmetic rounds through f32. */
    uint16_t h1[] = { glow_f32_to_f16(1.0f), glow_f32_to_f16(65504.0f) };
    uint16_t h2[] = { glow_f32_to_f16(2.5f), glow_f32_to_f16(65504.0f) };
    glow_node *ch1 = cst(GLOW_F16, 1, DIMS(2), h1), *ch2 = cst(GLOW_F16, 1, DIMS(2), h2);
    EXPECT(mk2(NK_ADD, ch1, ch2, ty(GLOW_F16, 1, DIMS(2))), 3.5, INFINITY);

    /* Mismatched operand shapes fail cleanly. */
    glow_node *bad = mk2(NK_ADD, c1, cst(GLOW_I64, 1, DIMS(3), ma), t64);
    glow_tensor out[1];
    CHECK_EQ(run(bad, out), GLOW_ERR_BAD_SHAPE);
    CHECK_CONTAINS(D.msg, "Add");
}

static void test_cast(void)
{
    float f[] = { 1.9f, -1.9f, NAN, 3e9f, -3e9f, 0.0f, -0.0f, 65520.0f };
    glow_node *c = cst(GLOW_F32, 1, DIMS(8), f);
    EXPECT(mk1(NK_CAST, c, ty(GLOW_I32, 1, DIMS(8))), 1, -1, 0, INT32_MAX, INT32_MIN, 0, 0,
           65520);
    EXPECT(mk1(NK_CAST, c, ty(GLOW_U8, 1, DIMS(8))), 1, 0, 0, 255, 0, 0, 0, 255);
    EXPECT(mk1(NK_CAST, c, ty(GLOW_BOOL, 1, DIMS(8))), 1, 1, 1, 1, 1, 0, 0, 1);
    glow_tensor out[1];
    glow_node *h = mk1(NK_CAST, c, ty(GLOW_F16, 1, DIMS(8)));
    CHECK_EQ(run(h, out), GLOW_OK);
    const uint16_t *hb = out[0].data;
    CHECK_EQ(hb[5], 0x0000);
    CHECK_EQ(hb[6], 0x8000);
    CHECK_EQ(hb[7], 0x7C00); /* 65520 rounds up to infinity in f16 */
    CHECK_EQ(hb[3], 0x7C00);
    CHECK(isnan(F64(&out[0], 2)));
    /* f16 -> f32 and -> i64 */
    glow_node *h2 = cst(GLOW_F16, 1, DIMS(8), out[0].data);
    glow_tensor_free(&out[0]);
    EXPECT(mk1(NK_CAST, h2, ty(GLOW_F32, 1, DIMS(8))), 1.900390625, -1.900390625, NAN,
           INFINITY, -INFINITY, 0, -0.0, INFINITY);
    EXPECT(mk1(NK_CAST, h2, ty(GLOW_I64, 1, DIMS(8))), 1, -1, 0, INT64_MAX, INT64_MIN, 0, 0,
           INT64_MAX);
    int32_t i[] = { 300, -1, 0, 65536 + 7 };
    glow_node *ci = cst(GLOW_I32, 1, DIMS(4), i);
    EXPECT(mk1(NK_CAST, ci, ty(GLOW_U8, 1, DIMS(4))), 44, 255, 0, 7);
    EXPECT(mk1(NK_CAST, ci, ty(GLOW_I16, 1, DIMS(4))), 300, -1, 0, 7);
    EXPECT(mk1(NK_CAST, ci, ty(GLOW_BOOL, 1, DIMS(4))), 1, 1, 0, 1);
    EXPECT(mk1(NK_CAST, ci, ty(GLOW_F64, 1, DIMS(4))), 300, -1, 0, 65543);
    uint8_t b[] = { 1, 0 };
    glow_node *cb = cst(GLOW_BOOL, 1, DIMS(2), b);
    EXPECT(mk1(NK_CAST, cb, ty(GLOW_BF16, 1, DIMS(2))), 1, 0);
    EXPECT(mk1(NK_CAST, cb, ty(GLOW_I64, 1, DIMS(2))), 1, 0);
    uint64_t u[] = { UINT64_MAX };
    glow_node *cu = cst(GLOW_U64, 1, DIMS(1), u);
    EXPECT(mk1(NK_CAST, cu, ty(GLOW_F64, 1, DIMS(1))), 18446744073709551616.0);
    EXPECT(mk1(NK_CAST, cu, ty(GLOW_I64, 1, DIMS(1))), -1);
    double dd[] = { 1e300, 3.14159 };
    glow_node *cd = cst(GLOW_F64, 1, DIMS(2), dd);
    EXPECT(mk1(NK_CAST, cd, ty(GLOW_F32, 1, DIMS(2))), INFINITY, (float)3.14159);
    EXPECT(mk1(NK_CAST, cd, ty(GLOW_BF16, 1, DIMS(2))), INFINITY, 3.140625);
}

/* Quantized kinds without a quantized form (Sigmoid; Add has one: test_eval_quant.c) and
 * kinds without an evaluator are reported, not guessed at. */
static void test_unsupported(void)
{
    glow_type q = ty(GLOW_I8Q, 1, DIMS(2));
    q.scale = 0.5f;
    glow_node *cq = glow_constant_create(M, "q", &q, NULL);
    glow_node *sig = mk1(NK_SIGMOID, cq, q);
    CHECK(!glow_eval_supported(sig));
    glow_tensor out[2];
    CHECK_EQ(run(sig, out), GLOW_ERR_UNSUPPORTED);
    CHECK(glow_eval_supported(mk1(NK_RESHAPE, cq, q)));
    float x[16] = { 0 };
    glow_node *c = cst(GLOW_F32, 4, DIMS(1, 1, 4, 4), x);
    glow_node *conv = mk1(NK_CONV, c, ty(GLOW_I32, 4, DIMS(1, 1, 4, 4)));
    CHECK(!glow_eval_supported(conv)); /* float only */
    CHECK_EQ(run(conv, out), GLOW_ERR_UNSUPPORTED);
    CHECK(glow_eval_supported(mk1(NK_RELU, c, ty(GLOW_F32, 4, DIMS(1, 1, 4, 4)))));
    CHECK(!glow_eval_supported(mk1(NK_SQRT, cst(GLOW_I32, 1, DIMS(1), x),
                                   ty(GLOW_I32, 1, DIMS(1)))));
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_unary();
    test_binary();
    test_cast();
    test_unsupported();
    glow_module_destroy(M);
    return CHECK_DONE();
}
