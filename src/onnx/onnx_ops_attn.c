// onnx_ops_attn.c - Loaders for Attention (opset 23/24) and RotaryEmbedding, expressed with
// MatMul, Softmax, data movement and elementwise nodes.
//
// Attention follows ONNX's function body: heads are split out of 3-D inputs, past keys and
// values are concatenated in front of the new ones (giving the present outputs), grouped-query
// K/V heads are repeated, Q and K^T are each scaled by sqrt(scale), the scores are soft-capped,
// one additive bias (float mask, bool mask as 0/-inf, causal triangle, key padding) is added,
// and Softmax(scores) @ V gives Y. The causal triangle is static and becomes a constant.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

static glow_status transpose(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                             const int64_t *perm, glow_value *out)
{
    glow_attr a = GLOW_AINTS(PERM, perm, glow_value_type(v)->rank);
    return onnx_build(cx, np, NK_TRANSPOSE, &v, 1, &a, 1, NULL, 0, out);
}

/* v[..., start:end:step, ...] along one axis (0 <= start < end <= dim, step > 0). */
static glow_status slice_step(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int axis,
                              int64_t start, int64_t end, int64_t step, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    int64_t s[GLOW_MAX_DIMS], e[GLOW_MAX_DIMS], st[GLOW_MAX_DIMS];
    for (int i = 0; i < t->rank; i++) {
        s[i] = i == axis ? start : 0;
        e[i] = i == axis ? end : t->dims[i];
        st[i] = i == axis ? step : 1;
    }
    if (start == 0 && end == t->dims[axis] && step == 1) {
        *out = v;
        return GLOW_OK;
    }
    glow_attr a[3] = { GLOW_AINTS(STARTS, s, t->rank), GLOW_AINTS(ENDS, e, t->rank),
                       GLOW_AINTS(STEPS, st, t->rank) };
    return onnx_build(cx, np, NK_SLICE, &v, 1, a, 3, NULL, 0, out);
}

static glow_status concat2(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value a, glow_value b,
                           int axis, glow_value *out)
{
    glow_attr at = GLOW_AI(AXIS, axis);
    return onnx_build(cx, np, NK_CONCAT, (glow_value[]){ a, b }, 2, &at, 1, NULL, 0, out);
}

/* [B, S, H*D] -> [B, H, S, D]: the head layout of 3-D Attention inputs. */
static glow_status split_heads(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                               int64_t heads, const char *what, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    if (heads < 1 || t->dims[2] % heads != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "%s's hidden size %lld is not a multiple "
                         "of %lld heads", what, (long long)t->dims[2], (long long)heads);
    int64_t d[4] = { t->dims[0], t->dims[1], heads, t->dims[2] / heads };
    static const int64_t perm[4] = { 0, 2, 1, 3 };
    GLOW_TRY(onnx_reshape(cx, np, v, 4, d, &v));
    return transpose(cx, np, v, perm, out);
}

/* The static causal bias [S, T]: -inf where key j lies after query i (j > i + past). */
static glow_status causal_bias(onnx_ctx *cx, const Onnx__NodeProto *np, glow_dtype dt,
                               int64_t s, int64_t t, int64_t past, glow_value *out)
{
    int64_t dims[2] = { s, t };
    glow_type ty = glow_type_make(dt, 2, dims);
    size_t bytes = glow_type_bytes(&ty);
    if (bytes > ONNX_FOLD_MAX_BYTES)
        return onnx_unsupported(cx, np, "causal mask of %lld x %lld is too large", (long long)s,
                                (long long)t);
    void *data = glow_arena_try_alloc(&cx->scratch, bytes ? bytes : 1);
    if (!data)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "no memory for the causal mask");
    for (int64_t i = 0; i < s; i++)
        for (int64_t j = 0; j < t; j++)
            glow_store_f64(dt, data, (size_t)(i * t + j), j > i + past ? -INFINITY : 0.0);
    const char *name = glow_arena_printf(cx->arena, "%s/causal", onnx_node_name(np));
    *out = onnx_constant(cx, name, &ty, data);
    return GLOW_OK;
}

