// test_ops_rnn.c - RNN, GRU and LSTM loaders: node-suite models load with the right output types
// and compute the expected outputs (the unrolled graph evaluated node by node), and in-memory
// models covering directions, layouts, biases, initial states, peepholes, clip, input_forget,
// linear_before_reset and parameterized activations match a plain C reference of the ONNX
// equations.
#include <strings.h>

#include "check.h"
#include "testlib/cf_eval.h"
#include "testlib/onnx_build.h"

enum { RNN, GRU, LSTM };

/* --- node suite --- */

static void check_node_test(const char *test, unsigned freeze, int nout, const char *t0,
                            const char *t1)
{
    CHECK(cf_passes(test, freeze, nout, (const char *const[]){ t0, t1 }, NULL));
}

static void test_node_suite(void)
{
    check_node_test("test_lstm_defaults", 0, 1, "f32[1, 3, 3]", NULL);
    check_node_test("test_lstm_with_initial_bias", 0, 1, "f32[1, 3, 4]", NULL);
    /* sequence_lens (input 4) must be constant: frozen, the rest stays fed. */
    check_node_test("test_lstm_with_peepholes", 1u << 4, 1, "f32[1, 2, 3]", NULL);
    check_node_test("test_lstm_batchwise", 0, 2, "f32[3, 1, 1, 7]", "f32[3, 1, 7]");
    check_node_test("test_gru_defaults", 0, 1, "f32[1, 3, 5]", NULL);
    check_node_test("test_gru_seq_length", 0, 1, "f32[1, 3, 5]", NULL);
    check_node_test("test_gru_with_initial_bias", 0, 1, "f32[1, 3, 3]", NULL);
    check_node_test("test_gru_batchwise", 0, 2, "f32[3, 1, 1, 6]", "f32[3, 1, 6]");
    check_node_test("test_rnn_seq_length", 0, 1, "f32[1, 3, 5]", NULL);
    check_node_test("test_simple_rnn_defaults", 0, 1, "f32[1, 3, 4]", NULL);
    check_node_test("test_simple_rnn_with_initial_bias", 0, 1, "f32[1, 3, 5]", NULL);
    check_node_test("test_simple_rnn_batchwise", 0, 2, "f32[3, 1, 1, 4]", "f32[3, 1, 4]");

    /* sequence_lens fed at run time: variable lengths are not supported, and the message
     * says so naming the node. */
    cf_result r = cf_run("node", "test_lstm_with_peepholes", 0);
    CHECK_EQ(r.load, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(r.d.msg, "LSTM 'LSTM#0'");
    CHECK_CONTAINS(r.d.msg, "sequence_lens");
}

/* --- reference --- */

typedef struct rcase {
    int cell;
    const char *dir;
    int layout;
    int T, B, I, H;
    bool has_b, has_h0, has_c0, has_p, seq_lens;
    float clip;                 /* 0: none */
    int input_forget, lbr;
    int nacts;
    const char *acts[6];
    int nalpha, nbeta;
    float alpha[6], beta[6];
} rcase;

typedef struct ract {
    const char *name;
    double alpha, beta;
} ract;

static double act_f(const ract *a, double x)
{
    const char *n = a->name;
    if (!strcasecmp(n, "Sigmoid")) return 1 / (1 + exp(-x));
    if (!strcasecmp(n, "Tanh")) return tanh(x);
    if (!strcasecmp(n, "Relu")) return x > 0 ? x : 0;
    if (!strcasecmp(n, "LeakyRelu")) return x < 0 ? a->alpha * x : x;
    if (!strcasecmp(n, "ThresholdedRelu")) return x > a->alpha ? x : 0;
    if (!strcasecmp(n, "HardSigmoid")) return fmax(0, fmin(1, a->alpha * x + a->beta));
    if (!strcasecmp(n, "ScaledTanh")) return a->alpha * tanh(a->beta * x);
    if (!strcasecmp(n, "Affine")) return a->alpha * x + a->beta;
    if (!strcasecmp(n, "Elu")) return x < 0 ? a->alpha * (exp(x) - 1) : x;
    if (!strcasecmp(n, "Softsign")) return x / (1 + fabs(x));
    if (!strcasecmp(n, "Softplus")) return log1p(exp(x));
    return NAN;
}

/* The activations of each direction, alpha/beta consumed in order by those that take them. */
static void ref_acts(const rcase *c, int nact, int D, ract acts[2][3])
{
    static const char *const dflt[3][3] = { { "Tanh" }, { "Sigmoid", "Tanh" },
                                            { "Sigmoid", "Tanh", "Tanh" } };
    int ia = 0, ib = 0;
    for (int d = 0; d < D; d++)
        for (int k = 0; k < nact; k++) {
            const char *n = c->nacts ? c->acts[c->nacts == nact ? k : d * nact + k]
                                     : dflt[c->cell][k];
            ract *a = &acts[d][k];
            a->name = n;
            bool ta = strcasecmp(n, "LeakyRelu") == 0 || strcasecmp(n, "ThresholdedRelu") == 0 ||
                      strcasecmp(n, "HardSigmoid") == 0 || strcasecmp(n, "ScaledTanh") == 0 ||
                      strcasecmp(n, "Affine") == 0 || strcasecmp(n, "Elu") == 0;
            bool tb = strcasecmp(n, "HardSigmoid") == 0 || strcasecmp(n, "ScaledTanh") == 0 ||
                      strcasecmp(n, "Affine") == 0;
            a->alpha = !strcasecmp(n, "LeakyRelu") ? 0.01 : !strcasecmp(n, "HardSigmoid") ? 0.2 : 1.0;
            a->beta = !strcasecmp(n, "HardSigmoid") ? 0.5 : !strcasecmp(n, "ScaledTanh") ? 1.0 : 0.0;
            if (ta && ia < c->nalpha)
                a->alpha = c->alpha[ia++];
            if (tb && ib < c->nbeta)
                a->beta = c->beta[ib++];
        }
}

static double clipv(const rcase *c, double x)
{
    return c->clip > 0 ? fmax(-c->clip, fmin(c->clip, x)) : x;
}

/* The ONNX equations in layout 0: Y [T, D, B, H], Yh and Yc [D, B, H]. */
static void reference(const rcase *c, int D, const float *X, const float *W, const float *R,
                      const float *Bb, const float *h0, const float *c0, const float *P,
                      double *Y, double *Yh, double *Yc)
{
    int G = c->cell == LSTM ? 4 : c->cell == GRU ? 3 : 1, nact = c->cell == LSTM ? 3
                                                             : c->cell == GRU ? 2 : 1;
    int T = c->T, B = c->B, I = c->I, H = c->H, GH = G * H;
    ract acts[2][3];
    ref_acts(c, nact, D, acts);
    for (int d = 0; d < D; d++) {
        bool rev = !strcmp(c->dir, "reverse") || d == 1;
        const float *w = W + (size_t)d * GH * I, *r = R + (size_t)d * GH * H;
        const float *wb = Bb ? Bb + (size_t)d * 2 * GH : NULL, *rb = wb ? wb + GH : NULL;
        double h[8][8], cc[8][8];
        for (int b = 0; b < B; b++)
            for (int k = 0; k < H; k++) {
                h[b][k] = h0 ? h0[((size_t)d * B + b) * H + k] : 0;
                cc[b][k] = c0 ? c0[((size_t)d * B + b) * H + k] : 0;
            }
        for (int s = 0; s < T; s++) {
            int t = rev ? T - 1 - s : s;
            double hn[8][8];
            for (int b = 0; b < B; b++) {
                double xw[32], hr[32];
                for (int j = 0; j < GH; j++) {
                    xw[j] = wb ? wb[j] : 0;
                    hr[j] = rb ? rb[j] : 0;
                    for (int i = 0; i < I; i++)
                        xw[j] += X[((size_t)t * B + b) * I + i] * w[(size_t)j * I + i];
                    for (int k = 0; k < H; k++)
                        hr[j] += h[b][k] * r[(size_t)j * H + k];
                }
                double rg[8];
                for (int k = 0; k < H; k++) {
                    if (c->cell == RNN) {
                        hn[b][k] = act_f(&acts[d][0], clipv(c, xw[k] + hr[k]));
                    } else if (c->cell == GRU) {
                        rg[k] = act_f(&acts[d][0], clipv(c, xw[H + k] + hr[H + k]));
                    } else {
                        const float *p = P ? P + (size_t)d * 3 * H : NULL;
                        double C = cc[b][k];
                        double ig = act_f(&acts[d][0], clipv(c, xw[k] + hr[k] +
                                                                (p ? p[k] * C : 0)));
                        double fg = c->input_forget ? 1 - ig
                                    : act_f(&acts[d][0], clipv(c, xw[2 * H + k] + hr[2 * H + k]
                                                                  + (p ? p[2 * H + k] * C : 0)));
                        double cg = act_f(&acts[d][1], clipv(c, xw[3 * H + k] + hr[3 * H + k]));
                        double Cn = fg * C + ig * cg;
                        double og = act_f(&acts[d][0], clipv(c, xw[H + k] + hr[H + k] +
                                                                (p ? p[H + k] * Cn : 0)));
                        cc[b][k] = Cn;
                        hn[b][k] = og * act_f(&acts[d][2], Cn);
                    }
                }
                for (int k = 0; c->cell == GRU && k < H; k++) {
                    double z = act_f(&acts[d][0], clipv(c, xw[k] + hr[k]));
                    double pre = xw[2 * H + k];
                    if (c->lbr) {
                        pre += rg[k] * hr[2 * H + k];
                    } else {
                        pre += rb ? rb[2 * H + k] : 0;
                        for (int j = 0; j < H; j++)
                            pre += rg[j] * h[b][j] * r[(size_t)(2 * H + k) * H + j];
                    }
                    double hh = act_f(&acts[d][1], clipv(c, pre));
                    hn[b][k] = (1 - z) * hh + z * h[b][k];
                }
            }
            for (int b = 0; b < B; b++)
                for (int k = 0; k < H; k++) {
                    h[b][k] = hn[b][k];
                    Y[(((size_t)t * D + d) * B + b) * H + k] = hn[b][k];
                }
        }
        for (int b = 0; b < B; b++)
            for (int k = 0; k < H; k++) {
                Yh[((size_t)d * B + b) * H + k] = h[b][k];
                Yc[((size_t)d * B + b) * H + k] = cc[b][k];
            }
    }
}

static uint32_t seed = 12345;
static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static float *rnd_array(size_t n, float scale)
{
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        p[i] = rnd() * scale;
    return p;
}

static glow_tensor f32_tensor(int rank, const int64_t *dims)
{
    glow_type t = glow_type_make(GLOW_F32, rank, dims);
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &t, &d);
    return x;
}

