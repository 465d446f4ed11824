// shrink_lifetimes.c - Sinks every allocactivation to just before the buffer's first use and
// hoists every deallocactivation to just after its last use, so lifetimes are as short as the
// program allows and the planner can reuse memory as early as possible.
#include "iropt/iropt_internal.h"

/* True when only lifetime markers lie between a and b (a before b). */
static bool only_markers_between(const ir_instr *a, const ir_instr *b)
{
    for (const ir_instr *in = a->next; in && in != b; in = in->next)
        if (!iropt_is_marker(in))
            return false;
    return true;
}

void ir_pass_shrink_lifetimes(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_value *v = f->values; v; v = v->next) {
        const iropt_use *u = &lv.use[v->id];
        if (v->kind != IV_ALLOC || !u->first)
            continue;
        if (u->alloc && !only_markers_between(u->alloc, u->first)) {
            ir_instr_unlink(f, u->alloc);
            ir_instr_insert_before(f, u->first, u->alloc);
            cx->changes++;
        }
        if (u->dealloc && !only_markers_between(u->last, u->dealloc)) {
            ir_instr_unlink(f, u->dealloc);
            ir_instr_insert_before(f, u->last->next, u->dealloc);
            cx->changes++;
        }
    }
    iropt_live_free(&lv);
}
