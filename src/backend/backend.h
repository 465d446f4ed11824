// backend.h - What a backend gives the compile pipeline: lowering preferences, a capability
// check per instruction, compilation of an IR function, and execution over three regions.
#ifndef GLOW_BACKEND_H
#define GLOW_BACKEND_H

#include "ir/ir.h"

typedef struct glow_backend glow_backend;

typedef struct glow_prepare_options {
    /* False when the code is for another CPU (a cross-compiled bundle): then no host vector
     * ISA may be assumed. */
    bool host;
    /* When !host: the target's triple (NULL: the host's triple with another CPU); an aarch64
     * triple gets its NEON kernels. */
    const char *triple;
    /* Keep every activation in its plain layout (tests compare the layouts). */
    bool plain_layout;
} glow_prepare_options;

/* What compile() is asked for beside the function. */
typedef struct glow_codegen_options {
    int threads;            /* 0 = the backend's default */
    /* A compiled-code cache directory (NULL: none): a backend that generates machine code
     * looks its code up there and stores it there (docs/cpu-backend.md, "Compiled-code
     * cache"). */
    const char *cache_dir;
} glow_codegen_options;

struct glow_backend {
    const char *name;
    /* Optional (NULL: none): true when lowering should leave node n whole, though lowering's
     * own rules (src/lower/lower.c) would lower it, because the backend runs it directly. */
    bool (*keeps_node)(const glow_node *n);
    /* True when the backend can execute `in`; otherwise writes a short reason such as
     * "Conv on f16" into why. */
    bool (*supports)(const ir_instr *in, char *why, size_t whylen);
    /* Prepares `f` (memory already planned) for execution; *state is the backend's. */
    glow_status (*compile)(ir_function *f, const glow_codegen_options *o, void **state,
                           glow_diag *d);
    /* Optional (NULL: never): true when compile() took the code from the cache. */
    bool (*code_cached)(const void *state);
    /* Optional (NULL: the backend keeps nothing per run): what one run needs of its own
     * beside its regions (the cpu backend's thread pool), so that runs on different contexts
     * can go on at the same time over one compiled state. *ctx is the backend's. */
    glow_status (*context_create)(void *state, void **ctx, glow_diag *d);
    void (*context_destroy)(void *state, void *ctx);
    /* Runs the program once over the three regions (constant weights, mutable weights,
     * activations), laid out as the plan in f says, with a context from context_create
     * (NULL when the backend has none). Reentrant: calls with different contexts and
     * regions may run at the same time; the state and the constant region are only read. */
    glow_status (*execute)(void *state, void *ctx, uint8_t *constant, uint8_t *mutable_,
                           uint8_t *act, glow_diag *d);
    void (*destroy)(void *state);
    /* Optional (NULL: none): true when the backend wants activation `act` fused into its
     * producer (the graph optimizer's fuse_activation pass, glow_fuse_act_fn in opt/opt.h). */
    bool (*fuse_activation)(const glow_node *producer, const glow_node *act);
    /* Optional (NULL: none): called after the IR optimizer and before memory planning; may
     * replace instructions by the backend's own kinds (ir/instrs.def), add constants
     * (repacked weights) and scratch activations (alloc/dealloc pairs) as their operands,
     * retype activations it keeps in its own layouts and fuse instructions. Weights no
     * instruction reads any more get no memory (the planner's ir_value.unused). Such a
     * function is the backend's own: the verifier still accepts it, the evaluator no longer
     * runs all of it. */
    glow_status (*prepare)(ir_function *f, const glow_prepare_options *o, glow_diag *d);
    /* Optional (NULL: every instruction runs natively): the compiled program's instructions
     * that the backend hands to the evaluator, in program order; points *out at them (the
     * state's) and returns how many. */
    int (*fallbacks)(const void *state, const ir_instr *const **out);
    /* Optional (NULL: none): bytes of machine code the backend made and keeps (the cpu
     * backend's object code, linked into its JIT). */
    uint64_t (*code_bytes)(const void *state);
};

/* --- backend.c: what every backend needs --- */

/* "interpreter" or "cpu"; NULL when unknown. */
const glow_backend *glow_backend_find(const char *name);
/* Comma-separated list of backend names, for --help and errors. */
const char *glow_backend_names(void);

/* The three memory regions of a run (constant weights, mutable weights, activations). */
typedef struct glow_regions {
    uint8_t *constant, *mutable_, *act;
} glow_regions;

/* The region a value's bytes live in: its root's (activations, placeholders, constants). */
typedef enum { GLOW_REGION_CONSTANT, GLOW_REGION_MUTABLE, GLOW_REGION_ACT } glow_region;
glow_region glow_value_region(const ir_value *v);
/* Where a value's bytes are: its root's region plus the value's address (a view's address
 * already includes its offset into the base). */
void *glow_value_ptr(const glow_regions *r, const ir_value *v);
/* The evaluator can run `in` (a node-mirroring instruction of types it knows, or a
 * lifetime marker or copy); otherwise writes a short reason such as "Conv on f16". */
bool glow_backend_eval_supports(const ir_instr *in, char *why, size_t whylen);
/* Runs a copy, lifetime marker or node-mirroring instruction as the interpreter does: a
 * copy moves bytes, a node runs through the evaluator over tensors borrowing region memory.
 * `who` names the backend in messages. */
glow_status glow_backend_eval_run(const ir_instr *in, const glow_regions *r, const char *who,
                                glow_diag *d);

/* --- interp/interp.c --- */
extern const glow_backend glow_interpreter_backend;

/* --- cpu/cpu.c --- */
extern const glow_backend glow_cpu_backend;
/* The optimized LLVM IR the cpu backend generates for f (memory planned); *text is malloc'd. */
glow_status glow_cpu_llvm_ir(ir_function *f, char **text, glow_diag *d);

#endif
