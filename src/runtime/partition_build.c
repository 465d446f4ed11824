// partition_build.c - Turns the partitioner's cut into modules: each range of nodes is cloned
// into a module of its own, whose input placeholders are the model inputs and crossing tensors
// it reads, and whose outputs (Save to a placeholder) are the model outputs it computes and the
// tensors later partitions read.
#include <stdlib.h>
#include <string.h>

#include "runtime/partition_internal.h"

typedef GLOW_VEC(int) int_vec;

/* Per-build state: where each old value and storage node lives in the partition being built. */
typedef struct builder {
    pt_graph *g;
    glow_partition_plan *plan;
    int *cross_of;         /* crossing index of each value, -1 when it crosses nothing */
    glow_value *newval;    /* the new value of each old value, in the current partition */
    glow_node **newstore;  /* by old node id: the new constant/placeholder ... */
    int *store_part;       /* ... valid when store_part[id] == current partition + 1 */
    int *input_index;      /* by old node id: model input position, -1 */
    glow_strmap model_names; /* the model's placeholder names, to keep crossing names apart */
    GLOW_VEC(glow_crossing) cross;
    int_vec cross_val;     /* the value each crossing carries */
} builder;

void pt_copy_attrs(glow_node *to, const glow_node *from)
{
    for (uint32_t i = 0; i < from->nattr; i++) {
        const glow_attr *a = &from->attrs[i];
        switch (glow_attr_kind_of(a->id)) {
        case AK_INT: glow_node_set_int(to, a->id, a->v.i); break;
        case AK_FLOAT: glow_node_set_float(to, a->id, a->v.f); break;
        case AK_INTS: glow_node_set_ints(to, a->id, a->v.ints, (int)a->n); break;
        case AK_FLOATS: glow_node_set_floats(to, a->id, a->v.floats, (int)a->n); break;
        case AK_STR: glow_node_set_str(to, a->id, a->v.s); break;
        }
    }
}

/* The name of crossing value vi: its node's, with ":r" for results after the first, and
 * ".xfer<k>" when a model input or output or another crossing has that name already (names
 * of nodes need not be unique; placeholder names of a module should be). */
static const char *value_name(builder *b, int vi)
{
    const pt_value *v = &b->g->val[vi];
    glow_arena *a = &b->plan->arena;
    const char *base = v->v.res ? glow_arena_printf(a, "%s:%u", v->v.node->name, v->v.res)
                                : glow_arena_strdup(a, v->v.node->name);
    const char *name = base;
    for (int k = 1; glow_strmap_has(&b->model_names, name); k++)
        name = k == 1 ? glow_arena_printf(a, "%s.xfer", base)
                      : glow_arena_printf(a, "%s.xfer%d", base, k);
    glow_strmap_put(&b->model_names, name, NULL);
    return name;
}

/* The partition's module for storage operand o (created on first use). */
static glow_node *storage(builder *b, int p, glow_module *m, const glow_node *o)
{
    if (b->store_part[o->id] == p + 1)
        return b->newstore[o->id];
    glow_node *n = NULL;
    if (o->kind == NK_CONSTANT)
        n = glow_constant_create(m, o->name, &o->outs[0], o->payload.data);
    else
        n = glow_placeholder_create(m, o->name, &o->outs[0], o->is_input);
    b->newstore[o->id] = n;
    b->store_part[o->id] = p + 1;
    return n;
}

static void add_source(int_vec *src, int s)
{
    for (size_t i = 0; i < src->len; i++)
        if (src->data[i] == s)
            return;
    GLOW_VEC_PUSH(*src, s);
}

static int cmp_source(const void *a, const void *b)
{
    /* Model inputs (>= 0) first in model order, then crossings in the order they were made. */
    int x = *(const int *)a, y = *(const int *)b;
    if ((x >= 0) != (y >= 0))
        return x >= 0 ? -1 : 1;
    return x >= 0 ? x - y : y - x;
}

