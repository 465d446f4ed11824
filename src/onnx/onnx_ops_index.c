// onnx_ops_index.c - ONNX loaders for indexed data movement: Gather*, Scatter*, OneHot,
// ReverseSequence, and the data-dependent Compress, NonZero and Unique (folded when constant).
//
// Compress, NonZero and Unique have output shapes that depend on tensor values. glowc's shapes
// are static, so they load only when the values that decide the shape are constants at import:
// Compress with a constant condition becomes a GATHER with constant indices; NonZero and Unique
// of a constant are computed here and become constants.
#include <inttypes.h>
#include <string.h>

#include "eval/eval.h"
#include "onnx/onnx_internal.h"

/* The input's values must be constant for the output shape to be known. */
static glow_status need_const(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const char *what,
                              const glow_tensor **t)
{
    GLOW_TRY(onnx_input_static(cx, np, i, what));
    return onnx_input_const(cx, np, i, t);
}

static glow_status check_index_dtype(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                                     glow_value v)
{
    glow_dtype t = glow_value_type(v)->dtype;
    if (t != GLOW_I32 && t != GLOW_I64)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d (indices) is %s; expected i32 or i64",
                         i, glow_dtype_name(t));
    return GLOW_OK;
}

/* Gather, GatherElements (the row's kind): (data, indices) with a normalized axis. */
glow_status load_gather_axis(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    glow_value ins[2];
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    GLOW_TRY(check_index_dtype(cx, np, 1, ins[1]));
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), glow_value_type(ins[0])->rank, &axis));
    glow_attr a = GLOW_AI(AXIS, axis);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, kind, ins, 2, &a, 1, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_gather_nd(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[2];
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    if (glow_value_type(ins[1])->dtype != GLOW_I64)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input 1 (indices) is %s; expected i64",
                         glow_dtype_name(glow_value_type(ins[1])->dtype));
    int64_t bd = opset >= 12 ? onnx_attr_int(np, "batch_dims", 0) : 0;
    int r = glow_value_type(ins[0])->rank, q = glow_value_type(ins[1])->rank;
    if (bd < 0 || bd >= r || bd >= q)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                         "batch_dims %" PRId64 " must be below both ranks (%d, %d)", bd, r, q);
    glow_attr a = GLOW_AI(BATCH_DIMS, bd);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_GATHER_ND, ins, 2, &a, 1, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* The reduction attribute of ScatterElements / ScatterND for this opset. */
static glow_status scatter_reduction(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                     const char **red)
{
    *red = opset >= 16 ? onnx_attr_str(cx, np, "reduction", "none") : "none";
    if (!strcmp(*red, "none") || !strcmp(*red, "add") || !strcmp(*red, "mul") ||
        (opset >= 18 && (!strcmp(*red, "max") || !strcmp(*red, "min"))))
        return GLOW_OK;
    return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "reduction '%s' is not valid at this opset", *red);
}

