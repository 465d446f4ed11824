// attr.c - Node attributes: setters that copy into the module arena, getters, comparison.
//
// A node's attributes are a small array in no particular order. Setting an attribute that is
// present replaces it in place; adding one copies the array one larger (nodes carry a handful
// of attributes, and arrays built elsewhere, e.g. by glow_build, have no spare capacity).
#include <string.h>

#include "graph/graph.h"

static glow_arena *node_arena(glow_node *n)
{
    /* Only function nodes carry attributes; storage has no route to its module. */
    if (!n->fn)
        GLOW_UNREACHABLE();
    return &n->fn->module->arena;
}

/* The slot for attribute `a`, added if absent; its value is left for the caller. */
static glow_attr *attr_slot(glow_node *n, glow_attr_id a)
{
    for (uint32_t i = 0; i < n->nattr; i++) {
        if (n->attrs[i].id == a)
            return &n->attrs[i];
    }
    glow_attr *attrs = GLOW_NEW_ARRAY(node_arena(n), glow_attr, n->nattr + 1);
    if (n->nattr)
        memcpy(attrs, n->attrs, n->nattr * sizeof(*attrs));
    n->attrs = attrs;
    glow_attr *s = &attrs[n->nattr++];
    s->id = a;
    return s;
}

void glow_node_set_int(glow_node *n, glow_attr_id a, int64_t v)
{
    glow_attr *s = attr_slot(n, a);
    s->n = 0;
    s->v.i = v;
}

void glow_node_set_float(glow_node *n, glow_attr_id a, double v)
{
    glow_attr *s = attr_slot(n, a);
    s->n = 0;
    s->v.f = v;
}

void glow_node_set_ints(glow_node *n, glow_attr_id a, const int64_t *v, int count)
{
    if (count < 0)
        count = 0;
    /* Copy before taking the slot: `v` may be the attribute's current array. */
    int64_t *copy = GLOW_NEW_ARRAY(node_arena(n), int64_t, count ? count : 1);
    if (count)
        memcpy(copy, v, (size_t)count * sizeof(*copy));
    glow_attr *s = attr_slot(n, a);
    s->n = (uint32_t)count;
    s->v.ints = copy;
}

void glow_node_set_floats(glow_node *n, glow_attr_id a, const float *v, int count)
{
    if (count < 0)
        count = 0;
    float *copy = GLOW_NEW_ARRAY(node_arena(n), float, count ? count : 1);
    if (count)
        memcpy(copy, v, (size_t)count * sizeof(*copy));
    glow_attr *s = attr_slot(n, a);
    s->n = (uint32_t)count;
    s->v.floats = copy;
}

void glow_node_set_str(glow_node *n, glow_attr_id a, const char *str)
{
    const char *copy = glow_arena_strdup(node_arena(n), str ? str : "");
    glow_attr *s = attr_slot(n, a);
    s->n = 0;
    s->v.s = copy;
}

const glow_attr *glow_node_attr(const glow_node *n, glow_attr_id a)
{
    for (uint32_t i = 0; i < n->nattr; i++) {
        if (n->attrs[i].id == a)
            return &n->attrs[i];
    }
    return NULL;
}

int64_t glow_node_int(const glow_node *n, glow_attr_id a, int64_t dflt)
{
    const glow_attr *at = glow_node_attr(n, a);
    if (!at)
        return dflt;
    /* Never read the union through the wrong member. */
    return glow_attr_kind_of(a) == AK_INT ? at->v.i : dflt;
}

double glow_node_float(const glow_node *n, glow_attr_id a, double dflt)
{
    const glow_attr *at = glow_node_attr(n, a);
    if (!at)
        return dflt;
    if (glow_attr_kind_of(a) == AK_INT)
        return (double)at->v.i;
    return glow_attr_kind_of(a) == AK_FLOAT ? at->v.f : dflt;
}

const int64_t *glow_node_ints(const glow_node *n, glow_attr_id a, int *count)
{
    const glow_attr *at = glow_node_attr(n, a);
    if (!at || glow_attr_kind_of(a) != AK_INTS) {
        if (count)
            *count = 0;
        return NULL;
    }
    if (count)
        *count = (int)at->n;
    return at->v.ints;
}

const char *glow_node_str(const glow_node *n, glow_attr_id a, const char *dflt)
{
    const glow_attr *at = glow_node_attr(n, a);
    if (!at || glow_attr_kind_of(a) != AK_STR || !at->v.s)
        return dflt;
    return at->v.s;
}

/* Values compare bitwise for floats, so NaN equals NaN and -0 differs from 0: merging nodes
 * (CSE) must never change results. */
static bool attr_value_equal(const glow_attr *x, const glow_attr *y)
{
    switch (glow_attr_kind_of(x->id)) {
    case AK_INT:
        return x->v.i == y->v.i;
    case AK_FLOAT:
        return memcmp(&x->v.f, &y->v.f, sizeof(double)) == 0;
    case AK_INTS:
        return x->n == y->n &&
               (x->n == 0 || memcmp(x->v.ints, y->v.ints, x->n * sizeof(int64_t)) == 0);
    case AK_FLOATS:
        return x->n == y->n &&
               (x->n == 0 || memcmp(x->v.floats, y->v.floats, x->n * sizeof(float)) == 0);
    case AK_STR:
        if (!x->v.s || !y->v.s)
            return x->v.s == y->v.s;
        return strcmp(x->v.s, y->v.s) == 0;
    }
    return false;
}

bool glow_attrs_equal(const glow_node *a, const glow_node *b)
{
    if (a->nattr != b->nattr)
        return false;
    for (uint32_t i = 0; i < a->nattr; i++) {
        const glow_attr *y = glow_node_attr(b, a->attrs[i].id);
        if (!y || !attr_value_equal(&a->attrs[i], y))
            return false;
    }
    return true;
}
