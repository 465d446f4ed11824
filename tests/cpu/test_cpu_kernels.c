// test_cpu_kernels.c - Differential tests of the cpu backend: each scalar kernel family of
// kernels.def on random shapes (odd sizes, strides, pads, groups, dilations, vector tails)
// against the interpreter, with 1 and 2 threads bit-identical, and checks that the row's kernel
// (not the fallback) ran. The table in main() is keyed by family (kernels/kernel_rows.h);
// `--list` prints the rows it covers for test_kernel_rows.
#include "cpu/cpu_diff.h"

/* --- cases --- */

static glow_node_kind eltwise_kind;

static void case_eltwise(void)
{
    /* Sizes around the vector widths (16 floats) and their tails. */
    int64_t n = rint_in(1, 70), m = rint_in(1, 5);
    glow_value a = input("a", 2, DIMS(m, n));
    bool unary = eltwise_kind == NK_RELU || eltwise_kind == NK_NEG || eltwise_kind == NK_ABS ||
                 eltwise_kind == NK_SQRT || eltwise_kind == NK_EXP || eltwise_kind == NK_TANH ||
                 eltwise_kind == NK_SIGMOID || eltwise_kind == NK_LOG;
    if (eltwise_kind == NK_CLIP) {
        glow_attr ca[] = { GLOW_AF(MIN, -0.5), GLOW_AF(MAX, 0.75) };
        output(node(NK_CLIP, &a, 1, ca, 2));
    } else if (unary) {
        output(node(eltwise_kind, &a, 1, NULL, 0));
    } else {
        glow_value ins[2] = { a, input("b", 2, DIMS(m, n)) };
        output(node(eltwise_kind, ins, 2, NULL, 0));
    }
}

/* HardSigmoid, which lowering turns into Splats of alpha, beta, 0 and 1 and elementwise ops. */
static void case_hardsigmoid(void)
{
    int64_t n = rint_in(1, 70), m = rint_in(1, 5);
    glow_value a = input("a", 2, DIMS(m, n));
    glow_attr ha[] = { GLOW_AF(ALPHA, 0.3), GLOW_AF(BETA, 0.45) };
    output(node(NK_HARD_SIGMOID, &a, 1, ha, 2));
}

static const char *fused;

static void case_conv(void)
{
    int64_t g = rint_in(1, 3), cg = rint_in(1, 4), mg = rint_in(1, 4);
    if (rnd() % 4 == 0)
        cg = mg = 1, g = rint_in(2, 6);   /* depthwise */
    int64_t k[2] = { rint_in(1, 4), rint_in(1, 4) }, s[2] = { rint_in(1, 3), rint_in(1, 3) };
    int64_t dl[2] = { rint_in(1, 2), rint_in(1, 2) };
    int64_t p[4] = { rint_in(0, 2), rint_in(0, 2), rint_in(0, 2), rint_in(0, 2) };
    int64_t h = rint_in(1, 12) + (k[0] - 1) * dl[0], w = rint_in(1, 19) + (k[1] - 1) * dl[1];
    int64_t nb = rint_in(1, 2);
    glow_value x = input("x", 4, DIMS(nb, g * cg, h, w));
    glow_value ins[3] = { x, cst(4, DIMS(g * mg, cg, k[0], k[1])), cst(1, DIMS(g * mg)) };
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2),
                      GLOW_AINTS(PADS, p, 4), GLOW_AINTS(DILATIONS, dl, 2), GLOW_AI(GROUP, g) };
    glow_value y = node(NK_CONV, ins, rnd() % 2 ? 3 : 2, a, 5);
    if (fused && !strcmp(fused, "Relu"))
        y = node(NK_RELU, &y, 1, NULL, 0);
    output(y);
}

static void case_matmul(void)
{
    int64_t b = rint_in(1, 3), m = rint_in(1, 9), k = rint_in(1, 40), n = rint_in(1, 37);
    glow_value ins[2] = { input("a", 3, DIMS(b, m, k)), rnd() % 2 ? input("b", 3, DIMS(b, k, n))
                                                                  : cst(3, DIMS(b, k, n)) };
    output(node(NK_MATMUL, ins, 2, NULL, 0));
}

static glow_node_kind pool_kind;   /* NK_MAX_POOL, NK_AVG_POOL, or 0: either at random */

