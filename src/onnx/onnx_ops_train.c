// onnx_ops_train.c - Training-time ops as elementwise graphs: the optimizers of
// ai.onnx.preview.training (Adagrad, Adam, Momentum) and BatchNormalization with
// training_mode=1.
//
// Each is a fixed formula of its inputs (ONNX's operator spec gives them as pseudo-code), so it
// imports as arithmetic, reductions and Where on existing nodes: every backend runs it with the
// kernels it already has, and nothing here costs anything in a model that does not use it.
// The optimizers take the step count T at run time; the branches the spec writes as
// "T > 0 ? a : b" become a Where on a scalar, so one compiled model serves every step.
#include <string.h>

#include "onnx/onnx_internal.h"

/* The graph being built for one node, and the float type its arithmetic runs in. */
typedef struct {
    onnx_ctx *cx;
    const Onnx__NodeProto *np;
    glow_dtype ft;
} expr;

static glow_status bin(expr *e, glow_node_kind k, glow_value a, glow_value b, glow_value *out)
{
    return onnx_build_elemwise(e->cx, e->np, k, (glow_value[]){ a, b }, 2, NULL, 0, out);
}

static glow_status un(expr *e, glow_node_kind k, glow_value a, glow_value *out)
{
    return onnx_build(e->cx, e->np, k, &a, 1, NULL, 0, NULL, 0, out);
}

static glow_value num(expr *e, double v)
{
    return onnx_sub_scalar(e->cx, e->np, "c", e->ft, v);
}

/* c * a, skipping the product when c is 1 (the attributes' defaults often are). */
static glow_status scale(expr *e, double c, glow_value a, glow_value *out)
{
    if (c == 1.0) {
        *out = a;
        return GLOW_OK;
    }
    return bin(e, NK_MUL, num(e, c), a, out);
}

/* G + norm_coefficient * X: the gradient of the L2 regularizer 0.5 * c * ||X||^2 added. */
static glow_status regularized(expr *e, double c, glow_value x, glow_value g, glow_value *out)
{
    if (c == 0.0) {
        *out = g;
        return GLOW_OK;
    }
    glow_value cx;
    GLOW_TRY(scale(e, c, x, &cx));
    return bin(e, NK_ADD, cx, g, out);
}

/* The scalar condition T > 0 of the spec's first-step special cases. */
static glow_status step_positive(expr *e, glow_value t, glow_value *out)
{
    glow_dtype tt = glow_value_type(t)->dtype;
    return bin(e, NK_GREATER, t, onnx_sub_scalar(e->cx, e->np, "zero", tt, 0.0), out);
}

/* The common inputs R (learning rate) and T (step count) as scalars, R in X's float type; the
 * optimized tensors come in groups of `per` inputs (X, G, then state), n tensors each. */
static glow_status optimizer_inputs(expr *e, int per, glow_value *r, glow_value *t, int *n)
{
    onnx_ctx *cx = e->cx;
    const Onnx__NodeProto *np = e->np;
    int nin = onnx_num_inputs(np);
    if (nin < 2 + per || (nin - 2) % per != 0)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects R, T and %d groups of n tensors, "
                         "has %d inputs", per, nin);
    *n = (nin - 2) / per;
    if (onnx_num_outputs(np) > *n * (per - 1))
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "has %d outputs, at most %d expected",
                         onnx_num_outputs(np), *n * (per - 1));
    GLOW_TRY(onnx_input(cx, np, 0, r));
    GLOW_TRY(onnx_input(cx, np, 1, t));
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 2, &x));
    e->ft = glow_value_type(x)->dtype;
    if (!glow_dtype_is_float(e->ft))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "the optimized tensors must be float");
    if (glow_type_numel(glow_value_type(*r)) != 1 || glow_type_numel(glow_value_type(*t)) != 1 ||
        !glow_dtype_is_int(glow_value_type(*t)->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "R must be a float scalar and T an "
                         "integer scalar");
    int64_t none = 0;
    GLOW_TRY(onnx_reshape(cx, np, *r, 0, &none, r));
    GLOW_TRY(onnx_reshape(cx, np, *t, 0, &none, t));
    return onnx_cast(cx, np, *r, e->ft, r);
}

