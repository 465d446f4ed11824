// lower_norm.c - Lowers the normalizations (batch, instance, layer, group, RMS, Lp) to
// reductions with keepdims, broadcasts and elementwise arithmetic.
//
// The statistics follow ONNX's reference: the mean over the normalized axes, the population
// variance as the mean of the squared deviations, and 1 / sqrt(var + epsilon). Parameters
// given per channel or per trailing slice are reshaped to the input's rank and broadcast, so
// every elementwise node sees identical shapes (the graph's convention).
#include "lower/lower_internal.h"

/* The standardized input over `axes` and its statistics (kept dims, unbroadcast). */
typedef struct moments {
    glow_value mean, inv_std, y;
} moments;

static moments standardize(lower_cx *cx, glow_value x, const int64_t *axes, int naxes,
                           double eps)
{
    moments m = { lw_none(), lw_none(), lw_none() };
    if (!lw_ok(cx) || !x.node)
        return m;
    const glow_type *xt = lw_type(x);
    m.mean = lw_reduce(cx, NK_REDUCE_MEAN, "mean", x, axes, naxes, false);
    glow_value d = lw_bin(cx, NK_SUB, "centered", x, lw_broadcast(cx, "mean_bcast", m.mean, xt));
    glow_value sq = lw_bin(cx, NK_MUL, "sq", d, d);
    glow_value var = lw_reduce(cx, NK_REDUCE_MEAN, "var", sq, axes, naxes, false);
    glow_value sd = lw_un(cx, NK_SQRT, "std", lw_scalar(cx, NK_ADD, "var_eps", var, eps));
    m.inv_std = lw_bin(cx, NK_DIV, "inv_std", lw_splat_like(cx, "one", sd, 1.0), sd);
    m.y = lw_bin(cx, NK_MUL, "norm", d, lw_broadcast(cx, "inv_std_bcast", m.inv_std, xt));
    return m;
}

/* Axes [lo, rank) of a rank-`rank` tensor; returns their count. */
static int tail_axes(int lo, int rank, int64_t *axes)
{
    int na = 0;
    for (int k = lo; k < rank; k++)
        axes[na++] = k;
    return na;
}

/* y * scale + bias, with scale and bias (bias may be absent) laid along x's dims from axis. */
static glow_value affine(lower_cx *cx, glow_value y, glow_value scale, glow_value bias,
                         int axis)
{
    const glow_type *t = &cx->n->outs[0];
    y = lw_bin(cx, NK_MUL, "scaled", y, lw_expand(cx, "scale", scale, t, axis));
    if (bias.node)
        y = lw_bin(cx, NK_ADD, "biased", y, lw_expand(cx, "bias", bias, t, axis));
    return y;
}

/* BATCH_NORM(x, scale, bias, mean, var) = x * s + t, s = scale / sqrt(var + eps) and
 * t = bias - mean * s computed on [C], so an optimizer can fold them when constant. */
void lower_batch_norm(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    if (!lw_is_float(t))
        return;
    *applied = true;
    double eps = glow_node_float(cx->n, GA_EPSILON, 1e-5);
    glow_value var = lw_scalar(cx, NK_ADD, "var_eps", lw_in(cx, 4), eps);
    glow_value s = lw_bin(cx, NK_DIV, "s", lw_in(cx, 1), lw_un(cx, NK_SQRT, "std", var));
    glow_value ms = lw_bin(cx, NK_MUL, "mean_s", lw_in(cx, 3), s);
    glow_value sh = lw_bin(cx, NK_SUB, "t", lw_in(cx, 2), ms);
    glow_value y = lw_bin(cx, NK_MUL, "mul", lw_in(cx, 0), lw_expand(cx, "s", s, t, 1));
    cx->out[0] = lw_bin(cx, NK_ADD, "add", y, lw_expand(cx, "t", sh, t, 1));
}

/* INSTANCE_NORM(x, scale[C], bias[C]): standardized over the spatial dims of each (n, c). */
void lower_instance_norm(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    if (!lw_is_float(t))
        return;
    *applied = true;
    int64_t axes[GLOW_MAX_DIMS];
    int na = tail_axes(2, t->rank, axes);
    moments m = standardize(cx, lw_in(cx, 0), axes, na, glow_node_float(cx->n, GA_EPSILON, 1e-5));
    cx->out[0] = affine(cx, m.y, lw_in(cx, 1), lw_in(cx, 2), 1);
}

/* LAYER_NORM(x, scale, bias?) over [axis, rank); results y, mean and inv_std_dev (the
 * latter two with the normalized dims kept as 1, exactly what the reductions give). */
void lower_layer_norm(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    if (!lw_is_float(t))
        return;
    *applied = true;
    int axis = (int)glow_node_int(cx->n, GA_AXIS, -1);
    int64_t axes[GLOW_MAX_DIMS];
    int na = tail_axes(axis, t->rank, axes);
    moments m = standardize(cx, lw_in(cx, 0), axes, na, glow_node_float(cx->n, GA_EPSILON, 1e-5));
    glow_value bias = cx->n->nin > 2 ? lw_in(cx, 2) : lw_none();
    cx->out[0] = affine(cx, m.y, lw_in(cx, 1), bias, axis);
    cx->out[1] = m.mean;
    cx->out[2] = m.inv_std;
}

