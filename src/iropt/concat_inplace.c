// concat_inplace.c - Concat in place: each operand's producer writes straight into its slice
// of the Concat result, and the Concat instruction disappears.
//
// The slices must be contiguous blocks of the result: every dim before the concat axis has
// size 1 (concat on the outermost non-1 dim, e.g. channels at batch 1); then operand k's
// block starts at the summed byte sizes of operands 0..k-1. An operand whose buffer can move
// there (a whole activation dying at the Concat, not used twice by it) is renamed into a view
// of the result, whose allocation moves up to its first producer. Other operands (weights,
// buffers read later) get a plain copy into their block.
#include <stdlib.h>

#include "iropt/iropt_internal.h"

static bool contiguous_blocks(const ir_instr *in)
{
    const glow_type *y = &in->ops[0].v->type;
    const glow_attr *ax = iropt_attr(in, GA_AXIS);
    int64_t axis = ax ? ax->v.i : 0;
    if (axis < 0)
        axis += y->rank;
    if (axis < 0 || axis >= y->rank)
        return false;
    for (int64_t i = 0; i < axis; i++)
        if (y->dims[i] != 1)
            return false;
    uint64_t sum = 0;
    for (uint32_t i = in->nout; i < in->nops; i++) {
        if (in->ops[i].v->type.dtype != y->dtype)
            return false;
        sum += glow_type_bytes(&in->ops[i].v->type);
    }
    return sum == glow_type_bytes(y);
}

/* Whether operand i's buffer can become its block of the result. */
static bool movable(const ir_instr *in, uint32_t i, const iropt_live *lv)
{
    ir_value *x = in->ops[i].v, *rx = ir_root(x);
    if (rx->kind != IV_ALLOC || !iropt_is_whole(x) || iropt_instr_uses(in, rx, (int)i))
        return false;
    return iropt_use_of(lv, rx)->last == in;
}

/* The rewrite when every operand with bytes moves: each is renamed into its block by
 * iropt_rename_local, in time proportional to its lifetime, and the analysis stays up to date,
 * so a chain of n Concats costs O(n). False, nothing changed, when that does not apply. */
static bool concat_local(ir_function *f, ir_instr *in, iropt_live *lv, const bool *move)
{
    ir_value *y = in->ops[0].v, *ry = ir_root(y);
    if (ry->id >= lv->n || lv->use[ry->id].last == in)
        return false;
    for (uint32_t i = in->nout; i < in->nops; i++) {
        ir_value *rx = ir_root(in->ops[i].v);
        if (!glow_type_bytes(&in->ops[i].v->type))
            return false; /* its record would keep naming the removed Concat */
        if (!move[i - in->nout] || rx->id >= lv->n || lv->use[rx->id].first == in)
            return false;
    }
    /* Renamed with no instruction taken out of the counts: the Concat stays a use of the
     * merged record (its first use is a producer, its last a reader after the Concat) until
     * its operands are subtracted below. */
    uint64_t off = 0;
    for (uint32_t i = in->nout; i < in->nops; i++) {
        ir_value *x = in->ops[i].v;
        uint64_t bytes = glow_type_bytes(&x->type);
        if (bytes && !iropt_rename_local(f, lv, ir_root(x), y, off, NULL))
            GLOW_ASSERT(!"concat_local: a checked rename failed");
        off += bytes;
    }
    iropt_use *uy = &lv->use[ry->id];
    for (uint32_t i = 0; i < in->nops; i++) {
        if (ir_root(in->ops[i].v) != ry)
            continue;
        uy->nuses--;
        uy->nwrites -= in->ops[i].role != 'i';
    }
    iropt_erase(f, in);
    return true;
}

void ir_pass_concat_inplace(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = iropt_next(in);
        if ((int)in->kind != NK_CONCAT || in->nout != 1 || in->nops < 2 ||
            !contiguous_blocks(in))
            continue;
        ir_value *y = in->ops[0].v, *ry = ir_root(y);
        /* The result must be fresh: nothing touches its buffer before the Concat. */
        if (ry->kind != IV_ALLOC || iropt_use_of(&lv, ry)->first != in ||
            iropt_instr_uses(in, ry, 0))
            continue;
        bool move[64 + 1] = { false };
        if (in->nops - in->nout > 64)
            continue;
        for (uint32_t i = in->nout; i < in->nops; i++)
            move[i - in->nout] = movable(in, i, &lv);
        cx->changes++;
        if (concat_local(f, in, &lv, move))
            continue;
        uint64_t off = 0;
        for (uint32_t i = in->nout; i < in->nops; i++) {
            ir_value *x = in->ops[i].v;
            uint64_t bytes = glow_type_bytes(&x->type);
            if (bytes && move[i - in->nout]) {
                iropt_replace_root(f, ir_root(x), y, off);
            } else if (bytes) {
                ir_value *slot = ir_view_create(f, x->name, y, &x->type, off);
                ir_operand ops[2] = { { slot, 'o' }, { x, 'i' } };
                iropt_insert(f, in, IK_COPY, in->name, ops, 2, 1);
            }
            off += bytes;
        }
        iropt_erase(f, in);
        iropt_fix_lifetimes(f);
        iropt_live_free(&lv);
        iropt_live_compute(f, &lv);
    }
    iropt_live_free(&lv);
}
