// test_cpu_fast.c - The cpu backend's fast paths (blocked-layout conv through scratch buffers,
// packed GEMM for FullyConnected/MatMul with constant weights) against the interpreter, on
// fixed layer shapes (odd channels, strides, pads, dilations, 1x1, 3x3, 7x7/2, depthwise,
// groups, batch 2), 1 vs 2 threads bit-identical, and checks that the fast kernels ran.
// Not bit-exact against the interpreter: the blocked kernels sum in another order with FMA.
#include "check.h"
#include "backend/cpu/cpu_internal.h"
#include "runtime/runtime.h"
#include "testlib/compare.h"
#include "testlib/rand_graph.h"

/* target.c (cpu_llvm.h's other declarations need the LLVM headers). */
void cpu_host_isa(cpu_isa *isa);

/* Compile with every activation in its plain layout (glow_compile_options.plain_layout). */
static bool plain_layout;

/* What the cpu backend made of a case: instructions on a blocked/packed kernel, layout
 * conversions (to/from NCHWc calls), Adds left in the program, activations kept blocked. */
typedef struct stats {
    int fast, conversions, adds, blocked;
} stats;

/* Compiles and runs; returns a malloc'd copy of output 0 (NULL on failure); *st (if given)
 * describes the compiled program. */
static float *run(case_fn fn, uint64_t seed, const char *backend, int threads, int64_t *n,
                  stats *st)
{
    glow_program *p = build_and_run(fn, seed, backend, threads, plain_layout);
    if (!p)
        return NULL;
    if (st) {
        /* The backend's own instructions (prepare.c), and what its selector makes of them. */
        cpu_isa isa;
        cpu_host_isa(&isa);
        cpu_op *ops = calloc(CPU_MAX_CALLS, sizeof(*ops));
        memset(st, 0, sizeof *st);
        for (const ir_instr *in = p->ir->first; in; in = in->next) {
            int nops = 0;
            st->adds += in->kind == IK_ADD;
            st->conversions += in->kind == IK_CPU_TO_NCHWC || in->kind == IK_CPU_FROM_NCHWC;
            if (in->kind == IK_CPU_CONV_NCHWC || in->kind == IK_CPU_DWCONV_NCHWC ||
                in->kind == IK_CPU_MAXPOOL_NCHWC || in->kind == IK_CPU_AVGPOOL_NCHWC ||
                in->kind == IK_CPU_GEMM_PACKED || in->kind == IK_CPU_PWDW_NCHWC) {
                /* A fused 1x1 + depthwise (fuse_pwdw.c) runs two convs. */
                st->fast += in->kind == IK_CPU_PWDW_NCHWC ? 2 : 1;
                CHECK(cpu_select(in, &isa, ops, &nops) && nops == 1);
            }
        }
        /* Activations kept blocked between kernels (not the conversions' scratch). */
        for (const ir_value *v = p->ir->values; v; v = v->next)
            st->blocked += v->kind == IV_ALLOC && v->type.rank == 5 &&
                           strncmp(v->name, "cpu.", 4) != 0;
        free(ops);
    }
    float *out = output_copy(p, n);
    glow_program_destroy(p);
    return out;
}

/* What a case expects of the cpu backend on an AVX2/AVX-512 host: at least `fast` fast
 * instructions; with `layout` set, at most `conversions` layout conversions, at most `adds`
 * Adds left (the others fused into convs), and some activation kept blocked. */
typedef struct expect {
    int fast;
    bool layout;
    int conversions, adds;
} expect;

static stats last;   /* of the last diff's 1-thread cpu run */

/* cpu (1 and 2 threads) against the interpreter within rel_tol, the thread counts
 * bit-identical, and the fast paths as `want` says. */
