// layout.c - The CPU backend's layout and fusion decisions, made by the prepare hook before
// memory planning: which activations stay in the channel-blocked layout (NCHWc) between the
// fast kernels instead of being converted at every convolution, and which residual Adds (and
// the Relu after them) fold into the convolution that produces one of their operands.
//
// Layout. A buffer (an activation with its views) is kept blocked when every instruction that
// touches it can work on the blocked bytes: a fast convolution (it converts whichever of its
// input and output is not blocked itself), a blocked pool, a same-shape elementwise op, a
// Copy or a Concat along whole channel blocks (the same bytes move in either layout). The
// last three need all their operands in one layout, so their buffers form groups (union-find)
// that are blocked or plain together. Only f32 4-D buffers with whole channel blocks (C % V
// == 0) qualify, so a blocked buffer has exactly the bytes of the plain one: sizes, views and
// the planner are unchanged. A view qualifies when it is a block-aligned channel slice of one
// image (googlenet's branches writing into their Concat's buffer) or the whole buffer.
// Buffers the graph sees (inputs, outputs: weights) are never blocked.
//
// Fusion. Add(z; y, r) where y is written by a fast conv C whose output is blocked, nothing
// between C and the Add touches y, r or z, and z is y or r (the IR optimizer's in-place
// sharing): C writes z with r as its residual (the kernel adds it before the activation), and
// a Relu in place right after the Add becomes C's fused activation.
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"

typedef struct groups {
    uint32_t *parent;
    bool *bad;
} groups;

static uint32_t find(groups *g, uint32_t i)
{
    while (g->parent[i] != i) {
        g->parent[i] = g->parent[g->parent[i]];
        i = g->parent[i];
    }
    return i;
}

static void unite(groups *g, uint32_t a, uint32_t b)
{
    a = find(g, a);
    b = find(g, b);
    if (a != b) {
        g->parent[a] = b;
        g->bad[b] |= g->bad[a];
    }
}

/* One pixel per channel: the blocked bytes are the plain bytes, so any instruction and any
 * view may use it whatever its group decides. */
static bool neutral(const ir_value *r)
{
    return r->type.rank == 4 && r->type.dims[2] * r->type.dims[3] == 1;
}

static void spoil(groups *g, const ir_value *v)
{
    const ir_value *r = ir_root((ir_value *)v);
    if (!neutral(r))
        g->bad[find(g, r->id)] = true;
}

/* An activation whose blocked bytes are its plain bytes rearranged, nothing more. */
static bool candidate(const ir_value *r, int v)
{
    const glow_type *t = &r->type;
    return r->kind == IV_ALLOC && t->dtype == GLOW_F32 && t->rank == 4 && t->dims[1] > 0 &&
           t->dims[1] % v == 0 && glow_type_numel(t) > 0;
}

/* A view that reads the same bytes in either layout: the whole buffer, or whole channel
 * blocks of a single image. */
static bool view_ok(const ir_value *view, int v)
{
    const glow_type *t = &view->type, *b = &view->base->type;
    if (t->rank != 4 || b->rank != 4 || t->dtype != GLOW_F32 || t->dims[0] != b->dims[0] ||
        t->dims[2] != b->dims[2] || t->dims[3] != b->dims[3] || t->dims[1] % v)
        return false;
    if (t->dims[1] == b->dims[1] && view->view_offset == 0)
        return true;
    uint64_t block = (uint64_t)(t->dims[2] * t->dims[3] * v) * sizeof(float);
    return b->dims[0] == 1 && block && view->view_offset % block == 0;
}

