// test_ops_control.c - If, Loop and Scan loaders: node-suite models load with the right output
// types and compute the expected outputs (graph evaluated node by node); in-memory models check
// scoping of subgraph names, loops ended by their body's condition, Scan axes and directions,
// lazy If (only the taken branch runs) and Loop run as a loop (run-time condition, large trip
// count), and the unsupported cases (run-time trip counts with scan outputs, mismatched If
// branches).
#include "check.h"
#include "testlib/cf_eval.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

/* --- node suite --- */

static cf_result check_node_test(const char *test, unsigned freeze, int nout,
                                 const char *const *types)
{
    cf_result r;
    CHECK(cf_passes(test, freeze, nout, types, &r));
    return r;
}

static void test_node_suite(void)
{
    /* The condition fed at run time: one lazy IF node whose branches are bodies of their own
     * (2 nodes: if, save). Frozen: the chosen branch alone (its constant). */
    cf_result r = check_node_test("test_if", 0, 1, S("f32[5]"));
    CHECK_EQ(r.nnodes, 2);
    r = check_node_test("test_if", 1, 1, S("f32[5]"));
    CHECK_EQ(r.nnodes, 1);

    /* Trip count and condition frozen (inputs 0, 1), y fed: five iterations unrolled. */
    check_node_test("test_loop11", 3, 2, S("f32[1]", "f32[5, 1]"));
    check_node_test("test_scan9_sum", 0, 2, S("f32[2]", "f32[3, 2]"));
    check_node_test("test_scan_sum", 0, 2, S("f32[1, 2]", "f32[1, 3, 2]"));
    check_node_test("test_scan9_multi_state", 0, 3, S("f32[2]", "f32[2]", "f32[3, 2]"));
    check_node_test("test_scan9_scalar", 0, 2, S("f32[]", "f32[5]"));
    /* Range's function body loops ceil((limit - start) / delta) times: known once the inputs
     * are constants. */
    check_node_test("test_range_float_type_positive_delta_expanded", 7, 1, S("f32[2]"));
    check_node_test("test_range_int32_type_negative_delta_expanded", 7, 1, S("i32[2]"));
    check_node_test("test_range_float16_type_positive_delta_expanded", 7, 1, S("f16[2]"));

    /* Fed trip counts are data-dependent: unsupported, naming the node. */
    r = cf_run("node", "test_loop11", 0);
    CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(r.d.msg, "Loop 'Loop#0'");
    CHECK_CONTAINS(r.d.msg, "trip count");
    r = cf_run("node", "test_range_float_type_positive_delta_expanded", 0);
    CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(r.d.msg, "trip count");
}

/* --- in-memory models --- */

static Onnx__AttributeProto *graph_attr(mk_model *mk, Onnx__NodeProto *n, const char *name,
                                        mk_model *body)
{
    Onnx__AttributeProto *a = mk_attr(mk, n, name, 5);
    a->g = &body->graph;
    return a;
}

static glow_tensor f32(int rank, const int64_t *dims, const float *vals)
{
    glow_type t = glow_type_make(GLOW_F32, rank, dims);
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &t, &d);
    if (vals)
        memcpy(x.data, vals, glow_tensor_bytes(&x));
    return x;
}

/* One check per case; cf_ok prints what went wrong. */
static void expect_ok(const char *what, const cf_result *r, int nout)
{
    CHECK(cf_ok(what, r, nout));
}

/* A branch defines "t" and "x" (shadowing the graph input x) and reads the outer "w"; after the
 * If, the outer graph's "x" must still be the input and "t" must be unknown again. */
