// backend.h - What a backend gives the compile pipeline: lowering preferences, a capability
// check per instruction, compilation of an IR function, and execution over three regions.
#ifndef GLOW_BACKEND_H
#define GLOW_BACKEND_H

#include "ir/ir.h"

typedef struct glow_backend glow_backend;

struct glow_backend {
    const char *name;
    /* True when lowering should leave node n whole because the backend runs it directly. */
    bool (*keeps_node)(const glow_node *n);
    /* True when the backend can execute `in`; otherwise writes a short reason such as
     * "Conv on f16" into why. */
    bool (*supports)(const ir_instr *in, char *why, size_t whylen);
    /* Prepares `f` (memory already planned) for execution; *state is the backend's. */
    glow_status (*compile)(ir_function *f, int threads, void **state, glow_diag *d);
    /* Runs the program once over the three regions (constant weights, mutable weights,
     * activations), laid out as the plan in f says. */
    glow_status (*execute)(void *state, uint8_t *constant, uint8_t *mutable_, uint8_t *act,
                           glow_diag *d);
    void (*destroy)(void *state);
    /* Optional (NULL: none): true when the backend wants activation `act` fused into its
     * producer (the graph optimizer's fuse_activation pass, glow_fuse_act_fn in opt/opt.h). */
    bool (*fuse_activation)(const glow_node *producer, const glow_node *act);
    /* Optional (NULL: none): called after the IR optimizer and before memory planning; may add
     * constants (repacked weights) and scratch activations (alloc/dealloc pairs) for its
     * kernels, keep activations in its own layouts (ir_value.blocked), fuse instructions
     * and mark weights it no longer reads (ir_value.unplaced). Such a function is the
     * backend's own: the verifier still accepts it, the evaluator no longer runs it.
     * `host` is false when the code is for another CPU (a cross-compiled bundle): then no
     * host vector ISA may be assumed. */
    glow_status (*prepare)(ir_function *f, bool host, glow_diag *d);
};

/* "interpreter" (and later "cpu"); NULL when unknown. */
const glow_backend *glow_backend_find(const char *name);
/* Comma-separated list of backend names, for --help and errors. */
const char *glow_backend_names(void);

/* --- interp/interp.c --- */
extern const glow_backend glow_interpreter_backend;
/* Runs one node-mirroring instruction through the evaluator over the three regions: the
 * interpreter's execution step, also the cpu backend's fallback for instructions it has no
 * kernel for. */
glow_status glow_interp_run_node(const ir_instr *in, uint8_t *constant, uint8_t *mutable_,
                                 uint8_t *act, glow_diag *d);

/* --- cpu/cpu.c --- */
extern const glow_backend glow_cpu_backend;
/* The optimized LLVM IR the cpu backend generates for f (memory planned); *text is malloc'd. */
glow_status glow_cpu_llvm_ir(ir_function *f, char **text, glow_diag *d);

#endif
