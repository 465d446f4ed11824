// test_cpu_isa_cap.c - GLOWC_CPU_ISA, the cap on the cpu backend's vector ISA
// (docs/cpu-backend.md, "A lesser host"): a small int8 network gives the same bytes at every
// cap as uncapped, its float twin the same numbers within rounding; the JIT's object code uses
// no register wider than the cap allows (disassembled: no zmm at avx2, no ymm at scalar, and
// zmm uncapped on an AVX-512 host, so that the check can fail); an unknown value is refused
// with the list of valid ones. Code for another CPU: aarch64 gets NEON unless capped to scalar.
#include <llvm-c/Disassembler.h>
#include <llvm-c/Object.h>
#include <llvm-c/Target.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/cpu_llvm.h"
#include "check.h"
#include "onnx/onnx.h"
#include "opt/graph_parse.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"
#include "support/threadpool.h"

static glow_diag D;

static const char *const CAPS[] = { "scalar", "avx2", "avx2+avxvnni", "avx512", "native" };
#define NCAPS 5

/* Odd channel counts (5 in, 20 out: a partial output block at every vector width), a 3x3 conv
 * with pads, depthwise convs of stride 2 and 1 (the avx2 kernel's row pairs: a half-zero last
 * pair, padded rows and columns), a 1x1 conv, a residual Add, a max pool and an FC. */
static const char *const NET =
    "module {\n"
    "  %x = Placeholder input : f32[1, 5, 9, 9]\n"
    "  %w1 = Constant [0.5, -0.25, 0.125, 0.75, -1, 0.3, -0.6] : f32[20, 5, 3, 3]\n"
    "  %b1 = Constant [0.1, -0.2, 0.05] : f32[20]\n"
    "  %w2 = Constant [0.2, -0.4, 0.6, 0.1, -0.3] : f32[20, 1, 3, 3]\n"
    "  %w2s = Constant [0.3, 0.1, -0.5, 0.2, -0.15, 0.4, 0.05] : f32[20, 1, 3, 3]\n"
    "  %w3 = Constant [-0.5, 0.75, 0.25, 0.1, -0.35, 0.45, 0.05] : f32[20, 20, 1, 1]\n"
    "  %fw = Constant [0.3, -0.6, 0.2, 0.15, -0.05] : f32[80, 7]\n"
    "  %fb = Constant [0.05, -0.1] : f32[7]\n"
    "  %out = Placeholder output : f32[1, 7]\n"
    "}\n"
    "function main {\n"
    "  %c1 = Conv(%x, %w1, %b1) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=1}\n"
    "  %r1 = Relu(%c1)\n"
    "  %c2 = Conv(%r1, %w2) {kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=20}\n"
    "  %c2s = Conv(%c2, %w2s) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=20}\n"
    "  %c3 = Conv(%c2s, %w3) {kernel=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], "
    "dilations=[1, 1], group=1}\n"
    "  %sum = Add(%c3, %c2)\n"
    "  %pool = MaxPool(%sum) {kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], "
    "dilations=[1, 1]}\n"
    "  %flat = Reshape(%pool) : f32[1, 80]\n"
    "  %fc = FullyConnected(%flat, %fw, %fb)\n"
    "  Save(%fc, %out)\n"
    "}\n";

typedef struct named_range {
    const char *name;
    double lo, hi;
} named_range;

static const named_range RANGES[] = {
    { "x", -1, 1 }, { "c1", -8, 8 }, { "r1", 0, 8 }, { "c2", -10, 10 }, { "c2s", -6, 6 },
    { "c3", -12, 12 },
    { "sum", -20, 20 }, { "pool", -20, 20 }, { "flat", -20, 20 }, { "fc", -30, 30 },
    { NULL, 0, 0 } };

static bool look(void *ctx, glow_value v, glow_quant_range *out)
{
    for (const named_range *r = ctx; r->name; r++)
        if (!strcmp(r->name, v.node->name)) {
            *out = (glow_quant_range){ .min = r->lo, .max = r->hi };
            return true;
        }
    return false;
}

/* Quantized with 7-bit weights (--reduce-range). */
static bool g_reduce;

static glow_module *net(bool quantized)
{
    gp g;
    glow_module *m = gp_parse(&g, NET);
    if (!m)
        fprintf(stderr, "parse error: %s\n", g.err);
    CHECK(m != NULL);
    if (m && quantized) {
        glow_function *f = glow_module_function(m, "main");
        glow_quant_options o = { .schema = GLOW_QSCHEMA_ASYMMETRIC, .per_channel = true,
                                 .reduce_range = g_reduce };
        CHECK_EQ(glow_quantize(f, &o, look, (void *)RANGES, NULL, &D), GLOW_OK);
        glow_opt_options oo = { .phase = GLOW_OPT_AFTER_QUANTIZATION, .verify = true };
        CHECK_EQ(glow_optimize(f, &oo, &D), GLOW_OK);
    }
    return m;
}

