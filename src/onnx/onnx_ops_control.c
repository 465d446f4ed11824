// onnx_ops_control.c - Control flow: subgraph import, If (inlined, lazy, or selected with Where),
// and Loop / Scan unrolled over trip counts known at import (or run as a loop, import_lazy.c).
//
// An If whose condition is constant after import folding keeps only the chosen branch, inline.
// One decided at run time becomes a lazy IF node whose branches are bodies of their own
// (import_lazy.c; only the taken one runs); only branches giving sequences or optionals (which
// exist at import alone) are both imported and selected with WHERE. Loop and Scan are unrolled
// when their counts are known and small (at most LAZY_TRIPS): the body is imported once per
// iteration with its inputs bound to the values of the previous one, so later stages see plain
// dataflow. Longer ones become one LOOP node: a Loop whose count or condition is known only at
// run time, or whose count is large (with scan outputs: a known count, which is their length,
// or their bound when the body may stop early), and a Scan-9 whose length is large.
// What is left (scan outputs of a Loop whose count is unknown: their length has no bound) is
// reported as unsupported naming the node.
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Limits on unrolling, so a model cannot make the importer build an unbounded graph. */
#define MAX_ITERATIONS 10000
#define MAX_UNROLLED_NODES 10000

enum { AT_GRAPH = 5 };

/* --- scoped names --- */

/* A name bound inside a subgraph and what it meant before, restored on the way out. */
typedef struct saved_name {
    const char *name;
    void *old;
} saved_name;

typedef GLOW_VEC(saved_name) scope_log;

static void scope_note(onnx_ctx *cx, scope_log *log, const char *name)
{
    if (!name || !*name)
        return;
    saved_name s = { name, glow_strmap_get(&cx->values, name) };
    GLOW_VEC_PUSH(*log, s);
}

static void scope_bind(onnx_ctx *cx, scope_log *log, const char *name, glow_value v)
{
    if (!name || !*name)
        return;
    scope_note(cx, log, name);
    onnx_binding *b = GLOW_NEW(cx->arena, onnx_binding);
    b->v = v;
    glow_strmap_put(&cx->values, name, b);
}

/* Undoes the bindings in reverse order, so a name bound twice gets its outer meaning back
 * (NULL for names the outer scope did not have). */
static void scope_restore(onnx_ctx *cx, scope_log *log)
{
    for (size_t i = log->len; i-- > 0;)
        glow_strmap_put(&cx->values, log->data[i].name, log->data[i].old);
    GLOW_VEC_FREE(*log);
}

static bool default_domain(const char *dom)
{
    return !dom || !*dom || strcmp(dom, "ai.onnx") == 0;
}

static glow_status import_initializers(onnx_ctx *cx, const Onnx__NodeProto *owner,
                                       const char *scope, const Onnx__GraphProto *g,
                                       scope_log *log)
{
    if (g->n_sparse_initializer)
        return onnx_unsupported(cx, owner, "%s has sparse initializers", scope);
    for (size_t i = 0; i < g->n_initializer; i++) {
        const Onnx__TensorProto *tp = g->initializer[i];
        const char *name = tp->name ? tp->name : "";
        glow_tensor t;
        GLOW_TRY(onnx_tensor_from_proto(tp, &cx->scratch, &t, name, cx->d));
        const char *cname = glow_arena_printf(cx->arena, "%s/%s", scope, name);
        glow_node *c = glow_constant_create(cx->m, cname, &t.type, t.data);
        if (!c)
            return onnx_fail(cx, owner, GLOW_ERR_TOO_LARGE, "%s: initializer '%s' does not fit "
                             "in memory", scope, name);
        scope_bind(cx, log, name, glow_val(c, 0));
    }
    return GLOW_OK;
}

