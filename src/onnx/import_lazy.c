// import_lazy.c - Lazy control flow (docs/dynamic-shapes.md): an If decided at run time, a
// Loop whose trip count is unknown or large, and a long Scan become one IF or LOOP node whose
// bodies are modules of their own (glow_subgraph_add), run by the evaluator only when taken,
// once per iteration. Scan inputs and scan outputs (of a Loop or a Scan) are LOOP operands and
// results that the evaluator slices, one slice per iteration.
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

/* A body module around ONNX graph g: `nin` inputs ahead of the captures, of which the first
 * `nlead` are not g's (a Scan body's iteration and condition, which it does not read); with
 * `true_cond`, a constant true output ahead of g's `nout` (a Scan never stops early). */
typedef struct body_sig {
    const glow_type *in_types;
    int nin, nlead;
    bool true_cond;
    int nout;
} body_sig;

/* A body being built: its module, its input placeholders (before the captures), the values
 * its outputs save, and the outer values its capture inputs stand for. */
typedef struct body_build {
    glow_module *m;
    glow_node **inputs;
    glow_value *outs;
    glow_type *out_types;   /* the module's outputs (the true condition included) */
    glow_value *captures;
    int ncaptures;
} body_build;

/* Binds the outer value called nm inside the body: constants are copied, computed values
 * become capture inputs. */
static glow_status capture(onnx_ctx *cx, const Onnx__NodeProto *np, const char *scope,
                           onnx_ctx *sub, const char *name, body_build *bb)
{
    const onnx_binding *b = glow_strmap_get(&cx->values, name);
    if (b->poisoned || !b->v.node)
        return GLOW_OK;   /* the body's own import reports the use */
    if (b->count.node)
        return onnx_unsupported(cx, np, "%s reads '%s', which has a data-dependent shape; "
                                "glowc supports such values only as graph outputs", scope,
                                name);
    const glow_type *t = glow_value_type(b->v);
    const char *nm = glow_arena_strdup(sub->arena, name);
    glow_node *v;
    if (b->v.node->kind == NK_CONSTANT) {
        v = glow_constant_create(sub->m, nm, t, b->v.node->payload.data);
    } else {
        v = glow_placeholder_create(sub->m, nm, t, true);
        bb->captures[bb->ncaptures++] = b->v;
    }
    if (!v)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "%s: no memory for '%s'", scope, nm);
    onnx_binding *nb = GLOW_NEW(sub->arena, onnx_binding);
    nb->v = glow_val(v, 0);
    glow_strmap_put(&sub->values, nm, nb);
    return GLOW_OK;
}

/* Imports g into a new module shaped by sig (inputs, then one input per captured computed
 * value; each output saved into an output placeholder). On success bb->m holds the module,
 * not registered yet: body_register or glow_module_destroy. */
static glow_status build_body(onnx_ctx *cx, const Onnx__NodeProto *np, const char *scope,
                              const Onnx__GraphProto *g, const body_sig *sig, body_build *bb)
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
    int nout = sig->nout + sig->true_cond;
    bb->inputs = GLOW_NEW_ARRAY(&cx->scratch, glow_node *, sig->nin + 1);
    bb->outs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nout + 1);
    bb->out_types = GLOW_NEW_ARRAY(&cx->scratch, glow_type, nout + 1);
    glow_value *ins = GLOW_NEW_ARRAY(&cx->scratch, glow_value, sig->nin + 1);
    for (int i = 0; i < sig->nin; i++) {
        const char *nm = glow_arena_printf(sub.arena, "%s/in%d", scope, i);
        bb->inputs[i] = glow_placeholder_create(sub.m, nm, &sig->in_types[i], true);
        ins[i] = glow_val(bb->inputs[i], 0);
    }
    bb->captures = GLOW_NEW_ARRAY(&cx->scratch, glow_value, names.len + 1);
    bb->ncaptures = 0;
    for (size_t i = 0; i < names.len && s == GLOW_OK; i++)
        s = capture(cx, np, scope, &sub, names.data[i], bb);
    if (s == GLOW_OK && sig->true_cond)
        bb->outs[0] = onnx_scalar(&sub, glow_arena_printf(sub.arena, "%s/true", scope),
                                  GLOW_BOOL, 1);
    if (s == GLOW_OK)
        s = onnx_import_graph(&sub, np, scope, g, ins + sig->nlead, sig->nin - sig->nlead,
                              bb->outs + sig->true_cond, sig->nout);
    for (int i = 0; s == GLOW_OK && i < nout; i++) {
        bb->out_types[i] = *glow_value_type(bb->outs[i]);
        const char *nm = glow_arena_printf(sub.arena, "%s/out%d", scope, i);
        glow_node *ph = glow_placeholder_create(sub.m, nm, &bb->out_types[i], false);
        glow_save_create(sub.f, glow_arena_printf(sub.arena, "save_%s", nm), bb->outs[i], ph);
    }
    glow_strmap_free(&sub.values);
    glow_arena_release(&sub.scratch);
    GLOW_VEC_FREE(names);
    if (s != GLOW_OK) {
        glow_module_destroy(sub.m);
        return s;
    }
    bb->m = sub.m;
    return GLOW_OK;
}

