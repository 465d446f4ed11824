// onnx_ops_flex.c - ai.onnx.preview FlexAttention: scaled dot-product attention over rank-4
// inputs with the model's own score_mod and prob_mod subgraphs, built from existing nodes.
//
// Scores = (Q @ K^T) * scale, Scores = score_mod(Scores), Probs = Softmax(Scores, -1),
// Probs = prob_mod(Probs), Y = Probs @ V. The two subgraphs take the whole tensor and are
// imported inline like an If branch (onnx_import_graph), so whatever they compute (masks,
// biases, soft caps) folds and runs like the rest of the model. Grouped-query attention shares
// each K/V head with q_heads / kv_heads consecutive query heads: K and V are broadcast to the
// query heads first.
#include <math.h>

#include "onnx/onnx_internal.h"

/* K or V [B, Hkv, S, E] repeated to [B, Hq, S, E], each head for `group` query heads. */
static glow_status share_heads(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                               int64_t hq, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    int64_t b = t->dims[0], hkv = t->dims[1], s = t->dims[2], e = t->dims[3];
    if (hq == hkv) {
        *out = v;
        return GLOW_OK;
    }
    int64_t d5[5] = { b, hkv, 1, s, e }, w5[5] = { b, hkv, hq / hkv, s, e };
    GLOW_TRY(onnx_reshape(cx, np, v, 5, d5, &v));
    GLOW_TRY(onnx_broadcast_to(cx, np, v, 5, w5, &v));
    return onnx_reshape(cx, np, v, 4, (int64_t[]){ b, hq, s, e }, out);
}

/* The optional graph attribute `name` applied to x (one input, one output, same type). */
static glow_status modifier(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                            glow_value x, glow_value *out)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    *out = x;
    if (!a)
        return GLOW_OK;
    if (!a->g || a->g->n_input != 1 || a->g->n_output != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' must be a graph with one input and "
                         "one output", name);
    GLOW_TRY(onnx_import_graph(cx, np, onnx_sub_name(cx, np, name), a->g, &x, 1, out, 1));
    if (!glow_type_equal(glow_value_type(*out), glow_value_type(x)))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "'%s' must keep the type of its input",
                         name);
    return GLOW_OK;
}

glow_status load_flex_attention(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    glow_value q, k, v;
    GLOW_TRY(onnx_check_inputs(cx, np, 3, 3));
    GLOW_TRY(onnx_input(cx, np, 0, &q));
    GLOW_TRY(onnx_input(cx, np, 1, &k));
    GLOW_TRY(onnx_input(cx, np, 2, &v));
    const glow_type *qt = glow_value_type(q), *kt = glow_value_type(k), *vt = glow_value_type(v);
    if (qt->rank != 4 || kt->rank != 4 || vt->rank != 4 || !glow_dtype_is_float(qt->dtype) ||
        kt->dtype != qt->dtype || vt->dtype != qt->dtype || kt->dims[0] != qt->dims[0] ||
        vt->dims[0] != qt->dims[0] || kt->dims[3] != qt->dims[3] || vt->dims[1] != kt->dims[1] ||
        vt->dims[2] != kt->dims[2] || kt->dims[1] < 1 || qt->dims[1] % kt->dims[1] != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "Q, K and V must be float [B, Hq, L, E], "
                         "[B, Hkv, S, E] and [B, Hkv, S, Ev] of one type, Hq a multiple of Hkv");
    glow_dtype ft = qt->dtype;
    int64_t hq = qt->dims[1];
    double scale = onnx_attr(np, "scale") ? onnx_attr_float(np, "scale", 1.0f)
                                          : 1.0 / sqrt((double)qt->dims[3]);
    GLOW_TRY(share_heads(cx, np, k, hq, &k));
    GLOW_TRY(share_heads(cx, np, v, hq, &v));
    glow_value s, p, y;
    glow_attr perm = GLOW_AINTS(PERM, ((int64_t[]){ 0, 1, 3, 2 }), 4);
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &k, 1, &perm, 1, NULL, 0, &k));
    GLOW_TRY(onnx_matmul(cx, np, q, k, NULL, &s));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL,
                                 (glow_value[]){ s, onnx_sub_scalar(cx, np, "scale", ft, scale) },
                                 2, NULL, 0, &s));
    GLOW_TRY(modifier(cx, np, "score_mod", s, &s));
    glow_attr ax = GLOW_AI(AXIS, 3);
    GLOW_TRY(onnx_build(cx, np, NK_SOFTMAX, &s, 1, &ax, 1, NULL, 0, &p));
    GLOW_TRY(modifier(cx, np, "prob_mod", p, &p));
    GLOW_TRY(onnx_matmul(cx, np, p, v, NULL, &y));
    return onnx_set_output(cx, np, 0, y);
}
