// reduce.c - Shrinks a failing generated model by delta debugging over its nodes (fuzz.h):
// chunks of nodes are removed, the latest first, while the failure stays, the chunk halving
// down to single nodes, until no node can go. A removed node's consumers read one of its
// inputs of the same shape instead (an activation or a normalization simply drops out), or,
// when it has none, its value becomes a graph input with fresh data.
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "testlib/onnx_build.h"

/* The most candidate models one reduction tries (each costs a few backend runs). */
#define MAX_TESTS 160

static void remove_node(gen_graph *g, int i)
{
    gen_node *n = &g->nodes[i];
    const gen_val *v = &g->vals[n->out];
    int repl = -1;
    for (int j = 0; j < n->nin && repl < 0; j++) {
        const gen_val *x = n->in[j] >= 0 ? &g->vals[n->in[j]] : NULL;
        if (x && x->elem == MK_F32 && x->rank == v->rank &&
            !memcmp(x->dims, v->dims, sizeof(int64_t) * (size_t)v->rank))
            repl = n->in[j];
    }
    n->dead = true;
    if (repl >= 0) {
        for (int k = 0; k < g->nnodes; k++)
            for (int j = 0; j < g->nodes[k].nin; j++)
                if (!g->nodes[k].dead && g->nodes[k].in[j] == n->out)
                    g->nodes[k].in[j] = repl;
        return;
    }
    gen_val *o = &g->vals[n->out];
    o->kind = GV_INPUT;
    int64_t count = gen_numel(o);
    o->data = calloc((size_t)(count > 0 ? count : 1), 8);
    gen_fill(g, o->data, count, 1.0f);
}

/* The live nodes, in order. */
static int live_nodes(const gen_graph *g, int *idx)
{
    int n = 0;
    for (int i = 0; i < g->nnodes; i++)
        if (!g->nodes[i].dead)
            idx[n++] = i;
    return n;
}

gen_graph *fuzz_reduce(const gen_graph *g, fuzz_pred fails, void *ctx, int *tests_run)
{
    gen_graph *best = gen_clone(g);
    int idx[GEN_MAX_NODES], n = live_nodes(best, idx), tests = 0;
    int chunk = n / 2 > 0 ? n / 2 : 1;
    while (tests < MAX_TESTS && n > 1) {
        bool progress = false;
        for (int end = n; end > 0 && tests < MAX_TESTS; end -= chunk) {
            int start = end - chunk > 0 ? end - chunk : 0;
            if (end - start >= n)
                continue; /* keep at least one node */
            gen_graph *cand = gen_clone(best);
            for (int k = start; k < end; k++)
                remove_node(cand, idx[k]);
            gen_refresh_outputs(cand);
            tests++;
            if (cand->nouts > 0 && fails(cand, ctx)) {
                gen_free(best);
                best = cand;
                n = live_nodes(best, idx);
                end = start + chunk; /* the next chunk down starts at start */
                progress = true;
            } else {
                gen_free(cand);
            }
        }
        if (!progress) {
            if (chunk == 1)
                break;
            chunk /= 2;
        } else if (chunk > n / 2) {
            chunk = n / 2 > 0 ? n / 2 : 1;
        }
    }
    if (tests_run)
        *tests_run = tests;
    return best;
}
