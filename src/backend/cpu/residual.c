// residual.c - Residual fusion, the last step of the prepare hook: Add(z; y, r) where y is
// written by a blocked convolution C (cpu.conv_nchwc / cpu.dwconv_nchwc) straight into a
// buffer kept blocked, nothing between C and the Add touches y, r or z, and z is y or r (the
// IR optimizer's in-place sharing): C writes z with r as its residual operand (the kernel adds
// it before the activation), and a Relu in place right after the Add becomes C's fused
// activation.
#include <string.h>

#include "backend/cpu/cpu_internal.h"

static bool blocked_conv(const ir_instr *in)
{
    return in->kind == IK_CPU_CONV_NCHWC || in->kind == IK_CPU_DWCONV_NCHWC ||
           in->kind == IK_CPU_WINO_NCHWC;
}

/* The conv that last wrote y before `add`, when nothing between them touches y, r or z. */
static ir_instr *producer(ir_instr *add, const ir_value *y, const ir_value *r, const ir_value *z)
{
    for (ir_instr *in = add->prev; in; in = in->prev) {
        if (cpu_is_marker(in))
            continue;
        if (blocked_conv(in) && in->ops[0].v == y)
            return in;
        if (cpu_touches(in, y) || cpu_touches(in, r) || cpu_touches(in, z))
            return NULL;
    }
    return NULL;
}

/* Tries Add `add` with operand `yi` (1 or 2) as the conv's output; *cont: where the caller's
 * walk goes on. */
static bool fuse_one(ir_function *f, ir_instr *add, int yi, const bool *blocked,
                     ir_instr **cont)
{
    ir_value *z = add->ops[0].v, *y = add->ops[yi].v, *r = add->ops[3 - yi].v;
    if (y->kind != IV_ALLOC || r->kind != IV_ALLOC || z->kind != IV_ALLOC ||
        (z != y && z != r) || y == r || !blocked[y->id] || !blocked[r->id] || !blocked[z->id])
        return false;
    /* A conv with a bias and no residual yet: [y, x, w, work, bias] (Winograd's with its
     * scratch before the bias). */
    ir_instr *c = producer(add, y, r, z);
    uint32_t nb = c && c->kind == IK_CPU_WINO_NCHWC ? 6 : 5;
    if (!c || c->nops != nb || c->ops[nb - 1].v->type.rank != 1 || cpu_attr(c, GA_FUSED_ACT) ||
        ir_root(c->ops[1].v) == z || ir_root(c->ops[1].v) == y)
        return false;
    /* y must not be read after the Add unless the conv's result stays in it. */
    ir_instr *yalloc = NULL, *ydealloc = NULL;
    for (ir_instr *in = f->first; in; in = in->next) {
        if (!cpu_touches(in, y))
            continue;
        if (in->kind == IK_ALLOC)
            yalloc = in;
        else if (in->kind == IK_DEALLOC)
            ydealloc = in;
        else if (in != c && in != add && z != y)
            return false;
    }
    /* A Relu in place right after the Add becomes the conv's activation. */
    ir_instr *act = add->next;
    while (act && cpu_is_marker(act))
        act = act->next;
    if (act && !(act->kind == IK_RELU && act->nops == 2 && act->ops[0].v == z &&
                 act->ops[1].v == z))
        act = NULL;
    ir_instr *before = add->prev;   /* stays: y's dealloc comes after the Add */
    ir_operand *ops = GLOW_NEW_ARRAY(&f->arena, ir_operand, nb + 1);
    memcpy(ops, c->ops, nb * sizeof *ops);
    ops[0].v = z;
    ops[nb] = (ir_operand){ r, 'i' };
    c->ops = ops;
    c->nops = nb + 1;
    if (act) {
        glow_attr *attrs = GLOW_NEW_ARRAY(&f->arena, glow_attr, c->nattr + 1);
        memcpy(attrs, c->attrs, c->nattr * sizeof *attrs);
        attrs[c->nattr++] = GLOW_ASTR(FUSED_ACT, "Relu");
        c->attrs = attrs;
        ir_instr_unlink(f, act);
    }
    ir_instr_unlink(f, add);
    if (z != y) {
        if (yalloc)
            ir_instr_unlink(f, yalloc);
        if (ydealloc)
            ir_instr_unlink(f, ydealloc);
    }
    *cont = before ? before->next : f->first;
    return true;
}

int cpu_fuse_residuals(ir_function *f, const bool *blocked)
{
    int count = 0;
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = in->next;
        if (in->kind != IK_ADD || cpu_eltwise_op(in) >= 0)
            continue;
        if (fuse_one(f, in, 1, blocked, &next) || fuse_one(f, in, 2, blocked, &next))
            count++;
    }
    return count;
}
