// onnx_ops_ml.c - ai.onnx.ml ops on numbers, built from existing nodes: Binarizer,
// ArrayFeatureExtractor and TreeEnsemble.
//
// TreeEnsemble's trees are attributes, so their structure is known at import: each leaf is
// reached when every split on its path goes its way, which is a product of 0/1 comparisons of
// the input's features with constants. The ensemble is then a sum (or mean, min, max) of leaf
// weights times those indicators - elementwise arithmetic on [N, 1] columns, no tree walk at
// run time.
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

static glow_status bin(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                       glow_value b, glow_value *out)
{
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, NULL, 0, out);
}

/* Binarizer: 1 where X > threshold, else 0, in X's type. */
glow_status load_binarizer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                           glow_node_kind kind)
{
    glow_value x, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    glow_dtype t = glow_value_type(x)->dtype;
    if (!glow_dtype_is_float(t) && !glow_dtype_is_int(t))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "X must hold numbers");
    double th = onnx_attr_float(np, "threshold", 0.0f);
    GLOW_TRY(bin(cx, np, NK_GREATER, x, onnx_sub_scalar(cx, np, "threshold", t, th), &y));
    GLOW_TRY(onnx_cast(cx, np, y, t, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* ArrayFeatureExtractor: X[..., indices] with the indices flattened; a 1-D X gives [1, k]. */
glow_status load_array_feature_extractor(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                         glow_node_kind kind)
{
    glow_value x, idx, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &idx));
    const glow_type *xt = glow_value_type(x), *it = glow_value_type(idx);
    if (xt->rank < 1 || !glow_dtype_is_int(it->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "X must have rank >= 1 and the indices "
                         "must be integers");
    int64_t k = glow_type_numel(it);
    GLOW_TRY(onnx_reshape(cx, np, idx, 1, &k, &idx));
    glow_attr a = GLOW_AI(AXIS, xt->rank - 1);
    GLOW_TRY(onnx_build(cx, np, NK_GATHER, (glow_value[]){ x, idx }, 2, &a, 1, NULL, 0, &y));
    if (xt->rank == 1)
        GLOW_TRY(onnx_reshape(cx, np, y, 2, (int64_t[]){ 1, k }, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* --- TreeEnsemble (ai.onnx.ml opset 5) --- */

enum { TE_LEQ, TE_LT, TE_GTE, TE_GT, TE_EQ, TE_NEQ, TE_MEMBER };
enum { TE_AVERAGE, TE_SUM, TE_MIN, TE_MAX };

/* A tensor attribute read as f64 values (arena copy); *n = -1 when absent. */
static glow_status tensor_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                               double **vals, int64_t *n)
{
    const Onnx__AttributeProto *a = onnx_attr(np, name);
    *n = -1;
    if (!a)
        return GLOW_OK;
    if (!a->t)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute '%s' holds no tensor", name);
    glow_diag d = { 0 };
    glow_tensor t;
    if (onnx_tensor_from_proto(a->t, &cx->scratch, &t, name, &d) != GLOW_OK)
        return onnx_fail(cx, np, d.status, "%s", d.msg);
    *n = glow_type_numel(&t.type);
    *vals = GLOW_NEW_ARRAY(&cx->scratch, double, *n ? *n : 1);
    for (int64_t i = 0; i < *n; i++)
        (*vals)[i] = glow_load_f64(t.type.dtype, t.data, (size_t)i);
    return GLOW_OK;
}

typedef struct {
    onnx_ctx *cx;
    const Onnx__NodeProto *np;
    glow_dtype ft;
    glow_value x;                 /* [N, F] */
    glow_value *feature;          /* [N, 1] column per feature, built on first use */
    int64_t nfeat;
} te_ctx;

static glow_status te_feature(te_ctx *t, int64_t f, glow_value *out)
{
    if (f < 0 || f >= t->nfeat)
        return onnx_fail(t->cx, t->np, GLOW_ERR_BAD_ATTR, "feature id %lld is outside X's %lld "
                         "features", (long long)f, (long long)t->nfeat);
    if (!t->feature[f].node)
        GLOW_TRY(onnx_slice_axis(t->cx, t->np, t->x, 1, f, f + 1, &t->feature[f]));
    *out = t->feature[f];
    return GLOW_OK;
}

/* 1 (in the float type) where a node's split sends a row to its true branch, else 0. */
static glow_status te_condition(te_ctx *t, int mode, glow_value col, double split,
                                const double *set, int64_t nset, bool nan_true, glow_value *out)
{
    static const glow_node_kind cmp[6] = { NK_LESS_EQUAL, NK_LESS, NK_GREATER_EQUAL,
                                           NK_GREATER, NK_EQUAL, NK_EQUAL };
    glow_value c;
    if (mode == TE_MEMBER) {
        c = (glow_value){ 0 };
        for (int64_t k = 0; k < nset; k++) {
            glow_value e;
            GLOW_TRY(bin(t->cx, t->np, NK_EQUAL, col,
                         onnx_sub_scalar(t->cx, t->np, "member", t->ft, set[k]), &e));
            GLOW_TRY(c.node ? bin(t->cx, t->np, NK_OR, c, e, &c) : (c = e, GLOW_OK));
        }
        if (!c.node)   /* an empty set holds nothing */
            GLOW_TRY(bin(t->cx, t->np, NK_LESS, col, col, &c));
    } else {
        GLOW_TRY(bin(t->cx, t->np, cmp[mode], col,
                     onnx_sub_scalar(t->cx, t->np, "split", t->ft, split), &c));
        if (mode == TE_NEQ)
            GLOW_TRY(onnx_build(t->cx, t->np, NK_NOT, &c, 1, NULL, 0, NULL, 0, &c));
    }
    if (nan_true) {
        glow_value nan;
        GLOW_TRY(onnx_build(t->cx, t->np, NK_ISNAN, &col, 1, NULL, 0, NULL, 0, &nan));
        GLOW_TRY(bin(t->cx, t->np, NK_OR, c, nan, &c));
    }
    return onnx_cast(t->cx, t->np, c, t->ft, out);
}

/* Integer list attribute `name` with exactly n values (n < 0: any count, stored in *count). */
static glow_status ints_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                             int64_t n, bool required, const int64_t **vals, int64_t *count)
{
    int c = onnx_attr_ints(np, name, vals);
    if (c < 0 && !required) {
        *vals = NULL;
        if (count)
            *count = 0;
        return GLOW_OK;
    }
    if (c < 0 || (n >= 0 && c != n))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute '%s' must have %lld values",
                         name, (long long)n);
    if (count)
        *count = c;
    return GLOW_OK;
}

/* TreeEnsemble: X [N, F] -> Y [N, n_targets]. Per tree, the reach of each node (1 where a row
 * arrives there) flows from the root: true child = reach * condition, false child =
 * reach * (1 - condition); a leaf adds reach * weight to its target. */
glow_status load_tree_ensemble(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                               glow_node_kind kind)
{
    te_ctx t = { cx, np, GLOW_F32, { 0 }, NULL, 0 };
    GLOW_TRY(onnx_input(cx, np, 0, &t.x));
    const glow_type *xt = glow_value_type(t.x);
    t.ft = xt->dtype;
    if (xt->rank != 2 || !glow_dtype_is_float(t.ft))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "X must be float [N, F]");
    int64_t rows = xt->dims[0];
    t.nfeat = xt->dims[1];
    t.feature = GLOW_NEW_ARRAY(&cx->scratch, glow_value, t.nfeat ? t.nfeat : 1);
    memset(t.feature, 0, sizeof(glow_value) * (size_t)(t.nfeat ? t.nfeat : 1));

    const int64_t *roots, *fid, *tid, *fleaf, *tleaf, *feat, *targets, *track;
    int64_t nroots = 0, nnodes = 0, nleaves = 0, nmodes, nsplits, nweights, nmember;
    double *modes = NULL, *splits = NULL, *weights = NULL, *member = NULL;
    GLOW_TRY(ints_attr(cx, np, "tree_roots", -1, true, &roots, &nroots));
    GLOW_TRY(ints_attr(cx, np, "nodes_featureids", -1, true, &feat, &nnodes));
    GLOW_TRY(ints_attr(cx, np, "nodes_truenodeids", nnodes, true, &tid, NULL));
    GLOW_TRY(ints_attr(cx, np, "nodes_falsenodeids", nnodes, true, &fid, NULL));
    GLOW_TRY(ints_attr(cx, np, "nodes_trueleafs", nnodes, true, &tleaf, NULL));
    GLOW_TRY(ints_attr(cx, np, "nodes_falseleafs", nnodes, true, &fleaf, NULL));
    GLOW_TRY(ints_attr(cx, np, "nodes_missing_value_tracks_true", nnodes, false, &track, NULL));
    GLOW_TRY(ints_attr(cx, np, "leaf_targetids", -1, true, &targets, &nleaves));
    GLOW_TRY(tensor_attr(cx, np, "nodes_modes", &modes, &nmodes));
    GLOW_TRY(tensor_attr(cx, np, "nodes_splits", &splits, &nsplits));
    GLOW_TRY(tensor_attr(cx, np, "leaf_weights", &weights, &nweights));
    GLOW_TRY(tensor_attr(cx, np, "membership_values", &member, &nmember));
    int64_t ntargets = onnx_attr_int(np, "n_targets", 0);
    int64_t agg = onnx_attr_int(np, "aggregate_function", TE_SUM);
    int64_t post = onnx_attr_int(np, "post_transform", 0);
    if (nmodes != nnodes || nsplits != nnodes || nweights != nleaves || nroots < 1 ||
        ntargets < 1 || ntargets > 4096 || agg < TE_AVERAGE || agg > TE_MAX)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "the node, leaf and tree attributes must "
                         "agree in length, n_targets be in 1..4096 and aggregate_function in "
                         "0..3");
    if (post != 0 && post != 1 && post != 2)
        return onnx_unsupported(cx, np, "post_transform %lld (glowc supports NONE, SOFTMAX and "
                                "LOGISTIC)", (long long)post);
    /* BRANCH_MEMBER nodes take the NaN-separated sets of membership_values in node order. */
    int64_t *set_at = GLOW_NEW_ARRAY(&cx->scratch, int64_t, 2 * nnodes + 2), pos = 0;
    for (int64_t i = 0; i < nnodes; i++) {
        set_at[2 * i] = set_at[2 * i + 1] = 0;
        if (modes[i] != TE_MEMBER)
            continue;
        set_at[2 * i] = pos;
        while (pos < nmember && !isnan(member[pos]))
            pos++;
        set_at[2 * i + 1] = pos;
        pos++;   /* past the separator */
    }

    glow_value *acc = GLOW_NEW_ARRAY(&cx->scratch, glow_value, ntargets);
    glow_value *ctree = GLOW_NEW_ARRAY(&cx->scratch, glow_value, ntargets);
    glow_value *htree = GLOW_NEW_ARRAY(&cx->scratch, glow_value, ntargets);
    memset(acc, 0, sizeof(glow_value) * (size_t)ntargets);
    int64_t *stack = GLOW_NEW_ARRAY(&cx->scratch, int64_t, nnodes + 1);
    glow_value *reach = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nnodes);
    glow_value one = onnx_sub_scalar(cx, np, "one", t.ft, 1.0);
    bool minmax = agg == TE_MIN || agg == TE_MAX;
    for (int64_t r = 0; r < nroots; r++) {
        memset(ctree, 0, sizeof(glow_value) * (size_t)ntargets);
        memset(htree, 0, sizeof(glow_value) * (size_t)ntargets);
        if (roots[r] < 0 || roots[r] >= nnodes)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "tree root %lld is not a node",
                             (long long)roots[r]);
        int64_t sp = 0, visited = 0;
        stack[sp++] = roots[r];
        reach[roots[r]] = (glow_value){ 0 };   /* every row reaches the root */
        while (sp > 0) {
            int64_t i = stack[--sp];
            if (++visited > nnodes || modes[i] < TE_LEQ || modes[i] > TE_MEMBER)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "tree %lld is not a tree of valid "
                                 "nodes (a cycle or an unknown mode)", (long long)r);
            glow_value col, c, nc, branch[2];
            GLOW_TRY(te_feature(&t, feat[i], &col));
            /* No membership_values: member is NULL and every set is empty. */
            const double *set = member ? member + set_at[2 * i] : NULL;
            GLOW_TRY(te_condition(&t, (int)modes[i], col, splits[i], set,
                                  set_at[2 * i + 1] - set_at[2 * i], track && track[i], &c));
            GLOW_TRY(bin(cx, np, NK_SUB, one, c, &nc));
            branch[0] = c;
            branch[1] = nc;
            for (int b = 0; b < 2; b++) {
                glow_value rb = branch[b];
                if (reach[i].node)
                    GLOW_TRY(bin(cx, np, NK_MUL, reach[i], rb, &rb));
                int64_t child = b == 0 ? tid[i] : fid[i];
                bool leaf = (b == 0 ? tleaf[i] : fleaf[i]) != 0;
                if (!leaf) {
                    if (child < 0 || child >= nnodes || sp >= nnodes)
                        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "node %lld has no node "
                                         "%lld", (long long)i, (long long)child);
                    reach[child] = rb;
                    stack[sp++] = child;
                    continue;
                }
                if (child < 0 || child >= nleaves || targets[child] < 0 ||
                    targets[child] >= ntargets)
                    return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "leaf %lld or its target is out "
                                     "of range", (long long)child);
                int64_t tg = targets[child];
                glow_value wv;
                GLOW_TRY(bin(cx, np, NK_MUL, rb,
                             onnx_sub_scalar(cx, np, "weight", t.ft, weights[child]), &wv));
                glow_value *sum = minmax ? &ctree[tg] : &acc[tg];
                GLOW_TRY(sum->node ? bin(cx, np, NK_ADD, *sum, wv, sum) : (*sum = wv, GLOW_OK));
                if (minmax)
                    GLOW_TRY(htree[tg].node ? bin(cx, np, NK_ADD, htree[tg], rb, &htree[tg])
                                            : (htree[tg] = rb, GLOW_OK));
            }
        }
        /* MIN / MAX: a tree counts for a target only in rows whose leaf has that target. */
        for (int64_t tg = 0; minmax && tg < ntargets; tg++) {
            if (!ctree[tg].node)
                continue;
            glow_value hit, v;
            double fill = agg == TE_MIN ? INFINITY : -INFINITY;
            GLOW_TRY(bin(cx, np, NK_GREATER, htree[tg],
                         onnx_sub_scalar(cx, np, "zero", t.ft, 0.0), &hit));
            GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE,
                                         (glow_value[]){ hit, ctree[tg],
                                                         onnx_sub_scalar(cx, np, "fill", t.ft,
                                                                         fill) },
                                         3, NULL, 0, &v));
            GLOW_TRY(acc[tg].node ? bin(cx, np, agg == TE_MIN ? NK_MIN : NK_MAX, acc[tg], v,
                                        &acc[tg])
                                  : (acc[tg] = v, GLOW_OK));
        }
    }
    /* Targets no leaf feeds: 0 for sums, the type's extreme for MIN / MAX (as the reference
     * starts them). */
    double big = t.ft == GLOW_F64 ? DBL_MAX : t.ft == GLOW_F16 ? 65504.0 : FLT_MAX;
    glow_value *cols = GLOW_NEW_ARRAY(&cx->scratch, glow_value, ntargets);
    int64_t cd[2] = { rows, 1 };
    for (int64_t tg = 0; tg < ntargets; tg++) {
        glow_value v = acc[tg];
        if (!v.node) {
            double e = agg == TE_MIN ? big : agg == TE_MAX ? -big : 0.0;
            GLOW_TRY(onnx_broadcast_to(cx, np, onnx_sub_scalar(cx, np, "empty", t.ft, e), 2, cd,
                                       &v));
        } else if (minmax) {
            /* A row no tree fed for this target keeps the reference's starting extreme. */
            glow_value inf, isinf;
            double fill = agg == TE_MIN ? INFINITY : -INFINITY;
            GLOW_TRY(bin(cx, np, NK_EQUAL, v, onnx_sub_scalar(cx, np, "fill", t.ft, fill),
                         &isinf));
            inf = onnx_sub_scalar(cx, np, "extreme", t.ft, agg == TE_MIN ? big : -big);
            GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ isinf, inf, v }, 3,
                                         NULL, 0, &v));
        } else if (agg == TE_AVERAGE) {
            GLOW_TRY(bin(cx, np, NK_DIV, v,
                         onnx_sub_scalar(cx, np, "trees", t.ft, (double)nroots), &v));
        }
        GLOW_TRY(onnx_broadcast_to(cx, np, v, 2, cd, &cols[tg]));
    }
    glow_value y;
    GLOW_TRY(onnx_concat_many(cx, np, cols, (int)ntargets, 1, &y));
    if (post == 2)
        GLOW_TRY(onnx_build(cx, np, NK_SIGMOID, &y, 1, NULL, 0, NULL, 0, &y));
    if (post == 1) {
        glow_attr a = GLOW_AI(AXIS, 1);
        GLOW_TRY(onnx_build(cx, np, NK_SOFTMAX, &y, 1, &a, 1, NULL, 0, &y));
    }
    return onnx_set_output(cx, np, 0, y);
}