static void diff_x(const char *what, case_fn fn, uint64_t seed, double rel_tol, expect want)
{
    int64_t n0 = 0, n1 = 0, n2 = 0;
    stats st = { 0 };
    float *ref = run(fn, seed, "interpreter", 1, &n0, NULL);
    float *c1 = run(fn, seed, "cpu", 1, &n1, &st);
    last = st;
    float *c2 = run(fn, seed, "cpu", 2, &n2, NULL);
    CHECK(ref && c1 && c2);
    if (!ref || !c1 || !c2)
        goto done;
    CHECK_EQ(n0, n1);
    CHECK_EQ(n1, n2);
    cpu_isa isa;
    cpu_host_isa(&isa);
    if ((isa.avx2 || isa.avx512) &&
        (st.fast < want.fast ||
         (want.layout && (st.conversions > want.conversions || st.adds > want.adds ||
                          st.blocked == 0)))) {
        fprintf(stderr, "%s: %d fast instructions (%d expected), %d conversions (<= %d), "
                "%d adds (<= %d), %d blocked activations\n", what, st.fast, want.fast,
                st.conversions, want.conversions, st.adds, want.adds, st.blocked);
        CHECK(false);
    }
    /* Blocked kernels sum in another order (and with FMA): rounding errors scale with the
     * terms' magnitudes, so tolerances are relative to the output's RMS where it is larger
     * than the element (cancellation), and to 1 at least. */
    double rms = 0;
    for (int64_t i = 0; i < n0; i++)
        rms += (double)ref[i] * ref[i];
    rms = n0 > 0 ? sqrt(rms / (double)n0) : 0;
    double scale = rms > 1 ? rms : 1;
    cmp_spec near = { what, "cpu", "interpreter", rel_tol, scale, false, 3 };
    cmp_spec bits = { what, "2 threads", "1 thread", 0, 0, false, 3 };
    int bad = compare_close(&near, GLOW_F32, c1, ref, n0);
    bad += compare_bits(&bits, GLOW_F32, c2, c1, n0);
    CHECK(bad == 0);
done:
    free(ref);
    free(c1);
    free(c2);
}

static void diff(const char *what, case_fn fn, uint64_t seed, double rel_tol, int want_fast)
{
    diff_x(what, fn, seed, rel_tol, (expect){ .fast = want_fast });
}

/* --- cases --- */

typedef struct conv_cfg {
    const char *what;
    int64_t n, c, m, h, w, kh, kw, sh, sw, dh, dw, p[4], g;
    bool bias;
    const char *act;   /* NULL, "Relu" or "Clip" (fused by the optimizer) */
} conv_cfg;

static const conv_cfg *cur;

static void case_conv(void)
{
    const conv_cfg *c = cur;
    int64_t k[2] = { c->kh, c->kw }, s[2] = { c->sh, c->sw }, dl[2] = { c->dh, c->dw };
    int64_t p[4] = { c->p[0], c->p[1], c->p[2], c->p[3] };
    glow_value x = input("x", 4, DIMS(c->n, c->c, c->h, c->w));
    glow_value ins[3] = { x, cst(4, DIMS(c->m, c->c / c->g, c->kh, c->kw)), cst(1, DIMS(c->m)) };
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2),
                      GLOW_AINTS(PADS, p, 4), GLOW_AINTS(DILATIONS, dl, 2),
                      GLOW_AI(GROUP, c->g) };
    glow_value y = node(NK_CONV, ins, c->bias ? 3 : 2, a, 5);
    if (c->act && !strcmp(c->act, "Relu")) {
        y = node(NK_RELU, &y, 1, NULL, 0);
    } else if (c->act) {
        glow_attr ca[] = { GLOW_AF(MIN, 0.0), GLOW_AF(MAX, 6.0) };
        y = node(NK_CLIP, &y, 1, ca, 2);
    }
    output(y);
}

/* Two convs in a row (blocked scratch reused by the planner) with a residual Add. */
static void case_chain(void)
{
    int64_t k[2] = { 3, 3 }, s[2] = { 1, 1 }, dl[2] = { 1, 1 }, p[4] = { 1, 1, 1, 1 };
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2),
                      GLOW_AINTS(PADS, p, 4), GLOW_AINTS(DILATIONS, dl, 2), GLOW_AI(GROUP, 1) };
    glow_value x = input("x", 4, DIMS(1, 24, 9, 11));
    glow_value i1[3] = { x, cst(4, DIMS(24, 24, 3, 3)), cst(1, DIMS(24)) };
    glow_value y = node(NK_RELU, (glow_value[]){ node(NK_CONV, i1, 3, a, 5) }, 1, NULL, 0);
    glow_value i2[3] = { y, cst(4, DIMS(24, 24, 3, 3)), cst(1, DIMS(24)) };
    glow_value z = node(NK_CONV, i2, 3, a, 5);
    output(node(NK_ADD, (glow_value[]){ z, x }, 2, NULL, 0));
}

