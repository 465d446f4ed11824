// matmul_add_fc.c - Add(MatMul(x[M, K], w[K, N]), bias) becomes FullyConnected(x, w, b[N]) when
// the bias is b[N] broadcast over the rows (a Broadcast node, or a constant with equal rows).
// Requires: verified graph. Keeps: topological order; results within float rounding (the sum
// order of the bias may change).
//
// The MatMul must have no other user: they need the value without bias.
#include <string.h>

#include "opt/opt_internal.h"

/* A value of shape [N] equal to each row of `bias` ([M, N]), or a null value. */
static glow_value row_bias(opt_cx *cx, glow_node *at, glow_value bias)
{
    glow_value none = { NULL, 0 };
    const glow_type *bt = glow_value_type(bias);
    int64_t N = bt->dims[1];
    glow_type want = glow_type_make(bt->dtype, 1, &N);
    if (bias.node->kind == NK_BROADCAST) {
        glow_value src = bias.node->ins[0];
        const glow_type *st = glow_value_type(src);
        if (glow_type_numel(st) != N || st->dims[st->rank - 1] != N)
            return none;
        if (st->rank == 1)
            return src;
        glow_node *r = opt_build(cx, at, bias.node, "row", NK_RESHAPE, &src, 1, NULL, 0, &want);
        return r ? glow_val(r, 0) : none;
    }
    if (bias.node->kind != NK_CONSTANT || !bias.node->payload.data)
        return none;
    size_t row = (size_t)N * glow_dtype_size(bt->dtype);
    const uint8_t *p = bias.node->payload.data;
    for (int64_t m = 1; m < bt->dims[0]; m++)
        if (memcmp(p, p + (size_t)m * row, row) != 0)
            return none;
    glow_node *c = opt_constant(cx, bias.node, "row", &want, p);
    return c ? glow_val(c, 0) : none;
}

static void fuse(opt_cx *cx, glow_node *add)
{
    for (int side = 0; side < 2; side++) {
        glow_node *mm = add->ins[side].node;
        glow_value bias = add->ins[1 - side];
        if (mm->kind != NK_MATMUL || mm->nusers != 1 || mm->outs[0].rank != 2 ||
            glow_node_attr(mm, GA_FUSED_ACT) || !glow_dtype_is_float(mm->outs[0].dtype))
            continue;
        glow_value b = row_bias(cx, add, bias);
        if (!b.node)
            continue;
        glow_value ins[3] = { mm->ins[0], mm->ins[1], b };
        glow_node *fc = opt_build(cx, add, add, NULL, NK_FULLY_CONNECTED, ins, 3, NULL, 0, NULL);
        if (!fc)
            return;
        opt_replace(cx, add, glow_val(fc, 0));
        if (mm->nusers == 0)
            opt_erase(mm);
        return;
    }
}

void glow_pass_matmul_add_fc(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_ADD && n->outs[0].rank == 2)
            fuse(cx, n);
    }
}