/* Builds the node as an in-memory model (X fed, everything else initializers), evaluates the
 * imported graph and compares Y, Y_h (and Y_c) with the reference. */
static void check_case(const char *what, const rcase *c)
{
    static const char *const ops[] = { "RNN", "GRU", "LSTM" };
    int D = !strcmp(c->dir, "bidirectional") ? 2 : 1;
    int G = c->cell == LSTM ? 4 : c->cell == GRU ? 3 : 1;
    int T = c->T, B = c->B, I = c->I, H = c->H, GH = G * H;
    float *X = rnd_array((size_t)T * B * I, 1), *W = rnd_array((size_t)D * GH * I, 0.6f);
    float *R = rnd_array((size_t)D * GH * H, 0.6f), *Bb = rnd_array((size_t)D * 2 * GH, 0.5f);
    float *h0 = rnd_array((size_t)D * B * H, 1), *c0 = rnd_array((size_t)D * B * H, 1);
    float *P = rnd_array((size_t)D * 3 * H, 0.5f);
    size_t ny = (size_t)T * D * B * H, nh = (size_t)D * B * H;
    double *Y = calloc(ny, sizeof(double)), *Yh = calloc(nh, sizeof(double));
    double *Yc = calloc(nh, sizeof(double));
    reference(c, D, X, W, R, c->has_b ? Bb : NULL, c->has_h0 ? h0 : NULL,
              c->has_c0 ? c0 : NULL, c->has_p ? P : NULL, Y, Yh, Yc);

    mk_model *mk = mk_new(14);
    bool bl = c->layout == 1;
    int64_t xd[3] = { bl ? B : T, bl ? T : B, I };
    mk_input(mk, "X", MK_F32, 3, xd);
    /* Initial states are given in the node's layout: transpose h0/c0 for layout 1. */
    float *h0l = malloc(nh * sizeof(float)), *c0l = malloc(nh * sizeof(float));
    for (int d = 0; d < D; d++)
        for (int b = 0; b < B; b++)
            for (int k = 0; k < H; k++) {
                size_t src = ((size_t)d * B + b) * H + k;
                size_t dst = bl ? ((size_t)b * D + d) * H + k : src;
                h0l[dst] = h0[src];
                c0l[dst] = c0[src];
            }
    int64_t wd[3] = { D, GH, I }, rd[3] = { D, GH, H }, bd[2] = { D, 2 * GH };
    int64_t hd[3] = { bl ? B : D, bl ? D : B, H }, pd[2] = { D, 3 * H }, sd[1] = { B };
    int32_t lens[8];
    for (int b = 0; b < B; b++)
        lens[b] = T;
    mk_initializer(mk, mk_tensor_raw(mk, "W", MK_F32, 3, wd, W, (size_t)D * GH * I * 4));
    mk_initializer(mk, mk_tensor_raw(mk, "R", MK_F32, 3, rd, R, (size_t)D * GH * H * 4));
    mk_initializer(mk, mk_tensor_raw(mk, "B", MK_F32, 2, bd, Bb, (size_t)D * 2 * GH * 4));
    mk_initializer(mk, mk_tensor_raw(mk, "L", MK_I32, 1, sd, lens, (size_t)B * 4));
    mk_initializer(mk, mk_tensor_raw(mk, "h0", MK_F32, 3, hd, h0l, nh * 4));
    mk_initializer(mk, mk_tensor_raw(mk, "c0", MK_F32, 3, hd, c0l, nh * 4));
    mk_initializer(mk, mk_tensor_raw(mk, "P", MK_F32, 2, pd, P, (size_t)D * 3 * H * 4));
    const char *ins[8] = { "X", "W", "R", c->has_b ? "B" : "", c->seq_lens ? "L" : "",
                           c->has_h0 ? "h0" : "", c->has_c0 ? "c0" : "", c->has_p ? "P" : "" };
    const char *outs[3] = { "Y", "Y_h", "Y_c" };
    int nin = c->cell == LSTM ? 8 : 6, nout = c->cell == LSTM ? 3 : 2;
    Onnx__NodeProto *n = mk_node(mk, ops[c->cell], "rnn0", nin, ins, nout, outs);
    mk_attr_int(mk, n, "hidden_size", H);
    mk_attr_str(mk, n, "direction", c->dir);
    mk_attr_int(mk, n, "layout", c->layout);
    if (c->clip > 0)
        mk_attr_float(mk, n, "clip", c->clip);
    if (c->input_forget)
        mk_attr_int(mk, n, "input_forget", 1);
    if (c->lbr)
        mk_attr_int(mk, n, "linear_before_reset", 1);
    if (c->nalpha)
        mk_attr_floats(mk, n, "activation_alpha", c->alpha, c->nalpha);
    if (c->nbeta)
        mk_attr_floats(mk, n, "activation_beta", c->beta, c->nbeta);
    if (c->nacts) {
        Onnx__AttributeProto *a = mk_attr(mk, n, "activations", 8);
        a->n_strings = (size_t)c->nacts;
        a->strings = mk_alloc(mk, sizeof(ProtobufCBinaryData) * (size_t)c->nacts);
        for (int i = 0; i < c->nacts; i++) {
            a->strings[i].data = (uint8_t *)mk_str(mk, c->acts[i]);
            a->strings[i].len = strlen(c->acts[i]);
        }
    }
    int64_t yd[4] = { bl ? B : T, bl ? T : D, bl ? D : B, H };
    mk_output(mk, "Y", MK_F32, 4, yd);
    mk_output(mk, "Y_h", MK_F32, 3, hd);
    if (c->cell == LSTM)
        mk_output(mk, "Y_c", MK_F32, 3, hd);

    /* Inputs and expected outputs in the node's layout. */
    glow_tensor x = f32_tensor(3, xd), want[3];
    want[0] = f32_tensor(4, yd);
    want[1] = f32_tensor(3, hd);
    want[2] = f32_tensor(3, hd);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            for (int i = 0; i < I; i++)
                ((float *)x.data)[bl ? ((size_t)b * T + t) * I + i : ((size_t)t * B + b) * I + i]
                    = X[((size_t)t * B + b) * I + i];
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++)
            for (int b = 0; b < B; b++)
                for (int k = 0; k < H; k++) {
                    size_t src = (((size_t)t * D + d) * B + b) * H + k;
                    size_t dst = bl ? (((size_t)b * T + t) * D + d) * H + k : src;
                    ((float *)want[0].data)[dst] = (float)Y[src];
                }
    for (int d = 0; d < D; d++)
        for (int b = 0; b < B; b++)
            for (int k = 0; k < H; k++) {
                size_t src = ((size_t)d * B + b) * H + k;
                size_t dst = bl ? ((size_t)b * D + d) * H + k : src;
                ((float *)want[1].data)[dst] = (float)Yh[src];
                ((float *)want[2].data)[dst] = (float)Yc[src];
            }
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    char *names[1] = { "X" };
    cf_result r = cf_run_bytes(bytes, size, &x, names, 1, want, nout);
    if (r.load != GLOW_OK)
        fprintf(stderr, "%s: %s\n", what, r.d.msg);
    CHECK_EQ(r.load, GLOW_OK);
    CHECK_EQ(r.nout, nout);
    if (!r.evaluated)
        fprintf(stderr, "%s: not evaluated: %s\n", what, r.eval_msg);
    CHECK(r.evaluated);
    CHECK_EQ(r.compared, nout);
    if (r.mismatches)
        fprintf(stderr, "%s: %s\n", what, r.mismatch_msg);
    CHECK_EQ(r.mismatches, 0);

    free(bytes);
    mk_free(mk);
    glow_tensor_free(&x);
    for (int i = 0; i < 3; i++)
        glow_tensor_free(&want[i]);
    free(X), free(W), free(R), free(Bb), free(h0), free(c0), free(P), free(h0l), free(c0l);
    free(Y), free(Yh), free(Yc);
}

