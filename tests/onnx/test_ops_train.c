// test_ops_train.c - Training-time ops and modes (onnx_ops_train.c, onnx_ops_modes.c): the
// preview optimizers Adagrad/Adam/Momentum, BatchNormalization and Dropout in training mode,
// MaxPool's column-major indices - the node-suite tests evaluated node by node, the cases the
// suite leaves out (step T = 0, 3-D column-major indices) against the spec's formulas
// computed here, and the refusals.
#include <math.h>

#include "check.h"
#include "testlib/cf_eval.h"
#include "testlib/node_eval.h"
#include "testlib/onnx_build.h"
#include "testlib/onnx_edit.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

static const char *const passing[] = {
    "test_adagrad",
    "test_adagrad_multiple",
    "test_adam",
    "test_adam_multiple",
    "test_momentum",
    "test_momentum_multiple",
    "test_nesterov_momentum",
    "test_batchnorm_epsilon_training_mode",
    "test_batchnorm_example_training_mode",
    "test_training_dropout_zero_ratio",
    "test_training_dropout_zero_ratio_mask",
    "test_maxpool_with_argmax_2d_precomputed_strides",
};

static glow_tensor tensor(glow_dtype dt, int rank, const int64_t *dims, const void *vals)
{
    glow_type t = glow_type_make(dt, rank, dims);
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &t, &d);
    memcpy(x.data, vals, glow_tensor_bytes(&x));
    return x;
}

/* One check per case; cf_ok prints what went wrong. */
static void expect_ok(const char *what, const cf_result *r, int nout)
{
    CHECK(cf_ok(what, r, nout));
}

/* An optimizer node over one tensor of 3 values with the inputs R, T, X, G and `nstate` state
 * tensors, run at step t; want[] are the spec's outputs. */
static void optimizer_case(const char *what, const char *op, int nstate, int64_t t,
                           const char *mode, const float *state, const float (*want)[3],
                           int nwant)
{
    static const char *const in_names[] = { "R", "T", "X", "G", "V", "H" };
    static const char *const out_names[] = { "X_new", "V_new", "H_new" };
    mk_model *mk = mk_new(0);
    mk_opset(mk, "ai.onnx.preview.training", 1);
    mk_input(mk, "R", MK_F32, 0, NULL);
    mk_input(mk, "T", MK_I64, 0, NULL);
    for (int i = 0; i < 2 + nstate; i++)
        mk_input(mk, in_names[2 + i], MK_F32, 1, D(3));
    Onnx__NodeProto *n = mk_node_domain(mk, "ai.onnx.preview.training", op, "opt", 4 + nstate,
                                        in_names, 1 + nstate, out_names);
    mk_attr_float(mk, n, "alpha", 0.5f);
    mk_attr_float(mk, n, "beta", 0.25f);
    mk_attr_float(mk, n, "norm_coefficient", 0.125f);
    if (mode)
        mk_attr_str(mk, n, "mode", mode);
    else
        mk_attr_float(mk, n, "epsilon", 0.0625f);
    for (int i = 0; i < 1 + nstate; i++)
        mk_output(mk, out_names[i], MK_F32, 1, D(3));

    float r = 0.1f, x[3] = { 1, -2, 3 }, g[3] = { 0.5f, 0.25f, -1 };
    glow_tensor ins[6] = { tensor(GLOW_F32, 0, NULL, &r), tensor(GLOW_I64, 0, NULL, &t),
                           tensor(GLOW_F32, 1, D(3), x), tensor(GLOW_F32, 1, D(3), g) };
    for (int i = 0; i < nstate; i++)
        ins[4 + i] = tensor(GLOW_F32, 1, D(3), state + 3 * i);
    glow_tensor outs[3];
    for (int i = 0; i < nwant; i++)
        outs[i] = tensor(GLOW_F32, 1, D(3), want[i]);
    cf_result res = cf_run_model(mk, ins, (char *const *)in_names, 4 + nstate, outs, nwant);
    expect_ok(what, &res, nwant);
    for (int i = 0; i < 4 + nstate; i++)
        glow_tensor_free(&ins[i]);
    for (int i = 0; i < nwant; i++)
        glow_tensor_free(&outs[i]);
    mk_free(mk);
}

