// spin_threads.h - The threads of bench's bundle drivers (ab_driver.c, bundle_run.c): a
// barrier for the bundle's `NAME_thread` entry, and helper threads that run their share of
// each job the main thread posts. Every wait spins.
//
// The including file defines `static void run_share(int job, int tid)` before including this
// and sets `nthreads`.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

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

/* Changes *v: adds 1, or stores `to`. */
static void post(atomic_int *v, int add, int to)
{
    if (add)
        atomic_fetch_add(v, 1);
    else
        atomic_store(v, to);
}

__attribute__((unused)) static void barrier(void *arg)
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
