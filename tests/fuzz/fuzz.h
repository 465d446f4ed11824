// fuzz.h - The differential runner (glowc-fuzz-diff): runs a model folder (model.onnx,
// input_<i>.pb) through glowc's backends, each in a child process, compares their outputs,
// and reduces a failing generated model to a small one (reduce.c).
#ifndef GLOW_FUZZ_H
#define GLOW_FUZZ_H

#include <stdbool.h>

#include "fuzz/gen.h"
#include "graph/graph.h"

/* The ways a model runs: `glowc run` on the interpreter, on the cpu backend with 1 and 2
 * threads, and as a cpu backend AOT bundle linked to tests/bundle/node_driver.c. */
typedef enum { FB_INTERP, FB_CPU1, FB_CPU2, FB_BUNDLE, FB_COUNT } fuzz_backend;

extern const char *const fuzz_backend_names[FB_COUNT];

/* What a seed did. */
typedef enum {
    FV_PASS,      /* every backend ran and agreed */
    FV_REFUSED,   /* every backend refused it with a clean error: a generator bug */
    FV_MISMATCH,  /* outputs differ beyond the tolerance */
    FV_CRASH,     /* a backend died on a signal or hung */
    FV_ERROR,     /* a backend failed with an error where another ran */
    FV_ROUNDING,  /* outputs differ beyond the tolerance, but the float64 reference explains
                   * it as amplified float32 rounding (fuzz_explain): not a failure */
    FV_COUNT
} fuzz_verdict;

extern const char *const fuzz_verdict_names[];

typedef struct fuzz_outcome {
    fuzz_verdict verdict;
    fuzz_backend culprit;   /* the backend that differed, crashed or failed */
    bool bundle_skipped;    /* the bundle was refused for instructions without a kernel */
    bool code_shared;       /* the 2-thread run ran the 1-thread run's code (share_code) */
    char msg[800];          /* what happened, one line */
} fuzz_outcome;

typedef struct fuzz_config {
    const char *glowc;      /* the glowc binary */
    const char *driver_obj; /* node_driver.o, compiled once (fuzz_driver_init) */
    int timeout_s;          /* per child process */
    bool verbose;
    bool parallel;          /* run the interpreter and cpu runs of a model side by side */
    /* The 2-thread run takes the 1-thread run's machine code from the compiled-code cache
     * (GLOWC_CPU_PARTS=1: the program a 1-core host compiles for 2 threads) instead of a
     * second LLVM compile in 2 parts; the two compiles are most of a seed's time. */
    bool share_code;
    /* Test-only (--perturb-cpu X): element 0 of every output of the cpu runs and the bundle
     * moves by X * (|v| + rms), a deliberately wrong result the rounding rule must not
     * explain away. 0: off. */
    double perturb;
} fuzz_config;

/* Compiles tests/bundle/node_driver.c (under source) into dir/node_driver.o for the bundle
 * runs; false with a message when it cannot. */
bool fuzz_driver_init(fuzz_config *c, const char *source, const char *dir);

/* Runs the model in dir (with nin inputs) on each backend whose bit is set in `which`
 * (1 << FB_...) and compares every output with the first backend's that ran, within
 * rel_tol * (|ref| + rms(ref)) per element (NaN equals NaN, Inf equals Inf). */
fuzz_outcome fuzz_check_dir(const fuzz_config *c, const char *dir, int nin, unsigned which,
                            double rel_tol);

/* The tolerance for a model whose deepest output is `depth` ops from an input, times
 * fuzz_tolerance_scale (--tolerance-scale; 0 asks for bit-identical outputs). */
double fuzz_tolerance(int depth);
extern double fuzz_tolerance_scale;

/* --- explain.c --- */
/* The RMS of a tensor's finite elements (what the runner's tolerance scales with). */
double fuzz_rms(const glow_tensor *x);

/* How a cpu result and the interpreter's differ, against the float64 reference, over the
 * elements where they disagree beyond the tolerance. */
typedef struct fuzz_figures {
    long long count, differ;  /* elements; those where cpu and interpreter disagree */
    long long unexplained;    /* of those, where the rule does not hold */
    double d, e_interp, e_cpu; /* the largest |cpu - interp|, |interp - ref|, |cpu - ref| */
    double noise;             /* the largest |noisy ref - ref| */
    double k;                 /* the smallest multiple of the noise that explains them all */
    double rms;               /* of the reference */
} fuzz_figures;

/* How many times the noisy references' distance a backend may be from the reference. */
#define FUZZ_ROUNDING_K 4.0
/* How many noisy references a disagreement runs (GLOWC_EVAL_REFERENCE=noise:1..N). */
#define FUZZ_NOISY_RUNS 4

/* Whether the disagreement of cpu with interp (same type) is amplified rounding: at every
 * element where they differ beyond rel_tol * (|interp| + rms(interp)), both are within
 * FUZZ_ROUNDING_K * s + rel_tol * (|ref| + rms(ref)) of the reference ref, s the largest
 * distance of the nnoisy noisy references from it there. Fills f either way (false also when
 * the types differ). */
bool fuzz_explain(const glow_tensor *interp, const glow_tensor *cpu, const glow_tensor *ref,
                  const glow_tensor *noisy, int nnoisy, double rel_tol, fuzz_figures *f);
/* The figures as one line for the seed's report. */
void fuzz_figures_str(const fuzz_figures *f, char *buf, size_t n);

/* --- reduce.c --- */

/* Whether g still fails the way that matters (same verdict and culprit). */
typedef bool (*fuzz_pred)(const gen_graph *g, void *ctx);

/* Delta debugging over g's nodes: removes chunks of nodes (halving the chunk down to single
 * nodes) while `fails` holds, reconnecting a removed node's consumers to one of its inputs of
 * the same shape or else turning its output into a graph input; stops when no single node can
 * go. Returns the smallest failing graph found (a clone; g is not changed). */
gen_graph *fuzz_reduce(const gen_graph *g, fuzz_pred fails, void *ctx, int *tests_run);

#endif
