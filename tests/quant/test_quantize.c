// test_quantize.c - The quantizer (src/quant/quantize.c) on small graphs with ranges given by
// the test: which nodes convert, the types chosen by each schema, activations folded into
// requantization, --keep-float, values without a range; then the quantized program against
// the float one on the interpreter and the cpu backend (same integers on both).
#include <math.h>

#include "check.h"
#include "backend/cpu/cpu_internal.h"
#include "opt/graph_parse.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

/* Ranges by node name; a missing name has no range. */
typedef struct named_range {
    const char *name;
    double lo, hi;
} named_range;

static bool look(void *ctx, glow_value v, glow_quant_range *out)
{
    for (const named_range *r = ctx; r->name; r++)
        if (!strcmp(r->name, v.node->name)) {
            *out = (glow_quant_range){ .min = r->lo, .max = r->hi };
            return true;
        }
    return false;
}

static const char *const NET =
    "module {\n"
    "  %x = Placeholder input : f32[1, 3, 6, 6]\n"
    "  %w = Constant [0.5, -0.25, 0.125, 0.75, -1] : f32[4, 3, 3, 3]\n"
    "  %b = Constant [0.1, -0.2] : f32[4]\n"
    "  %fw = Constant [0.3, -0.6, 0.2] : f32[16, 5]\n"
    "  %fb = Constant [0.05] : f32[5]\n"
    "  %out = Placeholder output : f32[1, 5]\n"
    "}\n"
    "function main {\n"
    "  %conv = Conv(%x, %w, %b) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=1}\n"
    "  %relu = Relu(%conv)\n"
    "  %pool = MaxPool(%relu) {kernel=[3, 3], strides=[3, 3], pads=[0, 0, 0, 0], "
    "dilations=[1, 1]}\n"
    "  %flat = Reshape(%pool) : f32[1, 16]\n"
    "  %fc = FullyConnected(%flat, %fw, %fb)\n"
    "  %sig = Sigmoid(%fc)\n"
    "  Save(%sig, %out)\n"
    "}\n";

static const named_range RANGES[] = {
    { "x", -1, 1 }, { "conv", -6, 6 }, { "relu", 0, 6 }, { "pool", 0, 6 },
    { "flat", 0, 6 }, { "fc", -8, 8 }, { "sig", 0, 1 }, { NULL, 0, 0 } };

static glow_module *parse(const char *text)
{
    gp g;
    glow_module *m = gp_parse(&g, text);
    if (!m)
        fprintf(stderr, "parse error: %s\n", g.err);
    CHECK(m != NULL);
    return m;
}

static glow_node *find(glow_function *f, glow_node_kind k)
{
    for (glow_node *n = f->nodes.first; n; n = n->next)
        if (n->kind == k)
            return n;
    return NULL;
}

static int count_kind(glow_function *f, glow_node_kind k)
{
    int c = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next)
        c += n->kind == k;
    return c;
}

/* Quantizes NET's function and runs the after-quantization optimizer. */
static glow_function *quantize(glow_module *m, const glow_quant_options *o,
                               const named_range *ranges, int *nq)
{
    glow_function *f = glow_module_function(m, "main");
    glow_diag d = { 0 };
    glow_status s = glow_quantize(f, o, look, (void *)ranges, nq, &d);
    if (s != GLOW_OK)
        fprintf(stderr, "quantize: %s\n", d.msg);
    CHECK_EQ(s, GLOW_OK);
    glow_opt_options oo = { .phase = GLOW_OPT_AFTER_QUANTIZATION, .verify = true };
    CHECK_EQ(glow_optimize(f, &oo, &d), GLOW_OK);
    CHECK_EQ(glow_function_verify(f, &d), GLOW_OK);
    return f;
}