void cpu_plan_layout(ir_function *f, int v, const bool *fast)
{
    uint32_t n = f->next_id;
    groups g = { glow_xcalloc(n ? n : 1, sizeof(uint32_t)), glow_xcalloc(n ? n : 1, 1) };
    for (uint32_t i = 0; i < n; i++)
        g.parent[i] = i;
    for (ir_value *x = f->values; x; x = x->next) {
        if (x->kind == IV_VIEW)
            g.bad[x->base->id] |= !view_ok(x, v) && !neutral(x->base);
        else
            g.bad[x->id] |= !candidate(x, v);
    }
    for (ir_instr *in = f->first; in; in = in->next) {
        if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC)
            continue;
        cpu_pool pp;
        bool link = cpu_eltwise_op(in) || cpu_layout_agnostic(in, v) ||
                    (cpu_pool_params(in, &pp) &&
                     (in->kind == IK_MAX_POOL || (pp.dl[0] == 1 && pp.dl[1] == 1)));
        if (in->kind == IK_CONV && fast[in->id]) {
            for (uint32_t i = 2; i < in->nops; i++)   /* weights, bias */
                spoil(&g, in->ops[i].v);
        } else if (link) {
            for (uint32_t i = 1; i < in->nops; i++)
                unite(&g, ir_root(in->ops[0].v)->id, ir_root(in->ops[i].v)->id);
        } else {
            for (uint32_t i = 0; i < in->nops; i++)
                spoil(&g, in->ops[i].v);
        }
    }
    for (ir_value *x = f->values; x; x = x->next)
        x->blocked = g.bad[find(&g, ir_root(x)->id)] ? 0 : (uint8_t)v;
    free(g.parent);
    free(g.bad);
}

static bool touches(const ir_instr *in, const ir_value *root)
{
    for (uint32_t i = 0; i < in->nops; i++)
        if (ir_root(in->ops[i].v) == root)
            return true;
    return false;
}

static bool is_marker(const ir_instr *in) { return in->kind == IK_ALLOC || in->kind == IK_DEALLOC; }

/* The conv that last wrote y before `add`, when nothing between them touches y, r or z. */
static ir_instr *producer(ir_instr *add, const ir_value *y, const ir_value *r, const ir_value *z,
                          const bool *fast)
{
    for (ir_instr *in = add->prev; in; in = in->prev) {
        if (is_marker(in))
            continue;
        if (in->kind == IK_CONV && in->ops[0].v == y)
            return fast[in->id] ? in : NULL;
        if (touches(in, y) || touches(in, r) || touches(in, z))
            return NULL;
    }
    return NULL;
}

/* Tries Add `add` with operand `yi` (1 or 2) as the conv's output; *cont: where the caller's
 * walk goes on. */
static bool fuse_one(ir_function *f, ir_instr *add, int yi, const bool *fast, ir_instr **cont)
{
    ir_value *z = add->ops[0].v, *y = add->ops[yi].v, *r = add->ops[3 - yi].v;
    if (y->kind != IV_ALLOC || r->kind != IV_ALLOC || z->kind != IV_ALLOC ||
        (z != y && z != r) || y == r || !y->blocked || r->blocked != y->blocked ||
        z->blocked != y->blocked)
        return false;
    ir_instr *c = producer(add, y, r, z, fast);
    if (!c || c->nops != 4 || cpu_attr(c, GA_FUSED_ACT) || ir_root(c->ops[1].v) == z ||
        ir_root(c->ops[1].v) == y)
        return false;
    /* y must not be read after the Add unless the conv's result stays in it. */
    ir_instr *yalloc = NULL, *ydealloc = NULL;
    for (ir_instr *in = f->first; in; in = in->next) {
        if (!touches(in, y))
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
    while (act && is_marker(act))
        act = act->next;
    if (act && !(act->kind == IK_RELU && act->nops == 2 && act->ops[0].v == z &&
                 act->ops[1].v == z))
        act = NULL;
    ir_instr *before = add->prev;   /* stays: y's dealloc comes after the Add */
    ir_operand *ops = GLOW_NEW_ARRAY(&f->arena, ir_operand, 5);
    memcpy(ops, c->ops, 4 * sizeof *ops);
    ops[0].v = z;
    ops[4] = (ir_operand){ r, 'i' };
    c->ops = ops;
    c->nops = 5;
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

int cpu_fuse_residuals(ir_function *f, const bool *fast)
{
    int count = 0;
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = in->next;
        if (in->kind != IK_ADD || cpu_eltwise_op(in) >= 0)
            continue;
        if (fuse_one(f, in, 1, fast, &next) || fuse_one(f, in, 2, fast, &next))
            count++;
    }
    return count;
}
