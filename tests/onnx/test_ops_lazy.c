// test_ops_lazy.c - Long loops and wide Ifs as single lazy nodes, through compiled programs on
// the interpreter and the cpu backend: a Loop with scan outputs over 10,000 iterations and a
// Scan of length 10,000 (axes, directions) each import as one LOOP node and give exact
// results; a Loop carrying six values with a run-time trip count; an If with five outputs
// whose untaken branch would fail if it ran, and put back inline for bundles; a Loop with scan
// outputs whose body may stop it early (unrolled, or one LOOP node with bounded scan outputs);
// and the one-line refusal (scan outputs of a Loop whose trip count is known only at run time).
#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

static const char *const backends[] = { "interpreter", "cpu" };

static Onnx__AttributeProto *graph_attr(mk_model *mk, Onnx__NodeProto *n, const char *name,
                                        mk_model *body)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, 5);
    a->g = &body->graph;
    return a;
}

/* What the import made: nodes in "main" and how many of them are of `kind`. */
typedef struct shape_of {
    int nodes, of_kind;
} shape_of;

/* Loads mk (its status returned, the message in d) and compiles it for backend into *p
 * (IFs put back inline, as for bundles, with `inline_if`); *sh describes the imported graph. */
static glow_status compile_as(mk_model *mk, const char *backend, bool inline_if,
                              glow_node_kind kind, glow_program **p, shape_of *sh, glow_diag *d)
{
    glow_compile_options o = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED,
                               .inline_control_flow = inline_if };
    *p = NULL;
    *sh = (shape_of){ 0 };
    glow_module *m = mk_load(mk, d);
    if (!m)
        return d->status;
    GLOW_FOR_EACH_NODE(glow_module_function(m, "main"), n) {
        sh->nodes++;
        sh->of_kind += n->kind == kind;
    }
    return glow_program_create(m, &o, p, d);
}

static glow_status compile(mk_model *mk, const char *backend, glow_node_kind kind,
                           glow_program **p, shape_of *sh, glow_diag *d)
{
    return compile_as(mk, backend, false, kind, p, sh, d);
}

static glow_tensor tensor(glow_dtype t, int rank, const int64_t *dims, const void *vals)
{
    glow_type ty = glow_type_make(t, rank, dims);
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &ty, &d);
    if (vals)
        memcpy(x.data, vals, glow_tensor_bytes(&x));
    return x;
}

/* Output i of p has type `want` ("f32[2]"); false (and a failed check) otherwise. */
static bool out_is(glow_program *p, int i, const char *want)
{
    char buf[96];
    glow_tensor t = glow_program_output(p, i);
    CHECK_STR_EQ(glow_type_str(&t.type, buf, sizeof buf), want);
    return strcmp(buf, want) == 0;
}

#define TRIPS 10000

/* Loop(M = 10000, cond = true, y0 = [0, 0]) with body y += x and two scan outputs, y after
 * each iteration and the iteration number as f32: y = 10000 x, ys[t] = (t + 1) x, is[t] = t. */
