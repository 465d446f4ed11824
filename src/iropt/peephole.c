// peephole.c - Local rewrites of single instructions: data movement that moves nothing
// (a full Slice, a one-operand Concat, an identity Transpose, a Broadcast or Cast to the same
// type, a Reshape instruction) becomes a copy, which copy elimination then removes; a copy
// onto itself disappears.
#include "iropt/iropt_internal.h"

static bool identity_slice(const ir_instr *in)
{
    const glow_type *x = &in->ops[1].v->type, *y = &in->ops[0].v->type;
    const glow_attr *st = iropt_attr(in, GA_STARTS), *sp = iropt_attr(in, GA_STEPS);
    if (!glow_type_equal(x, y) || !st || st->n != x->rank)
        return false;
    for (uint32_t i = 0; i < st->n; i++) {
        if (st->v.ints[i] != 0)
            return false;
        if (sp && i < sp->n && sp->v.ints[i] != 1 && x->dims[i] > 1)
            return false;
    }
    return true;
}

static bool identity_transpose(const ir_instr *in)
{
    const glow_attr *p = iropt_attr(in, GA_PERM);
    if (!p)
        return false;
    /* Moving only size-1 dims keeps the bytes in order: the perm restricted to the other
     * dims must be increasing. */
    const glow_type *x = &in->ops[1].v->type;
    int64_t last = -1;
    for (uint32_t i = 0; i < p->n; i++) {
        int64_t a = p->v.ints[i];
        if (a < 0 || a >= x->rank)
            return false;
        if (x->dims[a] == 1)
            continue;
        if (a < last)
            return false;
        last = a;
    }
    return true;
}

/* Whether node-mirroring instruction `in` only copies its operand's bytes. */
static bool moves_nothing(const ir_instr *in)
{
    if (!ir_kind_is_node(in->kind) || in->nout != 1 || in->nops != 2)
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    if (y->dtype != x->dtype || glow_type_bytes(y) != glow_type_bytes(x) ||
        glow_type_numel(y) != glow_type_numel(x))
        return false;
    switch ((int)in->kind) {
    case NK_RESHAPE:
        return true;
    case NK_SLICE:
        return identity_slice(in);
    case NK_CONCAT:
        return glow_type_equal(x, y);
    case NK_TRANSPOSE:
        return identity_transpose(in);
    case NK_BROADCAST:
    case NK_CAST:
        return glow_type_equal(x, y);
    default:
        return false;
    }
}

void ir_pass_peephole(iropt_cx *cx)
{
    ir_function *f = cx->f;
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = iropt_next(in);
        if (in->kind == IK_COPY) {
            const ir_value *a = in->ops[0].v, *b = in->ops[1].v;
            if (iropt_croot(a) == iropt_croot(b) && iropt_offset(a) == iropt_offset(b)) {
                iropt_erase(f, in);
                cx->changes++;
            }
            continue;
        }
        if (!moves_nothing(in))
            continue;
        ir_operand ops[2] = { in->ops[0], in->ops[1] };
        iropt_insert(f, in, IK_COPY, in->name, ops, 2, 1);
        iropt_erase(f, in);
        cx->changes++;
    }
}