/* Loads one node of a subgraph under a scoped name, as the driver would at top level. */
static glow_status import_node(onnx_ctx *cx, const Onnx__NodeProto *owner, const char *scope,
                               const Onnx__NodeProto *inner, size_t index, scope_log *log)
{
    const char *op = inner->op_type ? inner->op_type : "?";
    Onnx__NodeProto copy = *inner;
    if (inner->name && *inner->name)
        copy.name = glow_arena_printf(cx->arena, "%s/%s", scope, inner->name);
    else
        copy.name = glow_arena_printf(cx->arena, "%s/%s#%zu", scope, op, index);
    const onnx_op *row = default_domain(inner->domain) ? onnx_find_op(op, cx->opset) : NULL;
    if (!row)
        return onnx_unsupported(cx, owner, "%s uses op %s%s%s (node '%s'), which glowc does not "
                                "support at opset %d", scope,
                                default_domain(inner->domain) ? "" : inner->domain,
                                default_domain(inner->domain) ? "" : ".", op, copy.name,
                                cx->opset);
    for (size_t k = 0; k < inner->n_output; k++)
        scope_note(cx, log, inner->output[k]);
    /* The inner node gets its own naming counters; the owner's resume afterwards. */
    int nbuilt = cx->nbuilt;
    bool main_built = cx->main_built;
    cx->nbuilt = 0;
    cx->main_built = false;
    glow_status s = row->fn(cx, &copy, cx->opset, row->kind);
    cx->nbuilt = nbuilt;
    cx->main_built = main_built;
    if (s != GLOW_OK)
        return s;
    for (size_t k = 0; k < inner->n_output; k++) {
        if (!onnx_has_output(inner, (int)k))
            continue;
        const onnx_binding *b = glow_strmap_get(&cx->values, inner->output[k]);
        if (!b || b->poisoned || !b->v.node)
            return onnx_fail(cx, &copy, GLOW_ERR_UNSUPPORTED, "output %zu '%s' is not produced "
                             "by glowc's loader", k, inner->output[k]);
    }
    return GLOW_OK;
}

static glow_status import_body(onnx_ctx *cx, const Onnx__NodeProto *owner, const char *scope,
                               const Onnx__GraphProto *g, const glow_value *ins, int nin,
                               glow_value *outs, int nout, scope_log *log)
{
    if (g->n_input != (size_t)nin)
        return onnx_fail(cx, owner, GLOW_ERR_PARSE, "%s has %zu inputs, expected %d", scope,
                         g->n_input, nin);
    if (g->n_output != (size_t)nout)
        return onnx_fail(cx, owner, GLOW_ERR_PARSE, "%s has %zu outputs, expected %d", scope,
                         g->n_output, nout);
    GLOW_TRY(import_initializers(cx, owner, scope, g, log));
    /* Inputs come after initializers: a body input shadows an initializer of the same name. */
    for (int i = 0; i < nin; i++)
        scope_bind(cx, log, g->input[i]->name, ins[i]);
    for (size_t i = 0; i < g->n_node; i++)
        GLOW_TRY(import_node(cx, owner, scope, g->node[i], i, log));
    for (int i = 0; i < nout; i++) {
        const char *name = g->output[i]->name ? g->output[i]->name : "";
        const onnx_binding *b = glow_strmap_get(&cx->values, name);
        if (!b || b->poisoned || !b->v.node)
            return onnx_fail(cx, owner, GLOW_ERR_NOT_FOUND, "%s: output '%s' is not produced by "
                             "any node, initializer or input", scope, name);
        if (b->count.node)
            return onnx_unsupported(cx, owner, "%s: output '%s' has a data-dependent shape; "
                                    "glowc supports such values only as graph outputs", scope,
                                    name);
        outs[i] = b->v;
    }
    return GLOW_OK;
}

glow_status onnx_import_graph(onnx_ctx *cx, const Onnx__NodeProto *owner, const char *scope,
                              const Onnx__GraphProto *g, const glow_value *ins, int nin,
                              glow_value *outs, int nout)
{
    scope_log log = { 0 };
    glow_status s = import_body(cx, owner, scope, g, ins, nin, outs, nout, &log);
    scope_restore(cx, &log);
    if (s != GLOW_OK && cx->d && !strstr(cx->d->msg, scope))
        onnx_fail(cx, owner, s, "while importing %s", scope);
    return s;
}

/* --- shared helpers --- */

glow_status onnx_concat_many(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_value *vs,
                             int n, int axis, glow_value *out)
{
    enum { CHUNK = 64 };   /* CONCAT's operand limit (nodes.def) */
    if (n < 1)
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "concatenation of nothing");
    if (n == 1) {
        *out = vs[0];
        return GLOW_OK;
    }
    glow_attr a = GLOW_AI(AXIS, axis);
    if (n <= CHUNK)
        return onnx_build(cx, np, NK_CONCAT, vs, n, &a, 1, NULL, 0, out);
    int nparts = (n + CHUNK - 1) / CHUNK;
    glow_value *parts = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nparts);
    for (int p = 0; p < nparts; p++) {
        int k = n - p * CHUNK < CHUNK ? n - p * CHUNK : CHUNK;
        GLOW_TRY(onnx_concat_many(cx, np, vs + p * CHUNK, k, axis, &parts[p]));
    }
    return onnx_concat_many(cx, np, parts, nparts, axis, out);
}