/* Per-group parameters [G] become per-channel [C] by repeating each C/G times. */
static glow_value per_channel(lower_cx *cx, const char *what, glow_value p, int64_t c,
                              int64_t g)
{
    if (!lw_ok(cx) || lw_type(p)->dims[0] == c)
        return p;
    char w1[64], w2[64], w3[64];
    snprintf(w1, sizeof w1, "%s_group", what);
    snprintf(w2, sizeof w2, "%s_repeat", what);
    snprintf(w3, sizeof w3, "%s_channel", what);
    glow_type rep = glow_type_make(lw_type(p)->dtype, 2, (const int64_t[]){ g, c / g });
    glow_value r = lw_reshape(cx, w1, p, 2, (const int64_t[]){ g, 1 });
    return lw_reshape(cx, w3, lw_broadcast(cx, w2, r, &rep), 1, &c);
}

/* GROUP_NORM(x, scale, bias): x viewed as [N, G, C/G * spatial] is standardized over its
 * last dim; scale and bias apply per channel (opset 21) or per group (opset 18). */
void lower_group_norm(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    if (!lw_is_float(t))
        return;
    int64_t g = glow_node_int(cx->n, GA_NUM_GROUPS, 1), c = t->dims[1];
    if (g < 1 || c % g != 0)
        return;
    *applied = true;
    int64_t rest = glow_type_numel(t);
    rest = t->dims[0] > 0 ? rest / (t->dims[0] * g) : 0;
    int64_t gdims[3] = { t->dims[0], g, rest };
    glow_value xg = lw_reshape(cx, "grouped", lw_in(cx, 0), 3, gdims);
    static const int64_t last[1] = { 2 };
    moments m = standardize(cx, xg, last, 1, glow_node_float(cx->n, GA_EPSILON, 1e-5));
    glow_value y = lw_reshape(cx, "ungrouped", m.y, t->rank, t->dims);
    glow_value scale = per_channel(cx, "scale", lw_in(cx, 1), c, g);
    glow_value bias = per_channel(cx, "bias", lw_in(cx, 2), c, g);
    cx->out[0] = affine(cx, y, scale, bias, 1);
}

/* RMS_NORM(x, scale) = x / sqrt(mean(x^2 over [axis, rank)) + eps) * scale. */
void lower_rms_norm(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    if (!lw_is_float(t))
        return;
    *applied = true;
    int axis = (int)glow_node_int(cx->n, GA_AXIS, -1);
    int64_t axes[GLOW_MAX_DIMS];
    int na = tail_axes(axis, t->rank, axes);
    glow_value x = lw_in(cx, 0);
    glow_value ms = lw_reduce(cx, NK_REDUCE_MEAN, "mean_sq", lw_bin(cx, NK_MUL, "sq", x, x),
                              axes, na, false);
    double eps = glow_node_float(cx->n, GA_EPSILON, 1e-5);
    glow_value rms = lw_un(cx, NK_SQRT, "rms", lw_scalar(cx, NK_ADD, "mean_sq_eps", ms, eps));
    glow_value inv = lw_bin(cx, NK_DIV, "inv_rms", lw_splat_like(cx, "one", rms, 1.0), rms);
    glow_value y = lw_bin(cx, NK_MUL, "norm", x, lw_broadcast(cx, "inv_rms_bcast", inv, t));
    cx->out[0] = affine(cx, y, lw_in(cx, 1), lw_none(), axis);
}

/* LP_NORM(x) = x / ||x||_p along axis, p 1 (sum of magnitudes) or 2 (Euclidean). */
void lower_lp_norm(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    int64_t p = glow_node_int(cx->n, GA_P, 2);
    if (!lw_is_float(t) || (p != 1 && p != 2))
        return;
    *applied = true;
    int64_t axis = glow_node_int(cx->n, GA_AXIS, -1);
    glow_value x = lw_in(cx, 0), norm;
    if (p == 1) {
        norm = lw_reduce(cx, NK_REDUCE_SUM, "l1", lw_un(cx, NK_ABS, "abs", x), &axis, 1, true);
    } else {
        glow_value ss = lw_reduce(cx, NK_REDUCE_SUM, "sum_sq", lw_bin(cx, NK_MUL, "sq", x, x),
                                  &axis, 1, false);
        norm = lw_broadcast(cx, "l2_bcast", lw_un(cx, NK_SQRT, "l2", ss), t);
    }
    /* An all-zero line stays zero (ONNX divides by 1 where the norm is 0): the divisor is
     * norm + (1 - sign(norm)), which is exactly norm for a positive norm (or NaN, inf). */
    glow_value nz = lw_bin(cx, NK_SUB, "is_zero", lw_splat_like(cx, "one", norm, 1.0),
                           lw_un(cx, NK_SIGN, "sign", norm));
    cx->out[0] = lw_bin(cx, NK_DIV, "div", x, lw_bin(cx, NK_ADD, "safe_norm", norm, nz));
}
