// test_onnx_quant.c - Quantized ONNX models import as the graph's quantized nodes: node-suite
// tests of QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger and
// MatMulInteger with their parameters frozen into initializers (so they are constant) become
// Quantize / Dequantize / ChannelwiseQuantizedConv / quantized MatMul with no float math, and
// give ONNX's expected integers node by node and compiled on the interpreter and the cpu
// backend; chains of quantized ops read each other's quantized values without views back and
// forth; a QDQ-wrapped Conv still imports and runs.
#include <math.h>

#include "check.h"
#include "conformance/node_test.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/cf_eval.h"
#include "testlib/onnx_build.h"

/* The node test with the inputs in `mask` frozen (cf_freeze), and expected outputs. */
static bool freeze(const char *test, unsigned mask, cf_frozen *fz)
{
    if (!cf_freeze("node", test, mask, fz)) {
        fprintf(stderr, "cannot read %s\n", fz->path);
        return false;
    }
    return fz->nwant > 0;
}

static int count_kind(const glow_function *f, glow_node_kind k)
{
    int n = 0;
    for (const glow_node *x = f->nodes.first; x; x = x->next)
        n += x->kind == k;
    return n;
}

/* Compiles the module for `backend`, runs it on the fed inputs and compares every output with
 * ONNX's (integers exactly). */
static void run_program(glow_module *m, const cf_frozen *fz, const char *backend, const char *test)
{
    glow_compile_options o = { .backend = backend, .threads = 1,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    if (glow_program_create(m, &o, &p, &d) != GLOW_OK ||
        glow_program_run(p, fz->ins, fz->nin, &d) != GLOW_OK) {
        fprintf(stderr, "%s on %s: %s\n", test, backend, d.msg);
        CHECK(false);
        glow_program_destroy(p);
        return;
    }
    for (int i = 0; i < fz->nwant && i < p->noutputs; i++) {
        glow_tensor got = glow_program_output(p, i);
        char why[512];
        if (!nt_compare("output", &got, &fz->want[i], 1e-3, 1e-7, why, sizeof why)) {
            fprintf(stderr, "%s on %s: %s\n", test, backend, why);
            CHECK(false);
        }
    }
    glow_program_destroy(p);
}

/* One frozen node test: the quantized node `kind` is built and no float math (Div, Round,
 * Clip, Cast, Conv) is; evaluated node by node and compiled on both backends it gives ONNX's
 * outputs. */
static void check_frozen(const char *test, unsigned mask, glow_node_kind kind)
{
    cf_frozen fz;
    if (!freeze(test, mask, &fz)) {
        CHECK(false);
        cf_frozen_free(&fz);
        return;
    }
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    if (glow_onnx_load_bytes(m, fz.bytes, fz.size, NULL, &d) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", test, d.msg);
        CHECK(false);
        glow_module_destroy(m);
        cf_frozen_free(&fz);
        return;
    }
    glow_function *f = glow_module_function(m, "main");
    if (count_kind(f, kind) != 1)
        fprintf(stderr, "%s: no %s node\n", test, glow_node_kind_name(kind));
    CHECK_EQ(count_kind(f, kind), 1);
    static const glow_node_kind float_math[] = { NK_DIV, NK_ROUND, NK_CLIP, NK_CAST, NK_CONV };
    for (size_t i = 0; i < sizeof float_math / sizeof float_math[0]; i++)
        CHECK_EQ(count_kind(f, float_math[i]), 0);
    /* Node by node through the evaluator (inputs fed by placeholder name). */
    char *names[CF_MAX_IO];
    int k = 0;
    for (glow_node *p = m->placeholders.first; p && k < fz.nin; p = p->next)
        if (p->is_input)
            names[k++] = strdup(p->name);
    glow_module_destroy(m);
    cf_result r = cf_run_bytes(fz.bytes, fz.size, fz.ins, names, k, fz.want, fz.nwant);
    if (!r.evaluated || r.mismatches)
        fprintf(stderr, "%s: %s%s\n", test, r.eval_msg, r.mismatch_msg);
    CHECK(r.evaluated);
    CHECK_EQ(r.compared, fz.nwant);
    CHECK_EQ(r.mismatches, 0);
    for (int i = 0; i < k; i++)
        free(names[i]);

    static const char *const backends[] = { "interpreter", "cpu" };
    for (int b = 0; b < 2; b++) {
        m = glow_module_create();
        CHECK_EQ(glow_onnx_load_bytes(m, fz.bytes, fz.size, NULL, &d), GLOW_OK);
        run_program(m, &fz, backends[b], test); /* takes m */
    }
    cf_frozen_free(&fz);
}

static void test_frozen_node_tests(void)
{
    /* Bits: the inputs made initializers (the parameters; sometimes the weights too). */
    check_frozen("test_quantizelinear", 0x6, NK_QUANTIZE);
    check_frozen("test_quantizelinear_int16", 0x6, NK_QUANTIZE);
    check_frozen("test_dequantizelinear", 0x6, NK_DEQUANTIZE);
    check_frozen("test_dequantizelinear_int16", 0x6, NK_DEQUANTIZE);
    check_frozen("test_qlinearconv", 0xfe, NK_CHANNELWISE_QCONV);
    check_frozen("test_qlinearconv", 0xf6, NK_CHANNELWISE_QCONV); /* weights fed */
    check_frozen("test_convinteger_with_padding", 0xc, NK_CHANNELWISE_QCONV);
    check_frozen("test_convinteger_without_padding", 0x4, NK_CHANNELWISE_QCONV);
    check_frozen("test_matmulinteger", 0xc, NK_MATMUL);
    static const char *const mm[] = {
        "test_qlinearmatmul_2D_int8_float32", "test_qlinearmatmul_2D_uint8_float32",
        "test_qlinearmatmul_3D_int8_float32", "test_qlinearmatmul_3D_uint8_float32",
        "test_qlinearmatmul_2D_int8_float16", "test_qlinearmatmul_2D_uint8_float16",
        "test_qlinearmatmul_3D_int8_float16", "test_qlinearmatmul_3D_uint8_float16",
    };
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++) {
        check_frozen(mm[i], 0xf6, NK_MATMUL);
        check_frozen(mm[i], 0xfe, NK_MATMUL); /* b constant */
    }
}

