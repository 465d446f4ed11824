// onnx_load.c - Imports an ONNX ModelProto into a glow_module: initializers, inputs, nodes,
// outputs.
//
// The importer does not stop at the first problem. Ops without a loader are collected by kind,
// failing loaders add a line each, and the outputs of every node that could not be imported are
// "poisoned" so that nodes using them are skipped without a second report. One message at the
// end then lists every unsupported op of the model, which is what a user porting a model needs.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Names listed per unsupported op before "and N more". */
#define MAX_LISTED_NODES 4

typedef struct unsup_op {
    const char *domain;    /* "" for ai.onnx */
    const char *op_type;
    int opset;
    int count;
    const char *nodes[MAX_LISTED_NODES];
} unsup_op;

typedef struct load_state {
    onnx_ctx cx;
    GLOW_VEC(unsup_op) unsup;
} load_state;

static bool is_default_domain(const char *dom)
{
    return !dom || !*dom || strcmp(dom, "ai.onnx") == 0;
}

static int domain_opset(const Onnx__ModelProto *mp, const char *dom, bool *found)
{
    *found = false;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        bool match = is_default_domain(dom) ? is_default_domain(o->domain)
                                            : (o->domain && strcmp(o->domain, dom) == 0);
        if (match) {
            *found = true;
            int64_t v = o->has_version ? o->version : 1;
            return v < 1 ? 1 : v > 100000 ? 100000 : (int)v;
        }
    }
    return 1;
}

static void bind(onnx_ctx *cx, const char *name, glow_value v, bool poisoned)
{
    if (!name || !*name)
        return;
    onnx_binding *b = GLOW_NEW(cx->arena, onnx_binding);
    b->v = v;
    b->poisoned = poisoned;
    glow_strmap_put(&cx->values, name, b);
}

static void poison_outputs(onnx_ctx *cx, const Onnx__NodeProto *np)
{
    glow_value none = { NULL, 0 };
    for (size_t i = 0; i < np->n_output; i++)
        bind(cx, np->output[i], none, true);
}

/* Adds one line to the collected problems. */
static void add_problem(onnx_ctx *cx, glow_status s, const char *msg)
{
    glow_fail(&cx->problems, s, "%s", msg);
    cx->nerrors++;
    if (s == GLOW_ERR_UNSUPPORTED)
        cx->nunsupported++;
}

static void record_unsupported(load_state *ls, const Onnx__ModelProto *mp,
                               const Onnx__NodeProto *np)
{
    const char *dom = is_default_domain(np->domain) ? "" : np->domain;
    const char *op = np->op_type ? np->op_type : "";
    unsup_op *u = NULL;
    for (size_t i = 0; i < ls->unsup.len; i++)
        if (strcmp(ls->unsup.data[i].domain, dom) == 0 &&
            strcmp(ls->unsup.data[i].op_type, op) == 0)
            u = &ls->unsup.data[i];
    if (!u) {
        bool found;
        unsup_op n = { .domain = dom, .op_type = op, .opset = domain_opset(mp, dom, &found) };
        GLOW_VEC_PUSH(ls->unsup, n);
        u = &ls->unsup.data[ls->unsup.len - 1];
    }
    if (u->count < MAX_LISTED_NODES)
        u->nodes[u->count] = onnx_node_name(np);
    u->count++;
}

