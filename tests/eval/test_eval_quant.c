// test_eval_quant.c - The integer reference of the quantized nodes (src/eval/eval_quant.c),
// on values worked out by hand from docs/quantization.md: rounding ties to even, saturation,
// zero points, fused activations, per-channel convolution, raw i32 accumulators.
#include <math.h>

#include "eval_check.h"
#include "runtime/runtime.h"

static glow_type qt(glow_dtype t, int rank, const int64_t *dims, float scale, int32_t offset)
{
    glow_type r = glow_type_make(t, rank, dims);
    r.scale = scale;
    r.offset = offset;
    return r;
}

/* A constant of quantized type. */
static glow_node *qcst(glow_type t, const void *data)
{
    char name[32];
    snprintf(name, sizeof name, "q%d", counter++);
    return glow_constant_create(M, name, &t, data);
}

/* Runs n and compares its integers. */
static void expect_q(const glow_node *n, int count, const int64_t *want, int line)
{
    glow_tensor out[2];
    glow_status s = run(n, out);
    if (s != GLOW_OK) {
        fprintf(stderr, "line %d: %s\n", line, D.msg);
        CHECK(s == GLOW_OK);
        return;
    }
    CHECK_EQ(glow_type_numel(&out[0].type), count);
    for (int i = 0; i < count; i++) {
        int64_t got = glow_load_i64(out[0].type.dtype, out[0].data, (size_t)i);
        if (got != want[i])
            fprintf(stderr, "line %d: element %d is %lld, expected %lld\n", line, i,
                    (long long)got, (long long)want[i]);
        CHECK_EQ(got, want[i]);
    }
    glow_tensor_free(&out[0]);
}
#define EXPECT_Q(n, cnt, ...) expect_q(n, cnt, (const int64_t[]){ __VA_ARGS__ }, __LINE__)

static void test_conversions(void)
{
    /* x / 0.5 = -2, 1, 5.2, huge, NaN, -0.5 (tie to -0), 1.5 (tie to 2); offset 10. */
    float x[] = { -1.0f, 0.5f, 2.6f, 1e9f, NAN, -0.25f, 0.75f };
    glow_node *c = cst(GLOW_F32, 1, DIMS(7), x);
    EXPECT_Q(mk1(NK_QUANTIZE, c, qt(GLOW_U8Q, 1, DIMS(7), 0.5f, 10)), 7,
             8, 11, 15, 255, 10, 10, 12);
    EXPECT_Q(mk1(NK_QUANTIZE, c, qt(GLOW_I8Q, 1, DIMS(7), 0.5f, 0)), 7,
             -2, 1, 5, 127, 0, 0, 2);

    uint8_t q[] = { 0, 10, 255 };
    glow_node *u = qcst(qt(GLOW_U8Q, 1, DIMS(3), 0.5f, 10), q);
    expect_f(mk1(NK_DEQUANTIZE, u, ty(GLOW_F32, 1, DIMS(3))), 3,
             (const double[]){ -5, 0, 122.5 }, 0, __LINE__);

    /* i8q (0.1, 0) -> u8q (0.2, 128): the multiplier is 0.5; 63.5 and 2.5 are ties. */
    int8_t r[] = { 10, -128, 127, 5 };
    glow_node *i = qcst(qt(GLOW_I8Q, 1, DIMS(4), 0.1f, 0), r);
    EXPECT_Q(mk1(NK_RESCALE_QUANTIZED, i, qt(GLOW_U8Q, 1, DIMS(4), 0.2f, 128)), 4,
             133, 64, 192, 130);
}