static void test_structure(void)
{
    glow_module *m = parse(NET);
    glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true };
    int nq = 0;
    glow_function *f = quantize(m, &o, RANGES, &nq);
    if (getenv("QDEBUG"))
        glow_function_print(stderr, f);
    /* Conv (with its Relu), MaxPool, Reshape, FullyConnected; Sigmoid stays float. */
    CHECK_EQ(nq, 4);
    glow_node *c = find(f, NK_CHANNELWISE_QCONV);
    CHECK(c != NULL && find(f, NK_CONV) == NULL && find(f, NK_RELU) == NULL);
    if (c) {
        CHECK_STR_EQ(glow_node_str(c, GA_FUSED_ACT, ""), "Relu");
        /* The Relu's range [0, 6]: u8q with offset 0, scale 6/255. */
        CHECK_EQ(c->outs[0].dtype, GLOW_U8Q);
        CHECK_EQ(c->outs[0].offset, 0);
        CHECK_NEAR(c->outs[0].scale, 6.0 / 255, 1e-7);
        /* x's [-1, 1]: scale 2/255, offset where 0 falls (127.5 -> 128 by nearest even). */
        const glow_type *xt = glow_value_type(c->ins[0]);
        CHECK(xt->dtype == GLOW_U8Q && (xt->offset == 127 || xt->offset == 128));
        /* Per-channel scales: channel 0 holds 0.5, -0.25, 0.125, 0.75, -1 cyclically. */
        CHECK(glow_value_type(c->ins[3])->dims[0] == 4);
    }
    glow_node *fc = find(f, NK_FULLY_CONNECTED);
    CHECK(fc && glow_dtype_is_quantized(fc->outs[0].dtype) &&
          glow_dtype_is_quantized(glow_value_type(fc->ins[0])->dtype));
    /* One Quantize at the input, one Dequantize before the Sigmoid, nothing between. */
    CHECK_EQ(count_kind(f, NK_QUANTIZE), 1);
    CHECK_EQ(count_kind(f, NK_DEQUANTIZE), 1);
    CHECK_EQ(count_kind(f, NK_RESCALE_QUANTIZED), 0);
    glow_node *sig = find(f, NK_SIGMOID);
    CHECK(sig && sig->ins[0].node->kind == NK_DEQUANTIZE);
    glow_module_destroy(m);
}

/* The largest |weight| of the quantized conv's int8 weight constant. */
static int conv_weight_max(glow_function *f)
{
    glow_node *c = find(f, NK_CHANNELWISE_QCONV);
    CHECK(c != NULL);
    if (!c)
        return -1;
    const glow_node *w = c->ins[1].node;
    CHECK(w->kind == NK_CONSTANT);
    int most = 0;
    for (int64_t i = 0; i < glow_type_numel(&w->payload.type); i++) {
        int v = (int)fabs(glow_load_f64(w->payload.type.dtype, w->payload.data, (size_t)i));
        most = v > most ? v : most;
    }
    return most;
}

/* --reduce-range: the weights use 7 bits, [-63, 63] with 63 reached (scale max|w| / 63);
 * without it 127 is reached. */
static void test_reduce_range(void)
{
    for (int reduce = 0; reduce < 2; reduce++) {
        glow_module *m = parse(NET);
        glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true,
                                 .reduce_range = reduce };
        glow_function *f = quantize(m, &o, RANGES, NULL);
        CHECK_EQ(conv_weight_max(f), reduce ? 63 : 127);
        glow_module_destroy(m);
    }
}

/* A MatMul's constant right operand is a weight too: 7 bits with --reduce-range (the cpu
 * backend then runs it on the vpmaddubsw kernel as the convolutions), 8 without. */
