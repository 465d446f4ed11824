// test_cpu_kernels_reduce.c - Differential tests of the cpu backend's reduction and along-axis
// kernels of any numeric kind (the `any` rows of kernels/reduce, scan, softmax, norm and
// matmul): random shapes with 1-sized and odd dims, random axes, attributes and element kinds,
// against the interpreter, 1 and 2 threads bit-identical, no fallback, and the row's kernel
// called.
#include "cpu/cpu_diff.h"

static const glow_dtype num_kinds[] = { GLOW_F32, GLOW_F16, GLOW_BF16, GLOW_F64, GLOW_I8,
                                        GLOW_U8,  GLOW_I16, GLOW_U16,  GLOW_I32, GLOW_U32,
                                        GLOW_I64, GLOW_U64 };
enum { NUM_KINDS = sizeof num_kinds / sizeof num_kinds[0] };

static glow_dtype pick_kind(void) { return num_kinds[rnd() % NUM_KINDS]; }
static glow_dtype pick_float(void) { return num_kinds[rnd() % 4]; }

/* --- cases --- */

static glow_node_kind reduce_kind;

/* Any reduce kind over a random non-empty set of axes (not necessarily contiguous) of a
 * rank-1..5 tensor of a random kind (sometimes with an extent 0), keepdims or not. */
static void case_reduce(void)
{
    int r = (int)rint_in(1, 5);
    int64_t dims[5], axes[5];
    int na = 0;
    rand_extents(r, 5, dims);
    if (rnd() % 6 == 0)
        dims[rint_in(0, r - 1)] = 0; /* empty: identities, or no result at all */
    for (int i = 0; i < r; i++)
        if (rnd() % 2)
            axes[na++] = i;
    if (!na)
        axes[na++] = rint_in(0, r - 1);
    glow_value x = input_t("x", pick_kind(), r, dims);
    glow_attr a[] = { GLOW_AINTS(AXES, axes, na), GLOW_AI(KEEPDIMS, rnd() % 2) };
    output(node(reduce_kind, &x, 1, a, 2));
}

static glow_node_kind axis_kind;
static int topk_result;

/* ArgMax/ArgMin, CumSum/CumProd, TopK or Hardmax along a random axis (graph nodes carry it
 * normalized) of a rank-1..4 tensor, with random attributes. */
static void case_axis(void)
{
    int r = (int)rint_in(1, 4);
    int64_t dims[4], axis = rint_in(0, r - 1);
    rand_extents(r, 6, dims);
    glow_dtype t = axis_kind == NK_HARDMAX ? pick_float() : pick_kind();
    glow_value x = input_t("x", t, r, dims);
    glow_attr a[5];
    int n = 0;
    a[n++] = GLOW_AI(AXIS, axis);
    switch ((int)axis_kind) {
    case NK_ARG_MAX: case NK_ARG_MIN:
        a[n++] = GLOW_AI(KEEPDIMS, rnd() % 2);
        a[n++] = GLOW_AI(SELECT_LAST, rnd() % 2);
        break;
    case NK_CUMSUM: case NK_CUMPROD:
        a[n++] = GLOW_AI(EXCLUSIVE, rnd() % 2);
        a[n++] = GLOW_AI(REVERSE, rnd() % 2);
        break;
    case NK_TOPK:
        a[n++] = GLOW_AI(K, rint_in(1, dims[axis]));
        a[n++] = GLOW_AI(LARGEST, rnd() % 2);
        a[n++] = GLOW_AI(SORTED, rnd() % 2);
        break;
    default:
        break;
    }
    if (axis_kind == NK_TOPK) {
        glow_value v = node_n(NK_TOPK, &x, 1, a, n, 2);
        v.res = (uint32_t)topk_result;
        output(v);
        return;
    }
    output(node(axis_kind, &x, 1, a, n));
}

