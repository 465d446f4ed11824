// test_cpu_kernels_move.c - Differential tests of the data-movement kernels of any element kind
// (kernels.def's strided, insert, pad, trilu, gather*, scatter*, one_hot and reverse_sequence
// rows, one per element size): Slice with negative and large steps, Transpose, Broadcast,
// Tile, DepthToSpace, SpaceToDepth, InsertTensor, Pad (reflect, edge, wrap), Trilu, the
// gathers and scatters (constant or run-time indices, the scatters' reductions), OneHot
// (indices of several kinds) and ReverseSequence on random shapes of rank 1 to 6 with 1-sized
// and odd dims, each on an element type of the row's size, against the interpreter, with 1
// and 2 threads bit-identical and no fallback. Then an index out of range at run time: the
// cpu run fails naming the instruction, as the interpreter's does. Last, the last resort: a
// move too wide for the strided kernel's calls falls back, and a bundle refuses it.
#include <unistd.h>

#include "cpu/cpu_diff.h"
#include "backend/cpu/bundle.h"

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
    int r = rand_shape(6, 7, dims);
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
    int r = rand_shape(6, 6, dims);
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
    int r = rand_shape(6, 6, ydims), xr = (int)rint_in(1, r);
    for (int j = 0; j < xr; j++)
        xdims[j] = rnd() % 2 ? 1 : ydims[j + r - xr];
    glow_value x = input_t("x", dt, xr, xdims);
    glow_type ty = glow_type_make(dt, r, ydims);
    output(build_node(NK_BROADCAST, &x, 1, NULL, 0, &ty));
}

static void case_tile(void)
{
    int64_t dims[6], rep[6];
    /* Half the cases rank 4 with every dim tiled: walks of 8 dims, split into calls. */
    bool wide = rnd() % 2;
    int r = wide ? 4 : rand_shape(4, 5, dims);
    for (int i = 0; i < r; i++) {
        if (wide)
            dims[i] = rint_in(2, 3);
        rep[i] = wide ? rint_in(2, 3) : rnd() % 2 ? 1 : rint_in(1, 3);
    }
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
    int r = rand_shape(6, 6, big);
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
    int r = rand_shape(5, 6, dims);
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
    int r = rand_shape(4, 7, dims);
    if (r < 2)
        dims[1] = rint_in(1, 7), r = 2;
    glow_value x = input_t("x", dt, r, dims);
    glow_attr a[] = { GLOW_AI(UPPER, rnd() % 2), GLOW_AI(K, rint_in(-3, 3)) };
    output(node(NK_TRILU, &x, 1, a, 2));
}

/* An index tensor (i32 or i64 at random) whose element e lies in [-sizes[e % m],
 * sizes[e % m]) (negative indices count from the end, `lo` 0: none): a constant or, half the
 * time, an input whose values only the run sees. */
static glow_value index_tensor(int rank, const int64_t *dims, int64_t m, const int64_t *sizes,
                               int64_t lo)
{
    static int count;
    glow_dtype t = rnd() % 2 ? GLOW_I32 : GLOW_I64;
    glow_type ty = glow_type_make(t, rank, dims);
    int64_t n = glow_type_numel(&ty);
    bool runtime = rnd() % 2 && ninputs < MAX_IN;
    glow_value v = runtime ? input_t("idx", t, rank, dims) : (glow_value){ 0 };
    void *data = runtime ? inputs[ninputs - 1].data : calloc((size_t)(n > 0 ? n : 1), 8);
    for (int64_t e = 0; e < n; e++)
        glow_store_i64(t, data, (size_t)e, rint_in(lo * sizes[e % m], sizes[e % m] - 1));
    if (runtime)
        return v;
    char name[32];
    snprintf(name, sizeof name, "idx%d", count++);
    v = glow_val(glow_constant_create(M, name, &ty, data), 0);
    free(data);
    return v;
}

static glow_value const_index(int rank, const int64_t *dims, int64_t m, const int64_t *sizes)
{
    return index_tensor(rank, dims, m, sizes, -1);
}

/* The scatters' reduction, none half the time. */
static const char *reduction(void)
{
    static const char *const names[] = { "add", "mul", "max", "min" };
    return rnd() % 2 ? "none" : names[rnd() % 4];
}

