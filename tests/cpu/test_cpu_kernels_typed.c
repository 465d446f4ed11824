// test_cpu_kernels_typed.c - Differential tests of the typed elementwise kernels (the "any" rows
// of kernels.def, kernels/typed): unary math and activations, arithmetic, comparisons, logic,
// bitwise ops, Cast, Where and Splat on random element kinds and shapes (1-sized and odd dims)
// against the interpreter, 1 and 2 threads bit-identical, no fallback, and each row called.
#include "cpu/cpu_diff.h"

static const glow_dtype all_kinds[] = { GLOW_F32, GLOW_F16, GLOW_BF16, GLOW_F64, GLOW_I8,
                                        GLOW_U8,  GLOW_I16, GLOW_U16,  GLOW_I32, GLOW_U32,
                                        GLOW_I64, GLOW_U64, GLOW_BOOL };
static const glow_dtype float_kinds[] = { GLOW_F32, GLOW_F16, GLOW_BF16, GLOW_F64 };
static const glow_dtype int_kinds[] = { GLOW_I8,  GLOW_U8,  GLOW_I16, GLOW_U16,
                                        GLOW_I32, GLOW_U32, GLOW_I64, GLOW_U64 };
#define PICK(a) ((a)[rnd() % (sizeof(a) / sizeof((a)[0]))])

/* A random shape of rank 1..3: leading dims 1..4, the last 1..70 (vector tails). */
static int shape(int64_t *dims)
{
    int r = (int)rint_in(1, 3);
    for (int i = 0; i < r; i++)
        dims[i] = i == r - 1 ? rint_in(1, 70) : rint_in(1, 4);
    return r;
}

/* The case's parameters, set by the test before each diff. */
static glow_node_kind kind;
static glow_dtype kind_a, kind_b;   /* operand kinds (binary: a and b; Cast: from, to) */

static void case_cast(void)
{
    int64_t dims[3];
    int r = shape(dims);
    glow_value x = input_t("x", kind_a, r, dims);
    glow_type ty = glow_type_make(kind_b, r, dims);
    glow_node *n = glow_build(F, NK_CAST, "cast", &x, 1, NULL, 0, &ty, 1, &D);
    if (!n) {
        fprintf(stderr, "build Cast: %s\n", D.msg);
        exit(1);
    }
    output(glow_val(n, 0));
}

static void case_binary(void)
{
    int64_t dims[3];
    int r = shape(dims);
    glow_value ins[2] = { input_t("a", kind_a, r, dims), input_t("b", kind_b, r, dims) };
    glow_attr at[1];
    int nat = 0;
    if (kind == NK_MOD)
        at[nat++] = GLOW_AI(FMOD, glow_dtype_is_float(kind_a) ? 1 : (int64_t)(rnd() % 2));
    if (kind == NK_BITSHIFT)
        at[nat++] = GLOW_ASTR(DIRECTION, rnd() % 2 ? "LEFT" : "RIGHT");
    output(node(kind, ins, 2, at, nat));
}

static void case_where(void)
{
    int64_t dims[3];
    int r = shape(dims);
    glow_value ins[3] = { input_t("c", GLOW_BOOL, r, dims), input_t("a", kind_a, r, dims),
                          input_t("b", kind_a, r, dims) };
    output(node(NK_WHERE, ins, 3, NULL, 0));
}

/* Unary kind `kind` on kind_a, with random attributes where it has them. */
static void case_unary(void)
{
    int64_t dims[3];
    int r = shape(dims);
    glow_value x = input_t("x", kind_a, r, dims);
    glow_attr at[2];
    int nat = 0;
    switch (kind) {
    case NK_ELU: case NK_CELU: case NK_THRESHOLDED_RELU:
        at[nat++] = GLOW_AF(ALPHA, 0.25 + (rnd() % 8) / 4.0);
        break;
    case NK_SELU:
        at[nat++] = GLOW_AF(ALPHA, 1.5);
        at[nat++] = GLOW_AF(GAMMA, 1.25);
        break;
    case NK_SHRINK:
        at[nat++] = GLOW_AF(LAMBD, (rnd() % 4) / 2.0);
        at[nat++] = GLOW_AF(BIAS, (rnd() % 4) / 2.0);
        break;
    case NK_ISINF:
        at[nat++] = GLOW_AI(DETECT_POS, rnd() % 2);
        at[nat++] = GLOW_AI(DETECT_NEG, rnd() % 2);
        break;
    case NK_GELU:
        at[nat++] = GLOW_ASTR(APPROXIMATE, rnd() % 2 ? "tanh" : "none");
        break;
    case NK_CLIP:
        at[nat++] = GLOW_AF(MIN, -1.5 + rnd() % 3);
        at[nat++] = GLOW_AF(MAX, 0.5 + rnd() % 3);
        break;
    case NK_HARD_SIGMOID:
        at[nat++] = GLOW_AF(ALPHA, 0.3);
        at[nat++] = GLOW_AF(BETA, 0.45);
        break;
    default: break;
    }
    /* Reciprocal and Log of a value and 1/x near 0 reach inf; Div by it reaches NaN. */
    output(node(kind, &x, 1, at, nat));
}