static void test_elementwise(void)
{
    /* a: u8q (0.5, 0) = 2.0, 100.0; b: u8q (0.25, 10) = 5.0, -2.5. */
    uint8_t av[] = { 4, 200 }, bv[] = { 30, 0 };
    glow_node *a = qcst(qt(GLOW_U8Q, 1, DIMS(2), 0.5f, 0), av);
    glow_node *b = qcst(qt(GLOW_U8Q, 1, DIMS(2), 0.25f, 10), bv);
    glow_type y1 = qt(GLOW_U8Q, 1, DIMS(2), 1.0f, 0);
    EXPECT_Q(mk2(NK_ADD, a, b, y1), 2, 7, 98);        /* 97.5 ties to 98 */
    EXPECT_Q(mk2(NK_SUB, a, b, y1), 2, 0, 102);       /* -3 saturates; 102.5 ties to 102 */
    EXPECT_Q(mk2(NK_MUL, a, b, qt(GLOW_U8Q, 1, DIMS(2), 0.5f, 0)), 2, 20, 0);
    EXPECT_Q(mk2(NK_MAX, a, b, y1), 2, 5, 100);
    EXPECT_Q(mk2(NK_MIN, a, b, y1), 2, 2, 0);

    int8_t xv[] = { -50, 30 };
    glow_node *x = qcst(qt(GLOW_I8Q, 1, DIMS(2), 0.1f, 0), xv);
    EXPECT_Q(mk1(NK_RELU, x, qt(GLOW_I8Q, 1, DIMS(2), 0.1f, 0)), 2, 0, 30);
    EXPECT_Q(mk1(NK_RELU, x, qt(GLOW_I8Q, 1, DIMS(2), 0.1f, -10)), 2, -10, 20);

    uint8_t cv[] = { 0, 100, 255 };
    glow_node *cn = qcst(qt(GLOW_U8Q, 1, DIMS(3), 1.0f, 0), cv);
    glow_node *clip = mk1(NK_CLIP, cn, qt(GLOW_U8Q, 1, DIMS(3), 1.0f, 0));
    glow_node_set_float(clip, GA_MIN, 10);
    glow_node_set_float(clip, GA_MAX, 200);
    EXPECT_Q(clip, 3, 10, 100, 200);
}

static void set_window(glow_node *n, int64_t k, int64_t pad)
{
    int64_t kk[2] = { k, k }, s[2] = { 1, 1 }, p[4] = { pad, pad, pad, pad }, dl[2] = { 1, 1 };
    glow_node_set_ints(n, GA_KERNEL, kk, 2);
    glow_node_set_ints(n, GA_STRIDES, s, 2);
    glow_node_set_ints(n, GA_PADS, p, 4);
    glow_node_set_ints(n, GA_DILATIONS, dl, 2);
}

static void test_pools(void)
{
    /* [10, 20; 30, 41] of u8q (0.5, 10): reals 0, 5, 10, 15.5. */
    uint8_t xv[] = { 10, 20, 30, 41 };
    glow_type xt = qt(GLOW_U8Q, 4, DIMS(1, 1, 2, 2), 0.5f, 10);
    glow_node *x = qcst(xt, xv);
    glow_node *mp = mk1(NK_MAX_POOL, x, qt(GLOW_U8Q, 4, DIMS(1, 1, 1, 1), 0.5f, 10));
    set_window(mp, 2, 0);
    EXPECT_Q(mp, 1, 41);
    /* sum(x - 10) = 61; 61 * 0.5 / (0.5 * 4) = 15.25 -> 15, + 10. */
    glow_node *ap = mk1(NK_AVG_POOL, x, qt(GLOW_U8Q, 4, DIMS(1, 1, 1, 1), 0.5f, 10));
    set_window(ap, 2, 0);
    EXPECT_Q(ap, 1, 25);
    /* Padded by 1 with a 2x2 window: the corner sees one tap (x - z = 0) and counts 4 with
     * count_include_pad, 1 without. */
    glow_node *pp = mk1(NK_AVG_POOL, x, qt(GLOW_U8Q, 4, DIMS(1, 1, 3, 3), 0.5f, 10));
    set_window(pp, 2, 1);
    glow_node_set_int(pp, GA_COUNT_INCLUDE_PAD, 1);
    EXPECT_Q(pp, 9, 10, 12, 12, 15, 25, 20, 15, 23, 18);
}