/* Convs with LeakyRelu (YOLO's activation): kept whole by lowering, fused into the conv's
 * store, so the activations between stay blocked; the one after the Add is not after a conv
 * and runs on the blocked bytes. */
static void case_leaky(void)
{
    int64_t k[2] = { 3, 3 }, s[2] = { 1, 1 }, dl[2] = { 1, 1 }, p[4] = { 1, 1, 1, 1 };
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, s, 2),
                      GLOW_AINTS(PADS, p, 4), GLOW_AINTS(DILATIONS, dl, 2), GLOW_AI(GROUP, 1) };
    glow_attr la[] = { GLOW_AF(ALPHA, 0.1) };
    glow_value x = input("x", 4, DIMS(1, 16, 9, 11)), y = x;
    for (int i = 0; i < 3; i++) {
        int64_t c = glow_value_type(y)->dims[1];
        glow_value in[3] = { y, cst(4, DIMS(32, c, 3, 3)), cst(1, DIMS(32)) };
        glow_value z = node(NK_LEAKY_RELU, (glow_value[]){ node(NK_CONV, in, 3, a, 5) }, 1,
                            la, 1);
        if (i == 1)
            z = node(NK_LEAKY_RELU, (glow_value[]){ node(NK_ADD, (glow_value[]){ z, y }, 2,
                                                         NULL, 0) }, 1, la, 1);
        y = z;
    }
    output(y);
}

/* --- layouts kept blocked between kernels, residuals fused into convs --- */

static glow_value conv(glow_value x, int64_t m, int64_t k, int64_t s, bool relu)
{
    return conv_g(x, m, k, s, 1, relu ? 'r' : 0);
}

static glow_value pool(glow_node_kind kind, glow_value x, int64_t k, int64_t s, const int64_t *p)
{
    int64_t kk[2] = { k, k }, ss[2] = { s, s }, dl[2] = { 1, 1 }, pp[4] = { p[0], p[1], p[2], p[3] };
    glow_attr a[] = { GLOW_AINTS(KERNEL, kk, 2), GLOW_AINTS(STRIDES, ss, 2),
                      GLOW_AINTS(PADS, pp, 4), GLOW_AINTS(DILATIONS, dl, 2),
                      GLOW_AI(COUNT_INCLUDE_PAD, 1) };
    return node(kind, &x, 1, a, kind == NK_AVG_POOL ? 5 : 4);
}

static int64_t layout_batch = 1;

/* ResNet's bottleneck with a downsampling shortcut, then an identity block: both Adds (and
 * their Relus) fold into convs; max and average pools on the blocked layout between. */
static void case_resnet_blocks(void)
{
    glow_value x = input("x", 4, DIMS(layout_batch, 3, 19, 17));
    glow_value a = conv(x, 32, 3, 1, true);
    a = pool(NK_MAX_POOL, a, 3, 2, DIMS(1, 1, 1, 1));
    glow_value b = conv(conv(conv(a, 16, 1, 1, true), 16, 3, 1, true), 64, 1, 1, false);
    glow_value sc = conv(a, 64, 1, 1, false);
    glow_value r = node(NK_RELU, (glow_value[]){ node(NK_ADD, (glow_value[]){ b, sc }, 2,
                                                      NULL, 0) }, 1, NULL, 0);
    glow_value c = conv(conv(r, 16, 1, 1, true), 64, 3, 1, false);
    r = node(NK_RELU, (glow_value[]){ node(NK_ADD, (glow_value[]){ r, c }, 2, NULL, 0) }, 1,
             NULL, 0);
    r = pool(NK_AVG_POOL, r, 2, 2, DIMS(0, 0, 1, 1));
    /* The classifier: global average pool to one pixel per channel (the same bytes in
     * either layout), Flatten, FullyConnected: no conversion at this edge. */
    r = pool(NK_AVG_POOL, conv(r, 32, 1, 1, true), 5, 1, DIMS(0, 0, 0, 0));
    glow_type ft = glow_type_make(GLOW_F32, 2, DIMS(layout_batch, 32));
    glow_node *fl = glow_build(F, NK_RESHAPE, "flatten", &r, 1, NULL, 0, &ft, 1, &D);
    if (!fl) {
        fprintf(stderr, "build Reshape: %s\n", D.msg);
        exit(1);
    }
    glow_value ins[3] = { glow_val(fl, 0), cst(2, DIMS(32, 10)), cst(1, DIMS(10)) };
    output(node(NK_FULLY_CONNECTED, ins, 3, NULL, 0));
}

