// test_threadpool.c - The persistent thread pool: every tid runs once per job, jobs repeat,
// and the barrier orders each round's writes before every thread's reads of the next; with
// GLOWC_THREAD_STATS=1 the idle times it measures are at least the waits a job forces; a
// thread waiting long at a barrier sleeps instead of holding its core, and wakes when the
// last one arrives, whatever the arrivals' skew around the spinning time.
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "support/threadpool.h"

#define ROUNDS 50

typedef struct job {
    glow_threadpool *pool;
    int n;
    int skew; /* rounds where one thread arrives late (check_sleep) */
    int slots[64];
    atomic_int calls, bad;
} job;

/* Round r: thread t writes r into its slot, then (after a barrier) every thread checks that
 * all slots hold r, then a second barrier keeps the next round's writes after the checks.
 * With `skew`, thread r % n first arrives (r * 37) % 400 microseconds late, on both sides of
 * the time the others spin before they sleep, so that waking a sleeper races with
 * arriving. */
static void rounds(void *arg, int tid)
{
    job *j = arg;
    atomic_fetch_add(&j->calls, 1);
    for (int r = 1; r <= (j->skew ? 200 : ROUNDS); r++) {
        if (j->skew && tid == r % j->n) {
            struct timespec ts = { 0, (long)(r * 37 % 400) * 1000L };
            nanosleep(&ts, NULL);
        }
        j->slots[tid] = r;
        glow_threadpool_barrier(j->pool);
        for (int t = 0; t < j->n; t++)
            if (j->slots[t] != r)
                atomic_fetch_add(&j->bad, 1);
        glow_threadpool_barrier(j->pool);
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = { 0, ms * 1000000L };
    nanosleep(&ts, NULL);
}

/* Thread 1 arrives 20 ms late at the barrier; after it thread 0 works 10 ms more. */
static void late(void *arg, int tid)
{
    glow_threadpool *p = arg;
    if (tid == 1)
        sleep_ms(20);
    glow_threadpool_barrier(p);
    if (tid == 0)
        sleep_ms(10);
}

/* Thread 1 arrives 200 ms late: the others must sleep, not spin or yield, meanwhile. */
static void very_late(void *arg, int tid)
{
    if (tid == 1)
        sleep_ms(200);
    glow_threadpool_barrier(arg);
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void check_sleep(void)
{
    glow_threadpool *p = glow_threadpool_create(4);
    CHECK(p != NULL);
    if (!p)
        return;
    double t0 = cpu_ms();
    glow_threadpool_run(p, very_late, p);
    double used = cpu_ms() - t0;
    /* Three waiters spinning or yielding for 200 ms would use about 600 ms of CPU. */
    CHECK(used < 60);
    if (used >= 60)
        fprintf(stderr, "barrier waiters used %.1f ms of CPU in a 200 ms wait\n", used);
    job j = { .n = 4, .pool = p, .skew = 1 };
    glow_threadpool_run(p, rounds, &j);
    CHECK_EQ(atomic_load(&j.bad), 0);
    glow_threadpool_destroy(p);
}

static void check_idle(void)
{
    glow_threadpool *p = glow_threadpool_create(2);
    double bar = 0, end = 0;
    CHECK(p && !glow_threadpool_idle(p, 0, &bar, &end));   /* not measuring */
    glow_threadpool_destroy(p);
    setenv("GLOWC_THREAD_STATS", "1", 1);
    p = glow_threadpool_create(2);
    unsetenv("GLOWC_THREAD_STATS");
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK(!glow_threadpool_idle(p, 0, &bar, &end));   /* no run yet */
    for (int i = 0; i < 3; i++)
        glow_threadpool_run(p, late, p);
    CHECK(glow_threadpool_idle(p, 0, &bar, &end));
    CHECK(bar >= 19 && end < 10);
    CHECK(glow_threadpool_idle(p, 1, &bar, &end));
    CHECK(bar < 20 && end >= 9);
    CHECK(!glow_threadpool_idle(p, 2, &bar, &end));
    glow_threadpool_destroy(p);   /* prints the statistics to stderr */
}

int main(void)
{
    CHECK(glow_default_threads() >= 1);
    CHECK(glow_threadpool_create(0) == NULL);
    CHECK(glow_threadpool_create(2000) == NULL);
    for (int n = 1; n <= 4; n++) {
        job j = { .n = n };
        j.pool = glow_threadpool_create(n);
        CHECK(j.pool != NULL);
        if (!j.pool)
            continue;
        CHECK_EQ(glow_threadpool_size(j.pool), n);
        for (int rep = 0; rep < 5; rep++)
            glow_threadpool_run(j.pool, rounds, &j);
        CHECK_EQ(atomic_load(&j.calls), 5 * n);
        CHECK_EQ(atomic_load(&j.bad), 0);
        glow_threadpool_destroy(j.pool);
    }
    check_idle();
    check_sleep();
    return CHECK_DONE();
}