glow_status onnx_slice_axis(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int axis,
                            int64_t start, int64_t end, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    if (axis < 0 || axis >= t->rank || start < 0 || start > end || end > t->dims[axis])
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "slice [%lld, %lld) of axis %d is out of "
                         "range", (long long)start, (long long)end, axis);
    if (start == 0 && end == t->dims[axis]) {
        *out = v;
        return GLOW_OK;
    }
    int64_t st[GLOW_MAX_DIMS], en[GLOW_MAX_DIMS], sp[GLOW_MAX_DIMS];
    for (int k = 0; k < t->rank; k++) {
        st[k] = k == axis ? start : 0;
        en[k] = k == axis ? end : t->dims[k];
        sp[k] = 1;
    }
    glow_attr a[3] = {
        GLOW_AINTS(STARTS, st, t->rank), GLOW_AINTS(ENDS, en, t->rank),
        GLOW_AINTS(STEPS, sp, t->rank),
    };
    return onnx_build(cx, np, NK_SLICE, &v, 1, a, 3, NULL, 0, out);
}

/* Element `index` of v along `axis`, with that axis removed. */
static glow_status take(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int axis,
                        int64_t index, glow_value *out)
{
    glow_value s;
    GLOW_TRY(onnx_slice_axis(cx, np, v, axis, index, index + 1, &s));
    const glow_type *t = glow_value_type(s);
    int64_t dims[GLOW_MAX_DIMS];
    int r = 0;
    for (int k = 0; k < t->rank; k++)
        if (k != axis)
            dims[r++] = t->dims[k];
    return onnx_reshape(cx, np, s, r, dims, out);
}

/* v with a dimension of 1 inserted at `axis` (may be negative, counted on the new rank). */
static glow_status insert_axis(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                               int64_t axis, int *norm, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    if (t->rank + 1 > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "stacking rank-%d values needs more than %d dims",
                                t->rank, GLOW_MAX_DIMS);
    int a;
    GLOW_TRY(onnx_axis(cx, np, axis, t->rank + 1, &a));
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0, j = 0; k <= t->rank; k++)
        dims[k] = k == a ? 1 : t->dims[j++];
    *norm = a;
    return onnx_reshape(cx, np, v, t->rank + 1, dims, out);
}

/* Stacks n values along a new axis (reversed order when `rev`). */
static glow_status stack(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_value *vs, int n,
                         int64_t axis, bool rev, glow_value *out)
{
    glow_value *parts = GLOW_NEW_ARRAY(&cx->scratch, glow_value, n);
    int a = 0;
    for (int i = 0; i < n; i++)
        GLOW_TRY(insert_axis(cx, np, vs[rev ? n - 1 - i : i], axis, &a, &parts[i]));
    return onnx_concat_many(cx, np, parts, n, a, out);
}

/* The value of a single-element constant, or false when v is computed at run time. */
static bool const_scalar(glow_value v, int64_t *out)
{
    if (v.node->kind != NK_CONSTANT || glow_type_numel(glow_value_type(v)) != 1)
        return false;
    glow_dtype dt = glow_value_type(v)->dtype;
    if (glow_dtype_is_float(dt))
        *out = glow_load_f64(dt, v.node->payload.data, 0) != 0;
    else if (glow_dtype_is_int(dt) || dt == GLOW_BOOL)
        *out = glow_load_i64(dt, v.node->payload.data, 0);
    else
        return false;
    return true;
}

static glow_status graph_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                              const Onnx__GraphProto **g)
{
    GLOW_TRY(onnx_attr_check(cx, np, name, AT_GRAPH));
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    if (!a || !a->g)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required graph attribute '%s'",
                         name);
    *g = a->g;
    return GLOW_OK;
}

static uint32_t graph_size(onnx_ctx *cx)
{
    return cx->f->nodes.count + cx->m->constants.count;
}

