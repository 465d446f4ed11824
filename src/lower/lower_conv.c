// lower_conv.c - Convolutions and pools over one spatial dim become their 2-D forms, and a
// grouped (not depthwise) Conv may split into one Conv per group.
//
// 1-D: [N, C, W] is reshaped to [N, C, 1, W], the node runs in 2-D with a 1-tall kernel (every
// spatial attribute gains a leading neutral entry: kernel 1, stride 1, pads 0, dilation 1)
// and the result is reshaped back. Backends then need only their 2-D paths (the cpu
// backend's blocked kernels), and the optimizer cancels the reshapes between consecutive
// layers. The bytes, the summation order and a MaxPool's flattened indices stay the same.
//
// Group split: slices of the input channels, weights and bias, and a Concat of the results on
// the channel axis. Only backends that cannot run grouped convolutions ask for this (their
// keep function says no for such a node); ordinary (group 1) and depthwise (group ==
// channels) convolutions are never split, because a per-channel split would only multiply
// nodes.
#include <stdio.h>
#include <string.h>

#include "lower/lower_internal.h"

#define MAX_CONV_ATTRS 16
#define DIMS4(a, b, c, d) ((const int64_t[]){ (a), (b), (c), (d) })
#define CONCAT_MAX 64   /* CONCAT's operand limit (nodes.def) */

/* Concatenates vals[0..count) on axis 1, in chunks when there are more than CONCAT allows. */
static glow_value concat_all(lower_cx *cx, glow_value *vals, int count, int level)
{
    glow_attr axis1 = GLOW_AI(AXIS, 1);
    char what[64];
    if (count <= CONCAT_MAX) {
        snprintf(what, sizeof what, level ? "concat_%d" : "concat", level);
        return lw_build(cx, NK_CONCAT, what, vals, count, &axis1, 1, NULL);
    }
    int chunks = (count + CONCAT_MAX - 1) / CONCAT_MAX;
    for (int c = 0; c < chunks; c++) {
        int lo = c * CONCAT_MAX, cnt = count - lo < CONCAT_MAX ? count - lo : CONCAT_MAX;
        snprintf(what, sizeof what, "concat_%d_%d", level, c);
        vals[c] = lw_build(cx, NK_CONCAT, what, vals + lo, cnt, &axis1, 1, NULL);
    }
    return concat_all(cx, vals, chunks, level + 1);
}

/* The attribute with a neutral leading entry (`lead`) for a new first spatial dim; pads (begins
 * then ends) gain one at the front of each half. */
static glow_attr widen(lower_cx *cx, const glow_attr *a)
{
    uint32_t n = a->n, twice = a->id == GA_PADS;
    int64_t *v = GLOW_NEW_ARRAY(&cx->f->module->arena, int64_t, (size_t)n + 1 + twice);
    int64_t lead = a->id == GA_KERNEL || a->id == GA_STRIDES || a->id == GA_DILATIONS;
    if (twice) {
        uint32_t h = n / 2;
        v[0] = 0;
        memcpy(v + 1, a->v.ints, h * sizeof *v);
        v[h + 1] = 0;
        memcpy(v + h + 2, a->v.ints + h, (n - h) * sizeof *v);
    } else {
        v[0] = lead;
        memcpy(v + 1, a->v.ints, n * sizeof *v);
    }
    glow_attr w = *a;
    w.n = n + 1 + twice;
    w.v.ints = v;
    return w;
}

/* Inserts a 1 at dim 2 of a rank-3 value. */
static glow_value tall(lower_cx *cx, const char *what, glow_value x)
{
    const glow_type *t = lw_type(x);
    int64_t dims[4] = { t->dims[0], t->dims[1], 1, t->dims[2] };
    return lw_reshape(cx, what, x, 4, dims);
}

