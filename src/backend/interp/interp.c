// interp.c - The reference interpreter backend: walks the IR program and runs each instruction
// with the reference evaluator's routines, on buffers inside the three memory regions.
//
// The interpreter is the correctness oracle the other backends are checked against, so it
// adds no kernels of its own: a node-mirroring instruction becomes a temporary graph node
// (kind, name, attributes, result types) and its operands become tensors borrowing region
// memory, and glow_eval_node_into computes the results in place (glow_backend_eval_run, shared
// with the cpu backend's fallback). Nothing is prepared at compile time; allocactivation/
// deallocactivation only mark lifetimes the planner already turned into addresses. It keeps
// no node beyond lowering's rules: everything lowerable is lowered.
#include <stdlib.h>

#include "backend/backend.h"
#include "eval/eval.h"

typedef struct interp_state {
    ir_function *f;
} interp_state;

static glow_status interp_compile(ir_function *f, const glow_codegen_options *o, void **state,
                                  glow_diag *d)
{
    interp_state *s = glow_xcalloc(1, sizeof(*s));
    s->f = f;
    *state = s;
    return GLOW_OK;
}

/* Reentrant: the walk only reads the IR, and the evaluator keeps its temporaries on the
 * stack or in the run's own regions. */
static glow_status interp_execute(void *state, void *ctx, uint8_t *constant, uint8_t *mutable_,
                                  uint8_t *act, glow_diag *d)
{
    interp_state *s = state;
    glow_regions r = { constant, mutable_, act };
    for (const ir_instr *in = s->f->first; in; in = in->next)
        GLOW_TRY(glow_backend_eval_run(in, &r, "interpreter", d));
    return GLOW_OK;
}

static void interp_destroy(void *state) { free(state); }

const glow_backend glow_interpreter_backend = {
    .name = "interpreter",
    .keeps_node = NULL,
    .supports = glow_backend_eval_supports,
    .compile = interp_compile,
    .execute = interp_execute,
    .destroy = interp_destroy,
};