/* ScatterElements and the deprecated Scatter (same semantics, no reduction). */
glow_status load_scatter_elements(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                  glow_node_kind kind)
{
    glow_value ins[3];
    for (int i = 0; i < 3; i++)
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
    GLOW_TRY(check_index_dtype(cx, np, 1, ins[1]));
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), glow_value_type(ins[0])->rank, &axis));
    const char *red = "none";
    if (strcmp(np->op_type, "Scatter") != 0)
        GLOW_TRY(scatter_reduction(cx, np, opset, &red));
    glow_attr attrs[2] = { GLOW_AI(AXIS, axis), GLOW_ASTR(REDUCTION, red) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_SCATTER_ELEMENTS, ins, 3, attrs, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_scatter_nd(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[3];
    for (int i = 0; i < 3; i++)
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
    if (glow_value_type(ins[1])->dtype != GLOW_I64)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input 1 (indices) is %s; expected i64",
                         glow_dtype_name(glow_value_type(ins[1])->dtype));
    const char *red;
    GLOW_TRY(scatter_reduction(cx, np, opset, &red));
    glow_attr a = GLOW_ASTR(REDUCTION, red);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_SCATTER_ND, ins, 3, &a, 1, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_one_hot(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[3];
    for (int i = 0; i < 3; i++)
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
    glow_value dv = ins[1];
    if (!glow_value_is_constant(dv))
        return onnx_unsupported(cx, np,
                                "input 1 'depth' is computed at run time; glowc needs static shapes");
    double *depth;
    int nd;
    GLOW_TRY(onnx_input_floats(cx, np, 1, &depth, &nd));
    if (nd != 1 || !(depth[0] >= 1 && depth[0] < (double)INT32_MAX))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "input 1 'depth' must be one value >= 1 (got %d "
                         "values, first %g)", nd, nd > 0 ? depth[0] : 0.0);
    if (glow_type_numel(glow_value_type(ins[2])) != 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                         "input 2 'values' must hold 2 elements [off, on], not %" PRId64,
                         glow_type_numel(glow_value_type(ins[2])));
    int r = glow_value_type(ins[0])->rank;
    if (r + 1 > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "the result would have %d dims; glowc supports up to %d",
                                r + 1, GLOW_MAX_DIMS);
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", -1), r + 1, &axis));
    glow_attr attrs[2] = { GLOW_AI(AXIS, axis), GLOW_AI(DEPTH, (int64_t)depth[0]) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_ONE_HOT, ins, 3, attrs, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_reverse_sequence(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                  glow_node_kind kind)
{
    glow_value ins[2];
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    int64_t ta = onnx_attr_int(np, "time_axis", 0), ba = onnx_attr_int(np, "batch_axis", 1);
    if ((ta != 0 && ta != 1) || (ba != 0 && ba != 1) || ta == ba)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                         "time_axis %" PRId64 " and batch_axis %" PRId64 " must be 0 and 1", ta, ba);
    if (glow_value_type(ins[0])->rank < 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 0 has rank %d; expected >= 2",
                         glow_value_type(ins[0])->rank);
    glow_attr attrs[2] = { GLOW_AI(TIME_AXIS, ta), GLOW_AI(BATCH_AXIS, ba) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_REVERSE_SEQUENCE, ins, 2, attrs, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* Compress with a constant condition: a GATHER of the selected positions. */
glow_status load_compress(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    if (onnx_input_is_computed(cx, np, 1))
        return load_compress_dyn(cx, np, opset, kind);
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_tensor *cond;
    GLOW_TRY(need_const(cx, np, 1, "condition", &cond));
    if (cond->type.rank != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 1 'condition' has rank %d; expected 1",
                         cond->type.rank);
    const glow_type *xt = glow_value_type(x);
    int axis = 0;
    if (onnx_attr(np, "axis")) {
        GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), xt->rank, &axis));
    } else {
        /* Without an axis the input is flattened first. */
        int64_t n = glow_type_numel(xt);
        GLOW_TRY(onnx_reshape(cx, np, x, 1, &n, &x));
        xt = glow_value_type(x);
    }
    int64_t len = cond->type.dims[0];
    if (len > xt->dims[axis])
        len = xt->dims[axis];   /* the spec ignores condition values past the axis' end */
    int64_t *idx = GLOW_NEW_ARRAY(&cx->scratch, int64_t, len > 0 ? len : 1);
    int64_t k = 0;
    for (int64_t i = 0; i < len; i++)
        if (glow_load_i64(cond->type.dtype, cond->data, (size_t)i) != 0)
            idx[k++] = i;
    glow_type it = glow_type_make(GLOW_I64, 1, &k);
    glow_value iv = onnx_constant(cx, glow_arena_printf(cx->arena, "%s/indices",
                                                        onnx_node_name(np)), &it, idx);
    glow_value ins[2] = { x, iv };
    glow_attr a = GLOW_AI(AXIS, axis);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_GATHER, ins, 2, &a, 1, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_nonzero(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    if (onnx_input_is_computed(cx, np, 0))
        return load_nonzero_dyn(cx, np, opset, kind);
    const glow_tensor *t;
    GLOW_TRY(need_const(cx, np, 0, "X", &t));
    int rank = t->type.rank ? t->type.rank : 1;   /* a scalar counts as one element of rank 1 */
    int64_t n = glow_type_numel(&t->type);
    if ((size_t)n > ONNX_FOLD_MAX_BYTES / 8 / (size_t)rank)
        return onnx_unsupported(cx, np, "the constant input has %" PRId64
                                " elements, too many to fold", n);
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        nnz += glow_load_f64(t->type.dtype, t->data, (size_t)i) != 0;
    int64_t *out = GLOW_NEW_ARRAY(&cx->scratch, int64_t, rank * nnz + 1);
    int64_t strides[GLOW_MAX_DIMS];
    glow_type_strides(&t->type, strides);
    for (int64_t i = 0, j = 0; i < n; i++) {
        if (glow_load_f64(t->type.dtype, t->data, (size_t)i) == 0)
            continue;
        for (int d = 0; d < t->type.rank; d++)
            out[d * nnz + j] = (i / strides[d]) % t->type.dims[d];
        if (t->type.rank == 0)
            out[j] = 0;
        j++;
    }
    int64_t dims[2] = { rank, nnz };
    glow_type ot = glow_type_make(GLOW_I64, 2, dims);
    return onnx_set_output(cx, np, 0, onnx_constant(cx, onnx_node_name(np), &ot, out));
}

/* --- Unique of a constant --- */

glow_status load_unique(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    if (onnx_input_is_computed(cx, np, 0))
        return load_unique_dyn(cx, np, opset, kind);
    const glow_tensor *t;
    GLOW_TRY(need_const(cx, np, 0, "X", &t));
    const glow_type *tt = &t->type;
    glow_slices u = { t, 1, glow_type_numel(tt), 1 };
    int axis = -1;
    if (onnx_attr(np, "axis")) {
        GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), tt->rank, &axis));
        u.len = tt->dims[axis];
        for (int d = 0; d < tt->rank; d++) {
            if (d < axis)
                u.outer *= tt->dims[d];
            else if (d > axis)
                u.inner *= tt->dims[d];
        }
    }
    if (glow_tensor_bytes(t) > ONNX_FOLD_MAX_BYTES || (size_t)u.len > ONNX_FOLD_MAX_BYTES / 32)
        return onnx_unsupported(cx, np, "the constant input is too large to fold");
    bool sorted = onnx_attr_int(np, "sorted", 1) != 0;
    glow_arena *a = &cx->scratch;
    int64_t m = u.len > 0 ? u.len : 1;
    int64_t *ord = GLOW_NEW_ARRAY(a, int64_t, m), *tmp = GLOW_NEW_ARRAY(a, int64_t, m);
    int64_t *inv = GLOW_NEW_ARRAY(a, int64_t, m), *first = GLOW_NEW_ARRAY(a, int64_t, m);
    int64_t *count = GLOW_NEW_ARRAY(a, int64_t, m);
    int64_t ng = glow_unique_groups(&u, sorted, ord, tmp, first, count, inv);
    if (ng < 0)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "out of memory folding Unique");
    /* Y: the unique slices in output order. */
    glow_type yt = *tt;
    if (axis < 0) {
        yt = glow_type_make(tt->dtype, 1, &ng);
    } else {
        yt.dims[axis] = ng;
    }
    size_t es = glow_dtype_size(tt->dtype);
    uint8_t *y = glow_arena_try_alloc(a, glow_type_bytes(&yt) + 1);
    if (!y)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "out of memory folding Unique");
    for (int64_t o = 0; o < u.outer; o++)
        for (int64_t g = 0; g < ng; g++)
            memcpy(y + (size_t)((o * ng + g) * u.inner) * es,
                   (const uint8_t *)t->data + (size_t)((o * u.len + first[g]) * u.inner) * es,
                   (size_t)u.inner * es);
    const char *name = onnx_node_name(np);
    GLOW_TRY(onnx_set_output(cx, np, 0, onnx_constant(cx, name, &yt, y)));
    glow_type gt = glow_type_make(GLOW_I64, 1, &ng), nt = glow_type_make(GLOW_I64, 1, &u.len);
    const struct { glow_type *t; int64_t *v; const char *sfx; } outs[3] = {
        { &gt, first, "indices" }, { &nt, inv, "inverse_indices" }, { &gt, count, "counts" } };
    for (int i = 0; i < 3; i++)
        if (onnx_has_output(np, i + 1))
            GLOW_TRY(onnx_set_output(cx, np, i + 1, onnx_constant(cx, glow_arena_printf(
                cx->arena, "%s/%s", name, outs[i].sfx), outs[i].t, outs[i].v)));
    return GLOW_OK;
}