/* --- models built here: a quantized chain and its QDQ form --- */

enum { C_IN = 2, C_OUT = 3, HW = 5 };
static const float SX = 0.05f, SY = 0.08f, SW[C_OUT] = { 0.01f, 0.02f, 0.015f };
static const uint8_t ZX = 128, ZY = 100;
static const int8_t ZW[C_OUT] = { 0, 3, -2 };
static const int32_t BIAS[C_OUT] = { 50, -20, 0 };
static int8_t W[C_OUT * C_IN * 9];
static float X[C_IN * HW * HW];

static void init_data(void)
{
    uint32_t r = 12345;
    for (int i = 0; i < C_OUT * C_IN * 9; i++) {
        r = r * 1103515245u + 12345u;
        W[i] = (int8_t)((int)(r >> 16) % 255 - 127);
    }
    for (int i = 0; i < C_IN * HW * HW; i++) {
        r = r * 1103515245u + 12345u;
        X[i] = (float)((int)(r >> 16) % 6001 - 3000) / 1000.0f;
    }
}

/* docs/quantization.md's integers for Quantize -> 3x3 conv (pads 1) -> Dequantize. */
static void reference(float *y)
{
    uint8_t xq[C_IN * HW * HW];
    for (int i = 0; i < C_IN * HW * HW; i++) {
        float q = nearbyintf(X[i] / SX) + ZX;
        xq[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
    }
    for (int m = 0; m < C_OUT; m++) {
        float mult = (float)((double)SX * SW[m] / SY);
        for (int oh = 0; oh < HW; oh++)
            for (int ow = 0; ow < HW; ow++) {
                int32_t acc = BIAS[m];
                for (int c = 0; c < C_IN; c++)
                    for (int kh = 0; kh < 3; kh++)
                        for (int kw = 0; kw < 3; kw++) {
                            int ih = oh - 1 + kh, iw = ow - 1 + kw;
                            if (ih < 0 || ih >= HW || iw < 0 || iw >= HW)
                                continue;
                            acc += (xq[(c * HW + ih) * HW + iw] - ZX) *
                                   (W[((m * C_IN + c) * 3 + kh) * 3 + kw] - ZW[m]);
                        }
                float v = nearbyintf((float)acc * mult) + ZY;
                int q = (int)(v < 0 ? 0 : v > 255 ? 255 : v);
                y[(m * HW + oh) * HW + ow] = (float)(q - ZY) * SY;
            }
    }
}

static const int64_t XDIMS[4] = { 1, C_IN, HW, HW }, YDIMS[4] = { 1, C_OUT, HW, HW };
static const int64_t WDIMS[4] = { C_OUT, C_IN, 3, 3 }, VDIM[1] = { C_OUT };

static void add_scalar_f32(mk_model *mk, const char *name, float v)
{
    mk_initializer(mk, mk_tensor_raw(mk, name, MK_F32, 0, NULL, &v, sizeof v));
}

static void add_scalar_u8(mk_model *mk, const char *name, uint8_t v)
{
    mk_initializer(mk, mk_tensor_raw(mk, name, MK_U8, 0, NULL, &v, sizeof v));
}

/* The parameters and weights every model shares, and QuantizeLinear(x) -> "xq". */
static mk_model *common_model(void)
{
    mk_model *mk = mk_new(19);
    mk_input(mk, "x", MK_F32, 4, XDIMS);
    add_scalar_f32(mk, "sx", SX);
    add_scalar_u8(mk, "zx", ZX);
    add_scalar_f32(mk, "sy", SY);
    add_scalar_u8(mk, "zy", ZY);
    mk_initializer(mk, mk_tensor_raw(mk, "w", MK_I8, 4, WDIMS, W, sizeof W));
    mk_initializer(mk, mk_tensor_raw(mk, "sw", MK_F32, 1, VDIM, SW, sizeof SW));
    mk_initializer(mk, mk_tensor_raw(mk, "zw", MK_I8, 1, VDIM, ZW, sizeof ZW));
    mk_initializer(mk, mk_tensor_raw(mk, "b", MK_I32, 1, VDIM, BIAS, sizeof BIAS));
    mk_node(mk, "QuantizeLinear", "qx", 3, (const char *[]){ "x", "sx", "zx" }, 1,
            (const char *[]){ "xq" });
    return mk;
}

static void conv_attrs(mk_model *mk, Onnx__NodeProto *n)
{
    mk_attr_ints(mk, n, "pads", (const int64_t[]){ 1, 1, 1, 1 }, 4);
    mk_attr_ints(mk, n, "kernel_shape", (const int64_t[]){ 3, 3 }, 2);
}

/* QuantizeLinear -> QLinearConv -> DequantizeLinear. */
static mk_model *qlinear_model(void)
{
    mk_model *mk = common_model();
    Onnx__NodeProto *c = mk_node(mk, "QLinearConv", "conv", 9,
                                 (const char *[]){ "xq", "sx", "zx", "w", "sw", "zw", "sy",
                                                   "zy", "b" },
                                 1, (const char *[]){ "yq" });
    conv_attrs(mk, c);
    mk_node(mk, "DequantizeLinear", "dqy", 3, (const char *[]){ "yq", "sy", "zy" }, 1,
            (const char *[]){ "y" });
    mk_output(mk, "y", MK_F32, 4, YDIMS);
    return mk;
}

/* The same computation in QDQ form: DequantizeLinear of the activations, of the per-channel
 * weights and of the bias (scale sx * sw) into a float Conv; `requantize` adds QuantizeLinear
 * -> DequantizeLinear after it (else the Conv's float result is the output). */
static mk_model *qdq_model(bool requantize)
{
    mk_model *mk = common_model();
    float sb[C_OUT];
    for (int m = 0; m < C_OUT; m++)
        sb[m] = SX * SW[m];
    mk_initializer(mk, mk_tensor_raw(mk, "sb", MK_F32, 1, VDIM, sb, sizeof sb));
    mk_node(mk, "DequantizeLinear", "dqx", 3, (const char *[]){ "xq", "sx", "zx" }, 1,
            (const char *[]){ "xd" });
    Onnx__NodeProto *n = mk_node(mk, "DequantizeLinear", "dqw", 3,
                                 (const char *[]){ "w", "sw", "zw" }, 1,
                                 (const char *[]){ "wd" });
    mk_attr_int(mk, n, "axis", 0);
    n = mk_node(mk, "DequantizeLinear", "dqb", 2, (const char *[]){ "b", "sb" }, 1,
                (const char *[]){ "bd" });
    mk_attr_int(mk, n, "axis", 0);
    n = mk_node(mk, "Conv", "conv", 3, (const char *[]){ "xd", "wd", "bd" }, 1,
                (const char *[]){ requantize ? "yf" : "y" });
    conv_attrs(mk, n);
    if (requantize) {
        mk_node(mk, "QuantizeLinear", "qy", 3, (const char *[]){ "yf", "sy", "zy" }, 1,
                (const char *[]){ "yq" });
        mk_node(mk, "DequantizeLinear", "dqy", 3, (const char *[]){ "yq", "sy", "zy" }, 1,
                (const char *[]){ "y" });
    }
    mk_output(mk, "y", MK_F32, 4, YDIMS);
    return mk;
}

static glow_module *load_model(mk_model *mk)
{
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    if (glow_onnx_load_bytes(m, bytes, size, NULL, &d) != GLOW_OK) {
        fprintf(stderr, "load: %s\n", d.msg);
        CHECK(false);
        glow_module_destroy(m);
        m = NULL;
    }
    free(bytes);
    return m;
}

static const glow_node *find_kind(const glow_function *f, glow_node_kind k)
{
    for (const glow_node *n = f->nodes.first; n; n = n->next)
        if (n->kind == k)
            return n;
    return NULL;
}

/* Runs the model on X on `backend`; y gets the output. false on failure. */
static bool run_model(mk_model *mk, const char *backend, float *y)
{
    glow_module *m = load_model(mk);
    if (!m)
        return false;
    glow_compile_options o = { .backend = backend, .threads = 1,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    glow_type xt = glow_type_make(GLOW_F32, 4, XDIMS);
    glow_tensor in = { .type = xt, .data = X };
    if (glow_program_create(m, &o, &p, &d) != GLOW_OK || glow_program_run(p, &in, 1, &d)) {
        fprintf(stderr, "%s: %s\n", backend, d.msg);
        glow_program_destroy(p);
        return false;
    }
    glow_tensor out = glow_program_output(p, 0);
    memcpy(y, out.data, sizeof(float) * C_OUT * HW * HW);
    glow_program_destroy(p);
    return true;
}

/* Quantized results read by the next quantized op directly: QLinearConv takes Quantize's
 * result, DequantizeLinear takes the convolution's (no Reinterpret to u8 and back between). */
static void check_chain(const glow_function *f)
{
    const glow_node *q = find_kind(f, NK_QUANTIZE), *c = find_kind(f, NK_CHANNELWISE_QCONV);
    const glow_node *dq = NULL; /* the last one: the output's */
    for (const glow_node *n = f->nodes.first; n; n = n->next)
        dq = n->kind == NK_DEQUANTIZE ? n : dq;
    CHECK(q && c && dq);
    if (!q || !c || !dq)
        return;
    CHECK(c->ins[0].node == q);
    CHECK(dq->ins[0].node == c);
    CHECK_EQ(c->outs[0].dtype, GLOW_U8Q);
    CHECK_EQ(c->outs[0].offset, ZY);
}

static void test_chain_and_qdq(void)
{
    init_data();
    float want[C_OUT * HW * HW], got[C_OUT * HW * HW];
    reference(want);
    static const char *const backends[] = { "interpreter", "cpu" };
    for (int qdq = 0; qdq < 2; qdq++) {
        mk_model *mk = qdq ? qdq_model(true) : qlinear_model();
        glow_module *m = load_model(mk);
        if (m) {
            glow_function *f = glow_module_function(m, "main");
            check_chain(f);
            CHECK_EQ(count_kind(f, NK_CHANNELWISE_QCONV), 1);
            glow_module_destroy(m);
        }
        for (int b = 0; b < 2; b++) {
            memset(got, 0, sizeof got);
            CHECK(run_model(mk, backends[b], got));
            int bad = 0;
            for (int i = 0; i < C_OUT * HW * HW; i++)
                bad += got[i] != want[i];
            if (bad)
                fprintf(stderr, "%s on %s: %d values differ\n", qdq ? "qdq" : "qlinear",
                        backends[b], bad);
            CHECK_EQ(bad, 0);
        }
        mk_free(mk);
    }
    /* A QDQ Conv whose result stays float is not an int8 product: a float Conv of the
     * dequantized values, equal to the real-valued result up to f32 rounding. */
    mk_model *mk = qdq_model(false);
    glow_module *m = load_model(mk);
    if (m) {
        glow_function *f = glow_module_function(m, "main");
        CHECK_EQ(count_kind(f, NK_CONV), 1);
        CHECK_EQ(count_kind(f, NK_CHANNELWISE_QCONV), 0);
        glow_module_destroy(m);
    }
    CHECK(run_model(mk, "interpreter", got));
    for (int i = 0; i < C_OUT * HW * HW; i++) {
        /* `want` went through the u8 output's rounding and saturation too. */
        float lo = (0 - ZY) * SY, hi = (255 - ZY) * SY;
        float g = got[i] < lo ? lo : got[i] > hi ? hi : got[i];
        CHECK_NEAR(g, want[i], SY * 0.5 + 1e-4);
    }
    mk_free(mk);
}

/* --- the quantized path against ONNX's reference arithmetic --- */

enum { MM_M = 64, MM_K = 256, MM_N = 64 };

/* QLinearMatMul(a fed, b constant): with every parameter an initializer (the quantized MatMul),
 * or with a_scale fed (the float path, which computes ONNX's reference: the scale ratio in f32,
 * the product in f64). */
static mk_model *qlinear_matmul_model(bool fed_scale, const uint8_t *b, float sa)
{
    mk_model *mk = mk_new(21);
    const int64_t ad[2] = { MM_M, MM_K }, bd[2] = { MM_K, MM_N }, yd[2] = { MM_M, MM_N };
    mk_input(mk, "a", MK_U8, 2, ad);
    if (fed_scale)
        mk_input(mk, "sa", MK_F32, 0, NULL);
    else
        add_scalar_f32(mk, "sa", sa);
    add_scalar_u8(mk, "za", 120);
    mk_initializer(mk, mk_tensor_raw(mk, "b", MK_U8, 2, bd, b, MM_K * MM_N));
    add_scalar_f32(mk, "sb", 0.0071f);
    add_scalar_u8(mk, "zb", 131);
    add_scalar_f32(mk, "sy", 0.0917f);
    add_scalar_u8(mk, "zy", 127);
    mk_node(mk, "QLinearMatMul", "mm", 8,
            (const char *[]){ "a", "sa", "za", "b", "sb", "zb", "sy", "zy" }, 1,
            (const char *[]){ "y" });
    mk_output(mk, "y", MK_U8, 2, yd);
    return mk;
}

static bool run_u8(mk_model *mk, const glow_tensor *ins, int nin, uint8_t *y)
{
    glow_module *m = load_model(mk);
    if (!m)
        return false;
    glow_compile_options o = { .backend = "interpreter", .threads = 1,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    if (glow_program_create(m, &o, &p, &d) != GLOW_OK || glow_program_run(p, ins, nin, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        glow_program_destroy(p);
        return false;
    }
    memcpy(y, glow_program_output(p, 0).data, MM_M * MM_N);
    glow_program_destroy(p);
    return true;
}

/* One f32 multiplier applied in f32 against ONNX's f32 ratio applied in f64: at most one unit
 * apart, and only where acc * M is within rounding of a half-integer (rare). */
static void test_against_reference(void)
{
    static uint8_t a[MM_M * MM_K], b[MM_K * MM_N], yq[MM_M * MM_N], yf[MM_M * MM_N];
    uint32_t r = 777;
    for (int i = 0; i < MM_M * MM_K; i++) {
        r = r * 1103515245u + 12345u;
        a[i] = (uint8_t)(r >> 20);
    }
    for (int i = 0; i < MM_K * MM_N; i++) {
        r = r * 1103515245u + 12345u;
        b[i] = (uint8_t)(r >> 20);
    }
    float sa = 0.0123f;
    const int64_t ad[2] = { MM_M, MM_K };
    glow_tensor ins[2] = { { .type = glow_type_make(GLOW_U8, 2, ad), .data = a },
                           { .type = glow_type_scalar(GLOW_F32), .data = &sa } };
    mk_model *q = qlinear_matmul_model(false, b, sa), *f = qlinear_matmul_model(true, b, sa);
    glow_module *m = load_model(q);
    if (m) {
        CHECK_EQ(count_kind(glow_module_function(m, "main"), NK_DIV), 0);
        glow_module_destroy(m);
    }
    m = load_model(f);
    if (m) {
        CHECK_EQ(count_kind(glow_module_function(m, "main"), NK_DIV), 1);
        glow_module_destroy(m);
    }
    CHECK(run_u8(q, ins, 1, yq));
    CHECK(run_u8(f, ins, 2, yf));
    int off = 0, worst = 0, interior = 0;
    for (int i = 0; i < MM_M * MM_N; i++) {
        int dlt = abs(yq[i] - yf[i]);
        off += dlt != 0;
        worst = dlt > worst ? dlt : worst;
        interior += yf[i] > 0 && yf[i] < 255;
    }
    printf("QLinearMatMul %dx%dx%d: %d of %d results one unit from ONNX's reference "
           "(%d unsaturated)\n", MM_M, MM_K, MM_N, off, MM_M * MM_N, interior);
    CHECK(worst <= 1);
    CHECK(interior > MM_M * MM_N / 2);
    CHECK(off * 100 < MM_M * MM_N);
    mk_free(q);
    mk_free(f);
}

int main(void)
{
    test_frozen_node_tests();
    test_chain_and_qdq();
    test_against_reference();
    return CHECK_DONE();
}
