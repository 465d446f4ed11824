// kernels_test.h - Shared helpers of the blocked-kernel tests: the ISA variants to test (skipped
// at run time on CPUs without them), random buffers, independent layout conversions, the
// activations and error measure of the references.
#ifndef GLOW_KERNELS_TEST_H
#define GLOW_KERNELS_TEST_H

#include "blocked.h"
#include "backend/cpu/repack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Activation codes of gk.h (GK_ACT_*), spelled out so the tests stand alone. */
enum { T_ACT_NONE, T_ACT_RELU, T_ACT_CLIP, T_ACT_LEAKY, T_ACT_SIGMOID, T_ACT_TANH };

typedef struct {
    const char *name;
    int v;
    const char *feature; /* for __builtin_cpu_supports */
    __typeof__(gk_conv2d_nchwc_f32_avx512) *conv;
    __typeof__(gk_dwconv2d_nchwc_f32_avx512) *dwconv;
    __typeof__(gk_maxpool_nchwc_f32_avx512) *maxpool;
    __typeof__(gk_avgpool_nchwc_f32_avx512) *avgpool;
    __typeof__(gk_gemm_packed_f32_avx512) *gemm;
    __typeof__(gk_to_nchwc_f32_avx512) *to_nchwc;
    __typeof__(gk_from_nchwc_f32_avx512) *from_nchwc;
} isa_desc;

#define ISA_ROW(isa, v, feat)                                                              \
    { #isa, v, feat, gk_conv2d_nchwc_f32_##isa, gk_dwconv2d_nchwc_f32_##isa,               \
      gk_maxpool_nchwc_f32_##isa, gk_avgpool_nchwc_f32_##isa, gk_gemm_packed_f32_##isa,    \
      gk_to_nchwc_f32_##isa, gk_from_nchwc_f32_##isa }
static const isa_desc isas[] = {
    ISA_ROW(avx512, 16, "avx512f"),
    ISA_ROW(avx2, 8, "avx2"),
};
static const int n_isas = 2;

static int isa_ok(const isa_desc *isa)
{
    __builtin_cpu_init();
    /* The AVX2 kernels also use FMA; the AVX-512 ones BW/VL/DQ (Zen 4 and Skylake-X have all). */
    if (!strcmp(isa->feature, "avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/* count floats in [-1, 1), never NULL (at least one float). */
static float *rnd_buf(size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof(float));
    if (!p)
        abort();
    for (size_t i = 0; i < count; i++)
        p[i] = (float)(rand() % 2000 - 1000) / 1000.0f;
    return p;
}

/* NCHW -> [N][ceil(C/cv)][HW][cv], zero-filled past C (written independently of the kernels). */
static float *to_blocked(const float *x, int n, int c, int hw, int cv)
{
    int cb = (c + cv - 1) / cv;
    float *o = calloc((size_t)n * cb * cv * hw + 1, sizeof(float));
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++)
                o[(((size_t)i * cb + ch / cv) * hw + p) * cv + ch % cv] =
                    x[((size_t)i * c + ch) * hw + p];
    return o;
}

static void from_blocked(float *y, const float *b, int n, int c, int hw, int v)
{
    int cb = (c + v - 1) / v;
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++)
                y[((size_t)i * c + ch) * hw + p] = b[(((size_t)i * cb + ch / v) * hw + p) * v +
                                                     ch % v];
}

static float ref_act(float x, int act, float alpha, float beta)
{
    switch (act) {
    case T_ACT_RELU: return x < 0 ? 0 : x;
    case T_ACT_CLIP: return x < alpha ? alpha : x > beta ? beta : x;
    case T_ACT_LEAKY: return x < 0 ? x * alpha : x;
    case T_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case T_ACT_TANH: return tanhf(x);
    default: return x;
    }
}

/* Largest |a - b| / max(1, |b|): relative for large values, absolute near zero. */
static double max_rel_err(const float *a, const float *b, size_t count)
{
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double e = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)b[i]));
        if (!(e <= worst))
            worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

#endif