/* Input 6 (opset 24): keys at or past nonpad_kv_seqlen[b] are masked; bias [B, 1, 1, T]. */
static glow_status padding_bias(onnx_ctx *cx, const Onnx__NodeProto *np, glow_dtype dt,
                                int64_t b, int64_t t, glow_value *out)
{
    glow_value len;
    GLOW_TRY(onnx_input(cx, np, 6, &len));
    const glow_type *lt = glow_value_type(len);
    if (!glow_dtype_is_int(lt->dtype) || lt->rank != 1 || lt->dims[0] != b)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "nonpad_kv_seqlen must be integers [%lld]",
                         (long long)b);
    if (t > (1 << 24))
        return onnx_unsupported(cx, np, "key sequence of %lld", (long long)t);
    glow_type rt = glow_type_make(lt->dtype, 2, (int64_t[]){ 1, t });
    void *r = glow_arena_try_alloc(&cx->scratch, glow_type_bytes(&rt));
    if (!r)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "no memory for the key positions");
    for (int64_t j = 0; j < t; j++)
        glow_store_i64(lt->dtype, r, (size_t)j, j);
    glow_value pos = onnx_constant(cx, glow_arena_printf(cx->arena, "%s/key_pos",
                                                         onnx_node_name(np)), &rt, r);
    glow_value keep, bias;
    GLOW_TRY(onnx_reshape(cx, np, len, 2, (int64_t[]){ b, 1 }, &len));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_LESS, (glow_value[]){ pos, len }, 2, NULL, 0, &keep));
    glow_value zero = onnx_sub_scalar(cx, np, "zero", dt, 0.0);
    glow_value ninf = onnx_sub_scalar(cx, np, "neg_inf", dt, -INFINITY);
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ keep, zero, ninf }, 3, NULL,
                                 0, &bias));
    return onnx_reshape(cx, np, bias, 4, (int64_t[]){ b, 1, 1, t }, out);
}

/* The additive attention bias from attn_mask (input 3), is_causal and input 6; *has is false
 * when there is none. */
static glow_status attention_bias(onnx_ctx *cx, const Onnx__NodeProto *np, glow_dtype dt,
                                  int64_t b, int64_t s, int64_t t, int64_t past,
                                  glow_value *bias, bool *has)
{
    *has = false;
    if (onnx_has_input(np, 3)) {
        glow_value m;
        GLOW_TRY(onnx_input(cx, np, 3, &m));
        const glow_type *mt = glow_value_type(m);
        if (mt->rank < 2 || mt->rank > 4)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "attn_mask has rank %d (2 to 4)",
                             mt->rank);
        if (mt->dtype == GLOW_BOOL) {
            glow_value zero = onnx_sub_scalar(cx, np, "mask_zero", dt, 0.0);
            glow_value ninf = onnx_sub_scalar(cx, np, "mask_neg_inf", dt, -INFINITY);
            GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ m, zero, ninf }, 3,
                                         NULL, 0, &m));
        } else if (mt->dtype != dt) {
            GLOW_TRY(onnx_cast(cx, np, m, dt, &m));
        }
        mt = glow_value_type(m);
        int64_t mlen = mt->dims[mt->rank - 1];
        if (mlen > t)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "attn_mask covers %lld keys, there are "
                             "%lld", (long long)mlen, (long long)t);
        if (mlen < t) {
            /* A shorter mask leaves the trailing keys masked out. */
            int64_t pads[2 * GLOW_MAX_DIMS] = { 0 };
            pads[mt->rank + mt->rank - 1] = t - mlen;
            glow_attr pa[3] = { GLOW_AINTS(PADS, pads, 2 * mt->rank),
                                GLOW_ASTR(MODE, "constant"), GLOW_AF(VALUE, -INFINITY) };
            GLOW_TRY(onnx_build(cx, np, NK_PAD, &m, 1, pa, 3, NULL, 0, &m));
        }
        *bias = m;
        *has = true;
    }
    if (onnx_attr_int(np, "is_causal", 0) != 0) {
        glow_value c;
        GLOW_TRY(causal_bias(cx, np, dt, s, t, past, &c));
        if (*has)
            GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, (glow_value[]){ *bias, c }, 2, NULL, 0,
                                         &c));
        *bias = c;
        *has = true;
    }
    if (onnx_has_input(np, 6)) {
        glow_value p;
        GLOW_TRY(padding_bias(cx, np, dt, b, t, &p));
        if (*has)
            GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, (glow_value[]){ *bias, p }, 2, NULL, 0,
                                         &p));
        *bias = p;
        *has = true;
    }
    return GLOW_OK;
}

