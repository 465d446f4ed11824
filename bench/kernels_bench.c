// kernels_bench.c - Micro-benchmark of the fast conv/GEMM kernels (kernels.def, layouts in
// blocked.h) on the convolution layers of ResNet-50 and VGG-19 at one thread: GFLOP/s and % of
// one core's peak.
//
// Usage: kernels_bench [--peak GFLOPS] [--isa avx512|avx2] [--time SECONDS] [--only SUBSTRING]
//                      [--cold] [--wino ROUNDS]
// Without --peak, % of peak is relative to an FMA probe measured the same way as the layers.
// Not a test: it prints figures and never fails. Each layer runs for about --time seconds
// (default 0.3) after a warm-up, as parts of about 1 ms (the kernels' tid/nthreads split) whose
// fastest calls are summed: the machine is shared, and a call shorter than a scheduler time
// slice often runs undisturbed. With --cold, each timed call is the whole layer after 64 MiB
// were written elsewhere (input, weights and output start outside the caches, as in a network
// whose other layers ran before), and the median call is reported: this shows the layers
// whose memory traffic, not their FMAs, sets the time.
// With --wino ROUNDS, every 3x3 stride-1 layer runs the direct and the Winograd F(4x4,3x3)
// kernel as whole-layer calls at one thread, alternating, ROUNDS of each (caches warm), and
// prints both medians and the ratio direct / Winograd (above 1: Winograd faster).
#include "kernels.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/winograd.h"

#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *name;
    int c, h, w, m, k, s, p, groups;
} layer;

static const layer layers[] = {
    { "resnet50 conv1 7x7/2 3->64 @224", 3, 224, 224, 64, 7, 2, 3, 1 },
    { "resnet50 3x3 64->64 @56", 64, 56, 56, 64, 3, 1, 1, 1 },
    { "resnet50 1x1 256->64 @56", 256, 56, 56, 64, 1, 1, 0, 1 },
    { "resnet50 1x1 64->256 @56", 64, 56, 56, 256, 1, 1, 0, 1 },
    { "resnet50 3x3 128->128 @28", 128, 28, 28, 128, 3, 1, 1, 1 },
    { "resnet50 3x3 256->256 @14", 256, 14, 14, 256, 3, 1, 1, 1 },
    { "resnet50 3x3 512->512 @7", 512, 7, 7, 512, 3, 1, 1, 1 },
    { "resnet50 1x1/2 256->512 @56", 256, 56, 56, 512, 1, 2, 0, 1 },
    { "resnet50 1x1 256->128 @56", 256, 56, 56, 128, 1, 1, 0, 1 },
    { "resnet50 3x3/2 128->128 @56", 128, 56, 56, 128, 3, 2, 1, 1 },
    { "resnet50 1x1/2 512->1024 @28", 512, 28, 28, 1024, 1, 2, 0, 1 },
    { "resnet50 1x1 1024->256 @14", 1024, 14, 14, 256, 1, 1, 0, 1 },
    { "resnet50 3x3/2 512->512 @14", 512, 14, 14, 512, 3, 2, 1, 1 },
    { "resnet50 1x1/2 1024->2048 @14", 1024, 14, 14, 2048, 1, 2, 0, 1 },
    { "resnet50 1x1 2048->512 @7", 2048, 7, 7, 512, 1, 1, 0, 1 },
    { "vgg19 3x3 64->64 @224", 64, 224, 224, 64, 3, 1, 1, 1 },
    { "vgg19 3x3 64->128 @112", 64, 112, 112, 128, 3, 1, 1, 1 },
    { "vgg19 3x3 128->128 @112", 128, 112, 112, 128, 3, 1, 1, 1 },
    { "vgg19 3x3 128->256 @56", 128, 56, 56, 256, 3, 1, 1, 1 },
    { "vgg19 3x3 256->256 @56", 256, 56, 56, 256, 3, 1, 1, 1 },
    { "vgg19 3x3 256->512 @28", 256, 28, 28, 512, 3, 1, 1, 1 },
    { "vgg19 3x3 512->512 @28", 512, 28, 28, 512, 3, 1, 1, 1 },
    { "vgg19 3x3 512->512 @14", 512, 14, 14, 512, 3, 1, 1, 1 },
    { "mobilenet_v2 dw 3x3 144 @56", 144, 56, 56, 144, 3, 1, 1, 144 },
    /* GoogLeNet's 3x3 layers on small planes (inception 4a-4e at 14x14, 5a-5b at 7x7; the
     * "5x5" branches of torchvision's model are 3x3 too). */
    { "googlenet 3x3 96->208 @14", 96, 14, 14, 208, 3, 1, 1, 1 },
    { "googlenet 3x3 112->224 @14", 112, 14, 14, 224, 3, 1, 1, 1 },
    { "googlenet 3x3 128->256 @14", 128, 14, 14, 256, 3, 1, 1, 1 },
    { "googlenet 3x3 144->288 @14", 144, 14, 14, 288, 3, 1, 1, 1 },
    { "googlenet 3x3 160->320 @14", 160, 14, 14, 320, 3, 1, 1, 1 },
    { "googlenet 3x3 32->128 @14", 32, 14, 14, 128, 3, 1, 1, 1 },
    { "googlenet 3x3 160->320 @7", 160, 7, 7, 320, 3, 1, 1, 1 },
    { "googlenet 3x3 192->384 @7", 192, 7, 7, 384, 3, 1, 1, 1 },
    { "googlenet 3x3 48->128 @7", 48, 7, 7, 128, 3, 1, 1, 1 },
};