/* Appends to a bounded buffer; output past its end is dropped. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *n, cap - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n = *n + (size_t)k < cap ? *n + (size_t)k : cap - 1;
}

/* "model uses 2 unsupported ops: If (opset 13; node 'if0'), ai.onnx.ml.LabelEncoder (...)". */
static void report(load_state *ls, glow_diag *d)
{
    onnx_ctx *cx = &ls->cx;
    char buf[4096];
    size_t n = 0;
#define OUT(...) append(buf, sizeof(buf), &n, __VA_ARGS__)
    buf[0] = 0;
    if (ls->unsup.len) {
        OUT("model uses %zu unsupported op%s: ", ls->unsup.len, ls->unsup.len == 1 ? "" : "s");
        for (size_t i = 0; i < ls->unsup.len; i++) {
            const unsup_op *u = &ls->unsup.data[i];
            OUT("%s%s%s%s (opset %d; node%s ", i ? ", " : "", glow_esc(u->domain),
                *u->domain ? "." : "", glow_esc(u->op_type), u->opset, u->count == 1 ? "" : "s");
            /* Names are escaped and capped here: a list of them must stay one readable line. */
            for (int k = 0; k < u->count && k < MAX_LISTED_NODES; k++)
                OUT("%s'%s'", k ? ", " : "", glow_esc(u->nodes[k]));
            if (u->count > MAX_LISTED_NODES)
                OUT(" and %d more", u->count - MAX_LISTED_NODES);
            OUT(")");
        }
    }
    if (cx->nerrors)
        OUT("%s%s", n ? "\n" : "", cx->problems.msg);
#undef OUT
    glow_status s = ls->unsup.len || cx->nunsupported ? GLOW_ERR_UNSUPPORTED : cx->problems.status;
    glow_fail(d, s, "%s", buf);
}

/* Frees the values of tp, which the module now holds a copy of: the model's weights then live
 * once in memory (the module's copy) instead of twice until the model is freed. */
static void drop_values(const onnx_ctx *cx, Onnx__TensorProto *tp)
{
#define DROP(data, count) (free(tp->data), tp->data = NULL, tp->count = 0)
    if (onnx_raw_mapped(cx->map, tp)) {
        /* The module borrows these bytes or has copied them: the pages can go either way
         * (a borrowed payload reads them back from the file when it is used). */
        glow_mapping_drop(cx->map, tp->raw_data.data, tp->raw_data.len);
        tp->raw_data.data = NULL;
        tp->raw_data.len = 0;
    }
    DROP(raw_data.data, raw_data.len);
    tp->has_raw_data = false;
    DROP(float_data, n_float_data);
    DROP(int32_data, n_int32_data);
    DROP(int64_data, n_int64_data);
    DROP(double_data, n_double_data);
    DROP(uint64_data, n_uint64_data);
#undef DROP
}

static void load_initializers(onnx_ctx *cx, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *tp = g->initializer[i];
        const char *name = tp->name ? tp->name : "";
        glow_diag d = { 0 };
        glow_tensor t;
        glow_value v = { NULL, 0 };
        glow_status s = GLOW_OK;
        glow_type ty;
        if (onnx_raw_mapped(cx->map, tp) && onnx_tensor_raw_plain(tp, &ty)) {
            /* Straight from the mapping: borrowed where the evaluator can read the elements in
             * place (aligned to their size), else copied once. */
            const char *nm = glow_arena_strdup(cx->arena, name);
            const void *raw = tp->raw_data.data;
            v.node = (uintptr_t)raw % glow_dtype_size(ty.dtype) == 0
                         ? glow_constant_borrow(cx->m, nm, &ty, cx->map, raw)
                         : glow_constant_create(cx->m, nm, &ty, raw);
            if (!v.node)
                s = glow_fail(&d, GLOW_ERR_TOO_LARGE, "initializer '%s' does not fit in memory",
                              name);
        } else if ((s = onnx_tensor_from_proto(tp, &cx->scratch, &t, name, &d)) == GLOW_OK) {
            v.node = glow_constant_create(cx->m, glow_arena_strdup(cx->arena, name), &t.type,
                                          t.data);
            if (!v.node)
                s = glow_fail(&d, GLOW_ERR_TOO_LARGE, "initializer '%s' does not fit in memory",
                              name);
        }
        glow_arena_reset(&cx->scratch);
        if (s == GLOW_OK)
            drop_values(cx, tp);
        if (s != GLOW_OK) {
            char msg[4200];
            snprintf(msg, sizeof(msg), "initializer '%s': %s", name, d.msg);
            add_problem(cx, s, msg);
        }
        bind(cx, name, v, s != GLOW_OK);
    }
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        const Onnx__SparseTensorProto *sp = g->sparse_initializer[i];
        const char *name = sp->values && sp->values->name ? sp->values->name : "";
        char msg[512];
        snprintf(msg, sizeof(msg), "sparse initializer '%s' is not supported", name);
        add_problem(cx, GLOW_ERR_UNSUPPORTED, msg);
        bind(cx, name, (glow_value){ NULL, 0 }, true);
    }
}

