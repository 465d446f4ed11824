// import_bnd.c - Bounded values (docs/dynamic-shapes.md) flowing into the ops that keep their
// compact layout: elementwise ops, Cast, Gather, Concat, and Slice / Squeeze / Unsqueeze /
// Reshape / Flatten / Transpose off the dynamic axis. The result carries the operand's count,
// so a detection model's Gather of boxes by the NonMaxSuppression indices, and the outputs
// after it, keep their actual extent. Every other consumer is refused with one line.
//
// A bounded value of bound type D with dynamic axis a and run-time count c holds its actual
// elements compactly: the first c * numel(D) / D[a] elements of the buffer, in row-major order
// of the actual shape. The consumers run on the bound as on any static tensor, so a consumer
// may carry the count only when, run on the bound, it writes the actual result compactly too:
// - a positionwise op (same shape in and out, other operands scalars) maps each element to the
//   element at the same position, whatever the axis;
// - any other op must see the dynamic axis "leading" (all dims before it 1, so the compact
//   prefix is the first c rows of the bound), keep it leading, and compute each row of its
//   result from the same row of its operand (it acts across the other axes only).
// onnx_input asks onnx_bounded_input whether the op reads a bounded input at that position and
// notes it; onnx_set_output hands the result to onnx_bounded_output, which checks the layout
// with the real types and binds the result with the count.
#include <string.h>

#include "onnx/onnx_internal.h"

typedef enum {
    BND_ELEM,     /* elementwise with NumPy broadcasting */
    BND_GATHER,   /* Gather: bounded data off the axis, or bounded indices */
    BND_CONCAT,   /* Concat of bounded operands sharing the count, off the dynamic axis */
    BND_SLICE,    /* Slice leaving the dynamic axis whole */
    BND_RESHAPE,  /* Reshape, Flatten, Squeeze, Unsqueeze: the same buffer, new dims */
    BND_TRANSPOSE,
    BND_GATHER_ND, /* GatherND by bounded indices whose dynamic axis is not the tuple axis */
} bnd_rule;

#define ALL 0xffffffffu

/* Which ops take a bounded value, at which inputs (bit k: input k), and whether a zero padding
 * stays zero through them (`keeps_zero`: Gather reads indices in the padding). */
static const struct {
    const char *op;
    unsigned inputs;
    bnd_rule rule;
    bool keeps_zero;
} flows[] = {
    { "Identity", 1, BND_ELEM, true }, { "Cast", 1, BND_ELEM, true },
    { "Neg", 1, BND_ELEM, false }, { "Abs", 1, BND_ELEM, false },
    { "Relu", 1, BND_ELEM, false }, { "LeakyRelu", 1, BND_ELEM, false },
    { "Sigmoid", 1, BND_ELEM, false }, { "Tanh", 1, BND_ELEM, false },
    { "Exp", 1, BND_ELEM, false }, { "Log", 1, BND_ELEM, false },
    { "Sqrt", 1, BND_ELEM, false }, { "Reciprocal", 1, BND_ELEM, false },
    { "Floor", 1, BND_ELEM, false }, { "Ceil", 1, BND_ELEM, false },
    { "Round", 1, BND_ELEM, false }, { "Sign", 1, BND_ELEM, false },
    { "Not", 1, BND_ELEM, false }, { "Erf", 1, BND_ELEM, false },
    { "IsNaN", 1, BND_ELEM, false }, { "IsInf", 1, BND_ELEM, false },
    { "Clip", 1, BND_ELEM, false }, { "BitwiseNot", 1, BND_ELEM, false },
    { "Add", 3, BND_ELEM, false }, { "Sub", 3, BND_ELEM, false },
    { "Mul", 3, BND_ELEM, false }, { "Div", 3, BND_ELEM, false },
    { "Pow", 3, BND_ELEM, false }, { "Mod", 3, BND_ELEM, false },
    { "Equal", 3, BND_ELEM, false }, { "Less", 3, BND_ELEM, false },
    { "Greater", 3, BND_ELEM, false }, { "LessOrEqual", 3, BND_ELEM, false },
    { "GreaterOrEqual", 3, BND_ELEM, false }, { "And", 3, BND_ELEM, false },
    { "Or", 3, BND_ELEM, false }, { "Xor", 3, BND_ELEM, false },
    { "BitShift", 1, BND_ELEM, false }, { "BitwiseAnd", 3, BND_ELEM, false },
    { "BitwiseOr", 3, BND_ELEM, false }, { "BitwiseXor", 3, BND_ELEM, false },
    { "Where", 7, BND_ELEM, false }, { "Min", ALL, BND_ELEM, false },
    { "Max", ALL, BND_ELEM, false }, { "Sum", ALL, BND_ELEM, false },
    { "Mean", ALL, BND_ELEM, false },
    { "Gather", 3, BND_GATHER, true }, { "GatherND", 2, BND_GATHER_ND, false },
    { "Concat", ALL, BND_CONCAT, true },
    { "Slice", 1, BND_SLICE, true }, { "Reshape", 1, BND_RESHAPE, true },
    { "Flatten", 1, BND_RESHAPE, true }, { "Squeeze", 1, BND_RESHAPE, true },
    { "Unsqueeze", 1, BND_RESHAPE, true }, { "Transpose", 1, BND_TRANSPOSE, true },
};

