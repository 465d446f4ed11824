// test_cpu_wino.c - The cpu backend's Winograd F(4x4,3x3) convolutions (cpu.wino_nchwc,
// kernels/winograd): the cost model takes a 3x3 stride-1 layer of enough channels and plane,
// GLOWC_WINOGRAD=0/1 overrides it, the outputs match the interpreter (within the transforms'
// rounding, relative to the output's scale) and are bit-identical at 1 and 2 threads, a
// residual Add and its Relu fold into the Winograd conv, `glowc dump --stats` names the
// kernel of each conv, and the cost model's choices on the bench models' small planes (14x14,
// 7x7, batch 1 and 8) with its memory rule.
#include "check.h"
#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/winograd.h"
#include "runtime/runtime.h"
#include "testlib/compare.h"
#include "testlib/onnx_build.h"
#include "testlib/rand_graph.h"
#include "testlib/spawn.h"

void cpu_host_isa(cpu_isa *isa);

typedef struct stats {
    int wino, direct, adds;
} stats;

static float *run_case(case_fn fn, uint64_t seed, const char *backend, int threads, int64_t *n,
                       stats *st)
{
    prog_counts pc;
    float *out = run_counted(fn, seed, backend, threads, false, n, &pc);
    *st = (stats){ .wino = pc.kind[IK_CPU_WINO_NCHWC], .direct = pc.kind[IK_CPU_CONV_NCHWC],
                   .adds = pc.kind[IK_ADD] };
    return out;
}

/* cpu at 1 and 2 threads against the interpreter; returns the 1-thread run's stats. The
 * transforms round values up to ~100x the inputs', so the tolerance is relative to the
 * output's largest magnitude (1e-4 of it; the direct kernel stays within 1e-5). */
static stats diff(const char *what, case_fn fn, uint64_t seed)
{
    int64_t n0 = 0, n1 = 0, n2 = 0;
    stats st = { 0 }, st2;
    float *ref = run_case(fn, seed, "interpreter", 1, &n0, &st2);
    float *c1 = run_case(fn, seed, "cpu", 1, &n1, &st);
    float *c2 = run_case(fn, seed, "cpu", 2, &n2, &st2);
    CHECK(ref && c1 && c2);
    if (ref && c1 && c2) {
        CHECK_EQ(n0, n1);
        CHECK_EQ(n1, n2);
        double scale = 1;
        for (int64_t i = 0; i < n0; i++)
            scale = fmax(scale, fabs((double)ref[i]));
        cmp_spec near = { what, "cpu", "interpreter", 1e-4, scale, false, 3 };
        cmp_spec bits = { what, "2 threads", "1 thread", 0, 0, false, 3 };
        CHECK(compare_close(&near, GLOW_F32, c1, ref, n0) == 0);
        CHECK(compare_bits(&bits, GLOW_F32, c2, c1, n0) == 0);
    }
    free(ref);
    free(c1);
    free(c2);
    return st;
}

static int64_t g_n = 1, g_c = 32, g_m = 40, g_h = 21, g_w = 19;
static int64_t g_pads[4] = { 1, 1, 1, 1 };

static glow_value conv3(glow_value x, int64_t m, const int64_t *p)
{
    int64_t c = glow_value_type(x)->dims[1];
    int64_t k[2] = { 3, 3 }, s[2] = { 1, 1 }, dl[2] = { 1, 1 }, pp[4] = { p[0], p[1], p[2], p[3] };
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2),
                      GLOW_AINTS(PADS, pp, 4), GLOW_AINTS(DILATIONS, dl, 2), GLOW_AI(GROUP, 1) };
    glow_value ins[3] = { x, cst(4, DIMS(m, c, 3, 3)), cst(1, DIMS(m)) };
    return node(NK_CONV, ins, 3, a, 5);
}

/* One 3x3 conv with a fused Relu. */
static void case_conv(void)
{
    glow_value x = input("x", 4, DIMS(g_n, g_c, g_h, g_w));
    glow_value y = conv3(x, g_m, g_pads);
    output(node(NK_RELU, &y, 1, NULL, 0));
}

/* A 3x3 conv, then ResNet's basic block on its result (two 3x3 convs, the residual Add and a
 * Relu), then a last 3x3 conv: the activations between stay blocked (graph inputs and outputs
 * never are), so the Add and its Relu fold into the block's second conv. */