static void case_gather(void)
{
    /* Two indices at least: the optimizer turns a one-index Gather into a Slice. */
    int64_t dims[6], idims[2] = { rint_in(2, 4), rint_in(1, 3) };
    int r = rand_shape(4, 5, dims), ir = (int)rint_in(1, 2);
    int64_t axis = rint_in(0, r - 1);
    glow_value ins[2] = { input_t("x", dt, r, dims), const_index(ir, idims, 1, &dims[axis]) };
    glow_attr a[] = { GLOW_AI(AXIS, axis) };
    output(node(NK_GATHER, ins, 2, a, 1));
}

/* GatherElements, or ScatterElements (updates shaped like the indices) when `scatter`. */
static void elements(bool scatter)
{
    int64_t dims[6], idims[6];
    int r = rand_shape(4, 5, dims);
    int64_t axis = rint_in(0, r - 1);
    for (int i = 0; i < r; i++)
        idims[i] = i == axis && !scatter ? rint_in(1, 6) : rint_in(1, dims[i]);
    glow_value ins[3] = { input_t("x", dt, r, dims), const_index(r, idims, 1, &dims[axis]),
                          input_t("u", dt, r, idims) };
    glow_attr a[] = { GLOW_AI(AXIS, axis), GLOW_ASTR(REDUCTION, reduction()) };
    output(node(scatter ? NK_SCATTER_ELEMENTS : NK_GATHER_ELEMENTS, ins, scatter ? 3 : 2, a,
                scatter ? 2 : 1));
}

static void case_gather_elements(void) { elements(false); }
static void case_scatter_elements(void) { elements(true); }

/* GatherND (batch dims b), or ScatterND (b = 0, updates idx[:-1] + x[m:]) when `scatter`. */
static void nd(bool scatter)
{
    int64_t dims[6], idims[6], udims[6];
    int r = rand_shape(4, 4, dims);
    int64_t b = scatter || r < 2 ? 0 : rint_in(0, 1), m = rint_in(1, r - b);
    int ir = 0, ur = 0;
    for (int i = 0; i < b; i++)
        idims[ir++] = dims[i];
    for (int i = (int)rint_in(0, 2); i > 0; i--)
        idims[ir++] = rint_in(1, 3);
    idims[ir++] = m;
    for (int i = 0; i < ir - 1; i++)
        udims[ur++] = idims[i];
    for (int i = (int)(b + m); i < r; i++)
        udims[ur++] = dims[i];
    glow_value ins[3] = { input_t("x", dt, r, dims), const_index(ir, idims, m, &dims[b]),
                          input_t("u", dt, ur, udims) };
    glow_attr a[] = { GLOW_AI(BATCH_DIMS, b), GLOW_ASTR(REDUCTION, reduction()) };
    if (scatter)
        output(node(NK_SCATTER_ND, ins, 3, &a[1], 1));
    else
        output(node(NK_GATHER_ND, ins, 2, a, 1));
}

static void case_gather_nd(void) { nd(false); }
static void case_scatter_nd(void) { nd(true); }

/* OneHot of run-time indices of several kinds, integers in [-50, 50] (floats in [-2, 2]):
 * some negative (counting from the end), some beyond the depth (all-off rows). */
static void case_one_hot(void)
{
    static const glow_dtype kinds[] = { GLOW_I32, GLOW_I64, GLOW_F32, GLOW_F64, GLOW_I8,
                                        GLOW_U8, GLOW_F16 };
    int64_t dims[6], depth = rint_in(1, 60);
    int r = rand_shape(3, 5, dims);
    int64_t axis = rint_in(0, r);
    glow_dtype it = kinds[rnd() % (sizeof kinds / sizeof kinds[0])];
    glow_value ins[3] = { input_t("i", it, r, dims), cst_t(GLOW_I64, 1, DIMS(1)),
                          input_t("v", dt, 1, DIMS(2)) };
    glow_attr a[] = { GLOW_AI(AXIS, axis), GLOW_AI(DEPTH, depth) };
    output(node(NK_ONE_HOT, ins, 3, a, 2));
}

/* ReverseSequence over time and batch dims 0 and 1 in either order, run-time lengths in
 * [0, steps]. */