/* A run of f32 steps of the typed kernels and the f32 ones, which the backend fuses into
 * chains (kernels/eltwise's gk_chain_f32 with GK_CHAIN_TYPED steps). */
static void case_chain(void)
{
    static const glow_node_kind ops[] = { NK_ERF,  NK_SOFTPLUS, NK_GELU, NK_SIN, NK_ELU,
                                          NK_ROUND, NK_FLOOR,   NK_ADD,  NK_MUL, NK_MOD,
                                          NK_TANH };
    int64_t n = rint_in(1, 70), m = rint_in(1, 4);
    glow_value v[10];
    int nv = 0;
    v[nv++] = input("a", 2, DIMS(m, n));
    v[nv++] = input("b", 2, DIMS(m, n));
    int steps = (int)rint_in(2, 7);
    for (int i = 0; i < steps; i++) {
        glow_node_kind k = PICK(ops);
        glow_value x = v[nv - 1], y = v[rnd() % (unsigned)nv];
        glow_attr fm = GLOW_AI(FMOD, 1), ap = GLOW_ASTR(APPROXIMATE, "tanh");
        if (k == NK_ADD || k == NK_MUL || k == NK_MOD)
            v[nv++] = node(k, (glow_value[]){ x, y }, 2, &fm, k == NK_MOD);
        else
            v[nv++] = node(k, &x, 1, &ap, k == NK_GELU);
    }
    output(v[nv - 1]);
}

/* --- the table --- */

/* Unary float math and activations on every float kind (f32 ops of the f32 kernels aside). */
static const glow_node_kind float_unary[] = {
    NK_FLOOR,  NK_CEIL,     NK_ROUND,    NK_RECIPROCAL, NK_ERF,        NK_SIN,
    NK_COS,    NK_TAN,      NK_ASIN,     NK_ACOS,       NK_ATAN,       NK_SINH,
    NK_COSH,   NK_ASINH,    NK_ACOSH,    NK_ATANH,      NK_SIGN,       NK_ISNAN,
    NK_ISINF,  NK_SOFTPLUS, NK_SOFTSIGN, NK_ELU,        NK_SELU,       NK_CELU,
    NK_THRESHOLDED_RELU,    NK_GELU,     NK_MISH,       NK_SHRINK,     NK_CLIP,
    NK_EXP,    NK_LOG,      NK_SQRT,     NK_TANH,       NK_SIGMOID,    NK_RELU,
    NK_ABS,    NK_NEG,      NK_HARD_SIGMOID,
};
/* Unary ops of the integer kinds. */
static const glow_node_kind int_unary[] = { NK_ABS, NK_NEG, NK_SIGN, NK_RELU,
                                            NK_BITWISE_NOT, NK_CLIP, NK_SHRINK };

static void trial(const char *what, case_fn fn, uint64_t seed)
{
    char name[96];
    snprintf(name, sizeof name, "%s %s/%s", what, glow_dtype_name(kind_a),
             glow_dtype_name(kind_b));
    diff(name, fn, seed, 0, true);
}

static void test_unary(const gk_row *row)
{
    uint64_t seed = 100;
    for (size_t k = 0; k < sizeof float_unary / sizeof float_unary[0]; k++) {
        kind = float_unary[k];
        for (int t = 0; t < (trials + 3) / 4; t++, seed++) {
            kind_a = kind_b = float_kinds[(k + (size_t)t) % 4];
            trial(glow_node_kind_name(kind), case_unary, seed);
        }
    }
    for (size_t k = 0; k < sizeof int_unary / sizeof int_unary[0]; k++) {
        kind = int_unary[k];
        for (int t = 0; t < (trials + 3) / 4; t++, seed++) {
            kind_a = kind_b = int_kinds[(k * 3 + (size_t)t) % 8];
            trial(glow_node_kind_name(kind), case_unary, seed);
        }
    }
    kind = NK_NOT;
    kind_a = kind_b = GLOW_BOOL;
    trial("Not", case_unary, seed);
    check_called(row);
}