static glow_value relu(glow_value x)
{
    return node(NK_RELU, &x, 1, NULL, 0);
}

static void case_block(void)
{
    glow_value x = input("x", 4, DIMS(2, 48, 15, 13));
    glow_value a = relu(conv3(x, 48, g_pads));
    glow_value b = conv3(relu(conv3(a, 48, g_pads)), 48, g_pads);
    glow_value r = relu(node(NK_ADD, (glow_value[]){ b, a }, 2, NULL, 0));
    output(conv3(r, 32, g_pads));
}

/* `glowc dump --stats` on an ONNX file of one 3x3 conv 64 -> 64 at 56x56 (ResNet-50's): the
 * line names the kernel the cost model chose, and GLOWC_WINOGRAD=0 turns it to direct. */
static void check_dump(void)
{
    if (!spawn_setup("glowc_test_wino"))
        return;
    mk_model *mk = mk_new(13);
    float *w = rand_data(64 * 64 * 9);
    mk_input(mk, "x", 1, 4, DIMS(1, 64, 56, 56));
    mk_initializer(mk, mk_tensor_raw(mk, "w", 1, 4, DIMS(64, 64, 3, 3), w,
                                     64 * 64 * 9 * sizeof(float)));
    Onnx__NodeProto *nd = mk_node(mk, "Conv", "c3", 2, (const char *const[]){ "x", "w" }, 1,
                                  (const char *const[]){ "y" });
    mk_attr_ints(mk, nd, "pads", DIMS(1, 1, 1, 1), 4);
    mk_attr_ints(mk, nd, "kernel_shape", DIMS(3, 3), 2);
    mk_output(mk, "y", 1, 4, DIMS(1, 64, 56, 56));
    TMP(path, "conv.onnx");
    CHECK(mk_write(mk, path));
    mk_free(mk);
    free(w);
    cpu_isa isa;
    cpu_host_isa(&isa);
    for (int k = 0; k < 2; k++) {
        if (k)
            setenv("GLOWC_WINOGRAD", "0", 1);
        result r = RUN("dump", path, "--backend", "cpu", "--stage", "ir-optimized", "--stats");
        CHECK_EQ(r.code, 0);
        const char *want = !isa.avx2 && !isa.avx512 ? "reference"
                           : k ? "c3' 3x3/1x1 64->64 channels at 56x56: direct"
                               : "c3' 3x3/1x1 64->64 channels at 56x56: winograd F(4x4,3x3)";
        CHECK(r.err && strstr(r.err, want));
        if (!r.err || !strstr(r.err, want))
            fprintf(stderr, "wanted \"%s\" in:\n%s\n", want, r.err ? r.err : "");
        result_free(&r);
    }
    unsetenv("GLOWC_WINOGRAD");
    spawn_cleanup();
}

/* The cost model (GLOWC_WINOGRAD unset) on the 3x3 stride-1 layers of the bench models, for
 * both vector lengths, on a core with two FMA pipes: Winograd from 28x28 up; at 7x7 direct at
 * batch 1 (4x the weights for 4 tiles) but Winograd at batch 8; at 14x14 Winograd with AVX2 and
 * at batch 8, while with AVX-512 at batch 1 the memory rule declines it: the estimate gains
 * (ResNet-50's 256->256), too little for its extra bytes. On a core that issues one 512-bit
 * FMA per cycle (Zen 4) the multiply-adds cost twice the cycles and the 14x14 layers pass;
 * the 7x7 ones at batch 1 still do not. */
