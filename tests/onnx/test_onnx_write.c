// test_onnx_write.c - The ONNX writer (src/onnx/onnx_write*.c) on graphs built here: a float
// graph of many node kinds and a quantized graph (the quantizer's node kinds, hand-typed) are
// written, read back by glowc's importer and run on the interpreter against the graph itself;
// the file's structure (opset, QDQ nodes, int8 initializers); a node with no ONNX form fails
// naming it and leaves no file.
#include <math.h>
#include <unistd.h>

#include "check.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "opt/graph_parse.h"
#include "runtime/runtime.h"

static char path[256];

static glow_module *parse(const char *text)
{
    gp g;
    glow_module *m = gp_parse(&g, text);
    if (!m)
        fprintf(stderr, "parse error: %s\n", g.err);
    CHECK(m != NULL);
    return m;
}

/* Runs m (taken) on the interpreter with input x; copies output 0 (n floats) into y. */
static bool run(glow_module *m, const glow_type *xt, const void *x, float *y, int64_t n)
{
    glow_program *p = NULL;
    glow_diag d = { 0 };
    glow_compile_options co = { .stop_after = GLOW_STAGE_COMPILED };
    glow_tensor t = { .type = *xt, .data = (void *)x };
    glow_status s = glow_program_create(m, &co, &p, &d);
    if (s == GLOW_OK)
        s = glow_program_run(p, &t, 1, &d);
    if (s != GLOW_OK)
        fprintf(stderr, "run: %s\n", d.msg);
    CHECK_EQ(s, GLOW_OK);
    if (s == GLOW_OK) {
        glow_tensor o = glow_program_output(p, 0);
        CHECK_EQ(glow_type_numel(&o.type), n);
        memcpy(y, o.data, sizeof(float) * (size_t)n);
    }
    glow_program_destroy(p);
    return s == GLOW_OK;
}

/* Writes the graph in text, reads the file back, and checks both give the same output on x
 * (within tol, relative to the largest output). */
static void round_trip(const char *text, const glow_type *xt, const float *x, int64_t n,
                       float tol)
{
    glow_module *m = parse(text);
    if (!m)
        return;
    glow_diag d = { 0 };
    glow_status s = glow_onnx_write(glow_module_function(m, "main"), path, "test", &d);
    if (s != GLOW_OK)
        fprintf(stderr, "write: %s\n", d.msg);
    CHECK_EQ(s, GLOW_OK);
    float *a = calloc((size_t)n, sizeof(float)), *b = calloc((size_t)n, sizeof(float));
    glow_module *back = glow_module_create();
    s = glow_onnx_load(back, path, NULL, &d);
    if (s != GLOW_OK)
        fprintf(stderr, "load: %s\n", d.msg);
    CHECK_EQ(s, GLOW_OK);
    if (s == GLOW_OK && run(m, xt, x, a, n) && run(back, xt, x, b, n)) {
        float big = 0;
        for (int64_t i = 0; i < n; i++)
            big = fabsf(a[i]) > big ? fabsf(a[i]) : big;
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            if (!(fabsf(a[i] - b[i]) <= tol * (big > 1 ? big : 1)) && bad++ < 5)
                fprintf(stderr, "  element %lld: graph %.9g, from the file %.9g\n",
                        (long long)i, a[i], b[i]);
        CHECK_EQ(bad, 0);
    } else {
        if (s != GLOW_OK)
            glow_module_destroy(back);
        glow_module_destroy(m);
    }
    free(a);
    free(b);
}

/* Float kinds: movement with parameters as initializers (Slice with a negative step,
 * Reshape, Transpose, Concat, Tile, Pad, Broadcast), reductions (ReduceSum's axes input,
 * ReduceMax's attribute), Softmax, Clip, pooling, Conv with a fused Relu, Gemm-like FC, Splat. */
