// test_interp.c - The interpreter backend through the whole pipeline (lower, schedule, IRGen,
// plan, run) on small graphs with hand-computed results.
#include "check.h"
#include "runtime/runtime.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define NV(...) (sizeof((double[]){ __VA_ARGS__ }) / sizeof(double))

static void begin(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
}

static glow_value input(const char *name, glow_dtype t, int rank, const int64_t *dims)
{
    glow_type ty = glow_type_make(t, rank, dims);
    return glow_val(glow_placeholder_create(M, name, &ty, true), 0);
}

static glow_value cst(glow_dtype t, int rank, const int64_t *dims, const void *data)
{
    static int count;
    char name[32];
    snprintf(name, sizeof name, "w%d", count++);
    glow_type ty = glow_type_make(t, rank, dims);
    return glow_val(glow_constant_create(M, name, &ty, data), 0);
}

static glow_value node(glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                       int nattr, const glow_type *declared, int ndeclared)
{
    glow_diag_clear(&D);
    glow_node *n = glow_build(F, k, glow_node_kind_name(k), ins, nin, attrs, nattr, declared,
                              ndeclared, &D);
    if (!n) {
        fprintf(stderr, "build %s: %s\n", glow_node_kind_name(k), D.msg);
        exit(1);
    }
    return glow_val(n, 0);
}

static void output(const char *name, glow_value v)
{
    glow_node *ph = glow_placeholder_create(M, name, glow_value_type(v), false);
    glow_save_create(F, name, v, ph);
}

/* Compiles M (consumed) and runs it on the given inputs. */
static glow_program *run(const glow_tensor *ins, int nin)
{
    glow_program *p = NULL;
    glow_diag_clear(&D);
    if (glow_program_create(M, NULL, &p, &D) != GLOW_OK) {
        fprintf(stderr, "compile: %s\n", D.msg);
        CHECK(false);
        return NULL;
    }
    if (glow_program_run(p, ins, nin, &D) != GLOW_OK) {
        fprintf(stderr, "run: %s\n", D.msg);
        CHECK(false);
        glow_program_destroy(p);
        return NULL;
    }
    return p;
}

static void expect_out(glow_program *p, int i, const double *want, size_t n, double tol,
                       int line)
{
    if (!p)
        return;
    glow_tensor t = glow_program_output(p, i);
    CHECK_EQ(glow_type_numel(&t.type), (long long)n);
    for (size_t k = 0; k < n && k < (size_t)glow_type_numel(&t.type); k++) {
        double got = glow_load_f64(t.type.dtype, t.data, k);
        if (!(fabs(got - want[k]) <= tol)) {
            fprintf(stderr, "line %d: output %d element %zu is %.9g, expected %.9g\n", line, i,
                    k, got, want[k]);
            CHECK(false);
        }
    }
}
#define EXPECT_OUT(p, i, tol, ...) \
    expect_out((p), (i), (const double[]){ __VA_ARGS__ }, NV(__VA_ARGS__), (tol), __LINE__)

static glow_tensor f32_tensor(int rank, const int64_t *dims, const float *data)
{
    glow_type t = glow_type_make(GLOW_F32, rank, dims);
    return glow_tensor_borrow(&t, (void *)data);
}

#define WIN(k, s, p, dl) \
    GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2), GLOW_AINTS(PADS, p, 4), \
        GLOW_AINTS(DILATIONS, dl, 2)

static const int64_t ONE2[2] = { 1, 1 }, TWO2[2] = { 2, 2 }, ZERO4[4] = { 0 };

static void test_conv_padded_strided(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 1, 3, 3));
    static const float w1[4] = { 1, 1, 1, 1 };
    static const int64_t pads[4] = { 1, 1, 1, 1 };
    glow_value ins[2] = { x, cst(GLOW_F32, 4, DIMS(1, 1, 2, 2), w1) };
    glow_attr a[] = { WIN(TWO2, TWO2, pads, ONE2), GLOW_AI(GROUP, 1) };
    output("y", node(NK_CONV, ins, 2, a, 5, NULL, 0));
    static const float xv[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    glow_tensor in = f32_tensor(4, DIMS(1, 1, 3, 3), xv);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 1e-6, 1, 5, 11, 28);
    glow_program_destroy(p);
}