static void test_products(void)
{
    /* x u8q (0.5, 1) [[3, 5]]; w i8q (0.25, 0) [[4], [-8]]; acc = 10 + 2*4 + 4*-8 = -14. */
    uint8_t xv[] = { 3, 5 };
    int8_t wv[] = { 4, -8 };
    int32_t bv[] = { 10 };
    glow_node *x = qcst(qt(GLOW_U8Q, 2, DIMS(1, 2), 0.5f, 1), xv);
    glow_node *w = qcst(qt(GLOW_I8Q, 2, DIMS(2, 1), 0.25f, 0), wv);
    glow_node *b = cst(GLOW_I32, 1, DIMS(1), bv);
    glow_node *ins[3] = { x, w, b };
    glow_type yq = qt(GLOW_I8Q, 2, DIMS(1, 1), 0.125f, 0);
    EXPECT_Q(mk(NK_FULLY_CONNECTED, 3, ins, 1, &yq), 1, -14);
    glow_node *relu = mk(NK_FULLY_CONNECTED, 3, ins, 1, &yq);
    glow_node_set_str(relu, GA_FUSED_ACT, "Relu");
    EXPECT_Q(relu, 1, 0);
    glow_type yi = ty(GLOW_I32, 2, DIMS(1, 1));
    EXPECT_Q(mk(NK_FULLY_CONNECTED, 3, ins, 1, &yi), 1, -14);
    EXPECT_Q(mk(NK_MATMUL, 2, ins, 1, &yi), 1, -24);
}

static void test_qconv(void)
{
    /* x u8q (1, 2) = 0..8 (reals -2..6); w i8 [1, 2; 3, 4] with offset 1 -> [0, 1; 2, 3];
     * bias 5; scale 0.5 into u8q (1, 0): acc 12, 18, 30, 36 -> 6, 9, 15, 18. */
    uint8_t xv[9];
    for (int i = 0; i < 9; i++)
        xv[i] = (uint8_t)i;
    int8_t wv[] = { 1, 2, 3, 4 };
    int32_t bv[] = { 5 }, ov[] = { 1 };
    float sv[] = { 0.5f };
    glow_node *ins[5] = { qcst(qt(GLOW_U8Q, 4, DIMS(1, 1, 3, 3), 1.0f, 2), xv),
                          cst(GLOW_I8, 4, DIMS(1, 1, 2, 2), wv), cst(GLOW_I32, 1, DIMS(1), bv),
                          cst(GLOW_F32, 1, DIMS(1), sv), cst(GLOW_I32, 1, DIMS(1), ov) };
    glow_type y = qt(GLOW_U8Q, 4, DIMS(1, 1, 2, 2), 1.0f, 0);
    glow_node *c = mk(NK_CHANNELWISE_QCONV, 5, ins, 1, &y);
    set_window(c, 2, 0);
    glow_node_set_int(c, GA_GROUP, 1);
    EXPECT_Q(c, 4, 6, 9, 15, 18);
    glow_type yi = ty(GLOW_I32, 4, DIMS(1, 1, 2, 2));
    glow_node *raw = mk(NK_CHANNELWISE_QCONV, 5, ins, 1, &yi);
    set_window(raw, 2, 0);
    glow_node_set_int(raw, GA_GROUP, 1);
    EXPECT_Q(raw, 4, 12, 18, 30, 36);
    /* Types the node does not have: a float input is refused, naming the node. */
    glow_node *bad_ins[5] = { cst(GLOW_F32, 4, DIMS(1, 1, 3, 3), NULL), ins[1], ins[2], ins[3],
                              ins[4] };
    glow_node *bad = mk(NK_CHANNELWISE_QCONV, 5, bad_ins, 1, &y);
    set_window(bad, 2, 0);
    glow_tensor out[1];
    CHECK(run(bad, out) == GLOW_ERR_UNSUPPORTED);
    CHECK(strstr(D.msg, "ChannelwiseQuantizedConv") != NULL);
}