static const char *const FLOAT_NET =
    "module {\n"
    "  %x = Placeholder input : f32[1, 2, 4, 4]\n"
    "  %w = Constant [0.5, -0.25, 0.125, 0.75, -1] : f32[3, 2, 3, 3]\n"
    "  %b = Constant [0.1, -0.2, 0.3] : f32[3]\n"
    "  %fw = Constant [0.3, -0.6, 0.2] : f32[12, 4]\n"
    "  %fb = Constant [0.05] : f32[4]\n"
    "  %out = Placeholder output : f32[1, 4]\n"
    "}\n"
    "function main {\n"
    "  %conv = Conv(%x, %w, %b) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=1, fused_act=\"Relu\"}\n"
    "  %rev = Slice(%conv) {starts=[0, 2, 3, 0], ends=[1, -1, -1, 4], steps=[1, -1, -1, 1]}\n"
    "  %tr = Transpose(%rev) {perm=[0, 1, 3, 2]}\n"
    "  %cat = Concat(%conv, %tr) {axis=1}\n"
    "  %pad = Pad(%cat) {pads=[0, 0, 1, 0, 0, 0, 0, 1], mode=\"constant\", value=0.5}\n"
    "  %mp = MaxPool(%pad) {kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], "
    "dilations=[1, 1]}\n"
    "  %ap = AveragePool(%pad) {kernel=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], "
    "dilations=[1, 1], count_include_pad=0}\n"
    "  %sum = Add(%mp, %ap)\n"
    "  %rs = ReduceSum(%sum) {axes=[3], keepdims=1}\n"
    "  %rm = ReduceMax(%sum) {axes=[3], keepdims=1}\n"
    "  %sub = Sub(%rs, %rm)\n"
    "  %bc = Broadcast(%sub) : f32[1, 6, 2, 2]\n"
    "  %tl = Tile(%bc) {repeats=[1, 1, 1, 1]}\n"
    "  %cl = Clip(%tl) {min=-3, max=5}\n"
    "  %sp = Splat() {value=0.25} : f32[1, 6, 2, 2]\n"
    "  %mul = Mul(%cl, %sp)\n"
    "  %flat = Reshape(%mul) : f32[1, 24]\n"
    "  %half = Slice(%flat) {starts=[0, 0], ends=[1, 12], steps=[1, 1]}\n"
    "  %fc = FullyConnected(%half, %fw, %fb)\n"
    "  %sm = Softmax(%fc) {axis=1}\n"
    "  Save(%sm, %out)\n"
    "}\n";

/* The quantizer's kinds with hand-chosen types: Quantize, a per-channel
 * ChannelwiseQuantizedConv with a fused Clip, MaxPool on the integers, a requantizing Relu,
 * RescaleQuantized, Reinterpret both ways, a quantized FullyConnected, Dequantize. */
static const char *const QUANT_NET =
    "module {\n"
    "  %x = Placeholder input : f32[1, 2, 4, 4]\n"
    "  %w = Constant [3, -7, 12, 1, -2, 5, 9, -11] : i8[2, 2, 3, 3]\n"
    "  %b = Constant [40, -25] : i32[2]\n"
    "  %s = Constant [0.02, 0.03] : f32[2]\n"
    "  %o = Constant [0, 0] : i32[2]\n"
    "  %fw = Constant [5, -3, 2, 7, -8] : i8q[8, 3]:0.05:0\n"
    "  %fb = Constant [10, -4, 3] : i32[3]\n"
    "  %out = Placeholder output : f32[1, 3]\n"
    "}\n"
    "function main {\n"
    "  %q = Quantize(%x) : u8q[1, 2, 4, 4]:0.02:128\n"
    "  %conv = ChannelwiseQuantizedConv(%q, %w, %b, %s, %o) {kernel=[3, 3], strides=[1, 1], "
    "pads=[1, 1, 1, 1], dilations=[1, 1], group=1, fused_act=\"Clip\", fused_alpha=-0.5, "
    "fused_beta=0.5} : u8q[1, 2, 4, 4]:0.005:100\n"
    "  %mp = MaxPool(%conv) {kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], "
    "dilations=[1, 1]} : u8q[1, 2, 2, 2]:0.005:100\n"
    "  %re = Relu(%mp) : u8q[1, 2, 2, 2]:0.003:0\n"
    "  %rq = RescaleQuantized(%re) : u8q[1, 2, 2, 2]:0.004:10\n"
    "  %raw = Reinterpret(%rq) : u8[1, 2, 2, 2]\n"
    "  %back = Reinterpret(%raw) : u8q[1, 2, 2, 2]:0.004:10\n"
    "  %flat = Reshape(%back) : u8q[1, 8]:0.004:10\n"
    "  %fc = FullyConnected(%flat, %fw, %fb) : i8q[1, 3]:0.01:-5\n"
    "  %dq = Dequantize(%fc) : f32[1, 3]\n"
    "  Save(%dq, %out)\n"
    "}\n";

