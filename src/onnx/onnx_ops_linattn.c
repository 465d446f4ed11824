// onnx_ops_linattn.c - Loader for LinearAttention (opset 27), unrolled over the sequence.
//
// Follows ONNX's function body: Q, K, V (and decay, beta) are split into heads, computed in
// f32, and the recurrent state S [B, H_kv, d_k, d_v] is updated once per time step:
//   linear       S = S + k (x) v
//   gated        S = exp(g) * S + k (x) v
//   delta        S = S + k (x) beta * (v - S^T k)
//   gated_delta  S' = exp(g) * S; S = S' + k (x) beta * (v - S'^T k)
// and o_t = scale * q_t^T S, where each query head reads the state of its KV head (GQA).
// decay g is per key dim [B, T, H_kv * d_k] or per head [B, T, H_kv]; beta is per head
// [B, T, H_kv] or shared [B, T, 1]. present_state is the last S.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

#define MAX_STEPS 4096 /* time steps unrolled; each one adds about ten nodes */

typedef struct lin_attn {
    onnx_ctx *cx;
    const Onnx__NodeProto *np;
    int64_t B, T, hq, hkv, dk, dv;
    bool gated, delta;
} lin_attn;

/* [B, T, heads * d] -> [B, T, heads, d] in f32, checking the packed size. */
static glow_status unpack(lin_attn *la, int in, const char *what, int64_t heads, int64_t *d,
                          glow_value *out)
{
    glow_value v;
    GLOW_TRY(onnx_input(la->cx, la->np, in, &v));
    const glow_type *t = glow_value_type(v);
    if (t->rank != 3 || t->dims[0] != la->B || t->dims[1] != la->T || heads < 1 ||
        t->dims[2] % heads != 0 || !glow_dtype_is_float(t->dtype))
        return onnx_fail(la->cx, la->np, GLOW_ERR_BAD_SHAPE, "%s must be float [%lld, %lld, "
                         "%lld * d]", what, (long long)la->B, (long long)la->T,
                         (long long)heads);
    *d = t->dims[2] / heads;
    if (t->dtype != GLOW_F32)
        GLOW_TRY(onnx_cast(la->cx, la->np, v, GLOW_F32, &v));
    int64_t dims[4] = { la->B, la->T, heads, *d };
    return onnx_reshape(la->cx, la->np, v, 4, dims, out);
}

/* Time step t of a [B, T, h, d] value as [B, h, d0, d1] (d0 * d1 == d). */
static glow_status step(lin_attn *la, glow_value v, int64_t t, int64_t d0, int64_t d1,
                        glow_value *out)
{
    const glow_type *vt = glow_value_type(v);
    GLOW_TRY(onnx_slice_axis(la->cx, la->np, v, 1, t, t + 1, &v));
    int64_t dims[4] = { la->B, vt->dims[2], d0, d1 };
    return onnx_reshape(la->cx, la->np, v, 4, dims, out);
}

static glow_status bin(lin_attn *la, glow_node_kind k, glow_value a, glow_value b,
                       glow_value *out)
{
    glow_value ins[2] = { a, b };
    if (k == NK_MATMUL)
        return onnx_build(la->cx, la->np, k, ins, 2, NULL, 0, NULL, 0, out);
    return onnx_build_elemwise(la->cx, la->np, k, ins, 2, NULL, 0, out);
}

/* The state each query head reads: S repeated hq / hkv times per KV head. */
static glow_status read_state(lin_attn *la, glow_value s, glow_value *out)
{
    int64_t g = la->hq / la->hkv;
    if (g == 1) {
        *out = s;
        return GLOW_OK;
    }
    int64_t d5[5] = { la->B, la->hkv, 1, la->dk, la->dv };
    GLOW_TRY(onnx_reshape(la->cx, la->np, s, 5, d5, &s));
    d5[2] = g;
    GLOW_TRY(onnx_broadcast_to(la->cx, la->np, s, 5, d5, &s));
    int64_t d4[4] = { la->B, la->hq, la->dk, la->dv };
    return onnx_reshape(la->cx, la->np, s, 4, d4, out);
}

