// import_dyn.c - Importing ops whose result shapes depend on the data: NonZero, Unique,
// Compress and TopK on values computed at run time, and NonMaxSuppression
// (docs/dynamic-shapes.md).
//
// Each becomes one node typed with an upper bound on its results plus an i64 count result.
// The ONNX value is bound to the bounded result together with its count (onnx_binding.count);
// a graph output of such a value gets a hidden count placeholder that the runtime reads to
// hand out the actual extent. Consumers that keep the compact layout carry the count on
// (import_bnd.c); any other is refused by onnx_input with a message, so a bounded value never
// flows into a node that would read its padding as data.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

glow_status onnx_set_output_bounded(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                                    glow_value v, glow_value count, int axis)
{
    if (!onnx_has_output(np, i))
        return GLOW_OK;
    onnx_binding *b = GLOW_NEW(cx->arena, onnx_binding);
    b->v = v;
    b->count = count;
    b->count_axis = axis;
    glow_strmap_put(&cx->values, np->output[i], b);
    return GLOW_OK;
}

bool onnx_input_is_computed(onnx_ctx *cx, const Onnx__NodeProto *np, int i)
{
    glow_value v;
    if (!onnx_has_input(np, i))
        return false;
    const onnx_binding *b = glow_strmap_get(&cx->values, np->input[i]);
    if (!b || b->poisoned || b->count.node)
        return false;   /* the constant-only loader reports it */
    if (onnx_input(cx, np, i, &v) != GLOW_OK)
        return false;
    return !glow_value_is_constant(v);
}

/* x flattened to one dimension when the op has no axis attribute; the axis otherwise. */
static glow_status axis_or_flat(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value *x,
                                int *axis)
{
    const glow_type *t = glow_value_type(*x);
    if (onnx_attr(np, "axis")) {
        GLOW_TRY(onnx_attr_check(cx, np, "axis", 2));
        return onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), t->rank, axis);
    }
    int64_t n = glow_type_numel(t);
    *axis = 0;
    return onnx_reshape(cx, np, *x, 1, &n, x);
}

glow_status load_nonzero_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    glow_value x, out;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_build(cx, np, NK_NON_ZERO, &x, 1, NULL, 0, NULL, 0, &out));
    return onnx_set_output_bounded(cx, np, 0, out, glow_val(out.node, 1), 1);
}

glow_status load_compress_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    glow_value ins[2], out;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    int axis;
    GLOW_TRY(axis_or_flat(cx, np, &ins[0], &axis));
    glow_attr a = GLOW_AI(AXIS, axis);
    GLOW_TRY(onnx_build(cx, np, NK_COMPRESS, ins, 2, &a, 1, NULL, 0, &out));
    return onnx_set_output_bounded(cx, np, 0, out, glow_val(out.node, 1), axis);
}

/* Two UNIQUE nodes share the grouping work: k = 0 gives Y and the first indices, k = 1 the
 * inverse indices and the counts (a node has at most three results). Only the needed ones
 * are built. */
glow_status load_unique_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                            glow_node_kind kind)
{
    glow_value x, a, b;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    int axis;
    GLOW_TRY(axis_or_flat(cx, np, &x, &axis));
    GLOW_TRY(onnx_attr_check(cx, np, "sorted", 2));
    int64_t sorted = onnx_attr_int(np, "sorted", 1) != 0;
    if (onnx_has_output(np, 0) || onnx_has_output(np, 1)) {
        glow_attr at[3] = { GLOW_AI(AXIS, axis), GLOW_AI(SORTED, sorted), GLOW_AI(K, 0) };
        GLOW_TRY(onnx_build(cx, np, NK_UNIQUE, &x, 1, at, 3, NULL, 0, &a));
        glow_value count = glow_val(a.node, 2);
        GLOW_TRY(onnx_set_output_bounded(cx, np, 0, a, count, axis));
        GLOW_TRY(onnx_set_output_bounded(cx, np, 1, glow_val(a.node, 1), count, 0));
    }
    if (onnx_has_output(np, 2) || onnx_has_output(np, 3)) {
        glow_attr at[3] = { GLOW_AI(AXIS, axis), GLOW_AI(SORTED, sorted), GLOW_AI(K, 1) };
        GLOW_TRY(onnx_build(cx, np, NK_UNIQUE, &x, 1, at, 3, NULL, 0, &b));
        GLOW_TRY(onnx_set_output(cx, np, 2, b));
        GLOW_TRY(onnx_set_output_bounded(cx, np, 3, glow_val(b.node, 1), glow_val(b.node, 2),
                                         0));
    }
    return GLOW_OK;
}