/* Input k of tensor group `group` (0 X, 1 G, 2.. state), which must have X's type. */
static glow_status group_input(expr *e, int n, int group, int k, glow_value *out)
{
    GLOW_TRY(onnx_input(e->cx, e->np, 2 + group * n + k, out));
    glow_value x;
    GLOW_TRY(onnx_input(e->cx, e->np, 2 + k, &x));
    if (!glow_type_equal(glow_value_type(*out), glow_value_type(x)))
        return onnx_fail(e->cx, e->np, GLOW_ERR_BAD_SHAPE, "input '%s' must have the type of "
                         "'%s'", e->np->input[2 + group * n + k], e->np->input[2 + k]);
    return GLOW_OK;
}

/* Output k of result group `group` (0 X_new, 1.. new state), when the model names it. */
static glow_status group_output(expr *e, int n, int group, int k, glow_value v)
{
    int i = group * n + k;
    return onnx_has_output(e->np, i) ? onnx_set_output(e->cx, e->np, i, v) : GLOW_OK;
}

/* Adagrad: r = R / (1 + T * decay_factor); G' = G + c X; H_new = H + G' G';
 * X_new = X - r G' / (sqrt(H_new) + epsilon). */
glow_status load_adagrad(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    expr e = { cx, np, GLOW_F32 };
    glow_value r, t, tf, den;
    int n;
    GLOW_TRY(optimizer_inputs(&e, 3, &r, &t, &n));
    double decay = onnx_attr_float(np, "decay_factor", 0.0f);
    double eps = onnx_attr_float(np, "epsilon", 0.0f);
    double c = onnx_attr_float(np, "norm_coefficient", 0.0f);
    GLOW_TRY(onnx_cast(cx, np, t, e.ft, &tf));
    GLOW_TRY(scale(&e, decay, tf, &den));
    GLOW_TRY(bin(&e, NK_ADD, num(&e, 1.0), den, &den));
    GLOW_TRY(bin(&e, NK_DIV, r, den, &r));
    for (int k = 0; k < n; k++) {
        glow_value x, g, h, gr, sq, root, step;
        GLOW_TRY(group_input(&e, n, 0, k, &x));
        GLOW_TRY(group_input(&e, n, 1, k, &g));
        GLOW_TRY(group_input(&e, n, 2, k, &h));
        GLOW_TRY(regularized(&e, c, x, g, &gr));
        GLOW_TRY(bin(&e, NK_MUL, gr, gr, &sq));
        GLOW_TRY(bin(&e, NK_ADD, h, sq, &h));
        GLOW_TRY(un(&e, NK_SQRT, h, &root));
        GLOW_TRY(bin(&e, NK_ADD, root, num(&e, eps), &root));
        GLOW_TRY(bin(&e, NK_MUL, r, gr, &step));
        GLOW_TRY(bin(&e, NK_DIV, step, root, &step));
        GLOW_TRY(bin(&e, NK_SUB, x, step, &x));
        GLOW_TRY(group_output(&e, n, 0, k, x));
        GLOW_TRY(group_output(&e, n, 1, k, h));
    }
    return GLOW_OK;
}

/* Adam: G' = G + c X; V_new = alpha V + (1 - alpha) G'; H_new = beta H + (1 - beta) G'^2;
 * R' = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
 * X_new = (1 - c_post) (X - R' V_new / (sqrt(H_new) + epsilon)). */