static void test_loop_scan_outputs(const char *backend)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(2));
    int64_t m = TRIPS;
    uint8_t t = 1;
    float y0[2] = { 0, 0 };
    mk_initializer(mk, mk_tensor_raw(mk, "M", MK_I64, 0, NULL, &m, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "T", MK_BOOL, 0, NULL, &t, 1));
    mk_initializer(mk, mk_tensor_raw(mk, "y0", MK_F32, 1, D(2), y0, sizeof y0));
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_input(body, "y", MK_F32, 1, D(2));
    mk_node(body, "Identity", "c", 1, S("cin"), 1, S("cout"));
    mk_node(body, "Add", "acc", 2, S("y", "x"), 1, S("ynext"));
    Onnx__NodeProto *c = mk_node(body, "Cast", "fi", 1, S("i"), 1, S("fi"));
    mk_attr_int(body, c, "to", MK_F32);
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    mk_output(body, "ynext", MK_F32, 1, D(2));
    mk_output(body, "ynext", MK_F32, 1, D(2));
    mk_output(body, "fi", MK_F32, 0, NULL);
    Onnx__NodeProto *n = mk_node(mk, "Loop", "long", 3, S("M", "T", "y0"), 3,
                                 S("y", "ys", "is"));
    graph_attr(mk, n, "body", body);
    mk_output(mk, "y", MK_F32, 1, D(2));
    mk_output(mk, "ys", MK_F32, 2, D(TRIPS, 2));
    mk_output(mk, "is", MK_F32, 1, D(TRIPS));
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile(mk, backend, NK_LOOP, &p, &sh, &d), GLOW_OK);
    if (!p) {
        fprintf(stderr, "loop with scan outputs on %s: %s\n", backend, d.msg);
        mk_free(mk), mk_free(body);
        return;
    }
    /* One LOOP node and the three saves, not 10,000 copies of the body. */
    CHECK_EQ(sh.of_kind, 1);
    CHECK_EQ(sh.nodes, 4);
    float xv[2] = { 1, 0.5f };
    glow_tensor x = tensor(GLOW_F32, 1, D(2), xv);
    CHECK_EQ(glow_program_run(p, &x, 1, &d), GLOW_OK);
    if (out_is(p, 0, "f32[2]") && out_is(p, 1, "f32[10000, 2]") &&
        out_is(p, 2, "f32[10000]")) {
        const float *y = glow_program_output(p, 0).data, *ys = glow_program_output(p, 1).data;
        const float *is = glow_program_output(p, 2).data;
        CHECK_EQ(y[0], 10000.0f);
        CHECK_EQ(y[1], 5000.0f);
        int bad = 0;
        for (int k = 0; k < TRIPS; k++)
            bad += ys[2 * k] != (float)(k + 1) || ys[2 * k + 1] != 0.5f * (float)(k + 1) ||
                   is[k] != (float)k;
        CHECK_EQ(bad, 0);
    }
    glow_tensor_free(&x);
    glow_program_destroy(p);
    mk_free(mk), mk_free(body);
}

/* Scan-9 over 10,000 columns of x [2, 10000] backwards: s += x[:, T-1-t]; scan output a is s
 * stacked on axis -1 (the last) with direction 1 (so a[:, T-1-t] is s after step t), and b is
 * the column read, stacked on axis 0 forwards (b[t] = x[:, T-1-t]). */
static void test_scan_long(const char *backend)
{
    mk_model *mk = mk_new(11), *body = mk_new(11);
    mk_input(mk, "s0", MK_F32, 1, D(2));
    mk_input(mk, "x", MK_F32, 2, D(2, TRIPS));
    mk_input(body, "s", MK_F32, 1, D(2));
    mk_input(body, "e", MK_F32, 1, D(2));
    mk_node(body, "Add", "add", 2, S("s", "e"), 1, S("sn"));
    mk_node(body, "Identity", "id", 1, S("e"), 1, S("col"));
    mk_output(body, "sn", MK_F32, 1, D(2));
    mk_output(body, "sn", MK_F32, 1, D(2));
    mk_output(body, "col", MK_F32, 1, D(2));
    Onnx__NodeProto *n = mk_node(mk, "Scan", "scan_long", 2, S("s0", "x"), 3,
                                 S("sf", "a", "b"));
    graph_attr(mk, n, "body", body);
    mk_attr_int(mk, n, "num_scan_inputs", 1);
    mk_attr_ints(mk, n, "scan_input_axes", D(1), 1);
    mk_attr_ints(mk, n, "scan_input_directions", D(1), 1);
    mk_attr_ints(mk, n, "scan_output_axes", D(-1, 0), 2);
    mk_attr_ints(mk, n, "scan_output_directions", D(1, 0), 2);
    mk_output(mk, "sf", MK_F32, 1, D(2));
    mk_output(mk, "a", MK_F32, 2, D(2, TRIPS));
    mk_output(mk, "b", MK_F32, 2, D(TRIPS, 2));
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile(mk, backend, NK_LOOP, &p, &sh, &d), GLOW_OK);
    if (!p) {
        fprintf(stderr, "long scan on %s: %s\n", backend, d.msg);
        mk_free(mk), mk_free(body);
        return;
    }
    CHECK_EQ(sh.of_kind, 1);
    CHECK_EQ(sh.nodes, 4);
    /* Small integers: every partial sum is exact in f32. */
    float s0[2] = { 100, -100 }, *xv = malloc(sizeof(float) * 2 * TRIPS);
    for (int k = 0; k < TRIPS; k++)
        xv[k] = (float)(k % 7), xv[TRIPS + k] = (float)(k % 3) - 1;
    glow_tensor ins[2] = { tensor(GLOW_F32, 1, D(2), s0), tensor(GLOW_F32, 2, D(2, TRIPS), xv) };
    CHECK_EQ(glow_program_run(p, ins, 2, &d), GLOW_OK);
    if (out_is(p, 0, "f32[2]") && out_is(p, 1, "f32[2, 10000]") &&
        out_is(p, 2, "f32[10000, 2]")) {
        const float *sf = glow_program_output(p, 0).data, *a = glow_program_output(p, 1).data;
        const float *b = glow_program_output(p, 2).data;
        float s[2] = { s0[0], s0[1] };
        int bad = 0;
        for (int t = 0; t < TRIPS; t++) {
            int col = TRIPS - 1 - t;
            for (int r = 0; r < 2; r++) {
                s[r] += xv[r * TRIPS + col];
                bad += a[r * TRIPS + col] != s[r] || b[2 * t + r] != xv[r * TRIPS + col];
            }
        }
        CHECK_EQ(bad, 0);
        CHECK_EQ(sf[0], s[0]);
        CHECK_EQ(sf[1], s[1]);
    }
    glow_tensor_free(&ins[0]), glow_tensor_free(&ins[1]);
    free(xv);
    glow_program_destroy(p);
    mk_free(mk), mk_free(body);
}

