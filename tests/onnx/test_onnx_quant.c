// test_onnx_quant.c - Quantized ONNX models import as the graph's quantized nodes: node-suite
// tests of QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul, ConvInteger and
// MatMulInteger with their parameters frozen into initializers (so they are constant) become
// Quantize / Dequantize / ChannelwiseQuantizedConv / quantized MatMul with no float math, and
// give ONNX's expected integers node by node and compiled on the interpreter and the cpu
// backend; chains of quantized ops read each other's quantized values without views back and
// forth; a QDQ-wrapped Conv still imports and runs.
#include <math.h>

#include "cf_eval.h"
#include "check.h"
#include "mkmodel.h"
#include "runtime/runtime.h"

/* A node-suite test with the inputs in `freeze` turned into initializers: the model bytes and
 * the fed inputs' values (model order) and the expected outputs. */
typedef struct frozen {
    uint8_t *bytes;
    size_t size;
    glow_tensor ins[CF_MAX_IO], want[CF_MAX_IO];
    int nin, nwant;
} frozen;

static bool freeze(const char *test, unsigned mask, frozen *fz)
{
    memset(fz, 0, sizeof *fz);
    char dir[1400], path[2048];
    snprintf(dir, sizeof dir, "%s/%s", nt_suite_dir("node"), test);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    size_t size;
    uint8_t *data = cf_read(path, &size);
    Onnx__ModelProto *mp = data ? onnx__model_proto__unpack(NULL, size, data) : NULL;
    free(data);
    if (!mp || !mp->graph) {
        fprintf(stderr, "cannot read %s\n", path);
        return false;
    }
    Onnx__GraphProto *g = mp->graph;
    for (size_t i = 0; i < g->n_input && i < CF_MAX_IO; i++) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
        glow_diag d = { 0 };
        if (mask & (1u << i))
            nt_freeze_input(g, dir, i);
        else if (glow_tensor_read_file(path, &fz->ins[fz->nin], NULL, &d) == GLOW_OK)
            fz->nin++;
    }
    fz->size = onnx__model_proto__get_packed_size(mp);
    fz->bytes = malloc(fz->size ? fz->size : 1);
    onnx__model_proto__pack(mp, fz->bytes);
    onnx__model_proto__free_unpacked(mp, NULL);
    char why[256];
    fz->nwant = nt_read_set(dir, "output", fz->want, CF_MAX_IO, why, sizeof why);
    return fz->nwant > 0;
}

static void frozen_free(frozen *fz)
{
    free(fz->bytes);
    for (int i = 0; i < fz->nin; i++)
        glow_tensor_free(&fz->ins[i]);
    for (int i = 0; i < fz->nwant; i++)
        glow_tensor_free(&fz->want[i]);
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
static void run_program(glow_module *m, const frozen *fz, const char *backend, const char *test)
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
    frozen fz;
    if (!freeze(test, mask, &fz)) {
        CHECK(false);
        frozen_free(&fz);
        return;
    }
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    if (glow_onnx_load_bytes(m, fz.bytes, fz.size, NULL, &d) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", test, d.msg);
        CHECK(false);
        glow_module_destroy(m);
        frozen_free(&fz);
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
    frozen_free(&fz);
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

int main(void)
{
    test_frozen_node_tests();
    return CHECK_DONE();
}
