// bundle_driver.h - What bench's bundle drivers (ab_driver.c, bundle_run.c) share: the clock,
// the regions they allocate for a bundle, a barrier for the bundle's `NAME_thread` entry, and
// helper threads that run their share of each job the main thread posts. Every wait spins.
//
// The including file defines DRIVER (its name, for messages), declares
// `static void run_share(int job, int tid)` before including this, and sets `nthreads`.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* A zeroed region of `bytes` for a bundle, 64-byte aligned; exits when memory runs out. */
static uint8_t *alloc_region(size_t bytes)
{
    size_t size = (bytes + 63) / 64 * 64 + 64; /* whole lines, never zero */
    uint8_t *p = aligned_alloc(64, size);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", DRIVER);
        exit(1);
    }
    memset(p, 0, size);
    return p;
}

static int nthreads = 1;
static atomic_int bar_count, bar_gen, job = -1, finished;

/* Waits while *v == seen, spinning: bench's drivers time back-to-back runs, and a thread that
 * sleeps between them (or at a barrier) waits for the scheduler on a busy machine - on this
 * project's 2-core VMs with other jobs running, LeNet's 2-thread median went from 0.02 to
 * 0.85 ms with a spin-then-futex wait here. */
static void wait_while(atomic_int *v, int seen)
{
    while (atomic_load(v) == seen)
        __builtin_ia32_pause();
}

__attribute__((unused)) static void barrier(void *arg)
{
    (void)arg;
    int gen = atomic_load(&bar_gen);
    if (atomic_fetch_add(&bar_count, 1) == nthreads - 1) {
        atomic_store(&bar_count, 0);
        atomic_fetch_add(&bar_gen, 1);
    } else {
        wait_while(&bar_gen, gen);
    }
}

/* Helper thread tid: waits for each job number, runs its share of it; -2 ends it. */
static void *helper(void *arg)
{
    int tid = (int)(intptr_t)arg, seen = -1;
    for (;;) {
        wait_while(&job, seen);
        int j = atomic_load(&job);
        seen = j;
        if (j == -2)
            return NULL;
        run_share(j, tid);
        atomic_fetch_add(&finished, 1);
    }
}

/* Job j (numbered from 0, one after another) on every thread; returns when all are done. */
static void run_job(int j)
{
    atomic_store(&job, j);
    run_share(j, 0);
    while (atomic_load(&finished) < (j + 1) * (nthreads - 1))
        __builtin_ia32_pause();
}

/* Starts threads 1..nthreads-1 into th[]; 0 on success. */
static int start_helpers(pthread_t *th)
{
    for (int t = 1; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, helper, (void *)(intptr_t)t))
            return -1;
    return 0;
}

static void stop_helpers(pthread_t *th)
{
    atomic_store(&job, -2);
    for (int t = 1; t < nthreads; t++)
        pthread_join(th[t], NULL);
}