static void test_binary(const gk_row *row)
{
    static const glow_node_kind arith[] = { NK_ADD, NK_SUB, NK_MUL, NK_DIV, NK_MOD,
                                            NK_POW, NK_MAX, NK_MIN };
    static const glow_node_kind cmp[] = { NK_EQUAL, NK_LESS, NK_LESS_EQUAL, NK_GREATER,
                                          NK_GREATER_EQUAL };
    static const glow_node_kind logic[] = { NK_AND, NK_OR, NK_XOR };
    static const glow_node_kind bits[] = { NK_BITWISE_AND, NK_BITWISE_OR, NK_BITWISE_XOR,
                                           NK_BITSHIFT };
    static const glow_dtype arith_kinds[] = { GLOW_F64, GLOW_F16, GLOW_BF16, GLOW_I8,
                                              GLOW_U8,  GLOW_I16, GLOW_U16,  GLOW_I32,
                                              GLOW_U32, GLOW_I64, GLOW_U64 };
    uint64_t seed = 2000;
    int n = (trials + 1) / 2;
    for (size_t k = 0; k < sizeof arith / sizeof arith[0]; k++)
        for (int t = 0; t < n; t++, seed++) {
            rng_state = seed;
            kind = arith[k];
            kind_a = kind_b = PICK(arith_kinds);
            /* Pow's exponent may be of another kind (an integer base to a float power). */
            if (kind == NK_POW && rnd() % 2)
                kind_b = PICK(float_kinds);
            trial(glow_node_kind_name(kind), case_binary, seed);
        }
    for (size_t k = 0; k < sizeof cmp / sizeof cmp[0]; k++)
        for (int t = 0; t < n; t++, seed++) {
            rng_state = seed;
            kind = cmp[k];
            /* Bool compares only for equality. */
            do
                kind_a = kind_b = PICK(all_kinds);
            while (kind_a == GLOW_BOOL && kind != NK_EQUAL);
            trial(glow_node_kind_name(kind), case_binary, seed);
        }
    for (size_t k = 0; k < sizeof logic / sizeof logic[0]; k++, seed++) {
        kind = logic[k];
        kind_a = kind_b = GLOW_BOOL;
        trial(glow_node_kind_name(kind), case_binary, seed);
    }
    for (size_t k = 0; k < sizeof bits / sizeof bits[0]; k++)
        for (int t = 0; t < n; t++, seed++) {
            rng_state = seed;
            kind = bits[k];
            kind_a = kind_b = PICK(int_kinds);
            trial(glow_node_kind_name(kind), case_binary, seed);
        }
    check_called(row);
}

static void test_cast(const gk_row *row)
{
    /* Every pair once over the runs of a few seeds: the pairs are walked from a random start. */
    enum { NK = sizeof all_kinds / sizeof all_kinds[0] };
    int pairs = trials * 8;
    rng_state = 3000;
    int start = (int)(rnd() % (NK * NK));
    for (int p = 0; p < pairs; p++) {
        int i = (start + p * 7) % (NK * NK);
        kind_a = all_kinds[i / NK];
        kind_b = all_kinds[i % NK];
        trial("Cast", case_cast, 3000 + (uint64_t)p);
    }
    check_called(row);
}

static void test_where(const gk_row *row)
{
    for (int t = 0; t < trials * 2; t++) {
        rng_state = 4000 + (uint64_t)t;
        kind_a = kind_b = PICK(all_kinds);
        trial("Where", case_where, 4000 + (uint64_t)t);
    }
    check_called(row);
}

/* Splat of a float kind other than f32: HardSigmoid lowers to Splats of alpha, beta, 0, 1. */
static void test_splat(const gk_row *row)
{
    static const glow_dtype kinds[] = { GLOW_F64, GLOW_F16, GLOW_BF16 };
    kind = NK_HARD_SIGMOID;
    for (int t = 0; t < trials; t++) {
        kind_a = kind_b = kinds[t % 3];
        trial("HardSigmoid", case_unary, 5000 + (uint64_t)t);
    }
    check_called(row);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "unary_any", test_unary }, { "binary_any", test_binary }, { "cast_any", test_cast },
        { "where_any", test_where }, { "splat_any", test_splat },
    };
    set_trials();
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    int fused = 0;
    for (int t = 0; t < trials; t++) {
        diff("typed chain", case_chain, 6000 + (uint64_t)t, 0, true);
        fused += chains > 0;
    }
    CHECK(fused > 0);
    free_inputs();
    return CHECK_DONE();
}
