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

/* Source bytes from which a lone 2-D transpose is folded streaming (below). */
#define STREAM_BYTES ((size_t)1 << 20)

/* Folds the Transpose n of a 2-D constant nothing else reads (VGG-19's 400 MB classifier
 * weight under Gemm's transB) straight into the new constant, reading the source in row order
 * and giving its pages back behind the read position when it has a mapping of its own: the
 * source and the result then never coexist whole (evaluating and copying the result would
 * hold the weight three times). The source is freed after; its only user goes. */
static bool fold_lone_transpose(opt_cx *cx, glow_node *n)
{
    glow_node *src = n->ins[0].node;
    const glow_type *t = &src->outs[0];
    int np = 0;
    const int64_t *perm = glow_node_ints(n, GA_PERM, &np);
    size_t es = glow_dtype_size(t->dtype), bytes = glow_type_bytes(t);
    if (src->kind != NK_CONSTANT || src->nusers != 1 || !src->payload.data || t->rank != 2 ||
        np != 2 || perm[0] != 1 || perm[1] != 0 || bytes < STREAM_BYTES || bytes == SIZE_MAX ||
        t->dtype == GLOW_STRING || (es != 1 && es != 2 && es != 4 && es != 8))
        return false;
    glow_node *c = opt_constant(cx, n, "folded", &n->outs[0], NULL);
    if (!c)
        return true;   /* cx->status says why */
    const uint8_t *in = src->payload.data;
    uint8_t *out = c->payload.data;
    int64_t rows = t->dims[0], cols = t->dims[1];
    /* Row order, in 64 x 64 tiles: what is in flight is 64 source rows (VGG-19: 6 MiB). */
    const int64_t tile = 64;
    const uint8_t *dropped = in;   /* source given back below this */
    for (int64_t r0 = 0; r0 < rows; r0 += tile) {
        int64_t r1 = r0 + tile < rows ? r0 + tile : rows;
        for (int64_t c0 = 0; c0 < cols; c0 += tile) {
            int64_t c1 = c0 + tile < cols ? c0 + tile : cols;
#define MOVE(T)                                                                  \
    for (int64_t r = r0; r < r1; r++)                                            \
        for (int64_t k = c0; k < c1; k++)                                        \
            ((T *)(void *)out)[k * rows + r] = ((const T *)(const void *)in)[r * cols + k]
            switch (es) {
            case 1: MOVE(uint8_t); break;
            case 2: MOVE(uint16_t); break;
            case 4: MOVE(uint32_t); break;
            default: MOVE(uint64_t); break;
            }
#undef MOVE
        }
        const uint8_t *done = in + (size_t)r1 * (size_t)cols * es;
        glow_arena_drop_pages(&cx->m->arena, in, dropped, (size_t)(done - dropped));
        uintptr_t page = (uintptr_t)done & ~(uintptr_t)4095;
        if (page > (uintptr_t)dropped)
            dropped = in + (page - (uintptr_t)in);
    }
    glow_replace_all_uses(cx->f, glow_val(n, 0), glow_val(c, 0));
    c->nusers += n->nusers;
    n->nusers = 0;
    opt_erase(n);
    void *ptr = src->payload.data;
    glow_arena_free_alone(&cx->m->arena, &ptr, 1);
    if (!ptr)
        src->payload.data = NULL;
    cx->changes++;
    return true;
}

void glow_pass_fold_const(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (foldable(n) && !(n->kind == NK_TRANSPOSE && fold_lone_transpose(cx, n)))
            fold(cx, n);
    }
}
