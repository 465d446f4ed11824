// runtime.h - The compile pipeline and compiled programs: load -> lower -> schedule -> IRGen
// -> plan -> backend, and running a program on input tensors.
#ifndef GLOW_RUNTIME_H
#define GLOW_RUNTIME_H

#include <pthread.h>

#include "backend/backend.h"

typedef enum {
    GLOW_STAGE_LOADED,      /* as imported */
    GLOW_STAGE_OPTIMIZED,   /* after the graph optimizer (identity until it exists) */
    GLOW_STAGE_LOWERED,     /* after lowering for the backend, scheduled */
    GLOW_STAGE_IR,          /* IR as generated, memory planned */
    GLOW_STAGE_IR_OPTIMIZED,/* after the IR optimizer, memory planned */
    GLOW_STAGE_COMPILED,    /* handed to the backend */
} glow_stage;

typedef struct glow_compile_options {
    const char *backend;    /* NULL = "interpreter" */
    int threads;            /* 0 = backend default */
    glow_stage stop_after;  /* GLOW_STAGE_COMPILED for a runnable program */
    bool no_optimize;       /* skip the graph optimizer (before and after lowering) */
    /* Optimizer dumps/statistics/verification (NULL: defaults); phase, passes and the fusion
     * hook are set by the pipeline (the hook from the backend). */
    const struct glow_opt_options *optimize;
    bool no_ir_optimize;    /* skip the IR optimizer (the planner still runs) */
    /* IR optimizer dumps/statistics (NULL: defaults). */
    const struct ir_opt_options *ir_optimize;
    /* The code will run on another CPU than this one (a bundle for --target / --mcpu): the
     * backend prepares nothing for the host's vector ISA; target_triple (--target, NULL when
     * only --mcpu is given) says what it may prepare for instead. */
    bool foreign_target;
    const char *target_triple;
    /* The backend keeps every activation in its plain layout (no blocked layouts between
     * kernels): for tests that compare the two. */
    bool plain_layout;
    /* Quantization (src/quant): when set, lowering keeps the nodes the quantizer converts
     * whole (glow_quant_keeps_node) and the optimizer fuses nothing before the quantization
     * point; there the pipeline calls quant_hook(f, quant_ctx) (`glowc profile` instruments
     * the graph, --quantize converts it), then lowers what is left for the backend and runs
     * the after-quantization optimizer. Profiling and quantizing see the same graph at that
     * point whatever the backend, so a profile serves every backend. */
    glow_status (*quant_hook)(glow_function *f, void *ctx, glow_diag *d);
    void *quant_ctx;
    /* The compiled-code cache directory (--cache DIR; NULL: none), for backends that make
     * machine code (glow_codegen_options). */
    const char *cache_dir;
    /* The most bytes the planned regions (constant + mutable + activations) may take; a
     * bigger plan is refused right after planning, before any region is allocated. 0: no
     * limit (the CLI passes the machine's memory unless --max-memory says otherwise). */
    uint64_t max_memory;
    /* Copy the branches of lazy IF nodes back inline (WHERE selects): for bundles, which have
     * no evaluator to run a body in (docs/dynamic-shapes.md). */
    bool inline_control_flow;
} glow_compile_options;

typedef struct glow_exec glow_exec;

typedef struct glow_program {
    glow_module *m;         /* owned */
    glow_function *f;       /* the graph function ("main") */
    ir_function *ir;        /* NULL before GLOW_STAGE_IR */
    const glow_backend *backend;
    void *state;            /* the backend's */
    uint8_t *constant;      /* the constant region, 64-byte aligned, filled; shared by runs */
    glow_exec *exec;        /* the context of glow_program_run */
    pthread_mutex_t lock;   /* guards idle */
    glow_exec *idle;        /* contexts released to the pool, ready for another run */
    int ninputs, noutputs;
    glow_node **inputs;     /* input placeholders, model order */
    glow_node **outputs;    /* output placeholders, model order */
    ir_value **input_vals, **output_vals; /* their weights in the IR (NULL if unused) */
    ir_value **output_counts; /* an output's run-time extent (i64), NULL for static shapes */
    /* What the backend's code generation left resident: growth of this process's anonymous
     * and file-backed RSS over it (the JIT's code and state, the compiler's heap it keeps,
     * the compiler library's pages), 0 when unknown. */
    uint64_t codegen_anon, codegen_file;
} glow_program;

