// eval_norm.c - Reference evaluation of normalizations: BatchNormalization (inference),
// InstanceNormalization, LayerNormalization, GroupNormalization, RMSNormalization, LRN and
// LpNormalization.
//
// Statistics are computed in f64 with two passes (mean, then the mean of squared deviations),
// which is the textbook population variance ONNX specifies.
#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

/* Mean and population variance of `count` elements starting at `base`, `step` apart, for
 * every `inner` consecutive run: elements base + (i / inner) * step + i % inner. */
static void stats(glow_dtype t, const void *x, int64_t base, int64_t runs, int64_t step,
                  int64_t inner, double *mean, double *var)
{
    double s = 0, q = 0;
    int64_t count = runs * inner;
    for (int64_t r = 0; r < runs; r++)
        for (int64_t i = 0; i < inner; i++)
            s += ev_ldf(t, x, base + r * step + i);
    double m = count ? s / (double)count : 0;
    for (int64_t r = 0; r < runs; r++)
        for (int64_t i = 0; i < inner; i++) {
            double dv = ev_ldf(t, x, base + r * step + i) - m;
            q += dv * dv;
        }
    *mean = m;
    *var = count ? q / (double)count : 0;
}

static glow_status expect_channel_params(const glow_node *n, const glow_tensor *ins,
                                         const glow_type *x, glow_diag *d)
{
    static const char *const roles[] = { "", "scale", "bias", "mean", "variance" };
    if (x->rank < 2)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand rank %d, expected >= 2",
                         KIND_NAME(n), x->rank);
    for (uint32_t i = 1; i < n->nin; i++) {
        /* GroupNormalization-18 gives scale and bias per group; inference accepts [G]. */
        const glow_type *p = &ins[i].type;
        if (n->kind == NK_GROUP_NORM && p->rank == 1 &&
            p->dims[0] == glow_node_int(n, GA_NUM_GROUPS, 1))
            continue;
        GLOW_TRY(glow_ev_expect_shape(n, roles[i], p, 1, &x->dims[1], d));
    }
    return GLOW_OK;
}

/* BATCH_NORM(x, scale, bias, mean, var), INSTANCE_NORM(x, scale, bias) and GROUP_NORM(x,
 * scale, bias): per-channel affine after normalizing by given or computed statistics. */
glow_status glow_ev_channel_norm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                 glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    GLOW_TRY(expect_channel_params(n, ins, x, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    glow_dtype t = x->dtype;
    double eps = glow_node_float(n, GA_EPSILON, 1e-5);
    int64_t N = x->dims[0], C = x->dims[1], S = ev_prod(x->dims, 2, x->rank);
    int64_t G = n->kind == NK_GROUP_NORM ? glow_node_int(n, GA_NUM_GROUPS, 1) : C;
    if (G < 1 || (C && C % G))
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': %lld groups for %lld channels",
                         KIND_NAME(n), (long long)G, (long long)C);
    int64_t cg = G ? C / G : 0;
    /* Per-group parameters (length G, when G != C) are indexed by the channel's group. */
    bool per_group[3] = { false, false, false };
    for (uint32_t i = 1; i < 3 && i < n->nin; i++)
        per_group[i] = n->kind == NK_GROUP_NORM && ins[i].type.dims[0] != C;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++) {
            double mean, var;
            if (n->kind == NK_BATCH_NORM) {
                mean = ev_ldf(t, ins[3].data, c);
                var = ev_ldf(t, ins[4].data, c);
            } else {
                /* Instance norm is group norm with one channel per group. */
                int64_t g = c / cg;
                stats(t, ins[0].data, (b * C + g * cg) * S, 1, 0, cg * S, &mean, &var);
            }
            double k = ev_ldf(t, ins[1].data, per_group[1] ? c / cg : c) / sqrt(var + eps);
            double bias = ev_ldf(t, ins[2].data, per_group[2] ? c / cg : c);
            for (int64_t s = 0; s < S; s++) {
                int64_t at = (b * C + c) * S + s;
                ev_stf(t, outs[0].data, at, (ev_ldf(t, ins[0].data, at) - mean) * k + bias);
            }
        }
    return GLOW_OK;
}

/* LAYER_NORM(x, scale, bias?) -> y, mean, inv_std_dev and RMS_NORM(x, scale) over the dims
 * [axis, rank); scale and bias have the shape of those dims. */