static glow_status check_budget(onnx_ctx *cx, const Onnx__NodeProto *np, uint32_t start,
                                int64_t iteration)
{
    if (iteration >= MAX_ITERATIONS)
        return onnx_unsupported(cx, np, "more than %d iterations to unroll", MAX_ITERATIONS);
    if (graph_size(cx) - start > MAX_UNROLLED_NODES)
        return onnx_unsupported(cx, np, "unrolling stopped at iteration %lld: more than %d "
                                "nodes", (long long)iteration, MAX_UNROLLED_NODES);
    return GLOW_OK;
}

/* --- If --- */

/* Whether a branch declares a sequence or optional output (an untyped output counts too:
 * it may be one). */
static bool gives_containers(const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_output; i++) {
        const Onnx__TypeProto *tp = g->output[i]->type;
        if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
            tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
            return true;
    }
    return false;
}

glow_status load_if(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    (void)opset;
    const Onnx__GraphProto *then_g = NULL, *else_g = NULL;
    GLOW_TRY(graph_attr(cx, np, "then_branch", &then_g));
    GLOW_TRY(graph_attr(cx, np, "else_branch", &else_g));
    glow_value cond;
    GLOW_TRY(onnx_input(cx, np, 0, &cond));
    int nout = (int)np->n_output;
    if (nout > 1024)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "%d outputs", nout);
    if (glow_type_numel(glow_value_type(cond)) != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "the condition must hold one element");
    glow_value *a = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nout + 1);
    glow_value *b = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nout + 1);
    const char *name = onnx_node_name(np);
    int64_t c;
    if (const_scalar(cond, &c)) {
        const Onnx__GraphProto *g = c ? then_g : else_g;
        const char *scope = glow_arena_printf(cx->arena, "%s/%s", name, c ? "then" : "else");
        GLOW_TRY(onnx_import_graph(cx, np, scope, g, NULL, 0, a, nout));
        for (int i = 0; i < nout; i++)
            GLOW_TRY(onnx_set_output(cx, np, i, a[i]));
        return GLOW_OK;
    }
    if (glow_value_type(cond)->dtype != GLOW_BOOL)
        GLOW_TRY(onnx_cast(cx, np, cond, GLOW_BOOL, &cond));
    int64_t no_dims[1] = { 0 };
    GLOW_TRY(onnx_reshape(cx, np, cond, 0, no_dims, &cond));
    /* Tensor outputs: only the taken branch runs. Sequences and optionals exist only at
     * import, so they are selected below. */
    if (nout >= 1 && !gives_containers(then_g) && !gives_containers(else_g))
        return onnx_lazy_if(cx, np, cond, then_g, else_g, nout);
    GLOW_TRY(onnx_import_graph(cx, np, glow_arena_printf(cx->arena, "%s/then", name), then_g,
                               NULL, 0, a, nout));
    GLOW_TRY(onnx_import_graph(cx, np, glow_arena_printf(cx->arena, "%s/else", name), else_g,
                               NULL, 0, b, nout));
    for (int i = 0; i < nout; i++) {
        if (!onnx_has_output(np, i))
            continue;
        if (onnx_seq_of(a[i]) || onnx_seq_of(b[i])) {
            glow_value sel;
            GLOW_TRY(onnx_seq_select(cx, np, i, cond, a[i], b[i], &sel));
            GLOW_TRY(onnx_set_output(cx, np, i, sel));
            continue;
        }
        const glow_type *ta = glow_value_type(a[i]), *tb = glow_value_type(b[i]);
        if (!glow_type_equal(ta, tb)) {
            char sa[128], sb[128];
            return onnx_unsupported(cx, np, "the condition is only known at run time and "
                                    "output %d differs between the branches (then %s, else %s); "
                                    "glowc can only select between identical types", i,
                                    glow_type_str(ta, sa, sizeof sa),
                                    glow_type_str(tb, sb, sizeof sb));
        }
        glow_value sel, ins[3] = { cond, a[i], b[i] };
        GLOW_TRY(onnx_broadcast_to(cx, np, cond, ta->rank, ta->dims, &ins[0]));
        GLOW_TRY(onnx_build(cx, np, NK_WHERE, ins, 3, NULL, 0, NULL, 0, &sel));
        GLOW_TRY(onnx_set_output(cx, np, i, sel));
    }
    return GLOW_OK;
}

/* --- Loop --- */

/* Larger trip counts (and Scan lengths) run as a loop instead of being unrolled. Up to this,
 * unrolling gives the optimizer and the cpu kernels straight-line code, and the graph stays
 * small (64 copies of a body); beyond, import time and code size would grow with the count. */