/* Sources of partition p: each model input and crossing it reads (nodes and Saves). */
static void collect_sources(builder *b, int p, int_vec *src)
{
    const pt_graph *g = b->g;
    const pt_range *r = &g->parts[p];
    for (int i = r->s; i < r->e; i++) {
        const glow_node *n = g->node[i];
        for (uint32_t k = 0; k < n->nin; k++) {
            int vi = pt_value_of(g, n->ins[k]);
            if (vi >= 0 && g->val[vi].prod < r->s)
                add_source(src, GLOW_XFER(b->cross_of[vi]));
            else if (vi < 0 && b->input_index[n->ins[k].node->id] >= 0)
                add_source(src, b->input_index[n->ins[k].node->id]);
        }
    }
    for (int s = 0; s < g->nsaves; s++) {
        const glow_node *o = g->saves[s]->ins[0].node;
        if (g->save_part[s] == p && pt_pos(o) < 0 && b->input_index[o->id] >= 0)
            add_source(src, b->input_index[o->id]);
    }
    if (src->len > 1)
        qsort(src->data, src->len, sizeof *src->data, cmp_source);
}

static glow_value mapped(builder *b, int p, glow_module *m, glow_value v)
{
    int vi = pt_value_of(b->g, v);
    if (vi >= 0)
        return b->newval[vi];
    return glow_val(storage(b, p, m, v.node), v.res);
}

static glow_status build_one(builder *b, int p, glow_diag *d)
{
    pt_graph *g = b->g;
    const pt_range *r = &g->parts[p];
    glow_partition *pt = &b->plan->parts[p];
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    pt->m = m;
    pt->device = r->device;
    pt->nnodes = r->e - r->s;
    pt->weight_bytes = r->weights;
    pt->io_bytes = r->io;
    pt->act_bytes = r->act;
    if (pt->nnodes) {
        pt->first = glow_arena_strdup(&b->plan->arena, g->node[r->s]->name);
        pt->last = glow_arena_strdup(&b->plan->arena, g->node[r->e - 1]->name);
    }

    /* Inputs first: placeholders keep inputs before outputs, in creation order. */
    int_vec src = { 0 };
    collect_sources(b, p, &src);
    pt->ninputs = (int)src.len;
    pt->in_src = glow_xcalloc(src.len + 1, sizeof *pt->in_src);
    int_vec deps = { 0 };
    for (size_t i = 0; i < src.len; i++) {
        int s = src.data[i];
        pt->in_src[i] = s;
        if (s >= 0) {
            storage(b, p, m, g->inputs[s]);
            continue;
        }
        glow_crossing *c = &b->cross.data[GLOW_XFER(s)];
        glow_node *ph = glow_placeholder_create(m, c->name, &c->type, true);
        c->nto++;
        add_source(&deps, c->from);
        b->newval[b->cross_val.data[GLOW_XFER(s)]] = glow_val(ph, 0);
    }
    GLOW_VEC_FREE(src);
    if (deps.len > 1)
        qsort(deps.data, deps.len, sizeof *deps.data, cmp_source);
    pt->ndeps = (int)deps.len;
    pt->deps = deps.data ? deps.data : glow_xcalloc(1, sizeof *pt->deps);

    glow_value ins[64];
    for (int i = r->s; i < r->e; i++) {
        const glow_node *n = g->node[i];
        glow_value *buf = n->nin <= 64 ? ins : glow_xcalloc(n->nin, sizeof *buf);
        for (uint32_t k = 0; k < n->nin; k++)
            buf[k] = mapped(b, p, m, n->ins[k]);
        glow_node *c = glow_node_create(f, n->kind, n->name, buf, (int)n->nin, n->outs,
                                        (int)n->nout);
        if (buf != ins)
            free(buf);
        pt_copy_attrs(c, n);
        for (uint32_t res = 0; res < n->nout; res++)
            b->newval[g->vbase[i] + (int)res] = glow_val(c, res);
    }

    /* Outputs: the model's it computes (model order), then the tensors others read. */
    int_vec dst = { 0 };
    for (int j = 0; j < g->noutputs; j++) {
        for (int s = 0; s < g->nsaves; s++) {
            const glow_node *sv = g->saves[s];
            if (g->save_part[s] != p || sv->ins[1].node != g->outputs[j])
                continue;
            glow_node *ph = storage(b, p, m, g->outputs[j]);
            glow_save_create(f, sv->name, mapped(b, p, m, sv->ins[0]), ph);
            GLOW_VEC_PUSH(dst, j);
            break; /* one writer per output placeholder */
        }
    }
    for (int i = r->s; i < r->e; i++) {
        for (int vi = g->vbase[i]; vi < g->vbase[i + 1]; vi++) {
            if (g->val[vi].last < r->e)
                continue;
            glow_crossing c = { .name = value_name(b, vi), .type = *glow_value_type(g->val[vi].v),
                                .from = p };
            b->cross_of[vi] = (int)b->cross.len;
            GLOW_VEC_PUSH(dst, GLOW_XFER((int)b->cross.len));
            GLOW_VEC_PUSH(b->cross, c);
            GLOW_VEC_PUSH(b->cross_val, vi);
            glow_node *ph = glow_placeholder_create(m, c.name, &c.type, false);
            glow_save_create(f, glow_arena_printf(&b->plan->arena, "save_%s", c.name),
                             b->newval[vi], ph);
        }
    }
    pt->noutputs = (int)dst.len;
    pt->out_dst = dst.data ? dst.data : glow_xcalloc(1, sizeof *pt->out_dst);
    return glow_module_verify(m, d);
}

