// test_exec_concurrent.c - One compiled program serving concurrent runs: N threads x M runs
// on contexts from the program's pool (cpu with 1 and 2 threads per run, and the
// interpreter), every output compared with the serial run of the same input; the pool reuses
// its contexts; glow_program_run keeps its own context.
#include <pthread.h>

#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

#define NINPUTS 6   /* distinct inputs, each with its own reference output */
#define NTHREADS 4
#define NRUNS 12    /* per thread */

static glow_diag D;

typedef struct shared {
    glow_program *p;
    glow_tensor in[NINPUTS];
    glow_tensor ref[NINPUTS];
} shared;

typedef struct worker {
    shared *sh;
    int id;
    int wrong, failed;  /* outputs that differ from their reference; failed calls */
    char msg[256];
} worker;

static glow_program *compile(const char *backend, int threads)
{
    glow_module *m = glow_module_create();
    glow_diag_clear(&D);
    if (glow_onnx_load(m, "models/lenet.onnx", NULL, &D) != GLOW_OK) {
        fprintf(stderr, "load: %s\n", D.msg);
        glow_module_destroy(m);
        return NULL;
    }
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .threads = threads,
                               .stop_after = GLOW_STAGE_COMPILED };
    if (glow_program_create(m, &o, &p, &D) != GLOW_OK) {
        fprintf(stderr, "compile on %s: %s\n", backend, D.msg);
        return NULL;
    }
    return p;
}

/* Deterministic pseudo-random pixels in [0, 1), different per seed. */
static void fill(glow_tensor *t, unsigned seed)
{
    float *x = t->data;
    uint32_t s = seed * 2654435761u + 12345u;
    for (int64_t i = 0; i < glow_type_numel(&t->type); i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / (float)(1u << 24);
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    for (int r = 0; r < NRUNS; r++) {
        int k = (w->id * 5 + r) % NINPUTS;
        glow_exec *e = NULL;
        glow_diag d = { 0 };
        if (glow_program_acquire(sh->p, &e, &d) != GLOW_OK ||
            glow_exec_run(e, &sh->in[k], 1, &d) != GLOW_OK) {
            w->failed++;
            snprintf(w->msg, sizeof w->msg, "%.200s", d.msg);
            glow_program_release(sh->p, e);
            continue;
        }
        glow_tensor out = glow_exec_output(e, 0);
        if (!glow_tensor_equal(&out, &sh->ref[k]))
            w->wrong++;
        glow_program_release(sh->p, e);
    }
    return NULL;
}

static int count_idle(glow_program *p)
{
    int n = 0;
    glow_exec *got[64];
    /* Take every idle context (the pool creates one more when it runs dry), then give all
     * back: the number taken before the first new one is the pool's size. */
    while (n < 64) {
        glow_exec *e = p->idle;
        if (!e)
            break;
        CHECK(glow_program_acquire(p, &got[n], &D) == GLOW_OK);
        n++;
    }
    for (int i = 0; i < n; i++)
        glow_program_release(p, got[i]);
    return n;
}

static void test_concurrent(const char *backend, int threads)
{
    shared sh = { 0 };
    sh.p = compile(backend, threads);
    CHECK(sh.p != NULL);
    if (!sh.p)
        return;
    glow_type t = sh.p->inputs[0]->outs[0];
    for (int k = 0; k < NINPUTS; k++) {
        CHECK(glow_tensor_alloc(&sh.in[k], &t, &D) == GLOW_OK);
        fill(&sh.in[k], (unsigned)k + 1);
        /* The reference: a serial run on the program's own context. */
        CHECK(glow_program_run(sh.p, &sh.in[k], 1, &D) == GLOW_OK);
        glow_tensor o = glow_program_output(sh.p, 0);
        CHECK(glow_tensor_alloc(&sh.ref[k], &o.type, &D) == GLOW_OK);
        memcpy(sh.ref[k].data, o.data, glow_tensor_bytes(&o));
    }
    /* The inputs must give different outputs, or a crossed response would go unseen. */
    for (int a = 0; a < NINPUTS; a++)
        for (int b = a + 1; b < NINPUTS; b++)
            CHECK(!glow_tensor_equal(&sh.ref[a], &sh.ref[b]));

    worker w[NTHREADS] = { 0 };
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (worker){ .sh = &sh, .id = i };
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    /* Meanwhile the program's own context keeps serving glow_program_run. */
    for (int r = 0; r < NRUNS; r++) {
        int k = r % NINPUTS;
        CHECK(glow_program_run(sh.p, &sh.in[k], 1, &D) == GLOW_OK);
        glow_tensor o = glow_program_output(sh.p, 0);
        CHECK(glow_tensor_equal(&o, &sh.ref[k]));
    }
    int wrong = 0, failed = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        wrong += w[i].wrong;
        failed += w[i].failed;
        if (w[i].failed)
            fprintf(stderr, "%s: worker %d: %s\n", backend, i, w[i].msg);
    }
    printf("%s, %d thread(s) per run: %d runs, %d wrong, %d failed\n", backend, threads,
           NTHREADS * NRUNS, wrong, failed);
    CHECK_EQ(wrong, 0);
    CHECK_EQ(failed, 0);
    /* No more contexts than runs at once, and they are reused: a serial pass after the
     * threads took the idle ones only. */
    int idle = count_idle(sh.p);
    CHECK(idle >= 1 && idle <= NTHREADS);
    for (int r = 0; r < 3; r++) {
        glow_exec *e = NULL;
        CHECK(glow_program_acquire(sh.p, &e, &D) == GLOW_OK);
        CHECK(glow_exec_run(e, &sh.in[r], 1, &D) == GLOW_OK);
        glow_tensor o = glow_exec_output(e, 0);
        CHECK(glow_tensor_equal(&o, &sh.ref[r]));
        glow_program_release(sh.p, e);
    }
    CHECK_EQ(count_idle(sh.p), idle);
    /* A bad input fails on its context alone, with the model's message. */
    glow_exec *e = NULL;
    CHECK(glow_program_acquire(sh.p, &e, &D) == GLOW_OK);
    glow_type bad = glow_type_make(GLOW_F32, 2, (int64_t[]){ 2, 2 });
    float four[4] = { 0 };
    glow_tensor bt = glow_tensor_borrow(&bad, four);
    glow_diag_clear(&D);
    CHECK_EQ(glow_exec_run(e, &bt, 1, &D), GLOW_ERR_BAD_TYPE);
    CHECK_CONTAINS(D.msg, "the model expects f32[1, 1, 28, 28]");
    glow_program_release(sh.p, e);
    for (int k = 0; k < NINPUTS; k++) {
        glow_tensor_free(&sh.in[k]);
        glow_tensor_free(&sh.ref[k]);
    }
    glow_program_destroy(sh.p);
}

int main(void)
{
    test_concurrent("cpu", 1);
    test_concurrent("cpu", 2);
    test_concurrent("interpreter", 1);
    return CHECK_DONE();
}