static void check_round_trips(void)
{
    glow_type xt = glow_type_make(GLOW_F32, 4, (const int64_t[]){ 1, 2, 4, 4 });
    float x[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)sin(0.7 * i) * 1.3f;
    round_trip(FLOAT_NET, &xt, x, 4, 1e-5f);
    /* The importer runs QDQ in float with the same rounding: the same integers. */
    round_trip(QUANT_NET, &xt, x, 3, 0);
}

/* What the file holds: opset 13, QDQ nodes around the integer ops, int8 initializers. */
static void check_structure(void)
{
    glow_module *m = parse(QUANT_NET);
    if (!m)
        return;
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_write(glow_module_function(m, "main"), path, "test", &d), GLOW_OK);
    glow_module_destroy(m);
    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_EQ(glow_read_file(path, &data, &size, &d), GLOW_OK);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, data);
    CHECK(mp != NULL);
    if (mp) {
        CHECK_EQ(mp->ir_version, 8);
        CHECK_EQ(mp->n_opset_import, 1);
        CHECK_EQ(mp->opset_import[0]->version, 13);
        CHECK_STR_EQ(mp->producer_name, "test");
        const Onnx__GraphProto *g = mp->graph;
        CHECK_EQ(g->n_input, 1);
        CHECK_STR_EQ(g->input[0]->name, "x");
        CHECK_EQ(g->n_output, 1);
        CHECK_STR_EQ(g->output[0]->name, "out");
        int q = 0, dq = 0, conv = 0, maxpool_int = 0, axis = 0;
        for (size_t i = 0; i < g->n_node; i++) {
            const Onnx__NodeProto *n = g->node[i];
            q += !strcmp(n->op_type, "QuantizeLinear");
            dq += !strcmp(n->op_type, "DequantizeLinear");
            conv += !strcmp(n->op_type, "Conv");
            /* MaxPool reads the Conv's integers: its input is a QuantizeLinear's result. */
            for (size_t j = 0; !strcmp(n->op_type, "MaxPool") && j < g->n_node; j++)
                maxpool_int += !strcmp(g->node[j]->op_type, "QuantizeLinear") &&
                               !strcmp(g->node[j]->output[0], n->input[0]);
            for (size_t a = 0; !strcmp(n->op_type, "DequantizeLinear") && a < n->n_attribute;
                 a++)
                axis += !strcmp(n->attribute[a]->name, "axis");
        }
        CHECK(q >= 4 && dq >= 6);
        CHECK_EQ(conv, 1);
        CHECK_EQ(maxpool_int, 1);
        CHECK_EQ(axis, 2);   /* per-channel weights and bias */
        int int8 = 0;
        for (size_t i = 0; i < g->n_initializer; i++) {
            const Onnx__TensorProto *t = g->initializer[i];
            if (t->data_type == 3 && t->n_dims >= 2)
                int8 += (int)t->raw_data.len;
        }
        CHECK_EQ(int8, 2 * 2 * 9 + 8 * 3);
        onnx__model_proto__free_unpacked(mp, NULL);
    }
    free(data);
}

static void check_unsupported(void)
{
    unlink(path);
    glow_module *m = parse("module {\n"
                           "  %x = Placeholder input : f32[4]\n"
                           "  %out = Placeholder output : f32[4]\n"
                           "}\n"
                           "function main {\n"
                           "  %e = Exp(%x)\n"
                           "  %acc = CumSum(%e) {axis=0, exclusive=0, reverse=0}\n"
                           "  Save(%acc, %out)\n"
                           "}\n");
    if (!m)
        return;
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_write(glow_module_function(m, "main"), path, "test", &d),
             GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "'acc'");
    CHECK_CONTAINS(d.msg, "CumSum");
    CHECK(access(path, F_OK) != 0);
    glow_module_destroy(m);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/glowc_test_onnx_write_%d.onnx", (int)getpid());
    check_round_trips();
    check_structure();
    check_unsupported();
    unlink(path);
    return CHECK_DONE();
}