static void test_if_scoping(void)
{
    mk_model *mk = mk_new(13), *then_g = mk_new(13), *else_g = mk_new(13);
    mk_input(mk, "c", MK_BOOL, 0, NULL);
    mk_input(mk, "x", MK_F32, 1, D(3));
    float wv[3] = { 10, 20, 30 };
    mk_initializer(mk, mk_tensor_raw(mk, "w", MK_F32, 1, D(3), wv, sizeof wv));
    /* then: x = w + w; t = x * w -> 2 w^2 */
    mk_node(then_g, "Add", "a", 2, S("w", "w"), 1, S("x"));
    mk_node(then_g, "Mul", "m", 2, S("x", "w"), 1, S("t"));
    mk_output(then_g, "t", MK_F32, 1, D(3));
    /* else: the outer x itself */
    mk_node(else_g, "Identity", "id", 1, S("x"), 1, S("t"));
    mk_output(else_g, "t", MK_F32, 1, D(3));
    Onnx__NodeProto *n = mk_node(mk, "If", "if0", 1, S("c"), 1, S("r"));
    graph_attr(mk, n, "then_branch", then_g);
    graph_attr(mk, n, "else_branch", else_g);
    mk_node(mk, "Add", "after", 2, S("r", "x"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 1, D(3));

    float xv[3] = { 1, 2, 3 };
    glow_tensor ins[2] = { { .data = NULL }, f32(1, D(3), xv) };
    glow_type bt = glow_type_scalar(GLOW_BOOL);
    glow_diag d = { 0 };
    glow_tensor_alloc(&ins[0], &bt, &d);
    char *names[2] = { "c", "x" };
    for (int c = 0; c < 2; c++) {
        ((uint8_t *)ins[0].data)[0] = (uint8_t)c;
        float yv[3];
        for (int i = 0; i < 3; i++)
            yv[i] = c ? 2 * wv[i] * wv[i] + xv[i] : 2 * xv[i];
        glow_tensor want = f32(1, D(3), yv);
        cf_result r = cf_run_model(mk, ins, names, 2, &want, 1);
        expect_ok(c ? "if scoping (then)" : "if scoping (else)", &r, 1);
        glow_tensor_free(&want);
    }

    /* A later node reading the branch-local "t" finds nothing. */
    mk_node(mk, "Identity", "leak", 1, S("t"), 1, S("z"));
    mk_output(mk, "z", MK_F32, 1, D(3));
    cf_result r = cf_run_model(mk, NULL, NULL, 0, NULL, 0);
    CHECK_EQ(r.load, GLOW_ERR_NOT_FOUND);
    CHECK_CONTAINS(r.d.msg, "'t' is not defined");
    glow_tensor_free(&ins[0]);
    glow_tensor_free(&ins[1]);
    mk_free(mk), mk_free(then_g), mk_free(else_g);
}

/* Branches of different types cannot be selected at run time. */
static void test_if_mismatch(void)
{
    mk_model *mk = mk_new(13), *then_g = mk_new(13), *else_g = mk_new(13);
    mk_input(mk, "c", MK_BOOL, 0, NULL);
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    mk_node(then_g, "Identity", "id", 1, S("x"), 1, S("t"));
    mk_output(then_g, "t", MK_F32, 2, D(2, 3));
    mk_node(else_g, "Transpose", "tr", 1, S("x"), 1, S("e"));
    mk_output(else_g, "e", MK_F32, 2, D(3, 2));
    Onnx__NodeProto *n = mk_node(mk, "If", "if_bad", 1, S("c"), 1, S("r"));
    graph_attr(mk, n, "then_branch", then_g);
    graph_attr(mk, n, "else_branch", else_g);
    mk_output(mk, "r", MK_F32, 2, D(2, 3));
    cf_result r = cf_run_model(mk, NULL, NULL, 0, NULL, 0);
    CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(r.d.msg, "If 'if_bad'");
    CHECK_CONTAINS(r.d.msg, "then f32[2, 3], else f32[3, 2]");
    mk_free(mk), mk_free(then_g), mk_free(else_g);
}

/* A while-loop (no M) whose body's condition folds: i < 2, so three iterations; y += x each
 * time and every y is a scan output. With the condition depending on data, unsupported. */
static void test_loop_cond(void)
{
    for (int data_dep = 0; data_dep < 2; data_dep++) {
        mk_model *mk = mk_new(13), *body = mk_new(13);
        mk_input(mk, "x", MK_F32, 1, D(2));
        int64_t two = 2;
        mk_initializer(mk, mk_tensor_raw(mk, "two", MK_I64, 0, NULL, &two, 8));
        float y0[2] = { 1, -1 };
        mk_initializer(mk, mk_tensor_raw(mk, "y0", MK_F32, 1, D(2), y0, sizeof y0));
        mk_input(body, "i", MK_I64, 0, NULL);
        mk_input(body, "cin", MK_BOOL, 0, NULL);
        mk_input(body, "y", MK_F32, 1, D(2));
        if (data_dep) {
            mk_node(body, "ReduceSum", "rs", 1, S("y"), 1, S("s"));
            mk_node(body, "Cast", "ci", 1, S("i"), 1, S("fi"));
            mk_attr_int(body, body->graph.node[1], "to", MK_F32);
            mk_node(body, "LessOrEqual", "le", 2, S("s", "fi"), 1, S("cout"));
        } else {
            mk_node(body, "Less", "lt", 2, S("i", "two"), 1, S("cout"));
        }
        mk_node(body, "Add", "acc", 2, S("y", "x"), 1, S("ynext"));
        mk_node(body, "Identity", "sc", 1, S("ynext"), 1, S("yscan"));
        mk_output(body, "cout", MK_BOOL, 0, NULL);
        mk_output(body, "ynext", MK_F32, 1, D(2));
        mk_output(body, "yscan", MK_F32, 1, D(2));
        Onnx__NodeProto *n = mk_node(mk, "Loop", "while0", 3, S("", "", "y0"), 2,
                                     S("yfinal", "ys"));
        graph_attr(mk, n, "body", body);
        mk_output(mk, "yfinal", MK_F32, 1, D(2));
        mk_output(mk, "ys", MK_F32, 2, D(3, 2));
        float xv[2] = { 0.5f, 2 };
        glow_tensor x = f32(1, D(2), xv), want[2];
        float yf[2] = { 1 + 1.5f, -1 + 6 }, ys[6] = { 1.5f, 1, 2, 3, 2.5f, 5 };
        want[0] = f32(1, D(2), yf);
        want[1] = f32(2, D(3, 2), ys);
        char *names[1] = { "x" };
        cf_result r = cf_run_model(mk, &x, names, 1, want, 2);
        if (!data_dep) {
            expect_ok("while loop", &r, 2);
            CHECK_STR_EQ(cf_out_type(&r, 1), "f32[3, 2]");
        } else {
            CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
            CHECK_CONTAINS(r.d.msg, "Loop 'while0'");
            CHECK_CONTAINS(r.d.msg, "computed at run time");
        }
        glow_tensor_free(&x), glow_tensor_free(&want[0]), glow_tensor_free(&want[1]);
        mk_free(mk), mk_free(body);
    }
}

/* A lazy If runs only the taken branch: the else branch gathers at index 5 of a 3-element
 * input, which fails at run time, so the run succeeds exactly when the then branch is taken
 * (Where would run both and fail either way). */
static void test_if_lazy(void)
{
    mk_model *mk = mk_new(13), *then_g = mk_new(13), *else_g = mk_new(13);
    mk_input(mk, "c", MK_BOOL, 0, NULL);
    mk_input(mk, "x", MK_F32, 1, D(3));
    int64_t five = 5;
    mk_initializer(mk, mk_tensor_raw(mk, "five", MK_I64, 1, D(1), &five, 8));
    mk_node(then_g, "Neg", "neg", 1, S("x"), 1, S("t"));
    mk_output(then_g, "t", MK_F32, 1, D(3));
    mk_node(else_g, "Gather", "g", 2, S("x", "five"), 1, S("e1"));
    mk_node(else_g, "Expand", "ex", 2, S("e1", "shape3"), 1, S("e"));
    int64_t three = 3;
    mk_initializer(else_g, mk_tensor_raw(else_g, "shape3", MK_I64, 1, D(1), &three, 8));
    mk_output(else_g, "e", MK_F32, 1, D(3));
    Onnx__NodeProto *n = mk_node(mk, "If", "lazy", 1, S("c"), 1, S("r"));
    graph_attr(mk, n, "then_branch", then_g);
    graph_attr(mk, n, "else_branch", else_g);
    mk_output(mk, "r", MK_F32, 1, D(3));
    float xv[3] = { 1, 2, 3 }, yv[3] = { -1, -2, -3 };
    glow_tensor ins[2] = { { .data = NULL }, f32(1, D(3), xv) }, want = f32(1, D(3), yv);
    glow_type bt = glow_type_scalar(GLOW_BOOL);
    glow_diag d = { 0 };
    glow_tensor_alloc(&ins[0], &bt, &d);
    char *names[2] = { "c", "x" };
    ((uint8_t *)ins[0].data)[0] = 1;
    cf_result r = cf_run_model(mk, ins, names, 2, &want, 1);
    expect_ok("lazy if (then)", &r, 1);
    CHECK_EQ(r.nnodes, 2);
    ((uint8_t *)ins[0].data)[0] = 0;
    r = cf_run_model(mk, ins, names, 2, &want, 1);
    CHECK_EQ(r.load, GLOW_OK);
    CHECK(!r.evaluated);
    CHECK_CONTAINS(r.eval_msg, "out of range");
    glow_tensor_free(&ins[0]), glow_tensor_free(&ins[1]), glow_tensor_free(&want);
    mk_free(mk), mk_free(then_g), mk_free(else_g);
}

/* A while-loop without scan outputs whose body's condition depends on the data runs as a
 * loop (one LOOP node): y += x while sum(y) <= 10, from y0 = [1, -1] with x = [0.5, 2]: the
 * sums after each iteration are 2.5, 5, 7.5, 10, 12.5, so five iterations. */
static void test_loop_while(void)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(2));
    float y0[2] = { 1, -1 }, ten = 10;
    mk_initializer(mk, mk_tensor_raw(mk, "y0", MK_F32, 1, D(2), y0, sizeof y0));
    mk_initializer(mk, mk_tensor_raw(mk, "ten", MK_F32, 0, NULL, &ten, 4));
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_input(body, "y", MK_F32, 1, D(2));
    mk_node(body, "Add", "acc", 2, S("y", "x"), 1, S("ynext"));
    mk_node(body, "ReduceSum", "rs", 1, S("ynext"), 1, S("s"));
    mk_attr_int(body, body->graph.node[1], "keepdims", 0);
    mk_node(body, "LessOrEqual", "le", 2, S("s", "ten"), 1, S("cout"));
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    mk_output(body, "ynext", MK_F32, 1, D(2));
    Onnx__NodeProto *n = mk_node(mk, "Loop", "while1", 3, S("", "", "y0"), 1, S("yfinal"));
    graph_attr(mk, n, "body", body);
    mk_output(mk, "yfinal", MK_F32, 1, D(2));
    float xv[2] = { 0.5f, 2 }, yf[2] = { 3.5f, 9 };
    glow_tensor x = f32(1, D(2), xv), want = f32(1, D(2), yf);
    char *names[1] = { "x" };
    cf_result r = cf_run_model(mk, &x, names, 1, &want, 1);
    expect_ok("while loop at run time", &r, 1);
    CHECK_EQ(r.nnodes, 2);
    glow_tensor_free(&x), glow_tensor_free(&want);
    mk_free(mk), mk_free(body);
}