/* [B, Hkv, T, D] -> [B, Hkv * g, T, D], each head repeated g times in a row. */
static glow_status repeat_heads(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                                int64_t g, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    if (g == 1) {
        *out = v;
        return GLOW_OK;
    }
    int64_t d5[5] = { t->dims[0], t->dims[1], 1, t->dims[2], t->dims[3] };
    int64_t full[5] = { t->dims[0], t->dims[1], g, t->dims[2], t->dims[3] };
    int64_t d4[4] = { t->dims[0], t->dims[1] * g, t->dims[2], t->dims[3] };
    GLOW_TRY(onnx_reshape(cx, np, v, 5, d5, &v));
    GLOW_TRY(onnx_broadcast_to(cx, np, v, 5, full, &v));
    return onnx_reshape(cx, np, v, 4, d4, out);
}

/* Appends v to the past tensor of input `past_in` along the sequence axis when given. */
static glow_status with_past(onnx_ctx *cx, const Onnx__NodeProto *np, int past_in, glow_value v,
                             glow_value *out)
{
    if (!onnx_has_input(np, past_in)) {
        *out = v;
        return GLOW_OK;
    }
    glow_value p;
    GLOW_TRY(onnx_input(cx, np, past_in, &p));
    const glow_type *pt = glow_value_type(p), *vt = glow_value_type(v);
    if (pt->rank != 4 || pt->dims[0] != vt->dims[0] || pt->dims[1] != vt->dims[1] ||
        pt->dims[3] != vt->dims[3] || pt->dtype != vt->dtype)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d (past) must be %s[%lld, %lld, "
                         "P, %lld]", past_in, glow_dtype_name(vt->dtype),
                         (long long)vt->dims[0], (long long)vt->dims[1],
                         (long long)vt->dims[3]);
    return concat2(cx, np, p, v, 2, out);
}