glow_status load_adam(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    expr e = { cx, np, GLOW_F32 };
    glow_value r, t, tf, pos, ra, rb, corr;
    int n;
    GLOW_TRY(optimizer_inputs(&e, 4, &r, &t, &n));
    double alpha = onnx_attr_float(np, "alpha", 0.9f);
    double beta = onnx_attr_float(np, "beta", 0.999f);
    double eps = onnx_attr_float(np, "epsilon", 1e-6f);
    double c = onnx_attr_float(np, "norm_coefficient", 0.0f);
    double post = onnx_attr_float(np, "norm_coefficient_post", 0.0f);
    /* The bias correction: at T = 0 it is 0 / 0, which the Where discards. */
    GLOW_TRY(onnx_cast(cx, np, t, e.ft, &tf));
    GLOW_TRY(bin(&e, NK_POW, num(&e, alpha), tf, &ra));
    GLOW_TRY(bin(&e, NK_SUB, num(&e, 1.0), ra, &ra));
    GLOW_TRY(bin(&e, NK_POW, num(&e, beta), tf, &rb));
    GLOW_TRY(bin(&e, NK_SUB, num(&e, 1.0), rb, &rb));
    GLOW_TRY(un(&e, NK_SQRT, rb, &rb));
    GLOW_TRY(bin(&e, NK_MUL, r, rb, &corr));
    GLOW_TRY(bin(&e, NK_DIV, corr, ra, &corr));
    GLOW_TRY(step_positive(&e, t, &pos));
    GLOW_TRY(onnx_build(cx, np, NK_WHERE, (glow_value[]){ pos, corr, r }, 3, NULL, 0, NULL, 0,
                        &r));
    for (int k = 0; k < n; k++) {
        glow_value x, g, v, h, gr, a, b, root, step;
        GLOW_TRY(group_input(&e, n, 0, k, &x));
        GLOW_TRY(group_input(&e, n, 1, k, &g));
        GLOW_TRY(group_input(&e, n, 2, k, &v));
        GLOW_TRY(group_input(&e, n, 3, k, &h));
        GLOW_TRY(regularized(&e, c, x, g, &gr));
        GLOW_TRY(scale(&e, alpha, v, &a));
        GLOW_TRY(scale(&e, 1.0 - alpha, gr, &b));
        GLOW_TRY(bin(&e, NK_ADD, a, b, &v));
        GLOW_TRY(scale(&e, beta, h, &a));
        GLOW_TRY(bin(&e, NK_MUL, gr, gr, &b));
        GLOW_TRY(scale(&e, 1.0 - beta, b, &b));
        GLOW_TRY(bin(&e, NK_ADD, a, b, &h));
        GLOW_TRY(un(&e, NK_SQRT, h, &root));
        GLOW_TRY(bin(&e, NK_ADD, root, num(&e, eps), &root));
        GLOW_TRY(bin(&e, NK_DIV, v, root, &step));
        GLOW_TRY(bin(&e, NK_MUL, r, step, &step));
        GLOW_TRY(bin(&e, NK_SUB, x, step, &x));
        if (post != 0.0)
            GLOW_TRY(scale(&e, 1.0 - post, x, &x));
        GLOW_TRY(group_output(&e, n, 0, k, x));
        GLOW_TRY(group_output(&e, n, 1, k, v));
        GLOW_TRY(group_output(&e, n, 2, k, h));
    }
    return GLOW_OK;
}

/* Momentum: G' = G + c X; V_new = alpha V + (T > 0 ? beta : 1) G';
 * X_new = X - R V_new ("standard") or X - R (G' + alpha V_new) ("nesterov"). */
