// graph.c - Node and attribute kind tables, and building the Module ▸ Function ▸ Node graph.
//
// Everything a module owns (functions, nodes, operand and type arrays, names, constant
// payloads) lives in its arena, so glow_module_destroy is one arena release. Erased nodes are
// only unlinked; their memory goes with the module.
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

typedef struct {
    const char *name;
    int min_in, max_in, max_out;
    unsigned flags;
    const char *attrs;
} kind_info;

static const kind_info kind_table[] = {
#define NODE(id, name, min_in, max_in, max_out, flags, attrs) \
    [NK_##id] = { name, min_in, max_in, max_out, flags, attrs },
#include "nodes.def"
#undef NODE
};

typedef struct {
    const char *name;
    glow_attr_kind kind;
} attr_info;

static const attr_info attr_table[] = {
#define ATTR(id, name, kind) [GA_##id] = { name, kind },
#include "attrs.def"
#undef ATTR
};

static const kind_info *kind(glow_node_kind k)
{
    if ((unsigned)k >= NK_COUNT)
        GLOW_UNREACHABLE();
    return &kind_table[k];
}

const char *glow_node_kind_name(glow_node_kind k)
{
    return (unsigned)k < NK_COUNT ? kind_table[k].name : "?";
}

unsigned glow_node_kind_flags(glow_node_kind k) { return kind(k)->flags; }
int glow_node_kind_min_in(glow_node_kind k) { return kind(k)->min_in; }
int glow_node_kind_max_in(glow_node_kind k) { return kind(k)->max_in; }
int glow_node_kind_max_out(glow_node_kind k) { return kind(k)->max_out; }
const char *glow_node_kind_required_attrs(glow_node_kind k) { return kind(k)->attrs; }

const char *glow_attr_name(glow_attr_id a)
{
    return (unsigned)a < GA_COUNT ? attr_table[a].name : "?";
}

glow_attr_kind glow_attr_kind_of(glow_attr_id a)
{
    if ((unsigned)a >= GA_COUNT)
        GLOW_UNREACHABLE();
    return attr_table[a].kind;
}

bool glow_attr_from_name(const char *name, glow_attr_id *out)
{
    for (int a = 0; a < GA_COUNT; a++) {
        if (strcmp(attr_table[a].name, name) == 0) {
            *out = (glow_attr_id)a;
            return true;
        }
    }
    return false;
}

/* ---- module and functions ---- */

glow_module *glow_module_create(void)
{
    return glow_xcalloc(1, sizeof(glow_module));
}

void glow_module_destroy(glow_module *m)
{
    if (!m)
        return;
    glow_subgraph_release(m);
    glow_arena_release(&m->arena);
    free(m);
}

glow_function *glow_function_create(glow_module *m, const char *name)
{
    glow_function *f = GLOW_NEW(&m->arena, glow_function);
    f->module = m;
    f->name = glow_arena_strdup(&m->arena, name ? name : "");
    /* Appended so functions print in creation order. */
    glow_function **tail = &m->functions;
    while (*tail)
        tail = &(*tail)->next;
    *tail = f;
    return f;
}

glow_function *glow_module_function(glow_module *m, const char *name)
{
    for (glow_function *f = m->functions; f; f = f->next) {
        if (strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}

/* ---- node lists ---- */

static void list_insert_before(glow_node_list *l, glow_node *before, glow_node *n)
{
    if (!before) {
        n->prev = l->last;
        n->next = NULL;
        if (l->last)
            l->last->next = n;
        else
            l->first = n;
        l->last = n;
    } else {
        n->next = before;
        n->prev = before->prev;
        if (before->prev)
            before->prev->next = n;
        else
            l->first = n;
        before->prev = n;
    }
    l->count++;
}

static void list_remove(glow_node_list *l, glow_node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else if (l->first == n)
        l->first = n->next;
    else
        return;   /* not in this list (already erased) */
    if (n->next)
        n->next->prev = n->prev;
    else
        l->last = n->prev;
    n->prev = n->next = NULL;
    l->count--;
}

static glow_node *node_new(glow_module *m, glow_node_kind k, const char *name, int nout)
{
    glow_node *n = GLOW_NEW(&m->arena, glow_node);
    n->kind = k;
    n->id = m->next_id++;
    n->name = glow_arena_strdup(&m->arena, name ? name : "");
    n->nout = nout > 0 ? (uint32_t)nout : 0;
    n->outs = GLOW_NEW_ARRAY(&m->arena, glow_type, nout > 0 ? nout : 1);
    return n;
}

/* ---- storage ---- */

glow_node *glow_constant_create(glow_module *m, const char *name, const glow_type *t,
                                const void *data)
{
    /* The payload comes first: its size is model-declared and may be impossible, and
     * failing before anything is linked leaves the module unchanged. */
    size_t bytes = glow_type_bytes(t);
    if (bytes == SIZE_MAX)
        return NULL;
    void *payload = glow_arena_try_alloc(&m->arena, bytes);
    if (!payload)
        return NULL;
    if (data && bytes)
        memcpy(payload, data, bytes);
    if (data && t->dtype == GLOW_STRING) {
        /* A constant owns its strings' bytes too (graph.h, glow_str): the module arena. */
        glow_str *h = payload;
        for (size_t i = 0; i < bytes / sizeof(glow_str); i++)
            h[i] = h[i] && *h[i] ? glow_arena_strdup(&m->arena, h[i]) : NULL;
    }
    glow_node *n = node_new(m, NK_CONSTANT, name, 1);
    n->outs[0] = *t;
    n->payload = glow_tensor_borrow(t, payload);
    list_insert_before(&m->constants, NULL, n);
    return n;
}

glow_node *glow_constant_borrow(glow_module *m, const char *name, const glow_type *t,
                                glow_mapping *map, const void *data)
{
    size_t bytes = glow_type_bytes(t);
    if (bytes == SIZE_MAX || t->dtype == GLOW_STRING || !glow_mapping_holds(map, data, bytes))
        return NULL;
    void *payload = glow_arena_borrow(&m->arena, map, data, bytes);
    if (!payload)
        return NULL;
    glow_node *n = node_new(m, NK_CONSTANT, name, 1);
    n->outs[0] = *t;
    n->payload = glow_tensor_borrow(t, payload);
    list_insert_before(&m->constants, NULL, n);
    return n;
}

glow_node *glow_placeholder_create(glow_module *m, const char *name, const glow_type *t,
                                   bool is_input)
{
    glow_node *n = node_new(m, NK_PLACEHOLDER, name, 1);
    n->outs[0] = *t;
    n->is_input = is_input;
    /* Keep inputs before outputs whatever order the importer creates them in. */
    glow_node *before = NULL;
    if (is_input) {
        for (glow_node *p = m->placeholders.first; p; p = p->next) {
            if (!p->is_input) {
                before = p;
                break;
            }
        }
    }
    list_insert_before(&m->placeholders, before, n);
    return n;
}

glow_node *glow_module_find_placeholder(glow_module *m, const char *name)
{
    for (glow_node *p = m->placeholders.first; p; p = p->next) {
        if (strcmp(p->name, name) == 0)
            return p;
    }
    return NULL;
}

/* ---- function nodes ---- */

glow_node *glow_node_create(glow_function *f, glow_node_kind kind, const char *name,
                            const glow_value *ins, int nin, const glow_type *outs, int nout)
{
    glow_module *m = f->module;
    glow_node *n = node_new(m, kind, name, nout);
    n->fn = f;
    n->nin = nin > 0 ? (uint32_t)nin : 0;
    n->ins = GLOW_NEW_ARRAY(&m->arena, glow_value, nin > 0 ? nin : 1);
    for (int i = 0; i < nin; i++)
        n->ins[i] = ins[i];
    for (int i = 0; outs && i < nout; i++)
        n->outs[i] = outs[i];
    list_insert_before(&f->nodes, NULL, n);
    return n;
}

glow_node *glow_save_create(glow_function *f, const char *name, glow_value v, glow_node *ph)
{
    glow_value ins[2] = { v, glow_val(ph, 0) };
    return glow_node_create(f, NK_SAVE, name, ins, 2, NULL, 0);
}

void glow_node_erase(glow_node *n)
{
    if (n->fn) {
        list_remove(&n->fn->nodes, n);
        return;
    }
    /* Storage has no function; nothing reaches its module from the node, so the caller
     * must unlink storage through the module lists itself. */
}

void glow_node_move_before(glow_node *n, glow_node *pos)
{
    if (!n->fn || n == pos || (pos && pos->fn != n->fn))
        return;
    list_remove(&n->fn->nodes, n);
    list_insert_before(&n->fn->nodes, pos, n);
}

void glow_replace_all_uses(glow_function *f, glow_value from, glow_value to)
{
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        /* SAVE's second operand is its destination, not a use of a value. */
        uint32_t nin = n->kind == NK_SAVE && n->nin > 1 ? 1 : n->nin;
        for (uint32_t i = 0; i < nin; i++) {
            if (n->ins[i].node == from.node && n->ins[i].res == from.res)
                n->ins[i] = to;
        }
    }
}

void glow_function_count_users(glow_function *f)
{
    /* Storage is shared by all functions; its counts here are the uses within f. */
    glow_module *m = f->module;
    for (glow_node *n = m->constants.first; n; n = n->next)
        n->nusers = 0;
    for (glow_node *n = m->placeholders.first; n; n = n->next)
        n->nusers = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next)
        n->nusers = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        for (uint32_t i = 0; i < n->nin; i++) {
            if (n->ins[i].node)
                n->ins[i].node->nusers++;
        }
    }
}