/* Hands the module to the registry (owned by the outer module from now on); its id. */
static int64_t body_register(onnx_ctx *cx, body_build *bb)
{
    int64_t id = glow_subgraph_add(cx->m, bb->m);
    bb->m = NULL;
    return id;
}

/* Fails after build_body, dropping the module. */
static glow_status body_drop(body_build *bb, glow_status s)
{
    glow_module_destroy(bb->m);
    bb->m = NULL;
    return s;
}

glow_status onnx_lazy_if(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value cond,
                         const Onnx__GraphProto *then_g, const Onnx__GraphProto *else_g,
                         int nout)
{
    if (nout < 1)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "an If without outputs");
    const char *name = onnx_node_name(np);
    body_sig sig = { .nout = nout };
    body_build bt, be;
    GLOW_TRY(build_body(cx, np, glow_arena_printf(cx->arena, "%s/then", name), then_g, &sig,
                        &bt));
    glow_status s = build_body(cx, np, glow_arena_printf(cx->arena, "%s/else", name), else_g,
                               &sig, &be);
    if (s != GLOW_OK)
        return body_drop(&bt, s);
    for (int i = 0; i < nout; i++) {
        if (!glow_type_equal(&bt.out_types[i], &be.out_types[i])) {
            char sa[128], sb[128];
            s = onnx_unsupported(cx, np, "the condition is only known at run time and "
                                 "output %d differs between the branches (then %s, else %s); "
                                 "glowc needs one type for both", i,
                                 glow_type_str(&bt.out_types[i], sa, sizeof sa),
                                 glow_type_str(&be.out_types[i], sb, sizeof sb));
            body_drop(&be, s);
            return body_drop(&bt, s);
        }
    }
    int nops = 1 + bt.ncaptures + be.ncaptures;
    glow_value *ops = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nops);
    ops[0] = cond;
    memcpy(ops + 1, bt.captures, sizeof *ops * (size_t)bt.ncaptures);
    memcpy(ops + 1 + bt.ncaptures, be.captures, sizeof *ops * (size_t)be.ncaptures);
    int64_t idt = body_register(cx, &bt), ide = body_register(cx, &be);
    glow_attr at[3] = { GLOW_AI(THEN_BRANCH, idt), GLOW_AI(ELSE_BRANCH, ide),
                        GLOW_AI(K, bt.ncaptures) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_IF, ops, nops, at, 3, bt.out_types, nout, &out));
    for (int i = 0; i < nout; i++)
        GLOW_TRY(onnx_set_output(cx, np, i, glow_val(out.node, (uint32_t)i)));
    return GLOW_OK;
}

/* --- LOOP --- */

/* A LOOP node to build: operands (trip count, condition, carried, scan inputs) ahead of the
 * body's captures, and its scan attributes. */
typedef struct loop_parts {
    glow_value trips, cond;
    const glow_value *carried, *scans;
    int n, nscan;               /* carried values, scan inputs */
    const int64_t *in_axes, *in_dirs;
    int nsout;                  /* scan outputs */
    const int64_t *out_axes, *out_dirs;
    int64_t len;                /* the scans' length */
    bool counted;               /* may stop early: scan outputs bounded, a count result */
} loop_parts;

/* The type of scan output slice t stacked `len` times along axis (of the result). */
static glow_type stacked(const glow_type *t, int axis, int64_t len)
{
    glow_type r = *t;
    for (int i = t->rank; i > axis; i--)
        r.dims[i] = t->dims[i - 1];
    r.dims[axis] = len;
    r.rank++;
    return r;
}

/* Checks the body's outputs against the parts and builds the node; the body is dropped on
 * failure. Outputs bound are np's first n + nsout. */
