// affine.c - Folding a per-channel affine map y*s + t into the weights and bias of the linear
// node that produces y (Conv, FullyConnected, Gemm), shared by BatchNorm and Conv-arithmetic
// folding.
//
// For a Conv, output channel m is sum(w[m, ...] * x) + b[m], so scaling w[m, ...] and b[m]
// by s[m] and adding t[m] to the bias gives y*s + t exactly in real arithmetic; in floats it
// differs by rounding only. FullyConnected and Gemm are the same with the channel being the
// column of the result.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt_internal.h"

static bool is_const_float(glow_value v)
{
    return v.node->kind == NK_CONSTANT && v.node->payload.data &&
           glow_dtype_is_float(glow_value_type(v)->dtype);
}

bool opt_affine_foldable(const glow_node *p, int64_t *channels)
{
    if (p->nout != 1 || !glow_dtype_is_float(p->outs[0].dtype) || p->outs[0].rank < 2)
        return false;
    if (glow_node_attr(p, GA_FUSED_ACT) || p->nin < 2 || !is_const_float(p->ins[1]))
        return false;
    if (p->nin > 2 && !is_const_float(p->ins[2]))
        return false;
    *channels = p->outs[0].dims[1];
    switch (p->kind) {
    case NK_CONV:
        return true;
    case NK_FULLY_CONNECTED:
        return p->outs[0].rank == 2;
    case NK_GEMM:
        /* A bias shorter than [M, N] would need broadcasting first; the importer always
         * materializes it. */
        return p->outs[0].rank == 2 &&
               (p->nin < 3 || glow_type_same_shape(glow_value_type(p->ins[2]), &p->outs[0]));
    default:
        return false;
    }
}

void opt_affine_fold(opt_cx *cx, glow_node *p, glow_node *user, const double *s,
                     const double *t)
{
    const glow_type *wt = glow_value_type(p->ins[1]);
    const glow_type *out = &p->outs[0];
    int64_t C = out->dims[1];
    glow_node *w = opt_constant(cx, p, "folded_w", wt, p->ins[1].node->payload.data);
    if (!w)
        return;
    int64_t wn = glow_type_numel(wt);
    /* Which weight element belongs to which output channel. */
    int64_t per = C ? wn / C : 0;
    bool trans_b = glow_node_int(p, GA_TRANS_B, 0) != 0;
    if (wt->dtype == GLOW_F32 && (p->kind == NK_CONV || (p->kind == NK_GEMM && trans_b))) {
        /* The common case (f32 rows of a Conv) without per-element dtype dispatch; the
         * product is rounded to f32 as the general loop's store does. */
        float *wp = w->payload.data;
        for (int64_t c = 0; c < C; c++)
            for (int64_t j = 0; j < per; j++)
                wp[c * per + j] = (float)((double)wp[c * per + j] * s[c]);
        wn = 0;
    }
    for (int64_t i = 0; i < wn; i++) {
        int64_t c;
        if (p->kind == NK_CONV || (p->kind == NK_GEMM && trans_b))
            c = per ? i / per : 0;   /* [M, ...] rows */
        else
            c = i % C;               /* [K, N] columns */
        double v = glow_load_f64(wt->dtype, w->payload.data, (size_t)i);
        glow_store_f64(wt->dtype, w->payload.data, (size_t)i, v * s[c]);
    }
    /* The bias: [C] for Conv and FC, [M, N] for Gemm (beta folded in, then beta = 1). */
    glow_type bt = p->kind == NK_GEMM ? *out : glow_type_make(out->dtype, 1, &C);
    if (p->nin > 2)
        bt = *glow_value_type(p->ins[2]);
    glow_node *b = opt_constant(cx, p, "folded_b", &bt, NULL);
    if (!b)
        return;
    double beta = p->kind == NK_GEMM ? glow_node_float(p, GA_BETA, 1.0) : 1.0;
    int64_t bn = glow_type_numel(&bt);
    for (int64_t i = 0; i < bn; i++) {
        int64_t c = i % C;
        double old = p->nin > 2 ? glow_load_f64(bt.dtype, p->ins[2].node->payload.data,
                                                (size_t)i) * beta : 0.0;
        glow_store_f64(bt.dtype, b->payload.data, (size_t)i, old * s[c] + t[c]);
    }
    glow_value ins[3] = { p->ins[0], glow_val(w, 0), glow_val(b, 0) };
    glow_node *np = opt_build(cx, user, p, NULL, p->kind, ins, 3, p->attrs, (int)p->nattr,
                              &p->outs[0]);
    if (!np)
        return;
    if (p->kind == NK_GEMM)
        glow_node_set_float(np, GA_BETA, 1.0);
    if (!glow_type_equal(&np->outs[0], &user->outs[0])) {
        opt_erase(np);
        return;
    }
    opt_replace(cx, user, glow_val(np, 0));
    if (p->nusers == 0)
        opt_erase(p);
}

bool opt_per_channel(glow_value v, const glow_type *shape, double *vals)
{
    const glow_node *n = v.node;
    double splat;
    int64_t C = shape->rank >= 2 ? shape->dims[1] : 0;
    if (C <= 0)
        return false;
    if (opt_splat_value(v, &splat)) {
        for (int64_t c = 0; c < C; c++)
            vals[c] = splat;
        return true;
    }
    if (n->kind == NK_BROADCAST && n->ins[0].node->kind == NK_CONSTANT &&
        n->ins[0].node->payload.data) {
        /* Broadcast of a [1, C, 1, 1] or [C, 1, 1] constant: its one non-1 dim must land on
         * dim 1 once right-aligned with the result. */
        const glow_node *src = n->ins[0].node;
        const glow_type *st = &src->outs[0];
        if (glow_type_numel(st) != C || glow_dtype_is_quantized(st->dtype))
            return false;
        for (int k = 0; k < st->rank && C > 1; k++)
            if (st->dims[k] != 1 && k + (shape->rank - st->rank) != 1)
                return false;
        for (int64_t c = 0; c < C; c++)
            vals[c] = glow_load_f64(st->dtype, src->payload.data, (size_t)c);
        return true;
    }
    if (n->kind != NK_CONSTANT || !n->payload.data || !glow_type_same_shape(&n->outs[0], shape))
        return false;
    const glow_type *t = &n->outs[0];
    if (glow_dtype_is_quantized(t->dtype))
        return false;
    int64_t inner = 1;
    for (int k = 2; k < t->rank; k++)
        inner *= t->dims[k];
    int64_t numel = glow_type_numel(t);
    for (int64_t i = 0; i < numel; i++) {
        int64_t c = (i / inner) % C;
        double x = glow_load_f64(t->dtype, n->payload.data, (size_t)i);
        if (i < C * inner && i % inner == 0)
            vals[c] = x;
        else if (memcmp(&x, &vals[c], sizeof x) != 0 && !(x == vals[c]))
            return false;
    }
    return true;
}