/* A Loop carrying six values with the trip count fed at run time: v_j += j + 1 each
 * iteration, so after M iterations v_j = v0_j + M (j + 1). */
static void test_loop_six_carried(const char *backend)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    const char *v0[6] = { "v0", "v1", "v2", "v3", "v4", "v5" };
    const char *vin[6] = { "a0", "a1", "a2", "a3", "a4", "a5" };
    const char *vout[6] = { "b0", "b1", "b2", "b3", "b4", "b5" };
    const char *res[6] = { "r0", "r1", "r2", "r3", "r4", "r5" };
    const char *inc[6] = { "k0", "k1", "k2", "k3", "k4", "k5" };
    mk_input(mk, "M", MK_I64, 0, NULL);
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_node(body, "Identity", "c", 1, S("cin"), 1, S("cout"));
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    for (int j = 0; j < 6; j++) {
        mk_input(mk, v0[j], MK_F32, 1, D(3));
        float k = (float)(j + 1);
        mk_initializer(body, mk_tensor_raw(body, inc[j], MK_F32, 0, NULL, &k, 4));
        mk_input(body, vin[j], MK_F32, 1, D(3));
        mk_node(body, "Add", vout[j], 2, (const char *[]){ vin[j], inc[j] }, 1, &vout[j]);
        mk_output(body, vout[j], MK_F32, 1, D(3));
    }
    const char *lin[8] = { "M", "", "v0", "v1", "v2", "v3", "v4", "v5" };
    Onnx__NodeProto *n = mk_node(mk, "Loop", "six", 8, lin, 6, res);
    graph_attr(mk, n, "body", body);
    for (int j = 0; j < 6; j++)
        mk_output(mk, res[j], MK_F32, 1, D(3));
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile(mk, backend, NK_LOOP, &p, &sh, &d), GLOW_OK);
    if (!p) {
        fprintf(stderr, "six carried values on %s: %s\n", backend, d.msg);
        mk_free(mk), mk_free(body);
        return;
    }
    CHECK_EQ(sh.of_kind, 1);
    for (int64_t trips = 3; trips <= 7; trips += 4) {
        glow_tensor ins[7];
        ins[0] = tensor(GLOW_I64, 0, NULL, &trips);
        for (int j = 0; j < 6; j++) {
            float v[3] = { (float)j, 10, -(float)j };
            ins[1 + j] = tensor(GLOW_F32, 1, D(3), v);
        }
        CHECK_EQ(glow_program_run(p, ins, 7, &d), GLOW_OK);
        for (int j = 0; j < 6; j++) {
            const float *r = glow_program_output(p, j).data;
            float add = (float)trips * (float)(j + 1);
            CHECK_EQ(r[0], (float)j + add);
            CHECK_EQ(r[1], 10 + add);
            CHECK_EQ(r[2], -(float)j + add);
        }
        for (int j = 0; j < 7; j++)
            glow_tensor_free(&ins[j]);
    }
    glow_program_destroy(p);
    mk_free(mk), mk_free(body);
}