/* A Conv, ConvTranspose or pool over [N, C, W] as its 2-D form over [N, C, 1, W]. */
void lower_spatial_1d(lower_cx *cx, bool *applied)
{
    glow_node *n = cx->n;
    if (lw_type(lw_in(cx, 0))->rank != 3 || n->nattr > MAX_CONV_ATTRS ||
        (n->kind == NK_MAX_POOL && n->nout > 1 && n->outs[1].rank != 3))
        return;
    *applied = true;
    glow_attr attrs[MAX_CONV_ATTRS];
    for (uint32_t i = 0; i < n->nattr; i++) {
        const glow_attr *a = &n->attrs[i];
        bool spatial = a->id == GA_KERNEL || a->id == GA_STRIDES || a->id == GA_PADS ||
                       a->id == GA_DILATIONS || a->id == GA_CEIL_EXTRA ||
                       a->id == GA_OUTPUT_PADDING;
        attrs[i] = spatial ? widen(cx, a) : *a;
    }
    glow_value ins[3];
    ins[0] = tall(cx, "input_2d", lw_in(cx, 0));
    if (n->nin > 1)
        ins[1] = tall(cx, "weight_2d", lw_in(cx, 1));
    if (n->nin > 2)
        ins[2] = lw_in(cx, 2);
    glow_type outs[2];
    for (uint32_t i = 0; i < n->nout && i < 2; i++) {
        const glow_type *y = &n->outs[i];
        int64_t dims[4] = { y->dims[0], y->dims[1], 1, y->dims[2] };
        outs[i] = glow_type_make(y->dtype, 4, dims);
        outs[i].scale = y->scale;
        outs[i].offset = y->offset;
    }
    glow_value y = lw_build_n(cx, n->kind, "2d", ins, (int)n->nin, attrs, (int)n->nattr, outs,
                              (int)n->nout);
    for (uint32_t i = 0; i < n->nout && lw_ok(cx); i++) {
        glow_value r = i ? glow_val(y.node, i) : y;
        cx->out[i] = lw_reshape(cx, i ? "indices_1d" : "result_1d", r, 3, n->outs[i].dims);
    }
}

/* True when the INTS attribute `a` of n has `count` entries, all equal to `value`. */
static bool all_ints(const glow_node *n, glow_attr_id a, int count, int64_t value)
{
    int k = 0;
    const int64_t *v = glow_node_ints(n, a, &k);
    if (!v)
        return value == 0 || value == 1;   /* absent: pads 0, dilations 1, no output padding */
    for (int i = 0; i < k; i++)
        if (v[i] != value)
            return false;
    return k == count;
}

/* A 2-D ConvTranspose whose kernel equals its stride (s x s, no pads, dilation 1, group 1)
 * writes every output pixel from exactly one input pixel: y[m][s i + a][s j + b] = bias[m] +
 * sum_c x[c][i][j] w[c][m][a][b]. That is a 1x1 Conv to s*s*M channels, channel (a s + b) M
 * + m, followed by DepthToSpace (DCR) — the U-Net upsampler, which then runs on the backend's
 * fast convolution instead of a scatter of taps. */
static void deconv_as_conv(lower_cx *cx, bool *applied)
{
    glow_node *n = cx->n;
    const glow_type *xt = lw_type(lw_in(cx, 0)), *wt = lw_type(lw_in(cx, 1)), *y = &n->outs[0];
    int nk = 0;
    const int64_t *k = glow_node_ints(n, GA_KERNEL, &nk);
    if (xt->rank != 4 || xt->dtype != GLOW_F32 || y->dtype != GLOW_F32 || !k || nk != 2 ||
        k[0] != k[1] || k[0] < 1 || glow_node_int(n, GA_GROUP, 1) != 1 ||
        !all_ints(n, GA_STRIDES, 2, k[0]) || !all_ints(n, GA_PADS, 4, 0) ||
        !all_ints(n, GA_DILATIONS, 2, 1) || !all_ints(n, GA_OUTPUT_PADDING, 2, 0) ||
        y->dims[2] != k[0] * xt->dims[2] || y->dims[3] != k[0] * xt->dims[3])
        return;
    *applied = true;
    int64_t s = k[0], c = wt->dims[0], m = wt->dims[1], ss = s * s;
    glow_value w = lw_transpose(cx, "weight_t", lw_in(cx, 1), DIMS4(2, 3, 1, 0));
    glow_value ins[3] = { lw_in(cx, 0),
                          lw_reshape(cx, "weight_1x1", w, 4, DIMS4(ss * m, c, 1, 1)) };
    if (n->nin > 2) {
        glow_type bt = glow_type_make(GLOW_F32, 2, (int64_t[]){ ss, m });
        glow_value b = lw_reshape(cx, "bias_row", lw_in(cx, 2), 2, (int64_t[]){ 1, m });
        b = lw_broadcast(cx, "bias_tiled", b, &bt);
        ins[2] = lw_reshape(cx, "bias_1x1", b, 1, (int64_t[]){ ss * m });
    }
    glow_attr attrs[] = { GLOW_AINTS(KERNEL, DIMS4(1, 1, 0, 0), 2),
                          GLOW_AINTS(STRIDES, DIMS4(1, 1, 0, 0), 2),
                          GLOW_AINTS(PADS, DIMS4(0, 0, 0, 0), 4),
                          GLOW_AINTS(DILATIONS, DIMS4(1, 1, 0, 0), 2), GLOW_AI(GROUP, 1) };
    glow_type ct = glow_type_make(GLOW_F32, 4, DIMS4(xt->dims[0], ss * m, xt->dims[2],
                                                     xt->dims[3]));
    glow_value conv = lw_build(cx, NK_CONV, "conv_1x1", ins, (int)n->nin, attrs, 5, &ct);
    glow_attr d2s[] = { GLOW_AI(BLOCKSIZE, s), GLOW_ASTR(MODE, "DCR") };
    cx->out[0] = lw_build(cx, NK_DEPTH_TO_SPACE, "depth_to_space", &conv, 1, d2s, 2, y);
}