glow_status load_linear_attention(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                  glow_node_kind kind)
{
    lin_attn la = { .cx = cx, .np = np };
    glow_value q0;
    GLOW_TRY(onnx_input(cx, np, 0, &q0));
    const glow_type *qt = glow_value_type(q0);
    glow_dtype out_t = qt->dtype;
    if (qt->rank != 3)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "query must be [B, T, H_q * d_k]");
    la.B = qt->dims[0];
    la.T = qt->dims[1];
    la.hq = onnx_attr_int(np, "q_num_heads", 0);
    la.hkv = onnx_attr_int(np, "kv_num_heads", 0);
    if (la.hq < 1 || la.hkv < 1 || la.hq % la.hkv != 0 || la.hq > 65536)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "q_num_heads %lld must be a positive "
                         "multiple of kv_num_heads %lld", (long long)la.hq, (long long)la.hkv);
    if (la.T > MAX_STEPS)
        return onnx_unsupported(cx, np, "%lld time steps to unroll (at most %d)",
                                (long long)la.T, MAX_STEPS);
    const char *rule = onnx_attr_str(cx, np, "update_rule", "gated_delta");
    la.gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    la.delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!la.gated && !la.delta && strcmp(rule, "linear") != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "update_rule '%s' is not valid", rule);

    glow_value q, k, v, g = { 0 }, beta = { 0 };
    int64_t dkk, dg = 0, db = 0;
    GLOW_TRY(unpack(&la, 0, "query", la.hq, &la.dk, &q));
    GLOW_TRY(unpack(&la, 1, "key", la.hkv, &dkk, &k));
    GLOW_TRY(unpack(&la, 2, "value", la.hkv, &la.dv, &v));
    if (dkk != la.dk)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "key head size %lld differs from the "
                         "query's %lld", (long long)dkk, (long long)la.dk);
    if (la.gated) {
        if (!onnx_has_input(np, 4))
            return onnx_fail(cx, np, GLOW_ERR_PARSE, "update_rule '%s' needs input 4 'decay'",
                             rule);
        GLOW_TRY(unpack(&la, 4, "decay", la.hkv, &dg, &g));
        if (dg != 1 && dg != la.dk)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "decay must hold 1 or d_k = %lld "
                             "values per head", (long long)la.dk);
        GLOW_TRY(onnx_build(cx, np, NK_EXP, &g, 1, NULL, 0, NULL, 0, &g));
    }
    if (la.delta) {
        if (!onnx_has_input(np, 5))
            return onnx_fail(cx, np, GLOW_ERR_PARSE, "update_rule '%s' needs input 5 'beta'",
                             rule);
        glow_value b0;
        GLOW_TRY(onnx_input(cx, np, 5, &b0));
        const glow_type *bt = glow_value_type(b0);
        int64_t heads = bt->rank == 3 && bt->dims[2] == 1 ? 1 : la.hkv;
        GLOW_TRY(unpack(&la, 5, "beta", heads, &db, &beta));
        if (db != 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "beta must be [B, T, kv_num_heads] "
                             "or [B, T, 1]");
    }

    double scale = 1.0 / sqrt((double)la.dk);
    if (onnx_attr(np, "scale")) {
        GLOW_TRY(onnx_attr_check(cx, np, "scale", 1));
        scale = onnx_attr_float(np, "scale", 1.0f);
    }
    const char *name = onnx_node_name(np);
    glow_value sc = onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/scale", name), GLOW_F32,
                                scale);

    /* The initial state: past_state (cast to f32) or zeros. */
    int64_t sdims[4] = { la.B, la.hkv, la.dk, la.dv };
    glow_type st = glow_type_make(GLOW_F32, 4, sdims);
    glow_value s;
    if (onnx_has_input(np, 3)) {
        GLOW_TRY(onnx_input(cx, np, 3, &s));
        const glow_type *pt = glow_value_type(s);
        bool ok = pt->rank == 4 && glow_dtype_is_float(pt->dtype);
        for (int i = 0; ok && i < 4; i++)
            ok = pt->dims[i] == sdims[i];
        if (!ok)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "past_state must be float [%lld, %lld, "
                             "%lld, %lld]", (long long)sdims[0], (long long)sdims[1],
                             (long long)sdims[2], (long long)sdims[3]);
        if (pt->dtype != GLOW_F32)
            GLOW_TRY(onnx_cast(cx, np, s, GLOW_F32, &s));
    } else {
        size_t bytes = glow_type_bytes(&st);
        if (bytes > ONNX_FOLD_MAX_BYTES)
            return onnx_unsupported(cx, np, "a zero state of %zu bytes is too large", bytes);
        void *zeros = glow_arena_try_alloc(&cx->scratch, bytes ? bytes : 1);
        if (!zeros)
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "out of memory for the zero state");
        memset(zeros, 0, bytes);
        s = onnx_constant(cx, glow_arena_printf(cx->arena, "%s/state0", name), &st, zeros);
    }

    glow_value *outs = glow_arena_try_alloc(&cx->scratch, sizeof(glow_value) *
                                                          (size_t)(la.T > 0 ? la.T : 1));
    if (!outs)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "out of memory");
    for (int64_t t = 0; t < la.T; t++) {
        glow_value kcol, krow, vrow, outer;
        GLOW_TRY(step(&la, k, t, la.dk, 1, &kcol));
        GLOW_TRY(step(&la, v, t, 1, la.dv, &vrow));
        if (la.gated) {
            glow_value gt;
            GLOW_TRY(step(&la, g, t, dg, 1, &gt));
            GLOW_TRY(bin(&la, NK_MUL, s, gt, &s));
        }
        if (la.delta) {
            /* v - S^T k as a row: k^T S, [B, H_kv, 1, d_v]. */
            glow_value got, bt;
            GLOW_TRY(step(&la, k, t, 1, la.dk, &krow));
            GLOW_TRY(bin(&la, NK_MATMUL, krow, s, &got));
            GLOW_TRY(bin(&la, NK_SUB, vrow, got, &vrow));
            GLOW_TRY(step(&la, beta, t, 1, 1, &bt));
            GLOW_TRY(bin(&la, NK_MUL, bt, vrow, &vrow));
        }
        GLOW_TRY(bin(&la, NK_MATMUL, kcol, vrow, &outer));
        GLOW_TRY(bin(&la, NK_ADD, s, outer, &s));
        glow_value qrow, rs, o;
        GLOW_TRY(step(&la, q, t, 1, la.dk, &qrow));
        GLOW_TRY(read_state(&la, s, &rs));
        GLOW_TRY(bin(&la, NK_MATMUL, qrow, rs, &o));
        GLOW_TRY(bin(&la, NK_MUL, o, sc, &o));
        int64_t od[3] = { la.B, 1, la.hq * la.dv };
        GLOW_TRY(onnx_reshape(cx, np, o, 3, od, &outs[t]));
    }
    glow_value y;
    if (la.T > 0) {
        GLOW_TRY(onnx_concat_many(cx, np, outs, (int)la.T, 1, &y));
    } else {
        int64_t od[3] = { la.B, 0, la.hq * la.dv };
        glow_type yt = glow_type_make(GLOW_F32, 3, od);
        y = onnx_constant(cx, glow_arena_printf(cx->arena, "%s/empty", name), &yt, NULL);
    }
    if (out_t != GLOW_F32) {
        GLOW_TRY(onnx_cast(cx, np, y, out_t, &y));
        GLOW_TRY(onnx_cast(cx, np, s, out_t, &s));
    }
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    return onnx_set_output(cx, np, 1, s);
}