/* An optional scalar input, or a constant `dflt` of kind t when absent. */
static glow_status scalar_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const char *what,
                                glow_dtype t, double dflt, glow_value *out)
{
    if (!onnx_has_input(np, i)) {
        *out = onnx_sub_scalar(cx, np, what, t, dflt);
        return GLOW_OK;
    }
    GLOW_TRY(onnx_input(cx, np, i, out));
    if (glow_type_numel(glow_value_type(*out)) != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d '%s' must hold one value", i,
                         what);
    return GLOW_OK;
}

/* NonMaxSuppression: the per-class limit bounds the result when it is a constant (else the box
 * count does); the thresholds and the limit are read at run time. */
glow_status load_nms(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    GLOW_TRY(onnx_check_inputs(cx, np, 2, 5));
    glow_value ins[5], out;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    const glow_type *bt = glow_value_type(ins[0]), *st = glow_value_type(ins[1]);
    if (bt->rank != 3 || bt->dims[2] != 4 || st->rank != 3 || st->dims[0] != bt->dims[0] ||
        st->dims[2] != bt->dims[1]) {
        char a[96], b[96];
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "boxes %s and scores %s must be "
                         "[batches, boxes, 4] and [batches, classes, boxes]",
                         glow_type_str(bt, a, sizeof a), glow_type_str(st, b, sizeof b));
    }
    if (!glow_dtype_is_float(bt->dtype) || st->dtype != bt->dtype)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "boxes and scores must be of one float "
                         "kind, not %s and %s", glow_dtype_name(bt->dtype),
                         glow_dtype_name(st->dtype));
    GLOW_TRY(scalar_input(cx, np, 2, "max_output_boxes_per_class", GLOW_I64, 0, &ins[2]));
    GLOW_TRY(scalar_input(cx, np, 3, "iou_threshold", GLOW_F32, 0, &ins[3]));
    GLOW_TRY(scalar_input(cx, np, 4, "score_threshold", GLOW_F32, -INFINITY, &ins[4]));
    int64_t bound = bt->dims[1], limit;
    const glow_node *m = ins[2].node;
    if (m->kind == NK_CONSTANT && glow_dtype_is_int(m->outs[0].dtype)) {
        limit = glow_load_i64(m->outs[0].dtype, m->payload.data, 0);
        bound = limit < 0 ? 0 : limit < bound ? limit : bound;
    }
    GLOW_TRY(onnx_attr_check(cx, np, "center_point_box", 2));
    int64_t center = onnx_attr_int(np, "center_point_box", 0);
    if (center != 0 && center != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "center_point_box = %lld must be 0 or 1",
                         (long long)center);
    glow_attr at[2] = { GLOW_ASTR(MODE, center ? "center" : "corner"), GLOW_AI(K, bound) };
    GLOW_TRY(onnx_build(cx, np, NK_NON_MAX_SUPPRESSION, ins, 5, at, 2, NULL, 0, &out));
    return onnx_set_output_bounded(cx, np, 0, out, glow_val(out.node, 1), 0);
}

/* TopK with K computed at run time: a TopK of the whole axis (sorted, so its first k are the
 * answer in either order), then FIRST_K of the values and of the indices. */
glow_status load_topk_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind)
{
    GLOW_TRY(onnx_check_inputs(cx, np, 2, 2));
    glow_value x, k, all, v[2];
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &k));
    const glow_type *tx = glow_value_type(x), *tk = glow_value_type(k);
    if (glow_type_numel(tk) != 1 || !glow_dtype_is_int(tk->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 1 ('K') must hold one integer");
    if (tx->rank < 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 0 is a scalar");
    int axis;
    GLOW_TRY(onnx_attr_check(cx, np, "axis", 2));
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", -1), tx->rank, &axis));
    int64_t largest = onnx_attr_int(np, "largest", 1) != 0;
    glow_attr a[4] = { GLOW_AI(AXIS, axis), GLOW_AI(K, tx->dims[axis]),
                       GLOW_AI(LARGEST, largest), GLOW_AI(SORTED, 1) };
    GLOW_TRY(onnx_build(cx, np, NK_TOPK, &x, 1, a, 4, NULL, 0, &all));
    if (tk->dtype != GLOW_I64)
        GLOW_TRY(onnx_cast(cx, np, k, GLOW_I64, &k));
    glow_attr fa = GLOW_AI(AXIS, axis);
    for (int i = 0; i < 2; i++) {
        glow_value ins[2] = { glow_val(all.node, (uint32_t)i), k };
        GLOW_TRY(onnx_build(cx, np, NK_FIRST_K, ins, 2, &fa, 1, NULL, 0, &v[i]));
        GLOW_TRY(onnx_set_output_bounded(cx, np, i, v[i], glow_val(v[i].node, 1), axis));
    }
    return GLOW_OK;
}