static void case_reverse_sequence(void)
{
    int64_t dims[6];
    int r = rand_shape(4, 6, dims);
    if (r < 2)
        dims[1] = rint_in(1, 6), r = 2;
    int64_t t = rnd() % 2, b = 1 - t, steps = dims[t];
    glow_value ins[2] = { input_t("x", dt, r, dims),
                          index_tensor(1, &dims[b], 1, &steps, 0) };
    /* index_tensor draws below the bound: lengths up to steps need a bound one more. */
    if (ninputs == 2)
        for (int64_t i = 0; i < dims[b]; i++)
            if (rnd() % 3 == 0)
                glow_store_i64(inputs[1].type.dtype, inputs[1].data, (size_t)i, steps);
    glow_attr a[] = { GLOW_AI(TIME_AXIS, t), GLOW_AI(BATCH_AXIS, b) };
    output(node(NK_REVERSE_SEQUENCE, ins, 2, a, 2));
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

/* Half the trials, at least one: every case runs for each of the 4 element sizes, so the
 * program stays near a minute in release. */
static int half(void) { return (trials + 1) / 2; }

static void test_strided(const gk_row *row)
{
    trials_of(row, "Slice", case_slice, 100, trials);
    trials_of(row, "Transpose", case_transpose, 200, half());
    trials_of(row, "Broadcast", case_broadcast, 300, half());
    trials_of(row, "Tile", case_tile, 400, half());
    trials_of(row, "DepthToSpace/SpaceToDepth", case_depth_space, 500, half());
    check_called(row);
}

static void test_insert(const gk_row *row)
{
    trials_of(row, "InsertTensor", case_insert, 600, trials);
    check_called(row);
}

static void test_pad(const gk_row *row)
{
    trials_of(row, "Pad", case_pad, 700, trials);
    check_called(row);
}

static void test_trilu(const gk_row *row)
{
    trials_of(row, "Trilu", case_trilu, 800, half());
    check_called(row);
}

static void test_gather(const gk_row *row)
{
    trials_of(row, "Gather", case_gather, 900, half());
    check_called(row);
}

static void test_gather_elements(const gk_row *row)
{
    trials_of(row, "GatherElements", case_gather_elements, 1000, half());
    check_called(row);
}

static void test_gather_nd(const gk_row *row)
{
    trials_of(row, "GatherND", case_gather_nd, 1100, half());
    check_called(row);
}

static void test_scatter_elements(const gk_row *row)
{
    trials_of(row, "ScatterElements", case_scatter_elements, 1200, half());
    check_called(row);
}

static void test_scatter_nd(const gk_row *row)
{
    trials_of(row, "ScatterND", case_scatter_nd, 1300, half());
    check_called(row);
}

static void test_one_hot(const gk_row *row)
{
    trials_of(row, "OneHot", case_one_hot, 1400, half());
    check_called(row);
}

static void test_reverse_sequence(const gk_row *row)
{
    trials_of(row, "ReverseSequence", case_reverse_sequence, 1500, half());
    check_called(row);
}

/* --- a bad index at run time --- */

/* Gather of x [5][3] by run-time indices {1, -5, 7, 0}. */
static void case_bad_gather(void)
{
    glow_value ins[2] = { input_t("x", GLOW_F32, 2, DIMS(5, 3)),
                          input_t("idx", GLOW_I64, 1, DIMS(4)) };
    memcpy(inputs[1].data, (const int64_t[]){ 1, -5, 7, 0 }, 4 * sizeof(int64_t));
    glow_attr a[] = { GLOW_AI(AXIS, 0) };
    glow_node *n = glow_build(F, NK_GATHER, "bad_gather", ins, 2, a, 1, NULL, 0, &D);
    output(glow_val(n, 0));
}

/* ReverseSequence of x [3][2] (time first), lengths {1, 4}. */
static void case_bad_lengths(void)
{
    glow_value ins[2] = { input_t("x", GLOW_F32, 2, DIMS(3, 2)),
                          input_t("lens", GLOW_I32, 1, DIMS(2)) };
    memcpy(inputs[1].data, (const int32_t[]){ 1, 4 }, 2 * sizeof(int32_t));
    glow_attr a[] = { GLOW_AI(TIME_AXIS, 0), GLOW_AI(BATCH_AXIS, 1) };
    glow_node *n = glow_build(F, NK_REVERSE_SEQUENCE, "bad_lens", ins, 2, a, 2, NULL, 0, &D);
    output(glow_val(n, 0));
}

/* The run fails on every backend and thread count with the interpreter's words, `want`:
 * on the cpu backend in a kernel (no fallback). */
static void check_run_fails(case_fn fn, const char *want)
{
    const char *backends[] = { "interpreter", "cpu", "cpu" };
    for (int i = 0; i < 3; i++) {
        glow_type t;
        int fb = 0;
        void *out = run(fn, 1, backends[i], i == 2 ? 2 : 1, &t, &fb);
        CHECK(out == NULL);
        CHECK_EQ(fb, 0);
        free(out);
        if (!strstr(D.msg, want)) {
            fprintf(stderr, "%s: expected a message with \"%s\"\n", backends[i], want);
            CHECK(false);
        }
    }
}

static void test_bad_indices(void)
{
    check_run_fails(case_bad_gather,
                    "Gather 'bad_gather': index 7 at position 2 is out of range [-5, 5)");
    check_run_fails(case_bad_lengths,
                    "ReverseSequence 'bad_lens': sequence length 4 of batch 1 outside [0, 3]");
}

/* A Tile of rank 6 with every dim tiled walks 12 dims: 3^6 strided calls, more than
 * CPU_MAX_CALLS, so it is the last resort: the evaluator runs it (same results), --stats
 * counts it, and a bundle, which has no evaluator, refuses the program naming it and writes
 * nothing. */
static void case_tile_many(void)
{
    glow_value x = input_t("x", GLOW_F32, 6, DIMS(3, 3, 3, 3, 3, 3));
    glow_attr a[] = { GLOW_AINTS(REPEATS, DIMS(3, 3, 3, 3, 3, 3), 6) };
    output(node(NK_TILE, &x, 1, a, 1));
}

static void test_last_resort(void)
{
    diff("Tile beyond CPU_MAX_CALLS", case_tile_many, 1, 0, false);
    build(case_tile_many, 1);
    glow_program *p = NULL;
    glow_compile_options o = { .backend = "cpu", .threads = 1,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_diag_clear(&D);
    CHECK(glow_program_create(M, &o, &p, &D) == GLOW_OK);
    const ir_instr *const *fb = NULL;
    CHECK_EQ(p ? glow_program_fallbacks(p, &fb) : -1, 1);
    if (fb)
        CHECK_EQ((int)fb[0]->kind, (int)NK_TILE);
    char dir[] = "/tmp/glowc_refuse_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    glow_bundle_options bo = { .dir = dir, .name = "refused", .threads = 1 };
    glow_bundle_ios io = { 0 };
    glow_bundle_info info;
    glow_diag_clear(&D);
    CHECK(p && glow_bundle_emit(p->ir, &io, &bo, &info, &D) == GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(D.msg, "no kernel");
    CHECK_CONTAINS(D.msg, "Tile");
    char obj[64];
    snprintf(obj, sizeof obj, "%s/refused.o", dir);
    CHECK(access(obj, F_OK) != 0);
    rmdir(dir);
    glow_program_destroy(p);
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
        { "gather_u8", test_gather },   { "gather_b16", test_gather },
        { "gather_b32", test_gather },  { "gather_b64", test_gather },
        { "gather_elements_u8", test_gather_elements },
        { "gather_elements_b16", test_gather_elements },
        { "gather_elements_b32", test_gather_elements },
        { "gather_elements_b64", test_gather_elements },
        { "gather_nd_u8", test_gather_nd },   { "gather_nd_b16", test_gather_nd },
        { "gather_nd_b32", test_gather_nd },  { "gather_nd_b64", test_gather_nd },
        { "scatter_elements_u8", test_scatter_elements },
        { "scatter_elements_b16", test_scatter_elements },
        { "scatter_elements_b32", test_scatter_elements },
        { "scatter_elements_b64", test_scatter_elements },
        { "scatter_nd_u8", test_scatter_nd },   { "scatter_nd_b16", test_scatter_nd },
        { "scatter_nd_b32", test_scatter_nd },  { "scatter_nd_b64", test_scatter_nd },
        { "one_hot_u8", test_one_hot },   { "one_hot_b16", test_one_hot },
        { "one_hot_b32", test_one_hot },  { "one_hot_b64", test_one_hot },
        { "reverse_sequence_u8", test_reverse_sequence },
        { "reverse_sequence_b16", test_reverse_sequence },
        { "reverse_sequence_b32", test_reverse_sequence },
        { "reverse_sequence_b64", test_reverse_sequence },
    };
    set_trials();
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    test_bad_indices();
    test_last_resort();
    free_inputs();
    return CHECK_DONE();
}