void lower_conv_transpose(lower_cx *cx, bool *applied)
{
    if (lw_type(lw_in(cx, 0))->rank == 3)
        lower_spatial_1d(cx, applied);
    else
        deconv_as_conv(cx, applied);
}

void lower_conv(lower_cx *cx, bool *applied)
{
    glow_node *n = cx->n;
    if (lw_type(lw_in(cx, 0))->rank == 3) {
        lower_spatial_1d(cx, applied);
        return;
    }
    const glow_type *xt = lw_type(lw_in(cx, 0)), *wt = lw_type(lw_in(cx, 1));
    const glow_type *yt = &n->outs[0];
    int64_t g = glow_node_int(n, GA_GROUP, 1), c = xt->dims[1], m = wt->dims[0];
    if (g <= 1 || g >= c || c % g != 0 || m % g != 0 || n->nattr > MAX_CONV_ATTRS ||
        g > (1 << 16))
        return;
    *applied = true;
    /* The same attributes, with group 1. */
    glow_attr attrs[MAX_CONV_ATTRS];
    int nattr = 0;
    for (uint32_t i = 0; i < n->nattr; i++)
        attrs[nattr++] = n->attrs[i].id == GA_GROUP ? GLOW_AI(GROUP, 1) : n->attrs[i];
    int64_t cg = c / g, mg = m / g;
    glow_value *parts = GLOW_NEW_ARRAY(&cx->f->module->arena, glow_value, (size_t)g);
    glow_type part_t = *yt;
    part_t.dims[1] = mg;
    for (int64_t i = 0; i < g && lw_ok(cx); i++) {
        int64_t xs[GLOW_MAX_DIMS] = { 0 }, xe[GLOW_MAX_DIMS];
        int64_t ws[GLOW_MAX_DIMS] = { 0 }, we[GLOW_MAX_DIMS];
        memcpy(xe, xt->dims, sizeof xe);
        memcpy(we, wt->dims, sizeof we);
        xs[1] = i * cg;
        xe[1] = (i + 1) * cg;
        ws[0] = i * mg;
        we[0] = (i + 1) * mg;
        char w[4][64];
        snprintf(w[0], sizeof w[0], "input_%lld", (long long)i);
        snprintf(w[1], sizeof w[1], "weight_%lld", (long long)i);
        snprintf(w[2], sizeof w[2], "bias_%lld", (long long)i);
        snprintf(w[3], sizeof w[3], "conv_%lld", (long long)i);
        glow_value ins[3];
        ins[0] = lw_slice(cx, w[0], lw_in(cx, 0), xs, xe);
        ins[1] = lw_slice(cx, w[1], lw_in(cx, 1), ws, we);
        if (n->nin > 2) {
            int64_t bs = i * mg, be = (i + 1) * mg;
            ins[2] = lw_slice(cx, w[2], lw_in(cx, 2), &bs, &be);
        }
        parts[i] = lw_build(cx, NK_CONV, w[3], ins, (int)n->nin, attrs, nattr, &part_t);
    }
    if (lw_ok(cx))
        cx->out[0] = concat_all(cx, parts, (int)g, 0);
}
