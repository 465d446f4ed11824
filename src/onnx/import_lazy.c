// import_lazy.c - Lazy control flow (docs/dynamic-shapes.md): an If decided at run time and a
// Loop whose trip count is unknown or large become one IF or LOOP node whose bodies are modules
// of their own (glow_subgraph_add), run by the evaluator only when taken, once per iteration.
//
// A body may read any value of the enclosing scopes by name. Those names are found before the
// body is imported (free_names): outer constants are copied into the body module, and computed
// values become body inputs, passed as operands of the node (its "captures"). The body is then
// imported by the ordinary subgraph importer into the new module, under a context of its own.
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

typedef GLOW_VEC(const char *) name_vec;

/* Every name a graph's nodes read, nested graphs included, in first-use order. */
static void used_names(const Onnx__GraphProto *g, glow_strmap *seen, name_vec *out, int depth)
{
    if (depth > ONNX_MAX_NESTING)
        return;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *np = g->node[i];
        for (size_t k = 0; k < np->n_input; k++) {
            const char *nm = np->input[k];
            if (nm && *nm && !glow_strmap_has(seen, nm)) {
                glow_strmap_put(seen, nm, NULL);
                GLOW_VEC_PUSH(*out, nm);
            }
        }
        for (size_t a = 0; a < np->n_attribute; a++) {
            const Onnx__AttributeProto *at = np->attribute[a];
            if (at->g)
                used_names(at->g, seen, out, depth + 1);
            for (size_t j = 0; j < at->n_graphs; j++)
                used_names(at->graphs[j], seen, out, depth + 1);
        }
    }
    for (size_t i = 0; i < g->n_output; i++) {
        const char *nm = g->output[i]->name;
        if (nm && *nm && !glow_strmap_has(seen, nm)) {
            glow_strmap_put(seen, nm, NULL);
            GLOW_VEC_PUSH(*out, nm);
        }
    }
}

/* The names g reads from enclosing scopes: used, not defined by g itself, and bound outside. */
static void free_names(onnx_ctx *cx, const Onnx__GraphProto *g, name_vec *out)
{
    glow_strmap seen = { 0 }, own = { 0 };
    name_vec used = { 0 };
    used_names(g, &seen, &used, 0);
    for (size_t i = 0; i < g->n_input; i++)
        if (g->input[i]->name)
            glow_strmap_put(&own, g->input[i]->name, NULL);
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name)
            glow_strmap_put(&own, g->initializer[i]->name, NULL);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (g->node[i]->output[k] && *g->node[i]->output[k])
                glow_strmap_put(&own, g->node[i]->output[k], NULL);
    for (size_t i = 0; i < used.len; i++)
        if (!glow_strmap_has(&own, used.data[i]) && glow_strmap_get(&cx->values, used.data[i]))
            GLOW_VEC_PUSH(*out, used.data[i]);
    GLOW_VEC_FREE(used);
    glow_strmap_free(&seen);
    glow_strmap_free(&own);
}

/* A body being built: its module, and the outer values its capture inputs stand for. */
typedef struct body_build {
    glow_module *m;
    glow_value *captures;
    int ncaptures;
} body_build;

/* Imports graph g into a new module: inputs (types `in_types`, the body's graph inputs) come
 * first, then one input per captured computed value; each output becomes an output
 * placeholder. out_types gets the output types. On success bb->m is registered and *id set. */
static glow_status build_body(onnx_ctx *cx, const Onnx__NodeProto *np, const char *scope,
                              const Onnx__GraphProto *g, const glow_type *in_types, int nin,
                              glow_type *out_types, int nout, body_build *bb, int64_t *id)
{
    name_vec names = { 0 };
    free_names(cx, g, &names);
    onnx_ctx sub = *cx;
    sub.m = glow_module_create();
    sub.f = glow_function_create(sub.m, "main");
    sub.arena = &sub.m->arena;
    sub.values = (glow_strmap){ 0 };
    sub.opt = NULL;   /* the known input values belong to the outer module's placeholders */
    sub.dq_consts = NULL;
    sub.scratch = (glow_arena){ 0 };
    glow_status s = GLOW_OK;
    glow_value *ins = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nin + 1);
    for (int i = 0; i < nin; i++) {
        const char *nm = glow_arena_printf(sub.arena, "%s/in%d", scope, i);
        ins[i] = glow_val(glow_placeholder_create(sub.m, nm, &in_types[i], true), 0);
    }
    bb->captures = GLOW_NEW_ARRAY(&cx->scratch, glow_value, names.len + 1);
    bb->ncaptures = 0;
    for (size_t i = 0; i < names.len && s == GLOW_OK; i++) {
        const onnx_binding *b = glow_strmap_get(&cx->values, names.data[i]);
        if (b->poisoned || !b->v.node)
            continue;   /* the body's own import reports the use */
        if (b->count.node) {
            s = onnx_unsupported(cx, np, "%s reads '%s', which has a data-dependent shape; "
                                 "glowc supports such values only as graph outputs", scope,
                                 names.data[i]);
            break;
        }
        const glow_type *t = glow_value_type(b->v);
        const char *nm = glow_arena_strdup(sub.arena, names.data[i]);
        glow_node *v;
        if (b->v.node->kind == NK_CONSTANT) {
            v = glow_constant_create(sub.m, nm, t, b->v.node->payload.data);
        } else {
            v = glow_placeholder_create(sub.m, nm, t, true);
            bb->captures[bb->ncaptures++] = b->v;
        }
        if (!v) {
            s = onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "%s: no memory for '%s'", scope, nm);
            break;
        }
        onnx_binding *nb = GLOW_NEW(sub.arena, onnx_binding);
        nb->v = glow_val(v, 0);
        glow_strmap_put(&sub.values, nm, nb);
    }
    glow_value *outs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nout + 1);
    if (s == GLOW_OK)
        s = onnx_import_graph(&sub, np, scope, g, ins, nin, outs, nout);
    for (int i = 0; s == GLOW_OK && i < nout; i++) {
        out_types[i] = *glow_value_type(outs[i]);
        const char *nm = glow_arena_printf(sub.arena, "%s/out%d", scope, i);
        glow_node *ph = glow_placeholder_create(sub.m, nm, &out_types[i], false);
        glow_save_create(sub.f, glow_arena_printf(sub.arena, "save_%s", nm), outs[i], ph);
    }
    glow_strmap_free(&sub.values);
    glow_arena_release(&sub.scratch);
    GLOW_VEC_FREE(names);
    if (s != GLOW_OK) {
        glow_module_destroy(sub.m);
        return s;
    }
    bb->m = sub.m;
    *id = glow_subgraph_add(cx->m, sub.m);
    return GLOW_OK;
}