static int find_flow(const Onnx__NodeProto *np)
{
    for (size_t k = 0; k < sizeof(flows) / sizeof(flows[0]); k++)
        if (np->op_type && strcmp(np->op_type, flows[k].op) == 0)
            return (int)k;
    return -1;
}

/* The one-line refusal: the input, the node whose count it carries, and why. */
static glow_status refuse(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const onnx_binding *b,
                          const char *why)
{
    const glow_node *src = b->count.node;
    return onnx_unsupported(cx, np, "input %d '%s' has a data-dependent shape (a result of "
                            "%s '%s'); %s", i, np->input[i], glow_node_kind_name(src->kind),
                            src->name, why);
}

static int64_t dims_prod(const glow_type *t, int from, int to)
{
    int64_t p = 1;
    for (int k = from; k < to; k++)
        p *= t->dims[k];
    return p;
}

/* All dims before `axis` are 1: the compact prefix is the first rows along the axis. */
static bool leading(const glow_type *t, int axis)
{
    return dims_prod(t, 0, axis) == 1;
}

/* idx with the elements past the actual extent replaced by 0, a valid index of any non-empty
 * axis: a padding that went through arithmetic may hold anything, and Gather would read it. */
static glow_status zero_padding(onnx_ctx *cx, const Onnx__NodeProto *np, const onnx_binding *b,
                                glow_value *out)
{
    const glow_type *t = glow_value_type(b->v);
    int a = b->count_axis;
    /* Position p along the axis (leading axis) or in the buffer (any other) is actual when
     * p < count * step, step being the elements per row the compact prefix has. */
    bool lead = leading(t, a);
    int64_t n = lead ? t->dims[a] : glow_type_numel(t);
    int64_t step = lead ? 1 : (t->dims[a] ? glow_type_numel(t) / t->dims[a] : 0);
    if (n > (int64_t)(ONNX_FOLD_MAX_BYTES / sizeof(int64_t)))
        return refuse(cx, np, 1, b, "its padding would need a mask larger than glowc builds");
    int64_t *pos = GLOW_NEW_ARRAY(&cx->scratch, int64_t, (size_t)(n ? n : 1));
    for (int64_t k = 0; k < n; k++)
        pos[k] = k;
    int64_t pdims[GLOW_MAX_DIMS];
    for (int k = 0; k < t->rank; k++)
        pdims[k] = lead ? (k == a ? t->dims[a] : 1) : t->dims[k];
    glow_type pt = glow_type_make(GLOW_I64, t->rank, pdims);
    glow_value ops[3] = { b->count, onnx_sub_scalar(cx, np, "row_elems", GLOW_I64, (double)step) };
    glow_value limit, mask, idx = b->v;
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, ops, 2, NULL, 0, &limit));
    ops[0] = onnx_constant(cx, onnx_sub_name(cx, np, "positions"), &pt, pos);
    ops[1] = limit;
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_LESS, ops, 2, NULL, 0, &mask));
    ops[0] = mask;
    ops[1] = idx;
    ops[2] = onnx_sub_scalar(cx, np, "pad_index", t->dtype, 0);
    return onnx_build_elemwise(cx, np, NK_WHERE, ops, 3, NULL, 0, out);
}

/* b's value with its actual elements moved from the compact prefix to their places in the
 * bound ("padded" layout), for an op that will make the dynamic axis leading (a Transpose or
 * Gather of NonZero's [rank, K] result): then its result's prefix is compact again. The element
 * at bound position (pre, j, post) sits at count * pre * inner + j * inner + post in the compact
 * buffer (inner: elements per row, pre: the flat index over the dims before the axis), always
 * inside the buffer as count <= bound; padding positions read some element (dirty). */
