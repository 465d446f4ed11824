// dead_alloc.c - Removes activations nothing uses: an allocactivation / deallocactivation
// pair with no instruction in between naming the buffer (or one of its views).
#include "iropt/iropt_internal.h"

void ir_pass_dead_alloc(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_value *v = f->values; v; v = v->next) {
        const iropt_use *u = &lv.use[v->id];
        if (v->kind != IV_ALLOC || u->nuses || (!u->alloc && !u->dealloc))
            continue;
        if (u->alloc)
            iropt_erase(f, u->alloc);
        if (u->dealloc)
            iropt_erase(f, u->dealloc);
        cx->changes++;
    }
    iropt_live_free(&lv);
}
