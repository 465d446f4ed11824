// quantize.c - The graph conversion: every node with a quantized form whose values have
// recorded ranges becomes its quantized node (docs/quantization.md).
//
// Nodes are visited in function (topological) order. A converted node's float result is
// replaced by Dequantize(quantized result), so float consumers keep working; a consumer that
// is converted later finds its operand is such a Dequantize and takes the quantized value
// directly, so chains of quantized nodes carry no Dequantize/Quantize pairs between them.
// Dequantize nodes nobody uses any more are left to DCE.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quant/quant_internal.h"

/* Whether kind k is listed in the comma-separated `list` (case-insensitive). */
static bool kind_listed(const char *list, glow_node_kind k)
{
    const char *name = glow_node_kind_name(k);
    size_t nlen = strlen(name);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == nlen && !strncasecmp(p, name, len))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

/* Kinds whose result takes the quantization of operand 0 (data movement, max pooling). */
static bool follows_operand(glow_node_kind k)
{
    switch (k) {
    case NK_RESHAPE: case NK_TRANSPOSE: case NK_SLICE: case NK_TILE: case NK_BROADCAST:
    case NK_DEPTH_TO_SPACE: case NK_SPACE_TO_DEPTH: case NK_GATHER: case NK_MAX_POOL:
        return true;
    default:
        return false;
    }
}

/* Whether any node of f reads result `res` of n. */
static bool result_used(const glow_function *f, const glow_node *n, uint32_t res)
{
    for (const glow_node *u = f->nodes.first; u; u = u->next)
        for (uint32_t i = 0; i < u->nin; i++)
            if (u->ins[i].node == n && u->ins[i].res == res)
                return true;
    return false;
}

static bool convertible(const glow_function *f, const glow_node *n)
{
    /* MaxPool's index result may be there unused; the quantized form has none. */
    bool extra = n->kind == NK_MAX_POOL && n->nout == 2 && !result_used(f, n, 1);
    if ((n->nout != 1 && !extra) || n->outs[0].dtype != GLOW_F32)
        return false;
    switch (n->kind) {
    case NK_CONV:
        return glow_value_is_constant(n->ins[1]) &&
               (n->nin < 3 || glow_value_is_constant(n->ins[2]));
    case NK_FULLY_CONNECTED:
        return glow_value_is_constant(n->ins[1]) && glow_value_is_constant(n->ins[2]);
    case NK_MATMUL: case NK_ADD: case NK_SUB: case NK_MUL: case NK_MAX: case NK_MIN:
    case NK_RELU: case NK_CLIP: case NK_AVG_POOL: case NK_CONCAT:
        return true;
    default:
        return follows_operand(n->kind);
    }
}

/* The Relu or Clip that is the only user of n (a Conv, FullyConnected or MatMul), to fold
 * into its requantization; NULL when there is none or it stays float. */
static glow_node *fusable_act(quant_cx *cx, glow_node *n)
{
    if (n->kind != NK_CONV && n->kind != NK_FULLY_CONNECTED && n->kind != NK_MATMUL)
        return NULL;
    glow_node *user = NULL;
    for (glow_node *u = cx->f->nodes.first; u; u = u->next)
        for (uint32_t i = 0; i < u->nin; i++)
            if (u->ins[i].node == n) {
                if (user)
                    return NULL;
                user = u;
            }
    if (!user || (user->kind != NK_RELU && user->kind != NK_CLIP) || user->nin != 1 ||
        user->outs[0].dtype != GLOW_F32 || kind_listed(cx->o->keep_float, user->kind))
        return NULL;
    glow_quant_range r;
    return cx->look(cx->look_ctx, glow_val(user, 0), &r) ? user : NULL;
}

