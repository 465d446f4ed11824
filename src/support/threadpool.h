// threadpool.h - A small persistent thread pool: runs fn(arg, tid) on N threads at once
// (the caller is thread 0) and offers a barrier among them, for the CPU backend's
// intra-op parallelism.
#ifndef GLOW_THREADPOOL_H
#define GLOW_THREADPOOL_H

#include <stdbool.h>

typedef struct glow_threadpool glow_threadpool;

/* The number of online cores (at least 1): the default of --threads. */
int glow_default_threads(void);
/* A pool of nthreads (1..1024) threads, nthreads-1 of them started now; NULL when the
 * system refuses a thread (the caller reports it). */
glow_threadpool *glow_threadpool_create(int nthreads);
int glow_threadpool_size(const glow_threadpool *p);
/* Calls fn(arg, tid) for tid = 0..N-1 concurrently (tid 0 on the calling thread) and
 * returns when every call has returned. One run at a time per pool. */
void glow_threadpool_run(glow_threadpool *p, void (*fn)(void *arg, int tid), void *arg);
/* Called by every thread of a run: returns once all N threads have reached it, with the
 * writes of each made before the barrier visible to all after it. */
void glow_threadpool_barrier(glow_threadpool *p);
/* With GLOWC_THREAD_STATS=1 in the environment when the pool was made: thread tid's mean
 * time per run (ms) waiting at barriers and waiting at the run's end for the last thread,
 * over the runs that had barriers (also printed to stderr when the pool is destroyed).
 * False when the pool does not measure, has counted no run, or tid is out of range. */
bool glow_threadpool_idle(const glow_threadpool *p, int tid, double *barrier_ms,
                          double *end_ms);
void glow_threadpool_destroy(glow_threadpool *p);

#endif