static void case_pool(void)
{
    int64_t k[2] = { rint_in(1, 3), rint_in(1, 3) }, s[2] = { rint_in(1, 2), rint_in(1, 3) };
    int64_t dl[2] = { rint_in(1, 2), 1 };
    int64_t p[4] = { rint_in(0, k[0] - 1), rint_in(0, k[1] - 1), rint_in(0, k[0] - 1),
                     rint_in(0, k[1] - 1) };
    int64_t h = rint_in(1, 9) + (k[0] - 1) * dl[0], w = rint_in(1, 17) + (k[1] - 1) * dl[1];
    glow_value x = input("x", 4, DIMS(rint_in(1, 2), rint_in(1, 5), h, w));
    bool avg = rnd() % 2;
    avg = pool_kind ? pool_kind == NK_AVG_POOL : avg;
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2),
                      GLOW_AINTS(PADS, p, 4), GLOW_AINTS(DILATIONS, dl, 2),
                      GLOW_AI(COUNT_INCLUDE_PAD, rnd() % 2) };
    output(node(avg ? NK_AVG_POOL : NK_MAX_POOL, &x, 1, a, avg ? 5 : 4));
}

static void case_transpose(void)
{
    int r = (int)rint_in(2, 5);
    int64_t dims[5], perm[5];
    for (int i = 0; i < r; i++)
        dims[i] = rint_in(1, 7), perm[i] = i;
    for (int i = r - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint32_t)(i + 1));
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    glow_value x = input("x", r, dims);
    glow_attr a[] = { GLOW_AINTS(PERM, perm, r) };
    glow_value y = node(NK_TRANSPOSE, &x, 1, a, 1);
    /* A following Relu keeps the optimizer from sinking the transpose into the output. */
    output(node(NK_RELU, &y, 1, NULL, 0));
}

static void case_concat(void)
{
    int64_t axis = rint_in(0, 2), d[3] = { rint_in(1, 4), rint_in(1, 5), rint_in(1, 9) };
    glow_value ins[3];
    for (int i = 0; i < 3; i++) {
        int64_t di[3] = { d[0], d[1], d[2] };
        di[axis] = rint_in(1, 6);
        char name[8];
        snprintf(name, sizeof name, "x%d", i);
        ins[i] = input(name, 3, di);
    }
    glow_attr a[] = { GLOW_AI(AXIS, axis) };
    glow_value y = node(NK_CONCAT, ins, 3, a, 1);
    output(node(NK_NEG, &y, 1, NULL, 0));
}

/* A run of 2-7 elementwise ops (Clip among them) whose operands are the inputs or earlier
 * results, some in place: fused into loops of up to four steps, bit-exact. */
static void case_chain(void)
{
    static const glow_node_kind ops[] = { NK_ADD, NK_SUB, NK_MUL, NK_MAX, NK_MIN, NK_RELU,
                                          NK_NEG, NK_TANH, NK_SIGMOID, NK_CLIP };
    int64_t n = rint_in(1, 70), m = rint_in(2, 4);
    glow_value v[10];
    int nv = 0;
    v[nv++] = input("a", 2, DIMS(m, n));
    v[nv++] = input("b", 2, DIMS(m, n));
    int steps = (int)rint_in(2, 7);
    for (int i = 0; i < steps; i++) {
        glow_node_kind k = ops[rnd() % (sizeof ops / sizeof ops[0])];
        glow_value x = v[nv - 1], y = v[rnd() % (unsigned)nv];
        if (k == NK_CLIP) {
            glow_attr ca[] = { GLOW_AF(MIN, -0.5), GLOW_AF(MAX, 0.75) };
            v[nv++] = node(k, &x, 1, ca, 2);
        } else if (k == NK_RELU || k == NK_NEG || k == NK_TANH || k == NK_SIGMOID) {
            v[nv++] = node(k, &x, 1, NULL, 0);
        } else {
            v[nv++] = node(k, (glow_value[]){ x, y }, 2, NULL, 0);
        }
    }
    output(v[nv - 1]);
}

static glow_node_kind reduce_kind;

/* A reduction over one run of contiguous dims of a rank-2..4 tensor (the kernel's
 * [outer, n, inner] view), with or without keepdims. */
static void case_reduce(void)
{
    int r = (int)rint_in(2, 4), a0 = (int)rint_in(0, r - 1), a1 = (int)rint_in(a0, r - 1);
    int64_t dims[4], axes[4];
    for (int i = 0; i < r; i++)
        dims[i] = rint_in(1, 9);
    for (int i = a0; i <= a1; i++)
        axes[i - a0] = i;
    glow_value x = input("x", r, dims);
    glow_attr a[] = { GLOW_AINTS(AXES, axes, a1 - a0 + 1), GLOW_AI(KEEPDIMS, rnd() % 2) };
    output(node(reduce_kind, &x, 1, a, 2));
}

/* Softmax has no kernel in this backend's lowering: the evaluator fallback runs, mixed with
 * kernels before and after it. */