static glow_status relayout(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                            const onnx_binding *b, glow_value *out)
{
    const glow_type *t = glow_value_type(b->v);
    int a = b->count_axis, r = t->rank;
    int64_t n = glow_type_numel(t), npre = dims_prod(t, 0, a), nat = dims_prod(t, a, r);
    int64_t inner = dims_prod(t, a + 1, r);
    /* `pre` varies over the dims before the axis only, `at` over the others: two small
     * constants that broadcast to the bound's shape. */
    if (npre > (int64_t)(ONNX_FOLD_MAX_BYTES / sizeof(int64_t)) ||
        nat > (int64_t)(ONNX_FOLD_MAX_BYTES / sizeof(int64_t)))
        return refuse(cx, np, i, b, "moving its elements would need an index larger than glowc "
                      "builds");
    int64_t *pre = GLOW_NEW_ARRAY(&cx->scratch, int64_t, (size_t)(npre ? npre : 1));
    int64_t *at = GLOW_NEW_ARRAY(&cx->scratch, int64_t, (size_t)(nat ? nat : 1));
    for (int64_t p = 0; p < npre; p++)
        pre[p] = p * inner;
    for (int64_t p = 0; p < nat; p++)
        at[p] = p;
    int64_t pdims[GLOW_MAX_DIMS], adims[GLOW_MAX_DIMS];
    for (int k = 0; k < r; k++) {
        pdims[k] = k < a ? t->dims[k] : 1;
        adims[k] = k < a ? 1 : t->dims[k];
    }
    glow_type pt = glow_type_make(GLOW_I64, r, pdims), at_t = glow_type_make(GLOW_I64, r, adims);
    glow_value ops[2] = { onnx_constant(cx, onnx_sub_name(cx, np, "relayout_pre"), &pt, pre),
                          b->count };
    glow_value scaled, pos, flat;
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, ops, 2, NULL, 0, &scaled));
    ops[0] = scaled;
    ops[1] = onnx_constant(cx, onnx_sub_name(cx, np, "relayout_at"), &at_t, at);
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_ADD, ops, 2, NULL, 0, &pos));
    GLOW_TRY(onnx_reshape(cx, np, b->v, 1, &n, &flat));
    ops[0] = flat;
    ops[1] = pos;
    glow_attr ax = GLOW_AI(AXIS, 0);
    return onnx_build(cx, np, NK_GATHER, ops, 2, &ax, 1, NULL, 0, out);
}

glow_status onnx_bounded_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                               const onnx_binding *b, glow_value *v)
{
    int f = find_flow(np);
    if (f < 0 || i >= 32 || !(flows[f].inputs >> i & 1u))
        return refuse(cx, np, i, b, "glowc passes such values only to graph outputs and to the "
                      "ops that keep its rows apart (docs/dynamic-shapes.md)");
    /* An integer division by the padding's zeros would trap, or fail the run. */
    bool divides = strcmp(np->op_type, "Div") == 0 || strcmp(np->op_type, "Mod") == 0;
    if (divides && i == 1 && !glow_dtype_is_float(glow_value_type(b->v)->dtype))
        return refuse(cx, np, i, b, "an integer divisor's padding would divide by zero");
    if (cx->bnd_np != np) {
        cx->bnd_np = np;
        cx->bnd_inputs = cx->bnd_relaid = 0;
    }
    cx->bnd_inputs |= 1u << i;
    *v = b->v;
    bnd_rule rule = flows[f].rule;
    if ((rule == BND_GATHER || rule == BND_GATHER_ND) && i == 1 && b->pad_dirty)
        return zero_padding(cx, np, b, v);
    bool moves = rule == BND_SLICE || rule == BND_TRANSPOSE || (rule == BND_GATHER && i == 0);
    if (moves && !leading(glow_value_type(b->v), b->count_axis)) {
        cx->bnd_relaid |= 1u << i;
        GLOW_TRY(relayout(cx, np, i, b, v));
        cx->bnd_moved = *v;
    }
    return GLOW_OK;
}

/* The type of input k as the loader read it (a bounded input: its bound). */
static const glow_type *input_type(onnx_ctx *cx, const Onnx__NodeProto *np, int k)
{
    const onnx_binding *b = glow_strmap_get(&cx->values, np->input[k]);
    return b ? glow_value_type(b->v) : NULL;
}

/* Elementwise: every bounded operand's axis lands on the same result axis at its full bound;
 * then either all is positionwise (bounded operands of the result's shape, others scalars) or
 * the axis leads everywhere and the other operands do not vary along it. */
