// share_buffers.c - Buffer sharing (in place): the result of an instruction that allows it
// (IF_INPLACE_OK: elementwise kinds, which read element i before writing element i) takes
// over the buffer of an operand of the same type that dies at this instruction.
//
// Not when the operand is read again later (then it does not die here), when the result was
// touched before (it is not fresh), or when another operand of the instruction reads a
// different part of the same buffer (the in-place loop would overwrite it before reading).
#include <stdlib.h>

#include "iropt/iropt_internal.h"

/* The operand whose buffer the result may take over, or -1. */
static int candidate(const ir_instr *in, const iropt_live *lv)
{
    ir_value *out = in->ops[0].v, *ro = ir_root(out);
    if (ro->kind != IV_ALLOC || out != ro || iropt_use_of(lv, ro)->first != in)
        return -1;
    for (uint32_t i = in->nout; i < in->nops; i++) {
        ir_value *x = in->ops[i].v, *rx = ir_root(x);
        if (rx->kind != IV_ALLOC || rx == ro || !iropt_is_whole(x))
            continue;
        if (x->type.dtype != out->type.dtype ||
            glow_type_bytes(&x->type) != glow_type_bytes(&out->type) ||
            glow_type_numel(&x->type) != glow_type_numel(&out->type))
            continue;
        if (iropt_use_of(lv, rx)->last != in)
            continue;
        bool clash = false;
        for (uint32_t j = in->nout; j < in->nops && !clash; j++) {
            const ir_value *y = in->ops[j].v;
            clash = j != i && iropt_croot(y) == rx && !iropt_is_whole(y);
        }
        if (!clash)
            return (int)i;
    }
    return -1;
}

/* The rewrite of the common case, in time proportional to the result's lifetime: result root
 * ro (no views of it exist) takes over the bytes of operand x, whose root rx dies at `in`.
 * Operands naming ro between its first use (`in`) and its end get rx (or a view of it when
 * the shapes differ), ro's markers go, rx's dealloc moves after ro's last use, and the use
 * analysis is updated rather than recomputed - so a chain of n elementwise instructions
 * shares its buffers in O(n), not O(n^2) (the general path walks every value and every
 * instruction, then the whole analysis again, per rewrite). Markers get the position of the
 * instruction they now follow, so positions stay comparable. */
static void share_local(ir_function *f, iropt_live *lv, ir_instr *in, ir_value *x)
{
    ir_value *ro = ir_root(in->ops[0].v), *rx = ir_root(x);
    iropt_use *uo = &lv->use[ro->id], *ux = &lv->use[rx->id];
    ir_value *as = glow_type_equal(&ro->type, &rx->type) ? rx : NULL;
    if (uo->alloc)
        ir_instr_unlink(f, uo->alloc);
    /* Up to both ro's last use and its dealloc, whichever comes later. */
    bool need_last = uo->last != NULL, need_dealloc = uo->dealloc != NULL;
    for (ir_instr *p = in, *pnext; p && (need_last || need_dealloc); p = pnext) {
        pnext = p->next;
        need_last &= p != uo->last;
        need_dealloc &= p != uo->dealloc;
        if (iropt_is_marker(p) && p->ops[0].v == ro) {
            ir_instr_unlink(f, p);
        } else {
            for (uint32_t i = 0; i < p->nops; i++) {
                if (p->ops[i].v != ro)
                    continue;
                if (!as)
                    as = ir_view_create(f, ro->name, rx, &ro->type, iropt_offset(x));
                p->ops[i].v = as;
            }
        }
    }
    if (ux->dealloc && uo->last && lv->pos[ux->dealloc->id] < lv->pos[uo->last->id]) {
        ir_instr_unlink(f, ux->dealloc);
        ir_instr_insert_before(f, uo->last->next, ux->dealloc);
        lv->pos[ux->dealloc->id] = lv->pos[uo->last->id];
    }
    if (uo->last)
        ux->last = uo->last;
    ux->nuses += uo->nuses;
    ux->nwrites += uo->nwrites;
    *uo = (iropt_use){ 0 };
}

void ir_pass_share_buffers(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    /* Roots that views are based on take the general path (their views must be re-based). */
    bool *viewed = glow_xcalloc(lv.n ? lv.n : 1, sizeof *viewed);
    for (ir_value *v = f->values; v; v = v->next)
        if (v->kind == IV_VIEW && v->base->id < lv.n)
            viewed[v->base->id] = true;
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = iropt_next(in);
        if (iropt_is_marker(in) || in->nout != 1 || in->nops < 2 ||
            !(ir_instr_kind_flags(in->kind) & IF_INPLACE_OK))
            continue;
        int i = candidate(in, &lv);
        if (i < 0)
            continue;
        cx->changes++;
        ir_value *ro = ir_root(in->ops[0].v), *x = in->ops[i].v;
        if (ro->id < lv.n && !viewed[ro->id] && iropt_offset(x) == 0) {
            share_local(f, &lv, in, x);
            continue;
        }
        iropt_replace_root(f, ro, x, 0);
        iropt_fix_lifetimes(f);
        /* The analysis is stale (and new views have ids past its arrays). */
        iropt_live_free(&lv);
        iropt_live_compute(f, &lv);
        free(viewed);
        viewed = glow_xcalloc(lv.n ? lv.n : 1, sizeof *viewed);
        for (ir_value *v = f->values; v; v = v->next)
            if (v->kind == IV_VIEW && v->base->id < lv.n)
                viewed[v->base->id] = true;
    }
    free(viewed);
    iropt_live_free(&lv);
}