glow_status load_attention(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "scale", 1));
    GLOW_TRY(onnx_attr_check(cx, np, "softcap", 1));
    glow_value q, k, v;
    GLOW_TRY(onnx_input(cx, np, 0, &q));
    GLOW_TRY(onnx_input(cx, np, 1, &k));
    GLOW_TRY(onnx_input(cx, np, 2, &v));
    const glow_type *qt = glow_value_type(q);
    glow_dtype dt = qt->dtype;
    int rank = qt->rank;
    if (!glow_dtype_is_float(dt))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "Q must be floating point, not %s",
                         glow_dtype_name(dt));
    if ((rank != 3 && rank != 4) || glow_value_type(k)->rank != rank ||
        glow_value_type(v)->rank != rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "Q, K and V must all be 3-D or all 4-D "
                         "(ranks %d, %d, %d)", rank, glow_value_type(k)->rank,
                         glow_value_type(v)->rank);
    if (glow_value_type(k)->dtype != dt || glow_value_type(v)->dtype != dt)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "Q, K and V must have one element type");
    int64_t b = qt->dims[0], s = qt->dims[rank - 2];
    if (rank == 3) {
        if (!onnx_attr(np, "q_num_heads") || !onnx_attr(np, "kv_num_heads"))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "3-D inputs need 'q_num_heads' and "
                             "'kv_num_heads'");
        int64_t nq = onnx_attr_int(np, "q_num_heads", 0);
        int64_t nkv = onnx_attr_int(np, "kv_num_heads", 0);
        GLOW_TRY(split_heads(cx, np, q, nq, "Q", &q));
        GLOW_TRY(split_heads(cx, np, k, nkv, "K", &k));
        GLOW_TRY(split_heads(cx, np, v, nkv, "V", &v));
    }
    glow_type q4 = *glow_value_type(q), k4 = *glow_value_type(k), v4 = *glow_value_type(v);
    int64_t hq = q4.dims[1], hkv = k4.dims[1];
    if (k4.dims[0] != b || v4.dims[0] != b || v4.dims[1] != hkv || v4.dims[2] != k4.dims[2] ||
        k4.dims[3] != q4.dims[3])
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "Q, K and V shapes disagree (batch, heads, "
                         "key length or head size)");
    if (hkv < 1 || hq % hkv != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "%lld query heads are not a multiple of "
                         "%lld key/value heads", (long long)hq, (long long)hkv);
    int64_t past = 0;
    if (onnx_has_input(np, 4) != onnx_has_input(np, 5))
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "past_key and past_value go together");
    GLOW_TRY(with_past(cx, np, 4, k, &k));
    GLOW_TRY(with_past(cx, np, 5, v, &v));
    int64_t t = glow_value_type(k)->dims[2];
    past = t - k4.dims[2];
    GLOW_TRY(onnx_set_output(cx, np, 1, k));
    GLOW_TRY(onnx_set_output(cx, np, 2, v));
    GLOW_TRY(repeat_heads(cx, np, k, hq / hkv, &k));
    GLOW_TRY(repeat_heads(cx, np, v, hq / hkv, &v));

    /* Scores: (Q * sqrt(scale)) @ (K^T * sqrt(scale)), as ONNX's function body rounds it. */
    double scale = onnx_attr(np, "scale") ? onnx_attr_float(np, "scale", 1.0f)
                                          : 1.0 / sqrt((double)q4.dims[3]);
    glow_value sq = onnx_sub_scalar(cx, np, "sqrt_scale", dt, sqrt(scale));
    static const int64_t kperm[4] = { 0, 1, 3, 2 };
    glow_value kt, scores;
    GLOW_TRY(transpose(cx, np, k, kperm, &kt));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ q, sq }, 2, NULL, 0, &q));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ kt, sq }, 2, NULL, 0, &kt));
    GLOW_TRY(onnx_build(cx, np, NK_MATMUL, (glow_value[]){ q, kt }, 2, NULL, 0, NULL, 0,
                        &scores));
    glow_value stage[4];
    stage[0] = scores;
    float softcap = onnx_attr_float(np, "softcap", 0.0f);
    if (softcap > 0.0f) {
        glow_value c = onnx_sub_scalar(cx, np, "softcap", dt, softcap);
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_DIV, (glow_value[]){ scores, c }, 2, NULL, 0,
                                     &scores));
        GLOW_TRY(onnx_build(cx, np, NK_TANH, &scores, 1, NULL, 0, NULL, 0, &scores));
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ scores, c }, 2, NULL, 0,
                                     &scores));
    } else if (softcap < 0.0f) {
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "softcap = %g is negative", softcap);
    }
    stage[1] = scores;
    glow_value bias;
    bool has_bias;
    GLOW_TRY(attention_bias(cx, np, dt, b, s, t, past, &bias, &has_bias));
    if (has_bias)
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, (glow_value[]){ scores, bias }, 2, NULL, 0,
                                     &scores));
    stage[2] = scores;

    /* softmax_precision: the Softmax runs in that float type. */
    int64_t prec = onnx_attr_int(np, "softmax_precision", 0);
    glow_dtype sdt = dt;
    if (prec != 0 && (!onnx_dtype_of_code(prec, &sdt) || !glow_dtype_is_float(sdt)))
        return onnx_unsupported(cx, np, "softmax_precision = %lld (a float type code)",
                                (long long)prec);
    glow_value probs;
    glow_attr ax = GLOW_AI(AXIS, 3);
    GLOW_TRY(onnx_cast(cx, np, scores, sdt, &probs));
    GLOW_TRY(onnx_build(cx, np, NK_SOFTMAX, &probs, 1, &ax, 1, NULL, 0, &probs));
    GLOW_TRY(onnx_cast(cx, np, probs, dt, &probs));
    stage[3] = probs;
    int64_t mode = onnx_attr_int(np, "qk_matmul_output_mode", 0);
    if (onnx_has_output(np, 3)) {
        if (mode < 0 || mode > 3)
            return onnx_unsupported(cx, np, "qk_matmul_output_mode = %lld (0 to 3)",
                                    (long long)mode);
        GLOW_TRY(onnx_set_output(cx, np, 3, stage[mode]));
    }

    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_MATMUL, (glow_value[]){ probs, v }, 2, NULL, 0, NULL, 0, &y));
    if (rank == 3) {
        static const int64_t perm[4] = { 0, 2, 1, 3 };
        int64_t dv = glow_value_type(y)->dims[3];
        GLOW_TRY(transpose(cx, np, y, perm, &y));
        GLOW_TRY(onnx_reshape(cx, np, y, 3, (int64_t[]){ b, s, hq * dv }, &y));
    }
    return onnx_set_output(cx, np, 0, y);
}

