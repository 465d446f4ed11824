// test_cpu_kernels_move.c - Differential tests of the data-movement kernels of any element kind
// (kernels.def's strided, insert, pad and trilu rows, one per element size): Slice with
// negative and large steps, Transpose, Broadcast, Tile, DepthToSpace, SpaceToDepth,
// InsertTensor, Pad (reflect, edge, wrap) and Trilu on random shapes of rank 1 to 6 with 1-sized
// and odd dims, each on an element type of the row's size, against the interpreter, with 1 and
// 2 threads bit-identical and no fallback.
#include "cpu/cpu_diff.h"

/* The element type of the cases: one of the kinds of the row's element size. */
static glow_dtype dt;

static void pick_dtype(const gk_row *row, uint64_t seed)
{
    static const glow_dtype u8[] = { GLOW_BOOL, GLOW_U8, GLOW_I8 };
    static const glow_dtype b16[] = { GLOW_F16, GLOW_BF16 };
    static const glow_dtype b32[] = { GLOW_F32, GLOW_I32 };
    static const glow_dtype b64[] = { GLOW_F64, GLOW_I64 };
    if (!strcmp(row->dtype, "u8"))
        dt = u8[seed % 3];
    else if (!strcmp(row->dtype, "b16"))
        dt = b16[seed % 2];
    else if (!strcmp(row->dtype, "b32"))
        dt = b32[seed % 2];
    else
        dt = b64[seed % 2];
}

/* Rank r (1..max) random dims in [1, hi], about a third of them 1. */
static int rand_dims(int max, int64_t hi, int64_t *dims)
{
    int r = (int)rint_in(1, max);
    for (int i = 0; i < r; i++)
        dims[i] = rnd() % 3 == 0 ? 1 : rint_in(1, hi);
    return r;
}

static glow_value build_node(glow_node_kind k, const glow_value *ins, int nin,
                             const glow_attr *attrs, int nattr, const glow_type *declared)
{
    glow_node *n = glow_build(F, k, glow_node_kind_name(k), ins, nin, attrs, nattr, declared,
                              declared ? 1 : 0, &D);
    if (!n) {
        fprintf(stderr, "build %s: %s\n", glow_node_kind_name(k), D.msg);
        exit(1);
    }
    return glow_val(n, 0);
}

/* --- cases --- */

static void case_slice(void)
{
    int64_t dims[6], st[6], en[6], sp[6];
    int r = rand_dims(6, 7, dims);
    for (int i = 0; i < r; i++) {
        int64_t n = dims[i];
        sp[i] = rnd() % 4 == 0 ? -rint_in(1, 3) : rint_in(1, 3);
        if (rnd() % 8 == 0)
            sp[i] = sp[i] > 0 ? n + 1 : -(n + 1);   /* beyond the dim: one element */
        if (sp[i] > 0)
            st[i] = rint_in(0, n - 1), en[i] = rint_in(st[i] + 1, n);
        else
            st[i] = rint_in(0, n - 1), en[i] = rint_in(-1, st[i] - 1);
    }
    glow_value x = input_t("x", dt, r, dims);
    glow_attr a[] = { GLOW_AINTS(STARTS, st, r), GLOW_AINTS(ENDS, en, r),
                      GLOW_AINTS(STEPS, sp, r) };
    output(node(NK_SLICE, &x, 1, a, 3));
}

static void case_transpose(void)
{
    int64_t dims[6], perm[6];
    int r = rand_dims(6, 6, dims);
    for (int i = 0; i < r; i++)
        perm[i] = i;
    for (int i = r - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint32_t)(i + 1));
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    glow_value x = input_t("x", dt, r, dims);
    glow_attr a[] = { GLOW_AINTS(PERM, perm, r) };
    output(node(NK_TRANSPOSE, &x, 1, a, 1));
}

static void case_broadcast(void)
{
    int64_t ydims[6], xdims[6];
    int r = rand_dims(6, 6, ydims), xr = (int)rint_in(1, r);
    for (int j = 0; j < xr; j++)
        xdims[j] = rnd() % 2 ? 1 : ydims[j + r - xr];
    glow_value x = input_t("x", dt, xr, xdims);
    glow_type ty = glow_type_make(dt, r, ydims);
    output(build_node(NK_BROADCAST, &x, 1, NULL, 0, &ty));
}

static void case_tile(void)
{
    int64_t dims[6], rep[6];
    int r = rand_dims(4, 5, dims);
    for (int i = 0; i < r; i++)
        rep[i] = rnd() % 2 ? 1 : rint_in(1, 3);
    glow_value x = input_t("x", dt, r, dims);
    glow_attr a[] = { GLOW_AINTS(REPEATS, rep, r) };
    output(node(NK_TILE, &x, 1, a, 1));
}