/* A Loop whose operands are all constants and whose condition stays true compiles: the
 * optimizer's constant folding must not run it (it would never end). */
static void test_loop_constant_forever(void)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    bool yes = true;
    float v0 = 1;
    mk_initializer(mk, mk_tensor_raw(mk, "go", MK_BOOL, 0, NULL, &yes, 1));
    mk_initializer(mk, mk_tensor_raw(mk, "v0", MK_F32, 0, NULL, &v0, 4));
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_input(body, "a", MK_F32, 0, NULL);
    mk_node(body, "Identity", "c", 1, S("cin"), 1, S("cout"));
    mk_node(body, "Add", "add", 2, (const char *[]){ "a", "a" }, 1, S("b"));
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    mk_output(body, "b", MK_F32, 0, NULL);
    Onnx__NodeProto *n = mk_node(mk, "Loop", "forever", 3, (const char *[]){ "", "go", "v0" },
                                 1, S("r"));
    graph_attr(mk, n, "body", body);
    mk_output(mk, "r", MK_F32, 0, NULL);
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile(mk, "interpreter", NK_LOOP, &p, &sh, &d), GLOW_OK);
    CHECK_EQ(sh.of_kind, 1);
    if (p)
        glow_program_destroy(p);
    else
        fprintf(stderr, "constant while-true Loop: %s\n", d.msg);
    mk_free(mk), mk_free(body);
}

/* An If with five outputs decided at run time is one IF node that runs only the taken
 * branch: the else branch gathers index 5 of a 3-element input, which fails if it runs. */
static void test_if_five(const char *backend)
{
    mk_model *mk = mk_new(13), *then_g = mk_new(13), *else_g = mk_new(13);
    mk_input(mk, "c", MK_BOOL, 0, NULL);
    mk_input(mk, "x", MK_F32, 1, D(3));
    int64_t five = 5, three = 3;
    mk_initializer(mk, mk_tensor_raw(mk, "five", MK_I64, 1, D(1), &five, 8));
    mk_initializer(else_g, mk_tensor_raw(else_g, "shape3", MK_I64, 1, D(1), &three, 8));
    const char *ops[5] = { "Neg", "Abs", "Relu", "Exp", "Identity" };
    const char *tn[5] = { "t0", "t1", "t2", "t3", "t4" }, *en[5] = { "e0", "e1", "e2", "e3",
                                                                     "e4" };
    const char *outs[5] = { "r0", "r1", "r2", "r3", "r4" };
    for (int i = 0; i < 5; i++) {
        mk_node(then_g, ops[i], tn[i], 1, S("x"), 1, &tn[i]);
        mk_output(then_g, tn[i], MK_F32, 1, D(3));
    }
    mk_node(else_g, "Gather", "g", 2, S("x", "five"), 1, S("bad1"));
    mk_node(else_g, "Expand", "ex", 2, S("bad1", "shape3"), 1, S("bad"));
    for (int i = 0; i < 5; i++) {
        mk_node(else_g, "Identity", en[i], 1, S("bad"), 1, &en[i]);
        mk_output(else_g, en[i], MK_F32, 1, D(3));
    }
    Onnx__NodeProto *n = mk_node(mk, "If", "wide", 1, S("c"), 5, outs);
    graph_attr(mk, n, "then_branch", then_g);
    graph_attr(mk, n, "else_branch", else_g);
    for (int i = 0; i < 5; i++)
        mk_output(mk, outs[i], MK_F32, 1, D(3));
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile(mk, backend, NK_IF, &p, &sh, &d), GLOW_OK);
    if (!p) {
        fprintf(stderr, "five-output If on %s: %s\n", backend, d.msg);
        mk_free(mk), mk_free(then_g), mk_free(else_g);
        return;
    }
    CHECK_EQ(sh.of_kind, 1);
    CHECK_EQ(sh.nodes, 6);   /* the IF and five saves: no WHERE */
    float xv[3] = { -1, 0, 2 };
    uint8_t cv = 1;
    glow_tensor ins[2] = { tensor(GLOW_BOOL, 0, NULL, &cv), tensor(GLOW_F32, 1, D(3), xv) };
    CHECK_EQ(glow_program_run(p, ins, 2, &d), GLOW_OK);
    const float *r[5];
    for (int i = 0; i < 5; i++)
        r[i] = glow_program_output(p, i).data;
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(r[0][k], -xv[k]);
        CHECK_EQ(r[1][k], xv[k] < 0 ? -xv[k] : xv[k]);
        CHECK_EQ(r[2][k], xv[k] > 0 ? xv[k] : 0);
        CHECK_NEAR(r[3][k], expf(xv[k]), 1e-5 * expf(xv[k]));
        CHECK_EQ(r[4][k], xv[k]);
    }
    /* The else branch runs only now, and fails. */
    ((uint8_t *)ins[0].data)[0] = 0;
    glow_diag d2 = { 0 };
    CHECK(glow_program_run(p, ins, 2, &d2) != GLOW_OK);
    CHECK_CONTAINS(d2.msg, "out of range");
    glow_tensor_free(&ins[0]), glow_tensor_free(&ins[1]);
    glow_program_destroy(p);
    mk_free(mk), mk_free(then_g), mk_free(else_g);
}