static void test_conv_grouped_bias(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 2, 2, 2));
    static const float w[2] = { 2, 3 }, b[2] = { 10, 20 };
    glow_value ins[3] = { x, cst(GLOW_F32, 4, DIMS(2, 1, 1, 1), w),
                          cst(GLOW_F32, 1, DIMS(2), b) };
    glow_attr a[] = { WIN(ONE2, ONE2, ZERO4, ONE2), GLOW_AI(GROUP, 2) };
    output("y", node(NK_CONV, ins, 3, a, 5, NULL, 0));
    static const float xv[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    glow_tensor in = f32_tensor(4, DIMS(1, 2, 2, 2), xv);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 1e-6, 12, 14, 16, 18, 35, 38, 41, 44);
    glow_program_destroy(p);
}

static void test_conv_dilated(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 1, 5, 5));
    static const float w1[4] = { 1, 1, 1, 1 };
    glow_value ins[2] = { x, cst(GLOW_F32, 4, DIMS(1, 1, 2, 2), w1) };
    glow_attr a[] = { WIN(TWO2, ONE2, ZERO4, TWO2), GLOW_AI(GROUP, 1) };
    output("y", node(NK_CONV, ins, 2, a, 5, NULL, 0));
    float xv[25];
    for (int i = 0; i < 25; i++)
        xv[i] = (float)i;
    glow_tensor in = f32_tensor(4, DIMS(1, 1, 5, 5), xv);
    glow_program *p = run(&in, 1);
    /* x[i][j] + x[i][j+2] + x[i+2][j] + x[i+2][j+2] = 20i + 4j + 24 */
    EXPECT_OUT(p, 0, 1e-6, 24, 28, 32, 44, 48, 52, 64, 68, 72);
    glow_program_destroy(p);
}

static void test_pools(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 1, 2, 2));
    static const int64_t k3[2] = { 3, 3 }, p1[4] = { 1, 1, 1, 1 };
    glow_attr a0[] = { WIN(k3, ONE2, p1, ONE2), GLOW_AI(COUNT_INCLUDE_PAD, 0) };
    glow_attr a1[] = { WIN(k3, ONE2, p1, ONE2), GLOW_AI(COUNT_INCLUDE_PAD, 1) };
    output("avg", node(NK_AVG_POOL, &x, 1, a0, 5, NULL, 0));
    output("avg_cip", node(NK_AVG_POOL, &x, 1, a1, 5, NULL, 0));
    static const float xv[4] = { 1, 2, 3, 4 };
    glow_tensor in = f32_tensor(4, DIMS(1, 1, 2, 2), xv);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 1e-6, 2.5, 2.5, 2.5, 2.5);
    EXPECT_OUT(p, 1, 1e-6, 10.0 / 9, 10.0 / 9, 10.0 / 9, 10.0 / 9);
    glow_program_destroy(p);
}

static void test_max_pool_indices(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 2, 2, 3));
    glow_attr a[] = { WIN(TWO2, ONE2, ZERO4, ONE2) };
    glow_value y = node(NK_MAX_POOL, &x, 1, a, 4, NULL, 2);
    output("y", y);
    output("idx", glow_val(y.node, 1));
    static const float xv[12] = { 1, 9, 2, 3, 4, 8, /* channel 1: */ 7, 1, 1, 1, 1, 6 };
    glow_tensor in = f32_tensor(4, DIMS(1, 2, 2, 3), xv);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 0, 9, 9, 7, 6);
    /* Flattened NCHW indices: channel 1 starts at 6. */
    EXPECT_OUT(p, 1, 0, 1, 1, 6, 11);
    if (p)
        CHECK_EQ(glow_program_output(p, 1).type.dtype, GLOW_I64);
    glow_program_destroy(p);
}

static void test_matmul_batched(void)
{
    begin();
    glow_value a = input("a", GLOW_F32, 3, DIMS(2, 2, 3));
    static const float bv[12] = { 1, 0, 0, 1, 1, 1, /* batch 1 */ 2, 0, 0, 2, 0, 0 };
    glow_value ins[2] = { a, cst(GLOW_F32, 3, DIMS(2, 3, 2), bv) };
    output("y", node(NK_MATMUL, ins, 2, NULL, 0, NULL, 0));
    static const float av[12] = { 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6 };
    glow_tensor in = f32_tensor(3, DIMS(2, 2, 3), av);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 1e-6, 4, 5, 10, 11, 2, 4, 8, 10);
    glow_program_destroy(p);
}