glow_status glow_ev_axis_norm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, -1), x->rank, &axis, d));
    for (uint32_t i = 1; i < n->nin; i++)
        GLOW_TRY(glow_ev_expect_shape(n, i == 1 ? "scale" : "bias", &ins[i].type,
                                      x->rank - axis, &x->dims[axis], d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    int64_t sdims[GLOW_MAX_DIMS];
    for (int i = 0; i < x->rank; i++)
        sdims[i] = i < axis ? x->dims[i] : 1;
    for (uint32_t i = 1; i < n->nout; i++)
        GLOW_TRY(glow_ev_expect_shape(n, i == 1 ? "mean" : "inv_std_dev", &outs[i].type,
                                      x->rank, sdims, d));
    glow_dtype t = x->dtype;
    double eps = glow_node_float(n, GA_EPSILON, 1e-5);
    int64_t outer = ev_prod(x->dims, 0, axis), inner = ev_prod(x->dims, axis, x->rank);
    bool rms = n->kind == NK_RMS_NORM;
    for (int64_t o = 0; o < outer; o++) {
        double mean = 0, var;
        if (rms) {
            double q = 0;
            for (int64_t i = 0; i < inner; i++) {
                double v = ev_ldf(t, ins[0].data, o * inner + i);
                q += v * v;
            }
            var = inner ? q / (double)inner : 0;
        } else {
            stats(t, ins[0].data, o * inner, 1, 0, inner, &mean, &var);
        }
        double inv = 1 / sqrt(var + eps);
        for (int64_t i = 0; i < inner; i++) {
            int64_t at = o * inner + i;
            double v = (ev_ldf(t, ins[0].data, at) - mean) * inv * ev_ldf(t, ins[1].data, i);
            if (n->nin > 2)
                v += ev_ldf(t, ins[2].data, i);
            ev_stf(t, outs[0].data, at, v);
        }
        if (n->nout > 1)
            ev_stf(outs[1].type.dtype, outs[1].data, o, mean);
        if (n->nout > 2)
            ev_stf(outs[2].type.dtype, outs[2].data, o, inv);
    }
    return GLOW_OK;
}

/* LRN over channels: x / (bias + alpha / size * sum of squares in the channel window)^beta,
 * the window being [c - floor((size-1)/2), c + ceil((size-1)/2)]. */
glow_status glow_ev_lrn(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    if (x->rank < 2)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand rank %d, expected >= 2",
                         KIND_NAME(n), x->rank);
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    int64_t size = glow_node_int(n, GA_SIZE, 1);
    if (size < 1)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': size %lld", KIND_NAME(n),
                         (long long)size);
    double alpha = glow_node_float(n, GA_ALPHA, 1e-4), beta = glow_node_float(n, GA_BETA, 0.75);
    double bias = glow_node_float(n, GA_BIAS, 1.0);
    glow_dtype t = x->dtype;
    int64_t N = x->dims[0], C = x->dims[1], S = ev_prod(x->dims, 2, x->rank);
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    for (int64_t b = 0; b < N; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++) {
                double sq = 0;
                int64_t j0 = c - lo < 0 ? 0 : c - lo, j1 = c + hi >= C ? C - 1 : c + hi;
                for (int64_t j = j0; j <= j1; j++) {
                    double v = ev_ldf(t, ins[0].data, (b * C + j) * S + s);
                    sq += v * v;
                }
                int64_t at = (b * C + c) * S + s;
                ev_stf(t, outs[0].data, at, ev_ldf(t, ins[0].data, at) /
                                               pow(bias + alpha / (double)size * sq, beta));
            }
    return GLOW_OK;
}

/* LP_NORM: x divided by its L1 or L2 norm along `axis`; an all-zero line stays zero (as in
 * ONNX's reference outputs). */
glow_status glow_ev_lp_norm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    const glow_type *x = &ins[0].type;
    int axis;
    GLOW_TRY(glow_ev_axis(n, glow_node_int(n, GA_AXIS, -1), x->rank, &axis, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, x->rank, x->dims, d));
    int64_t p = glow_node_int(n, GA_P, 2);
    if (p != 1 && p != 2)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': p = %lld", KIND_NAME(n), (long long)p);
    glow_dtype t = x->dtype;
    int64_t outer = ev_prod(x->dims, 0, axis), size = x->dims[axis];
    int64_t inner = ev_prod(x->dims, axis + 1, x->rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double norm = 0;
            for (int64_t s = 0; s < size; s++) {
                double v = ev_ldf(t, ins[0].data, (o * size + s) * inner + in);
                norm += p == 1 ? fabs(v) : v * v;
            }
            if (p == 2)
                norm = sqrt(norm);
            for (int64_t s = 0; s < size; s++) {
                int64_t at = (o * size + s) * inner + in;
                ev_stf(t, outs[0].data, at, norm == 0 ? 0 : ev_ldf(t, ins[0].data, at) / norm);
            }
        }
    return GLOW_OK;
}
