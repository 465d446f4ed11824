// gen_ops_nn.c - The generator's network ops: convolutions (random pads, strides, dilations,
// groups), transposed convolutions, pooling, MatMul and Gemm, Softmax, the normalizations
// and Resize. Weights are scaled by their fan-in so that values keep their magnitude through
// deep chains (a blow-up to Inf would hide every later difference); each op computes its
// output shape by the ONNX formulas.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen.h"
#include "testlib/onnx_build.h"

static const int64_t channel_counts[] = { 1, 2, 3, 4, 7, 8, 15, 16, 17, 32, 33 };

/* A weight constant of shape d scaled by 1/sqrt(fan_in). */
static int weight(gen_graph *g, int r, const int64_t *d, int64_t fan_in)
{
    return gen_value(g, GV_CONST, MK_F32, r, d, 1.5f / sqrtf((float)(fan_in > 0 ? fan_in : 1)));
}

/* A random divisor of n: 1, n itself, or another. */
static int64_t divisor(gen_graph *g, int64_t n)
{
    if (gen_chance(g, 45))
        return 1;
    if (gen_chance(g, 50))
        return n;
    int64_t d = 1;
    for (int64_t c = 2; c < n; c++)
        if (n % c == 0 && gen_chance(g, 50))
            d = c;
    return d;
}