static glow_status emit_loop(onnx_ctx *cx, const Onnx__NodeProto *np, body_build *bb,
                             const loop_parts *lp)
{
    int n = lp->n, nres = lp->n + lp->nsout + lp->counted;
    const glow_type *cond_t = &bb->out_types[0];
    if (cond_t->dtype != GLOW_BOOL || glow_type_numel(cond_t) != 1)
        return body_drop(bb, onnx_unsupported(cx, np, "the body's condition output is not "
                                              "one bool"));
    glow_type *res = GLOW_NEW_ARRAY(&cx->scratch, glow_type, nres + 1);
    for (int i = 0; i < n; i++) {
        const glow_type *in = glow_value_type(lp->carried[i]);
        res[i] = bb->out_types[1 + i];
        if (!glow_type_equal(&res[i], in)) {
            char sa[128], sb[128];
            return body_drop(bb, onnx_unsupported(cx, np, "carried value %d changes its type "
                                                  "in the body (%s to %s); glowc needs one "
                                                  "type for every iteration", i,
                                                  glow_type_str(in, sa, sizeof sa),
                                                  glow_type_str(&res[i], sb, sizeof sb)));
        }
    }
    for (int k = 0; k < lp->nsout; k++) {
        const glow_type *t = &bb->out_types[1 + n + k];
        if (t->rank + 1 > GLOW_MAX_DIMS)
            return body_drop(bb, onnx_unsupported(cx, np, "scan output %d stacks rank-%d "
                                                  "slices (at most %d dims)", k, t->rank,
                                                  GLOW_MAX_DIMS));
        if (lp->out_axes[k] < 0 || lp->out_axes[k] > t->rank)
            return body_drop(bb, onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "scan output %d: axis "
                                           "%lld for rank-%d slices", k,
                                           (long long)lp->out_axes[k], t->rank));
        res[n + k] = stacked(t, (int)lp->out_axes[k], lp->len);
    }
    if (lp->counted)
        res[nres - 1] = glow_type_scalar(GLOW_I64);
    int nops = 2 + n + lp->nscan + bb->ncaptures;
    glow_value *ops = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nops);
    ops[0] = lp->trips;
    ops[1] = lp->cond;
    memcpy(ops + 2, lp->carried, sizeof *ops * (size_t)n);
    if (lp->nscan)   /* a Loop has no scan inputs (NULL) */
        memcpy(ops + 2 + n, lp->scans, sizeof *ops * (size_t)lp->nscan);
    memcpy(ops + 2 + n + lp->nscan, bb->captures, sizeof *ops * (size_t)bb->ncaptures);
    int64_t id = body_register(cx, bb);
    glow_attr at[8] = { GLOW_AI(BODY, id), GLOW_AI(K, n) };
    int nat = 2;
    if (lp->nscan) {
        at[nat++] = GLOW_AI(SCAN_INPUTS, lp->nscan);
        at[nat++] = GLOW_AINTS(SCAN_IN_AXES, lp->in_axes, lp->nscan);
        at[nat++] = GLOW_AINTS(SCAN_IN_DIRS, lp->in_dirs, lp->nscan);
    }
    if (lp->nsout) {
        at[nat++] = GLOW_AINTS(SCAN_OUT_AXES, lp->out_axes, lp->nsout);
        at[nat++] = GLOW_AINTS(SCAN_OUT_DIRS, lp->out_dirs, lp->nsout);
    }
    if (lp->counted)
        at[nat++] = GLOW_AI(SCAN_COUNT, 1);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_LOOP, ops, nops, at, nat, res, nres, &out));
    /* A counted LOOP's scan outputs are bounded values (axis 0 has `count` slices), so a
     * graph output gets its hidden count and consumers go through import_bnd.c's rules. */
    glow_value count = glow_val(out.node, (uint32_t)(nres - 1));
    for (int i = 0; i < n + lp->nsout && i < (int)np->n_output; i++) {
        glow_value v = glow_val(out.node, (uint32_t)i);
        if (lp->counted && i >= n)
            GLOW_TRY(onnx_set_output_bounded(cx, np, i, v, count, 0));
        else if (onnx_has_output(np, i))
            GLOW_TRY(onnx_set_output(cx, np, i, v));
    }
    return GLOW_OK;
}

