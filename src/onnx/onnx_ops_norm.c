// onnx_ops_norm.c - Loaders for normalizations, Gemm/MatMul/Einsum and the Softmax family.
//
// The graph's nodes are stricter than ONNX: MATMUL wants identical batch dims and rank >= 2,
// GEMM wants its bias already [M, N], the norm nodes want per-channel or per-normalized-shape
// parameters, and the Softmax family works on one axis. These loaders insert the RESHAPE and
// BROADCAST nodes that bridge the difference, and rewrite older opset semantics (Softmax's
// 2-D coercion, GroupNormalization-18's per-group parameters) into the current form.
#include <string.h>

#include "onnx/onnx_internal.h"

/* Binds results 1..n-1 of a multi-result node to the node's optional outputs. */
static glow_status set_extra_outputs(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value y,
                                     int n)
{
    for (int i = 1; i < n; i++) {
        if (!onnx_has_output(np, i))
            continue;
        if ((uint32_t)i >= y.node->nout)
            return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "node has no result %d", i);
        GLOW_TRY(onnx_set_output(cx, np, i, glow_val(y.node, (uint32_t)i)));
    }
    return GLOW_OK;
}

glow_status load_batch_norm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    if (opset >= 14 && onnx_attr_int(np, "training_mode", 0) != 0)
        return onnx_batch_norm_training(cx, np);
    if (opset < 7 && onnx_attr_int(np, "is_test", 0) == 0 && onnx_num_outputs(np) > 1)
        return onnx_unsupported(cx, np, "is_test=0 with training outputs (inference only)");
    if (opset < 9 && onnx_attr_int(np, "spatial", 1) == 0)
        return onnx_unsupported(cx, np, "spatial=0 (per-element statistics)");
    for (int i = 1; i < onnx_num_outputs(np); i++)
        if (onnx_has_output(np, i))
            return onnx_unsupported(cx, np, "output %d (running statistics are training-only)",
                                    i);
    glow_value ins[5];
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    const glow_type *xt = glow_value_type(ins[0]);
    if (xt->rank < 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input X has rank %d, expected >= 2",
                         xt->rank);
    for (int i = 1; i < 5; i++) {
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
        GLOW_TRY(onnx_cast(cx, np, ins[i], xt->dtype, &ins[i]));
    }
    glow_attr a = GLOW_AF(EPSILON, onnx_attr_float(np, "epsilon", 1e-5f));
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_BATCH_NORM, ins, 5, &a, 1, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_instance_norm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                               glow_node_kind kind)
{
    glow_value ins[3];
    for (int i = 0; i < 3; i++)
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
    glow_attr a = GLOW_AF(EPSILON, onnx_attr_float(np, "epsilon", 1e-5f));
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_INSTANCE_NORM, ins, 3, &a, 1, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* LayerNormalization and RMSNormalization: parameters broadcast to x.dims[axis:]. */
static glow_status load_axis_norm(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                                  int nparams, int nresults)
{
    glow_value ins[3];
    int nin = 1;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    const glow_type *xt = glow_value_type(ins[0]);
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", -1), xt->rank, &axis));
    for (int i = 1; i <= nparams; i++) {
        if (i == 2 && !onnx_has_input(np, 2))
            break;
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
        GLOW_TRY(onnx_broadcast_to(cx, np, ins[i], xt->rank - axis, &xt->dims[axis], &ins[i]));
        nin++;
    }
    int64_t stash = onnx_attr_int(np, "stash_type", 1);
    glow_attr a[3] = {
        GLOW_AI(AXIS, axis),
        GLOW_AF(EPSILON, onnx_attr_float(np, "epsilon", 1e-5f)),
        GLOW_AI(STASH_TYPE, stash),
    };
    /* Only as many results as the model uses (the count alone, no declared types). */
    int nres = 1;
    for (int i = 1; i < nresults; i++)
        if (onnx_has_output(np, i))
            nres = i + 1;
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, kind, ins, nin, a, 3, NULL, nres, &y));
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    return set_extra_outputs(cx, np, y, nres);
}

