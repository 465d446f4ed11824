// test_eval_reduce.c - The reference evaluator on reductions, TopK, scans, softmax and MatMul.
#include "eval_check.h"

static glow_node *reduce(glow_node_kind k, glow_node *x, const int64_t *axes, int naxes,
                         int keep, glow_type out)
{
    glow_node *n = mk1(k, x, out);
    glow_node_set_ints(n, GA_AXES, axes, naxes);
    glow_node_set_int(n, GA_KEEPDIMS, keep);
    return n;
}

static void test_reduce(void)
{
    float x[6] = { 1, -2, 3, 4, 5, -6 };
    glow_node *c = cst(GLOW_F32, 2, DIMS(2, 3), x);
    glow_type t2 = ty(GLOW_F32, 1, DIMS(2)), t3k = ty(GLOW_F32, 2, DIMS(1, 3));
    EXPECT(reduce(NK_REDUCE_SUM, c, DIMS(1), 1, 0, t2), 2, 3);
    EXPECT(reduce(NK_REDUCE_SUM, c, DIMS(0), 1, 1, t3k), 5, 3, -3);
    EXPECT_F(reduce(NK_REDUCE_MEAN, c, DIMS(1), 1, 0, t2), 1e-6, 2.0 / 3, 1);
    EXPECT(reduce(NK_REDUCE_MAX, c, DIMS(1), 1, 0, t2), 3, 5);
    EXPECT(reduce(NK_REDUCE_MIN, c, DIMS(0), 1, 1, t3k), 1, -2, -6);
    EXPECT(reduce(NK_REDUCE_PROD, c, DIMS(1), 1, 0, t2), -6, -120);
    EXPECT(reduce(NK_REDUCE_L1, c, DIMS(1), 1, 0, t2), 6, 15);
    EXPECT_F(reduce(NK_REDUCE_L2, c, DIMS(1), 1, 0, t2), 1e-6, 3.741657387, 8.774964387);
    EXPECT(reduce(NK_REDUCE_SUM_SQUARE, c, DIMS(1), 1, 0, t2), 14, 77);
    EXPECT_F(reduce(NK_REDUCE_LOG_SUM, c, DIMS(0), 1, 1, t3k), 1e-6, 1.609437912, 1.098612289,
             NAN);
    EXPECT_F(reduce(NK_REDUCE_LOG_SUM_EXP, c, DIMS(1), 1, 0, t2), 1e-5, 3.132845234, 5.313273897);
    /* All axes, keepdims 0: a scalar. */
    EXPECT(reduce(NK_REDUCE_SUM, c, DIMS(0, 1), 2, 0, ty(GLOW_F32, 0, NULL)), 5);
    /* No axes: each element reduces alone. */
    EXPECT(reduce(NK_REDUCE_SUM_SQUARE, c, NULL, 0, 1, ty(GLOW_F32, 2, DIMS(2, 3))), 1, 4, 9,
           16, 25, 36);
    /* Large LogSumExp does not overflow. */
    glow_node *big = cst(GLOW_F32, 1, DIMS(2), (float[]){ 1000, 1000 });
    EXPECT_F(reduce(NK_REDUCE_LOG_SUM_EXP, big, DIMS(0), 1, 0, ty(GLOW_F32, 0, NULL)), 1e-3,
             1000.693147);

    /* Integer reductions: i64 shape arithmetic and u8 wraparound. */
    glow_node *shape = cst(GLOW_I64, 1, DIMS(4), (int64_t[]){ 2, 3, 4, 5 });
    EXPECT(reduce(NK_REDUCE_PROD, shape, DIMS(0), 1, 0, ty(GLOW_I64, 0, NULL)), 120);
    EXPECT(reduce(NK_REDUCE_MEAN, shape, DIMS(0), 1, 1, ty(GLOW_I64, 1, DIMS(1))), 3);
    glow_node *u = cst(GLOW_U8, 1, DIMS(3), (uint8_t[]){ 200, 100, 250 });
    EXPECT(reduce(NK_REDUCE_SUM, u, DIMS(0), 1, 0, ty(GLOW_U8, 0, NULL)), 38);
    EXPECT(reduce(NK_REDUCE_MAX, u, DIMS(0), 1, 0, ty(GLOW_U8, 0, NULL)), 250);
    glow_node *s8 = cst(GLOW_I8, 1, DIMS(3), (int8_t[]){ -100, 5, -7 });
    EXPECT(reduce(NK_REDUCE_MIN, s8, DIMS(0), 1, 0, ty(GLOW_I8, 0, NULL)), -100);
    EXPECT(reduce(NK_REDUCE_L1, s8, DIMS(0), 1, 0, ty(GLOW_I8, 0, NULL)), 112);
    /* Bad axis. */
    glow_tensor out[2];
    CHECK_EQ(run(reduce(NK_REDUCE_SUM, c, DIMS(2), 1, 0, t2), out), GLOW_ERR_BAD_ATTR);
}

