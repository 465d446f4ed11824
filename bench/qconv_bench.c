// qconv_bench.c - Micro-benchmark of the int8 convolution kernels (kernels/qconv) against the
// f32 blocked convolution (conv2d_nchwc) on ResNet-50 layers at one thread: GOP/s of each
// (2 ops per multiply-add) and the ratio int8 / f32.
//
// Usage: qconv_bench [--isa avx512vnni|avxvnni|avx2] [--time SECONDS] [--only SUBSTRING]
// The f32 kernel is the AVX-512 one (AVX2 when --isa is not avx512vnni). Timing as in
// kernels_bench: each layer runs about --time seconds (default 0.3) as parts of about 1 ms (the
// kernels' tid/nthreads split) whose fastest calls are summed. Not a test: it never fails.
#include "kernels.h"
#include "qconv/qpack.h"
#include "qconv/qwpack.h"
#include "backend/cpu/repack.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *name;
    int c, h, w, m, k, s, p;
} layer;

static const layer layers[] = {
    { "resnet50 3x3 64->64 @56", 64, 56, 56, 64, 3, 1, 1 },
    { "resnet50 1x1 256->64 @56", 256, 56, 56, 64, 1, 1, 0 },
    { "resnet50 1x1 64->256 @56", 64, 56, 56, 256, 1, 1, 0 },
    { "resnet50 3x3 128->128 @28", 128, 28, 28, 128, 3, 1, 1 },
    { "resnet50 3x3 256->256 @14", 256, 14, 14, 256, 3, 1, 1 },
    { "resnet50 1x1 1024->256 @14", 1024, 14, 14, 256, 1, 1, 0 },
    { "resnet50 3x3 512->512 @7", 512, 7, 7, 512, 3, 1, 1 },
    { "resnet50 conv1 7x7/2 3->64 @224", 3, 224, 224, 64, 7, 2, 3 },
    { "resnet50 fc 2048->1000 b1", 2048, 1, 1, 1000, 1, 1, 0 },
    { "resnet50 fc 2048->1000 b8 (n=8)", 2048, 1, 1, 1000, 1, 1, 0 },
    /* Small layers, where the work split and the epilogue weigh most. */
    { "squeezenet conv1 3x3/2 3->64 @224", 3, 224, 224, 64, 3, 2, 0 },
    { "squeezenet 1x1 64->16 @55", 64, 55, 55, 16, 1, 1, 0 },
    { "squeezenet 1x1 16->64 @55", 16, 55, 55, 64, 1, 1, 0 },
    { "squeezenet 3x3 16->64 @55", 16, 55, 55, 64, 3, 1, 1 },
    { "squeezenet 1x1 512->64 @13", 512, 13, 13, 64, 1, 1, 0 },
    { "squeezenet 3x3 64->256 @13", 64, 13, 13, 256, 3, 1, 1 },
    { "squeezenet 1x1 512->1000 @13", 512, 13, 13, 1000, 1, 1, 0 },
    { "mobilenet_v2 conv1 3x3/2 3->32 @224", 3, 224, 224, 32, 3, 2, 1 },
    { "mobilenet_v2 1x1 16->96 @112", 16, 112, 112, 96, 1, 1, 0 },
    { "mobilenet_v2 1x1 144->24 @56", 144, 56, 56, 24, 1, 1, 0 },
    { "mobilenet_v2 1x1 24->144 @56", 24, 56, 56, 144, 1, 1, 0 },
    { "mobilenet_v2 1x1 192->64 @14", 192, 14, 14, 64, 1, 1, 0 },
    { "mobilenet_v2 1x1 960->160 @7", 960, 7, 7, 160, 1, 1, 0 },
    { "mobilenet_v2 1x1 320->1280 @7", 320, 7, 7, 1280, 1, 1, 0 },
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *alloc64(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
        abort();
    return p;
}

typedef struct {
    const layer *l;
    int n, oh, ow, isa; /* isa: 0 avx512vnni, 1 avxvnni, 2 avx2 */
    /* int8 */
    uint8_t *qx, *qy;
    int8_t *qw;
    int16_t *ww; /* the Winograd kernel's weights (avx2, 3x3 stride 1), else NULL */
    int8_t *w7;  /* 7-bit weights in the avxvnni packing (avx2), else NULL */
    int32_t *qb;
    float *qm;
    int xcs;
    /* f32 */
    int avx512;
    size_t v, cv;
    float *in, *wt, *bias, *out;
} job;

static void run_q(const job *j, int tid, int parts)
{
    const layer *l = j->l;
    __typeof__(gk_qconv_u8_scalar) *fn = j->isa == 0   ? gk_qconv_u8_avx512vnni
                                         : j->isa == 1 ? gk_qconv_u8_avxvnni
                                                       : gk_qconv_u8_avx2;
    fn(j->qx, j->qw, j->qb, j->qm, j->qy, j->n, l->h, l->w, l->c, j->xcs, l->m, l->m, l->k, l->k,
       j->oh, j->ow, l->s, l->s, 1, 1, l->p, l->p, 3, 0, 0, 0, 255, 0.0f, 0, 0, NULL, NULL, 0, NULL,
       tid, parts);
}

static void run_w(const job *j, int tid, int parts)
{
    const layer *l = j->l;
    gk_qwino_u8_avx2(j->qx, (const int8_t *)(const void *)j->ww, j->qb, j->qm, j->qy, j->n, l->h,
                     l->w, l->c, j->xcs, l->m, l->m, 3, 3, j->oh, j->ow, 1, 1, 1, 1, l->p, l->p,
                     3, 0, 0, 0, 255, 0.0f, 0, 0, NULL, NULL, 0, NULL, tid, parts);
}

static void run_7(const job *j, int tid, int parts)
{
    const layer *l = j->l;
    gk_qconv7_u8_avx2(j->qx, j->w7, j->qb, j->qm, j->qy, j->n, l->h, l->w, l->c, j->xcs, l->m,
                      l->m, l->k, l->k, j->oh, j->ow, l->s, l->s, 1, 1, l->p, l->p, 3, 0, 0, 0,
                      255, 0.0f, 0, 0, NULL, NULL, 0, NULL, tid, parts);
}

static void run_f(const job *j, int tid, int parts)
{
    const layer *l = j->l;
    size_t cb = (size_t)(l->c + (int)j->cv - 1) / j->cv, mb = (size_t)(l->m + (int)j->v - 1) / j->v;
    size_t k = (size_t)l->k, s = (size_t)l->s, p = (size_t)l->p;
    (j->avx512 ? gk_conv2d_nchwc_f32_avx512 : gk_conv2d_nchwc_f32_avx2)(
        j->out, j->in, j->wt, j->bias, NULL, (size_t)j->n, 1, cb, j->cv, (size_t)l->h,
        (size_t)l->w, mb, (size_t)j->oh, (size_t)j->ow, k, k, s, s, p, p, 1, 1, 0, 0, 0,
        GK_ACT_RELU, 0, 0, NULL, tid, parts);
}

/* Seconds of one whole call: the fastest calls of about 1 ms parts, summed. */
static double time_layer(void (*fn)(const job *, int, int), const job *j, double budget)
{
    double t0 = now_s();
    fn(j, 0, 1);
    int parts = (int)((now_s() - t0) / 1e-3) + 1;
    double total = 0;
    for (int part = 0; part < parts; part++) {
        double best = 1e30, t_end = now_s() + budget / (double)parts;
        do {
            double t1 = now_s();
            fn(j, part, parts);
            double t = now_s() - t1;
            if (t < best)
                best = t;
        } while (now_s() < t_end);
        total += best;
    }
    return total;
}

/* 1e5 rounds of 24 independent vpdpbusd chains on zmm: the int8 peak (64 multiply-adds per
 * instruction), measured like the layers (fastest of short calls). In assembly: gcc copies
 * and stores an array of vpdpbusd accumulators in the loop. */
#define DP(i) "vpdpbusd %%zmm24, %%zmm25, %%zmm" #i "\n\t"
__attribute__((target("avx512f,avx512vnni"))) static void dot_probe512(void)
{
    for (int r = 0; r < 100000; r++)
        __asm__ volatile(DP(0) DP(1) DP(2) DP(3) DP(4) DP(5) DP(6) DP(7) DP(8) DP(9) DP(10)
                         DP(11) DP(12) DP(13) DP(14) DP(15) DP(16) DP(17) DP(18) DP(19) DP(20)
                         DP(21) DP(22) DP(23)::
                             : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                               "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
                               "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21",
                               "xmm22", "xmm23");
}
#undef DP

static double int8_peak(double budget)
{
    double best = 1e30, t_end = now_s() + budget;
    do {
        double t0 = now_s();
        dot_probe512();
        double t = now_s() - t0;
        if (t < best)
            best = t;
    } while (now_s() < t_end);
    return 1e5 * 24 * 64 * 2 / best / 1e9;
}

static int has_avxvnni(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
}

int main(int argc, char **argv)
{
    double budget = 0.3;
    const char *only = NULL, *isa_name = "avx512vnni";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--time"))
            budget = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--isa"))
            isa_name = argv[i + 1];
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    int isa = !strcmp(isa_name, "avx512vnni") ? 0 : !strcmp(isa_name, "avxvnni") ? 1 : 2;
    int ok = __builtin_cpu_supports("avx2") &&
             (isa != 0 || (__builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vnni"))) &&
             (isa != 1 || has_avxvnni());
    if (!ok) {
        printf("qconv_bench: this CPU lacks %s\n", isa_name);
        return 0;
    }
    int avx512 = isa == 0;
    int vlen = gk_qconv_vlen(isa == 0 ? "avx512vnni" : isa == 1 ? "avxvnni" : "avx2");
    double peak = avx512 ? int8_peak(budget) : 0;
    if (peak > 0)
        printf("int8 peak (24 x zmm vpdpbusd chains, fastest short call): %.0f GOP/s\n", peak);
    printf("%-34s %9s %9s %9s %9s %6s %7s %9s %7s %9s %7s   (int8 %s, f32 %s, 1 thread; wino: int8 "
           "Winograd F(2x2,3x3), avx2; w7: 7-bit weights, avx2)\n", "layer", "f32 ms", "f32 GOP/s",
           "int8 ms", "int8 GOP/s", "%peak", "ratio", "wino ms", "ratio", "w7 ms", "ratio", isa_name,
           avx512 ? "avx512" : "avx2");
    srand(1);
    for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
        const layer *l = &layers[li];
        if (only && !strstr(l->name, only))
            continue;
        job j = { .l = l, .n = strstr(l->name, "(n=8)") ? 8 : 1, .isa = isa, .avx512 = avx512 };
        j.oh = (l->h + 2 * l->p - l->k) / l->s + 1;
        j.ow = (l->w + 2 * l->p - l->k) / l->s + 1;
        size_t pix = (size_t)j.n * l->h * l->w, opix = (size_t)j.n * j.oh * j.ow;
        size_t ws = (size_t)l->m * l->c * l->k * l->k;

        /* int8: NHWC input with a channel stride rounded to 4, packed weights. */
        j.xcs = (l->c + 3) / 4 * 4;
        j.qx = alloc64(pix * j.xcs);
        for (size_t i = 0; i < pix * j.xcs; i++)
            j.qx[i] = (uint8_t)rand();
        int8_t *w8 = alloc64(ws);
        for (size_t i = 0; i < ws; i++)
            w8[i] = (int8_t)(rand() % 255 - 127);
        j.qw = alloc64(gk_qpack_bytes(vlen, l->m, l->c, l->k, l->k));
        j.qb = alloc64((size_t)l->m * 4);
        j.qm = alloc64((size_t)l->m * 4);
        for (int m = 0; m < l->m; m++)
            j.qm[m] = 1e-4f;
        gk_qpack_conv_isa(isa == 0 ? "avx512vnni" : isa == 1 ? "avxvnni" : "avx2", w8, NULL, 3, l->m,
                          l->c, l->k, l->k, j.qw, j.qb);
        j.qy = alloc64(opix * l->m);
        if (isa == 2 && l->k == 3 && l->s == 1) {
            int32_t *wb = alloc64((size_t)l->m * 4);
            j.ww = alloc64(gk_qwino_elems(l->m, l->c) * sizeof(int16_t));
            gk_qwino_pack(w8, NULL, 3, l->m, l->c, j.ww, wb);
            free(wb);
        }
        if (isa == 2) {
            int32_t *wb = alloc64((size_t)l->m * 4);
            int8_t *h8 = alloc64(ws);
            for (size_t i = 0; i < ws; i++)
                h8[i] = (int8_t)(w8[i] / 2);
            j.w7 = alloc64(gk_qpack_bytes(8, l->m, l->c, l->k, l->k));
            gk_qpack_conv_isa("avxvnni", h8, NULL, 3, l->m, l->c, l->k, l->k, j.w7, wb);
            free(wb), free(h8);
        }

        /* f32: blocked layout as kernels_bench sets it up. */
        j.v = avx512 ? 16 : 8;
        j.cv = l->c < (int)j.v ? (size_t)l->c : j.v;
        size_t cb = (size_t)(l->c + (int)j.cv - 1) / j.cv, mb = (size_t)(l->m + (int)j.v - 1) / j.v;
        j.in = alloc64(cb * j.cv * pix * 4);
        for (size_t i = 0; i < cb * j.cv * pix; i++)
            j.in[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
        float *w = alloc64(ws * 4), *b = alloc64((size_t)l->m * 4);
        for (size_t i = 0; i < ws; i++)
            w[i] = (float)(rand() % 2001 - 1000) / 1000.0f;
        for (int m = 0; m < l->m; m++)
            b[m] = 0.1f;
        size_t wf = glow_repack_conv_floats(l->m, l->c, 1, l->k, l->k, (int)j.v, (int)j.cv);
        j.wt = alloc64(wf * 4);
        glow_repack_conv(j.wt, w, l->m, l->c, 1, l->k, l->k, (int)j.v, (int)j.cv);
        j.bias = alloc64(mb * j.v * 4);
        glow_repack_bias(j.bias, b, l->m, (int)j.v);
        j.out = alloc64(mb * j.v * opix * 4);

        double ops = 2.0 * (double)ws * (double)opix;
        double tf = time_layer(run_f, &j, budget), tq = time_layer(run_q, &j, budget);
        char pct[16] = "-";
        if (peak > 0)
            snprintf(pct, sizeof pct, "%.0f%%", 100 * ops / tq / 1e9 / peak);
        double tw = j.ww ? time_layer(run_w, &j, budget) : 0;
        char wms[16] = "-", wr[16] = "-";
        if (j.ww)
            snprintf(wms, sizeof wms, "%.3f", tw * 1e3), snprintf(wr, sizeof wr, "%.2fx", tf / tw);
        double t7 = j.w7 ? time_layer(run_7, &j, budget) : 0;
        char sms[16] = "-", sr[16] = "-";
        if (j.w7)
            snprintf(sms, sizeof sms, "%.3f", t7 * 1e3), snprintf(sr, sizeof sr, "%.2fx", tf / t7);
        printf("%-34s %9.3f %9.1f %9.3f %9.1f %6s %6.2fx %9s %7s %9s %7s\n", l->name, tf * 1e3,
               ops / tf / 1e9, tq * 1e3, ops / tq / 1e9, pct, tf / tq, wms, wr, sms, sr);
        free(j.qx), free(w8), free(j.qw), free(j.qb), free(j.qm), free(j.qy), free(j.ww), free(j.w7);
        free(j.in), free(w), free(b), free(j.wt), free(j.bias), free(j.out);
    }
    return 0;
}