glow_status load_momentum(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind)
{
    expr e = { cx, np, GLOW_F32 };
    glow_value r, t, pos, bt;
    int n;
    GLOW_TRY(optimizer_inputs(&e, 3, &r, &t, &n));
    /* All four attributes are required: the spec gives no defaults. */
    static const char *const need[] = { "alpha", "beta", "mode", "norm_coefficient" };
    for (int i = 0; i < 4; i++)
        if (!onnx_attr(np, need[i]))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute '%s' is required", need[i]);
    double alpha = onnx_attr_float(np, "alpha", 0.0f);
    double beta = onnx_attr_float(np, "beta", 0.0f);
    double c = onnx_attr_float(np, "norm_coefficient", 0.0f);
    const char *mode = onnx_attr_str(cx, np, "mode", "standard");
    bool nesterov = !strcmp(mode, "nesterov");
    if (!nesterov && strcmp(mode, "standard"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' is neither 'standard' nor "
                         "'nesterov'", mode);
    GLOW_TRY(step_positive(&e, t, &pos));
    GLOW_TRY(onnx_build(cx, np, NK_WHERE, (glow_value[]){ pos, num(&e, beta), num(&e, 1.0) }, 3,
                        NULL, 0, NULL, 0, &bt));
    for (int k = 0; k < n; k++) {
        glow_value x, g, v, gr, a, b, step;
        GLOW_TRY(group_input(&e, n, 0, k, &x));
        GLOW_TRY(group_input(&e, n, 1, k, &g));
        GLOW_TRY(group_input(&e, n, 2, k, &v));
        GLOW_TRY(regularized(&e, c, x, g, &gr));
        GLOW_TRY(scale(&e, alpha, v, &a));
        GLOW_TRY(bin(&e, NK_MUL, bt, gr, &b));
        GLOW_TRY(bin(&e, NK_ADD, a, b, &v));
        step = v;
        if (nesterov) {
            GLOW_TRY(scale(&e, alpha, v, &a));
            GLOW_TRY(bin(&e, NK_ADD, gr, a, &step));
        }
        GLOW_TRY(bin(&e, NK_MUL, r, step, &step));
        GLOW_TRY(bin(&e, NK_SUB, x, step, &x));
        GLOW_TRY(group_output(&e, n, 0, k, x));
        GLOW_TRY(group_output(&e, n, 1, k, v));
    }
    return GLOW_OK;
}

/* BatchNormalization, training_mode=1 (opset 14+): the statistics are the batch's, the mean
 * and population variance over every dim but the channel (1);
 * Y = scale (X - mean) / sqrt(var + epsilon) + B, and the outputs 1 and 2 are the running
 * statistics input_mean * momentum + mean * (1 - momentum) (the same for the variance). */
glow_status onnx_batch_norm_training(onnx_ctx *cx, const Onnx__NodeProto *np)
{
    expr e = { cx, np, GLOW_F32 };
    glow_value x, p[4];
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    e.ft = xt->dtype;
    if (xt->rank < 2 || !glow_dtype_is_float(e.ft))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input X must be float of rank >= 2");
    int64_t c = xt->dims[1], axes[GLOW_MAX_DIMS], kept[GLOW_MAX_DIMS];
    int na = 0;
    for (int i = 0; i < xt->rank; i++) {
        kept[i] = i == 1 ? c : 1;
        if (i != 1)
            axes[na++] = i;
    }
    for (int i = 0; i < 4; i++) {
        GLOW_TRY(onnx_input(cx, np, i + 1, &p[i]));
        if (glow_type_numel(glow_value_type(p[i])) != c)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d has %lld values, expected "
                             "one per channel (%lld)", i + 1,
                             (long long)glow_type_numel(glow_value_type(p[i])), (long long)c);
        GLOW_TRY(onnx_cast(cx, np, p[i], e.ft, &p[i]));
        GLOW_TRY(onnx_reshape(cx, np, p[i], xt->rank, kept, &p[i]));
    }
    double eps = onnx_attr_float(np, "epsilon", 1e-5f);
    double momentum = onnx_attr_float(np, "momentum", 0.9f);
    glow_attr red[2] = { GLOW_AINTS(AXES, axes, na), GLOW_AI(KEEPDIMS, 1) };
    glow_value mean, d, var, y;
    GLOW_TRY(onnx_build(cx, np, NK_REDUCE_MEAN, &x, 1, red, 2, NULL, 0, &mean));
    GLOW_TRY(bin(&e, NK_SUB, x, mean, &d));
    GLOW_TRY(bin(&e, NK_MUL, d, d, &var));
    GLOW_TRY(onnx_build(cx, np, NK_REDUCE_MEAN, &var, 1, red, 2, NULL, 0, &var));
    /* In the reference's order: scale * (X - mean) / sqrt(var + epsilon) + B. */
    glow_value sd;
    GLOW_TRY(bin(&e, NK_ADD, var, num(&e, eps), &sd));
    GLOW_TRY(un(&e, NK_SQRT, sd, &sd));
    GLOW_TRY(bin(&e, NK_MUL, p[0], d, &y));
    GLOW_TRY(bin(&e, NK_DIV, y, sd, &y));
    GLOW_TRY(bin(&e, NK_ADD, y, p[1], &y));
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    glow_value stat[2] = { mean, var };
    for (int i = 0; i < 2; i++) {
        if (!onnx_has_output(np, 1 + i))
            continue;
        glow_value a, b;
        GLOW_TRY(scale(&e, momentum, p[2 + i], &a));
        GLOW_TRY(scale(&e, 1.0 - momentum, stat[i], &b));
        GLOW_TRY(bin(&e, NK_ADD, a, b, &a));
        GLOW_TRY(onnx_reshape(cx, np, a, 1, &c, &a));
        GLOW_TRY(onnx_set_output(cx, np, 1 + i, a));
    }
    return GLOW_OK;
}