/* The same five outputs with a valid else branch (2x), put back inline as for bundles: both
 * branches become graph nodes and Where picks each result. */
static void test_if_five_inline(void)
{
    mk_model *mk = mk_new(13), *then_g = mk_new(13), *else_g = mk_new(13);
    mk_input(mk, "c", MK_BOOL, 0, NULL);
    mk_input(mk, "x", MK_F32, 1, D(3));
    float two = 2;
    mk_initializer(mk, mk_tensor_raw(mk, "two", MK_F32, 0, NULL, &two, 4));
    const char *tn[5] = { "t0", "t1", "t2", "t3", "t4" }, *en[5] = { "e0", "e1", "e2", "e3",
                                                                     "e4" };
    const char *outs[5] = { "r0", "r1", "r2", "r3", "r4" }, *ops[5] = { "Neg", "Abs", "Relu",
                                                                       "Neg", "Identity" };
    for (int i = 0; i < 5; i++) {
        mk_node(then_g, ops[i], tn[i], 1, S("x"), 1, &tn[i]);
        mk_output(then_g, tn[i], MK_F32, 1, D(3));
        mk_node(else_g, "Mul", en[i], 2, S("x", "two"), 1, &en[i]);
        mk_output(else_g, en[i], MK_F32, 1, D(3));
    }
    Onnx__NodeProto *n = mk_node(mk, "If", "wide_inline", 1, S("c"), 5, outs);
    graph_attr(mk, n, "then_branch", then_g);
    graph_attr(mk, n, "else_branch", else_g);
    for (int i = 0; i < 5; i++)
        mk_output(mk, outs[i], MK_F32, 1, D(3));
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile_as(mk, "interpreter", true, NK_IF, &p, &sh, &d), GLOW_OK);
    if (!p) {
        fprintf(stderr, "five-output If inline: %s\n", d.msg);
        mk_free(mk), mk_free(then_g), mk_free(else_g);
        return;
    }
    CHECK_EQ(sh.of_kind, 1);
    float xv[3] = { -1, 0, 2 };
    for (uint8_t cv = 0; cv < 2; cv++) {
        glow_tensor ins[2] = { tensor(GLOW_BOOL, 0, NULL, &cv), tensor(GLOW_F32, 1, D(3), xv) };
        CHECK_EQ(glow_program_run(p, ins, 2, &d), GLOW_OK);
        for (int i = 0; i < 5; i++) {
            const float *r = glow_program_output(p, i).data;
            for (int k = 0; k < 3; k++) {
                float x = xv[k], want = !cv ? 2 * x : i == 0 || i == 3 ? -x
                                      : i == 1 ? fabsf(x) : i == 2 ? (x > 0 ? x : 0) : x;
                CHECK_EQ(r[k], want);
            }
        }
        glow_tensor_free(&ins[0]), glow_tensor_free(&ins[1]);
    }
    glow_program_destroy(p);
    mk_free(mk), mk_free(then_g), mk_free(else_g);
}

/* Loop(M = 100) with a scan output whose body computes its condition: it may stop before M.
 * With cout = i < 70 the condition folds at each unrolled iteration: 71 iterations, ys[t] = t,
 * no LOOP node. With cout = i < x read from the data it cannot be unrolled: one LOOP node whose
 * scan output is bounded by M (test_loop_dyn.c has more); x = 5 gives 6 iterations. */
