// test_long_chain.c - A chain of 20,000 and 100,000 nodes (Relu, Add of the input, Relu, ...)
// loads and compiles for the interpreter in a thread with a small stack (256 KiB; 1 MiB under
// the sanitizers, whose frames are bigger), so any walk that recursed once per node would
// overflow it and crash the test; then runs the 20,000-node chain and checks its result.
// Prints the load and compile times (not asserted: timings are reported, not tested).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/onnx_build.h"

#ifdef GLOWC_SANITIZE
#define STACK_BYTES (1024 * 1024)
#else
#define STACK_BYTES (256 * 1024)
#endif

/* x f32[1, 4] -> n nodes: even i Relu(prev), odd i Add(prev, x) -> y. The nodes are built
 * here into one array: mk_node appends by copying the graph's node array (quadratic). */
static uint8_t *chain_model(int n, size_t *size)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, (int64_t[]){ 1, 4 });
    Onnx__NodeProto **nodes = mk_alloc(mk, (size_t)n * sizeof *nodes);
    char cur[32], name[32];
    const char *prev = "x";
    for (int i = 0; i < n; i++) {
        snprintf(cur, sizeof cur, i + 1 == n ? "y" : "t%d", i);
        snprintf(name, sizeof name, "n%d", i);
        Onnx__NodeProto *np = mk_alloc(mk, sizeof *np);
        onnx__node_proto__init(np);
        np->name = mk_str(mk, name);
        np->op_type = mk_str(mk, i % 2 == 0 ? "Relu" : "Add");
        np->n_input = i % 2 == 0 ? 1 : 2;
        np->input = mk_alloc(mk, 2 * sizeof *np->input);
        np->input[0] = (char *)prev;
        np->input[1] = (char *)"x";
        np->n_output = 1;
        np->output = mk_alloc(mk, sizeof *np->output);
        np->output[0] = mk_str(mk, cur);
        prev = np->output[0];
        nodes[i] = np;
    }
    mk->graph.node = nodes;
    mk->graph.n_node = (size_t)n;
    mk_output(mk, "y", MK_F32, 2, (int64_t[]){ 1, 4 });
    uint8_t *bytes = mk_pack(mk, size);
    mk_free(mk);
    return bytes;
}

typedef struct job {
    int n;
    bool run;
    bool ok;
    double load_s, compile_s;
    float y[4];
    char msg[4200];
} job;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *work(void *arg)
{
    job *j = arg;
    size_t size = 0;
    uint8_t *bytes = chain_model(j->n, &size);
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    double t0 = now();
    glow_status s = glow_onnx_load_bytes(m, bytes, size, NULL, &d);
    free(bytes);
    j->load_s = now() - t0;
    if (s != GLOW_OK) {
        glow_module_destroy(m);
        snprintf(j->msg, sizeof j->msg, "load: %s", d.msg);
        return NULL;
    }
    glow_compile_options opt = { .backend = "interpreter", .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    t0 = now();
    s = glow_program_create(m, &opt, &p, &d);   /* takes m */
    j->compile_s = now() - t0;
    if (s != GLOW_OK) {
        snprintf(j->msg, sizeof j->msg, "compile: %s", d.msg);
        return NULL;
    }
    j->ok = true;
    if (j->run) {
        float xv[4] = { -1, 0, 0.5f, 2 };
        glow_type ty = glow_type_make(GLOW_F32, 2, (const int64_t[]){ 1, 4 });
        glow_tensor x = glow_tensor_borrow(&ty, xv);
        if (glow_program_run(p, &x, 1, &d) != GLOW_OK) {
            snprintf(j->msg, sizeof j->msg, "run: %s", d.msg);
            j->ok = false;
        } else {
            memcpy(j->y, glow_program_output(p, 0).data, sizeof j->y);
        }
    }
    glow_program_destroy(p);
    return NULL;
}

static void chain(int n, bool run)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    CHECK_EQ(pthread_attr_setstacksize(&attr, STACK_BYTES), 0);
    job j = { .n = n, .run = run };
    pthread_t t;
    CHECK_EQ(pthread_create(&t, &attr, work, &j), 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    if (!j.ok)
        fprintf(stderr, "chain of %d: %s\n", n, j.msg);
    CHECK(j.ok);
    printf("chain of %d nodes: load %.3f s, compile (interpreter) %.3f s, %d KiB stack\n", n,
           j.load_s, j.compile_s, STACK_BYTES / 1024);
    if (run && j.ok) {
        /* Relu then Add x, n/2 times: x < 0 gives x (Relu(x + x) = 0 then + x, ...) after
         * the first pair, and x >= 0 grows by x per pair: (n/2 + 1) * x for x >= 0. */
        const float x[4] = { -1, 0, 0.5f, 2 };
        for (int k = 0; k < 4; k++) {
            float want = x[k] < 0 ? x[k] : (float)(n / 2 + 1) * x[k];
            CHECK_NEAR(j.y[k], want, 1e-3 * (want < 0 ? -want : want) + 1e-6);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) {   /* test_long_chain N: one chain of N nodes, for measuring */
        chain(atoi(argv[1]), true);
        return CHECK_DONE();
    }
    chain(20000, true);
    chain(100000, false);
    return CHECK_DONE();
}