/* The int8 convolutions of the last program run_net compiled that run the Winograd and the
 * 7-bit weights kernels (their qkernel attribute). */
static int g_nwino, g_n7;

/* The network's 7 outputs on the cpu backend at the current GLOWC_CPU_ISA; false on failure. */
static bool run_net(bool quantized, const float *x, float *y)
{
    glow_module *m = net(quantized);
    if (!m)
        return false;
    glow_compile_options co = { .backend = "cpu", .threads = 2,
                                .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    glow_type xt = glow_type_make(GLOW_F32, 4, (const int64_t[]){ 1, 5, 9, 9 });
    glow_tensor t = { .type = xt, .data = (void *)x };
    glow_diag_clear(&D);
    glow_status s = glow_program_create(m, &co, &p, &D);
    if (s == GLOW_OK)
        s = glow_program_run(p, &t, 1, &D);
    if (s != GLOW_OK)
        fprintf(stderr, "GLOWC_CPU_ISA=%s: %s\n", getenv("GLOWC_CPU_ISA"), D.msg);
    if (s == GLOW_OK)
        memcpy(y, glow_program_output(p, 0).data, 7 * sizeof(float));
    g_nwino = g_n7 = 0;
    for (const ir_instr *in = p && p->ir ? p->ir->first : NULL; in; in = in->next)
        for (uint32_t i = 0; i < in->nattr; i++)
            if (in->attrs[i].id == GA_QKERNEL) {
                g_nwino += !strcmp(in->attrs[i].v.s, "winograd");
                g_n7 += !strcmp(in->attrs[i].v.s, "7-bit");
            }
    glow_program_destroy(p);
    return s == GLOW_OK;
}

/* Whether the cap in GLOWC_CPU_ISA leaves this host's ISA and the JIT's target features as
 * they are uncapped (on an AVX2 host: avx2+avxvnni without AVX-VNNI, avx512, native). The
 * compile is then the uncapped one, and comparing its outputs with the uncapped ones could not
 * fail: such caps are skipped (a third of this test's compiles on an AVX2 host). */
static bool cap_changes_nothing(void)
{
    const char *cap = getenv("GLOWC_CPU_ISA");
    char *saved = cap ? strdup(cap) : NULL;
    cpu_isa a, b;
    char *fa = cpu_host_features();
    cpu_host_isa(&a);
    unsetenv("GLOWC_CPU_ISA");
    char *fb = cpu_host_features();
    cpu_host_isa(&b);
    if (saved)
        setenv("GLOWC_CPU_ISA", saved, 1);
    free(saved);
    bool same = a.avx2 == b.avx2 && a.avx512 == b.avx512 && a.avx512vnni == b.avx512vnni &&
                a.avxvnni == b.avxvnni && a.neon == b.neon && !strcmp(fa, fb);
    LLVMDisposeMessage(fa);
    LLVMDisposeMessage(fb);
    return same;
}

/* The int8 kernels the last run_net chose at the current cap: the AVX2 int8 kernels run the
 * 7-bit weights (variant 1) and the exact Winograd (variant 2), no other ISA does. */
static void check_qkernels(int variant)
{
    cpu_isa isa;
    cpu_host_isa(&isa); /* what the cap leaves of this host */
    bool avx2 = !strcmp(cpu_qconv_isa(&isa), "avx2");
    CHECK_EQ(g_nwino, avx2 && variant == 2 ? 1 : 0);
    CHECK_EQ(g_n7, avx2 && variant == 1 ? 3 : 0);
}

/* Every cap gives the int8 network the same bytes as uncapped (variant 0, 8-bit weights); the
 * avx2 and scalar caps also with 7-bit weights (variant 1: the avx2 cap runs its 3x3 conv, its
 * 1x1 conv and its FC on the vpmaddubsw kernel) and with
 * GLOWC_WINOGRAD=1 (variant 2: the avx2 cap's exact int8 Winograd on the 3x3 conv). */
static void test_same_outputs(int variant)
{
    g_reduce = variant == 1;
    if (variant == 2)
        setenv("GLOWC_WINOGRAD", "1", 1);
    float x[405], ref_q[7], ref_f[7], q[7], f[7];
    for (int i = 0; i < 405; i++)
        x[i] = sinf((float)i * 0.61f) * 0.9f;
    unsetenv("GLOWC_CPU_ISA");
    CHECK(run_net(true, x, ref_q));
    check_qkernels(variant);
    CHECK(run_net(false, x, ref_f));
    double scale = 0;
    for (int i = 0; i < 7; i++)
        scale = fmax(scale, fabs(ref_f[i]));
    CHECK(scale > 0.1); /* the network does not collapse to zeros */
    for (int k = 0; k < NCAPS; k++) {
        /* The kernel variants' runs: the avx2 cap and the scalar reference (the suite's time:
         * each run compiles the network twice). */
        if (variant && strcmp(CAPS[k], "avx2") && strcmp(CAPS[k], "scalar"))
            continue;
        setenv("GLOWC_CPU_ISA", CAPS[k], 1);
        if (cap_changes_nothing())
            continue;
        CHECK(run_net(true, x, q));
        check_qkernels(variant);
        CHECK(run_net(false, x, f));
        for (int i = 0; i < 7; i++) {
            if (q[i] != ref_q[i] || fabs(f[i] - ref_f[i]) > 1e-4 * scale)
                fprintf(stderr, "GLOWC_CPU_ISA=%s output %d: int8 %g vs %g, f32 %g vs %g\n",
                        CAPS[k], i, q[i], ref_q[i], f[i], ref_f[i]);
            CHECK(q[i] == ref_q[i]);                      /* the same integers */
            CHECK_NEAR(f[i], ref_f[i], 1e-4 * scale);     /* another summation order */
        }
    }
    unsetenv("GLOWC_CPU_ISA");
    unsetenv("GLOWC_WINOGRAD");
    g_reduce = false;
}

/* How many instructions of the objects' code name an xmm/ymm/zmm register ("xmm", "ymm" or
 * "zmm"), disassembled by LLVM. */
static int count_regs(LLVMMemoryBufferRef obj, const char *reg)
{
    LLVMBinaryRef bin = LLVMCreateBinary(obj, NULL, NULL);
    CHECK(bin != NULL);
    if (!bin)
        return 0;
    char *triple = LLVMGetDefaultTargetTriple();
    LLVMDisasmContextRef dc = LLVMCreateDisasm(triple, NULL, 0, NULL, NULL);
    LLVMDisposeMessage(triple);
    CHECK(dc != NULL);
    int count = 0;
    LLVMSectionIteratorRef s = LLVMObjectFileCopySectionIterator(bin);
    for (; dc && !LLVMObjectFileIsSectionIteratorAtEnd(bin, s); LLVMMoveToNextSection(s)) {
        const char *name = LLVMGetSectionName(s);
        if (!name || strncmp(name, ".text", 5))
            continue;
        const uint8_t *code = (const uint8_t *)LLVMGetSectionContents(s);
        uint64_t size = LLVMGetSectionSize(s), at = 0;
        while (at < size) {
            char text[256];
            size_t n = LLVMDisasmInstruction(dc, (uint8_t *)code + at, size - at, at, text,
                                             sizeof text);
            at += n ? n : 1;
            count += strstr(text, reg) != NULL;
        }
    }
    LLVMDisposeSectionIterator(s);
    if (dc)
        LLVMDisasmDispose(dc);
    LLVMDisposeBinary(bin);
    return count;
}

/* The JIT's object code for lenet (float convolutions and an FC) and the int8 network at cap
 * `isa`: *ymm and *zmm instructions naming those registers. */
static void jit_regs(const char *isa, bool quantized, int *ymm, int *zmm)
{
    *ymm = *zmm = 0;
    setenv("GLOWC_CPU_ISA", isa, 1);
    glow_module *m = NULL;
    if (quantized) {
        m = net(true);
    } else {
        m = glow_module_create();
        CHECK(glow_onnx_load(m, "models/lenet.onnx", NULL, &D) == GLOW_OK);
    }
    glow_program *p = NULL;
    glow_compile_options o = { .backend = "cpu", .stop_after = GLOW_STAGE_IR_OPTIMIZED };
    glow_diag_clear(&D);
    CHECK(glow_program_create(m, &o, &p, &D) == GLOW_OK);
    cpu_module *cm = NULL;
    int nk = 0, nf = 0;
    CHECK(p && cpu_generate_unoptimized(p->ir, &cm, &nk, &nf, &D) == GLOW_OK);
    glow_threadpool *pool = glow_threadpool_create(1);
    if (cm && pool) {
        LLVMMemoryBufferRef objs[CPU_MAX_PARTS];
        int nobj = 0;
        bool cached = false;
        CHECK(cpu_compile_parts(cm, pool, NULL, objs, &nobj, &cached, &D) == GLOW_OK);
        for (int i = 0; i < nobj; i++) {
            *ymm += count_regs(objs[i], "ymm");
            *zmm += count_regs(objs[i], "zmm");
            LLVMDisposeMemoryBuffer(objs[i]);
        }
    }
    if (pool)
        glow_threadpool_destroy(pool);
    cpu_module_destroy(cm);
    glow_program_destroy(p);
    unsetenv("GLOWC_CPU_ISA");
}

static void test_object_code(void)
{
    LLVMInitializeNativeDisassembler();
    cpu_isa host;
    unsetenv("GLOWC_CPU_ISA");
    cpu_host_isa(&host);
    for (int q = 0; q < 2; q++) {
        int ymm, zmm;
        jit_regs("avx2", q, &ymm, &zmm);
        CHECK_EQ(zmm, 0);
        if (host.avx2)
            CHECK(ymm > 0);
        jit_regs("scalar", q, &ymm, &zmm);
        CHECK_EQ(zmm, 0);
        CHECK_EQ(ymm, 0);
        if (host.avx512) { /* the check can fail only there */
            jit_regs("native", q, &ymm, &zmm);
            CHECK(zmm > 0);
        }
    }
}

static void test_isa_flags(void)
{
    cpu_isa host, c;
    unsetenv("GLOWC_CPU_ISA");
    cpu_host_isa(&host);
    setenv("GLOWC_CPU_ISA", "avx2", 1);
    cpu_host_isa(&c);
    CHECK(c.avx2 == host.avx2 && !c.avx512 && !c.avx512vnni && !c.avxvnni);
    setenv("GLOWC_CPU_ISA", "avx2+avxvnni", 1);
    cpu_host_isa(&c);
    CHECK(c.avx2 == host.avx2 && !c.avx512 && !c.avx512vnni && c.avxvnni == host.avxvnni);
    setenv("GLOWC_CPU_ISA", "avx512", 1);
    cpu_host_isa(&c);
    CHECK(c.avx512 == host.avx512 && !c.avx512vnni && !c.avxvnni);
    setenv("GLOWC_CPU_ISA", "scalar", 1);
    cpu_host_isa(&c);
    CHECK(!c.avx2 && !c.avx512 && !c.avx512vnni && !c.avxvnni);
    /* Code for another CPU: NEON for aarch64 bundles unless capped to scalar, nothing for
     * another x86-64 triple or CPU; never NEON for the host. */
    CHECK(!host.neon);
    cpu_foreign_isa("aarch64-linux-gnu", &c);
    CHECK(!c.neon && !c.avx2);
    unsetenv("GLOWC_CPU_ISA");
    cpu_foreign_isa("aarch64-linux-gnu", &c);
    CHECK(c.neon && !c.avx2 && !c.avx512 && cpu_isa_vlen(&c) == 4);
    setenv("GLOWC_CPU_ISA", "avx2", 1);
    cpu_foreign_isa("aarch64-unknown-linux-gnu", &c);
    CHECK(c.neon);
    cpu_foreign_isa("x86_64-pc-linux-gnu", &c);
    CHECK(!c.neon && !c.avx2 && cpu_isa_vlen(&c) == 0);
    cpu_foreign_isa(NULL, &c);
    CHECK(!c.neon && cpu_isa_vlen(&c) == 0);
    /* The JIT's features: AVX-512 turned off explicitly at avx2, AVX too at scalar. */
    setenv("GLOWC_CPU_ISA", "avx2", 1);
    char *f = cpu_host_features();
    CHECK(!strstr(f, "+avx512") && !strstr(f, "+avxvnni"));
    if (host.avx512)
        CHECK(strstr(f, "-avx512f") != NULL);
    LLVMDisposeMessage(f);
    setenv("GLOWC_CPU_ISA", "scalar", 1);
    f = cpu_host_features();
    CHECK(!strstr(f, "+avx") && !strstr(f, "+fma,") && !strstr(f, "+f16c"));
    LLVMDisposeMessage(f);
    unsetenv("GLOWC_CPU_ISA");
}

static void test_unknown(void)
{
    setenv("GLOWC_CPU_ISA", "avx3", 1);
    glow_diag_clear(&D);
    CHECK(cpu_isa_cap_check(&D) != GLOW_OK);
    CHECK_CONTAINS(D.msg, "avx3");
    CHECK_CONTAINS(D.msg, "scalar, avx2, avx2+avxvnni, avx512, native");
    float x[405] = { 0 }, y[7];
    CHECK(!run_net(false, x, y));
    CHECK_CONTAINS(D.msg, "GLOWC_CPU_ISA");
    unsetenv("GLOWC_CPU_ISA");
}

int main(void)
{
    test_isa_flags();
    test_unknown();
    for (int variant = 0; variant < 3; variant++)
        test_same_outputs(variant);
    test_object_code();
    return CHECK_DONE();
}