static void test_arg_topk(void)
{
    glow_node *c = cst(GLOW_F32, 2, DIMS(2, 4), (float[]){ 3, 1, 3, 2, 0, 5, 5, -1 });
    glow_type ti = ty(GLOW_I64, 1, DIMS(2));
    glow_node *a = mk1(NK_ARG_MAX, c, ti);
    glow_node_set_int(a, GA_AXIS, 1);
    glow_node_set_int(a, GA_KEEPDIMS, 0);
    EXPECT(a, 0, 1);
    a = mk1(NK_ARG_MAX, c, ti);
    glow_node_set_int(a, GA_AXIS, 1);
    glow_node_set_int(a, GA_KEEPDIMS, 0);
    glow_node_set_int(a, GA_SELECT_LAST, 1);
    EXPECT(a, 2, 2);
    a = mk1(NK_ARG_MIN, c, ty(GLOW_I64, 2, DIMS(1, 4)));
    glow_node_set_int(a, GA_AXIS, 0);
    glow_node_set_int(a, GA_KEEPDIMS, 1);
    EXPECT(a, 1, 0, 0, 1);

    /* TopK: ties keep the lower index first. */
    glow_type tv[2] = { ty(GLOW_F32, 2, DIMS(2, 2)), ty(GLOW_I64, 2, DIMS(2, 2)) };
    glow_node *k = mk(NK_TOPK, 1, &c, 2, tv);
    glow_node_set_int(k, GA_AXIS, 1);
    glow_node_set_int(k, GA_K, 2);
    glow_node_set_int(k, GA_LARGEST, 1);
    glow_node_set_int(k, GA_SORTED, 1);
    glow_tensor out[2];
    CHECK_EQ(run(k, out), GLOW_OK);
    const double wv[] = { 3, 3, 5, 5 };
    const int64_t wi[] = { 0, 2, 1, 2 };
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(F64(&out[0], (size_t)i), wv[i]);
        CHECK_EQ(I64(&out[1], (size_t)i), wi[i]);
    }
    glow_tensor_free(&out[0]);
    glow_tensor_free(&out[1]);
    k = mk(NK_TOPK, 1, &c, 2, tv);
    glow_node_set_int(k, GA_AXIS, 1);
    glow_node_set_int(k, GA_K, 2);
    glow_node_set_int(k, GA_LARGEST, 0);
    CHECK_EQ(run(k, out), GLOW_OK);
    const double sv[] = { 1, 2, -1, 0 };
    const int64_t si[] = { 1, 3, 3, 0 };
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(F64(&out[0], (size_t)i), sv[i]);
        CHECK_EQ(I64(&out[1], (size_t)i), si[i]);
    }
    glow_tensor_free(&out[0]);
    glow_tensor_free(&out[1]);
    /* Along axis 0 on i32, values only; many equal keys stay in index order. */
    glow_node *ci = cst(GLOW_I32, 2, DIMS(5, 1), (int32_t[]){ 7, 7, 9, 7, 7 });
    glow_type tk[2] = { ty(GLOW_I32, 2, DIMS(4, 1)), ty(GLOW_I64, 2, DIMS(4, 1)) };
    k = mk(NK_TOPK, 1, &ci, 2, tk);
    glow_node_set_int(k, GA_AXIS, 0);
    glow_node_set_int(k, GA_K, 4);
    CHECK_EQ(run(k, out), GLOW_OK);
    const int64_t ci_v[] = { 9, 7, 7, 7 }, ci_i[] = { 2, 0, 1, 3 };
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(I64(&out[0], (size_t)i), ci_v[i]);
        CHECK_EQ(I64(&out[1], (size_t)i), ci_i[i]);
    }
    glow_tensor_free(&out[0]);
    glow_tensor_free(&out[1]);
    k = mk(NK_TOPK, 1, &ci, 1, tk);
    glow_node_set_int(k, GA_AXIS, 0);
    glow_node_set_int(k, GA_K, 9);
    CHECK_EQ(run(k, out), GLOW_ERR_BAD_ATTR);
}