/* The count glow_onnx_options.input_counts gives fed input `fed` (1 when none is given). */
static int input_count(const glow_onnx_options *opt, int fed)
{
    if (!opt || !opt->input_counts)
        return 1;
    return fed < opt->ninput_counts ? opt->input_counts[fed] : ONNX_SEQ_UNKNOWN;
}

static void load_inputs(onnx_ctx *cx, const Onnx__GraphProto *g, const glow_onnx_options *opt)
{
    int fed = 0, flat = 0;   /* flat: position in input_types (tensors of earlier inputs) */
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        const char *name = vi->name ? vi->name : "";
        /* Older exporters list initializers among the inputs; those stay constants. */
        if (glow_strmap_has(&cx->values, name))
            continue;
        glow_diag d = { 0 };
        glow_type t;
        glow_status s = GLOW_OK;
        int count = input_count(opt, fed);
        const glow_type *given = opt && flat < opt->ninput_types && opt->input_types
                                     ? opt->input_types[flat] : NULL;
        fed++;
        glow_value v = { NULL, 0 };
        if (*name && onnx_seq_is_container(vi)) {
            /* Without input_counts every fed input has one entry, and its length is unknown. */
            bool counted = opt && opt->input_counts;
            bool known = counted && opt->input_types && count != ONNX_SEQ_UNKNOWN &&
                         flat + (count > 0 ? count : 0) <= opt->ninput_types;
            s = onnx_seq_graph_input(cx, vi, known ? count : ONNX_SEQ_UNKNOWN,
                                     known ? opt->input_types + flat : NULL, &v, &d);
            flat += !counted ? 1 : count > 0 ? count : 0;
            if (s != GLOW_OK)
                add_problem(cx, s, d.msg);
            bind(cx, name, v, s != GLOW_OK);
            continue;
        }
        flat++;
        if (!*name) {
            s = glow_fail(&d, GLOW_ERR_PARSE, "graph input %zu has no name", i);
        } else if (count != 1 && opt && opt->input_counts) {
            s = glow_fail(&d, GLOW_ERR_USAGE, "input '%s' is a tensor, but %d tensors were "
                          "given for it", name, count);
        } else if (given) {
            t = *given;
            if (glow_type_bytes(&t) > (SIZE_MAX >> 2) || glow_type_numel(&t) < 0)
                s = glow_fail(&d, GLOW_ERR_TOO_LARGE, "input '%s' is too large", name);
        } else {
            s = onnx_value_info_type(vi, opt, &t, &d);
        }
        if (s == GLOW_OK)
            v.node = glow_placeholder_create(cx->m, glow_arena_strdup(cx->arena, name), &t, true);
        if (s != GLOW_OK)
            add_problem(cx, s, d.msg);
        bind(cx, name, v, s != GLOW_OK);
    }
}

/* Gives unnamed nodes "<op_type>#<index>" so messages and helper nodes can name them. The
 * string is malloc'd because protobuf_c_message_free_unpacked frees it with the model. */
static void name_node(Onnx__NodeProto *np, size_t index)
{
    if (np->name && *np->name)
        return;
    char buf[160];
    snprintf(buf, sizeof(buf), "%.128s#%zu", np->op_type ? np->op_type : "?", index);
    char *s = malloc(strlen(buf) + 1);
    if (!s)
        return;
    strcpy(s, buf);
    free(np->name);
    np->name = s;
}