static void check_choice(void)
{
    for (int v = 8; v <= 16; v += 8)
        for (double rate = 1.0; rate <= 2.0; rate += 1.0) {
            CHECK(cpu_wino_choose(1, 64, 64, 56, 56, v, rate));
            CHECK(cpu_wino_choose(1, 512, 512, 28, 28, v, rate));
            CHECK(cpu_wino_choose(1, 256, 256, 14, 14, v, rate) == (v == 8 || rate == 1.0));
            CHECK(cpu_wino_choose(8, 256, 256, 14, 14, v, rate));
            CHECK(!cpu_wino_choose(1, 512, 512, 7, 7, v, rate));
            CHECK(cpu_wino_choose(8, 512, 512, 7, 7, v, rate));
            CHECK(cpu_wino_choose(8, 160, 320, 7, 7, v, rate));
        }
    double direct, wino;
    cpu_wino_estimates(1, 256, 256, 14, 14, 16, 2.0, &direct, &wino);
    CHECK(wino < direct);
    CHECK(direct - wino < 0.2 * (double)cpu_wino_extra_bytes(256, 256, 16));
    cpu_wino_estimates(1, 256, 256, 14, 14, 16, 1.0, &direct, &wino);
    CHECK(direct - wino >= 0.2 * (double)cpu_wino_extra_bytes(256, 256, 16));
    CHECK_EQ(cpu_wino_extra_bytes(96, 208, 16), (size_t)96 * 208 * 27 * 4);
    CHECK_EQ(cpu_wino_extra_bytes(20, 8, 16), (size_t)32 * 16 * 27 * 4);
    /* A ymm FMA issues at the full rate on every host; a zmm one at 1 or 2 per cycle. */
    CHECK(cpu_wino_fma_rate(8) == 2.0);
    CHECK(cpu_wino_fma_rate(16) == 1.0 || cpu_wino_fma_rate(16) == 2.0);
    /* The overrides win over the estimate and the rule. */
    setenv("GLOWC_WINOGRAD", "1", 1);
    CHECK(cpu_wino_choose(1, 256, 256, 14, 14, 16, 2.0) &&
          cpu_wino_choose(1, 512, 512, 7, 7, 16, 2.0));
    setenv("GLOWC_WINOGRAD", "0", 1);
    CHECK(!cpu_wino_choose(8, 512, 512, 28, 28, 16, 1.0));
    unsetenv("GLOWC_WINOGRAD");
}

int main(void)
{
    check_choice();
    cpu_isa isa;
    cpu_host_isa(&isa);
    bool fast = isa.avx2 || isa.avx512;
    /* The cost model takes this layer (21x19 plane, 32 -> 40 channels). */
    stats st = diff("3x3 32->40 relu", case_conv, 11);
    CHECK(!fast || (st.wino == 1 && st.direct == 0));
    /* Forced either way. */
    setenv("GLOWC_WINOGRAD", "0", 1);
    st = diff("3x3 32->40, GLOWC_WINOGRAD=0", case_conv, 11);
    CHECK(!fast || (st.wino == 0 && st.direct == 1));
    setenv("GLOWC_WINOGRAD", "1", 1);
    /* Asymmetric pads, few channels, one-pixel rows, a plane of one tile's part. */
    static const struct { int64_t c, m, h, w, p[4]; } shapes[] = {
        { 16, 16, 5, 7, { 0, 1, 1, 0 } }, { 20, 8, 1, 9, { 1, 1, 1, 1 } },
        { 64, 72, 6, 4, { 0, 0, 1, 1 } }, { 33, 17, 3, 3, { 0, 0, 0, 0 } },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        g_c = shapes[i].c, g_m = shapes[i].m, g_h = shapes[i].h, g_w = shapes[i].w;
        memcpy(g_pads, shapes[i].p, sizeof g_pads);
        st = diff("3x3 forced", case_conv, 20 + i);
        CHECK(!fast || st.wino == 1);
    }
    memcpy(g_pads, DIMS(1, 1, 1, 1), sizeof g_pads);
    /* Small planes, whose tile groups end in a tail (16 tiles as 12 + 4; 4 tiles), also over
     * images (batch 2 and 3). */
    static const struct { int64_t n, c, m, h; } small[] = {
        { 1, 48, 40, 14 }, { 1, 32, 72, 7 }, { 2, 40, 24, 7 }, { 3, 16, 40, 14 },
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        g_n = small[i].n, g_c = small[i].c, g_m = small[i].m, g_h = g_w = small[i].h;
        st = diff("3x3 forced, small plane", case_conv, 40 + i);
        CHECK(!fast || st.wino == 1);
    }
    g_n = 1;
    st = diff("basic block, residual fused", case_block, 31);
    CHECK(!fast || (st.wino == 4 && st.adds == 0));
    unsetenv("GLOWC_WINOGRAD");
    check_dump();
    return CHECK_DONE();
}