static void model_tables(builder *b)
{
    glow_partition_plan *plan = b->plan;
    const pt_graph *g = b->g;
    plan->ninputs = g->ninputs;
    plan->noutputs = g->noutputs;
    plan->input_names = glow_xcalloc((size_t)g->ninputs + 1, sizeof *plan->input_names);
    plan->input_types = glow_xcalloc((size_t)g->ninputs + 1, sizeof *plan->input_types);
    plan->output_names = glow_xcalloc((size_t)g->noutputs + 1, sizeof *plan->output_names);
    plan->output_types = glow_xcalloc((size_t)g->noutputs + 1, sizeof *plan->output_types);
    for (int i = 0; i < g->ninputs; i++) {
        plan->input_names[i] = glow_arena_strdup(&plan->arena, g->inputs[i]->name);
        plan->input_types[i] = g->inputs[i]->outs[0];
        b->input_index[g->inputs[i]->id] = i;
        glow_strmap_put(&b->model_names, plan->input_names[i], NULL);
    }
    for (int j = 0; j < g->noutputs; j++) {
        plan->output_names[j] = glow_arena_strdup(&plan->arena, g->outputs[j]->name);
        plan->output_types[j] = g->outputs[j]->outs[0];
        glow_strmap_put(&b->model_names, plan->output_names[j], NULL);
    }
}

glow_status pt_build(pt_graph *g, glow_partition_plan *plan, glow_diag *d)
{
    builder b = { .g = g, .plan = plan };
    b.cross_of = glow_xcalloc((size_t)g->nval + 1, sizeof *b.cross_of);
    b.newval = glow_xcalloc((size_t)g->nval + 1, sizeof *b.newval);
    b.newstore = glow_xcalloc((size_t)g->nids + 1, sizeof *b.newstore);
    b.store_part = glow_xcalloc((size_t)g->nids + 1, sizeof *b.store_part);
    b.input_index = glow_xcalloc((size_t)g->nids + 1, sizeof *b.input_index);
    for (int vi = 0; vi < g->nval; vi++)
        b.cross_of[vi] = -1;
    for (uint32_t id = 0; id <= g->nids; id++)
        b.input_index[id] = -1;
    model_tables(&b);
    plan->nparts = g->nparts;
    plan->parts = glow_xcalloc((size_t)g->nparts + 1, sizeof *plan->parts);
    glow_status st = GLOW_OK;
    for (int p = 0; p < g->nparts && st == GLOW_OK; p++)
        st = build_one(&b, p, d);
    plan->ncross = (int)b.cross.len;
    plan->cross = b.cross.data;
    free(b.cross_of);
    free(b.newval);
    free(b.newstore);
    free(b.store_part);
    free(b.input_index);
    GLOW_VEC_FREE(b.cross_val);
    glow_strmap_free(&b.model_names);
    return st;
}
