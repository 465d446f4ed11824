// session_overhead.c - What a public-API session costs per run beside the bare compiled
// program: the same model compiled twice (a glow_program, and a glowc_session with the same
// backend and threads), run in alternating blocks, per-run medians of each and their
// difference. A measurement, not a test (issue 18's target: <= 3 us on LeNet).
//
//   build/release/session_overhead [MODEL.onnx [BACKEND [THREADS [ROUNDS]]]]
//
// The session's extra work per run is binding and checking the values, taking a context from
// the pool and giving it back (a mutex, twice) and copying the outputs out; the bare program
// checks and copies its inputs too and leaves its outputs in place. A third column runs the
// bare program on a context from its pool (glow_program_acquire, glow_exec_run, release):
// the session's run without the API, which separates the API's cost from the effect of
// running in other memory (another context's regions).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "glowc/glowc.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

#define BLOCK 200   /* runs per timed block */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "models/lenet.onnx";
    const char *backend = argc > 2 ? argv[2] : "cpu";
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    int rounds = argc > 4 ? atoi(argv[4]) : 50;
    if (rounds < 1)
        rounds = 1;

    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    glow_compile_options co = { .backend = backend, .threads = threads,
                                .stop_after = GLOW_STAGE_COMPILED };
    if (glow_onnx_load(m, path, NULL, &d) != GLOW_OK ||
        glow_program_create(m, &co, &p, &d) != GLOW_OK) {
        fprintf(stderr, "session_overhead: %s\n", d.msg);
        return 1;
    }
    glowc_options *o = glowc_options_create();
    glowc_session *s = NULL;
    if (glowc_options_set_backend(o, backend) != GLOWC_OK ||
        glowc_options_set_threads(o, threads) != GLOWC_OK ||
        glowc_session_create(o, path, &s) != GLOWC_OK) {
        fprintf(stderr, "session_overhead: %s\n", glowc_last_error());
        return 1;
    }
    glowc_options_destroy(o);

    /* Zero inputs of every declared type, as tensors (bare) and values (session). */
    int nin = p->ninputs, nout = glowc_session_output_count(s);
    glow_tensor *ins = calloc((size_t)nin + 1, sizeof *ins);
    glowc_value *vals = calloc((size_t)nin + 1, sizeof *vals);
    glowc_value *outs = calloc((size_t)nout + 1, sizeof *outs);
    for (int i = 0; i < nin; i++) {
        glowc_tensor_info info;
        glowc_session_input_info(s, i, &info);
        if (glow_tensor_alloc(&ins[i], &p->inputs[i]->outs[0], &d) != GLOW_OK)
            return 1;
        vals[i] = (glowc_value){ NULL, info.dtype, info.rank, info.shape, ins[i].data,
                                 info.size_bytes };
    }
    for (int i = 0; i < nout; i++) {
        glowc_tensor_info info;
        glowc_session_output_info(s, i, &info);
        outs[i] = (glowc_value){ NULL, GLOWC_DTYPE_UNDEFINED, 0, NULL, malloc(info.size_bytes),
                                 info.size_bytes };
    }

    double *bare = calloc((size_t)rounds, sizeof *bare);
    double *sess = calloc((size_t)rounds, sizeof *sess);
    double *pool = calloc((size_t)rounds, sizeof *pool);
    for (int w = 0; w < BLOCK; w++) { /* warm both: code, caches, the pool's context */
        glow_program_run(p, ins, nin, &d);
        glowc_session_run(s, vals, nin, outs, nout);
    }
    for (int r = 0; r < rounds; r++) {
        /* Rotate which goes first, so drift in the machine's load hits all alike. */
        for (int third = 0; third < 3; third++) {
            int what = (r + third) % 3;
            double t0 = now_us();
            for (int k = 0; k < BLOCK; k++) {
                bool ok;
                if (what == 0) {
                    ok = glow_program_run(p, ins, nin, &d) == GLOW_OK;
                } else if (what == 1) {
                    ok = glowc_session_run(s, vals, nin, outs, nout) == GLOWC_OK;
                } else {
                    glow_exec *e = NULL;
                    ok = glow_program_acquire(p, &e, &d) == GLOW_OK &&
                         glow_exec_run(e, ins, nin, &d) == GLOW_OK;
                    glow_program_release(p, e);
                }
                if (!ok) {
                    fprintf(stderr, "session_overhead: run failed: %s\n",
                            what == 1 ? glowc_last_error() : d.msg);
                    return 1;
                }
            }
            double per = (now_us() - t0) / BLOCK;
            (what == 0 ? bare : what == 1 ? sess : pool)[r] = per;
        }
    }
    /* Minimums too: on a shared machine the fastest block is the one least disturbed. */
    double mb = median(bare, rounds), ms = median(sess, rounds), mp = median(pool, rounds);
    double nb = bare[0], ns = sess[0], np = pool[0]; /* sorted by median() */
    printf("%s on %s, %d thread%s (%d blocks of %d runs; us/run)\n"
           "                        median   minimum\n"
           "  bare program        %9.2f %9.2f\n"
           "  program, pooled ctx %9.2f %9.2f\n"
           "  session             %9.2f %9.2f\n"
           "  session - bare      %9.2f %9.2f\n"
           "  session - pooled    %9.2f %9.2f   (the API's own cost)\n", path, backend,
           threads, threads == 1 ? "" : "s", rounds, BLOCK, mb, nb, mp, np, ms, ns, ms - mb,
           ns - nb, ms - mp, ns - np);
    for (int i = 0; i < nin; i++)
        glow_tensor_free(&ins[i]);
    for (int i = 0; i < nout; i++)
        free(outs[i].data);
    free(ins);
    free(vals);
    free(outs);
    free(bare);
    free(sess);
    free(pool);
    glowc_session_destroy(s);
    glow_program_destroy(p);
    return 0;
}