/* Lets the evaluator run the bodies of lazy IF and LOOP nodes (subgraph_run.c); the pipeline
 * calls it, so any compiled program can. */
void glow_subgraph_runner_install(void);

/* Runs the pipeline on `m` (the program takes ownership of m, also on failure) up to
 * opt->stop_after. Fails with GLOW_ERR_UNSUPPORTED listing every instruction kind (with
 * dtypes) the backend cannot run. */
glow_status glow_program_create(glow_module *m, const glow_compile_options *opt,
                                glow_program **out, glow_diag *d);
/* Quantizes a whole module before it is split or placed (the host's partitioned networks,
 * `run --devices --quantize`): *m (owned) is replaced by the graph glow_program_create makes
 * of it up to GLOW_STAGE_LOWERED with opt's quant_hook, lowered for the interpreter (which
 * keeps no node whole, so any backend can take each part). The profile's keys name nodes of
 * the whole graph at the quantization point, so it must apply before the graph is cut; each
 * part then compiles without the hook. On failure *m is NULL. */
glow_status glow_module_quantize(glow_module **m, const glow_compile_options *opt, glow_diag *d);
/* Copies inputs (model order; types must equal the placeholders' - messages name the input
 * and both types) into the mutable region and executes, on the program's own context: one
 * such run at a time per program (concurrent callers take contexts, below). */
glow_status glow_program_run(glow_program *p, const glow_tensor *inputs, int ninputs,
                             glow_diag *d);
/* Output i as a tensor borrowing the program's memory (valid until the next run). */
glow_tensor glow_program_output(const glow_program *p, int i);
/* The mutable region of glow_program_run's context (NULL when not compiled for running):
 * for readers of extra outputs the program does not list (the profiler's). */
uint8_t *glow_program_mutable(const glow_program *p);

/* --- execution contexts: concurrent runs of one compiled program ---
 * A context holds what one run writes: the mutable and activation regions and the backend's
 * per-run state (the cpu backend's thread pool). The compiled code and the constant region
 * are shared and only read, so runs on different contexts of one program may go on at the
 * same time; a context runs one request at a time. */

/* A new context of a compiled program (GLOW_STAGE_COMPILED). */
glow_status glow_exec_create(glow_program *p, glow_exec **out, glow_diag *d);
void glow_exec_destroy(glow_exec *e);
/* Checks and copies the inputs as glow_program_run does, then executes. */
glow_status glow_exec_run(glow_exec *e, const glow_tensor *inputs, int ninputs, glow_diag *d);
/* Where input i's bytes go in the context's mutable region (the placeholder's type), or NULL
 * when the program never reads that input: for callers that fill inputs themselves and then
 * call glow_exec_execute. */
void *glow_exec_input(const glow_exec *e, int i);
/* Executes on the inputs as they are in the context's mutable region. */
glow_status glow_exec_execute(glow_exec *e, glow_diag *d);
/* Output i of the context's last run, borrowing the context's memory. */
glow_tensor glow_exec_output(const glow_exec *e, int i);
/* A context from the program's pool of idle ones, or a new one when none is idle; give it
 * back with glow_program_release. Thread-safe. */
glow_status glow_program_acquire(glow_program *p, glow_exec **out, glow_diag *d);
void glow_program_release(glow_program *p, glow_exec *e);
/* Gives the context glow_program_create made for glow_program_run to the pool, for callers
 * that only run through glow_program_acquire (sessions, the host): the first run takes it
 * instead of allocating and touching a second set of regions. glow_program_run fails after. */
void glow_program_pool_own_context(glow_program *p);
/* The compiled program's instructions its backend runs through the evaluator instead of
 * native code (program order; borrowed from the program): how many, *out pointed at them. */
int glow_program_fallbacks(const glow_program *p, const ir_instr *const **out);
/* True when the backend took the program's machine code from the compiled-code cache
 * (glow_compile_options.cache_dir) instead of generating it. */
bool glow_program_code_cached(const glow_program *p);
/* Bytes of machine code the backend keeps for p (0: none, or not a compiling backend). */
uint64_t glow_program_code_bytes(const glow_program *p);
void glow_program_destroy(glow_program *p);

/* --- program_report.c --- */
/* "<backend> backend: F of N instructions fall back to the evaluator: Kind dtype (count),
 * ..." (and a line when the code came from the cache), for a backend with a fallback. */
void glow_program_report_backend(const glow_program *p, FILE *out);

#endif