/* A large constant trip count (more than import would unroll) runs as one LOOP node: y + y
 * a hundred times is y * 2^100. */
static void test_loop_limit(void)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(2));
    int64_t m = 100;
    uint8_t t = 1;
    mk_initializer(mk, mk_tensor_raw(mk, "M", MK_I64, 0, NULL, &m, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "T", MK_BOOL, 0, NULL, &t, 1));
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_input(body, "y", MK_F32, 1, D(2));
    mk_node(body, "Identity", "c", 1, S("cin"), 1, S("cout"));
    mk_node(body, "Add", "acc", 2, S("y", "y"), 1, S("ynext"));
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    mk_output(body, "ynext", MK_F32, 1, D(2));
    Onnx__NodeProto *n = mk_node(mk, "Loop", "big", 3, S("M", "T", "x"), 1, S("y"));
    graph_attr(mk, n, "body", body);
    mk_output(mk, "y", MK_F32, 1, D(2));
    float xv[2] = { 1, -0.75f }, yv[2] = { 0x1p100f, -0.75f * 0x1p100f };
    glow_tensor x = f32(1, D(2), xv), want = f32(1, D(2), yv);
    char *names[1] = { "x" };
    cf_result r = cf_run_model(mk, &x, names, 1, &want, 1);
    expect_ok("100 iterations as a loop", &r, 1);
    CHECK_EQ(r.nnodes, 2);
    glow_tensor_free(&x), glow_tensor_free(&want);
    mk_free(mk), mk_free(body);
}