static glow_value resize(glow_value x, const char *mode, const char *coord, const char *nearest)
{
    static const float sc[4] = { 1, 1, 2, 2 };
    glow_attr a[] = { GLOW_AFLOATS(SCALES, sc, 4), GLOW_ASTR(MODE, mode),
                      GLOW_ASTR(COORD_MODE, coord), GLOW_ASTR(NEAREST_MODE, nearest),
                      GLOW_AF(CUBIC_COEFF_A, -0.75), GLOW_AI(EXCLUDE_OUTSIDE, 0),
                      GLOW_AF(EXTRAPOLATION_VALUE, 0) };
    glow_type out = glow_type_make(GLOW_F32, 4, DIMS(1, 1, 4, 4));
    return node(NK_RESIZE, &x, 1, a, 7, &out, 1);
}

static void test_resize(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 1, 2, 2));
    output("nearest", resize(x, "nearest", "asymmetric", "floor"));
    output("linear", resize(x, "linear", "half_pixel", "round_prefer_floor"));
    static const float xv[4] = { 1, 2, 3, 4 };
    glow_tensor in = f32_tensor(4, DIMS(1, 1, 2, 2), xv);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 0, 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4);
    /* ONNX's test_resize_upsample_scales_linear. */
    EXPECT_OUT(p, 1, 1e-6, 1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3,
               3.25, 3.75, 4);
    glow_program_destroy(p);
}

static void test_batch_norm(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 4, DIMS(1, 2, 1, 2));
    static const float scale[2] = { 2, 1 }, bias[2] = { 1, 0 }, mean[2] = { 1, 2 },
                       var[2] = { 4, 0.25f };
    glow_value ins[5] = { x, cst(GLOW_F32, 1, DIMS(2), scale), cst(GLOW_F32, 1, DIMS(2), bias),
                          cst(GLOW_F32, 1, DIMS(2), mean), cst(GLOW_F32, 1, DIMS(2), var) };
    glow_attr a[] = { GLOW_AF(EPSILON, 0) };
    output("y", node(NK_BATCH_NORM, ins, 5, a, 1, NULL, 0));
    static const float xv[4] = { 3, 5, 2, 3 };
    glow_tensor in = f32_tensor(4, DIMS(1, 2, 1, 2), xv);
    glow_program *p = run(&in, 1);
    /* (x - mean) / sqrt(var) * scale + bias */
    EXPECT_OUT(p, 0, 1e-5, 3, 5, 0, 2);
    glow_program_destroy(p);
}

static void test_half_floats(void)
{
    begin();
    glow_value a = input("a", GLOW_F16, 1, DIMS(3));
    glow_value b = input("b", GLOW_BF16, 1, DIMS(3));
    uint16_t one_h[3], one_b[3];
    for (int i = 0; i < 3; i++) {
        one_h[i] = glow_f32_to_f16(0.5f);
        one_b[i] = glow_f32_to_bf16(0.25f);
    }
    glow_value ha[2] = { a, cst(GLOW_F16, 1, DIMS(3), one_h) };
    glow_value hb[2] = { b, cst(GLOW_BF16, 1, DIMS(3), one_b) };
    output("h", node(NK_ADD, ha, 2, NULL, 0, NULL, 0));
    output("b", node(NK_MUL, hb, 2, NULL, 0, NULL, 0));
    uint16_t av[3], bv[3];
    const float vals[3] = { 1, -2, 1024 };
    for (int i = 0; i < 3; i++) {
        av[i] = glow_f32_to_f16(vals[i]);
        bv[i] = glow_f32_to_bf16(vals[i]);
    }
    glow_type th = glow_type_make(GLOW_F16, 1, DIMS(3)), tb = glow_type_make(GLOW_BF16, 1, DIMS(3));
    glow_tensor ins[2] = { glow_tensor_borrow(&th, av), glow_tensor_borrow(&tb, bv) };
    glow_program *p = run(ins, 2);
    EXPECT_OUT(p, 0, 0, 1.5, -1.5, 1024); /* 1024.5 rounds to even in f16 */
    EXPECT_OUT(p, 1, 0, 0.25, -0.5, 256);
    glow_program_destroy(p);
}