static void test_reduce_range_matmul(void)
{
    static const char *const MM =
        "module {\n"
        "  %x = Placeholder input : f32[2, 4]\n"
        "  %w = Constant [0.5, -0.25, 0.125, 0.75, -1, 0.3] : f32[4, 3]\n"
        "  %out = Placeholder output : f32[2, 3]\n"
        "}\n"
        "function main {\n"
        "  %mm = MatMul(%x, %w)\n"
        "  Save(%mm, %out)\n"
        "}\n";
    static const named_range ranges[] = { { "x", -1, 1 }, { "mm", -4, 4 }, { NULL, 0, 0 } };
    for (int reduce = 0; reduce < 2; reduce++) {
        glow_module *m = parse(MM);
        glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .reduce_range = reduce };
        int nq = 0;
        glow_function *f = quantize(m, &o, ranges, &nq);
        glow_node *mm = find(f, NK_MATMUL);
        CHECK(mm != NULL && nq == 1);
        const glow_node *w = mm ? mm->ins[1].node : NULL;
        CHECK(w && w->kind == NK_CONSTANT && w->payload.type.dtype == GLOW_I8Q);
        if (w && w->kind == NK_CONSTANT) {
            int most = 0;
            for (int64_t i = 0; i < glow_type_numel(&w->payload.type); i++) {
                double v = glow_load_f64(w->payload.type.dtype, w->payload.data, (size_t)i);
                most = (int)fabs(v) > most ? (int)fabs(v) : most;
            }
            CHECK_EQ(most, reduce ? 63 : 127);
            CHECK_NEAR(w->payload.type.scale, reduce ? 1.0 / 63 : 1.0 / 127, 1e-7);
        }
        glow_module_destroy(m);
    }
}

static void test_keep_float_and_missing(void)
{
    glow_module *m = parse(NET);
    glow_quant_options o = { .schema = GLOW_QSCHEMA_SYMMETRIC, .keep_float = "conv,Sigmoid" };
    int nq = 0;
    glow_function *f = quantize(m, &o, RANGES, &nq);
    /* Conv stays float, and so do the cheap nodes after it (converting them alone would
     * only add a Quantize); the FullyConnected converts (symmetric: i8q, offset 0). */
    CHECK(find(f, NK_CONV) != NULL && find(f, NK_CHANNELWISE_QCONV) == NULL);
    CHECK(find(f, NK_RELU) && find(f, NK_RELU)->outs[0].dtype == GLOW_F32);
    glow_node *fc = find(f, NK_FULLY_CONNECTED);
    CHECK(fc && fc->outs[0].dtype == GLOW_I8Q && fc->outs[0].offset == 0);
    CHECK_EQ(nq, 1);
    glow_module_destroy(m);

    /* Without a range for the FullyConnected's result, it stays float. */
    static const named_range partial[] = { { "x", -1, 1 }, { "relu", 0, 6 }, { NULL, 0, 0 } };
    m = parse(NET);
    f = quantize(m, &o, partial, &nq);
    CHECK(find(f, NK_FULLY_CONNECTED) && find(f, NK_FULLY_CONNECTED)->outs[0].dtype == GLOW_F32);
    glow_module_destroy(m);
}

static void test_schemas(void)
{
    glow_type shape = glow_type_make(GLOW_F32, 1, (const int64_t[]){ 4 });
    glow_quant_options o = { .schema = GLOW_QSCHEMA_SYMMETRIC_UINT8 };
    glow_type t = glow_quant_type(0.5, 10, &o, &shape);
    CHECK(t.dtype == GLOW_U8Q && t.offset == 0);
    CHECK_NEAR(t.scale, 10.0 / 255, 1e-7);
    t = glow_quant_type(-2, 10, &o, &shape);
    CHECK(t.dtype == GLOW_I8Q && t.offset == 0);
    o.schema = GLOW_QSCHEMA_SYMMETRIC_POWER2;
    t = glow_quant_type(-2, 10, &o, &shape);
    CHECK(t.dtype == GLOW_I8Q && t.scale == 0.125f);   /* 10/127 = 0.0787 -> 2^-3 */
    o.schema = GLOW_QSCHEMA_ASYMMETRIC;
    t = glow_quant_type(2, 3, &o, &shape);     /* widened to contain 0 */
    CHECK(t.dtype == GLOW_U8Q && t.offset == 0);
    CHECK_NEAR(t.scale, 3.0 / 255, 1e-7);
    t = glow_quant_type(0, 0, &o, &shape);     /* an all-zero tensor still has a scale */
    CHECK(t.scale > 0);
    glow_quant_schema s;
    CHECK(glow_quant_schema_from_name("symmetric-uint8", &s) && s == GLOW_QSCHEMA_SYMMETRIC_UINT8);
    CHECK(!glow_quant_schema_from_name("sym", &s));
    char bad[32];
    CHECK(glow_quant_kind_list_ok("Conv,fullyconnected", bad, sizeof bad));
    CHECK(!glow_quant_kind_list_ok("Conv,Frobnicate", bad, sizeof bad));
    CHECK_STR_EQ(bad, "Frobnicate");
}