glow_node *quant_build(quant_cx *cx, glow_node *before, const glow_node *base,
                       const char *what, glow_node_kind k, const glow_value *ins, int nin,
                       const glow_attr *attrs, int nattr, const glow_type *declared)
{
    if (cx->status != GLOW_OK)
        return NULL;
    char name[512];
    if (what)
        snprintf(name, sizeof name, "%s/%s", base->name, what);
    else
        snprintf(name, sizeof name, "%s", base->name);
    glow_node *q = glow_build(cx->f, k, name, ins, nin, attrs, nattr, declared,
                              declared ? 1 : 0, cx->d);
    if (!q) {
        cx->status = cx->d->status != GLOW_OK ? cx->d->status : GLOW_ERR_INTERNAL;
        return NULL;
    }
    glow_node_move_before(q, before);
    return q;
}

/* The quantized type for value v from its recorded range; false when it has none. */
static bool value_type(quant_cx *cx, glow_value v, glow_type *t)
{
    glow_quant_range r;
    if (!cx->look(cx->look_ctx, v, &r))
        return false;
    double lo, hi;
    glow_quant_calibrate(&r, cx->o, &lo, &hi);
    *t = glow_quant_type(lo, hi, cx->o, glow_value_type(v));
    return true;
}

bool quant_operand(quant_cx *cx, glow_node *user, glow_value v, const glow_type *want,
                   glow_value *out)
{
    glow_type t;
    if (v.node->kind == NK_DEQUANTIZE && glow_dtype_is_quantized(v.node->ins[0].node->outs[
                                             v.node->ins[0].res].dtype)) {
        *out = v.node->ins[0];
    } else if (glow_value_is_constant(v)) {
        double lo, hi;
        quant_constant_minmax(v.node, &lo, &hi);
        t = want ? *want : glow_quant_type(lo, hi, cx->o, glow_value_type(v));
        glow_node *q = quant_build(cx, user, v.node, "quantized", NK_QUANTIZE, &v, 1, NULL, 0,
                                   &t);
        if (!q)
            return false;
        *out = glow_val(q, 0);
        return true;
    } else {
        if (!value_type(cx, v, &t))
            return false;
        if (want)
            t = *want;
        glow_node *q = quant_build(cx, user, v.node, "quantize", NK_QUANTIZE, &v, 1, NULL, 0,
                                   &t);
        if (!q)
            return false;
        *out = glow_val(q, 0);
        return true;
    }
    if (want && !glow_type_equal(glow_value_type(*out), want)) {
        glow_node *r = quant_build(cx, user, out->node, "rescale", NK_RESCALE_QUANTIZED, out,
                                   1, NULL, 0, want);
        if (!r)
            return false;
        *out = glow_val(r, 0);
    }
    return true;
}

/* Replaces n (and a folded activation `act`) by quantized node q: their float users now
 * read Dequantize(q). */
static void replace_by(quant_cx *cx, glow_node *n, glow_node *act, glow_node *q)
{
    glow_node *last = act ? act : n;
    glow_type ft = last->outs[0];
    glow_value qv = glow_val(q, 0);
    glow_node *dq = quant_build(cx, last->next, last, "dequantize", NK_DEQUANTIZE, &qv, 1,
                                NULL, 0, &ft);
    if (!dq)
        return;
    glow_replace_all_uses(cx->f, glow_val(last, 0), glow_val(dq, 0));
    if (act)
        glow_node_erase(act);
    glow_node_erase(n);
    cx->nquantized++;
}

/* Whether n is worth converting: the products and convolutions always (they carry the
 * cost); the cheap nodes only where they continue quantized values (some operand already
 * quantized, the others quantized or constant), so they never cost a Quantize of their own. */
static bool worth_it(const glow_node *n)
{
    if (n->kind == NK_CONV || n->kind == NK_FULLY_CONNECTED || n->kind == NK_MATMUL)
        return true;
    bool any = false;
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_value v = n->ins[i];
        bool q = v.node->kind == NK_DEQUANTIZE;
        if (!q && !glow_value_is_constant(v) && glow_value_type(v)->dtype == GLOW_F32)
            return false;
        any |= q;
    }
    return any;
}

