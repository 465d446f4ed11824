// partition_support.c - Which backend can run a graph node, asked of the backend itself: the
// node alone goes through the pipeline for that backend (lowering, IRGen, IR optimizer, the
// backend's prepare step) and every instruction through the backend's supports hook, the check
// glow_program_create makes on a whole program.
//
// For cpu and interpreter the answer is the same today: the cpu backend runs its own kernels
// and hands everything else to the evaluator the interpreter runs, so it supports a superset.
// The check is there for backends that differ, and so the partitioner never guesses.
#include <string.h>

#include "runtime/partition_internal.h"

/* Operands this small stay constants (lowering may want their values: shapes, pads, scales);
 * larger ones become placeholders, so asking costs no copy of a model's big weights. */
#define SMALL_CONSTANT 65536

bool glow_partition_backend_supports(const glow_node *n, const char *backend, void *ctx)
{
    (void)ctx;
    if (n->kind == NK_SAVE || !n->fn)
        return true;
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_value ins[64];
    if (n->nin > 64) {
        glow_module_destroy(m);
        return true; /* no node kind has that many operands; the real compile will tell */
    }
    for (uint32_t k = 0; k < n->nin; k++) {
        const glow_node *o = n->ins[k].node;
        const glow_type *t = glow_value_type(n->ins[k]);
        glow_node *c = NULL;
        if (o->kind == NK_CONSTANT && glow_type_bytes(t) <= SMALL_CONSTANT)
            c = glow_constant_create(m, o->name, t, o->payload.data);
        else
            c = glow_placeholder_create(m, o->name, t, true);
        ins[k] = glow_val(c, 0);
    }
    glow_node *c = glow_node_create(f, n->kind, n->name, ins, (int)n->nin, n->outs,
                                    (int)n->nout);
    pt_copy_attrs(c, n);
    for (uint32_t r = 0; r < n->nout; r++) {
        glow_node *ph = glow_placeholder_create(m, "out", &n->outs[r], false);
        glow_save_create(f, "save", glow_val(c, r), ph);
    }
    glow_compile_options copt = { .backend = backend, .stop_after = GLOW_STAGE_IR_OPTIMIZED,
                                  .no_optimize = true };
    glow_program *p = NULL;
    glow_diag d = { 0 };
    glow_status st = glow_program_create(m, &copt, &p, &d);
    /* A failure other than "unsupported" says nothing about the backend (the node alone may
     * not compile where it would in its graph): leave the decision to the real compile. */
    bool ok = st != GLOW_ERR_UNSUPPORTED;
    for (const ir_instr *in = p && p->ir ? p->ir->first : NULL; in && ok; in = in->next) {
        char why[128];
        ok = p->backend->supports(in, why, sizeof why);
    }
    glow_program_destroy(p);
    return ok;
}
