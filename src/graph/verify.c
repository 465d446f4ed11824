// verify.c - The graph verifier: structure, operand order, and every node's types recomputed.
//
// The verifier never changes the graph: types are recomputed by the same inference that
// glow_build runs (into a scratch context) and compared with what each node holds. It keeps
// going after a problem so one run reports them all (up to a limit), each naming its node.
#include <stdlib.h>
#include <string.h>

#include "graph/infer_internal.h"

#define MAX_PROBLEMS 32

/* A set (or map to an index) of node pointers: open addressing, heap allocated. */
typedef struct ptrmap {
    const void **keys;
    size_t *vals;
    size_t cap, len;
} ptrmap;

static void pm_init(ptrmap *m, size_t n)
{
    m->cap = 16;
    m->len = 0;
    while (m->cap < 2 * n + 1)
        m->cap *= 2;
    m->keys = glow_xcalloc(m->cap, sizeof *m->keys);
    m->vals = glow_xcalloc(m->cap, sizeof *m->vals);
}

static void pm_free(ptrmap *m)
{
    free(m->keys);
    free(m->vals);
}

static size_t pm_slot(const ptrmap *m, const void *p)
{
    size_t h = (size_t)(uintptr_t)p;
    h ^= h >> 17;
    h *= (size_t)0x9E3779B97F4A7C15ull;
    size_t i = h & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != p)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void pm_put(ptrmap *m, const void *p, size_t v)
{
    if (2 * (m->len + 1) > m->cap) {
        /* Keep the table at most half full, so probing always ends. */
        ptrmap big;
        pm_init(&big, m->len + 1);
        for (size_t k = 0; k < m->cap; k++)
            if (m->keys[k])
                pm_put(&big, m->keys[k], m->vals[k]);
        pm_free(m);
        *m = big;
    }
    size_t i = pm_slot(m, p);
    if (!m->keys[i])
        m->len++;
    m->keys[i] = p;
    m->vals[i] = v;
}

static bool pm_get(const ptrmap *m, const void *p, size_t *v)
{
    size_t i = pm_slot(m, p);
    if (!m->keys[i])
        return false;
    if (v)
        *v = m->vals[i];
    return true;
}

typedef struct vstate {
    glow_diag *d;
    glow_status first;
    int nproblems;
} vstate;