static const char *check_elem(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_type *o,
                              int *axis)
{
    int ro = o->rank, at = -1;
    bool positionwise = true, lead = true;
    for (int k = 0; k < onnx_num_inputs(np); k++) {
        if (!onnx_has_input(np, k))
            continue;
        const glow_type *t = input_type(cx, np, k);
        if (!t)
            return "glowc could not tell the type of another operand";
        if (!(cx->bnd_inputs >> k & 1u)) {
            positionwise = positionwise && glow_type_numel(t) == 1;
            continue;
        }
        const onnx_binding *b = glow_strmap_get(&cx->values, np->input[k]);
        int bk = b->count_axis + ro - t->rank;
        if (at >= 0 && bk != at)
            return "the operands' dynamic axes do not line up";
        at = bk;
        if (o->dims[at] != t->dims[b->count_axis])
            return "the result is broadcast along the dynamic axis";
        positionwise = positionwise && glow_type_same_shape(t, o);
        lead = lead && leading(t, b->count_axis);
    }
    *axis = at;
    if (positionwise)
        return NULL;
    if (!lead || !leading(o, at))
        return "its dynamic axis is not leading and another operand is not a scalar";
    for (int k = 0; k < onnx_num_inputs(np); k++) {
        if (!onnx_has_input(np, k) || (cx->bnd_inputs >> k & 1u))
            continue;
        const glow_type *t = input_type(cx, np, k);
        int ak = at - (ro - t->rank);   /* t is not NULL: the loop above returned otherwise */
        if (ak >= 0 && t->dims[ak] != 1)
            return "another operand has a static extent along the dynamic axis";
    }
    return NULL;
}

static const char *check_gather(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_type *o,
                                const onnx_binding *b, int *axis)
{
    const glow_type *dt = input_type(cx, np, 0), *it = input_type(cx, np, 1);
    if (!dt || !it)
        return "glowc could not tell the type of another operand";
    int ax = (int)onnx_attr_int(np, "axis", 0);
    if (ax < 0)
        ax += dt->rank;
    if ((cx->bnd_inputs & 3u) == 3u)
        return "Gather takes a bounded value as data or as indices, not both";
    if (cx->bnd_inputs & 2u) {
        /* The result is data[:ax] + indices + data[ax+1:]: compact when data[:ax] is 1. */
        if (!leading(dt, ax))
            return "the data has dims before the gathered axis";
        *axis = ax + b->count_axis;
        return NULL;
    }
    int a = b->count_axis;
    if (a == ax)
        return "Gather selects along the dynamic axis";
    *axis = a < ax ? a : a + it->rank - 1;
    if (!(leading(dt, a) || (cx->bnd_relaid & 1u)) || !leading(o, *axis))
        return "its dynamic axis is not leading";
    return NULL;
}

/* GatherND (batch_dims 0) by indices [..., K, ..., r]: the result is indices.shape[:-1] +
 * data.shape[r:], so the axis stays where it is, compact as long as it is not the tuple axis. */
static const char *check_gather_nd(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_type *o,
                                   const onnx_binding *b, int *axis)
{
    const glow_type *it = glow_value_type(b->v);
    if (onnx_attr_int(np, "batch_dims", 0) != 0)
        return "GatherND with batch_dims pairs the indices with the data along the axis";
    if (b->count_axis == it->rank - 1)
        return "the dynamic axis holds the index tuples";
    *axis = b->count_axis;
    return o->rank > *axis && o->dims[*axis] == it->dims[*axis] ? NULL
                                                                 : "the result lost the axis";
}

static const char *check_concat(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_type *o,
                                const onnx_binding *b, int *axis)
{
    int ax = (int)onnx_attr_int(np, "axis", 0);
    if (ax < 0)
        ax += o->rank;
    if (ax == b->count_axis)
        return "Concat joins along the dynamic axis";
    for (int k = 0; k < onnx_num_inputs(np); k++) {
        if (!(cx->bnd_inputs >> k & 1u))
            return "another operand has a static shape (its extent along the dynamic axis "
                   "would have to match a run-time count)";
        const onnx_binding *bk = glow_strmap_get(&cx->values, np->input[k]);
        if (bk->count_axis != b->count_axis || !leading(glow_value_type(bk->v), bk->count_axis))
            return "the operands' dynamic axes are not the same leading axis";
    }
    *axis = b->count_axis;
    return NULL;
}

