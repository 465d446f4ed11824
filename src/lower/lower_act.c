// lower_act.c - Lowers softmax, log-softmax and the piecewise-linear activations (Clip,
// LeakyRelu, PRelu, HardSigmoid, HardSwish) to reductions, Max/Min and arithmetic.
#include <math.h>

#include "lower/lower_internal.h"

/* SOFTMAX(x) = e / sum(e) with e = exp(x - max(x)); LOG_SOFTMAX(x) = (x - max) - log(sum(e)).
 * Subtracting the maximum keeps exp from overflowing, as every reference does. */
void lower_softmax(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    if (!lw_is_float(t))
        return;
    *applied = true;
    int64_t axis = glow_node_int(cx->n, GA_AXIS, -1);
    glow_value x = lw_in(cx, 0);
    glow_value mx = lw_reduce(cx, NK_REDUCE_MAX, "max", x, &axis, 1, true);
    glow_value d = lw_bin(cx, NK_SUB, "shifted", x, mx);
    glow_value e = lw_un(cx, NK_EXP, "exp", d);
    if (cx->n->kind == NK_SOFTMAX) {
        glow_value s = lw_reduce(cx, NK_REDUCE_SUM, "sum", e, &axis, 1, true);
        cx->out[0] = lw_bin(cx, NK_DIV, "div", e, s);
        return;
    }
    glow_value s = lw_reduce(cx, NK_REDUCE_SUM, "sum", e, &axis, 1, false);
    glow_value ls = lw_broadcast(cx, "log_sum_bcast", lw_un(cx, NK_LOG, "log_sum", s), t);
    cx->out[0] = lw_bin(cx, NK_SUB, "sub", d, ls);
}

/* The values an integer kind can hold, as doubles (for deciding that a bound clips nothing). */
static bool int_range(glow_dtype t, double *lo, double *hi)
{
    switch (t) {
    case GLOW_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case GLOW_U8: *lo = 0; *hi = UINT8_MAX; return true;
    case GLOW_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case GLOW_U16: *lo = 0; *hi = UINT16_MAX; return true;
    case GLOW_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case GLOW_U32: *lo = 0; *hi = UINT32_MAX; return true;
    case GLOW_I64: *lo = (double)INT64_MIN; *hi = (double)INT64_MAX; return true;
    case GLOW_U64: *lo = 0; *hi = (double)UINT64_MAX; return true;
    default: return false;
    }
}

/* CLIP(x) = MIN(MAX(x, min), max). A bound that clips nothing (an infinity, or the integer
 * kind's own limit) is left out; with min > max the result is max everywhere, as ONNX says,
 * which this order gives. NaN bounds and quantized kinds stay whole. */
void lower_clip(lower_cx *cx, bool *applied)
{
    const glow_type *t = &cx->n->outs[0];
    double lo = glow_node_float(cx->n, GA_MIN, -INFINITY);
    double hi = glow_node_float(cx->n, GA_MAX, INFINITY);
    double tlo = -INFINITY, thi = INFINITY;
    if (isnan(lo) || isnan(hi))
        return;
    if (!lw_is_float(t) && !int_range(t->dtype, &tlo, &thi))
        return;
    *applied = true;
    glow_value y = lw_in(cx, 0);
    if (lo > tlo)
        y = lw_scalar(cx, NK_MAX, "min", y, lo);
    if (hi < thi)
        y = lw_scalar(cx, NK_MIN, "max", y, hi);
    cx->out[0] = y;
}

/* LEAKY_RELU(x) = x >= 0 ? x : alpha * x. For alpha <= 1 that is MAX(x, alpha * x) (for
 * x < 0, alpha * x >= x); for alpha > 1 it is MIN(x, alpha * x). */
void lower_leaky_relu(lower_cx *cx, bool *applied)
{
    if (!lw_is_float(&cx->n->outs[0]))
        return;
    *applied = true;
    double alpha = glow_node_float(cx->n, GA_ALPHA, 0.01);
    glow_value x = lw_in(cx, 0);
    glow_value ax = lw_scalar(cx, NK_MUL, "alpha", x, alpha);
    cx->out[0] = lw_bin(cx, alpha <= 1.0 ? NK_MAX : NK_MIN, "select", x, ax);
}

/* PRELU(x, slope) = MAX(x, 0) + slope * MIN(x, 0); slope is already x's shape. */
void lower_prelu(lower_cx *cx, bool *applied)
{
    if (!lw_is_float(&cx->n->outs[0]))
        return;
    *applied = true;
    glow_value x = lw_in(cx, 0);
    glow_value zero = lw_splat_like(cx, "zero", x, 0.0);
    glow_value pos = lw_bin(cx, NK_MAX, "pos", x, zero);
    glow_value neg = lw_bin(cx, NK_MIN, "neg", x, zero);
    glow_value sn = lw_bin(cx, NK_MUL, "slope_neg", lw_in(cx, 1), neg);
    cx->out[0] = lw_bin(cx, NK_ADD, "add", pos, sn);
}

/* HARD_SIGMOID(x) = MIN(MAX(alpha * x + beta, 0), 1). */
void lower_hard_sigmoid(lower_cx *cx, bool *applied)
{
    if (!lw_is_float(&cx->n->outs[0]))
        return;
    *applied = true;
    double alpha = glow_node_float(cx->n, GA_ALPHA, 0.2);
    double beta = glow_node_float(cx->n, GA_BETA, 0.5);
    glow_value y = lw_scalar(cx, NK_MUL, "alpha", lw_in(cx, 0), alpha);
    y = lw_scalar(cx, NK_ADD, "beta", y, beta);
    y = lw_scalar(cx, NK_MAX, "low", y, 0.0);
    cx->out[0] = lw_scalar(cx, NK_MIN, "high", y, 1.0);
}

/* HARD_SWISH(x) = x * HardSigmoid(x) with alpha 1/6 and beta 1/2. The HardSigmoid lowers in
 * the next pass unless the backend keeps it. */
void lower_hard_swish(lower_cx *cx, bool *applied)
{
    if (!lw_is_float(&cx->n->outs[0]))
        return;
    *applied = true;
    glow_value x = lw_in(cx, 0);
    glow_attr a[2] = { GLOW_AF(ALPHA, 1.0 / 6.0), GLOW_AF(BETA, 0.5) };
    glow_value hs = lw_build(cx, NK_HARD_SIGMOID, "hard_sigmoid", &x, 1, a, 2, NULL);
    cx->out[0] = lw_bin(cx, NK_MUL, "mul", x, hs);
}