static void test_reference_cases(void)
{
    check_case("lstm bidirectional, all inputs", &(rcase){
        .cell = LSTM, .dir = "bidirectional", .T = 3, .B = 2, .I = 3, .H = 4, .has_b = true,
        .has_h0 = true, .has_c0 = true, .has_p = true, .seq_lens = true });
    check_case("lstm reverse, layout 1, clip, input_forget, activations", &(rcase){
        .cell = LSTM, .dir = "reverse", .layout = 1, .T = 4, .B = 2, .I = 2, .H = 3,
        .has_b = true, .has_h0 = true, .has_p = true, .clip = 0.5f, .input_forget = 1,
        .nacts = 3, .acts = { "HardSigmoid", "ScaledTanh", "LeakyRelu" },
        .nalpha = 3, .alpha = { 0.3f, 1.5f, 0.2f }, .nbeta = 2, .beta = { 0.6f, 0.7f } });
    check_case("gru bidirectional, linear_before_reset", &(rcase){
        .cell = GRU, .dir = "bidirectional", .T = 3, .B = 2, .I = 3, .H = 4, .has_b = true,
        .has_h0 = true, .lbr = 1 });
    check_case("gru layout 1, Elu, Softsign per direction", &(rcase){
        .cell = GRU, .dir = "bidirectional", .layout = 1, .T = 2, .B = 3, .I = 2, .H = 2,
        .has_b = true, .nacts = 4, .acts = { "Sigmoid", "Elu", "HardSigmoid", "Softsign" },
        .nalpha = 2, .alpha = { 0.8f, 0.25f }, .nbeta = 1, .beta = { 0.4f } });
    check_case("gru reverse, clip, no bias", &(rcase){
        .cell = GRU, .dir = "reverse", .T = 5, .B = 1, .I = 3, .H = 3, .has_h0 = true,
        .clip = 0.7f });
    check_case("rnn bidirectional, Relu / Affine", &(rcase){
        .cell = RNN, .dir = "bidirectional", .T = 3, .B = 2, .I = 3, .H = 3, .has_b = true,
        .has_h0 = true, .nacts = 2, .acts = { "Relu", "Affine" }, .nalpha = 1,
        .alpha = { 0.5f }, .nbeta = 1, .beta = { 0.1f } });
    check_case("rnn reverse, layout 1, lowercase softplus", &(rcase){
        .cell = RNN, .dir = "reverse", .layout = 1, .T = 4, .B = 2, .I = 2, .H = 3,
        .has_b = true, .nacts = 1, .acts = { "softplus" } });
}

int main(void)
{
    test_node_suite();
    test_reference_cases();
    return CHECK_DONE();
}
