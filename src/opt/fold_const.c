// fold_const.c - Evaluates nodes whose operands are all constants (or splats) with the
// reference evaluator (glow_eval_node) and replaces them by constants.
// Requires: verified graph. Keeps: topological order; results bit-exact with running them.
//
// Walking in topological order folds whole constant subgraphs in one sweep, since a folded
// node's users see a constant next. A Splat alone is not folded (it is cheaper as a splat
// than as a materialized constant), only as the operand of a folded node. Nodes whose kind or
// dtype has no evaluator stay, and so do results over GLOW_OPT_FOLD_LIMIT bytes (but for the
// Transpose of a constant used only there) or results over 64 KiB more than twice the size of
// their operands.
#include <string.h>

#include "eval/eval.h"
#include "opt/opt_internal.h"

#define EXPAND_LIMIT ((size_t)64 << 10)

static bool foldable(const glow_node *n)
{
    if (n->nin == 0 || n->nout == 0 || (glow_node_kind_flags(n->kind) & (NF_SIDE_EFFECT |
                                                                         NF_STORAGE)))
        return false;
    size_t in_bytes = 0, out_bytes = 0;
    for (uint32_t i = 0; i < n->nin; i++) {
        const glow_node *in = n->ins[i].node;
        if (in->kind != NK_CONSTANT && in->kind != NK_SPLAT)
            return false;
        in_bytes += in->kind == NK_SPLAT ? glow_dtype_size(in->outs[0].dtype) :
                                           glow_type_bytes(&in->outs[0]);
    }
    /* A Transpose of a constant nothing else uses replaces it byte for byte (a Gemm's transB
     * of VGG's 400 MB classifier weight): the fold costs no memory, running it every time
     * would. */
    bool moves = n->kind == NK_TRANSPOSE && n->ins[0].node->kind == NK_CONSTANT &&
                 n->ins[0].node->nusers == 1;
    for (uint32_t i = 0; i < n->nout; i++) {
        size_t bytes = glow_type_bytes(&n->outs[i]);
        if (bytes == SIZE_MAX || (bytes > GLOW_OPT_FOLD_LIMIT && !moves))
            return false;
        out_bytes += bytes;
    }
    /* Expanding a small constant (a Broadcast of per-channel parameters to a whole
     * activation, a Tile) would trade a cheap run-time op for a large constant. */
    if (out_bytes > EXPAND_LIMIT && out_bytes > 2 * in_bytes)
        return false;
    return glow_eval_foldable(n);
}

/* Evaluates operand i: a constant's payload is borrowed, a splat is filled. */
static glow_status operand(opt_cx *cx, glow_value v, glow_tensor *t)
{
    if (v.node->kind == NK_CONSTANT) {
        *t = glow_tensor_borrow(&v.node->outs[0], v.node->payload.data);
        return GLOW_OK;
    }
    return glow_eval_node(v.node, NULL, t, cx->d);
}

static void fold(opt_cx *cx, glow_node *n)
{
    glow_tensor ins[64], outs[8];
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    if (n->nin > 64 || n->nout > 8)
        return;
    glow_status s = GLOW_OK;
    for (uint32_t i = 0; i < n->nin && s == GLOW_OK; i++)
        s = operand(cx, n->ins[i], &ins[i]);
    if (s == GLOW_OK)
        s = glow_eval_node(n, ins, outs, cx->d);
    if (s == GLOW_OK) {
        glow_node *c[8] = { 0 };
        for (uint32_t r = 0; r < n->nout && opt_ok(cx); r++)
            c[r] = opt_constant(cx, n, n->nout > 1 ? "folded_r" : "folded", &n->outs[r],
                                outs[r].data);
        if (opt_ok(cx)) {
            for (uint32_t r = 0; r < n->nout; r++)
                glow_replace_all_uses(cx->f, glow_val(n, r), glow_val(c[r], 0));
            c[0]->nusers += n->nusers;
            n->nusers = 0;
            opt_erase(n);
            cx->changes++;
        }
    } else if (cx->d) {
        /* No evaluator for these values, or they make the node fail (a Gather index out of
         * range): keep the node, so running the model reports what is wrong. */
        glow_diag_clear(cx->d);
    }
    for (uint32_t i = 0; i < n->nin; i++)
        if (ins[i].owned)
            glow_tensor_free(&ins[i]);
    for (uint32_t r = 0; r < n->nout; r++)
        glow_tensor_free(&outs[r]);
}

void glow_pass_fold_const(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (foldable(n))
            fold(cx, n);
    }
}
