// subgraph_run.c - Runs the bodies of lazy control-flow nodes (src/graph/subgraph.c) as
// programs of their own on the interpreter: a body is compiled the first time it runs, then
// reused. The interpreter because a body runs through the evaluator's IF/LOOP step in every
// backend (the cpu backend reaches it as an evaluator fallback), and because compiling a body
// that may never run with LLVM would cost more than it saves (docs/dynamic-shapes.md).
#include <string.h>

#include "runtime/runtime.h"

static glow_status run_body(glow_module **m, void **prog, const glow_tensor *ins, int nin,
                            glow_tensor *outs, int nout, glow_diag *d)
{
    if (!*prog) {
        if (!*m)
            return glow_fail(d, GLOW_ERR_INTERNAL, "a control-flow body failed to compile "
                             "earlier");
        glow_compile_options o = { .backend = "interpreter", .stop_after = GLOW_STAGE_COMPILED };
        glow_program *p = NULL;
        glow_module *body = *m;
        *m = NULL;   /* the program owns it now, also on failure */
        GLOW_TRY(glow_program_create(body, &o, &p, d));
        *prog = p;
    }
    glow_program *p = *prog;
    GLOW_TRY(glow_program_run(p, ins, nin, d));
    if (p->noutputs != nout)
        return glow_fail(d, GLOW_ERR_INTERNAL, "a control-flow body gives %d outputs, %d "
                         "expected", p->noutputs, nout);
    for (int i = 0; i < nout; i++) {
        glow_tensor t = glow_program_output(p, i);
        if (t.type.dtype != outs[i].type.dtype ||
            glow_type_numel(&t.type) != glow_type_numel(&outs[i].type)) {
            char a[96], b[96];
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "control-flow body output %d is %s, the node "
                             "expects %s", i, glow_type_str(&t.type, a, sizeof a),
                             glow_type_str(&outs[i].type, b, sizeof b));
        }
        memcpy(outs[i].data, t.data, glow_type_bytes(&t.type));
    }
    return GLOW_OK;
}

static void release_body(void *prog) { glow_program_destroy(prog); }

static void install(void) { glow_subgraph_set_runner(run_body, release_body); }

void glow_subgraph_runner_install(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
}
