// winograd.c - The Winograd F(4x4,3x3) convolution's compile-time side: the choice per layer
// against the direct kernel, and the weight transform (kernels/winograd, docs/cpu-backend.md
// "Winograd convolution").
//
// The choice compares two estimates of one thread's cycles from the shape alone: the direct
// kernel's multiply-adds (9 per output and input channel) at its measured efficiency, and the
// Winograd plan's (wino_plan.h: 36 per 4x4 tile, the transforms, and its transformed weights,
// 4x the direct kernel's, read once per tile group), each with its weights' first read from
// memory. Winograd wins on wide planes with enough channels; it loses on the deep layers of few
// tiles, where the weights dominate. And as its weights stay in the constant region for the
// program's life, it must also repay their extra bytes (WINO_CYCLES_PER_BYTE).
#include "backend/cpu/winograd.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cpu/cpu_internal.h"
#include "qconv/qwpack.h"
#include "winograd/wino_plan.h"

/* Direct-kernel cycles: its multiply-adds at the core's FMA rate (cpu_wino_fma_rate) and the
 * efficiency measured with kernels_bench on the 3x3 layers of VGG-19 and ResNet-50
 * (docs/cpu-backend.md). */
#define DIRECT_EFFICIENCY 0.90

/* The memory rule: Winograd's weights are 4x the direct kernel's and stay resident (constant
 * region, RSS, the bundle's weights file, their load at startup), so a layer takes it only if
 * its estimate saves at least this many cycles per run for every extra byte: 0.2 (50 us per
 * MiB at 4.2 GHz; reading a MiB from the page cache at load costs 100-200 us, repaid within
 * 2-4 runs). The wide planes pass by far (VGG-19's 512->512 @28: 1.2 cycles per byte, @56 and
 * up 5-80). With AVX-512 at batch 1 it declines every 14x14 layer (ResNet-50's 256->256,
 * VGG-19's 512->512, GoogLeNet's: 0.06-0.15 cycles per byte, estimated 1.1-1.3x the direct
 * kernel; in the networks, whose weights come from memory, ResNet-50 b1 ran 2% slower with
 * them and VGG-19's constant region would grow by 113 MB); with AVX2, whose direct kernel is
 * slower, 14x14 passes (0.25-0.4). 7x7 layers lose anyway at batch 1 (4x the weights for 4
 * tiles); at batch 8 the 3x3 layers of the bench models gain 0.4-2 cycles per byte. */
#define WINO_CYCLES_PER_BYTE 0.2

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Vector FMAs of v lanes the host core issues per cycle: 2 (two FMA pipes: Zen 3/5, Intel's
 * AVX-512 server cores), but 1 for 512-bit vectors on Zen 4 (family 19h with AVX-512), whose
 * two 256-bit pipes run a 512-bit FMA as two halves: its one-core peak is half Zen 5's (117 vs
 * 264 GFLOP/s, bench/roofline), while memory is as fast. The estimates' multiply-adds then cost
 * twice the cycles against the same weight streams, so Winograd pays on planes where with two
 * pipes the weights' bytes outweigh it (ResNet-50's 14x14 layers). The Winograd plan and the
 * choice depend on it, so a program compiled for this host is the same in every compile, but
 * can differ between a Zen 4 and a Zen 5 (the compiled-program cache keys on the CPU's features,
 * which differ between them). */
double cpu_wino_fma_rate(int v)
{
    return v == 16 && cpu_host_amd_19h() ? 1.0 : 2.0;
}

/* GLOWC_WINOGRAD: 0 never, 1 always, -1 the cost model decides. */
static int wino_env(void)
{
    const char *env = getenv("GLOWC_WINOGRAD");
    return env && !strcmp(env, "0") ? 0 : env && !strcmp(env, "1") ? 1 : -1;
}

void cpu_wino_estimates(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v,
                        double rate, double *direct, double *wino)
{
    size_t cb = (size_t)cdiv(c, v), mb = (size_t)cdiv(m, v);
    double macs = (double)n * (double)oh * (double)ow * 9.0 * (double)(cb * (size_t)v) *
                  (double)mb;
    double dbytes = 9.0 * (double)(cb * (size_t)v) * (double)(mb * (size_t)v) * 4.0;
    *direct = macs / rate / DIRECT_EFFICIENCY + dbytes / GK_WINO_BW_MEM;
    gk_wino_plan p = gk_wino_plan_of((size_t)n, cb, mb, (size_t)oh, (size_t)ow, (size_t)v, rate);
    *wino = p.cycles;
}