#define LAZY_TRIPS 64

/* onnx_lazy_loop with M and cond made scalars (absent: no limit, true). */
static glow_status lazy_loop(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *g,
                             glow_value m, glow_value c, const glow_value *carried, int n,
                             int nsout, int64_t len, bool *declined)
{
    int64_t no_dims[1] = { 0 };
    if (!m.node)
        m = onnx_sub_scalar(cx, np, "no_limit", GLOW_I64, 9.2e18);
    else if (glow_value_type(m)->dtype != GLOW_I64)
        GLOW_TRY(onnx_cast(cx, np, m, GLOW_I64, &m));
    if (!c.node)
        c = onnx_sub_scalar(cx, np, "true", GLOW_BOOL, 1);
    else if (glow_value_type(c)->dtype != GLOW_BOOL)
        GLOW_TRY(onnx_cast(cx, np, c, GLOW_BOOL, &c));
    GLOW_TRY(onnx_reshape(cx, np, m, 0, no_dims, &m));
    GLOW_TRY(onnx_reshape(cx, np, c, 0, no_dims, &c));
    return onnx_lazy_loop(cx, np, g, m, c, carried, n, nsout, len, declined);
}

/* One iteration's body outputs: the condition, N carried values, K scan elements. */
glow_status load_loop(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    (void)opset;
    const Onnx__GraphProto *body = NULL;
    GLOW_TRY(graph_attr(cx, np, "body", &body));
    if (np->n_input < 2)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "needs inputs M and cond (possibly empty)");
    int N = (int)np->n_input - 2;
    int K = (int)body->n_output - 1 - N;
    if (N > 1024 || K < 0 || K > 1024)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "body has %zu outputs for %d carried values",
                         body->n_output, N);
    if ((int)np->n_output > N + K)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "%zu outputs, but the body gives %d",
                         np->n_output, N + K);
    int64_t trips = -1, cond = 1;
    glow_value mv = { 0 }, cv = { 0 };
    bool trips_known = true, cond_known = true;
    if (onnx_has_input(np, 0)) {
        GLOW_TRY(onnx_input(cx, np, 0, &mv));
        trips_known = const_scalar(mv, &trips) || onnx_seq_loop_scalar(cx, np, 0, &trips);
    }
    if (onnx_has_input(np, 1)) {
        GLOW_TRY(onnx_input(cx, np, 1, &cv));
        cond_known = const_scalar(cv, &cond) || onnx_seq_loop_scalar(cx, np, 1, &cond);
    }
    glow_value *ins = GLOW_NEW_ARRAY(&cx->scratch, glow_value, N + 2);
    glow_value *outs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, 1 + N + K);
    for (int i = 0; i < N; i++)
        GLOW_TRY(onnx_input_any(cx, np, 2 + i, &ins[2 + i]));   /* may carry sequences */
    bool carries_seq = false;
    for (int i = 0; i < N; i++)
        carries_seq |= onnx_seq_of(ins[2 + i]) != NULL;
    /* A loop without scan outputs runs as a loop when unrolling is impossible (a count or
     * condition known only at run time) or too big. One with scan outputs and a known count M
     * does when its first condition is known only at run time (its scan outputs are then
     * bounded by M, counted), or M is large and the body cannot end it sooner (they have M
     * slices). Otherwise it is unrolled (a condition that folds at each iteration gives static
     * scan outputs), and becomes a counted loop when the body's condition turns out to be
     * computed. Carried sequences exist only at import. */
    bool can_run = K == 0 && N >= 1 && !carries_seq;
    bool can_scan = K > 0 && !carries_seq && trips_known && trips > 0;
    bool declined = false;
    if (can_run && (!trips_known || !cond_known || trips < 0 || trips > LAZY_TRIPS))
        return lazy_loop(cx, np, body, mv, cv, ins + 2, N, 0, -1, NULL);
    if (can_scan && !cond_known)
        return lazy_loop(cx, np, body, mv, cv, ins + 2, N, K, trips, NULL);
    if (can_scan && cond && trips > LAZY_TRIPS) {
        GLOW_TRY(lazy_loop(cx, np, body, mv, cv, ins + 2, N, K, trips, &declined));
        if (!declined)
            return GLOW_OK;
    }
    /* Left: scan outputs or carried sequences (which exist only at import), so unrolling. */
    const char *why = carries_seq ? "a Loop carrying sequences is unrolled"
                                  : "the length of its scan outputs would have no bound";
    if (!trips_known)
        return onnx_unsupported(cx, np, "the trip count M must be known at import (after "
                                "constant folding): %s", why);
    if (!cond_known)
        return onnx_unsupported(cx, np, "the initial condition must be known at import (after "
                                "constant folding): %s", why);
    glow_value *init = GLOW_NEW_ARRAY(&cx->scratch, glow_value, N + 1);
    memcpy(init, ins + 2, sizeof *init * (size_t)N);
    GLOW_VEC(glow_value) elems = { 0 };
    const char *name = onnx_node_name(np);
    uint32_t start = graph_size(cx);
    glow_status s = GLOW_OK;
    int64_t it = 0;
    for (; (trips < 0 || it < trips) && cond; it++) {
        if ((s = check_budget(cx, np, start, it)) != GLOW_OK)
            break;
        const char *scope = glow_arena_printf(cx->arena, "%s/it%lld", name, (long long)it);
        ins[0] = onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/i", scope), GLOW_I64,
                             (double)it);
        ins[1] = onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/cond", scope), GLOW_BOOL, 1);
        if ((s = onnx_import_graph(cx, np, scope, body, ins, N + 2, outs, 1 + N + K)) != GLOW_OK)
            break;
        if (!const_scalar(outs[0], &cond) && (can_run || can_scan)) {
            /* What was unrolled so far is dead now; the optimizer removes it. */
            GLOW_VEC_FREE(elems);
            return lazy_loop(cx, np, body, mv, cv, init, N, can_scan ? K : 0,
                             can_scan ? trips : -1, NULL);
        }
        if (!const_scalar(outs[0], &cond)) {
            s = onnx_unsupported(cx, np, "the body's condition output is computed at run time "
                                 "(iteration %lld), so the Loop may stop early: %s",
                                 (long long)it, carries_seq ? "a Loop carrying sequences is "
                                 "unrolled, which needs its iteration count at import"
                                 : "without a trip count M the length of its scan outputs "
                                 "would have no bound");
            break;
        }
        for (int i = 0; i < N; i++)
            ins[2 + i] = outs[1 + i];
        for (int k = 0; k < K; k++)
            GLOW_VEC_PUSH(elems, outs[1 + N + k]);
    }
    if (s == GLOW_OK && K > 0 && it == 0)
        s = onnx_unsupported(cx, np, "zero iterations with scan outputs (their element type is "
                             "unknown)");
    for (int i = 0; s == GLOW_OK && i < N; i++)
        s = onnx_set_output(cx, np, i, ins[2 + i]);
    /* elems holds iteration-major values; scan output k takes every K-th one. */
    glow_value *col = s == GLOW_OK && K ? GLOW_NEW_ARRAY(&cx->scratch, glow_value, it) : NULL;
    for (int k = 0; s == GLOW_OK && k < K; k++) {
        if (!onnx_has_output(np, N + k))
            continue;
        for (int64_t j = 0; j < it; j++)
            col[j] = elems.data[j * K + k];
        glow_value y;
        s = stack(cx, np, col, (int)it, 0, false, &y);
        if (s == GLOW_OK)
            s = onnx_set_output(cx, np, N + k, y);
    }
    GLOW_VEC_FREE(elems);
    return s;
}