static void problem(vstate *vs, glow_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(vstate *vs, glow_status s, const char *fmt, ...)
{
    if (vs->first == GLOW_OK)
        vs->first = s;
    if (++vs->nproblems > MAX_PROBLEMS)
        return;
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (vs->nproblems == MAX_PROBLEMS)
        glow_fail(vs->d, s, "%s\n(further problems not shown)", msg);
    else
        glow_fail(vs->d, s, "%s", msg);
}

static size_t storage_count(const glow_module *m)
{
    return (size_t)m->constants.count + m->placeholders.count;
}

static void add_storage(ptrmap *st, const glow_module *m)
{
    for (const glow_node *s = m->constants.first; s; s = s->next)
        pm_put(st, s, 0);
    for (const glow_node *s = m->placeholders.first; s; s = s->next)
        pm_put(st, s, 0);
}

/* Checks one function node: membership, operands, and its types against inference. */
static void verify_node(vstate *vs, const glow_function *f, const glow_node *n, size_t pos,
                        const ptrmap *order, const ptrmap *storage, ptrmap *saved)
{
    const char *kn = (unsigned)n->kind < NK_COUNT ? glow_node_kind_name(n->kind) : "?";
    const char *nm = n->name ? n->name : "(unnamed)";
    if ((unsigned)n->kind >= NK_COUNT || (glow_node_kind_flags(n->kind) & NF_STORAGE)) {
        problem(vs, GLOW_ERR_INTERNAL, "%s '%s': storage or unknown kind in function '%s'", kn,
                nm, f->name);
        return;
    }
    if (n->fn != f)
        problem(vs, GLOW_ERR_INTERNAL, "%s '%s': belongs to another function than '%s'", kn,
                nm, f->name);
    if (n->nin > 0 && !n->ins) {
        problem(vs, GLOW_ERR_INTERNAL, "%s '%s': has no operand array", kn, nm);
        return;
    }
    if (n->nout > 0 && !n->outs) {
        problem(vs, GLOW_ERR_INTERNAL, "%s '%s': has no result types", kn, nm);
        return;
    }
    bool operands_ok = true;
    for (uint32_t i = 0; i < n->nin; i++) {
        const glow_node *o = n->ins[i].node;
        size_t opos;
        if (!o) {
            problem(vs, GLOW_ERR_INTERNAL, "%s '%s': operand %u is null", kn, nm, i);
            operands_ok = false;
            continue;
        }
        const char *on = o->name ? o->name : "(unnamed)";
        if (pm_get(storage, o, NULL)) {
            /* a storage node of this module */
        } else if (pm_get(order, o, &opos)) {
            if (opos >= pos) {
                problem(vs, GLOW_ERR_INTERNAL,
                        "%s '%s': operand %u '%s' comes %s it in the node order", kn, nm, i, on,
                        opos == pos ? "from the node itself, not before" : "after");
                operands_ok = false;
            }
        } else {
            problem(vs, GLOW_ERR_INTERNAL,
                    "%s '%s': operand %u '%s' is neither storage of this module nor a node of "
                    "function '%s'", kn, nm, i, on, f->name);
            operands_ok = false;
            continue;
        }
        if (n->ins[i].res >= o->nout || !o->outs) {
            problem(vs, GLOW_ERR_INTERNAL, "%s '%s': operand %u uses result %u of '%s', which "
                    "has %u", kn, nm, i, n->ins[i].res, on, o->nout);
            operands_ok = false;
        }
    }
    if (!operands_ok)
        return;

    /* Types, operand counts and attributes, by recomputing inference. */
    glow_diag tmp;
    glow_diag_clear(&tmp);
    infer_cx cx;
    if (infer_run(&cx, n, n->outs, (int)n->nout, &tmp) != GLOW_OK) {
        problem(vs, tmp.status, "%s", tmp.msg);
        return;
    }
    if ((int)n->nout != cx.nout) {
        problem(vs, GLOW_ERR_BAD_TYPE, "%s '%s': has %u results, expected %d", kn, nm, n->nout,
                cx.nout);
        infer_release(&cx);
        return;
    }
    for (int i = 0; i < cx.nout; i++) {
        if (!glow_type_equal(&n->outs[i], &cx.out[i]))
            problem(vs, GLOW_ERR_BAD_TYPE, "%s '%s': result %d is %s, but its operands give %s",
                    kn, nm, i, ts(&n->outs[i]).s, ts(&cx.out[i]).s);
    }
    infer_release(&cx);
    if (n->kind == NK_SAVE) {
        const glow_node *ph = n->ins[1].node;
        size_t prev;
        if (pm_get(saved, ph, &prev))
            problem(vs, GLOW_ERR_BAD_TYPE, "%s '%s': output placeholder '%s' is saved more "
                    "than once", kn, nm, ph->name ? ph->name : "(unnamed)");
        else
            pm_put(saved, ph, pos);
    }
}

static void verify_function(vstate *vs, const glow_function *f, const ptrmap *storage,
                            ptrmap *saved)
{
    size_t count = 0;
    for (const glow_node *n = f->nodes.first; n && count <= f->nodes.count; n = n->next)
        count++;
    if (count != f->nodes.count)
        problem(vs, GLOW_ERR_INTERNAL, "function '%s': node list holds %zu nodes, count says "
                "%u", f->name, count, f->nodes.count);
    ptrmap order;
    pm_init(&order, count);
    size_t pos = 0;
    for (const glow_node *n = f->nodes.first; n && pos < count; n = n->next)
        pm_put(&order, n, pos++);
    pos = 0;
    for (const glow_node *n = f->nodes.first; n && pos < count; n = n->next, pos++)
        verify_node(vs, f, n, pos, &order, storage, saved);
    pm_free(&order);
}

static glow_status finish(vstate *vs)
{
    return vs->first;
}

glow_status glow_function_verify(const glow_function *f, glow_diag *d)
{
    vstate vs = { d, GLOW_OK, 0 };
    if (!f->module)
        return glow_fail(d, GLOW_ERR_INTERNAL, "function '%s' has no module", f->name);
    ptrmap storage, saved;
    pm_init(&storage, storage_count(f->module));
    add_storage(&storage, f->module);
    pm_init(&saved, 16);
    verify_function(&vs, f, &storage, &saved);
    pm_free(&storage);
    pm_free(&saved);
    return finish(&vs);
}

static void verify_storage(vstate *vs, const glow_node_list *list, glow_node_kind want)
{
    uint32_t count = 0;
    for (const glow_node *s = list->first; s && count <= list->count; s = s->next, count++) {
        const char *nm = s->name ? s->name : "(unnamed)";
        if (s->kind != want) {
            problem(vs, GLOW_ERR_INTERNAL, "%s '%s': listed among the module's %ss",
                    (unsigned)s->kind < NK_COUNT ? glow_node_kind_name(s->kind) : "?", nm,
                    glow_node_kind_name(want));
            continue;
        }
        if (s->fn || s->nin || s->nout != 1 || !s->outs) {
            problem(vs, GLOW_ERR_INTERNAL, "%s '%s': storage must have no function, no "
                    "operands and one result", glow_node_kind_name(want), nm);
            continue;
        }
        if (want == NK_CONSTANT && !glow_type_equal(&s->payload.type, &s->outs[0]))
            problem(vs, GLOW_ERR_BAD_TYPE, "Constant '%s': payload %s differs from its type %s",
                    nm, ts(&s->payload.type).s, ts(&s->outs[0]).s);
    }
    if (count != list->count)
        problem(vs, GLOW_ERR_INTERNAL, "module storage list holds %u nodes, count says %u",
                count, list->count);
}

glow_status glow_module_verify(const glow_module *m, glow_diag *d)
{
    vstate vs = { d, GLOW_OK, 0 };
    verify_storage(&vs, &m->constants, NK_CONSTANT);
    verify_storage(&vs, &m->placeholders, NK_PLACEHOLDER);
    ptrmap storage, saved;
    pm_init(&storage, storage_count(m));
    add_storage(&storage, m);
    /* An output placeholder is written by one SAVE across the whole module. */
    pm_init(&saved, storage_count(m));
    for (const glow_function *f = m->functions; f; f = f->next) {
        if (f->module != m)
            problem(&vs, GLOW_ERR_INTERNAL, "function '%s' belongs to another module", f->name);
        verify_function(&vs, f, &storage, &saved);
    }
    pm_free(&storage);
    pm_free(&saved);
    return finish(&vs);
}