/* --- RotaryEmbedding --- */

/* cos or sin cache (input `in`) as [B, S, 1, half]: gathered at position_ids when given,
 * else already [B, S, >= half]. */
static glow_status rotary_cache(onnx_ctx *cx, const Onnx__NodeProto *np, int in,
                                const glow_value *pos, int64_t b, int64_t s, int64_t half,
                                glow_dtype dt, glow_value *out)
{
    glow_value c;
    GLOW_TRY(onnx_input(cx, np, in, &c));
    const glow_type *ct = glow_value_type(c);
    if (ct->dtype != dt)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d is %s, the input is %s", in,
                         glow_dtype_name(ct->dtype), glow_dtype_name(dt));
    if (pos) {
        if (ct->rank != 2)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d must be [max_position, "
                             "rotary_dim / 2] with position_ids", in);
        glow_attr a0 = GLOW_AI(AXIS, 0);
        GLOW_TRY(onnx_build(cx, np, NK_GATHER, (glow_value[]){ c, *pos }, 2, &a0, 1, NULL, 0,
                            &c));
        ct = glow_value_type(c);
    }
    if (ct->rank != 3 || ct->dims[0] != b || ct->dims[1] != s || ct->dims[2] < half)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d must give [%lld, %lld, >= %lld] "
                         "values", in, (long long)b, (long long)s, (long long)half);
    GLOW_TRY(slice_step(cx, np, c, 2, 0, half, 1, &c));
    return onnx_reshape(cx, np, c, 4, (int64_t[]){ b, s, 1, half }, out);
}