/* When a loader built only helpers (say, onnx_cast for Cast), the node computing its first
 * output takes the ONNX node's name, so dumps read like the model. */
static void name_result(onnx_ctx *cx, const Onnx__NodeProto *np, uint32_t first_id)
{
    const onnx_binding *b = onnx_has_output(np, 0) ? glow_strmap_get(&cx->values, np->output[0])
                                                   : NULL;
    if (!b || !b->v.node || b->v.node->id < first_id)
        return;
    if (glow_node_kind_flags(b->v.node->kind) & NF_STORAGE)
        return;
    b->v.node->name = glow_arena_strdup(cx->arena, onnx_node_name(np));
}

static void load_nodes(load_state *ls, const Onnx__ModelProto *mp, const Onnx__GraphProto *g)
{
    onnx_ctx *cx = &ls->cx;
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *np = g->node[i];
        name_node(np, i);
        cx->node_index = (int)i;
        cx->nbuilt = 0;
        cx->main_built = false;
        /* Unsupported ops are listed even when their inputs are poisoned: the user wants to
         * see every op the model needs. */
        const onnx_op *op = onnx_find_domain_op(np->domain, np->op_type, cx->opset);
        if (!op) {
            record_unsupported(ls, mp, np);
            poison_outputs(cx, np);
            continue;
        }
        bool skip = false;
        for (size_t k = 0; k < np->n_input; k++) {
            const onnx_binding *b = np->input[k] && *np->input[k]
                                        ? glow_strmap_get(&cx->values, np->input[k]) : NULL;
            skip = skip || (b && b->poisoned);
        }
        if (skip) {
            poison_outputs(cx, np);
            continue;
        }
        glow_diag d = { 0 };
        cx->d = &d;
        uint32_t first_id = cx->m->next_id;
        glow_status s = op->fn(cx, np, cx->opset, op->kind);
        if (s == GLOW_OK && !cx->main_built)
            name_result(cx, np, first_id);
        if (s == GLOW_OK) {
            for (size_t k = 0; k < np->n_output; k++) {
                if (!onnx_has_output(np, (int)k) || glow_strmap_get(&cx->values, np->output[k]))
                    continue;
                s = onnx_fail(cx, np, GLOW_ERR_UNSUPPORTED, "output %zu '%s' is not produced "
                              "by glowc's loader", k, np->output[k]);
                break;
            }
        }
        if (s != GLOW_OK) {
            add_problem(cx, s, d.msg[0] ? d.msg : glow_status_name(s));
            poison_outputs(cx, np);
        }
        cx->d = NULL;
        glow_arena_reset(&cx->scratch);
    }
}

static void load_outputs(onnx_ctx *cx, const Onnx__GraphProto *g)
{
    for (size_t i = 0; i < g->n_output; i++) {
        const char *name = g->output[i]->name ? g->output[i]->name : "";
        const onnx_binding *b = glow_strmap_get(&cx->values, name);
        if (b && b->poisoned)
            continue;   /* already reported */
        if (!b) {
            char msg[512];
            snprintf(msg, sizeof(msg), "graph output '%.400s' is not produced by any node, "
                     "initializer or input", name);
            add_problem(cx, GLOW_ERR_NOT_FOUND, msg);
            continue;
        }
        if (!b->count.node) {
            /* A sequence becomes one output per element (onnx_seq.c names them). */
            glow_diag d = { 0 };
            int count = 1;
            if (onnx_seq_graph_output(cx, name, b->v, &count, &d) != GLOW_OK)
                add_problem(cx, d.status, d.msg);
            if (cx->opt && cx->opt->output_counts && i < (size_t)cx->opt->noutput_counts)
                cx->opt->output_counts[i] = count;
            continue;
        }
        /* A bounded value (never a sequence) keeps its count beside it. */
        glow_node *ph = glow_placeholder_create(cx->m, glow_arena_strdup(cx->arena, name),
                                                glow_value_type(b->v), false);
        glow_save_create(cx->f, glow_arena_printf(cx->arena, "save_%s", name), b->v, ph);
        /* The run-time extent goes to a hidden output the runtime reads. */
        glow_type ct = glow_type_scalar(GLOW_I64);
        const char *cname = glow_arena_printf(cx->arena, "%s/count", name);
        glow_node *cph = glow_placeholder_create(cx->m, cname, &ct, false);
        cph->hidden = true;
        ph->count = cph;
        ph->count_axis = b->count_axis;
        glow_save_create(cx->f, glow_arena_printf(cx->arena, "save_%s", cname), b->count, cph);
    }
}