glow_status load_layer_norm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return load_axis_norm(cx, np, NK_LAYER_NORM, 2, 3);
}

glow_status load_rms_norm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return load_axis_norm(cx, np, NK_RMS_NORM, 1, 1);
}

glow_status load_group_norm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[3];
    for (int i = 0; i < 3; i++)
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
    const glow_type *xt = glow_value_type(ins[0]);
    if (xt->rank < 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input X has rank %d, expected >= 2",
                         xt->rank);
    const Onnx__AttributeProto *ng = onnx_attr(np, "num_groups");
    if (!ng)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required 'num_groups'");
    int64_t groups = onnx_attr_int(np, "num_groups", 1);
    int64_t c = xt->dims[1];
    if (groups < 1 || c % groups != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                         "num_groups = %lld does not divide the %lld channels",
                         (long long)groups, (long long)c);
    if (opset < 21) {
        /* Opset 18 gives scale and bias per group: repeat each value C/G times. */
        for (int i = 1; i < 3; i++) {
            const glow_type *pt = glow_value_type(ins[i]);
            if (pt->rank != 1 || pt->dims[0] != groups)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                                 "input %d must be [num_groups] = [%lld]", i, (long long)groups);
            int64_t col[2] = { groups, 1 }, full[2] = { groups, c / groups };
            GLOW_TRY(onnx_reshape(cx, np, ins[i], 2, col, &ins[i]));
            GLOW_TRY(onnx_broadcast_to(cx, np, ins[i], 2, full, &ins[i]));
            GLOW_TRY(onnx_reshape(cx, np, ins[i], 1, &c, &ins[i]));
        }
    }
    glow_attr a[3] = {
        GLOW_AF(EPSILON, onnx_attr_float(np, "epsilon", 1e-5f)),
        GLOW_AI(NUM_GROUPS, groups),
        GLOW_AI(STASH_TYPE, onnx_attr_int(np, "stash_type", 1)),
    };
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_GROUP_NORM, ins, 3, a, 3, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_lrn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    if (!onnx_attr(np, "size"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required 'size'");
    int64_t size = onnx_attr_int(np, "size", 1);
    if (size < 1 || size > (1 << 20))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "size = %lld", (long long)size);
    glow_attr a[4] = {
        GLOW_AI(SIZE, size),
        GLOW_AF(ALPHA, onnx_attr_float(np, "alpha", 1e-4f)),
        GLOW_AF(BETA, onnx_attr_float(np, "beta", 0.75f)),
        GLOW_AF(BIAS, onnx_attr_float(np, "bias", 1.0f)),
    };
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_LRN, &x, 1, a, 4, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_lp_norm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", -1), glow_value_type(x)->rank, &axis));
    int64_t p = onnx_attr_int(np, "p", 2);
    if (p != 1 && p != 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "p = %lld, expected 1 or 2", (long long)p);
    glow_attr a[2] = { GLOW_AI(AXIS, axis), GLOW_AI(P, p) };
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_LP_NORM, &x, 1, a, 2, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* MeanVarianceNormalization has no node of its own: it is ONNX's function body,
 * (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), with the means over `axes`. */
glow_status load_mvn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    static const int64_t dflt_axes[3] = { 0, 2, 3 };
    const int64_t *axes_in = dflt_axes;
    int naxes = onnx_attr_ints(np, "axes", &axes_in);
    if (naxes < 0) {
        axes_in = dflt_axes;
        naxes = 3;
    }
    if (naxes > xt->rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'axes' has %d values for rank %d", naxes,
                         xt->rank);
    bool on[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < naxes; i++) {
        int ax;
        GLOW_TRY(onnx_axis(cx, np, axes_in[i], xt->rank, &ax));
        on[ax] = true;
    }
    int64_t axes[GLOW_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < xt->rank; i++)
        if (on[i])
            axes[n++] = i;
    glow_attr ra[2] = { GLOW_AINTS(AXES, axes, n), GLOW_AI(KEEPDIMS, 1) };

    glow_value mean, xx, mean_xx, mean_sq, var, std, centered, den, y, eps;
    GLOW_TRY(onnx_build(cx, np, NK_REDUCE_MEAN, &x, 1, ra, 2, NULL, 0, &mean));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ x, x }, 2, NULL, 0, &xx));
    GLOW_TRY(onnx_build(cx, np, NK_REDUCE_MEAN, &xx, 1, ra, 2, NULL, 0, &mean_xx));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ mean, mean }, 2, NULL, 0,
                                 &mean_sq));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_SUB, (glow_value[]){ mean_xx, mean_sq }, 2, NULL, 0,
                                 &var));
    GLOW_TRY(onnx_build(cx, np, NK_SQRT, &var, 1, NULL, 0, NULL, 0, &std));
    eps = onnx_scalar(cx, onnx_sub_name(cx, np, "epsilon"), xt->dtype, 1e-9);
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, (glow_value[]){ std, eps }, 2, NULL, 0, &den));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_SUB, (glow_value[]){ x, mean }, 2, NULL, 0,
                                 &centered));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_DIV, (glow_value[]){ centered, den }, 2, NULL, 0,
                                 &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_gemm(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[3];
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    const glow_type *at = glow_value_type(ins[0]), *bt = glow_value_type(ins[1]);
    if (at->rank != 2 || bt->rank != 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "A and B must be matrices (ranks %d, %d)",
                         at->rank, bt->rank);
    int64_t ta = onnx_attr_int(np, "transA", 0) != 0;
    int64_t tb = onnx_attr_int(np, "transB", 0) != 0;
    int64_t mn[2] = { at->dims[ta ? 1 : 0], bt->dims[tb ? 0 : 1] };
    int nin = 2;
    if (onnx_has_input(np, 2)) {
        GLOW_TRY(onnx_input(cx, np, 2, &ins[2]));
        const glow_type *ct = glow_value_type(ins[2]);
        bool exact = ct->rank == 2 && ct->dims[0] == mn[0] && ct->dims[1] == mn[1];
        /* Before opset 7 C broadcasts only with broadcast=1. */
        if (opset < 7 && !exact && onnx_attr_int(np, "broadcast", 0) == 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                             "C must be [%lld, %lld] when broadcast=0", (long long)mn[0],
                             (long long)mn[1]);
        if (!exact) {
            int r;
            int64_t common[GLOW_MAX_DIMS];
            if (ct->rank > 2 || !glow_broadcast_shapes(ct->rank, ct->dims, 2, mn, &r, common) ||
                common[0] != mn[0] || common[1] != mn[1])
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                                 "C does not broadcast to [%lld, %lld]", (long long)mn[0],
                                 (long long)mn[1]);
            GLOW_TRY(onnx_broadcast_to(cx, np, ins[2], 2, mn, &ins[2]));
        }
        nin = 3;
    }
    glow_attr a[4] = {
        GLOW_AF(ALPHA, onnx_attr_float(np, "alpha", 1.0f)),
        GLOW_AF(BETA, onnx_attr_float(np, "beta", 1.0f)),
        GLOW_AI(TRANS_A, ta),
        GLOW_AI(TRANS_B, tb),
    };
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_GEMM, ins, nin, a, 4, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* numpy.matmul: rank-1 operands get a 1 prepended (A) or appended (B) that is removed from
 * the result; batch dims broadcast. */
