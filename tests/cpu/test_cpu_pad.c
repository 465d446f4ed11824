// test_cpu_pad.c - The cpu backend's blocked activations whose channels are not whole blocks
// (src/backend/cpu/layout.c): padded to whole blocks, they stay blocked between the fast
// kernels. Chains conv -> conv -> residual Add -> depthwise of 24 and 40 channels (not whole
// AVX-512 blocks) keep every intermediate blocked: one conversion in (the graph input) and one
// out (the graph output), the Add folded into the conv; of 8 channels (less than a block),
// read by a dense conv, they stay plain, but 8 channels read by a depthwise stay blocked.
// Outputs match the interpreter within the fast kernels' tolerance and are bit-identical at
// 1 and 3 threads. A conv with a Sigmoid writes 0.5 into the padding lanes, so under AVX-512
// its 24-channel result stays plain (converted), and the result is still right. A
// SqueezeNet-style classifier (conv of 40 channels, max pool, conv, global average pool as the
// graph output) runs both pools blocked, the last one converting its one pixel per channel.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend/cpu/cpu_internal.h"
#include "runtime/runtime.h"
#include "testlib/compare.h"
#include "testlib/rand_graph.h"

void cpu_host_isa(cpu_isa *isa);

typedef struct counts {
    int to, from, add, pools;   /* pools: cpu.maxpool_nchwc and cpu.avgpool_nchwc */
} counts;

static float *run_case(case_fn fn, uint64_t seed, const char *backend, int threads, int64_t *n,
                       counts *ct)
{
    prog_counts pc;
    float *out = run_counted(fn, seed, backend, threads, false, n, &pc);
    *ct = (counts){ .to = pc.kind[IK_CPU_TO_NCHWC], .from = pc.kind[IK_CPU_FROM_NCHWC],
                    .add = pc.kind[IK_ADD],
                    .pools = pc.kind[IK_CPU_MAXPOOL_NCHWC] + pc.kind[IK_CPU_AVGPOOL_NCHWC] };
    return out;
}

/* cpu at 1 and 3 threads against the interpreter (1e-4 of the output's largest magnitude:
 * the blocked kernels sum in another order, with FMA), the two thread counts bit-identical;
 * *ct: the 1-thread program's counts. */
static void diff(const char *what, case_fn fn, uint64_t seed, counts *ct)
{
    int64_t n[3] = { 0 };
    counts c3;
    float *ref = run_case(fn, seed, "interpreter", 1, &n[0], &c3);
    float *c1 = run_case(fn, seed, "cpu", 1, &n[1], ct);
    float *t3 = run_case(fn, seed, "cpu", 3, &n[2], &c3);
    CHECK(ref && c1 && t3);
    if (ref && c1 && t3) {
        CHECK_EQ(n[1], n[0]);
        CHECK_EQ(n[2], n[0]);
        double scale = 1;
        for (int64_t i = 0; i < n[0]; i++)
            scale = fmax(scale, fabs((double)ref[i]));
        cmp_spec near = { what, "cpu", "interpreter", 1e-4, scale, false, 3 };
        cmp_spec bits3 = { what, "3 threads", "1 thread", 0, 0, false, 3 };
        CHECK(compare_close(&near, GLOW_F32, c1, ref, n[0]) == 0);
        CHECK(compare_bits(&bits3, GLOW_F32, t3, c1, n[0]) == 0);
    }
    free(ref), free(c1), free(t3);
}

static int64_t g_c = 24, g_batch = 1;

/* conv 3x3 (ReLU6) -> conv 3x3 -> Add with the first conv's result -> depthwise 3x3 (Relu),
 * all of g_c channels on an odd plane (no clamp at the end: the tolerance is relative to the
 * output's magnitude, which then is the sums'). */
static void case_chain(void)
{
    glow_value x = input("x", 4, DIMS(g_batch, g_c, 13, 11));
    glow_value a = conv_g(x, g_c, 3, 1, 1, 'c');
    glow_value b = conv_g(a, g_c, 3, 1, 1, 0);
    glow_value s = node(NK_ADD, (glow_value[]){ b, a }, 2, NULL, 0);
    output(conv_g(s, g_c, 3, 1, g_c, 'r'));
}

/* conv 3x3 -> Sigmoid -> conv 3x3 of 24 channels: sigmoid(0) = 0.5 is no zero padding. */
static void case_sigmoid(void)
{
    glow_value x = input("x", 4, DIMS(1, 24, 9, 10));
    glow_value a = conv_g(x, 24, 3, 1, 1, 0);
    a = node(NK_SIGMOID, &a, 1, NULL, 0);
    output(conv_g(a, 24, 3, 1, 1, 'r'));
}