bool cpu_wino_choose(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v,
                     double rate)
{
    /* The kernel exists for AVX-512 and AVX2 blocks only: an aarch64 bundle's NEON blocks of
     * 4 keep the direct convolution, whatever GLOWC_WINOGRAD says. */
    if (v != 16 && v != 8)
        return false;
    int env = wino_env();
    if (env >= 0)
        return env == 1;
    double direct, wino;
    cpu_wino_estimates(n, c, m, oh, ow, v, rate, &direct, &wino);
    return direct - wino >= WINO_CYCLES_PER_BYTE * (double)cpu_wino_extra_bytes(c, m, v) &&
           wino < direct;
}

/* The int8 Winograd's rule: at least 16 input channels (one transform vector; below, its
 * padded channels cost more than it saves) and QWINO_MIN_TILES 2x2 tiles. Its int16 weights
 * are 3.6x the direct kernel's bytes and stay resident; a plane of few tiles reads each of
 * them for few outputs. ResNet-50's 7x7 layers at batch 1 (16 tiles) would hold 12 MB more
 * (the int8 constant region 0.32x the fp32 one on an AVX2 host, where it is 0.24x without
 * them) for 0.6 ms per layer where weights are hot (qconv_bench), less in the network. */
#define QWINO_MIN_TILES 32

bool cpu_qwino_choose(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow)
{
    (void)m;
    if (c > GK_QWINO_MAX_C)
        return false;
    int env = wino_env();
    if (env >= 0)
        return env == 1;
    return c >= 16 && n * cdiv(oh, 2) * cdiv(ow, 2) >= QWINO_MIN_TILES;
}

size_t cpu_wino_extra_bytes(int64_t c, int64_t m, int v)
{
    /* Transformed [mb][36][cb V][V] against repacked (9 taps of the padded channels). */
    uint64_t pairs = (uint64_t)(cdiv(c, v) * v) * (uint64_t)(cdiv(m, v) * v);
    return (size_t)(pairs * (36 - 9) * sizeof(float));
}

size_t cpu_wino_weight_floats(int64_t m, int64_t c, int v)
{
    if (m <= 0 || c <= 0 || v <= 0)
        return 0;
    uint64_t f = (uint64_t)cdiv(m, v) * 36 * (uint64_t)(cdiv(c, v) * v) * (uint64_t)v;
    return f > (SIZE_MAX >> 3) || f / 36 / (uint64_t)v < (uint64_t)cdiv(m, v) ? 0 : (size_t)f;
}

/* G of F(4x4,3x3): the 6x3 kernel transform for the points 0, 1, -1, 2, -2, infinity. */
static const double G[6][3] = {
    { 1.0 / 4, 0, 0 },
    { -1.0 / 6, -1.0 / 6, -1.0 / 6 },
    { -1.0 / 6, 1.0 / 6, -1.0 / 6 },
    { 1.0 / 24, 1.0 / 12, 1.0 / 6 },
    { 1.0 / 24, -1.0 / 12, 1.0 / 6 },
    { 0, 0, 1 },
};

void cpu_wino_weights(float *out, const float *w, int64_t m, int64_t c, int v)
{
    int64_t cpad = cdiv(c, v) * v;
    memset(out, 0, cpu_wino_weight_floats(m, c, v) * sizeof(float));
    for (int64_t oc = 0; oc < m; oc++)
        for (int64_t ic = 0; ic < c; ic++) {
            const float *g = w + (oc * c + ic) * 9;
            double gg[6][3]; /* G g */
            for (int i = 0; i < 6; i++)
                for (int s = 0; s < 3; s++)
                    gg[i][s] = G[i][0] * g[s] + G[i][1] * g[3 + s] + G[i][2] * g[6 + s];
            for (int i = 0; i < 6; i++)
                for (int k = 0; k < 6; k++) {
                    double u = gg[i][0] * G[k][0] + gg[i][1] * G[k][1] + gg[i][2] * G[k][2];
                    int64_t e = i * 6 + k;
                    out[(((oc / v) * 36 + e) * cpad + ic) * v + oc % v] = (float)u;
                }
        }
}

size_t cpu_wino_plan(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v,
                     size_t plan[3])
{
    gk_wino_plan p = gk_wino_plan_of((size_t)n, (size_t)cdiv(c, v), (size_t)cdiv(m, v),
                                     (size_t)oh, (size_t)ow, (size_t)v, cpu_wino_fma_rate(v));
    plan[0] = p.tg, plan[1] = p.mg, plan[2] = p.kc;
    return p.slot;
}

size_t cpu_wino_slot_floats(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v)
{
    size_t plan[3];
    return cpu_wino_plan(n, c, m, oh, ow, v, plan);
}

int cpu_wino_slots(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores < 1 ? 1 : cores > 16 ? 16 : (int)cores;
}