static const char *check_layout(const Onnx__NodeProto *np, bnd_rule rule, const glow_type *o,
                                glow_value v, const onnx_binding *b, bool relaid,
                                glow_value moved, int *axis)
{
    const glow_type *t = glow_value_type(b->v);
    int a = b->count_axis;
    if (!leading(t, a) && !relaid)
        return "its dynamic axis is not leading";
    if (rule == BND_SLICE) {
        glow_value src = relaid ? moved : b->v;
        if (v.node != src.node || v.res != src.res) {
            const glow_node *n = v.node;
            int ns = 0, ne = 0, np_ = 0;
            const int64_t *st = n->kind == NK_SLICE ? glow_node_ints(n, GA_STARTS, &ns) : NULL;
            const int64_t *en = st ? glow_node_ints(n, GA_ENDS, &ne) : NULL;
            const int64_t *sp = st ? glow_node_ints(n, GA_STEPS, &np_) : NULL;
            if (!st || n->ins[0].node != src.node || n->ins[0].res != src.res || ns <= a ||
                ne <= a || np_ <= a)
                return "glowc could not tell what it does to the dynamic axis";
            if (st[a] != 0 || en[a] != t->dims[a] || sp[a] != 1)
                return "Slice cuts the dynamic axis";
        }
        *axis = a;
        return leading(o, a) ? NULL : "its dynamic axis would not stay leading";
    }
    if (rule == BND_TRANSPOSE) {
        const int64_t *perm;
        int n = onnx_attr_ints(np, "perm", &perm);
        *axis = -1;
        for (int k = 0; k < o->rank; k++)
            if ((n < 0 ? o->rank - 1 - k : perm[k]) == a)
                *axis = k;
        if (*axis < 0 || !leading(o, *axis))
            return "its dynamic axis would not stay leading";
        return NULL;
    }
    /* The same buffer with new dims: some axis of the result must lead, have the bound, and
     * have the same elements per row behind it. */
    int64_t inner = dims_prod(t, a + 1, t->rank);
    for (int k = 0; k < o->rank; k++) {
        if (!leading(o, k))
            break;
        if (o->dims[k] == t->dims[a] && dims_prod(o, k + 1, o->rank) == inner) {
            *axis = k;
            return NULL;
        }
    }
    return "the new shape splits or merges the dynamic axis";
}

glow_status onnx_bounded_output(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value v)
{
    int f = find_flow(np);
    int first = -1;
    const onnx_binding *b = NULL;
    for (int k = 0; k < 32 && f >= 0; k++) {
        if (!(cx->bnd_inputs >> k & 1u))
            continue;
        const onnx_binding *bk = glow_strmap_get(&cx->values, np->input[k]);
        if (!b) {
            b = bk, first = k;
        } else if (bk->count.node != b->count.node || bk->count.res != b->count.res) {
            return refuse(cx, np, k, bk, "another operand has a different data-dependent "
                          "extent");
        }
    }
    if (!b)
        return GLOW_OK;   /* not reached: only called with a bounded input noted */
    if (i != 0 || onnx_seq_of(v))
        return refuse(cx, np, first, b, "glowc carries the extent to a single tensor result");
    const glow_type *o = glow_value_type(v);
    int axis = -1;
    const char *why;
    switch (flows[f].rule) {
    case BND_ELEM:
        why = check_elem(cx, np, o, &axis);
        break;
    case BND_GATHER:
        why = check_gather(cx, np, o, b, &axis);
        break;
    case BND_CONCAT:
        why = check_concat(cx, np, o, b, &axis);
        break;
    case BND_GATHER_ND:
        why = check_gather_nd(cx, np, o, b, &axis);
        break;
    default:
        why = check_layout(np, flows[f].rule, o, v, b, cx->bnd_relaid & 1u, cx->bnd_moved,
                           &axis);
        break;
    }
    if (!why && (axis < 0 || axis >= o->rank))
        why = "glowc could not place its dynamic axis in the result";
    if (why)
        return refuse(cx, np, first, b, why);
    bool dirty = !flows[f].keeps_zero || cx->bnd_relaid ||
                 (flows[f].rule == BND_GATHER && (cx->bnd_inputs & 2u));
    for (int k = 0; k < 32; k++) {
        const onnx_binding *bk = cx->bnd_inputs >> k & 1u
                                     ? glow_strmap_get(&cx->values, np->input[k]) : NULL;
        dirty = dirty || (bk && bk->pad_dirty);
    }
    onnx_binding *r = GLOW_NEW(cx->arena, onnx_binding);
    r->v = v;
    r->count = b->count;
    r->count_axis = axis;
    r->pad_dirty = dirty;
    glow_strmap_put(&cx->values, np->output[i], r);
    return GLOW_OK;
}