static void test_loop_scan_stops(void)
{
    for (int data_dep = 0; data_dep < 2; data_dep++) {
        mk_model *mk = mk_new(13), *body = mk_new(13);
        mk_input(mk, "x", MK_F32, 0, NULL);
        int64_t m = 100, seventy = 70;
        uint8_t t = 1;
        mk_initializer(mk, mk_tensor_raw(mk, "M", MK_I64, 0, NULL, &m, 8));
        mk_initializer(mk, mk_tensor_raw(mk, "T", MK_BOOL, 0, NULL, &t, 1));
        mk_initializer(mk, mk_tensor_raw(mk, "seventy", MK_I64, 0, NULL, &seventy, 8));
        mk_input(body, "i", MK_I64, 0, NULL);
        mk_input(body, "cin", MK_BOOL, 0, NULL);
        Onnx__NodeProto *c = mk_node(body, "Cast", "fi", 1, S("i"), 1, S("fi"));
        mk_attr_int(body, c, "to", MK_F32);
        if (data_dep)
            mk_node(body, "Less", "lt", 2, S("fi", "x"), 1, S("cout"));
        else
            mk_node(body, "Less", "lt", 2, S("i", "seventy"), 1, S("cout"));
        mk_output(body, "cout", MK_BOOL, 0, NULL);
        mk_output(body, "fi", MK_F32, 0, NULL);
        Onnx__NodeProto *n = mk_node(mk, "Loop", "stops", 2, S("M", "T"), 1, S("ys"));
        graph_attr(mk, n, "body", body);
        mk_output(mk, "ys", MK_F32, 1, D(71));
        glow_diag d = { 0 };
        glow_program *p;
        shape_of sh;
        glow_status s = compile(mk, "interpreter", NK_LOOP, &p, &sh, &d);
        CHECK_EQ(s, GLOW_OK);
        CHECK_EQ(sh.of_kind, data_dep);
        int iters = data_dep ? 6 : 71;
        float xv = 5;
        glow_tensor x = tensor(GLOW_F32, 0, NULL, &xv);
        CHECK(p && glow_program_run(p, &x, 1, &d) == GLOW_OK);
        if (p && out_is(p, 0, data_dep ? "f32[6]" : "f32[71]")) {
            const float *ys = glow_program_output(p, 0).data;
            int bad = 0;
            for (int k = 0; k < iters; k++)
                bad += ys[k] != (float)k;
            CHECK_EQ(bad, 0);
        }
        glow_tensor_free(&x);
        if (p)
            glow_program_destroy(p);
        mk_free(mk), mk_free(body);
    }
}

/* Scan outputs of a Loop whose trip count is fed at run time have no bound: refused with
 * one line naming the node. */
static void test_refusals(void)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    mk_input(mk, "M", MK_I64, 0, NULL);
    mk_input(mk, "x", MK_F32, 1, D(2));
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_input(body, "y", MK_F32, 1, D(2));
    mk_node(body, "Identity", "c", 1, S("cin"), 1, S("cout"));
    mk_node(body, "Add", "acc", 2, S("y", "y"), 1, S("ynext"));
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    mk_output(body, "ynext", MK_F32, 1, D(2));
    mk_output(body, "ynext", MK_F32, 1, D(2));
    Onnx__NodeProto *n = mk_node(mk, "Loop", "unbounded", 3, S("M", "", "x"), 2,
                                 S("y", "ys"));
    graph_attr(mk, n, "body", body);
    mk_output(mk, "y", MK_F32, 1, D(2));
    mk_output(mk, "ys", MK_F32, 2, D(4, 2));
    glow_diag d = { 0 };
    glow_program *p;
    shape_of sh;
    CHECK_EQ(compile(mk, "interpreter", NK_LOOP, &p, &sh, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "Loop 'unbounded'");
    CHECK_CONTAINS(d.msg, "no bound");
    CHECK(!strchr(d.msg, '\n'));
    mk_free(mk), mk_free(body);
}

int main(void)
{
    for (int b = 0; b < 2; b++) {
        test_loop_scan_outputs(backends[b]);
        test_scan_long(backends[b]);
        test_loop_six_carried(backends[b]);
        test_if_five(backends[b]);
    }
    test_if_five_inline();
    test_loop_scan_stops();
    test_loop_constant_forever();
    test_refusals();
    return CHECK_DONE();
}