static void case_fallback(void)
{
    int64_t n = rint_in(2, 30);
    glow_value x = input("x", 2, DIMS(3, n));
    glow_value r = node(NK_RELU, &x, 1, NULL, 0);
    glow_attr a[] = { GLOW_AI(AXIS, 1) };
    glow_value s = node(NK_SOFTMAX, &r, 1, a, 1);
    glow_value ins[2] = { s, r };
    output(node(NK_ADD, ins, 2, NULL, 0));
}

/* --- the table: one test per scalar family of kernels.def --- */


static void eltwise_trials(const gk_row *row, const glow_node_kind *kinds, size_t n, int seed0)
{
    for (size_t k = 0; k < n; k++) {
        eltwise_kind = kinds[k];
        for (int t = 0; t < (trials + 1) / 2; t++)
            diff(glow_node_kind_name(kinds[k]), case_eltwise,
                 (uint64_t)seed0 + k * 10 + (uint64_t)t, 0, true);
    }
    check_called(row);
}

static void test_unary(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_RELU, NK_NEG, NK_ABS, NK_SQRT, NK_EXP, NK_TANH,
                                            NK_SIGMOID, NK_LOG };
    eltwise_trials(row, kinds, sizeof kinds / sizeof kinds[0], 160);
}

static void test_binary(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_ADD, NK_SUB, NK_MUL, NK_DIV, NK_MAX, NK_MIN,
                                            NK_POW };
    eltwise_trials(row, kinds, sizeof kinds / sizeof kinds[0], 100);
}

static void test_act(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_CLIP };
    eltwise_trials(row, kinds, 1, 900);
}

static void test_splat(const gk_row *row)
{
    for (int t = 0; t < trials; t++)
        diff("HardSigmoid", case_hardsigmoid, 950 + (uint64_t)t, 0, true);
    check_called(row);
}

static void test_conv(const gk_row *row)
{
    for (int t = 0; t < trials * 3; t++)
        diff("Conv", case_conv, 1000 + (uint64_t)t, 1e-5, true);
    fused = "Relu";
    for (int t = 0; t < trials; t++)
        diff("Conv+Relu", case_conv, 2000 + (uint64_t)t, 1e-5, true);
    fused = NULL;
    check_called(row);
}

static void test_matmul(const gk_row *row)
{
    for (int t = 0; t < trials * 2; t++)
        diff("MatMul", case_matmul, 3000 + (uint64_t)t, 1e-5, true);
    check_called(row);
}

static void pool_trials(const gk_row *row, glow_node_kind kind)
{
    pool_kind = kind;
    for (int t = 0; t < trials * 2; t++)
        diff(glow_node_kind_name(kind), case_pool, 4000 + (uint64_t)t, 0, true);
    pool_kind = 0;
    check_called(row);
}

static void test_maxpool(const gk_row *row)
{
    pool_trials(row, NK_MAX_POOL);
}

static void test_avgpool(const gk_row *row)
{
    pool_trials(row, NK_AVG_POOL);
}

static void test_transpose(const gk_row *row)
{
    for (int t = 0; t < trials * 2; t++)
        diff("Transpose", case_transpose, 5000 + (uint64_t)t, 0, true);
    check_called(row);
}

static void test_copy2d(const gk_row *row)
{
    for (int t = 0; t < trials * 2; t++)
        diff("Concat", case_concat, 6000 + (uint64_t)t, 0, true);
    check_called(row);
}

static void test_chain(const gk_row *row)
{
    int chained = 0;
    for (int t = 0; t < trials * 3; t++) {
        diff("elementwise chain", case_chain, 8000 + (uint64_t)t, 0, true);
        chained += chains;
    }
    CHECK(chained > 0);
    check_called(row);
}

static void test_reduce(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_REDUCE_SUM, NK_REDUCE_MEAN, NK_REDUCE_MAX,
                                            NK_REDUCE_MIN };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        reduce_kind = kinds[k];
        for (int t = 0; t < trials; t++)
            diff(glow_node_kind_name(kinds[k]), case_reduce, 9000 + k * 10 + (uint64_t)t, 1e-6,
                 true);
    }
    check_called(row);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "unary_f32", test_unary },         { "binary_f32", test_binary },
        { "act_f32", test_act },             { "chain_f32", test_chain },
        { "splat_f32", test_splat },
        { "copy2d_u8", test_copy2d },        { "conv2d_f32", test_conv },
        { "matmul_f32", test_matmul },       { "maxpool2d_f32", test_maxpool },
        { "avgpool2d_f32", test_avgpool },      { "transpose_b32", test_transpose },
        { "reduce_f32", test_reduce },
    };
    set_trials();
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    for (int t = 0; t < trials; t++)
        diff("Softmax fallback", case_fallback, 7000 + (uint64_t)t, 0, false);
    free_inputs();
    return CHECK_DONE();
}
