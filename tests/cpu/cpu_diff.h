// cpu_diff.h - The harness of the cpu backend's differential kernel tests
// (tests/cpu/test_cpu_kernels*.c): a case builds a small graph from a seed with random inputs
// and constants of any element type; diff() compiles it for the interpreter and for the cpu
// backend at 1 and 2 threads, runs the three and compares output 0 (floats within a relative
// tolerance, everything else exactly; the two thread counts always bit-identical), and records
// which kernels.def rows the generated code called and how many instructions fell back.
//
// Each test program includes this header once (its state is static) and ends main() with
// kernel_tests_run(), which also answers `--list` for tests/kernels/test_kernel_rows.
#ifndef GLOW_TESTS_CPU_DIFF_H
#define GLOW_TESTS_CPU_DIFF_H

#include "check.h"
#include "kernels/kernel_rows.h"
#include "backend/cpu/cpu_llvm.h"
#include "runtime/runtime.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;
static uint64_t rng_state;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static inline uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}
static inline int64_t rint_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1));
}
static inline float rfloat(void) { return (float)((int)(rnd() % 2001) - 1000) / 500.0f; }

/* n random elements of type t: floats in [-2, 2], signed integers in [-50, 50], unsigned in
 * [0, 100], bools 0/1 (small integers, so integer arithmetic and casts stay exact). */
static inline void *rand_typed(glow_dtype t, int64_t n)
{
    void *p = calloc((size_t)(n > 0 ? n : 1), glow_dtype_size(t));
    for (int64_t i = 0; i < n; i++) {
        switch (glow_dtype_class_of(t)) {
        case DC_FLOAT: glow_store_f64(t, p, (size_t)i, rfloat()); break;
        case DC_SINT: glow_store_i64(t, p, (size_t)i, rint_in(-50, 50)); break;
        case DC_UINT: glow_store_i64(t, p, (size_t)i, rint_in(0, 100)); break;
        case DC_BOOL: glow_store_i64(t, p, (size_t)i, rnd() % 2); break;
        default: break;
        }
    }
    return p;
}

static inline float *rand_data(int64_t n) { return rand_typed(GLOW_F32, n); }

/* --- graph building (one module per compile: programs consume their module) --- */

#define MAX_IN 4
static glow_tensor inputs[MAX_IN];
static int ninputs;

static inline glow_value input_t(const char *name, glow_dtype t, int rank,
                                 const int64_t *dims)
{
    glow_type ty = glow_type_make(t, rank, dims);
    if (ninputs < MAX_IN) {
        glow_tensor_alloc(&inputs[ninputs], &ty, &D);
        void *data = rand_typed(t, glow_type_numel(&ty));
        memcpy(inputs[ninputs].data, data, glow_type_bytes(&ty));
        free(data);
        ninputs++;
    }
    return glow_val(glow_placeholder_create(M, name, &ty, true), 0);
}

static inline glow_value input(const char *name, int rank, const int64_t *dims)
{
    return input_t(name, GLOW_F32, rank, dims);
}

static inline glow_value cst_t(glow_dtype t, int rank, const int64_t *dims)
{
    static int count;
    char name[32];
    snprintf(name, sizeof name, "w%d", count++);
    glow_type ty = glow_type_make(t, rank, dims);
    void *data = rand_typed(t, glow_type_numel(&ty));
    glow_value v = glow_val(glow_constant_create(M, name, &ty, data), 0);
    free(data);
    return v;
}

static inline glow_value cst(int rank, const int64_t *dims)
{
    return cst_t(GLOW_F32, rank, dims);
}

/* Node k over ins; exits on a build error (a broken case, not a backend failure). */
static inline glow_value node_n(glow_node_kind k, const glow_value *ins, int nin,
                                const glow_attr *attrs, int nattr, int nout)
{
    glow_node *n = glow_build(F, k, glow_node_kind_name(k), ins, nin, attrs, nattr, NULL, nout,
                              &D);
    if (!n) {
        fprintf(stderr, "build %s: %s\n", glow_node_kind_name(k), D.msg);
        exit(1);
    }
    return glow_val(n, 0);
}

static inline glow_value node(glow_node_kind k, const glow_value *ins, int nin,
                              const glow_attr *attrs, int nattr)
{
    return node_n(k, ins, nin, attrs, nattr, k == NK_MAX_POOL ? 1 : 0);
}

static inline void output(glow_value v)
{
    glow_node *ph = glow_placeholder_create(M, "y", glow_value_type(v), false);
    glow_save_create(F, "y", v, ph);
}

/* A case builds M/F from the seed; it is built once per backend/thread count. */
typedef void (*case_fn)(void);

static inline void build(case_fn fn, uint64_t seed)
{
    for (int i = 0; i < ninputs; i++)
        glow_tensor_free(&inputs[i]);
    ninputs = 0;
    rng_state = seed;
    M = glow_module_create();
    F = glow_function_create(M, "main");
    fn();
}

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
    glow_dtype dt = t0.dtype;
    size_t es = glow_dtype_size(dt);
    int bad = 0;
    for (int64_t i = 0; i < glow_type_numel(&t0) && bad < 3; i++) {
        double a = glow_load_f64(dt, ref, (size_t)i), b = glow_load_f64(dt, c1, (size_t)i);
        bool same;
        if (glow_dtype_is_float(dt))
            same = (a != a && b != b) || fabs(a - b) <= rel_tol * (fabs(a) > 1 ? fabs(a) : 1);
        else
            same = memcmp(ref + (size_t)i * es, c1 + (size_t)i * es, es) == 0;
        if (!same) {
            fprintf(stderr, "%s (seed %llu): [%lld] cpu %.9g, interpreter %.9g\n", what,
                    (unsigned long long)seed, (long long)i, b, a);
            bad++;
        }
        if (memcmp(c1 + (size_t)i * es, c2 + (size_t)i * es, es) != 0 && bad < 3) {
            fprintf(stderr, "%s (seed %llu): [%lld] 1 thread %.9g, 2 threads %.9g\n", what,
                    (unsigned long long)seed, (long long)i, b,
                    glow_load_f64(dt, c2, (size_t)i));
            bad++;
        }
    }
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

static inline void free_inputs(void)
{
    for (int i = 0; i < ninputs; i++)
        glow_tensor_free(&inputs[i]);
    ninputs = 0;
}

#endif