static void test_kl(void)
{
    /* A bell-shaped bulk around 0 with a sparse tail of outliers out to 10: KL clips inside
     * the tail (squeezing the tail in would leave the bulk a handful of levels), minmax
     * keeps it all. */
    static uint64_t hist[2048];
    for (int b = 0; b < 2048; b++) {
        double u = (b - 1024) / 40.0;
        hist[b] = (uint64_t)(100000 * exp(-u * u));
        if (b > 1300 && b % 50 == 0)
            hist[b] += 1;
    }
    glow_quant_range r = { .min = -10, .max = 10, .nbins = 2048, .hist = hist };
    glow_quant_options o = { .calibration = GLOW_QCALIB_KL };
    double lo, hi;
    glow_quant_calibrate(&r, &o, &lo, &hi);
    CHECK(hi < 5 && hi > 0.3 && lo > -5 && lo < -0.3);
    o.calibration = GLOW_QCALIB_MINMAX;
    glow_quant_calibrate(&r, &o, &lo, &hi);
    CHECK(lo == -10 && hi == 10);

    /* A ReLU's output: exact zeros, a narrow bulk near 0 and eight values (a classifier's top
     * scores) between 8 and 10. The divergence alone clips at the bulk (1.25); clipping those
     * values costs more than the finer step saves, so KL keeps the whole range. */
    memset(hist, 0, sizeof hist);
    hist[0] = 500000;
    for (int b = 1; b < 410; b++)
        hist[b] = (uint64_t)(20000 * exp(-b / 10.0));
    for (int b = 1640; b < 2048; b += 51)
        hist[b] = 1;
    r = (glow_quant_range){ .min = 0, .max = 10, .nbins = 2048, .hist = hist };
    o.calibration = GLOW_QCALIB_KL;
    glow_quant_calibrate(&r, &o, &lo, &hi);
    CHECK(lo == 0 && hi == 10);
}

/* Compiles module m (consumed) for backend with `threads` threads and runs it on x, of shape
 * [1][c][6][6]; copies the n floats of output 0 to y. Returns the program, for the caller to
 * look into and destroy, or NULL after a failed check. */
static glow_program *compile_run(glow_module *m, const char *backend, int threads, int64_t c,
                                 const float *x, float *y, size_t n)
{
    glow_compile_options co = { .backend = backend, .threads = threads,
                                .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    glow_type xt = glow_type_make(GLOW_F32, 4, (const int64_t[]){ 1, c, 6, 6 });
    glow_tensor t = { .type = xt, .data = (void *)x };
    glow_status s = glow_program_create(m, &co, &p, &d);
    if (s == GLOW_OK)
        s = glow_program_run(p, &t, 1, &d);
    if (s != GLOW_OK)
        fprintf(stderr, "%s: %s\n", backend, d.msg);
    CHECK_EQ(s, GLOW_OK);
    if (s != GLOW_OK) {
        glow_program_destroy(p);
        return NULL;
    }
    memcpy(y, glow_program_output(p, 0).data, n * sizeof(float));
    return p;
}

/* Run k of three of `text` quantized with o and ranges (the interpreter, then the cpu backend
 * at 1 and 2 threads) on x of 8 channels, into the n floats of y; the program, as
 * compile_run gives it. */
static glow_program *run_three(const char *text, const named_range *ranges,
                               const glow_quant_options *o, int k, const float *x, float *y,
                               size_t n)
{
    glow_module *m = parse(text);
    quantize(m, o, ranges, NULL);
    return compile_run(m, k == 0 ? "interpreter" : "cpu", k == 2 ? 2 : 1, 8, x, y, n);
}

/* Runs module m (consumed) on x with the given backend; copies the 5 outputs. */
static void run_net(glow_module *m, const char *backend, const float *x, float *y)
{
    glow_program_destroy(compile_run(m, backend, 2, 3, x, y, 5));
}

/* NET quantized with o over RANGES, run on x with the given backend. */
static void run_quantized(const glow_quant_options *o, const char *backend, const float *x,
                          float *y)
{
    glow_module *m = parse(NET);
    quantize(m, o, RANGES, NULL);
    run_net(m, backend, x, y);
}

static void test_numbers(void)
{
    float x[108], ref[5], qi[5], qc[5];
    for (int i = 0; i < 108; i++)
        x[i] = sinf((float)i * 0.7f);
    run_net(parse(NET), "interpreter", x, ref);
    glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true };
    run_quantized(&o, "interpreter", x, qi);
    run_quantized(&o, "cpu", x, qc);
    for (int i = 0; i < 5; i++) {
        CHECK_NEAR(qi[i], ref[i], 0.03);    /* a sigmoid of an 8-bit result */
        CHECK_EQ(qi[i], qc[i]);             /* the same integers on both backends */
    }
}