/* Converts n; false (nothing changed) when an operand or the result has no range. */
static bool convert(quant_cx *cx, glow_node *n)
{
    glow_node *act = fusable_act(cx, n);
    glow_type yt;
    glow_value q[64];
    int nq = (int)n->nin;
    if (nq > 64 || !worth_it(n))
        return false;
    if (!follows_operand(n->kind) && !value_type(cx, glow_val(act ? act : n, 0), &yt))
        return false;
    /* Operands first, in a trial that builds nothing: every float operand needs a range. */
    for (int i = 0; i < nq; i++) {
        glow_value v = n->ins[i];
        glow_type t;
        bool has = glow_value_is_constant(v) || v.node->kind == NK_DEQUANTIZE ||
                   value_type(cx, v, &t) || glow_value_type(v)->dtype != GLOW_F32;
        if (!has)
            return false;
    }
    if (n->kind == NK_CONV)
        return quant_conv(cx, n, act, &yt, replace_by);
    if (n->kind == NK_FULLY_CONNECTED)
        return quant_fc(cx, n, act, &yt, replace_by);
    for (int i = 0; i < nq; i++) {
        glow_value v = n->ins[i];
        if (glow_value_type(v)->dtype != GLOW_F32) {
            q[i] = v;            /* Gather's indices */
            continue;
        }
        const glow_type *want = n->kind == NK_CONCAT ? &yt : NULL;
        /* A product's constant right operand is a weight: symmetric int8, as FullyConnected's
         * (the int8 kernels take signed weights with zero offset). */
        glow_type wt;
        if (n->kind == NK_MATMUL && i == 1 && glow_value_is_constant(v)) {
            double lo, hi;
            quant_constant_minmax(v.node, &lo, &hi);
            glow_quant_options sym = *cx->o;
            sym.schema = GLOW_QSCHEMA_SYMMETRIC;
            sym.precision = GLOW_I8Q;
            wt = glow_quant_type(lo, hi, &sym, glow_value_type(v));
            /* 7 bits as the other weights (quant_group): [-63, 63]. */
            double amax = fmax(fabs(lo), fabs(hi));
            if (cx->o->reduce_range && amax > 0)
                wt.scale = (float)(amax / 63.0);
            want = &wt;
        }
        if (!quant_operand(cx, n, v, want, &q[i]))
            return false;
        if (i == 0 && follows_operand(n->kind)) {
            yt = *glow_value_type(q[0]);
            for (int k = 0; k < GLOW_MAX_DIMS; k++)
                yt.dims[k] = n->outs[0].dims[k];
            yt.rank = n->outs[0].rank;
        }
    }
    glow_node *qn = quant_build(cx, n, n, NULL, n->kind, q, nq, n->attrs, (int)n->nattr, &yt);
    if (!qn)
        return false;
    if (act)
        quant_fold_act(qn, act);
    replace_by(cx, n, act, qn);
    return true;
}

glow_status glow_quantize(glow_function *f, const glow_quant_options *o, glow_quant_lookup look,
                          void *look_ctx, int *nquantized, glow_diag *d)
{
    quant_cx cx = { .f = f, .o = o, .look = look, .look_ctx = look_ctx, .d = d };
    if (o->precision != 0 && o->precision != GLOW_I8Q && o->precision != GLOW_I16Q)
        return glow_fail(d, GLOW_ERR_USAGE, "quantization precision must be int8 or int16");
    /* Snapshot the order: conversion inserts and erases nodes around the one it visits. */
    int count = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next)
        count++;
    glow_node **order = glow_xcalloc((size_t)count + 1, sizeof *order);
    int k = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next)
        order[k++] = n;
    for (int i = 0; i < count && cx.status == GLOW_OK; i++) {
        glow_node *n = order[i];
        if (!n || !convertible(f, n) || kind_listed(o->keep_float, n->kind))
            continue;
        glow_node *act = fusable_act(&cx, n);
        if (convert(&cx, n) && act)
            for (int j = i + 1; j < count; j++)
                if (order[j] == act)
                    order[j] = NULL;   /* erased with n */
    }
    free(order);
    if (nquantized)
        *nquantized = cx.nquantized;
    return cx.status;
}
