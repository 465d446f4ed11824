// irgen.c - Generates the low-level IR of a lowered, scheduled graph function.
//
// Every Constant and Placeholder the function uses becomes a weight; every result of a
// compute node becomes an activation (allocactivation before the instruction that writes
// it, deallocactivation right after its last reader); RESHAPE becomes a view of its operand
// (no copy); SAVE becomes a copy into the output placeholder's weight, which the IR
// optimizer may later remove by writing the result there directly.
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct {
    ir_function *f;
    glow_strmap names;      /* names handed out, to keep them unique */
    ir_value ***vals;       /* per node id: one value per result */
    uint32_t nids;
} gen;

/* A unique value name derived from `base`. */
static const char *unique_name(gen *g, const char *base, const char *suffix)
{
    const char *stem = glow_arena_printf(&g->f->arena, "%s%s", base[0] ? base : "t", suffix);
    const char *name = stem;
    for (int k = 1; glow_strmap_has(&g->names, name); k++)
        name = glow_arena_printf(&g->f->arena, "%s#%d", stem, k);
    glow_strmap_put(&g->names, name, (void *)name);
    return name;
}

static ir_value **slot(gen *g, const glow_node *n)
{
    GLOW_ASSERT(n->id < g->nids);
    if (!g->vals[n->id])
        g->vals[n->id] = GLOW_NEW_ARRAY(&g->f->arena, ir_value *, n->nout ? n->nout : 1);
    return g->vals[n->id];
}

static ir_value *value_of(gen *g, glow_value v)
{
    ir_value **s = slot(g, v.node);
    if (!s[v.res]) {
        /* Only storage is created lazily; compute results exist before their users. */
        GLOW_ASSERT(glow_node_kind_flags(v.node->kind) & NF_STORAGE);
        ir_value *w = ir_weight_create(g->f, v.node);
        w->name = unique_name(g, v.node->name, "");
        s[v.res] = w;
    }
    return s[v.res];
}

static void gen_node(gen *g, glow_node *n)
{
    ir_function *f = g->f;
    if (n->kind == NK_RESHAPE || n->kind == NK_REINTERPRET) {
        ir_value *in = value_of(g, n->ins[0]);
        ir_value *v = ir_view_create(f, unique_name(g, n->name, ".view"), in, &n->outs[0], 0);
        slot(g, n)[0] = v;
        return;
    }
    if (n->kind == NK_SAVE) {
        ir_operand ops[2] = { { value_of(g, n->ins[1]), 'o' }, { value_of(g, n->ins[0]), 'i' } };
        ir_instr_append(f, IK_COPY, unique_name(g, n->name, ".save"), ops, 2, 1, NULL, 0);
        return;
    }
    /* Most nodes have a few operands; If, Loop and Concat may have thousands. */
    ir_operand small[GLOW_MAX_DIMS + 80];
    uint32_t want = n->nout + n->nin;
    ir_operand *ops = want <= sizeof small / sizeof small[0] ? small
                                                             : GLOW_NEW_ARRAY(&f->arena,
                                                                              ir_operand, want);
    int nops = 0;
    for (uint32_t r = 0; r < n->nout; r++) {
        const char *suffix = n->nout == 1 ? ".res" : glow_arena_printf(&f->arena, ".res%u", r);
        ir_value *a = ir_alloc_create(f, unique_name(g, n->name, suffix), &n->outs[r]);
        ir_operand ao = { a, 'o' };
        ir_instr_append(f, IK_ALLOC, "", &ao, 1, 1, NULL, 0);
        slot(g, n)[r] = a;
        ops[nops++] = ao;
    }
    for (uint32_t i = 0; i < n->nin; i++)
        ops[nops++] = (ir_operand){ value_of(g, n->ins[i]), 'i' };
    ir_instr_append(f, (ir_instr_kind)n->kind, unique_name(g, n->name, ""), ops, nops,
                    (int)n->nout, n->attrs, (int)n->nattr);
}

/* Inserts deallocactivation after the last instruction that touches each activation. */
static void insert_deallocs(ir_function *f)
{
    uint32_t nvals = f->next_id;
    ir_instr **last = glow_xcalloc(nvals, sizeof(*last));
    for (ir_instr *in = f->first; in; in = in->next) {
        for (uint32_t i = 0; i < in->nops; i++) {
            ir_value *r = ir_root(in->ops[i].v);
            if (r->kind == IV_ALLOC)
                last[r->id] = in;
        }
    }
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind != IV_ALLOC || !last[v->id])
            continue;
        ir_operand op = { v, 'x' };
        ir_instr *d = ir_instr_append(f, IK_DEALLOC, "", &op, 1, 0, NULL, 0);
        ir_instr_unlink(f, d);
        ir_instr_insert_before(f, last[v->id]->next, d);
    }
    free(last);
}

glow_status ir_generate(glow_function *gf, ir_function **out, glow_diag *d)
{
    gen g = { .f = ir_function_create(gf->module, gf->name) };
    g.nids = gf->module->next_id;
    g.vals = glow_xcalloc(g.nids ? g.nids : 1, sizeof(*g.vals));
    for (glow_node *n = gf->nodes.first; n; n = n->next)
        gen_node(&g, n);
    insert_deallocs(g.f);
    free(g.vals);
    glow_strmap_free(&g.names);
    glow_status s = ir_function_verify(g.f, d);
    if (s != GLOW_OK) {
        ir_function_destroy(g.f);
        return s;
    }
    *out = g.f;
    return GLOW_OK;
}
