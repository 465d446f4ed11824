// test_threadpool.c - The persistent thread pool: every tid runs once per job, jobs repeat,
// and the barrier orders each round's writes before every thread's reads of the next.
#include <stdatomic.h>

#include "check.h"
#include "support/threadpool.h"

#define ROUNDS 50

typedef struct job {
    glow_threadpool *pool;
    int n;
    int slots[64];
    atomic_int calls, bad;
} job;

/* Round r: thread t writes r into its slot, then (after a barrier) every thread checks that
 * all slots hold r, then a second barrier keeps the next round's writes after the checks. */
static void rounds(void *arg, int tid)
{
    job *j = arg;
    atomic_fetch_add(&j->calls, 1);
    for (int r = 1; r <= ROUNDS; r++) {
        j->slots[tid] = r;
        glow_threadpool_barrier(j->pool);
        for (int t = 0; t < j->n; t++)
            if (j->slots[t] != r)
                atomic_fetch_add(&j->bad, 1);
        glow_threadpool_barrier(j->pool);
    }
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
    return CHECK_DONE();
}