static bool const_true(glow_value v)
{
    return v.node->kind == NK_CONSTANT && glow_type_numel(glow_value_type(v)) == 1 &&
           glow_load_i64(glow_value_type(v)->dtype, v.node->payload.data, 0) != 0;
}

/* Whether value v of a body module is the constant true or its condition input, i.e. the
 * body never ends the loop itself. */
static bool never_stops(const body_build *bb, glow_value v)
{
    if (v.node == bb->inputs[1])
        return true;
    return const_true(v);
}

glow_status onnx_lazy_loop(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *g,
                           glow_value trips, glow_value cond, const glow_value *carried, int n,
                           int nsout, int64_t len, bool *declined)
{
    if (declined)
        *declined = false;
    if (n + nsout < 1)
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "a Loop without outputs to run");
    glow_type *in_types = GLOW_NEW_ARRAY(&cx->scratch, glow_type, n + 2);
    in_types[0] = glow_type_scalar(GLOW_I64);
    in_types[1] = glow_type_scalar(GLOW_BOOL);
    for (int i = 0; i < n; i++)
        in_types[2 + i] = *glow_value_type(carried[i]);
    body_sig sig = { .in_types = in_types, .nin = 2 + n, .nout = 1 + n + nsout };
    body_build bb;
    GLOW_TRY(build_body(cx, np, glow_arena_printf(cx->arena, "%s/body", onnx_node_name(np)), g,
                        &sig, &bb));
    /* Scan outputs are sized for `len` iterations. When the body may end the loop sooner (or
     * the first condition may be false) that size is their bound and the LOOP counts the
     * iterations it ran (docs/dynamic-shapes.md). */
    bool counted = nsout && (!never_stops(&bb, bb.outs[0]) || !const_true(cond));
    if (counted && declined) {
        *declined = true;
        return body_drop(&bb, GLOW_OK);
    }
    int64_t *zeros = GLOW_NEW_ARRAY(&cx->scratch, int64_t, nsout + 1);
    loop_parts lp = { .trips = trips, .cond = cond, .carried = carried, .n = n,
                      .nsout = nsout, .out_axes = zeros, .out_dirs = zeros, .len = len,
                      .counted = counted };
    return emit_loop(cx, np, &bb, &lp);
}

glow_status onnx_lazy_scan(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *g,
                           const onnx_scan_spec *sp, const glow_value *states,
                           const glow_value *scans, int64_t len)
{
    int N = sp->N, M = sp->M, K = sp->K;
    glow_type *in_types = GLOW_NEW_ARRAY(&cx->scratch, glow_type, 2 + N + M);
    in_types[0] = glow_type_scalar(GLOW_I64);
    in_types[1] = glow_type_scalar(GLOW_BOOL);
    for (int i = 0; i < N; i++)
        in_types[2 + i] = *glow_value_type(states[i]);
    for (int j = 0; j < M; j++) {
        const glow_type *t = glow_value_type(scans[j]);
        glow_type e = *t;
        int a = (int)sp->in_axes[j];
        for (int i = a; i + 1 < t->rank; i++)
            e.dims[i] = t->dims[i + 1];
        e.dims[--e.rank] = 0;
        in_types[2 + N + j] = e;
    }
    body_sig sig = { .in_types = in_types, .nin = 2 + N + M, .nlead = 2, .true_cond = true,
                     .nout = N + K };
    body_build bb;
    GLOW_TRY(build_body(cx, np, glow_arena_printf(cx->arena, "%s/body", onnx_node_name(np)), g,
                        &sig, &bb));
    /* Output axes may count from the end of the stacked rank. */
    int64_t *out_axes = GLOW_NEW_ARRAY(&cx->scratch, int64_t, K + 1);
    for (int k = 0; k < K; k++) {
        int r = bb.out_types[1 + N + k].rank + 1;
        out_axes[k] = sp->out_axes[k] < 0 ? sp->out_axes[k] + r : sp->out_axes[k];
    }
    glow_value trips = onnx_sub_scalar(cx, np, "length", GLOW_I64, (double)len);
    glow_value always = onnx_sub_scalar(cx, np, "true", GLOW_BOOL, 1);
    loop_parts lp = { .trips = trips, .cond = always, .carried = states, .n = N,
                      .scans = scans, .nscan = M, .in_axes = sp->in_axes,
                      .in_dirs = sp->in_rev, .nsout = K, .out_axes = out_axes,
                      .out_dirs = sp->out_rev, .len = len };
    return emit_loop(cx, np, &bb, &lp);
}