static bool conv(gen_graph *g)
{
    int x = gen_pick(g, 3, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int sp = a->rank - 2;
    int64_t c = a->dims[1], groups = divisor(g, c);
    int64_t m = groups == c && gen_chance(g, 60) ? c : groups * gen_int(g, 1, 3);
    if (groups == 1)
        m = GEN_PICK(channel_counts);
    int64_t k[2], s[2], dl[2], pads[4], d[4] = { a->dims[0], m, 1, 1 };
    bool same = gen_chance(g, 10);
    for (int i = 0; i < sp; i++) {
        int64_t n = a->dims[2 + i];
        k[i] = gen_int(g, 1, n >= 5 ? 5 : n + 1);
        s[i] = gen_chance(g, 60) ? 1 : gen_int(g, 2, 3);
        dl[i] = same || gen_chance(g, 75) ? 1 : gen_int(g, 2, 3);
        int64_t eff = (k[i] - 1) * dl[i] + 1;
        pads[i] = gen_chance(g, 40) ? 0 : gen_int(g, 0, eff - 1);
        pads[sp + i] = gen_chance(g, 70) ? pads[i] : gen_int(g, 0, eff - 1);
        if (same)
            d[2 + i] = (n + s[i] - 1) / s[i];
        else if (n + pads[i] + pads[sp + i] < eff)
            return false;
        else
            d[2 + i] = (n + pads[i] + pads[sp + i] - eff) / s[i] + 1;
    }
    if (!gen_fits(a->rank, d))
        return false;
    int64_t wd[4] = { m, c / groups, k[0], sp > 1 ? k[1] : 1 };
    int w = weight(g, a->rank, wd, gen_dims_numel(a->rank - 1, wd + 1));
    int b = gen_chance(g, 60) ? gen_value(g, GV_CONST, MK_F32, 1, &m, 0.5f) : -1;
    if (w < 0)
        return false;
    int n = gen_node_add(g, "Conv", (int[]){ x, w, b }, b >= 0 ? 3 : 2, a->rank, d);
    if (n < 0)
        return false;
    if (gen_chance(g, 70))
        gen_attr_ints(g, n, "kernel_shape", k, sp);
    gen_attr_ints(g, n, "strides", s, sp);
    if (same)
        gen_attr_str(g, n, "auto_pad", gen_chance(g, 50) ? "SAME_UPPER" : "SAME_LOWER");
    else
        gen_attr_ints(g, n, "pads", pads, 2 * sp);
    gen_attr_ints(g, n, "dilations", dl, sp);
    if (groups > 1 || gen_chance(g, 20))
        gen_attr_int(g, n, "group", groups);
    return true;
}

static bool conv_transpose(gen_graph *g)
{
    int x = gen_pick(g, 3, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int sp = a->rank - 2;
    int64_t c = a->dims[1], m = GEN_PICK(channel_counts);
    int64_t k[2], s[2], pads[4], d[4] = { a->dims[0], m, 1, 1 };
    for (int i = 0; i < sp; i++) {
        k[i] = gen_int(g, 1, 4);
        s[i] = gen_int(g, 1, 2);
        pads[i] = gen_int(g, 0, k[i] - 1);
        pads[sp + i] = gen_int(g, 0, k[i] - 1);
        d[2 + i] = s[i] * (a->dims[2 + i] - 1) + k[i] - pads[i] - pads[sp + i];
        if (d[2 + i] < 1)
            return false;
    }
    if (!gen_fits(a->rank, d))
        return false;
    int64_t wd[4] = { c, m, k[0], sp > 1 ? k[1] : 1 };
    int w = weight(g, a->rank, wd, c * gen_dims_numel(sp, k));
    int b = gen_chance(g, 50) ? gen_value(g, GV_CONST, MK_F32, 1, &m, 0.5f) : -1;
    if (w < 0)
        return false;
    int n = gen_node_add(g, "ConvTranspose", (int[]){ x, w, b }, b >= 0 ? 3 : 2, a->rank, d);
    if (n < 0)
        return false;
    gen_attr_ints(g, n, "kernel_shape", k, sp);
    gen_attr_ints(g, n, "strides", s, sp);
    gen_attr_ints(g, n, "pads", pads, 2 * sp);
    return true;
}

static bool pool(gen_graph *g)
{
    int x = gen_pick(g, 3, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int sp = a->rank - 2;
    bool max = gen_chance(g, 50);
    if (gen_chance(g, 20)) {
        int64_t d[4] = { a->dims[0], a->dims[1], 1, 1 };
        return gen_node_add(g, max ? "GlobalMaxPool" : "GlobalAveragePool", &x, 1, a->rank,
                            d) >= 0;
    }
    int64_t k[2], s[2], dl[2] = { 1, 1 }, pads[4], d[4] = { a->dims[0], a->dims[1], 1, 1 };
    bool ceil_mode = gen_chance(g, 15);
    for (int i = 0; i < sp; i++) {
        int64_t n = a->dims[2 + i];
        k[i] = gen_int(g, 1, n < 4 ? n : 4);
        s[i] = gen_int(g, 1, 3);
        if (max && gen_chance(g, 15))
            dl[i] = 2;
        int64_t eff = (k[i] - 1) * dl[i] + 1;
        if (eff > n)
            return false;
        /* pads smaller than the kernel, so that no window lies wholly in padding */
        pads[i] = gen_chance(g, 50) ? 0 : gen_int(g, 0, k[i] - 1);
        pads[sp + i] = gen_chance(g, 50) ? pads[i] : gen_int(g, 0, k[i] - 1);
        int64_t span = n + pads[i] + pads[sp + i] - eff;
        d[2 + i] = (ceil_mode ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
        /* with ceil_mode the last window must still start inside the input or the begin pad
         * (frameworks drop it otherwise, ONNX's text is silent): leave such cases out */
        if (ceil_mode && (d[2 + i] - 1) * s[i] >= n + pads[i])
            return false;
    }
    if (!gen_fits(a->rank, d))
        return false;
    int n = gen_node_add(g, max ? "MaxPool" : "AveragePool", &x, 1, a->rank, d);
    if (n < 0)
        return false;
    gen_attr_ints(g, n, "kernel_shape", k, sp);
    gen_attr_ints(g, n, "strides", s, sp);
    gen_attr_ints(g, n, "pads", pads, 2 * sp);
    if (ceil_mode)
        gen_attr_int(g, n, "ceil_mode", 1);
    if (max && (dl[0] > 1 || dl[sp - 1] > 1))
        gen_attr_ints(g, n, "dilations", dl, sp);
    if (!max && gen_chance(g, 50))
        gen_attr_int(g, n, "count_include_pad", 1);
    return true;
}

static bool matmul(gen_graph *g)
{
    int x = gen_pick(g, 2, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t kk = a->dims[a->rank - 1], nn = gen_chance(g, 30) ? GEN_PICK(channel_counts)
                                                              : gen_int(g, 1, 40);
    int64_t d[GEN_MAX_RANK], wd[GEN_MAX_RANK];
    int wr = 2;
    if (a->rank > 2 && gen_chance(g, 30)) { /* batched weights: the batch dims of x, or 1s */
        wr = a->rank;
        for (int i = 0; i < a->rank - 2; i++)
            wd[i] = gen_chance(g, 50) ? 1 : a->dims[i];
    }
    wd[wr - 2] = kk;
    wd[wr - 1] = nn;
    memcpy(d, a->dims, sizeof d);
    d[a->rank - 1] = nn;
    if (!gen_fits(a->rank, d))
        return false;
    int w = weight(g, wr, wd, kk);
    int ins[2] = { x, w };
    if (gen_chance(g, 20) && a->rank == 2) { /* weights first: [N, M] x [M, K] */
        int64_t ld[2] = { nn, a->dims[0] };
        int l = weight(g, 2, ld, a->dims[0]);
        int64_t od[2] = { nn, kk };
        return l >= 0 && gen_fits(2, od) && gen_node_add(g, "MatMul", (int[]){ l, x }, 2, 2, od) >= 0;
    }
    return w >= 0 && gen_node_add(g, "MatMul", ins, 2, a->rank, d) >= 0;
}

static bool gemm(gen_graph *g)
{
    int x = gen_pick(g, 2, 2);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    bool ta = gen_chance(g, 20), tb = gen_chance(g, 50);
    int64_t m = a->dims[ta], kk = a->dims[!ta], nn = gen_int(g, 1, 48);
    int64_t bd[2] = { tb ? nn : kk, tb ? kk : nn }, d[2] = { m, nn };
    if (!gen_fits(2, d))
        return false;
    int b = weight(g, 2, bd, kk), c = -1;
    int form = (int)gen_int(g, 0, 5);
    if (form == 1)
        c = gen_value(g, GV_CONST, MK_F32, 1, &nn, 0.5f);
    else if (form == 2)
        c = gen_value(g, GV_CONST, MK_F32, 2, (int64_t[]){ 1, nn }, 0.5f);
    else if (form == 3)
        c = gen_value(g, GV_CONST, MK_F32, 2, d, 0.5f);
    else if (form == 4)
        c = gen_value(g, GV_CONST, MK_F32, 2, (int64_t[]){ m, 1 }, 0.5f);
    else if (form == 5)
        c = gen_scalar(g, 0.25f);
    int n = gen_node_add(g, "Gemm", (int[]){ x, b, c }, c >= 0 ? 3 : 2, 2, d);
    if (n < 0)
        return false;
    if (ta)
        gen_attr_int(g, n, "transA", 1);
    if (tb)
        gen_attr_int(g, n, "transB", 1);
    if (gen_chance(g, 30))
        gen_attr_float(g, n, "alpha", (float)gen_int(g, 1, 20) / 8.0f);
    if (c >= 0 && gen_chance(g, 30))
        gen_attr_float(g, n, "beta", (float)gen_int(g, -8, 8) / 4.0f);
    return true;
}

static bool softmax(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t axis = gen_chance(g, 50) ? a->rank - 1 : gen_int(g, 0, a->rank - 1);
    int n = gen_node_add(g, gen_chance(g, 70) ? "Softmax" : "LogSoftmax", &x, 1, a->rank,
                         a->dims);
    if (n >= 0 && (axis != a->rank - 1 || gen_chance(g, 50)))
        gen_attr_int(g, n, "axis", gen_chance(g, 40) ? axis - a->rank : axis);
    return n >= 0;
}

/* A per-channel constant of C elements; positive when `positive` (variances). */
static int channel_const(gen_graph *g, int64_t c, bool positive, float scale)
{
    int v = gen_value(g, GV_CONST, MK_F32, 1, &c, scale);
    if (v >= 0 && positive)
        for (int64_t i = 0; i < c; i++) {
            float *p = &((float *)g->vals[v].data)[i];
            *p = fabsf(*p) + 0.05f;
            if (!isfinite(*p) || *p > 100)
                *p = 1;
        }
    return v;
}

static bool normalization(gen_graph *g)
{
    int kind = (int)gen_int(g, 0, 2);
    int x = gen_pick(g, kind == 1 ? 1 : kind == 2 ? 3 : 2, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t c = a->rank > 1 ? a->dims[1] : 1;
    if (kind == 0) {
        int ins[5] = { x, channel_const(g, c, false, 1.0f), channel_const(g, c, false, 0.5f),
                       channel_const(g, c, false, 0.5f), channel_const(g, c, true, 1.0f) };
        int n = gen_node_add(g, "BatchNormalization", ins, 5, a->rank, a->dims);
        if (n >= 0 && gen_chance(g, 50))
            gen_attr_float(g, n, "epsilon", 1e-3f);
        return n >= 0;
    }
    if (kind == 2) {
        int ins[3] = { x, channel_const(g, c, false, 1.0f), channel_const(g, c, false, 0.5f) };
        int n = gen_node_add(g, "InstanceNormalization", ins, 3, a->rank, a->dims);
        if (n >= 0 && gen_chance(g, 50))
            gen_attr_float(g, n, "epsilon", 1e-3f);
        return n >= 0;
    }
    int axis = (int)gen_int(g, 0, a->rank - 1);
    if (gen_chance(g, 50))
        axis = a->rank - 1;
    int s = gen_value(g, GV_CONST, MK_F32, a->rank - axis, a->dims + axis, 1.0f);
    int b = gen_chance(g, 60) ? gen_value(g, GV_CONST, MK_F32, a->rank - axis, a->dims + axis,
                                          0.5f)
                              : -1;
    int n = gen_node_add(g, "LayerNormalization", (int[]){ x, s, b }, b >= 0 ? 3 : 2, a->rank,
                         a->dims);
    if (n >= 0 && (axis != a->rank - 1 || gen_chance(g, 30)))
        gen_attr_int(g, n, "axis", gen_chance(g, 40) ? axis - a->rank : axis);
    return n >= 0;
}

static bool resize(gen_graph *g)
{
    int x = gen_pick(g, 4, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    static const float scales[] = { 0.5f, 1.0f, 1.5f, 2.0f, 2.0f, 3.0f };
    static const char *const coord[] = { "half_pixel", "asymmetric", "align_corners",
                                         "pytorch_half_pixel", "half_pixel" };
    static const char *const nearest[] = { "round_prefer_floor", "floor", "ceil",
                                           "round_prefer_ceil" };
    float sc[4] = { 1, 1, GEN_PICK(scales), GEN_PICK(scales) };
    int64_t d[4] = { a->dims[0], a->dims[1], 0, 0 };
    for (int i = 2; i < 4; i++)
        d[i] = (int64_t)floorf((float)a->dims[i] * sc[i]);
    if (!gen_fits(4, d))
        return false;
    bool linear = gen_chance(g, 50), by_sizes = gen_chance(g, 30);
    int s = gen_value(g, GV_CONST, MK_F32, 1, (int64_t[]){ 4 }, 0);
    if (s < 0)
        return false;
    memcpy(g->vals[s].data, sc, sizeof sc);
    int ins[4] = { x, -1, s, -1 };
    if (by_sizes) {
        ins[2] = -1;
        ins[3] = gen_i64s(g, 4, d);
    }
    int n = gen_node_add(g, "Resize", ins, by_sizes ? 4 : 3, 4, d);
    if (n < 0)
        return false;
    gen_attr_str(g, n, "mode", linear ? "linear" : "nearest");
    gen_attr_str(g, n, "coordinate_transformation_mode", GEN_PICK(coord));
    if (!linear)
        gen_attr_str(g, n, "nearest_mode", GEN_PICK(nearest));
    return true;
}

const gen_op_fn gen_nn_ops[] = { conv, conv, conv, conv_transpose, pool, pool, matmul, gemm,
                                 softmax, normalization, normalization, resize };
const int gen_num_nn_ops = (int)(sizeof gen_nn_ops / sizeof gen_nn_ops[0]);