glow_status onnx_lazy_if(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value cond,
                         const Onnx__GraphProto *then_g, const Onnx__GraphProto *else_g,
                         int nout)
{
    if (nout < 1 || nout > 3)
        return onnx_unsupported(cx, np, "a lazy If has 1 to 3 outputs, not %d", nout);
    const char *name = onnx_node_name(np);
    glow_type tt[3], te[3];
    body_build bt, be;
    int64_t idt, ide;
    GLOW_TRY(build_body(cx, np, glow_arena_printf(cx->arena, "%s/then", name), then_g, NULL, 0,
                        tt, nout, &bt, &idt));
    GLOW_TRY(build_body(cx, np, glow_arena_printf(cx->arena, "%s/else", name), else_g, NULL, 0,
                        te, nout, &be, &ide));
    for (int i = 0; i < nout; i++) {
        if (!glow_type_equal(&tt[i], &te[i])) {
            char sa[128], sb[128];
            return onnx_unsupported(cx, np, "the condition is only known at run time and "
                                    "output %d differs between the branches (then %s, else %s); "
                                    "glowc needs one type for both", i,
                                    glow_type_str(&tt[i], sa, sizeof sa),
                                    glow_type_str(&te[i], sb, sizeof sb));
        }
    }
    int nops = 1 + bt.ncaptures + be.ncaptures;
    if (nops > 64)
        return onnx_unsupported(cx, np, "the branches read %d outer values (at most 63)",
                                nops - 1);
    glow_value *ops = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nops);
    ops[0] = cond;
    memcpy(ops + 1, bt.captures, sizeof *ops * (size_t)bt.ncaptures);
    memcpy(ops + 1 + bt.ncaptures, be.captures, sizeof *ops * (size_t)be.ncaptures);
    glow_attr at[3] = { GLOW_AI(THEN_BRANCH, idt), GLOW_AI(ELSE_BRANCH, ide),
                        GLOW_AI(K, bt.ncaptures) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_IF, ops, nops, at, 3, tt, nout, &out));
    for (int i = 0; i < nout; i++)
        GLOW_TRY(onnx_set_output(cx, np, i, glow_val(out.node, (uint32_t)i)));
    return GLOW_OK;
}

glow_status onnx_lazy_loop(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *g,
                           glow_value trips, glow_value cond, const glow_value *carried, int n)
{
    if (n < 1 || n > 3)
        return onnx_unsupported(cx, np, "a Loop run as a loop carries 1 to 3 values, not %d", n);
    glow_type in_types[5], out_types[4];
    in_types[0] = glow_type_scalar(GLOW_I64);
    in_types[1] = glow_type_scalar(GLOW_BOOL);
    for (int i = 0; i < n; i++)
        in_types[2 + i] = *glow_value_type(carried[i]);
    body_build bb;
    int64_t id;
    GLOW_TRY(build_body(cx, np, glow_arena_printf(cx->arena, "%s/body", onnx_node_name(np)), g,
                        in_types, 2 + n, out_types, 1 + n, &bb, &id));
    if (out_types[0].dtype != GLOW_BOOL || glow_type_numel(&out_types[0]) != 1)
        return onnx_unsupported(cx, np, "the body's condition output is not one bool");
    for (int i = 0; i < n; i++) {
        if (!glow_type_equal(&out_types[1 + i], &in_types[2 + i])) {
            char sa[128], sb[128];
            return onnx_unsupported(cx, np, "carried value %d changes its type in the body "
                                    "(%s to %s); glowc needs one type for every iteration", i,
                                    glow_type_str(&in_types[2 + i], sa, sizeof sa),
                                    glow_type_str(&out_types[1 + i], sb, sizeof sb));
        }
    }
    int nops = 2 + n + bb.ncaptures;
    if (nops > 64)
        return onnx_unsupported(cx, np, "the body reads %d outer values (at most %d)",
                                bb.ncaptures, 62 - n);
    glow_value *ops = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nops);
    ops[0] = trips;
    ops[1] = cond;
    memcpy(ops + 2, carried, sizeof *ops * (size_t)n);
    memcpy(ops + 2 + n, bb.captures, sizeof *ops * (size_t)bb.ncaptures);
    glow_attr at[2] = { GLOW_AI(BODY, id), GLOW_AI(K, n) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_LOOP, ops, nops, at, 2, in_types + 2, n, &out));
    for (int i = 0; i < n; i++)
        GLOW_TRY(onnx_set_output(cx, np, i, glow_val(out.node, (uint32_t)i)));
    return GLOW_OK;
}