/* The suite runs every optimizer at T > 0; at T = 0 Momentum's gradient weight is 1 instead of
 * beta and Adam skips the bias correction (whose 0 / 0 the Where must discard). */
static void test_first_step(void)
{
    const double alpha = 0.5, beta = 0.25, c = 0.125, eps = 0.0625, r = (double)0.1f;
    const double x[3] = { 1, -2, 3 }, g[3] = { 0.5, 0.25, -1 };
    const float v[3] = { 0.5f, -0.5f, 1 }, vh[6] = { 0.5f, -0.5f, 1, 1, 2, 0.5f };
    float mom[2][3], nes[2][3], adam[3][3], adam1[3][3];
    for (int i = 0; i < 3; i++) {
        double gr = g[i] + c * x[i];
        double vn = alpha * v[i] + 1.0 * gr;   /* beta_adjusted = 1 at T = 0 */
        mom[0][i] = (float)(x[i] - r * vn);
        mom[1][i] = nes[1][i] = (float)vn;
        nes[0][i] = (float)(x[i] - r * (gr + alpha * vn));
        /* Adam (alpha, beta as above), state V = vh[0..3), H = vh[3..6). */
        double av = alpha * vh[i] + (1 - alpha) * gr;
        double ah = beta * vh[3 + i] + (1 - beta) * gr * gr;
        double root = sqrt(ah) + eps;
        adam[0][i] = (float)(x[i] - r * av / root);
        adam[1][i] = adam1[1][i] = (float)av;
        adam[2][i] = adam1[2][i] = (float)ah;
        /* At T = 2 the learning rate is corrected: R sqrt(1 - beta^2) / (1 - alpha^2). */
        double rc = r * sqrt(1 - beta * beta) / (1 - alpha * alpha);
        adam1[0][i] = (float)(x[i] - rc * av / root);
    }
    optimizer_case("momentum at T = 0", "Momentum", 1, 0, "standard", v, mom, 2);
    optimizer_case("nesterov at T = 0", "Momentum", 1, 0, "nesterov", v, nes, 2);
    optimizer_case("adam at T = 0", "Adam", 2, 0, NULL, vh, adam, 3);
    optimizer_case("adam at T = 2", "Adam", 2, 2, NULL, vh, adam1, 3);
}

/* MaxPool storage_order=1 over [N=1, C=2, D=2, H=3, W=4] with a 1x2x2 window: each index is
 * the plane offset plus d + h * D + w * D * H of the window's first maximum. */
