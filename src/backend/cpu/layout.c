// layout.c - The CPU backend's layout decision, made by the prepare hook before memory
// planning: which activations stay in the channel-blocked layout (NCHWc) between the fast
// kernels instead of being converted at every convolution. prepare.c then retypes them.
//
// A buffer (an activation with its views) is kept blocked when every instruction that
// touches it can work on the blocked bytes: a fast convolution (it converts whichever of its
// input and output is not blocked itself), a blocked pool, a same-shape elementwise op, a
// Copy or a Concat along whole channel blocks (the same bytes move in either layout). The
// last four need all their operands in one layout, so their buffers form groups (union-find)
// that are blocked or plain together; but a pool writing a graph output reads a blocked input
// all the same, and prepare.c converts its result. Only f32 4-D buffers qualify.
//
// A buffer whose channels are not whole blocks (C % V != 0: MobileNet's 24 under AVX-512)
// is padded to whole blocks: its blocked type [N][ceil(C/V)][H][W][V] is larger than the
// plain one, and the planner sizes it from that type. Its padding lanes hold zeros: the
// kernels compute whole vectors and the repacked weights and biases are zero there, so a
// writer keeps them zero when its activation maps 0 to 0 (a conv's Relu, Clip around 0,
// LeakyRelu, Tanh; Add, Sub, Mul, Max, Min, Relu, Neg, Abs, Sqrt, Tanh among the elementwise
// ops); a group with another writer (Sigmoid, Exp, Div, ...) stays plain. Fewer channels than
// a block (C < V) stay plain where a dense conv reads them (it converts them to one block of
// C lanes instead of multiplying by V / C zeros).
//
// A view qualifies when it is a block-aligned channel slice of one image (googlenet's
// branches writing into their Concat's buffer) or the whole buffer.
// Buffers the graph sees (inputs, outputs: weights) are never blocked.

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_ops.h"

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

/* Channels that are not whole blocks: the blocked buffer has padding lanes. */
static bool padded(const ir_value *r, int v)
{
    return r->type.rank == 4 && r->type.dims[1] % v != 0;
}

/* One pixel per channel in whole blocks: the blocked bytes are the plain bytes, so any
 * instruction and any view may use it whatever its group decides. */
static bool neutral(const ir_value *r, int v)
{
    return r->type.rank == 4 && r->type.dims[2] * r->type.dims[3] == 1 && !padded(r, v);
}

static void spoil(groups *g, const ir_value *val, int v)
{
    const ir_value *r = ir_root((ir_value *)val);
    if (!neutral(r, v))
        g->bad[find(g, r->id)] = true;
}

/* act(0) == 0 for a fused activation GK_ACT_* with parameters a, b. */
static bool act_keeps_zero(int act, double a, double b)
{
    switch (act) {
    case GK_ACT_NONE: case GK_ACT_RELU: case GK_ACT_LEAKY_RELU: case GK_ACT_TANH:
        return true;
    case GK_ACT_CLIP:
        return a <= 0 && b >= 0;
    default:
        return false;
    }
}

/* Whether `in` (a fast conv, or an instruction linking its operands' layouts) writes zeros
 * into its result's padding lanes when its inputs hold zeros there. */
static bool keeps_zero(const ir_instr *in)
{
    cpu_conv cp;
    if (in->kind == IK_CONV)
        return cpu_conv_attrs(in, &cp) && act_keeps_zero(cp.act, cp.alpha, cp.beta);
    const glow_attr *lo, *hi;
    switch (cpu_eltwise_op(in)) {
    case 0:   /* Copy, Concat, pools: max or mean of zeros */
    case GK_UN_RELU: case GK_UN_NEG: case GK_UN_ABS: case GK_UN_SQRT: case GK_UN_TANH:
    case -GK_BIN_ADD: case -GK_BIN_SUB: case -GK_BIN_MUL: case -GK_BIN_MAX: case -GK_BIN_MIN:
    case GK_CHAIN_LEAKY_RELU:
        return true;
    case GK_CHAIN_CLIP:
        lo = cpu_attr(in, GA_MIN);
        hi = cpu_attr(in, GA_MAX);
        return (!lo || lo->v.f <= 0) && (!hi || hi->v.f >= 0);
    default:
        return false;
    }
}