/* Builds m from the unpacked model mp, which it frees; `map` is the file's mapping that its
 * large raw_data point into, or NULL. */
static glow_status load_model(glow_module *m, Onnx__ModelProto *mp, glow_mapping *map,
                              const glow_onnx_options *opt, glow_diag *d)
{
    if (!mp->graph) {
        onnx__model_proto__free_unpacked(mp, NULL);
        return glow_fail(d, GLOW_ERR_PARSE, "not a valid ONNX model (it has no graph)");
    }
    load_state ls = { 0 };
    onnx_ctx *cx = &ls.cx;
    bool found;
    cx->m = m;
    cx->map = map;
    cx->arena = &m->arena;
    cx->opt = opt;
    cx->opset = domain_opset(mp, "", &found);
    cx->f = glow_module_function(m, "main");
    if (!cx->f)
        cx->f = glow_function_create(m, "main");

    const Onnx__GraphProto *g = mp->graph;
    cx->graph = g;
    load_initializers(cx, g);
    load_inputs(cx, g, opt);
    load_nodes(&ls, mp, g);
    load_outputs(cx, g);

    glow_status s = GLOW_OK;
    if (ls.unsup.len || cx->nerrors) {
        report(&ls, d);
        s = d->status;
    } else {
        s = glow_module_verify(m, d);
    }
    /* Node names were copied by the graph (glow_build and friends copy into the arena)
     * before the model, which owns them, is freed. */
    GLOW_VEC_FREE(ls.unsup);
    glow_strmap_free(&cx->values);
    glow_arena_release(&cx->scratch);
    onnx_free_mapped(mp, cx->map);
    return s;
}

/* Loads a mapped model: the weights' raw_data stay in the mapping (onnx_map.c), and the
 * constants borrow them or copy them from there, so the file's bytes are read once. */
static glow_status load_mapped(glow_module *m, glow_mapping *map, const glow_onnx_options *opt,
                               glow_diag *d)
{
    Onnx__ModelProto *mp = onnx_unpack_mapped(map, d);
    return mp ? load_model(m, mp, map, opt, d) : GLOW_ERR_PARSE;
}

glow_status glow_onnx_load(glow_module *m, const char *path, const glow_onnx_options *opt,
                           glow_diag *d)
{
    glow_mapping *map = glow_map_file(path);
    if (map) {
        glow_status s = load_mapped(m, map, opt, d);
        glow_mapping_unref(map);   /* borrowed payloads hold their own references */
        return s;
    }
    uint8_t *data;
    size_t size;
    GLOW_TRY(glow_read_file(path, &data, &size, d));
    /* The file's bytes go before the graph is built: the unpacked model has its own copy. */
    Onnx__ModelProto *mp = onnx_unpack(data, size, size, d);
    free(data);
    return mp ? load_model(m, mp, NULL, opt, d) : GLOW_ERR_PARSE;
}

glow_status glow_onnx_load_bytes(glow_module *m, const uint8_t *data, size_t size,
                                 const glow_onnx_options *opt, glow_diag *d)
{
    Onnx__ModelProto *mp = onnx_unpack(data, size, size, d);
    return mp ? load_model(m, mp, NULL, opt, d) : GLOW_ERR_PARSE;
}