static void test_scan(void)
{
    glow_node *c = cst(GLOW_I64, 1, DIMS(3), (int64_t[]){ 1, 2, 3 });
    glow_type t = ty(GLOW_I64, 1, DIMS(3));
    const double want[4][3] = { { 1, 3, 6 }, { 0, 1, 3 }, { 6, 5, 3 }, { 5, 3, 0 } };
    for (int m = 0; m < 4; m++) {
        glow_node *n = mk1(NK_CUMSUM, c, t);
        glow_node_set_int(n, GA_AXIS, 0);
        glow_node_set_int(n, GA_EXCLUSIVE, m & 1);
        glow_node_set_int(n, GA_REVERSE, m >> 1);
        expect_f(n, 3, want[m], 0, __LINE__);
    }
    glow_node *p = mk1(NK_CUMPROD, c, t);
    glow_node_set_int(p, GA_AXIS, -1);
    EXPECT(p, 1, 2, 6);
    glow_node *f = cst(GLOW_F32, 2, DIMS(2, 2), (float[]){ 1, 2, 3, 4 });
    glow_node *n = mk1(NK_CUMSUM, f, ty(GLOW_F32, 2, DIMS(2, 2)));
    glow_node_set_int(n, GA_AXIS, 0);
    EXPECT(n, 1, 2, 4, 6);
}

static void test_softmax_matmul(void)
{
    glow_node *c = cst(GLOW_F32, 2, DIMS(2, 3), (float[]){ 1, 2, 3, 1, 3, 3 });
    glow_type t = ty(GLOW_F32, 2, DIMS(2, 3));
    glow_node *s = mk1(NK_SOFTMAX, c, t);
    glow_node_set_int(s, GA_AXIS, 1);
    EXPECT_F(s, 1e-6, 0.090030573, 0.244728471, 0.665240956, 0.06337894, 0.46831053,
             0.46831053);
    s = mk1(NK_LOG_SOFTMAX, c, t);
    glow_node_set_int(s, GA_AXIS, -1);
    EXPECT_F(s, 1e-6, -2.407605964, -1.407605964, -0.407605964, -2.758623676, -0.758623676,
             -0.758623676);
    s = mk1(NK_HARDMAX, c, t);
    glow_node_set_int(s, GA_AXIS, 1);
    EXPECT(s, 0, 0, 1, 0, 1, 0);
    s = mk1(NK_SOFTMAX, c, t);
    glow_node_set_int(s, GA_AXIS, 0);
    EXPECT_F(s, 1e-6, 0.5, 0.268941421, 0.5, 0.5, 0.731058579, 0.5);

    glow_node *a = cst(GLOW_F32, 2, DIMS(2, 3), (float[]){ 1, 2, 3, 4, 5, 6 });
    glow_node *b = cst(GLOW_F32, 2, DIMS(3, 2), (float[]){ 7, 8, 9, 10, 11, 12 });
    EXPECT(mk2(NK_MATMUL, a, b, ty(GLOW_F32, 2, DIMS(2, 2))), 58, 64, 139, 154);
    glow_node *ia = cst(GLOW_I64, 3, DIMS(2, 1, 2), (int64_t[]){ 1, 2, 3, 4 });
    glow_node *ib = cst(GLOW_I64, 3, DIMS(2, 2, 1), (int64_t[]){ 5, 6, 7, 8 });
    EXPECT(mk2(NK_MATMUL, ia, ib, ty(GLOW_I64, 3, DIMS(2, 1, 1))), 17, 53);
    glow_tensor out[1];
    CHECK_EQ(run(mk2(NK_MATMUL, a, a, ty(GLOW_F32, 2, DIMS(2, 3))), out), GLOW_ERR_BAD_SHAPE);
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_reduce();
    test_arg_topk();
    test_scan();
    test_softmax_matmul();
    glow_module_destroy(M);
    return CHECK_DONE();
}