/* An activation whose blocked bytes are its plain bytes rearranged (and padded to whole
 * channel blocks), nothing more. */
static bool candidate(const ir_value *r)
{
    const glow_type *t = &r->type;
    return r->kind == IV_ALLOC && t->dtype == GLOW_F32 && t->rank == 4 && t->dims[1] > 0 &&
           glow_type_numel(t) > 0;
}

/* A view that reads the same bytes in either layout: the whole buffer (padded or not), or
 * whole channel blocks of a single image. */
static bool view_ok(const ir_value *view, int v)
{
    const glow_type *t = &view->type, *b = &view->base->type;
    if (t->rank != 4 || b->rank != 4 || t->dtype != GLOW_F32 || t->dims[0] != b->dims[0] ||
        t->dims[2] != b->dims[2] || t->dims[3] != b->dims[3])
        return false;
    if (t->dims[1] == b->dims[1] && view->view_offset == 0)
        return true;
    if (t->dims[1] % v)
        return false;
    uint64_t block = (uint64_t)(t->dims[2] * t->dims[3] * v) * sizeof(float);
    return b->dims[0] == 1 && block && view->view_offset % block == 0;
}

bool *cpu_plan_layout(const ir_function *f, int v, const bool *fast)
{
    uint32_t n = f->next_id;
    groups g = { glow_xcalloc(n ? n : 1, sizeof(uint32_t)), glow_xcalloc(n ? n : 1, 1) };
    /* Roots written by an instruction that would leave non-zero padding lanes. */
    bool *dirty = glow_xcalloc(n ? n : 1, sizeof *dirty);
    for (uint32_t i = 0; i < n; i++)
        g.parent[i] = i;
    for (const ir_value *x = f->values; x; x = x->next) {
        if (x->kind == IV_VIEW)
            g.bad[x->base->id] |= !view_ok(x, v) && !neutral(x->base, v);
        else
            g.bad[x->id] |= !candidate(x);
    }
    for (const ir_instr *in = f->first; in; in = in->next) {
        if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC)
            continue;
        cpu_pool pp;
        bool pool = cpu_pool_params(in, &pp) &&
                    (in->kind == IK_MAX_POOL || (pp.dl[0] == 1 && pp.dl[1] == 1));
        bool link = cpu_eltwise_op(in) || cpu_layout_agnostic(in, v) || pool;
        /* A pool writing a graph output (SqueezeNet's global average pool) reads its input
         * blocked all the same: prepare.c converts its small result. */
        if (pool && ir_root(in->ops[0].v)->kind != IV_ALLOC)
            continue;
        bool conv = in->kind == IK_CONV && fast[in->id];
        if ((conv || link) && in->nout == 1 && !keeps_zero(in))
            dirty[ir_root(in->ops[0].v)->id] = true;
        if (conv) {
            for (uint32_t i = 2; i < in->nops; i++)   /* weights, bias */
                spoil(&g, in->ops[i].v, v);
            /* Fewer than v input channels, group 1: the conv reads a converted copy of them
             * as one block of cv = C. A padded block would multiply its FMAs by v / C (LeNet
             * b1's 6 channels: 14% slower than converting). */
            const glow_attr *ga = cpu_attr(in, GA_GROUP);
            if ((!ga || ga->v.i == 1) && in->ops[1].v->type.dims[1] < v)
                spoil(&g, in->ops[1].v, v);
        } else if (link) {
            for (uint32_t i = 1; i < in->nops; i++)
                unite(&g, ir_root(in->ops[0].v)->id, ir_root(in->ops[i].v)->id);
        } else {
            for (uint32_t i = 0; i < in->nops; i++)
                spoil(&g, in->ops[i].v, v);
        }
    }
    /* A group's buffers share one channel count, so a padded group is padded throughout. */
    for (const ir_value *x = f->values; x; x = x->next)
        if (x->kind != IV_VIEW && dirty[x->id] && padded(x, v))
            g.bad[find(&g, x->id)] = true;
    bool *blocked = glow_xcalloc(n ? n : 1, sizeof *blocked);
    for (const ir_value *x = f->values; x; x = x->next)
        if (x->kind != IV_VIEW)
            blocked[x->id] = !g.bad[find(&g, x->id)];
    free(dirty);
    free(g.parent);
    free(g.bad);
    return blocked;
}