/* TensorScatter (opset 24), the KV-cache update: update's slices along `axis` are written into
 * past_cache at write_indices[b] + s (mod the cache length in circular mode). It becomes one
 * SCATTER_ELEMENTS whose indices are those positions broadcast to update's shape. */
glow_status load_tensor_scatter(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    glow_value past, upd;
    GLOW_TRY(onnx_input(cx, np, 0, &past));
    GLOW_TRY(onnx_input(cx, np, 1, &upd));
    const glow_type *pt = glow_value_type(past), *ut = glow_value_type(upd);
    int r = pt->rank, axis;
    GLOW_TRY(onnx_attr_check(cx, np, "axis", 2));
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", -2), r, &axis));
    if (r < 2 || axis == 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %d of a rank-%d cache (the sequence "
                         "axis cannot be the batch axis)", axis, r);
    const char *mode = onnx_attr_str(cx, np, "mode", "linear");
    bool circular = !strcmp(mode, "circular");
    if (!circular && strcmp(mode, "linear") != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' is not valid", mode);
    bool same = ut->rank == r && ut->dtype == pt->dtype && ut->dims[axis] <= pt->dims[axis];
    for (int i = 0; same && i < r; i++)
        same = i == axis || ut->dims[i] == pt->dims[i];
    if (!same) {
        char ub[96], pb[96];
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "update %s does not fit past_cache %s "
                         "on axis %d", glow_type_str(ut, ub, sizeof ub),
                         glow_type_str(pt, pb, sizeof pb), axis);
    }
    int64_t seq = ut->dims[axis], len = pt->dims[axis];
    /* Positions 0..seq-1 along the axis, [1, ..., seq, ..., 1]. */
    int64_t *ar = seq <= (1 << 26) ? glow_arena_try_alloc(&cx->scratch, sizeof(int64_t) *
                                                          (size_t)(seq > 0 ? seq : 1))
                                   : NULL;
    if (!ar)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "sequence length %lld is too large",
                         (long long)seq);
    for (int64_t s = 0; s < seq; s++)
        ar[s] = s;
    glow_type at = glow_type_make(GLOW_I64, r, ut->dims);
    for (int i = 0; i < r; i++)
        at.dims[i] = i == axis ? seq : 1;
    glow_value pos = onnx_constant(cx, glow_arena_printf(cx->arena, "%s/positions",
                                                         onnx_node_name(np)), &at, ar);
    if (onnx_has_input(np, 2)) {
        glow_value wi;
        GLOW_TRY(onnx_input(cx, np, 2, &wi));
        const glow_type *wt = glow_value_type(wi);
        if (wt->rank != 1 || wt->dims[0] != pt->dims[0] || !glow_dtype_is_int(wt->dtype))
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "write_indices must be integer "
                             "[batch] = [%lld]", (long long)pt->dims[0]);
        if (wt->dtype != GLOW_I64)
            GLOW_TRY(onnx_cast(cx, np, wi, GLOW_I64, &wi));
        int64_t bd[GLOW_MAX_DIMS];
        for (int i = 0; i < r; i++)
            bd[i] = i == 0 ? pt->dims[0] : 1;
        GLOW_TRY(onnx_reshape(cx, np, wi, r, bd, &wi));
        glow_value sum[2] = { wi, pos };
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, sum, 2, NULL, 0, &pos));
    }
    if (circular && len > 0) {
        glow_value m[2] = { pos, onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/length",
                                                                   onnx_node_name(np)),
                                             GLOW_I64, (double)len) };
        glow_attr fm = GLOW_AI(FMOD, 0);
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MOD, m, 2, &fm, 1, &pos));
    }
    GLOW_TRY(onnx_broadcast_to(cx, np, pos, r, ut->dims, &pos));
    glow_value ins[3] = { past, pos, upd };
    glow_attr attrs[2] = { GLOW_AI(AXIS, axis), GLOW_ASTR(REDUCTION, "none") };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_SCATTER_ELEMENTS, ins, 3, attrs, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}