/* --- Scan --- */

/* The common length of the scan inputs along their axes. */
static glow_status scan_length(onnx_ctx *cx, const Onnx__NodeProto *np,
                               const onnx_scan_spec *sp, const glow_value *scans, int64_t *len)
{
    int64_t T = -1;
    for (int j = 0; j < sp->M; j++) {
        int64_t l = glow_value_type(scans[j])->dims[sp->in_axes[j]];
        if (T >= 0 && l != T)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "scan input %d has %lld elements, "
                             "scan input 0 has %lld", j, (long long)l, (long long)T);
        T = l;
    }
    if (T < 0)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "no scan inputs");
    *len = T;
    return GLOW_OK;
}

/* Runs the body over the scan inputs; states[0..N) are updated in place. */
static glow_status scan_run(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *body,
                            const char *prefix, const onnx_scan_spec *sp, glow_value *states,
                            const glow_value *scans, glow_value *scan_outs)
{
    int N = sp->N, M = sp->M, K = sp->K;
    int64_t T;
    GLOW_TRY(scan_length(cx, np, sp, scans, &T));
    if (T == 0 && K > 0)
        return onnx_unsupported(cx, np, "zero iterations with scan outputs");
    glow_value *ins = GLOW_NEW_ARRAY(&cx->scratch, glow_value, N + M);
    glow_value *outs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, N + K);
    glow_value *elems = T ? GLOW_NEW_ARRAY(&cx->scratch, glow_value, (size_t)T * (size_t)K + 1)
                          : NULL;
    uint32_t start = graph_size(cx);
    for (int64_t t = 0; t < T; t++) {
        GLOW_TRY(check_budget(cx, np, start, t));
        for (int i = 0; i < N; i++)
            ins[i] = states[i];
        for (int j = 0; j < M; j++)
            GLOW_TRY(take(cx, np, scans[j], (int)sp->in_axes[j], sp->in_rev[j] ? T - 1 - t : t,
                          &ins[N + j]));
        const char *scope = glow_arena_printf(cx->arena, "%s/it%lld", prefix, (long long)t);
        GLOW_TRY(onnx_import_graph(cx, np, scope, body, ins, N + M, outs, N + K));
        for (int i = 0; i < N; i++)
            states[i] = outs[i];
        for (int k = 0; k < K; k++)
            elems[(size_t)k * (size_t)T + (size_t)t] = outs[N + k];
    }
    for (int k = 0; k < K; k++)
        GLOW_TRY(stack(cx, np, elems + (size_t)k * (size_t)T, (int)T, sp->out_axes[k],
                       sp->out_rev[k] != 0, &scan_outs[k]));
    return GLOW_OK;
}