static void case_depth_space(void)
{
    int64_t b = rint_in(1, 3), n = rint_in(1, 2), c = rint_in(1, 3), h = rint_in(1, 4);
    int64_t w = rint_in(1, 5);
    bool to_space = rnd() % 2, crd = rnd() % 2;
    glow_attr a[] = { GLOW_AI(BLOCKSIZE, b), GLOW_ASTR(MODE, crd ? "CRD" : "DCR") };
    if (to_space) {
        glow_value x = input_t("x", dt, 4, DIMS(n, c * b * b, h, w));
        output(node(NK_DEPTH_TO_SPACE, &x, 1, a, 2));
    } else {
        glow_value x = input_t("x", dt, 4, DIMS(n, c, h * b, w * b));
        output(node(NK_SPACE_TO_DEPTH, &x, 1, a, 1));
    }
}

static void case_insert(void)
{
    int64_t big[6], small[6], at[6];
    int r = rand_dims(6, 6, big);
    for (int i = 0; i < r; i++) {
        small[i] = rint_in(rnd() % 6 == 0 ? 0 : 1, big[i]);
        at[i] = rint_in(0, big[i] - small[i]);
    }
    glow_value ins[2] = { input_t("big", dt, r, big), input_t("small", dt, r, small) };
    glow_attr a[] = { GLOW_AINTS(STARTS, at, r) };
    output(node(NK_INSERT_TENSOR, ins, 2, a, 1));
}

static void case_pad(void)
{
    static const char *const modes[] = { "reflect", "edge", "wrap" };
    int64_t dims[6], pads[12];
    int r = rand_dims(5, 6, dims);
    const char *mode = modes[rnd() % 3];
    for (int i = 0; i < r; i++) {
        /* Edge and wrap pads beyond the dim (wrap goes round more than once); reflect stays
         * below the dim's size, as the graph requires; some crop. */
        int64_t most = strcmp(mode, "reflect") ? dims[i] + 2 : dims[i] - 1;
        pads[i] = rint_in(-dims[i] / 2, most);
        pads[i + r] = rint_in(-dims[i] / 2, most);
        if (dims[i] + pads[i] + pads[i + r] < 1)
            pads[i] = pads[i + r] = 0;
    }
    glow_value x = input_t("x", dt, r, dims);
    glow_attr a[] = { GLOW_AINTS(PADS, pads, 2 * r), GLOW_ASTR(MODE, mode),
                      GLOW_AF(VALUE, 0) };
    output(node(NK_PAD, &x, 1, a, 3));
}

static void case_trilu(void)
{
    int64_t dims[6];
    int r = rand_dims(4, 7, dims);
    if (r < 2)
        dims[1] = rint_in(1, 7), r = 2;
    glow_value x = input_t("x", dt, r, dims);
    glow_attr a[] = { GLOW_AI(UPPER, rnd() % 2), GLOW_AI(K, rint_in(-3, 3)) };
    output(node(NK_TRILU, &x, 1, a, 2));
}

/* --- tests, one per kernel family --- */

static void trials_of(const gk_row *row, const char *what, case_fn fn, uint64_t seed0, int n)
{
    for (int t = 0; t < n; t++) {
        uint64_t seed = seed0 + (uint64_t)t;
        pick_dtype(row, seed);
        diff(what, fn, seed, 0, true);
    }
}

static void test_strided(const gk_row *row)
{
    trials_of(row, "Slice", case_slice, 100, trials * 2);
    trials_of(row, "Transpose", case_transpose, 200, trials);
    trials_of(row, "Broadcast", case_broadcast, 300, trials);
    trials_of(row, "Tile", case_tile, 400, trials);
    trials_of(row, "DepthToSpace/SpaceToDepth", case_depth_space, 500, trials);
    check_called(row);
}

static void test_insert(const gk_row *row)
{
    trials_of(row, "InsertTensor", case_insert, 600, trials * 2);
    check_called(row);
}

static void test_pad(const gk_row *row)
{
    trials_of(row, "Pad", case_pad, 700, trials * 2);
    check_called(row);
}

static void test_trilu(const gk_row *row)
{
    trials_of(row, "Trilu", case_trilu, 800, trials);
    check_called(row);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "strided_u8", test_strided }, { "strided_b16", test_strided },
        { "strided_b32", test_strided }, { "strided_b64", test_strided },
        { "insert_u8", test_insert },   { "insert_b16", test_insert },
        { "insert_b32", test_insert },  { "insert_b64", test_insert },
        { "pad_u8", test_pad },         { "pad_b16", test_pad },
        { "pad_b32", test_pad },        { "pad_b64", test_pad },
        { "trilu_u8", test_trilu },     { "trilu_b16", test_trilu },
        { "trilu_b32", test_trilu },    { "trilu_b64", test_trilu },
    };
    set_trials();
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    free_inputs();
    return CHECK_DONE();
}