glow_status load_rotary_embedding(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                  glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type xt = *glow_value_type(x);
    if (!glow_dtype_is_float(xt.dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input must be floating point, not %s",
                         glow_dtype_name(xt.dtype));
    static const int64_t perm[4] = { 0, 2, 1, 3 };
    int64_t heads = onnx_attr_int(np, "num_heads", 0);
    /* Work in [B, S, H, D]. */
    if (xt.rank == 4) {
        GLOW_TRY(transpose(cx, np, x, perm, &x));
    } else if (xt.rank == 3) {
        if (heads < 1 || xt.dims[2] % heads != 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "3-D input of hidden size %lld needs "
                             "'num_heads' dividing it (got %lld)", (long long)xt.dims[2],
                             (long long)heads);
        int64_t d[4] = { xt.dims[0], xt.dims[1], heads, xt.dims[2] / heads };
        GLOW_TRY(onnx_reshape(cx, np, x, 4, d, &x));
    } else {
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input has rank %d (3 or 4)", xt.rank);
    }
    const glow_type x4 = *glow_value_type(x);
    int64_t b = x4.dims[0], s = x4.dims[1], hd = x4.dims[3];
    int64_t rot = onnx_attr_int(np, "rotary_embedding_dim", 0);
    if (rot == 0)
        rot = hd;
    if (rot < 2 || rot > hd || rot % 2 != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "rotary_embedding_dim = %lld for head size "
                         "%lld (even, at most the head size)", (long long)rot, (long long)hd);
    int64_t half = rot / 2;
    bool interleaved = onnx_attr_int(np, "interleaved", 0) != 0;
    glow_value pos, cosv, sinv;
    bool has_pos = onnx_has_input(np, 3);
    if (has_pos) {
        GLOW_TRY(onnx_input(cx, np, 3, &pos));
        const glow_type *pt = glow_value_type(pos);
        if (!glow_dtype_is_int(pt->dtype) || pt->rank != 2 || pt->dims[0] != b ||
            pt->dims[1] != s)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "position_ids must be integers "
                             "[%lld, %lld]", (long long)b, (long long)s);
    }
    GLOW_TRY(rotary_cache(cx, np, 1, has_pos ? &pos : NULL, b, s, half, xt.dtype, &cosv));
    GLOW_TRY(rotary_cache(cx, np, 2, has_pos ? &pos : NULL, b, s, half, xt.dtype, &sinv));

    glow_value xr, x1, x2, rest = x;
    GLOW_TRY(slice_step(cx, np, x, 3, 0, rot, 1, &xr));
    if (interleaved) {
        GLOW_TRY(slice_step(cx, np, xr, 3, 0, rot, 2, &x1));
        GLOW_TRY(slice_step(cx, np, xr, 3, 1, rot, 2, &x2));
    } else {
        GLOW_TRY(slice_step(cx, np, xr, 3, 0, half, 1, &x1));
        GLOW_TRY(slice_step(cx, np, xr, 3, half, rot, 1, &x2));
    }
    glow_value a, c, real, imag;
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ cosv, x1 }, 2, NULL, 0, &a));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ sinv, x2 }, 2, NULL, 0, &c));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_SUB, (glow_value[]){ a, c }, 2, NULL, 0, &real));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ sinv, x1 }, 2, NULL, 0, &a));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ cosv, x2 }, 2, NULL, 0, &c));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, (glow_value[]){ a, c }, 2, NULL, 0, &imag));
    glow_value y;
    if (interleaved) {
        /* Pairs (real, imag) side by side: [..., half, 2] flattened to [..., rot]. */
        int64_t d5[5] = { b, s, x4.dims[2], half, 1 };
        GLOW_TRY(onnx_reshape(cx, np, real, 5, d5, &real));
        GLOW_TRY(onnx_reshape(cx, np, imag, 5, d5, &imag));
        GLOW_TRY(concat2(cx, np, real, imag, 4, &y));
        GLOW_TRY(onnx_reshape(cx, np, y, 4, (int64_t[]){ b, s, x4.dims[2], rot }, &y));
    } else {
        GLOW_TRY(concat2(cx, np, real, imag, 3, &y));
    }
    if (rot < hd) {
        GLOW_TRY(slice_step(cx, np, rest, 3, rot, hd, 1, &rest));
        GLOW_TRY(concat2(cx, np, y, rest, 3, &y));
    }
    if (xt.rank == 4)
        GLOW_TRY(transpose(cx, np, y, perm, &y));
    else
        GLOW_TRY(onnx_reshape(cx, np, y, 3, xt.dims, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* --- CausalConvWithState --- */

/* Depthwise causal 1-D convolution with a carried state (ONNX's function body): the input
 * [B, C, L] is prefixed with past_state [B, C, K-1] (zeros when absent), convolved per
 * channel without padding, optionally followed by SiLU; present_state is the last K-1
 * positions of the prefixed input. */
glow_status load_causal_conv_with_state(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                        glow_node_kind kind)
{
    glow_value x, w, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &w));
    const glow_type xt = *glow_value_type(x), wt = *glow_value_type(w);
    if (xt.rank != 3 || wt.rank != 3 || wt.dims[0] != xt.dims[1] || wt.dims[1] != 1 ||
        wt.dims[2] < 1) {
        char a[128], b[128];
        return onnx_unsupported(cx, np, "input %s with weight %s (glowc handles 1-D input "
                                "[B, C, L] with depthwise weight [C, 1, K])",
                                glow_type_str(&xt, a, sizeof a), glow_type_str(&wt, b, sizeof b));
    }
    const char *act = onnx_attr_str(cx, np, "activation", "none");
    bool silu = strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0;
    if (!silu && strcmp(act, "none") != 0)
        return onnx_unsupported(cx, np, "activation '%s' (none, silu or swish)", act);
    int64_t c = xt.dims[1], k = wt.dims[2], l = xt.dims[2];
    glow_value padded = x;
    if (onnx_has_input(np, 3)) {
        glow_value past;
        GLOW_TRY(onnx_input(cx, np, 3, &past));
        const glow_type *pt = glow_value_type(past);
        if (pt->rank != 3 || pt->dims[0] != xt.dims[0] || pt->dims[1] != c ||
            pt->dims[2] != k - 1 || pt->dtype != xt.dtype)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "past_state must be %s[%lld, %lld, "
                             "%lld]", glow_dtype_name(xt.dtype), (long long)xt.dims[0],
                             (long long)c, (long long)(k - 1));
        if (k > 1)
            GLOW_TRY(concat2(cx, np, past, x, 2, &padded));
    } else if (k > 1) {
        int64_t pads[6] = { 0, 0, k - 1, 0, 0, 0 };
        glow_attr pa[3] = { GLOW_AINTS(PADS, pads, 6), GLOW_ASTR(MODE, "constant"),
                            GLOW_AF(VALUE, 0.0) };
        GLOW_TRY(onnx_build(cx, np, NK_PAD, &x, 1, pa, 3, NULL, 0, &padded));
    }
    glow_value ins[3] = { padded, w };
    int nin = 2;
    if (onnx_has_input(np, 2)) {
        GLOW_TRY(onnx_input(cx, np, 2, &ins[2]));
        nin = 3;
    }
    int64_t one = 1, zero2[2] = { 0, 0 };
    glow_attr ca[5] = { GLOW_AINTS(KERNEL, &k, 1), GLOW_AINTS(STRIDES, &one, 1),
                        GLOW_AINTS(PADS, zero2, 2), GLOW_AINTS(DILATIONS, &one, 1),
                        GLOW_AI(GROUP, c) };
    GLOW_TRY(onnx_build(cx, np, NK_CONV, ins, nin, ca, 5, NULL, 0, &y));
    if (silu) {
        glow_value sg;
        GLOW_TRY(onnx_build(cx, np, NK_SIGMOID, &y, 1, NULL, 0, NULL, 0, &sg));
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ y, sg }, 2, NULL, 0, &y));
    }
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    if (onnx_has_output(np, 1)) {
        glow_value state;
        if (k > 1) {
            GLOW_TRY(slice_step(cx, np, padded, 2, l, l + k - 1, 1, &state));
        } else {
            /* K = 1 carries no state: an empty [B, C, 0] tensor. */
            glow_type st = glow_type_make(xt.dtype, 3, (int64_t[]){ xt.dims[0], c, 0 });
            state = onnx_constant(cx, glow_arena_printf(cx->arena, "%s/empty_state",
                                                        onnx_node_name(np)), &st, NULL);
        }
        GLOW_TRY(onnx_set_output(cx, np, 1, state));
    }
    return GLOW_OK;
}
