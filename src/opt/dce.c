// dce.c - Removes nodes whose results nobody uses, and module constants no function uses.
// Requires: user counts (the driver counts them). Keeps: topological order; Save nodes and
// placeholders always stay.
//
// Walking the function backwards removes whole dead chains in one sweep: by the time a node
// is visited, all its (later) users have been visited and erased. Constants are shared by
// every function of the module, so one is dropped only when no function uses it; the
// importer leaves originals behind when it folds broadcasts, and folding leaves more.
#include <stdlib.h>

#include "opt/opt_internal.h"

static bool used_elsewhere(const glow_module *m, const glow_function *f, const glow_node *c)
{
    for (const glow_function *g = m->functions; g; g = g->next) {
        if (g == f)
            continue;
        for (const glow_node *n = g->nodes.first; n; n = n->next)
            for (uint32_t i = 0; i < n->nin; i++)
                if (n->ins[i].node == c)
                    return true;
    }
    return false;
}

void glow_pass_dce(opt_cx *cx)
{
    glow_node *n = cx->f->nodes.last;
    while (n) {
        glow_node *prev = n->prev;
        if (n->nusers == 0 && !(glow_node_kind_flags(n->kind) & NF_SIDE_EFFECT)) {
            opt_erase(n);
            cx->changes++;
        }
        n = prev;
    }
    glow_node_list *l = &cx->m->constants;
    glow_node *c = l->first;
    /* The removed constants' payloads are freed together at the end (folding leaves the
     * original of every folded weight behind: without this a model's weights would stay in
     * memory twice or more until the module goes). */
    GLOW_VEC(void *) dead = { 0 };
    while (c) {
        glow_node *next = c->next;
        if (c->nusers == 0 && !used_elsewhere(cx->m, cx->f, c)) {
            if (c->payload.data) {
                GLOW_VEC_PUSH(dead, c->payload.data);
                c->payload.data = NULL;
            }
            /* Storage is unlinked through the module list (glow_node_erase cannot). */
            if (c->prev)
                c->prev->next = c->next;
            else
                l->first = c->next;
            if (c->next)
                c->next->prev = c->prev;
            else
                l->last = c->prev;
            c->prev = c->next = NULL;
            l->count--;
            cx->changes++;
        }
        c = next;
    }
    glow_arena_free_alone(&cx->m->arena, dead.data, dead.len);
    GLOW_VEC_FREE(dead);
}