/* Batched MatMul [..., M, K] x [..., K, N] of a kind other than f32. */
static void case_matmul(void)
{
    int r = (int)rint_in(2, 4);
    int64_t ad[4], bd[4];
    rand_extents(r, 3, ad);
    ad[r - 2] = rint_in(1, 9);
    ad[r - 1] = rint_in(1, 9);
    memcpy(bd, ad, sizeof bd);
    bd[r - 2] = ad[r - 1];
    bd[r - 1] = rint_in(1, 9);
    glow_dtype t = num_kinds[1 + rnd() % (NUM_KINDS - 1)];
    glow_value ins[2] = { input_t("a", t, r, ad), input_t("b", t, r, bd) };
    output(node(NK_MATMUL, ins, 2, NULL, 0));
}

/* LRN of a float kind over the channels of a rank-3..4 tensor, windows of 1..6 channels. */
static void case_lrn(void)
{
    int r = (int)rint_in(3, 4);
    int64_t dims[4];
    rand_extents(r, 5, dims);
    dims[1] = rint_in(1, 9);
    glow_value x = input_t("x", pick_float(), r, dims);
    glow_attr a[] = { GLOW_AI(SIZE, rint_in(1, 6)), GLOW_AF(ALPHA, 1e-4 * (double)rint_in(1, 9)),
                      GLOW_AF(BETA, 0.75), GLOW_AF(BIAS, 1.0 + (double)rint_in(0, 3)) };
    output(node(NK_LRN, &x, 1, a, 4));
}

/* --- the table --- */

static void test_reduce_any(const gk_row *row)
{
    static const glow_node_kind kinds[] = {
        NK_REDUCE_SUM, NK_REDUCE_MEAN, NK_REDUCE_MAX, NK_REDUCE_MIN, NK_REDUCE_PROD,
        NK_REDUCE_L1, NK_REDUCE_L2, NK_REDUCE_LOG_SUM, NK_REDUCE_LOG_SUM_EXP,
        NK_REDUCE_SUM_SQUARE,
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        reduce_kind = kinds[k];
        for (int t = 0; t < trials; t++)
            diff(glow_node_kind_name(kinds[k]), case_reduce, 20000 + k * 100 + (uint64_t)t,
                 1e-6, true);
    }
    check_called(row);
}

static void axis_trials(const gk_row *row, const glow_node_kind *kinds, size_t n, int per,
                        uint64_t seed0)
{
    for (size_t k = 0; k < n; k++) {
        axis_kind = kinds[k];
        for (int t = 0; t < per; t++)
            diff(glow_node_kind_name(kinds[k]), case_axis, seed0 + k * 100 + (uint64_t)t,
                 1e-6, true);
    }
    check_called(row);
}

static void test_arg(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_ARG_MAX, NK_ARG_MIN };
    axis_trials(row, kinds, 2, trials * 2, 21000);
}

static void test_cumulative(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_CUMSUM, NK_CUMPROD };
    axis_trials(row, kinds, 2, trials * 2, 22000);
}

static void test_topk(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_TOPK };
    for (topk_result = 0; topk_result < 2; topk_result++)
        axis_trials(row, kinds, 1, trials * 2, 23000 + (uint64_t)topk_result * 1000);
}

static void test_hardmax(const gk_row *row)
{
    static const glow_node_kind kinds[] = { NK_HARDMAX };
    axis_trials(row, kinds, 1, trials * 2, 25000);
}

static void test_matmul_any(const gk_row *row)
{
    for (int t = 0; t < trials * 3; t++)
        diff("MatMul", case_matmul, 26000 + (uint64_t)t, 1e-6, true);
    check_called(row);
}

static void test_lrn(const gk_row *row)
{
    for (int t = 0; t < trials * 2; t++)
        diff("LRN", case_lrn, 27000 + (uint64_t)t, 1e-6, true);
    check_called(row);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "reduce_any", test_reduce_any }, { "arg_any", test_arg },
        { "cumulative_any", test_cumulative }, { "topk_any", test_topk },
        { "hardmax_any", test_hardmax }, { "matmul_any", test_matmul_any },
        { "lrn_any", test_lrn },
    };
    set_trials();
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    free_inputs();
    return CHECK_DONE();
}
