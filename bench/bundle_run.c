// bundle_run.c - Runs one glowc bundle the way a user's program would, for bench/run's
// "glowc bundle" column: the process holds the bundle's code, its weights read from
// NAME.weights.bin and the two regions it asks for, nothing of the compiler. It times the
// inference like `glowc bench` and prints the same JSON keys, so the table compares the
// deployed form's latency and peak RSS with the JIT's and ONNX Runtime's.
//
// bench/run compiles the bundle as NAME "net" (`glowc compile --emit-bundle DIR --name net`,
// with `--threads N` for N > 1) and links this file with DIR/net.o:
//   cc -O2 -std=c11 -DBR_THREADS=N -I DIR bench/bundle_run.c DIR/net.o -lm -lpthread
// The bundle must have one input and one output.
//
// Usage: bundle_run WEIGHTS INPUT.f32 REFERENCE.f32 ITERATIONS WARMUP MAX_SECONDS COMPILE_MS
// INPUT/REFERENCE are raw little-endian float32 (bench/run converts the .pb files).
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "net.h"

#ifndef BR_THREADS
#define BR_THREADS 1
#endif
#if BR_THREADS < 1 || BR_THREADS > 64
#error "BR_THREADS must be 1..64"
#endif
#if NET_NUM_INPUTS != 1 || NET_NUM_OUTPUTS != 1
#error "bundle_run takes a bundle with one input and one output"
#endif
#define BR_CONSTANT NET_CONSTANT_MEM_SIZE
#define BR_MUTABLE NET_MUTABLE_MEM_SIZE
#define BR_ACTIVATIONS NET_ACTIVATIONS_MEM_SIZE
#define BR_IN_OFFSET NET_INPUT_0_OFFSET
#define BR_IN_SIZE NET_INPUT_0_SIZE
#define BR_OUT_OFFSET NET_OUTPUT_0_OFFSET
#define BR_OUT_SIZE NET_OUTPUT_0_SIZE

static void die(const char *what, const char *arg)
{
    fprintf(stderr, "bundle_run: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
    exit(1);
}

/* Reads exactly `bytes` of `path` into `dst`. */
static void read_exact(const char *path, uint8_t *dst, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    if (fread(dst, 1, bytes, f) != bytes || fgetc(f) != EOF)
        die("not the size the bundle expects", path);
    fclose(f);
}

static uint8_t *weights, *mut, *act;

static void run_share(int j, int tid);
#define DRIVER "bundle_run"
#include "bundle_driver.h"

static void run_share(int j, int tid)
{
    (void)j;
#if BR_THREADS > 1
    int rc = net_thread(weights, mut, act, tid, barrier, NULL);
#else
    (void)tid;
    int rc = net(weights, mut, act);
#endif
    if (rc)
        die("the bundle returned an error", NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 8)
        die("usage: bundle_run WEIGHTS INPUT.f32 REFERENCE.f32 ITERATIONS WARMUP MAX_SECONDS "
            "COMPILE_MS", NULL);
    int iters = atoi(argv[4]), warmup = atoi(argv[5]);
    double budget_ms = atof(argv[6]) * 1e3, compile_ms = atof(argv[7]);
    if (iters < 1 || warmup < 0)
        die("bad ITERATIONS or WARMUP", NULL);
    double t0 = now_ms();
    weights = alloc_region(BR_CONSTANT);
    read_exact(argv[1], weights, BR_CONSTANT);
    double load_ms = now_ms() - t0;
    mut = alloc_region(BR_MUTABLE);
    act = alloc_region(BR_ACTIVATIONS);
    read_exact(argv[2], mut + BR_IN_OFFSET, BR_IN_SIZE);
    float *ref = (float *)alloc_region(BR_OUT_SIZE);
    read_exact(argv[3], (uint8_t *)ref, BR_OUT_SIZE);

    pthread_t th[64] = { 0 };
    nthreads = BR_THREADS;
    if (start_helpers(th))
        die("cannot start a thread", NULL);
    double *lat = malloc((size_t)iters * sizeof *lat);
    if (!lat)
        die("out of memory", NULL);
    int n = 0, budget_hit = 0;
    double spent = 0;
    for (int i = 0; i < warmup + iters; i++) {
        double s = now_ms();
        run_job(i);
        double ms = now_ms() - s;
        if (i < warmup)
            continue;
        lat[n++] = ms;
        spent += ms;
        if (spent >= budget_ms && n < iters) {
            budget_hit = 1;
            break;
        }
    }
    stop_helpers(th);

    /* The held-out check, as glowc bench makes it: errors relative to the reference's largest
     * magnitude. */
    const float *y = (const float *)(mut + BR_OUT_OFFSET);
    double max_abs = 0, ref_max = 0;
    for (size_t k = 0; k < BR_OUT_SIZE / sizeof(float); k++) {
        double d = fabs((double)y[k] - (double)ref[k]);
        if (isnan(d))
            d = 1e300; /* JSON has no NaN: an error no check passes */
        max_abs = d > max_abs ? d : max_abs;
        ref_max = fabs((double)ref[k]) > ref_max ? fabs((double)ref[k]) : ref_max;
    }
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted)
        die("out of memory", NULL);
    memcpy(sorted, lat, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"backend\": \"bundle\", \"threads\": %d, \"iterations\": %d, \"warmup\": %d, "
           "\"budget_hit\": %s, \"load_ms\": %g, \"compile_ms\": %g, ",
           BR_THREADS, n, warmup, budget_hit ? "true" : "false", load_ms, compile_ms);
    printf("\"latency_ms\": {\"min\": %g, \"median\": %g, \"max\": %g}, \"latencies_ms\": [",
           sorted[0], n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
           sorted[n - 1]);
    for (int i = 0; i < n; i++)
        printf("%s%g", i ? ", " : "", lat[i]);
    printf("], \"memory\": {\"constant_bytes\": %llu, \"mutable_bytes\": %llu, "
           "\"activation_bytes\": %llu}, \"peak_rss_bytes\": %lld, ",
           (unsigned long long)BR_CONSTANT, (unsigned long long)BR_MUTABLE,
           (unsigned long long)BR_ACTIVATIONS, (long long)ru.ru_maxrss * 1024);
    printf("\"check\": {\"max_abs_err\": %g, \"max_rel_err\": %g}}\n", max_abs,
           ref_max > 0 ? max_abs / ref_max : max_abs);
    free(sorted), free(lat), free(ref), free(weights), free(mut), free(act);
    return 0;
}
