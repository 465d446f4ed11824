// spin_threads.h - The threads of bench's bundle drivers (ab_driver.c, bundle_run.c): a
// barrier for the bundle's `NAME_thread` entry, and helper threads that run their share of
// each job the main thread posts. Every wait spins for 100 us, then sleeps on a futex until
// the value it waits on changes, as glowc's own pool does (src/support/threadpool.c: on a
// busy machine a thread that only spins holds its core while the thread it waits for is
// descheduled), so a barrier costs about what it costs in `glowc bench`.
//
// The including file defines `static void run_share(int job, int tid)` before including this
// and sets `nthreads`.
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int nthreads = 1;
static atomic_int bar_count, bar_gen, job = -1, finished, sleepers;

static double spin_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Waits while *v == seen: spins 100 us, then sleeps (counted in `sleepers`, raised before
 * the futex checks *v, so the thread that changes *v and then reads `sleepers` wakes it). */
static void wait_while(atomic_int *v, int seen)
{
    double t0 = spin_now_us();
    for (unsigned i = 1; atomic_load(v) == seen; i++) {
        __builtin_ia32_pause();
        if (i % 64 || spin_now_us() - t0 < 100)
            continue;
        atomic_fetch_add(&sleepers, 1);
        while (atomic_load(v) == seen)
            syscall(SYS_futex, (int *)v, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
        atomic_fetch_sub(&sleepers, 1);
        return;
    }
}

/* Changes *v (by adding 1 or storing `to`) and wakes its sleepers. */
static void post(atomic_int *v, int add, int to)
{
    if (add)
        atomic_fetch_add(v, 1);
    else
        atomic_store(v, to);
    if (atomic_load(&sleepers))
        syscall(SYS_futex, (int *)v, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

static void barrier(void *arg)
{
    (void)arg;
    int gen = atomic_load(&bar_gen);
    if (atomic_fetch_add(&bar_count, 1) == nthreads - 1) {
        atomic_store(&bar_count, 0);
        post(&bar_gen, 1, 0);
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
        post(&finished, 1, 0);
    }
}

/* Job j (numbered from 0, one after another) on every thread; returns when all are done. */
static void run_job(int j)
{
    post(&job, 0, j);
    run_share(j, 0);
    for (int f; (f = atomic_load(&finished)) < (j + 1) * (nthreads - 1);)
        wait_while(&finished, f);
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
    post(&job, 0, -2);
    for (int t = 1; t < nthreads; t++)
        pthread_join(th[t], NULL);
}