glow_status load_matmul(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value a, b, y;
    GLOW_TRY(onnx_input(cx, np, 0, &a));
    GLOW_TRY(onnx_input(cx, np, 1, &b));
    GLOW_TRY(onnx_matmul(cx, np, a, b, NULL, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status onnx_matmul(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value a, glow_value b,
                        const glow_type *declared, glow_value *out)
{
    glow_type at = *glow_value_type(a), bt = *glow_value_type(b);
    if (at.rank < 1 || bt.rank < 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "operands must have rank >= 1 (got %d, %d)",
                         at.rank, bt.rank);
    bool a_vec = at.rank == 1, b_vec = bt.rank == 1;
    if (a_vec) {
        int64_t d[2] = { 1, at.dims[0] };
        GLOW_TRY(onnx_reshape(cx, np, a, 2, d, &a));
        at = *glow_value_type(a);
    }
    if (b_vec) {
        int64_t d[2] = { bt.dims[0], 1 };
        GLOW_TRY(onnx_reshape(cx, np, b, 2, d, &b));
        bt = *glow_value_type(b);
    }
    if (at.dims[at.rank - 1] != bt.dims[bt.rank - 2])
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                         "inner dims differ: A has K = %lld, B has K = %lld",
                         (long long)at.dims[at.rank - 1], (long long)bt.dims[bt.rank - 2]);
    int nb;
    int64_t dims[GLOW_MAX_DIMS + 2];
    if (!glow_broadcast_shapes(at.rank - 2, at.dims, bt.rank - 2, bt.dims, &nb, dims))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "batch dims of A and B do not broadcast");
    if (nb + 2 > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "result rank %d (at most %d)", nb + 2, GLOW_MAX_DIMS);
    int64_t m = at.dims[at.rank - 2], k = at.dims[at.rank - 1], n = bt.dims[bt.rank - 1];
    dims[nb] = m;
    dims[nb + 1] = k;
    GLOW_TRY(onnx_broadcast_to(cx, np, a, nb + 2, dims, &a));
    dims[nb] = k;
    dims[nb + 1] = n;
    GLOW_TRY(onnx_broadcast_to(cx, np, b, nb + 2, dims, &b));
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_MATMUL, (glow_value[]){ a, b }, 2, NULL, 0, declared,
                        declared ? 1 : 0, &y));
    if (a_vec || b_vec) {
        int r = nb;
        if (!a_vec)
            dims[r++] = m;
        if (!b_vec)
            dims[r++] = n;
        GLOW_TRY(onnx_reshape(cx, np, y, r, dims, &y));
    }
    *out = y;
    return GLOW_OK;
}

