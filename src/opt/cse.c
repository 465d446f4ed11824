// cse.c - Merges nodes with identical kind, attributes, operands and result types, and
// constants with identical type and contents.
// Requires: verified graph. Keeps: topological order (the first of equal nodes stays, and it
// precedes every user of the later one).
//
// Nodes with side effects (Save) are never merged. Equal nodes are found through a hash of
// kind and operands; since operands are compared by identity, walking in topological order
// merges whole equal subtrees in one sweep.
#include <stdlib.h>
#include <string.h>

#include "opt/opt_internal.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t node_hash(const glow_node *n)
{
    uint64_t h = mix(0, (uint64_t)n->kind);
    for (uint32_t i = 0; i < n->nin; i++)
        h = mix(mix(h, (uint64_t)(uintptr_t)n->ins[i].node), n->ins[i].res);
    return h;
}

static bool same_node(const glow_node *a, const glow_node *b)
{
    if (a->kind != b->kind || a->nin != b->nin || a->nout != b->nout)
        return false;
    for (uint32_t i = 0; i < a->nin; i++)
        if (a->ins[i].node != b->ins[i].node || a->ins[i].res != b->ins[i].res)
            return false;
    for (uint32_t i = 0; i < a->nout; i++)
        if (!glow_type_equal(&a->outs[i], &b->outs[i]))
            return false;
    return glow_attrs_equal(a, b);
}

static uint64_t const_hash(const glow_node *c)
{
    const uint8_t *p = c->payload.data;
    size_t bytes = glow_type_bytes(&c->outs[0]);
    uint64_t h = mix(0, bytes);
    /* A prefix and a sparse sample tell different weights apart; equal hashes are compared
     * in full, and hashing every byte of 100 MB of weights would cost more than it finds. */
    size_t step = bytes > 4096 ? bytes / 1024 : 1;
    for (size_t i = 0; p && i < bytes; i += i < 256 ? 1 : step)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

static bool same_constant(const glow_node *a, const glow_node *b)
{
    if (!glow_type_equal(&a->outs[0], &b->outs[0]))
        return false;
    size_t bytes = glow_type_bytes(&a->outs[0]);
    return !bytes || (a->payload.data && b->payload.data &&
                      memcmp(a->payload.data, b->payload.data, bytes) == 0);
}

typedef struct table {
    glow_node **slot;
    uint64_t *hash;
    size_t cap;
} table;

/* Returns an equal node already in the table, or inserts n and returns NULL. */
static glow_node *find_or_insert(table *t, glow_node *n, uint64_t h,
                                 bool (*same)(const glow_node *, const glow_node *))
{
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (!t->slot[i]) {
            t->slot[i] = n;
            t->hash[i] = h;
            return NULL;
        }
        if (t->hash[i] == h && same(t->slot[i], n))
            return t->slot[i];
    }
}

static void table_init(table *t, size_t n)
{
    t->cap = 16;
    while (t->cap < 2 * n + 2)
        t->cap *= 2;
    t->slot = glow_xcalloc(t->cap, sizeof(*t->slot));
    t->hash = glow_xcalloc(t->cap, sizeof(*t->hash));
}

static void table_free(table *t)
{
    free(t->slot);
    free(t->hash);
}

void glow_pass_cse(opt_cx *cx)
{
    table t;
    /* Constants first, so nodes over merged constants compare equal below. Only constants
     * this function uses are merged: others may belong to other functions' views. */
    table_init(&t, cx->m->constants.count);
    for (glow_node *c = cx->m->constants.first; c; c = c->next) {
        if (!c->nusers || glow_dtype_is_quantized(c->outs[0].dtype))
            continue;
        glow_node *same = find_or_insert(&t, c, const_hash(c), same_constant);
        if (same) {
            glow_replace_all_uses(cx->f, glow_val(c, 0), glow_val(same, 0));
            same->nusers += c->nusers;
            c->nusers = 0;
            cx->changes++;
        }
    }
    table_free(&t);

    table_init(&t, cx->f->nodes.count);
    GLOW_FOR_EACH_NODE(cx->f, n) {
        /* Side effects must happen once per node; nodes without results have nothing to
         * share. */
        if ((glow_node_kind_flags(n->kind) & (NF_SIDE_EFFECT | NF_STORAGE)) || !n->nout)
            continue;
        glow_node *same = find_or_insert(&t, n, node_hash(n), same_node);
        if (!same)
            continue;
        for (uint32_t r = 0; r < n->nout; r++)
            glow_replace_all_uses(cx->f, glow_val(n, r), glow_val(same, r));
        same->nusers += n->nusers;
        n->nusers = 0;
        opt_erase(n);
        cx->changes++;
    }
    table_free(&t);
}