/* Two convolutions joined by a channel Concat (the IR optimizer makes it in place; the int8
 * prepare step undoes that into cpu.qconcat_nhwc), a residual Add and a max pool: the cpu
 * backend gives the interpreter's bytes. %br's range differs from %cat's, so a
 * RescaleQuantized takes it to the Concat's quantization: the cpu backend folds it into the
 * convolution before it (two requantizations in the kernel's store). */
static const char *const CAT =
    "module {\n"
    "  %x = Placeholder input : f32[1, 4, 6, 6]\n"
    "  %w1 = Constant [0.5, -0.25, 0.125] : f32[8, 4, 3, 3]\n"
    "  %w2 = Constant [-0.5, 0.75, 0.25, 0.1] : f32[4, 4, 1, 1]\n"
    "  %w3 = Constant [0.3, -0.2] : f32[12, 12, 1, 1]\n"
    "  %out = Placeholder output : f32[1, 12, 3, 3]\n"
    "}\n"
    "function main {\n"
    "  %a = Conv(%x, %w1) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=1}\n"
    "  %ar = Relu(%a)\n"
    "  %b = Conv(%x, %w2) {kernel=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], "
    "dilations=[1, 1], group=1}\n"
    "  %br = Relu(%b)\n"
    "  %cat = Concat(%ar, %br) {axis=1}\n"
    "  %c = Conv(%cat, %w3) {kernel=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], "
    "dilations=[1, 1], group=1}\n"
    "  %sum = Add(%c, %cat)\n"
    "  %pool = MaxPool(%sum) {kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], "
    "dilations=[1, 1]}\n"
    "  Save(%pool, %out)\n"
    "}\n";

static const named_range CAT_RANGES[] = {
    { "x", -1, 1 }, { "a", -3, 3 }, { "ar", 0, 3 }, { "b", -2, 2 }, { "br", 0, 2 },
    { "cat", 0, 3 }, { "c", -4, 4 }, { "sum", -4, 6 }, { "pool", -4, 6 }, { NULL, 0, 0 } };

static void test_concat(void)
{
    float x[144], yi[108], yc[108];
    for (int i = 0; i < 144; i++)
        x[i] = cosf((float)i * 0.37f);
    glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true };
    const char *be[2] = { "interpreter", "cpu" };
    float *out[2] = { yi, yc };
    for (int k = 0; k < 2; k++) {
        glow_module *m = parse(CAT);
        int nq = 0;
        quantize(m, &o, CAT_RANGES, &nq);
        CHECK(nq >= 5);
        glow_program *p = compile_run(m, be[k], 2, 4, x, out[k], sizeof yi / sizeof yi[0]);
        if (k == 1 && p) {
            const ir_instr *const *fb = NULL;
            CHECK_EQ(glow_program_fallbacks(p, &fb), 0);
            /* The Concat runs NHWC and nothing around it converts: the only conversions are
             * the graph input's (once for each of its two convolutions) and the output's. */
            int cats = 0, convs = 0, rescales = 0;
            for (const ir_instr *in = p->ir->first; in; in = in->next) {
                cats += in->kind == IK_CPU_QCONCAT_NHWC;
                convs += in->kind == IK_CPU_Q_TO_NHWC || in->kind == IK_CPU_Q_FROM_NHWC;
                rescales += in->kind == IK_RESCALE_QUANTIZED;
            }
            CHECK_EQ(cats, 1);
            CHECK_EQ(rescales, 0);
            CHECK(convs <= 3);
            if (convs > 3 || getenv("QDEBUG"))
                ir_function_print(stderr, p->ir);
        }
        glow_program_destroy(p);
    }
    CHECK(!memcmp(yi, yc, sizeof yi));
}