static void test_infer(void)
{
    /* Quantize needs a declared quantized result; glow_build refuses it otherwise. */
    glow_node *c = cst(GLOW_F32, 1, DIMS(2), NULL);
    glow_value v = glow_val(c, 0);
    glow_diag_clear(&D);
    CHECK(glow_build(F, NK_QUANTIZE, "q", &v, 1, NULL, 0, NULL, 0, &D) == NULL);
    CHECK(strstr(D.msg, "declared") != NULL);
    glow_type bad = qt(GLOW_U8Q, 1, DIMS(2), 0.0f, 0);
    CHECK(glow_build(F, NK_QUANTIZE, "q", &v, 1, NULL, 0, &bad, 1, &D) == NULL);
    glow_type good = qt(GLOW_U8Q, 1, DIMS(2), 0.5f, 3);
    glow_node *q = glow_build(F, NK_QUANTIZE, "q", &v, 1, NULL, 0, &good, 1, &D);
    CHECK(q != NULL && q->outs[0].dtype == GLOW_U8Q && q->outs[0].offset == 3);
    glow_type f = ty(GLOW_F32, 1, DIMS(2));
    glow_value qv = glow_val(q, 0);
    glow_node *dq = glow_build(F, NK_DEQUANTIZE, "dq", &qv, 1, NULL, 0, &f, 1, &D);
    CHECK(dq != NULL && dq->outs[0].dtype == GLOW_F32);
}

/* A compiled program: u8 input -> Reinterpret as u8q (0.5, 10) -> Add with itself into u8q
 * (1, 0) -> Relu -> Dequantize -> f32 output, on the interpreter and on the cpu backend
 * (which runs what it has no kernel for through the evaluator): the same numbers. */
static void test_program(const char *backend)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_type it = glow_type_make(GLOW_U8, 1, DIMS(4));
    glow_value x = glow_val(glow_placeholder_create(m, "x", &it, true), 0);
    glow_type q = qt(GLOW_U8Q, 1, DIMS(4), 0.5f, 10), s = qt(GLOW_U8Q, 1, DIMS(4), 1.0f, 0);
    glow_diag_clear(&D);
    glow_node *r = glow_build(f, NK_REINTERPRET, "view", &x, 1, NULL, 0, &q, 1, &D);
    glow_value rv[2] = { glow_val(r, 0), glow_val(r, 0) };
    glow_node *add = glow_build(f, NK_ADD, "add", rv, 2, NULL, 0, &s, 1, &D);
    glow_value av = glow_val(add, 0);
    glow_node *relu = glow_build(f, NK_RELU, "relu", &av, 1, NULL, 0, &s, 1, &D);
    glow_type ft = glow_type_make(GLOW_F32, 1, DIMS(4));
    glow_value lv = glow_val(relu, 0);
    glow_node *dq = glow_build(f, NK_DEQUANTIZE, "dq", &lv, 1, NULL, 0, &ft, 1, &D);
    CHECK(dq != NULL);
    glow_node *ph = glow_placeholder_create(m, "y", &ft, false);
    glow_save_create(f, "y", glow_val(dq, 0), ph);
    glow_compile_options o = { .backend = backend, .threads = 1,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    uint8_t in[4] = { 0, 10, 13, 255 };
    glow_tensor t = { .type = it, .data = in };
    if (glow_program_create(m, &o, &p, &D) != GLOW_OK || glow_program_run(p, &t, 1, &D)) {
        fprintf(stderr, "%s: %s\n", backend, D.msg);
        CHECK(false);
        glow_program_destroy(p);
        return;
    }
    /* Reals -5, 0, 1.5, 122.5; doubled: -10 (saturates to 0), 0, 3, 245. */
    glow_tensor out = glow_program_output(p, 0);
    const float want[4] = { 0, 0, 3, 245 };
    for (int i = 0; i < 4; i++)
        CHECK_EQ(((const float *)out.data)[i], want[i]);
    glow_program_destroy(p);
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_conversions();
    test_elementwise();
    test_pools();
    test_products();
    test_qconv();
    test_infer();
    glow_module_destroy(M);
    test_program("interpreter");
    test_program("cpu");
    return CHECK_DONE();
}