/* Scan-9 over axis 1 backwards, with the scan output stacked on axis 1 and prepended:
 * s_t = s_{t-1} + x[:, T-1-t]; out[:, k] collects s in reverse iteration order. */
static void test_scan_axes(void)
{
    mk_model *mk = mk_new(11), *body = mk_new(11);
    mk_input(mk, "s0", MK_F32, 1, D(2));
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    mk_input(body, "s", MK_F32, 1, D(2));
    mk_input(body, "e", MK_F32, 1, D(2));
    mk_node(body, "Add", "add", 2, S("s", "e"), 1, S("sn"));
    mk_node(body, "Identity", "id", 1, S("sn"), 1, S("o"));
    mk_output(body, "sn", MK_F32, 1, D(2));
    mk_output(body, "o", MK_F32, 1, D(2));
    Onnx__NodeProto *n = mk_node(mk, "Scan", "scan0", 2, S("s0", "x"), 2, S("sf", "out"));
    graph_attr(mk, n, "body", body);
    mk_attr_int(mk, n, "num_scan_inputs", 1);
    mk_attr_ints(mk, n, "scan_input_axes", D(-1), 1);
    mk_attr_ints(mk, n, "scan_input_directions", D(1), 1);
    mk_attr_ints(mk, n, "scan_output_axes", D(1), 1);
    mk_attr_ints(mk, n, "scan_output_directions", D(1), 1);
    mk_output(mk, "sf", MK_F32, 1, D(2));
    mk_output(mk, "out", MK_F32, 2, D(2, 3));
    float s0[2] = { 100, 200 }, xv[6] = { 1, 2, 3, 4, 5, 6 };
    glow_tensor ins[2] = { f32(1, D(2), s0), f32(2, D(2, 3), xv) };
    /* Iterations see columns 2, 1, 0: row 0 sums 103, 105, 106; row 1 206, 211, 215.
     * Prepending puts the last iteration first. */
    float sf[2] = { 106, 215 }, out[6] = { 106, 105, 103, 215, 211, 206 };
    glow_tensor want[2] = { f32(1, D(2), sf), f32(2, D(2, 3), out) };
    char *names[2] = { "s0", "x" };
    cf_result r = cf_run_model(mk, ins, names, 2, want, 2);
    expect_ok("scan axes", &r, 2);
    for (int i = 0; i < 2; i++)
        glow_tensor_free(&ins[i]), glow_tensor_free(&want[i]);
    mk_free(mk), mk_free(body);
}

int main(void)
{
    test_node_suite();
    test_if_scoping();
    test_if_mismatch();
    test_if_lazy();
    test_loop_cond();
    test_loop_while();
    test_loop_limit();
    test_scan_axes();
    return CHECK_DONE();
}
