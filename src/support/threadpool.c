// threadpool.c - Persistent pthreads that run one function on every thread per job, with a
// spinning barrier between the dependent steps of a job.
//
// Workers sleep on a condition variable between jobs (a program may sit idle for a long
// time) but spin briefly first, because inference calls come back to back. The barrier
// spins with a CPU pause for up to a millisecond, then sleeps on a futex until the
// last thread arrives; either way it is a sequentially consistent rendezvous, which orders
// every thread's stores before it against every thread's loads after it.
//
// Why sleep and not sched_yield: a thread that yields in a loop stays on the CPU for as long
// as it waits (a long fallback step on thread 0 kept every other thread busy doing nothing),
// and on a busy machine each yield hands the core to another process anyway.
//
// With GLOWC_THREAD_STATS=1 in the environment a pool also measures where its runs' time
// goes: each thread's time waiting at barriers, and at the end of each run the time from a
// thread's return to the last one's (the run's own end barrier), printed to stderr when the
// pool is destroyed. A diagnostic for looking at the split of work (docs/cpu-backend.md,
// "Threads"), not an interface; runs without barriers (compiling in parts) are not counted.
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include "support/threadpool.h"

struct glow_threadpool {
    int n;
    pthread_t *threads;
    int nstarted;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    /* The current job; `gen` counts jobs, `stop` ends the workers. */
    void (*fn)(void *arg, int tid);
    void *arg;
    atomic_uint gen;
    atomic_int remaining;
    atomic_bool stop;
    /* Barrier: arrivals in this round and the round number. */
    atomic_int bar_count;
    atomic_uint bar_gen;
    atomic_int bar_sleepers; /* threads asleep (or about to be) on bar_gen's futex */
    /* GLOWC_THREAD_STATS: per thread, ns waiting at barriers in the current run and in all
     * counted runs, ns between its return and the run's end, and when it returned; the
     * counted runs, their barriers and their wall time. Each thread writes its own slots;
     * thread 0 reads them once the run is over. */
    struct thread_stats {
        uint64_t bar_ns, run_bar_ns, end_ns, done_at;
    } *stats;
    uint64_t runs, barriers, run_ns;
    atomic_uint run_barriers;
};

static _Thread_local int tl_tid;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct worker_arg {
    glow_threadpool *p;
    int tid;
} worker_arg;