/* An ints attribute with `n` entries, or `n` copies of dflt when absent. */
static glow_status ints_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name, int n,
                             int64_t dflt, int64_t **out)
{
    const int64_t *v;
    int cnt = onnx_attr_ints(np, name, &v);
    if (cnt >= 0 && cnt != n)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' has %d values, expected %d", name,
                         cnt, n);
    int64_t *r = GLOW_NEW_ARRAY(&cx->scratch, int64_t, n + 1);
    for (int i = 0; i < n; i++)
        r[i] = cnt >= 0 ? v[i] : dflt;
    *out = r;
    return GLOW_OK;
}

glow_status load_scan(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    const Onnx__GraphProto *body = NULL;
    GLOW_TRY(graph_attr(cx, np, "body", &body));
    if (!onnx_attr(np, "num_scan_inputs"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required 'num_scan_inputs'");
    int64_t m = onnx_attr_int(np, "num_scan_inputs", 0);
    int first = opset < 9 ? 1 : 0;   /* Scan-8 starts with the optional sequence_lens */
    int nin = (int)np->n_input - first;
    if (m < 1 || m > nin || nin > 1024)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "num_scan_inputs = %lld with %d inputs",
                         (long long)m, nin);
    onnx_scan_spec sp = { .M = (int)m, .N = nin - (int)m };
    sp.K = (int)body->n_output - sp.N;
    if (sp.K < 0 || (int)np->n_output > sp.N + sp.K)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "body has %zu outputs for %d states",
                         body->n_output, sp.N);
    glow_value *states = GLOW_NEW_ARRAY(&cx->scratch, glow_value, sp.N + 1);
    glow_value *scans = GLOW_NEW_ARRAY(&cx->scratch, glow_value, sp.M);
    glow_value *scan_outs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, sp.K + 1);
    for (int i = 0; i < sp.N; i++)
        GLOW_TRY(onnx_input(cx, np, first + i, &states[i]));
    for (int j = 0; j < sp.M; j++)
        GLOW_TRY(onnx_input(cx, np, first + sp.N + j, &scans[j]));
    int64_t *in_axes, *out_axes, *in_rev, *out_rev;
    const char *name = onnx_node_name(np);
    if (opset >= 9) {
        GLOW_TRY(ints_attr(cx, np, "scan_input_axes", sp.M, 0, &in_axes));
        GLOW_TRY(ints_attr(cx, np, "scan_input_directions", sp.M, 0, &in_rev));
        GLOW_TRY(ints_attr(cx, np, "scan_output_axes", sp.K, 0, &out_axes));
        GLOW_TRY(ints_attr(cx, np, "scan_output_directions", sp.K, 0, &out_rev));
        for (int j = 0; j < sp.M; j++) {
            int a;
            GLOW_TRY(onnx_axis(cx, np, in_axes[j], glow_value_type(scans[j])->rank, &a));
            in_axes[j] = a;
        }
        sp.in_axes = in_axes, sp.in_rev = in_rev, sp.out_axes = out_axes, sp.out_rev = out_rev;
        int64_t T;
        GLOW_TRY(scan_length(cx, np, &sp, scans, &T));
        if (T > LAZY_TRIPS)   /* long: one LOOP node slicing the inputs and outputs */
            return onnx_lazy_scan(cx, np, body, &sp, states, scans, T);
        GLOW_TRY(scan_run(cx, np, body, name, &sp, states, scans, scan_outs));
    } else {
        /* Scan-8: axis 0 of every input is a batch; each batch item is scanned along its
         * axis 0 (the inputs' axis 1), and the results are stacked on the batch axis again. */
        GLOW_TRY(ints_attr(cx, np, "directions", sp.M, 0, &in_rev));
        GLOW_TRY(ints_attr(cx, np, "scan_input_axes", sp.M, 0, &in_axes));
        GLOW_TRY(ints_attr(cx, np, "scan_output_axes", sp.K, 0, &out_axes));
        GLOW_TRY(ints_attr(cx, np, "scan_output_directions", sp.K, 0, &out_rev));
        for (int j = 0; j < sp.M; j++) {
            in_axes[j] = 0;
            if (glow_value_type(scans[j])->rank < 2)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "scan input %d needs a batch and "
                                 "a sequence axis", j);
        }
        for (int k = 0; k < sp.K; k++)
            out_axes[k] = 0, out_rev[k] = 0;
        sp.in_axes = in_axes, sp.in_rev = in_rev, sp.out_axes = out_axes, sp.out_rev = out_rev;
        int64_t B = glow_value_type(scans[0])->dims[0], T = glow_value_type(scans[0])->dims[1];
        if (onnx_has_input(np, 0)) {
            int64_t *lens;
            int n;
            GLOW_TRY(onnx_input_ints(cx, np, 0, &lens, &n));
            for (int i = 0; i < n; i++)
                if (lens[i] != T)
                    return onnx_unsupported(cx, np, "sequence_lens[%d] = %lld differs from the "
                                            "sequence length %lld", i, (long long)lens[i],
                                            (long long)T);
        }
        if (B < 1 || B > MAX_ITERATIONS)
            return onnx_unsupported(cx, np, "batch of %lld", (long long)B);
        glow_value *bs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, sp.N + 1);
        glow_value *bx = GLOW_NEW_ARRAY(&cx->scratch, glow_value, sp.M);
        glow_value *per = GLOW_NEW_ARRAY(&cx->scratch, glow_value, (size_t)(sp.N + sp.K) * B);
        uint32_t start = graph_size(cx);
        for (int64_t b = 0; b < B; b++) {
            GLOW_TRY(check_budget(cx, np, start, 0));
            for (int i = 0; i < sp.N; i++)
                GLOW_TRY(take(cx, np, states[i], 0, b, &bs[i]));
            for (int j = 0; j < sp.M; j++)
                GLOW_TRY(take(cx, np, scans[j], 0, b, &bx[j]));
            const char *prefix = glow_arena_printf(cx->arena, "%s/b%lld", name, (long long)b);
            GLOW_TRY(scan_run(cx, np, body, prefix, &sp, bs, bx, scan_outs));
            for (int i = 0; i < sp.N; i++)
                per[(size_t)i * B + b] = bs[i];
            for (int k = 0; k < sp.K; k++)
                per[(size_t)(sp.N + k) * B + b] = scan_outs[k];
        }
        for (int i = 0; i < sp.N; i++)
            GLOW_TRY(stack(cx, np, per + (size_t)i * B, (int)B, 0, false, &states[i]));
        for (int k = 0; k < sp.K; k++)
            GLOW_TRY(stack(cx, np, per + (size_t)(sp.N + k) * B, (int)B, 0, false,
                           &scan_outs[k]));
    }
    for (int i = 0; i < sp.N; i++)
        GLOW_TRY(onnx_set_output(cx, np, i, states[i]));
    for (int k = 0; k < sp.K; k++)
        GLOW_TRY(onnx_set_output(cx, np, sp.N + k, scan_outs[k]));
    return GLOW_OK;
}
