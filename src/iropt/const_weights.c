// const_weights.c - Marks weights that no instruction writes as read-only (Glow's
// makeWeightsConst), so views and copy propagation may alias them for any length of time.
//
// Constants are read-only by construction. A placeholder the program never writes (every
// input, and an output nothing saves) is read-only too; it stays in the mutable region, which
// is where the runtime puts the inputs before each run.
#include "iropt/iropt_internal.h"

void ir_pass_const_weights(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT)
            continue;
        bool ro = lv.use[v->id].nwrites == 0;
        if (ro != v->readonly) {
            v->readonly = ro;
            cx->changes++;
        }
    }
    iropt_live_free(&lv);
}
