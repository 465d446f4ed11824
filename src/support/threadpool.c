// threadpool.c - Persistent pthreads that run one function on every thread per job, with a
// spinning barrier between the dependent steps of a job.
//
// Workers sleep on a condition variable between jobs (a program may sit idle for a long
// time) but spin briefly first, because inference calls come back to back. The barrier
// spins with a CPU pause and falls back to sched_yield, since the machine may have fewer
// free cores than threads; either way it is a sequentially consistent rendezvous, which
// orders every thread's stores before it against every thread's loads after it.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

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
};

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

/* Spins until *gen differs from `seen` (pausing, then yielding the core). */
static void wait_change(atomic_uint *gen, unsigned seen)
{
    for (int i = 0; atomic_load(gen) == seen; i++) {
        if (i < 1000)
            cpu_relax();
        else
            sched_yield();
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
        p->fn(p->arg, tid);
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

void glow_threadpool_run(glow_threadpool *p, void (*fn)(void *arg, int tid), void *arg)
{
    if (p->n == 1) {
        fn(arg, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->remaining, p->n - 1);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0);
    /* Wait for the workers: spin briefly (they usually finish together), then sleep. */
    for (int i = 0; i < 20000 && atomic_load(&p->remaining) > 0; i++)
        cpu_relax();
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->remaining) > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void glow_threadpool_barrier(glow_threadpool *p)
{
    if (p->n == 1)
        return;
    unsigned round = atomic_load(&p->bar_gen);
    if (atomic_fetch_add(&p->bar_count, 1) == p->n - 1) {
        atomic_store(&p->bar_count, 0);
        atomic_fetch_add(&p->bar_gen, 1);
        return;
    }
    wait_change(&p->bar_gen, round);
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
    free(p->threads);
    free(p);
}
