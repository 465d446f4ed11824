// share_buffers.c - Buffer sharing (in place): the result of an instruction that allows it
// (IF_INPLACE_OK: elementwise kinds, which read element i before writing element i) takes
// over the buffer of an operand of the same type that dies at this instruction.
//
// Not when the operand is read again later (then it does not die here), when the result was
// touched before (it is not fresh), or when another operand of the instruction reads a
// different part of the same buffer (the in-place loop would overwrite it before reading).
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

void ir_pass_share_buffers(iropt_cx *cx)
{
    ir_function *f = cx->f;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = iropt_next(in);
        if (iropt_is_marker(in) || in->nout != 1 || in->nops < 2 ||
            !(ir_instr_kind_flags(in->kind) & IF_INPLACE_OK))
            continue;
        int i = candidate(in, &lv);
        if (i < 0)
            continue;
        iropt_replace_root(f, ir_root(in->ops[0].v), in->ops[i].v, 0);
        iropt_fix_lifetimes(f);
        cx->changes++;
        /* The analysis is stale (and new views have ids past its arrays). */
        iropt_live_free(&lv);
        iropt_live_compute(f, &lv);
    }
    iropt_live_free(&lv);
}