/* Softmax, LogSoftmax, Hardmax (the row's kind). Before opset 13 the input is coerced to 2-D
 * at `axis` (default 1) and the op applies to the whole second half, so it becomes
 * reshape [prod(dims[:axis]), prod(dims[axis:])] -> op over axis 1 -> reshape back; when
 * axis is the last dim the two forms agree and no reshape is needed. */
glow_status load_softmax_kind(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    glow_type xt = *glow_value_type(x);
    if (xt.rank < 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input is a scalar");
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", opset >= 13 ? -1 : 1), xt.rank, &axis));
    glow_value y;
    if (opset >= 13 || axis == xt.rank - 1) {
        glow_attr a = GLOW_AI(AXIS, axis);
        GLOW_TRY(onnx_build(cx, np, kind, &x, 1, &a, 1, NULL, 0, &y));
        return onnx_set_output(cx, np, 0, y);
    }
    int64_t flat[2] = { 1, 1 };
    for (int i = 0; i < xt.rank; i++)
        if (!glow_mul_overflow_i64(flat[i >= axis], xt.dims[i], &flat[i >= axis]))
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "input size overflows");
    GLOW_TRY(onnx_reshape(cx, np, x, 2, flat, &x));
    glow_attr a = GLOW_AI(AXIS, 1);
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, &a, 1, NULL, 0, &y));
    GLOW_TRY(onnx_reshape(cx, np, y, xt.rank, xt.dims, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* --- Einsum --- */

/* One operand's (or the result's) subscripts. */
typedef struct einsum_term {
    int n;
    char l[GLOW_MAX_DIMS];
} einsum_term;

static glow_status einsum_parse_term(onnx_ctx *cx, const Onnx__NodeProto *np, const char **p,
                                     einsum_term *t)
{
    t->n = 0;
    for (;; (*p)++) {
        char c = **p;
        if (c == ' ')
            continue;
        if (c == '.')
            return onnx_unsupported(cx, np, "Einsum ellipsis '...'");
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return GLOW_OK;
        if (t->n == GLOW_MAX_DIMS)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "a term has more than %d subscripts",
                             GLOW_MAX_DIMS);
        for (int i = 0; i < t->n; i++)
            if (t->l[i] == c)
                return onnx_unsupported(cx, np, "repeated subscript '%c' in one term "
                                        "(diagonals)", c);
        t->l[t->n++] = c;
    }
}

static int term_find(const einsum_term *t, char c)
{
    for (int i = 0; i < t->n; i++)
        if (t->l[i] == c)
            return i;
    return -1;
}

/* Transposes v (subscripts *t) so that its subscripts read `want`; nothing when equal. */
static glow_status einsum_permute(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value *v,
                                  einsum_term *t, const einsum_term *want)
{
    int64_t perm[GLOW_MAX_DIMS];
    bool same = true;
    for (int i = 0; i < want->n; i++) {
        perm[i] = term_find(t, want->l[i]);
        same = same && perm[i] == i;
    }
    if (same)
        return GLOW_OK;
    glow_attr a = GLOW_AINTS(PERM, perm, want->n);
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, v, 1, &a, 1, NULL, 0, v));
    *t = *want;
    return GLOW_OK;
}

