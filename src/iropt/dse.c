// dse.c - Dead-store elimination: an instruction whose every result is an activation that no
// later instruction reads is removed. Walking backwards finds whole dead chains in one run.
//
// Writes to placeholders (the outputs) are never dead. "Read later" is per buffer, not per
// byte, which keeps the pass conservative when a buffer holds several values (in place).
#include <stdlib.h>

#include "iropt/iropt_internal.h"

void ir_pass_dse(iropt_cx *cx)
{
    ir_function *f = cx->f;
    bool *read_later = glow_xcalloc(f->next_id ? f->next_id : 1, sizeof(bool));
    for (ir_instr *in = f->last, *prev; in; in = prev) {
        prev = in->prev;
        if (iropt_is_marker(in))
            continue;
        bool dead = in->nops > 0;
        for (uint32_t i = 0; i < in->nops && dead; i++) {
            const ir_operand *op = &in->ops[i];
            ir_value *r = ir_root(op->v);
            if (op->role != 'i' && (r->kind != IV_ALLOC || read_later[r->id]))
                dead = false;
        }
        /* An instruction with no result at all is kept: it exists for a reason this pass
         * does not know. */
        bool writes = false;
        for (uint32_t i = 0; i < in->nops; i++)
            writes |= in->ops[i].role != 'i';
        if (dead && writes) {
            iropt_erase(f, in);
            cx->changes++;
            continue;
        }
        for (uint32_t i = 0; i < in->nops; i++)
            if (in->ops[i].role != 'o')
                read_later[ir_root(in->ops[i].v)->id] = true;
    }
    free(read_later);
}
