// copy_elim.c - Copy elimination: `copy @out D, @in S` becomes a rename when the two buffers
// can be one.
//
// Forward: S (a whole activation) dies at the copy and D's bytes are not touched while S is
// alive: S is renamed into D, so S's producers write straight into D. This is how the final
// Save copy disappears: the producer writes into the output placeholder's weight.
// Backward (copy propagation): D is a whole activation nothing else writes, and S's buffer is
// not written while D is alive: D's readers read S instead (S lives longer).
#include <stdlib.h>

#include "iropt/iropt_internal.h"

/* How a copy went: kept, renamed locally (the analysis is up to date), or renamed by the
 * general path (the analysis must be computed again). */
enum { KEPT, LOCAL, GENERAL };

/* Renames root `from` into `to` and removes the copy c: locally when it can, so a chain of
 * copies costs time linear in its length. */
static int drop_copy(ir_function *f, ir_instr *c, iropt_live *lv, ir_value *from,
                     ir_value *to)
{
    if (iropt_rename_local(f, lv, from, to, 0, c)) {
        ir_instr_unlink(f, c);
        return LOCAL;
    }
    ir_instr_unlink(f, c);
    iropt_replace_root(f, from, to, 0);
    iropt_fix_lifetimes(f);
    return GENERAL;
}

/* S's buffer renamed into D. */
static int forward(ir_function *f, ir_instr *c, iropt_live *lv)
{
    ir_value *dst = c->ops[0].v, *src = c->ops[1].v;
    ir_value *rd = ir_root(dst), *rs = ir_root(src);
    if (rs->kind != IV_ALLOC || rs == rd || !iropt_is_whole(src))
        return KEPT;
    if (glow_type_bytes(&rs->type) != glow_type_bytes(&dst->type))
        return KEPT;
    if (rd->kind == IV_WEIGHT && !rd->is_mutable)
        return KEPT;
    const iropt_use *us = iropt_use_of(lv, rs);
    if (us->last != c || !us->first)
        return KEPT;
    /* D must hold nothing anyone needs from S's first write up to the copy. */
    if (us->first == c || iropt_instr_uses(us->first, rd, -1) ||
        iropt_touched_between(us->first, c, rd, false))
        return KEPT;
    return drop_copy(f, c, lv, rs, dst);
}

/* D's buffer replaced by S's bytes. */
static int backward(ir_function *f, ir_instr *c, iropt_live *lv)
{
    ir_value *dst = c->ops[0].v, *src = c->ops[1].v;
    ir_value *rd = ir_root(dst), *rs = ir_root(src);
    if (rd->kind != IV_ALLOC || rd == rs || !iropt_is_whole(dst))
        return KEPT;
    if (glow_type_bytes(&rd->type) != glow_type_bytes(&src->type))
        return KEPT;
    const iropt_use *ud = iropt_use_of(lv, rd);
    if (ud->nwrites != 1 || ud->first != c)
        return KEPT;
    if (!(rs->kind == IV_WEIGHT && rs->readonly) &&
        iropt_touched_between(c, ud->last->next, rs, true))
        return KEPT;
    return drop_copy(f, c, lv, rd, src);
}

void ir_pass_copy_elim(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = iropt_next(in);
        if (in->kind != IK_COPY || in->nops != 2)
            continue;
        int how = forward(f, in, &lv);
        if (how == KEPT)
            how = backward(f, in, &lv);
        if (how == KEPT)
            continue;
        cx->changes++;
        if (how == GENERAL) {
            iropt_live_free(&lv);
            iropt_live_compute(f, &lv);
        }
    }
    iropt_live_free(&lv);
}