/* The product of v's dims for the subscripts in `sel` (in t's layout). */
static int64_t einsum_size(glow_value v, const einsum_term *t, const einsum_term *sel)
{
    int64_t p = 1;
    for (int i = 0; i < sel->n; i++)
        p *= glow_value_type(v)->dims[term_find(t, sel->l[i])];
    return p;
}

/* Einsum without ellipsis or diagonals, on one or two operands: subscripts used nowhere else
 * are summed away first; two operands then become one batched MATMUL between transposes and
 * reshapes ([batch, M, K] x [batch, K, N]). */
glow_status load_einsum(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    const char *eq = onnx_attr_str(cx, np, "equation", NULL);
    if (!eq)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required 'equation'");
    int nin = onnx_num_inputs(np);
    if (nin < 1 || nin > 2)
        return onnx_unsupported(cx, np, "Einsum with %d operands (1 or 2)", nin);
    glow_value v[2];
    einsum_term t[2], out;
    for (int k = 0; k < nin; k++)
        GLOW_TRY(onnx_input(cx, np, k, &v[k]));
    GLOW_TRY(onnx_einsum_prepare(cx, np, &eq, v, nin));
    const char *p = eq;
    for (int k = 0; k < nin; k++) {
        GLOW_TRY(einsum_parse_term(cx, np, &p, &t[k]));
        if (*p == ',' && k + 1 < nin)
            p++;
        if (t[k].n != glow_value_type(v[k])->rank)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "term %d has %d subscripts for a "
                             "rank-%d operand", k, t[k].n, glow_value_type(v[k])->rank);
    }
    if (p[0] == '-' && p[1] == '>') {
        p += 2;
        GLOW_TRY(einsum_parse_term(cx, np, &p, &out));
    } else {
        /* Implicit output: subscripts seen exactly once, in alphabetical order. */
        out.n = 0;
        for (int c = 'A'; c <= 'z'; c++) {
            int seen = 0;
            for (int k = 0; k < nin; k++)
                seen += term_find(&t[k], (char)c) >= 0;
            if (seen == 1 && out.n < GLOW_MAX_DIMS)
                out.l[out.n++] = (char)c;
        }
    }
    if (*p != '\0')
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "cannot parse equation '%s'", eq);
    for (int i = 0; i < out.n; i++) {
        int where = 0;
        for (int k = 0; k < nin; k++)
            where += term_find(&t[k], out.l[i]) >= 0;
        if (!where)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "output subscript '%c' is in no "
                             "input", out.l[i]);
    }
    if (nin == 2) {
        for (int i = 0; i < t[0].n; i++) {
            int j = term_find(&t[1], t[0].l[i]);
            if (j >= 0 && glow_value_type(v[0])->dims[i] != glow_value_type(v[1])->dims[j])
                return onnx_unsupported(cx, np, "subscript '%c' has sizes %lld and %lld "
                                        "(broadcasting)", t[0].l[i],
                                        (long long)glow_value_type(v[0])->dims[i],
                                        (long long)glow_value_type(v[1])->dims[j]);
        }
    }

    /* Sum away the subscripts only one operand has and the result lacks. */
    for (int k = 0; k < nin; k++) {
        int64_t axes[GLOW_MAX_DIMS];
        int na = 0;
        einsum_term kept = { 0 };
        for (int i = 0; i < t[k].n; i++) {
            char c = t[k].l[i];
            if (term_find(&out, c) < 0 && (nin == 1 || term_find(&t[1 - k], c) < 0))
                axes[na++] = i;
            else
                kept.l[kept.n++] = c;
        }
        if (na == 0)
            continue;
        glow_attr ra[2] = { GLOW_AINTS(AXES, axes, na), GLOW_AI(KEEPDIMS, 0) };
        GLOW_TRY(onnx_build(cx, np, NK_REDUCE_SUM, &v[k], 1, ra, 2, NULL, 0, &v[k]));
        t[k] = kept;
    }
    if (nin == 1) {
        GLOW_TRY(einsum_permute(cx, np, &v[0], &t[0], &out));
        return onnx_set_output(cx, np, 0, v[0]);
    }

    einsum_term batch = { 0 }, con = { 0 }, aonly = { 0 }, bonly = { 0 };
    for (int i = 0; i < t[0].n; i++) {
        char c = t[0].l[i];
        einsum_term *dst = term_find(&t[1], c) < 0 ? &aonly
                           : term_find(&out, c) >= 0 ? &batch : &con;
        dst->l[dst->n++] = c;
    }
    for (int i = 0; i < t[1].n; i++)
        if (term_find(&t[0], t[1].l[i]) < 0)
            bonly.l[bonly.n++] = t[1].l[i];
    int64_t nb = einsum_size(v[0], &t[0], &batch), m = einsum_size(v[0], &t[0], &aonly);
    int64_t kk = einsum_size(v[0], &t[0], &con), n = einsum_size(v[1], &t[1], &bonly);
    /* The result, before its final transpose: batch, then A's, then B's free subscripts. */
    einsum_term res = batch;
    int64_t res_dims[GLOW_MAX_DIMS];
    for (int i = 0; i < batch.n; i++)
        res_dims[i] = glow_value_type(v[0])->dims[term_find(&t[0], batch.l[i])];
    for (int i = 0; i < aonly.n; i++) {
        res_dims[res.n] = glow_value_type(v[0])->dims[term_find(&t[0], aonly.l[i])];
        res.l[res.n++] = aonly.l[i];
    }
    for (int i = 0; i < bonly.n; i++) {
        if (res.n == GLOW_MAX_DIMS)
            return onnx_unsupported(cx, np, "result rank above %d", GLOW_MAX_DIMS);
        res_dims[res.n] = glow_value_type(v[1])->dims[term_find(&t[1], bonly.l[i])];
        res.l[res.n++] = bonly.l[i];
    }

    einsum_term wa = batch, wb = batch;
    for (int i = 0; i < aonly.n; i++)
        wa.l[wa.n++] = aonly.l[i];
    for (int i = 0; i < con.n; i++) {
        wa.l[wa.n++] = con.l[i];
        wb.l[wb.n++] = con.l[i];
    }
    for (int i = 0; i < bonly.n; i++)
        wb.l[wb.n++] = bonly.l[i];
    GLOW_TRY(einsum_permute(cx, np, &v[0], &t[0], &wa));
    GLOW_TRY(einsum_permute(cx, np, &v[1], &t[1], &wb));
    int64_t da[3] = { nb, m, kk }, db[3] = { nb, kk, n };
    GLOW_TRY(onnx_reshape(cx, np, v[0], 3, da, &v[0]));
    GLOW_TRY(onnx_reshape(cx, np, v[1], 3, db, &v[1]));
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_MATMUL, v, 2, NULL, 0, NULL, 0, &y));
    GLOW_TRY(onnx_reshape(cx, np, y, res.n, res_dims, &y));
    GLOW_TRY(einsum_permute(cx, np, &y, &res, &out));
    return onnx_set_output(cx, np, 0, y);
}