static void test_column_major_3d(void)
{
    enum { C = 2, DD = 2, H = 3, W = 4, OH = H - 1, OW = W - 1 };
    float x[C * DD * H * W];
    for (int i = 0; i < C * DD * H * W; i++)
        x[i] = (float)((i * 37) % 53) - 20.0f;   /* distinct: no ties */
    int64_t want[C * DD * OH * OW];
    float ymax[C * DD * OH * OW];
    int k = 0;
    for (int c = 0; c < C; c++)
        for (int d = 0; d < DD; d++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++, k++) {
                    float best = -INFINITY;
                    int64_t at = 0;
                    for (int h = oh; h < oh + 2; h++)
                        for (int w = ow; w < ow + 2; w++) {
                            float v = x[((c * DD + d) * H + h) * W + w];
                            if (v > best) {
                                best = v;
                                at = (int64_t)c * DD * H * W + d + (int64_t)h * DD +
                                     (int64_t)w * DD * H;
                            }
                        }
                    ymax[k] = best;
                    want[k] = at;
                }
    mk_model *mk = mk_new(12);
    mk_input(mk, "x", MK_F32, 5, D(1, C, DD, H, W));
    Onnx__NodeProto *n = mk_node(mk, "MaxPool", "pool", 1, S("x"), 2, S("y", "z"));
    mk_attr_ints(mk, n, "kernel_shape", D(1, 2, 2), 3);
    mk_attr_int(mk, n, "storage_order", 1);
    mk_output(mk, "y", MK_F32, 5, D(1, C, DD, OH, OW));
    mk_output(mk, "z", MK_I64, 5, D(1, C, DD, OH, OW));
    glow_tensor in = tensor(GLOW_F32, 5, D(1, C, DD, H, W), x);
    glow_tensor outs[2] = { tensor(GLOW_F32, 5, D(1, C, DD, OH, OW), ymax),
                            tensor(GLOW_I64, 5, D(1, C, DD, OH, OW), want) };
    cf_result r = cf_run_model(mk, &in, (char *const[]){ "x" }, 1, outs, 2);
    expect_ok("maxpool 3-D storage_order=1", &r, 2);
    glow_tensor_free(&in);
    glow_tensor_free(&outs[0]);
    glow_tensor_free(&outs[1]);

    /* Only 0 and 1 are storage orders. */
    n->attribute[1]->i = 2;
    r = cf_run_model(mk, NULL, NULL, 0, NULL, 0);
    CHECK_EQ(r.load, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(r.d.msg, "storage_order=2");
    mk_free(mk);
}

/* Dropout in training mode: ratio 0 is the identity (mask all true); any other ratio without a
 * seed (with one the mask is drawn at import: the node suite's test_training_dropout*), or one
 * known only at run time, would need random numbers and is refused with what does work. */
static void test_dropout(void)
{
    static const float ratios[2] = { 0.0f, 0.5f };
    for (int k = 0; k < 2; k++) {
        mk_model *mk = mk_new(13);
        mk_input(mk, "x", MK_F32, 1, D(4));
        uint8_t yes = 1;
        mk_initializer(mk, mk_tensor_raw(mk, "train", MK_BOOL, 0, NULL, &yes, 1));
        mk_initializer(mk, mk_tensor_raw(mk, "ratio", MK_F32, 0, NULL, &ratios[k], 4));
        mk_node(mk, "Dropout", "drop", 3, S("x", "ratio", "train"), 2, S("y", "mask"));
        mk_output(mk, "y", MK_F32, 1, D(4));
        mk_output(mk, "mask", MK_BOOL, 1, D(4));
        float xv[4] = { 1, -2, 3, -4 };
        uint8_t ones[4] = { 1, 1, 1, 1 };
        glow_tensor in = tensor(GLOW_F32, 1, D(4), xv);
        glow_tensor outs[2] = { tensor(GLOW_F32, 1, D(4), xv), tensor(GLOW_BOOL, 1, D(4), ones) };
        cf_result r = cf_run_model(mk, &in, (char *const[]){ "x" }, 1, outs, 2);
        if (k == 0) {
            expect_ok("dropout ratio 0", &r, 2);
        } else {
            CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
            CHECK_CONTAINS(r.d.msg, "Dropout 'drop' (opset 13)");
            CHECK_CONTAINS(r.d.msg, "give a seed, ratio 0 or training_mode=false");
        }
        glow_tensor_free(&in);
        glow_tensor_free(&outs[0]);
        glow_tensor_free(&outs[1]);
        mk_free(mk);
    }
}

/* Malformed optimizer nodes fail naming the node. */
static void drop_last_input(Onnx__ModelProto *mp)
{
    Onnx__NodeProto *n = mp->graph->node[0];
    free(n->input[n->n_input - 1]);
    n->input[n->n_input - 1] = strdup("");   /* absent */
}

static void no_mode(Onnx__ModelProto *mp)
{
    Onnx__NodeProto *n = mp->graph->node[0];
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, "mode")) {
            free(n->attribute[i]->name);
            n->attribute[i]->name = strdup("unused");
        }
}

static void test_malformed(void)
{
    expect_load("test_adam", 0, drop_last_input, GLOW_ERR_PARSE, "groups of n tensors");
    expect_load("test_momentum", 0, no_mode, GLOW_ERR_BAD_ATTR, "'mode' is required");
}

int main(void)
{
    int failed = 0, n = (int)(sizeof passing / sizeof passing[0]);
    int pass = node_eval_all(passing, n, &failed);
    CHECK_EQ(failed, 0);
    printf("training-mode node tests: %d/%d evaluate correctly\n", pass, n);
    test_first_step();
    test_column_major_3d();
    test_dropout();
    test_malformed();
    return CHECK_DONE();
}