/* A residual Add with a Relu after it (ResNet's block end): the IR optimizer runs both in place
 * over the convolution's result, the cpu backend folds the Relu into the Add
 * (cpu.qbinary_post) and that into the 1x1 convolution before it (a residual operand: the
 * convolution's store adds the block's input and rescales, no pass of its own): still the
 * interpreter's bytes, at 1 and 2 threads. */
static const char *const RES =
    "module {\n"
    "  %x = Placeholder input : f32[1, 8, 6, 6]\n"
    "  %w1 = Constant [0.5, -0.25, 0.125] : f32[8, 8, 3, 3]\n"
    "  %w2 = Constant [0.3, -0.2, 0.6, -0.1] : f32[8, 8, 1, 1]\n"
    "  %out = Placeholder output : f32[1, 8, 3, 3]\n"
    "}\n"
    "function main {\n"
    "  %a = Conv(%x, %w1) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=1}\n"
    "  %ar = Relu(%a)\n"
    "  %c = Conv(%ar, %w2) {kernel=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], "
    "dilations=[1, 1], group=1}\n"
    "  %sum = Add(%c, %ar)\n"
    "  %r = Relu(%sum)\n"
    "  %pool = MaxPool(%r) {kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], "
    "dilations=[1, 1]}\n"
    "  Save(%pool, %out)\n"
    "}\n";

static const named_range RES_RANGES[] = {
    { "x", -1, 1 }, { "a", -3, 3 }, { "ar", 0, 3 }, { "c", -4, 4 }, { "sum", -5, 6 },
    { "r", 0, 6 }, { "pool", 0, 6 }, { NULL, 0, 0 } };

static void test_residual(void)
{
    float x[288], y[3][72];
    for (int i = 0; i < 288; i++)
        x[i] = cosf((float)i * 0.53f);
    /* symmetric-uint8 adds an i8q convolution result to a u8q Relu output: operands of two
     * kinds, each read with its own signedness. Its final Relu turns i8q into u8q, a buffer of
     * its own that the IR optimizer does not share with the Add's, so it stays a pass. */
    const glow_quant_schema schemas[] = { GLOW_QSCHEMA_ASYMMETRIC, GLOW_QSCHEMA_SYMMETRIC_UINT8 };
    for (int s = 0; s < 2; s++) {
        glow_quant_options o = { .schema = schemas[s], .per_channel = true };
        for (int k = 0; k < 3; k++) {
            glow_program *p = run_three(RES, RES_RANGES, &o, k, x, y[k],
                                        sizeof y[k] / sizeof y[k][0]);
            if (k > 0 && p) {
                int fused = 0, rest = 0;
                for (const ir_instr *in = p->ir->first; in; in = in->next) {
                    fused += in->kind == IK_CPU_QCONV_NHWC && in->nops == 8;
                    rest += in->kind == IK_ADD || in->kind == IK_RELU ||
                            in->kind == IK_RESCALE_QUANTIZED || in->kind == IK_CPU_QBINARY_POST;
                }
                CHECK_EQ(fused, 1);
                CHECK_EQ(rest, s);
                if (fused != 1 || rest != s || getenv("QDEBUG"))
                    ir_function_print(stderr, p->ir);
            }
            glow_program_destroy(p);
        }
        CHECK(!memcmp(y[0], y[1], sizeof y[0]));
        CHECK(!memcmp(y[0], y[2], sizeof y[0]));
    }
}