static glow_value pool(glow_node_kind kind, glow_value x, int64_t k, int64_t s)
{
    int64_t kk[2] = { k, k }, ss[2] = { s, s }, dl[2] = { 1, 1 }, pp[4] = { 0, 0, 0, 0 };
    glow_attr a[] = { GLOW_AINTS(KERNEL, kk, 2), GLOW_AINTS(STRIDES, ss, 2),
                      GLOW_AINTS(PADS, pp, 4), GLOW_AINTS(DILATIONS, dl, 2),
                      GLOW_AI(COUNT_INCLUDE_PAD, 0) };
    return node(kind, &x, 1, a, kind == NK_AVG_POOL ? 5 : 4);
}

/* conv 3x3 to 40 (Relu) -> max pool 3x3/2 -> conv 1x1 to 40 (Relu) -> global average pool,
 * the graph output. */
static void case_classifier(void)
{
    glow_value x = input("x", 4, DIMS(1, 16, 15, 15));
    glow_value a = pool(NK_MAX_POOL, conv_g(x, 40, 3, 1, 1, 'r'), 3, 2);
    output(pool(NK_AVG_POOL, conv_g(a, 40, 1, 1, 1, 'r'), 7, 1));
}

/* conv 1x1 16 -> 8 (Relu) -> depthwise 3x3 (ReLU6) -> conv 3x3 8 -> 16: fewer channels than an
 * AVX-512 block. */
static void case_narrow(void)
{
    glow_value x = input("x", 4, DIMS(1, 16, 11, 12));
    glow_value a = conv_g(x, 8, 1, 1, 1, 'r');
    a = conv_g(a, 8, 3, 1, 8, 'c');
    output(conv_g(a, 16, 3, 1, 1, 0));
}

static bool g_fast;

/* The counts of a case's program on a host with the fast kernels (add < 0: not checked). */
static void expect(const char *what, const counts *ct, int to, int from, int add)
{
    bool ok = !g_fast || (ct->to == to && ct->from == from && (add < 0 || ct->add == add));
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "%s: %d to_nchwc, %d from_nchwc, %d Add; wanted %d, %d, %d\n", what,
                ct->to, ct->from, ct->add, to, from, add);
}

int main(void)
{
    cpu_isa isa;
    cpu_host_isa(&isa);
    g_fast = isa.avx2 || isa.avx512;
    static const int64_t channels[] = { 24, 40, 8 };
    counts ct = { 0 };
    for (int k = 0; k < 3; k++) {
        for (g_batch = 1; g_batch <= (k == 0 ? 2 : 1); g_batch++) {
            g_c = channels[k];
            char what[64];
            snprintf(what, sizeof what, "chain of %lld channels, batch %lld", (long long)g_c,
                     (long long)g_batch);
            diff(what, case_chain, 70 + (uint64_t)k, &ct);
            /* Converted once in and once out; the Add folded into the second conv. But 8
             * channels under AVX-512 (less than a block) read by a dense conv stay plain:
             * each conv converts in and out, the Add runs plain. */
            if (g_c < 16 && isa.avx512)
                expect(what, &ct, 3, 3, 1);
            else
                expect(what, &ct, 1, 1, 0);
        }
    }
    /* Under AVX-512 the 1x1's 8 channels, read by the depthwise, stay blocked (padded); the
     * depthwise's, read by the dense conv, are converted for it. */
    diff("narrow", case_narrow, 79, &ct);
    expect("narrow", &ct, isa.avx512 ? 2 : 1, isa.avx512 ? 2 : 1, -1);
    /* Under AVX-512 the Sigmoid's buffers stay plain: converted out of the first conv and
     * into the second (with AVX2, 24 channels are whole blocks and stay blocked). */
    diff("sigmoid between convs", case_sigmoid, 80, &ct);
    expect("sigmoid", &ct, isa.avx512 ? 2 : 1, isa.avx512 ? 2 : 1, -1);
    /* Both pools blocked; converted in once, and out once after the global pool under
     * AVX-512 (with AVX2's blocks of 8, its 40 channels of one pixel are the blocked bytes). */
    diff("classifier", case_classifier, 81, &ct);
    expect("classifier", &ct, 1, isa.avx512 ? 1 : 0, -1);
    CHECK(!g_fast || ct.pools == 2);
    return CHECK_DONE();
}