typedef struct {
    const char *name;
    int m, n, k;
} gemm_shape;

static const gemm_shape gemms[] = {
    { "resnet50 fc 2048->1000 b1", 1, 1000, 2048 },
    { "resnet50 fc 2048->1000 b8", 8, 1000, 2048 },
    { "vgg19 fc7 4096->4096 b1", 1, 4096, 4096 },
    { "vgg19 fc7 4096->4096 b8", 8, 4096, 4096 },
    { "gemm 192x512x512 (compute)", 192, 512, 512 },
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Writes a buffer larger than the last-level cache, so the next call starts cold. */
static void evict_caches(void)
{
    static char *junk;
    static const size_t bytes = (size_t)64 << 20;
    if (!junk)
        junk = malloc(bytes);
    static char v;
    memset(junk, ++v, bytes);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of `count` whole-layer calls, each after evicting the caches. */
static double time_cold(void (*fn)(const void *), const void *arg, int count)
{
    double t[64];
    count = count > 64 ? 64 : count < 1 ? 1 : count;
    for (int i = 0; i < count; i++) {
        evict_caches();
        double t0 = now_s();
        fn(arg);
        t[i] = now_s() - t0;
    }
    qsort(t, (size_t)count, sizeof t[0], cmp_double);
    return t[count / 2];
}

static float *rnd(size_t count)
{
    float *p = aligned_alloc(64, ((count * sizeof(float)) + 63) / 64 * 64);
    for (size_t i = 0; i < count; i++)
        p[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
    return p;
}

/* 1e5 rounds of 24 independent FMA chains on full vectors: enough chains for two FMA pipes of
 * latency 4 with room to spare (the Zen 5 of this machine executes two 512-bit FMAs a cycle). */
__attribute__((target("avx512f"))) static float fma_probe512(float seed)
{
    __m512 acc[24], a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f * seed);
    for (int i = 0; i < 24; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (int r = 0; r < 100000; r++)
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    float s = 0;
    for (int i = 0; i < 24; i++)
        s += _mm512_reduce_add_ps(acc[i]);
    return s;
}

__attribute__((target("avx2,fma"))) static float fma_probe256(float seed)
{
    __m256 acc[12], a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f * seed);
    for (int i = 0; i < 12; i++)
        acc[i] = _mm256_set1_ps((float)i);
    for (int r = 0; r < 200000; r++)
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    float t[8], s = 0;
    for (int i = 0; i < 12; i++) {
        _mm256_storeu_ps(t, acc[i]);
        for (int j = 0; j < 8; j++)
            s += t[j];
    }
    return s;
}

/* Peak GFLOP/s measured like the layers: fastest of short calls. */
static double measure_peak(int avx512, double budget)
{
    double best = 1e30, t_end = now_s() + budget;
    volatile float sink = 0;
    do {
        double t0 = now_s();
        sink += avx512 ? fma_probe512(sink) : fma_probe256(sink);
        double t = now_s() - t0;
        if (t < best)
            best = t;
    } while (now_s() < t_end);
    return (avx512 ? 1e5 * 24 * 32 : 2e5 * 12 * 16) / best / 1e9;
}

typedef struct {
    const layer *l;
    int avx512;
    size_t v, cv, oh, ow;
    float *in, *wt, *bias, *out;
} job;

static void run(const job *j, int tid, int parts)
{
    const layer *l = j->l;
    size_t cb = (size_t)(l->c + (int)j->cv - 1) / j->cv, mb = (size_t)(l->m + (int)j->v - 1) / j->v;
    size_t k = (size_t)l->k, s = (size_t)l->s, p = (size_t)l->p;
    if (l->groups > 1) {
        (j->avx512 ? gk_dwconv2d_nchwc_f32_avx512 : gk_dwconv2d_nchwc_f32_avx2)(
            j->out, j->in, j->wt, j->bias, NULL, 1, cb, (size_t)l->h, (size_t)l->w, j->oh, j->ow,
            k, k, s, s, p, p, 1, 1, GK_ACT_RELU, 0, 0, NULL, tid, parts);
        return;
    }
    (j->avx512 ? gk_conv2d_nchwc_f32_avx512 : gk_conv2d_nchwc_f32_avx2)(
        j->out, j->in, j->wt, j->bias, NULL, 1, 1, cb, j->cv, (size_t)l->h, (size_t)l->w, mb,
        j->oh, j->ow, k, k, s, s, p, p, 1, 1, 0, 0, 0, GK_ACT_RELU, 0, 0, NULL, tid, parts);
}

static void run_whole(const void *j)
{
    run(j, 0, 1);
}

/* --wino: the layer's weights transformed, and direct vs Winograd whole-layer calls taking
 * turns. */
static void wino_ab(const job *j, const float *w, int rounds)
{
    const layer *l = j->l;
    int v = (int)j->v;
    size_t cb = (size_t)(l->c + v - 1) / (size_t)v, mb = (size_t)(l->m + v - 1) / (size_t)v;
    float *u = aligned_alloc(64, (cpu_wino_weight_floats(l->m, l->c, v) * 4 + 63) / 64 * 64);
    cpu_wino_weights(u, w, l->m, l->c, v);
    /* The plan the backend gives the kernel (for this host's FMA rate). */
    size_t plan[3];
    size_t slot = cpu_wino_plan(1, l->c, l->m, (int64_t)j->oh, (int64_t)j->ow, v, plan);
    float *scratch = rnd(slot);
    double td[64], tw[64], est_d, est_w;
    rounds = rounds > 64 ? 64 : rounds < 1 ? 1 : rounds;
    for (int r = 0; r < rounds + 1; r++) {
        double t0 = now_s();
        run(j, 0, 1);
        double t1 = now_s();
        (j->avx512 ? gk_wino_nchwc_f32_avx512 : gk_wino_nchwc_f32_avx2)(
            j->out, j->in, u, j->bias, NULL, scratch, 1, 1, cb, (size_t)l->h, (size_t)l->w, mb,
            j->oh, j->ow, (size_t)l->p, (size_t)l->p, plan[0], plan[1], plan[2], GK_ACT_RELU, 0,
            0, NULL, 0, 1);
        double t2 = now_s();
        if (r) /* the first round warms up */
            td[r - 1] = t1 - t0, tw[r - 1] = t2 - t1;
    }
    qsort(td, (size_t)rounds, sizeof td[0], cmp_double);
    qsort(tw, (size_t)rounds, sizeof tw[0], cmp_double);
    double rate = cpu_wino_fma_rate(v);
    cpu_wino_estimates(1, l->c, l->m, (int64_t)j->oh, (int64_t)j->ow, v, rate, &est_d, &est_w);
    /* The estimates' ratio, and the choice (which also weighs the extra bytes). */
    printf("%-34s direct %8.3f ms  winograd %8.3f ms  ratio %5.2f  (model %5.2f: %s)\n",
           l->name, td[rounds / 2] * 1e3, tw[rounds / 2] * 1e3, td[rounds / 2] / tw[rounds / 2],
           est_d / est_w,
           cpu_wino_choose(1, l->c, l->m, (int64_t)j->oh, (int64_t)j->ow, v, rate) ? "winograd"
           : est_w < est_d                                                   ? "direct, memory"
                                                                             : "direct");
    free(u), free(scratch);
}

int main(int argc, char **argv)
{
    double peak = 0, budget = 0.3;
    int cold = 0, wino = 0;
    int avx512 = __builtin_cpu_supports("avx512f");
    const char *only = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--cold")) {
            cold = 1;
            memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof argv[0]);
            argc--;
            break;
        }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--peak"))
            peak = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--time"))
            budget = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--isa"))
            avx512 = !strcmp(argv[i + 1], "avx512");
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--wino"))
            wino = atoi(argv[i + 1]);
    }
    if (!__builtin_cpu_supports("avx2") || (avx512 && !__builtin_cpu_supports("avx512f"))) {
        printf("kernels_bench: this CPU lacks the requested ISA\n");
        return 0;
    }
    double probe = measure_peak(avx512, budget);
    if (peak <= 0)
        peak = probe;
    printf("FMA probe (24 x zmm / 12 x ymm chains, fastest short call): %.1f GFLOP/s\n", probe);
    printf("%-34s %9s %9s %7s   (isa %s, peak %.0f GFLOP/s, 1 thread)\n", "layer", "ms", "GFLOP/s",
           "%peak", avx512 ? "avx512" : "avx2", peak);
    for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
        const layer *l = &layers[li];
        if (only && !strstr(l->name, only))
            continue;
        job j = { l, avx512, avx512 ? 16 : 8, 0, 0, 0, NULL, NULL, NULL, NULL };
        j.cv = l->c < (int)j.v ? (size_t)l->c : j.v;
        j.oh = (size_t)((l->h + 2 * l->p - l->k) / l->s + 1);
        j.ow = (size_t)((l->w + 2 * l->p - l->k) / l->s + 1);
        size_t cb = (size_t)(l->c + (int)j.cv - 1) / j.cv, mb = (size_t)(l->m + (int)j.v - 1) / j.v;
        j.in = rnd(cb * j.cv * (size_t)(l->h * l->w));
        float *w = rnd((size_t)l->m * (size_t)(l->c / l->groups * l->k * l->k));
        float *b = rnd((size_t)l->m);
        size_t wf = l->groups > 1
                        ? glow_repack_dwconv_floats(l->c, l->k, l->k, (int)j.v)
                        : glow_repack_conv_floats(l->m, l->c, 1, l->k, l->k, (int)j.v, (int)j.cv);
        j.wt = aligned_alloc(64, (wf * 4 + 63) / 64 * 64);
        if (l->groups > 1)
            glow_repack_dwconv(j.wt, w, l->c, l->k, l->k, (int)j.v);
        else
            glow_repack_conv(j.wt, w, l->m, l->c, 1, l->k, l->k, (int)j.v, (int)j.cv);
        j.bias = aligned_alloc(64, mb * j.v * 4);
        glow_repack_bias(j.bias, b, l->m, (int)j.v);
        j.out = aligned_alloc(64, mb * j.v * j.oh * j.ow * 4);
        if (wino) {
            if (l->k == 3 && l->s == 1 && l->groups == 1 && l->c >= (int)j.v)
                wino_ab(&j, w, wino);
            free(j.in), free(w), free(b), free(j.wt), free(j.bias), free(j.out);
            continue;
        }
        double flops = 2.0 * (double)l->m * (double)(l->c / l->groups) * l->k * l->k *
                       (double)(j.oh * j.ow);
        /* A long layer is timed as `parts` disjoint thread shares of about a millisecond each
         * (the kernels' own work split), so that each timed call can fit in a time slice. */
        double t0 = now_s();
        run(&j, 0, 1);
        int parts = (int)((now_s() - t0) / 1e-3) + 1;
        double best = 0;
        if (cold)
            best = time_cold(run_whole, &j, 15);
        for (int part = 0; part < parts && !cold; part++) {
            double part_best = 1e30, t_end = now_s() + budget / (double)parts;
            do {
                double t1 = now_s();
                run(&j, part, parts);
                double t = now_s() - t1;
                if (t < part_best)
                    part_best = t;
            } while (now_s() < t_end);
            best += part_best;
        }
        double gf = flops / best / 1e9;
        printf("%-34s %9.3f %9.1f %6.1f%%\n", l->name, best * 1e3, gf, 100.0 * gf / peak);
        free(j.in), free(w), free(b), free(j.wt), free(j.bias), free(j.out);
    }
    if (wino)
        return 0;
    for (size_t gi = 0; gi < sizeof gemms / sizeof gemms[0]; gi++) {
        const gemm_shape *g = &gemms[gi];
        if (only && !strstr(g->name, only))
            continue;
        int nr = avx512 ? 32 : 16;
        float *a = rnd((size_t)g->m * g->k), *b = rnd((size_t)g->k * g->n);
        float *bias = rnd((size_t)g->n), *c = rnd((size_t)g->m * g->n);
        size_t bf = glow_repack_gemm_b_floats(g->k, g->n, nr);
        float *bp = aligned_alloc(64, (bf * 4 + 63) / 64 * 64);
        glow_repack_gemm_b(bp, b, g->k, g->n, g->n, 0, nr);
        double best = 1e30, t_end = now_s() + budget;
        do {
            double t0 = now_s();
            (avx512 ? gk_gemm_packed_f32_avx512 : gk_gemm_packed_f32_avx2)(
                c, a, bp, bias, NULL, (size_t)g->m, (size_t)g->n, (size_t)g->k, (size_t)g->k,
                (size_t)g->n, GK_ACT_NONE, 0, 0, NULL, 0, 1);
            double t = now_s() - t0;
            if (t < best)
                best = t;
        } while (now_s() < t_end);
        double gf = 2.0 * g->m * g->n * g->k / best / 1e9;
        printf("%-34s %9.3f %9.1f %6.1f%%  (%.1f GB/s of weights)\n", g->name, best * 1e3, gf,
               100.0 * gf / peak, (double)bf * 4 / best / 1e9);
        free(a), free(b), free(bias), free(c), free(bp);
    }
    return 0;
}
