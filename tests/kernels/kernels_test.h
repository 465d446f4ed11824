// kernels_test.h - Shared helpers of the native kernel tests: each row's function, random
// buffers, independent layout conversions, the activations and error measure of the references.
#ifndef GLOW_KERNELS_TEST_H
#define GLOW_KERNELS_TEST_H

#include "kernel_rows.h"
#include "../../kernels/kernels.h"
#include "backend/cpu/repack.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The address of each row's kernel, in the order of gk_rows (every x86 and portable variant is
 * linked natively: kernels/native.cmake). The neon rows are aarch64 code, not linked here: NULL
 * (gk_row_runs_here is false for them; tests/bundle/test_bundle_neon.c runs them). So are the
 * rows of an ISA the CPU that built the sanitizer tree lacks (GLOWC_NATIVE_NO_*, native.cmake:
 * gk_row_runs_here is false for them there too). */
typedef void (*gk_fn)(void);
#define GK_ROW_FN_scalar(f) (gk_fn)f
#define GK_ROW_FN_avx2(f) (gk_fn)f
#ifdef GLOWC_NATIVE_NO_AVX512
#define GK_ROW_FN_avx512(f) NULL
#else
#define GK_ROW_FN_avx512(f) (gk_fn)f
#endif
#ifdef GLOWC_NATIVE_NO_AVX512VNNI
#define GK_ROW_FN_avx512vnni(f) NULL
#else
#define GK_ROW_FN_avx512vnni(f) (gk_fn)f
#endif
#ifdef GLOWC_NATIVE_NO_AVXVNNI
#define GK_ROW_FN_avxvnni(f) NULL
#else
#define GK_ROW_FN_avxvnni(f) (gk_fn)f
#endif
#define GK_ROW_FN_neon(f) NULL
static const gk_fn gk_row_fns[] = {
#define KERNEL(op, dtype, isa, ...) GK_ROW_FN_##isa(gk_##op##_##dtype##_##isa),
#include "../../kernels/kernels.def"
#undef KERNEL
};

/* The row's kernel as a pointer of the type of `proto` (the avx512 and avx2 variants of a
 * family share one parameter list in kernels.def). */
#define ROW_FN(row, proto) ((__typeof__(proto) *)gk_row_fns[(row) - gk_rows])

/* f(arg, tid, n) on n threads at once, tid 0 on the caller (at most 8): a kernel's work shared
 * as the backend's pool shares it, e.g. taking units from one counter. */
typedef struct {
    void (*f)(void *arg, int tid, int n);
    void *arg;
    int tid, n;
} gk_test_thread;

static inline void *gk_test_thread_main(void *p)
{
    gk_test_thread *t = p;
    t->f(t->arg, t->tid, t->n);
    return NULL;
}

static inline void run_threads(int n, void (*f)(void *arg, int tid, int n), void *arg)
{
    pthread_t th[8];
    gk_test_thread a[8];
    if (n < 1 || n > 8)
        abort();
    for (int t = 1; t < n; t++) {
        a[t] = (gk_test_thread){ f, arg, t, n };
        if (pthread_create(&th[t], NULL, gk_test_thread_main, &a[t]))
            abort();
    }
    f(arg, 0, n);
    for (int t = 1; t < n; t++)
        pthread_join(th[t], NULL);
}

/* The block of the row's blocked layout: its vector length in floats. */
static inline int row_vlen(const gk_row *row)
{
    return !strcmp(row->isa, "avx512") ? 16 : !strcmp(row->isa, "avx2") ? 8
           : !strcmp(row->isa, "neon")  ? 4 : 1;
}

/* count floats in [-1, 1), never NULL (at least one float). */
static inline float *rnd_buf(size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof(float));
    if (!p)
        abort();
    for (size_t i = 0; i < count; i++)
        p[i] = (float)(rand() % 2000 - 1000) / 1000.0f;
    return p;
}

/* NCHW -> [N][ceil(C/cv)][HW][cv], zero-filled past C (written independently of the kernels). */
static inline float *to_blocked(const float *x, int n, int c, int hw, int cv)
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

static inline void from_blocked(float *y, const float *b, int n, int c, int hw, int v)
{
    int cb = (c + v - 1) / v;
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++)
                y[((size_t)i * c + ch) * hw + p] = b[(((size_t)i * cb + ch / v) * hw + p) * v +
                                                     ch % v];
}

static inline float ref_act(float x, int act, float alpha, float beta)
{
    switch (act) {
    case GK_ACT_RELU: return x < 0 ? 0 : x;
    case GK_ACT_CLIP: return x < alpha ? alpha : x > beta ? beta : x;
    case GK_ACT_LEAKY_RELU: return x < 0 ? x * alpha : x;
    case GK_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case GK_ACT_TANH: return tanhf(x);
    default: return x;
    }
}

/* Largest |a - b| / max(1, |b|): relative for large values, absolute near zero. */
static inline double max_rel_err(const float *a, const float *b, size_t count)
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
