// ab_driver.c - Runs two or more bundles of one model in turn, run by run, in one process, and
// prints each run's milliseconds (one line per round, one column per bundle). bench/ab builds
// it: ab_variants.h (generated) includes the bundles' headers and lists them in ab_variants[].
//
// Why in one process: on a shared VM the speed of a core changes for seconds at a time, more
// than most kernel changes gain, so two builds timed in separate processes (even taking
// turns) mostly measure when each ran. Alternating run by run puts both in the same state,
// and the ratio of neighbouring runs cancels it.
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*ab_run1)(uint8_t *constant, uint8_t *mutable_, uint8_t *activations);
typedef int (*ab_runn)(uint8_t *constant, uint8_t *mutable_, uint8_t *activations, int tid,
                       void (*barrier)(void *arg), void *barrier_arg);

typedef struct {
    const char *name;
    ab_run1 run;       /* single-threaded entry */
    ab_runn run_par;   /* NAME_thread, or NULL when built without --threads */
    int threads;       /* the threads run_par was generated for (the header's NAME_THREADS) */
    size_t mutable_bytes, activation_bytes, input_offset, input_bytes;
} ab_variant;

#include "ab_variants.h"

#define NV (sizeof ab_variants / sizeof ab_variants[0])

static uint8_t *mut[NV], *act[NV];
static void run_share(int j, int tid);
#define DRIVER "ab_driver"
#include "bundle_driver.h"

static void run_share(int j, int tid)
{
    int v = j % (int)NV;
    const ab_variant *a = &ab_variants[v];
    if (nthreads > 1)
        a->run_par(NULL, mut[v], act[v], tid, barrier, NULL);
    else
        a->run(NULL, mut[v], act[v]);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ab_driver ROUNDS THREADS\n");
        return 1;
    }
    int rounds = atoi(argv[1]);
    nthreads = atoi(argv[2]);
    if (rounds < 1 || nthreads < 1 || nthreads > 64) {
        fprintf(stderr, "ab_driver: bad ROUNDS or THREADS\n");
        return 1;
    }
    for (size_t v = 0; v < NV; v++) {
        const ab_variant *a = &ab_variants[v];
        if (nthreads > 1 && (!a->run_par || a->threads != nthreads)) {
            fprintf(stderr, "ab_driver: bundle %s has no entry for %d threads\n", a->name,
                    nthreads);
            return 1;
        }
        mut[v] = alloc_region(a->mutable_bytes);
        act[v] = alloc_region(a->activation_bytes);
        /* The same input for every bundle: values in [-0.5, 0.5). */
        float *x = (float *)(mut[v] + a->input_offset);
        for (size_t i = 0; i < a->input_bytes / sizeof(float); i++)
            x[i] = (float)(i * 7919 % 1000) / 1000.0f - 0.5f;
    }
    pthread_t th[64];
    if (start_helpers(th)) {
        fprintf(stderr, "ab_driver: cannot start a thread\n");
        return 1;
    }
    printf("#");
    for (size_t v = 0; v < NV; v++)
        printf(" %s", ab_variants[v].name);
    printf("\n");
    int j = 0;
    for (int r = 0; r < rounds; r++) {
        for (size_t v = 0; v < NV; v++, j++) {
            double t0 = now_ms();
            run_job(j);
            printf("%s%.3f", v ? " " : "", now_ms() - t0);
        }
        printf("\n");
        fflush(stdout);
    }
    stop_helpers(th);
    return 0;
}