/* Inception-style branches written into their Concat (in place at batch 1), a pool on the
 * concatenation, then Flatten + FullyConnected: the layout edge before the FC. */
static void case_inception(void)
{
    glow_value x = input("x", 4, DIMS(layout_batch, 16, 9, 9));
    glow_value b1 = conv(x, 16, 1, 1, true);
    glow_value b2 = conv(conv(x, 16, 1, 1, true), 32, 3, 1, true);
    glow_value b3 = conv(pool(NK_MAX_POOL, x, 3, 1, DIMS(1, 1, 1, 1)), 16, 1, 1, true);
    glow_value y = node(NK_CONCAT, (glow_value[]){ b1, b2, b3 }, 3,
                        (glow_attr[]){ GLOW_AI(AXIS, 1) }, 1);
    y = conv(pool(NK_MAX_POOL, y, 3, 2, DIMS(0, 0, 1, 1)), 32, 3, 1, true);
    glow_type ft = glow_type_make(GLOW_F32, 2, DIMS(layout_batch, 32 * 4 * 4));
    glow_node *fl = glow_build(F, NK_RESHAPE, "flatten", &y, 1, NULL, 0, &ft, 1, &D);
    if (!fl) {
        fprintf(stderr, "build Reshape: %s\n", D.msg);
        exit(1);
    }
    glow_value ins[3] = { glow_val(fl, 0), cst(2, DIMS(32 * 4 * 4, 10)), cst(1, DIMS(10)) };
    output(node(NK_FULLY_CONNECTED, ins, 3, NULL, 0));
}

/* MobileNet v2's inverted residuals: ReLU6 fused into the convs, depthwise, two residual
 * Adds in a row (each fused into the projection conv), a Clip that follows an Add (the act
 * kernel, on the blocked layout). */
static void case_mobilenet(void)
{
    glow_value x = input("x", 4, DIMS(layout_batch, 3, 15, 15));
    glow_value a = conv_g(x, 16, 3, 2, 1, 'c');
    for (int i = 0; i < 2; i++) {
        glow_value e = conv_g(a, 48, 1, 1, 1, 'c');
        glow_value d = conv_g(e, 48, 3, 1, 48, 'c');
        a = node(NK_ADD, (glow_value[]){ a, conv_g(d, 16, 1, 1, 1, 0) }, 2, NULL, 0);
    }
    output(conv(relu6(node(NK_ADD, (glow_value[]){ a, a }, 2, NULL, 0)), 8, 1, 1, false));
}

static int64_t fc_m, fc_k, fc_n;

static void case_fc(void)
{
    glow_value ins[3] = { input("x", 2, DIMS(fc_m, fc_k)), cst(2, DIMS(fc_k, fc_n)),
                          cst(1, DIMS(fc_n)) };
    output(node(NK_FULLY_CONNECTED, ins, 3, NULL, 0));
}

static void case_matmul(void)
{
    glow_value ins[2] = { input("a", 2, DIMS(fc_m, fc_k)), cst(2, DIMS(fc_k, fc_n)) };
    output(node(NK_MATMUL, ins, 2, NULL, 0));
}

