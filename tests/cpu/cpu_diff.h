// cpu_diff.h - The harness of the cpu backend's differential kernel tests
// (tests/cpu/test_cpu_kernels*.c): a case builds a small graph from a seed with random inputs
// and constants of any element type; diff() compiles it for the interpreter and for the cpu
// backend at 1 and 2 threads, runs the three and compares output 0 (floats within a relative
// tolerance, everything else exactly; the two thread counts always bit-identical), and records
// which kernels.def rows the generated code called and how many instructions fell back.
//
// The cases' graphs, random inputs and constants are testlib/rand_graph.h's, the comparisons
// testlib/compare.h's. Each test program includes this header once (its state is static) and
// ends main() with kernel_tests_run(), which also answers `--list` for
// tests/kernels/test_kernel_rows.
#ifndef GLOW_TESTS_CPU_DIFF_H
#define GLOW_TESTS_CPU_DIFF_H

#include "check.h"
#include "kernels/kernel_rows.h"
#include "backend/cpu/cpu_llvm.h"
#include "runtime/runtime.h"
#include "testlib/compare.h"
#include "testlib/rand_graph.h"

static int chains;   /* fused elementwise loops in the last cpu plan */
static int barriers; /* its barriers */
static bool plan_serial; /* it runs every step on thread 0 (cpu_plan.serial) */
static bool called[GK_NROWS]; /* rows whose kernel a cpu plan called */

/* Compiles and runs; returns a malloc'd copy of output 0 and its type (NULL on failure;
 * *fallbacks is set once the compile succeeded, even when the run fails). */
static inline void *run(case_fn fn, uint64_t seed, const char *backend, int threads,
                        glow_type *ty, int *fallbacks)
{
    build(fn, seed);
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .threads = threads,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_diag_clear(&D);
    if (glow_program_create(M, &o, &p, &D) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", backend, D.msg);
        glow_program_destroy(p);
        return NULL;
    }
    if (fallbacks && !strcmp(backend, "cpu")) {
        /* The plan the backend generated code from: its operations name their kernels.def
         * rows (cpu_kernel follows the rows' order). */
        cpu_isa isa;
        cpu_host_isa(&isa);
        cpu_plan plan;
        if (cpu_schedule(p->ir, &isa, &plan, &D) == GLOW_OK) {
            *fallbacks = plan.nfallback;
            chains = barriers = 0;
            plan_serial = plan.serial;
            for (int i = 0; i < plan.nsteps; i++) {
                chains += plan.steps[i].kind == CPU_STEP_RUN && plan.steps[i].chain;
                barriers += plan.steps[i].kind == CPU_STEP_BARRIER;
            }
            for (int i = 0; i < plan.nops; i++)
                if ((int)plan.ops[i].k < GK_NROWS)
                    called[plan.ops[i].k] = true;
            cpu_plan_free(&plan);
        }
    }
    if (glow_program_run(p, inputs, ninputs, &D) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", backend, D.msg);
        glow_program_destroy(p);
        return NULL;
    }
    glow_tensor t = glow_program_output(p, 0);
    *ty = t.type;
    size_t bytes = glow_type_bytes(&t.type);
    void *out = malloc(bytes ? bytes : 1);
    memcpy(out, t.data, bytes);
    glow_program_destroy(p);
    return out;
}

/* cpu (1 and 2 threads) against the interpreter: floats within rel_tol (NaN matches NaN),
 * other element types exactly; the two thread counts bit-identical; no fallback when
 * kernel_only. */
static inline void diff(const char *what, case_fn fn, uint64_t seed, double rel_tol,
                        bool kernel_only)
{
    glow_type t0, t1, t2;
    int fb = -1;
    uint8_t *ref = run(fn, seed, "interpreter", 1, &t0, NULL);
    uint8_t *c1 = run(fn, seed, "cpu", 1, &t1, &fb);
    uint8_t *c2 = run(fn, seed, "cpu", 2, &t2, NULL);
    CHECK(ref && c1 && c2);
    if (!ref || !c1 || !c2)
        goto done;
    CHECK(glow_type_equal(&t0, &t1));
    CHECK(glow_type_equal(&t1, &t2));
    if (!glow_type_equal(&t0, &t1) || !glow_type_equal(&t1, &t2))
        goto done;
    if (kernel_only && fb != 0) {
        fprintf(stderr, "%s (seed %llu): %d instructions fell back\n", what,
                (unsigned long long)seed, fb);
        CHECK(false);
    }
    char what_seed[256];
    snprintf(what_seed, sizeof what_seed, "%s (seed %llu)", what, (unsigned long long)seed);
    cmp_spec near = { what_seed, "cpu", "interpreter", rel_tol, 1, true, 3 };
    cmp_spec bits = { what_seed, "2 threads", "1 thread", 0, 0, false, 3 };
    int bad = compare_close(&near, t0.dtype, c1, ref, glow_type_numel(&t0));
    bad += compare_bits(&bits, t0.dtype, c2, c1, glow_type_numel(&t0));
    CHECK(bad == 0);
done:
    free(ref);
    free(c1);
    free(c2);
}

/* Fails the row when no generated module called its kernel: the cases did not reach it. */
static inline void check_called(const gk_row *row)
{
    if (!called[row - gk_rows]) {
        fprintf(stderr, "%s: no case called it\n", row->name);
        CHECK(false);
    }
}

/* Random trials per case: fewer under the sanitizers, where each JIT compile is slow
 * (GLOWC_CPU_TEST_TRIALS overrides). */
static int trials;

static inline void set_trials(void)
{
    const char *san = getenv("GLOWC_CPU_TEST_TRIALS");
    trials = san ? atoi(san) : 4;
#ifdef GLOWC_SANITIZE
    if (!san)
        trials = 1;
#endif
}

#endif