static void test_i64_and_bool(void)
{
    begin();
    glow_value a = input("a", GLOW_I64, 1, DIMS(3));
    static const int64_t k[3] = { 3, -4, (int64_t)1 << 40 };
    glow_value ab[2] = { a, cst(GLOW_I64, 1, DIMS(3), k) };
    output("mul", node(NK_MUL, ab, 2, NULL, 0, NULL, 0));
    output("sub", node(NK_SUB, ab, 2, NULL, 0, NULL, 0));
    glow_value p = input("p", GLOW_BOOL, 1, DIMS(4));
    static const uint8_t q[4] = { 0, 1, 0, 1 };
    glow_value pq[2] = { p, cst(GLOW_BOOL, 1, DIMS(4), q) };
    output("and", node(NK_AND, pq, 2, NULL, 0, NULL, 0));
    output("xor", node(NK_XOR, pq, 2, NULL, 0, NULL, 0));
    output("not", node(NK_NOT, &p, 1, NULL, 0, NULL, 0));
    static const int64_t av[3] = { 5, 7, (int64_t)1 << 20 };
    static const uint8_t pv[4] = { 0, 0, 1, 1 };
    glow_type ta = glow_type_make(GLOW_I64, 1, DIMS(3)), tp = glow_type_make(GLOW_BOOL, 1, DIMS(4));
    glow_tensor ins[2] = { glow_tensor_borrow(&ta, (void *)av), glow_tensor_borrow(&tp, (void *)pv) };
    glow_program *prog = run(ins, 2);
    if (prog) {
        glow_tensor mul = glow_program_output(prog, 0), sub = glow_program_output(prog, 1);
        CHECK_EQ(((int64_t *)mul.data)[0], 15);
        CHECK_EQ(((int64_t *)mul.data)[1], -28);
        CHECK_EQ(((int64_t *)mul.data)[2], (int64_t)1 << 60);
        CHECK_EQ(((int64_t *)sub.data)[2], ((int64_t)1 << 20) - ((int64_t)1 << 40));
    }
    EXPECT_OUT(prog, 2, 0, 0, 0, 0, 1);
    EXPECT_OUT(prog, 3, 0, 0, 1, 1, 0);
    EXPECT_OUT(prog, 4, 0, 1, 1, 0, 0);
    glow_program_destroy(prog);
}

/* Reshape is a view: the add reads the input placeholder's bytes through it. */
static void test_view_and_copy(void)
{
    begin();
    glow_value x = input("x", GLOW_F32, 2, DIMS(2, 2));
    glow_type flat = glow_type_make(GLOW_F32, 1, DIMS(4));
    glow_value r = node(NK_RESHAPE, &x, 1, NULL, 0, &flat, 1);
    glow_value ins[2] = { r, r };
    output("y", node(NK_ADD, ins, 2, NULL, 0, NULL, 0));
    output("same", r);
    static const float xv[4] = { 1, 2, 3, 4 };
    glow_tensor in = f32_tensor(2, DIMS(2, 2), xv);
    glow_program *p = run(&in, 1);
    EXPECT_OUT(p, 0, 0, 2, 4, 6, 8);
    EXPECT_OUT(p, 1, 0, 1, 2, 3, 4);
    glow_program_destroy(p);
}

static void test_unsupported(void)
{
    begin();
    glow_type qt = glow_type_make(GLOW_I8Q, 1, DIMS(4));
    qt.scale = 0.5f;
    glow_value x = glow_val(glow_placeholder_create(M, "x", &qt, true), 0);
    glow_diag_clear(&D);
    /* Sigmoid has no quantized form (Add has: src/eval/eval_quant.c). */
    glow_node *n = glow_build(F, NK_SIGMOID, "qsig", &x, 1, NULL, 0, &qt, 1, &D);
    CHECK(n != NULL);
    if (!n) {
        glow_module_destroy(M);
        return;
    }
    output("y", glow_val(n, 0));
    glow_program *p = NULL;
    glow_diag_clear(&D);
    glow_status s = glow_program_create(M, NULL, &p, &D);
    CHECK_EQ(s, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(D.msg, "Sigmoid on i8q");
    CHECK_CONTAINS(D.msg, "interpreter");
    glow_program_destroy(p);
}

static void test_backend_table(void)
{
    CHECK(glow_backend_find("interpreter") == &glow_interpreter_backend);
    CHECK(glow_backend_find("nope") == NULL);
    CHECK_CONTAINS(glow_backend_names(), "interpreter");
    /* The interpreter keeps nothing beyond lowering's rules; the cpu backend keeps the
     * FullyConnected its GEMM kernel runs whole, and not a Gemm. */
    glow_node gemm = { .kind = NK_GEMM }, fc = { .kind = NK_FULLY_CONNECTED };
    CHECK(glow_interpreter_backend.keeps_node == NULL);
    CHECK(glow_cpu_backend.keeps_node(&fc));
    CHECK(!glow_cpu_backend.keeps_node(&gemm));
}

int main(void)
{
    test_backend_table();
    test_conv_padded_strided();
    test_conv_grouped_bias();
    test_conv_dilated();
    test_pools();
    test_max_pool_indices();
    test_matmul_batched();
    test_resize();
    test_batch_norm();
    test_half_floats();
    test_i64_and_bool();
    test_view_and_copy();
    test_unsupported();
    return CHECK_DONE();
}
