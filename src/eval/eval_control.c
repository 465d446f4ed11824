// eval_control.c - Reference evaluation of the lazy control-flow nodes IF and LOOP: their
// bodies are programs of their own (glow_subgraph_run), so an IF runs only the branch its
// condition takes and a LOOP runs its body once per iteration, however many there are
// (docs/dynamic-shapes.md, "Lazy control flow").
#include <stdlib.h>

#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name
#define MAX_BODY_IO 70

static bool truth(const glow_tensor *t)
{
    return glow_load_i64(t->type.dtype, t->data, 0) != 0;
}

static glow_status ev_if(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    int64_t k = glow_node_int(n, GA_K, 0);
    if (k < 0 || k > (int64_t)n->nin - 1)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': k = %lld", KIND_NAME(n), (long long)k);
    bool c = truth(&ins[0]);
    int64_t id = glow_node_int(n, c ? GA_THEN_BRANCH : GA_ELSE_BRANCH, 0);
    /* The then branch reads operands 1..k, the else branch the rest. */
    const glow_tensor *bins = c ? ins + 1 : ins + 1 + k;
    int nb = c ? (int)k : (int)(n->nin - 1 - (uint32_t)k);
    return glow_subgraph_run(id, bins, nb, outs, (int)n->nout, d);
}

/* The body's inputs are (iteration, condition, carried..., captures...) and its outputs
 * (condition, carried...). The carried values live in the results from the start, and each
 * iteration's new ones come back through `next`. */
static glow_status ev_loop(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    int k = (int)glow_node_int(n, GA_K, 0);
    int nin = (int)n->nin;
    if (k != (int)n->nout || 2 + k > nin || nin > MAX_BODY_IO - 2)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': k = %d with %d operands",
                         KIND_NAME(n), k, nin);
    int64_t trips = glow_load_i64(ins[0].type.dtype, ins[0].data, 0);
    bool cond = truth(&ins[1]);
    for (int i = 0; i < k; i++)
        memmove(outs[i].data, ins[2 + i].data, glow_type_bytes(&outs[i].type));
    int64_t iter = 0;
    uint8_t cond_in = cond, cond_out = 0;
    glow_type it = glow_type_scalar(GLOW_I64), ct = glow_type_scalar(GLOW_BOOL);
    glow_tensor bins[MAX_BODY_IO], bouts[4];
    bins[0] = glow_tensor_borrow(&it, &iter);
    bins[1] = glow_tensor_borrow(&ct, &cond_in);
    for (int i = 0; i < k; i++)
        bins[2 + i] = outs[i];
    for (int i = 2 + k; i < nin; i++)
        bins[i] = ins[i];
    bouts[0] = glow_tensor_borrow(&ct, &cond_out);
    glow_status s = GLOW_OK;
    for (int i = 0; i < k && s == GLOW_OK; i++)
        s = glow_tensor_alloc(&bouts[1 + i], &outs[i].type, d);
    for (; s == GLOW_OK && iter < trips && cond; iter++) {
        cond_in = cond;
        s = glow_subgraph_run(glow_node_int(n, GA_BODY, 0), bins, nin, bouts, 1 + k, d);
        for (int i = 0; s == GLOW_OK && i < k; i++)
            memcpy(outs[i].data, bouts[1 + i].data, glow_type_bytes(&outs[i].type));
        cond = cond_out != 0;
    }
    for (int i = 0; i < k; i++)
        glow_tensor_free(&bouts[1 + i]);
    return s;
}

glow_status glow_ev_control(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    if (n->kind == NK_IF)
        return ev_if(n, ins, outs, d);
    if (n->kind == NK_LOOP)
        return ev_loop(n, ins, outs, d);
    return glow_fail(d, GLOW_ERR_INTERNAL, "%s '%s': not a control-flow kind", KIND_NAME(n));
}