int main(void)
{
    /* The direct kernels' paths: Winograd (another rounding, tests/cpu/test_cpu_wino.c) would
     * take the 3x3 stride-1 layers the cost model gives it. */
    setenv("GLOWC_WINOGRAD", "0", 1);
    static const conv_cfg convs[] = {
        { "7x7/2 first conv (3 channels)", 1, 3, 64, 37, 35, 7, 7, 2, 2, 1, 1, { 3, 3, 3, 3 },
          1, true, "Relu" },
        { "3x3 odd channels", 1, 17, 33, 13, 10, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 1, true,
          NULL },
        { "1x1", 2, 64, 40, 7, 7, 1, 1, 1, 1, 1, 1, { 0, 0, 0, 0 }, 1, true, "Relu" },
        { "1x1 stride 2", 1, 32, 48, 9, 9, 1, 1, 2, 2, 1, 1, { 0, 0, 0, 0 }, 1, false, NULL },
        { "3x3 dilation 2", 1, 16, 16, 12, 14, 3, 3, 1, 1, 2, 2, { 2, 2, 2, 2 }, 1, true,
          "Clip" },
        { "3x3/2 asymmetric pads", 1, 20, 24, 15, 16, 3, 3, 2, 2, 1, 1, { 0, 1, 1, 0 }, 1,
          true, NULL },
        { "5x3 rectangular, mixed strides", 1, 9, 5, 11, 12, 5, 3, 1, 2, 1, 1, { 2, 1, 2, 1 },
          1, true, NULL },
        { "depthwise 3x3/2", 1, 40, 40, 11, 13, 3, 3, 2, 2, 1, 1, { 1, 1, 1, 1 }, 40, true,
          "Clip" },
        { "grouped 2 x 16", 1, 32, 32, 8, 8, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, 2, true, NULL },
    };
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
        cur = &convs[i];
        diff(convs[i].what, case_conv, 100 + i, 1e-5, 1);
    }
    diff("conv chain + residual", case_chain, 200, 1e-5, 2);
    /* One conversion in (x), one out; the Add (after the second conv's activation: no
     * residual to fuse) and the LeakyRelu after it run on the blocked bytes. */
    diff_x("conv + LeakyRelu", case_leaky, 210, 1e-5,
           (expect){ .fast = 3, .layout = true, .conversions = 2, .adds = 1 });
    for (layout_batch = 1; layout_batch <= 2; layout_batch++) {
        /* One conversion in (the first conv's 3 channels), none out; both Adds fused. */
        diff_x("resnet blocks", case_resnet_blocks, 500 + layout_batch, 1e-5,
               (expect){ .fast = 12, .layout = true, .conversions = 1, .adds = 0 });
        /* In: x; out: the last conv; the doubling Add has no conv to fold into. Five convs
         * deep with pre-activations in the hundreds (weights in [-2, 2]), so the fast kernels'
         * other summation order shows up to ~2e-4 of the scale (plain layouts alike). */
        diff_x("mobilenet blocks", case_mobilenet, 700 + layout_batch, 1e-3,
               (expect){ .fast = 8, .layout = true, .conversions = 2, .adds = 1 });
        /* In: x, read by three branches; out: before the flatten. At batch 2 the concat
         * copies. */
        diff_x("inception", case_inception, 600 + layout_batch, 1e-5,
               (expect){ .fast = 7, .layout = true, .conversions = 4, .adds = 0 });
    }
    /* The same programs without the layout pass agree with the blocked ones (within
     * rounding: the residual is added before, not after, the conv's rounding). */
    plain_layout = true;
    layout_batch = 1;
    diff_x("resnet blocks, plain layout", case_resnet_blocks, 501, 1e-5, (expect){ .fast = 9 });
    CHECK(last.adds == 2 && last.blocked == 0);
    plain_layout = false;
    static const int64_t fcs[][3] = { { 1, 2048, 1000 }, { 3, 37, 33 }, { 13, 64, 70 },
                                      { 1, 1, 1 } };
    for (size_t i = 0; i < sizeof fcs / sizeof fcs[0]; i++) {
        fc_m = fcs[i][0], fc_k = fcs[i][1], fc_n = fcs[i][2];
        diff("FullyConnected", case_fc, 300 + i, 1e-5, 1);
        diff("MatMul, constant B", case_matmul, 400 + i, 1e-5, 1);
    }
    for (int i = 0; i < ninputs; i++)
        glow_tensor_free(&inputs[i]);
    return CHECK_DONE();
}