int glow_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* How long a barrier spins before it sleeps: longer than most steps a thread waits out (a
 * step that runs on one thread, a split step's skew), since a sleeper wakes about 20 us after
 * the last arrival on this project's VMs - with 100 us here a 150 us serial step cost 22 us
 * more per barrier than spinning - and short enough that a long wait (an evaluator fallback,
 * a descheduled thread) does not hold a core for long. */
#define SPIN_NS 1000000u

/* Sleeps while *gen == seen (returns at once if it no longer is, or on a spurious wake). */
static void futex_wait(atomic_uint *gen, unsigned seen)
{
#ifdef __linux__
    syscall(SYS_futex, (unsigned *)gen, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
#else
    (void)gen, (void)seen;
    sched_yield();
#endif
}

static void futex_wake_all(atomic_uint *gen)
{
#ifdef __linux__
    syscall(SYS_futex, (unsigned *)gen, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
#else
    (void)gen;
#endif
}

/* Waits until *gen differs from `seen`: spins with a pause for SPIN_NS, then sleeps on the
 * futex, counted in *sleepers so that the thread that changes *gen knows to wake it. The
 * count is raised before the futex checks *gen, and the waker reads it after changing
 * *gen (both sequentially consistent), so either the waker sees the sleeper or the
 * sleeper's futex sees the new value. */
static void wait_change(atomic_uint *gen, unsigned seen, atomic_int *sleepers)
{
    uint64_t t0 = 0;
    for (unsigned i = 1; atomic_load(gen) == seen; i++) {
        cpu_relax();
        if (i % 64)
            continue;
        uint64_t t = now_ns();
        if (!t0)
            t0 = t;
        else if (t - t0 > SPIN_NS) {
            atomic_fetch_add(sleepers, 1);
            while (atomic_load(gen) == seen)
                futex_wait(gen, seen);
            atomic_fetch_sub(sleepers, 1);
            return;
        }
    }
}

static void *worker_main(void *opaque)
{
    worker_arg *wa = opaque;
    glow_threadpool *p = wa->p;
    int tid = wa->tid;
    free(wa);
    unsigned seen = 0;
    for (;;) {
        /* Spin a little for the next job, then sleep. */
        for (int i = 0; i < 20000 && atomic_load(&p->gen) == seen && !atomic_load(&p->stop);
             i++)
            cpu_relax();
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->gen) == seen && !atomic_load(&p->stop))
            pthread_cond_wait(&p->wake, &p->mu);
        pthread_mutex_unlock(&p->mu);
        if (atomic_load(&p->stop))
            return NULL;
        seen = atomic_load(&p->gen);
        tl_tid = tid;
        p->fn(p->arg, tid);
        if (p->stats)
            p->stats[tid].done_at = now_ns();
        if (atomic_fetch_sub(&p->remaining, 1) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

glow_threadpool *glow_threadpool_create(int nthreads)
{
    if (nthreads < 1 || nthreads > 1024)
        return NULL;
    glow_threadpool *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->n = nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->threads = calloc((size_t)nthreads, sizeof(*p->threads));
    const char *st = getenv("GLOWC_THREAD_STATS");
    if (st && !strcmp(st, "1") && nthreads > 1 &&
        !(p->stats = calloc((size_t)nthreads, sizeof(*p->stats)))) {
        glow_threadpool_destroy(p);
        return NULL;
    }
    if (!p->threads) {
        glow_threadpool_destroy(p);
        return NULL;
    }
    for (int t = 1; t < nthreads; t++) {
        worker_arg *wa = malloc(sizeof(*wa));
        if (!wa) {
            glow_threadpool_destroy(p);
            return NULL;
        }
        wa->p = p;
        wa->tid = t;
        if (pthread_create(&p->threads[t], NULL, worker_main, wa) != 0) {
            free(wa);
            glow_threadpool_destroy(p);
            return NULL;
        }
        p->nstarted = t;
    }
    return p;
}

int glow_threadpool_size(const glow_threadpool *p) { return p->n; }

/* Adds a finished run to the statistics when it had barriers (a program's run). */
static void count_run(glow_threadpool *p, uint64_t t0)
{
    unsigned nbar = atomic_exchange(&p->run_barriers, 0);
    uint64_t last = 0;
    for (int t = 0; t < p->n; t++)
        last = p->stats[t].done_at > last ? p->stats[t].done_at : last;
    for (int t = 0; t < p->n; t++) {
        struct thread_stats *s = &p->stats[t];
        if (nbar) {
            s->bar_ns += s->run_bar_ns;
            s->end_ns += last - s->done_at;
        }
        s->run_bar_ns = 0;
    }
    if (nbar) {
        p->runs++;
        p->barriers += nbar / (unsigned)p->n;
        p->run_ns += last - t0;
    }
}

bool glow_threadpool_idle(const glow_threadpool *p, int tid, double *barrier_ms,
                          double *end_ms)
{
    if (!p->stats || !p->runs || tid < 0 || tid >= p->n)
        return false;
    *barrier_ms = (double)p->stats[tid].bar_ns * 1e-6 / (double)p->runs;
    *end_ms = (double)p->stats[tid].end_ns * 1e-6 / (double)p->runs;
    return true;
}

static void print_stats(const glow_threadpool *p)
{
    if (!p->runs)
        return;
    double per = 1e-6 / (double)p->runs, run = (double)p->run_ns * per;
    fprintf(stderr, "glowc: thread stats: %d threads, %" PRIu64 " runs of %.3f ms, %" PRIu64
            " barriers per run\n", p->n, p->runs, run, p->barriers / p->runs);
    for (int t = 0; t < p->n; t++) {
        double bar = (double)p->stats[t].bar_ns * per, end = (double)p->stats[t].end_ns * per;
        fprintf(stderr, "glowc:   thread %d: idle %.3f ms per run at barriers, %.3f ms at the "
                "end (%.1f%% of the run)\n", t, bar, end,
                run > 0 ? 100.0 * (bar + end) / run : 0.0);
    }
}

void glow_threadpool_run(glow_threadpool *p, void (*fn)(void *arg, int tid), void *arg)
{
    if (p->n == 1) {
        fn(arg, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    uint64_t t0 = p->stats ? now_ns() : 0;
    atomic_store(&p->remaining, p->n - 1);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    tl_tid = 0;
    fn(arg, 0);
    if (p->stats)
        p->stats[0].done_at = now_ns();
    /* Wait for the workers: spin briefly (they usually finish together), then sleep. */
    for (int i = 0; i < 20000 && atomic_load(&p->remaining) > 0; i++)
        cpu_relax();
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->remaining) > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (p->stats)
        count_run(p, t0);
}

void glow_threadpool_barrier(glow_threadpool *p)
{
    if (p->n == 1)
        return;
    uint64_t t0 = 0;
    if (p->stats) {
        atomic_fetch_add(&p->run_barriers, 1);
        t0 = now_ns();
    }
    unsigned round = atomic_load(&p->bar_gen);
    if (atomic_fetch_add(&p->bar_count, 1) == p->n - 1) {
        atomic_store(&p->bar_count, 0);
        atomic_fetch_add(&p->bar_gen, 1);
        if (atomic_load(&p->bar_sleepers))
            futex_wake_all(&p->bar_gen);
        return;
    }
    wait_change(&p->bar_gen, round, &p->bar_sleepers);
    if (p->stats)
        p->stats[tl_tid].run_bar_ns += now_ns() - t0;
}

void glow_threadpool_destroy(glow_threadpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, true);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t <= p->nstarted; t++)
        pthread_join(p->threads[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    if (p->stats)
        print_stats(p);
    free(p->stats);
    free(p->threads);
    free(p);
}
