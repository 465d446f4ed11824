// slice_views.c - A Slice whose result is one contiguous block of its operand becomes a view:
// leading dims of size 1, then one dim taken in a unit-step range, then whole dims (Slice on
// the outermost non-1 dim). The copy disappears and the result aliases the operand's bytes.
//
// Legal only when the operand's buffer is not written while the view is alive (a read-only
// weight, or no write before the result's last use) and the result is written by the Slice
// alone; the operand's lifetime then grows to cover the view's uses.
#include <stdlib.h>

#include "iropt/iropt_internal.h"

/* Byte offset of the slice's block in its operand, or -1 when it is not one block. */
static int64_t block_offset(const ir_instr *in)
{
    const glow_type *x = &in->ops[1].v->type, *y = &in->ops[0].v->type;
    const glow_attr *st = iropt_attr(in, GA_STARTS), *sp = iropt_attr(in, GA_STEPS);
    int r = x->rank;
    if (y->dtype != x->dtype || y->rank != r || !st || st->n != (uint32_t)r ||
        (sp && sp->n != (uint32_t)r))
        return -1;
    int last = -1; /* the last dim not taken whole */
    for (int i = 0; i < r; i++) {
        int64_t s = st->v.ints[i], n = y->dims[i], step = sp ? sp->v.ints[i] : 1;
        if (n > 1 && step != 1)
            return -1;
        if (n > 0 && (s < 0 || s + n > x->dims[i]))
            return -1;
        if (n != x->dims[i])
            last = i;
    }
    int64_t offset = 0, stride = (int64_t)glow_dtype_size(x->dtype);
    for (int i = r - 1; i >= 0; i--) {
        if (i < last && y->dims[i] != 1)
            return -1;
        offset += st->v.ints[i] * stride;
        stride *= x->dims[i];
    }
    return offset;
}

void ir_pass_slice_views(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = iropt_next(in);
        if ((int)in->kind != NK_SLICE || in->nops != 2 || in->nout != 1)
            continue;
        ir_value *out = in->ops[0].v, *x = in->ops[1].v;
        ir_value *ro = ir_root(out), *rx = ir_root(x);
        if (ro->kind != IV_ALLOC || out != ro || ro == rx || glow_type_bytes(&ro->type) == 0)
            continue;
        int64_t off = block_offset(in);
        if (off < 0)
            continue;
        const iropt_use *uo = iropt_use_of(&lv, ro);
        bool ok = uo->nwrites == 1 && uo->first == in;
        if (ok && !(rx->kind == IV_WEIGHT && rx->readonly))
            ok = !iropt_touched_between(in, uo->last->next, rx, true);
        if (!ok)
            continue;
        cx->changes++;
        /* a chain of slices renames in time linear in its length (iropt_rename_local) */
        if (iropt_rename_local(f, &lv, ro, x, (uint64_t)off, in)) {
            iropt_erase(f, in);
            continue;
        }
        iropt_erase(f, in);
        iropt_replace_root(f, ro, x, (uint64_t)off);
        iropt_fix_lifetimes(f);
        iropt_live_free(&lv);
        iropt_live_compute(f, &lv);
    }
    iropt_live_free(&lv);
}