/* A depthwise convolution (MobileNet's 3x3 over 8 channels, stride 2 and pads): the cpu
 * backend's bytes are the interpreter's at 1 and 2 threads, and its kernel is the AVX2 one
 * (taps in pairs) where the core splits 512-bit operations (Zen 4), the AVX-512 template
 * elsewhere: both are exact, so the choice is only speed. */
static const char *const DW =
    "module {\n"
    "  %x = Placeholder input : f32[1, 8, 6, 6]\n"
    "  %w = Constant [0.5, -0.25, 0.125, 0.75, -1, 0.3, 0.9] : f32[8, 1, 3, 3]\n"
    "  %out = Placeholder output : f32[1, 8, 3, 3]\n"
    "}\n"
    "function main {\n"
    "  %d = Conv(%x, %w) {kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=8}\n"
    "  %r = Relu(%d)\n"
    "  Save(%r, %out)\n"
    "}\n";

static const named_range DW_RANGES[] = {
    { "x", -1, 1 }, { "d", -3, 3 }, { "r", 0, 3 }, { NULL, 0, 0 } };

static void test_depthwise(void)
{
    float x[288], y[3][72];
    for (int i = 0; i < 288; i++)
        x[i] = sinf((float)i * 0.41f);
    glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true };
    for (int k = 0; k < 3; k++) {
        glow_program *p = run_three(DW, DW_RANGES, &o, k, x, y[k], sizeof y[k] / sizeof y[k][0]);
        int dws = 0;
        for (const ir_instr *in = p && k > 0 ? p->ir->first : NULL; in; in = in->next) {
            if (in->kind != IK_CPU_QDWCONV_NHWC)
                continue;
            dws++;
            cpu_op *ops = calloc(CPU_MAX_CALLS, sizeof *ops);
            int nops = 0;
            cpu_isa split = { .avx2 = true, .avx512 = true, .split512 = true };
            cpu_isa whole = { .avx2 = true, .avx512 = true };
            CHECK(cpu_select(in, &split, ops, &nops) && nops == 1 &&
                  ops[0].k == CPU_K_qdwconv_q8_avx2);
            CHECK(cpu_select(in, &whole, ops, &nops) && nops == 1 &&
                  ops[0].k == CPU_K_qdwconv_q8_avx512);
            free(ops);
        }
        CHECK_EQ(dws, k > 0 ? 1 : 0);
        glow_program_destroy(p);
    }
    CHECK(!memcmp(y[0], y[1], sizeof y[0]));
    CHECK(!memcmp(y[0], y[2], sizeof y[0]));
}

/* --precision int16: convolutions convert too (16-bit activations, 8-bit weights, int64
 * accumulators on the reference), closer to float than int8. */
static void test_int16(void)
{
    float x[108], ref[5], q8[5], q16[5];
    for (int i = 0; i < 108; i++)
        x[i] = sinf((float)i * 0.7f);
    run_net(parse(NET), "interpreter", x, ref);
    glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true };
    run_quantized(&o, "interpreter", x, q8);
    o.precision = GLOW_I16Q;
    glow_module *m = parse(NET);
    glow_function *f = quantize(m, &o, RANGES, NULL);
    glow_node *c = find(f, NK_CHANNELWISE_QCONV);
    CHECK(c && glow_value_type(c->ins[0])->dtype == GLOW_I16Q && c->outs[0].dtype == GLOW_I16Q);
    run_net(m, "interpreter", x, q16);
    double e8 = 0, e16 = 0;
    for (int i = 0; i < 5; i++) {
        e8 += fabs(q8[i] - ref[i]);
        e16 += fabs(q16[i] - ref[i]);
    }
    CHECK(e16 < e8);
}

int main(void)
{
    test_structure();
    test_reduce_range();
    test_reduce_range_matmul();
    test_keep_float_and_missing();
    test_schemas();
    test_kl();
    test_numbers();
    test_concat();
    test_residual();
    test_depthwise();
    test_int16();
    return CHECK_DONE();
}
