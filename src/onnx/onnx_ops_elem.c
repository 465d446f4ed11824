// onnx_ops_elem.c - Loaders for ONNX binary, variadic, logical, comparison and cast ops.
//
// Every elementwise node of the graph takes identically shaped operands, so the loaders make
// ONNX's NumPy broadcasting explicit through onnx_build_elemwise. Opsets before 7 had no
// implicit broadcasting but a `broadcast` flag with an optional `axis`; those are rewritten
// into the NumPy form by reshaping the second operand.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Opsets < 7: with broadcast=1, B's shape matches a contiguous run of A's dims starting at
 * `axis` (or A's trailing dims when axis is absent). Reshaping B to A's rank with 1s around
 * that run turns the rule into NumPy broadcasting. */
static glow_status legacy_broadcast(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                    glow_value *ins)
{
    if (opset >= 7 || onnx_attr_int(np, "broadcast", 0) == 0 || !onnx_attr(np, "axis"))
        return GLOW_OK;
    const glow_type *ta = glow_value_type(ins[0]), *tb = glow_value_type(ins[1]);
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), ta->rank, &axis));
    if (axis + tb->rank > ta->rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                         "legacy broadcast: B of rank %d does not fit A of rank %d at axis %d",
                         tb->rank, ta->rank, axis);
    int64_t dims[GLOW_MAX_DIMS];
    for (int i = 0; i < ta->rank; i++)
        dims[i] = 1;
    for (int i = 0; i < tb->rank; i++) {
        if (tb->dims[i] != 1 && tb->dims[i] != ta->dims[axis + i]) {
            char a[96], b[96];
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                             "legacy broadcast: B %s does not match A %s at axis %d",
                             glow_type_str(tb, b, sizeof b), glow_type_str(ta, a, sizeof a),
                             axis);
        }
        dims[axis + i] = tb->dims[i];
    }
    if (ta->rank == tb->rank)
        return GLOW_OK;
    return onnx_reshape(cx, np, ins[1], ta->rank, dims, &ins[1]);
}

/* A two-operand elementwise op with NumPy broadcasting. */
static glow_status binary(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind,
                          const glow_attr *attrs, int nattr)
{
    glow_value ins[2], out;
    GLOW_TRY(onnx_check_inputs(cx, np, 2, 2));
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    GLOW_TRY(legacy_broadcast(cx, np, opset, ins));
    GLOW_TRY(onnx_build_elemwise(cx, np, kind, ins, 2, attrs, nattr, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* Add, Sub, Mul, Div, Pow, And, ... (the row's kind): two operands, broadcast. Pow's exponent
 * keeps its own dtype (opset 12+ allows it); the result has the base's. */
glow_status load_binary(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return binary(cx, np, opset, kind, NULL, 0);
}

glow_status load_mod(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "fmod", 2));
    int64_t fmod_ = onnx_attr_int(np, "fmod", 0);
    if (fmod_ != 0 && fmod_ != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "fmod must be 0 or 1, not %lld",
                         (long long)fmod_);
    glow_value a;
    GLOW_TRY(onnx_input(cx, np, 0, &a));
    /* The spec leaves integer-style (sign of divisor) mod undefined for floats. */
    if (!fmod_ && glow_dtype_is_float(glow_value_type(a)->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "fmod=0 is not defined for %s inputs",
                         glow_dtype_name(glow_value_type(a)->dtype));
    glow_attr at = GLOW_AI(FMOD, fmod_);
    return binary(cx, np, opset, NK_MOD, &at, 1);
}

glow_status load_bitshift(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "direction", 3));
    const char *dir = onnx_attr_str(cx, np, "direction", NULL);
    if (!dir)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'direction' is required");
    if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                         "direction must be \"LEFT\" or \"RIGHT\", not \"%s\"", dir);
    glow_attr at = GLOW_ASTR(DIRECTION, dir);
    return binary(cx, np, opset, NK_BITSHIFT, &at, 1);
}

/* Max, Min, Sum, Mean take 1..N inputs; a chain of binary nodes computes them (NumPy
 * broadcasting composes, so pairwise is the same as all at once). */
static glow_status variadic(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                            glow_value *out)
{
    int n = onnx_num_inputs(np);
    if (n < 1)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects at least one input");
    glow_value acc;
    GLOW_TRY(onnx_input(cx, np, 0, &acc));
    for (int i = 1; i < n; i++) {
        glow_value ins[2] = { acc };
        GLOW_TRY(onnx_input(cx, np, i, &ins[1]));
        GLOW_TRY(onnx_build_elemwise(cx, np, kind, ins, 2, NULL, 0, &acc));
    }
    *out = acc;
    return GLOW_OK;
}

/* Max, Min and Sum (the row's kind: MAX, MIN, ADD) over one or more inputs. */
glow_status load_variadic(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind)
{
    glow_value out;
    GLOW_TRY(variadic(cx, np, kind, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* Mean = Sum / N, divided in the inputs' dtype as the spec's function body does. */
glow_status load_mean(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value sum, out;
    GLOW_TRY(variadic(cx, np, NK_ADD, &sum));
    int n = onnx_num_inputs(np);
    if (n == 1)
        return onnx_set_output(cx, np, 0, sum);
    const char *name = glow_arena_printf(cx->arena, "%s/count", onnx_node_name(np));
    glow_value ins[2] = { sum, onnx_scalar(cx, name, glow_value_type(sum)->dtype, n) };
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_DIV, ins, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* PRelu: the slope broadcasts to X's shape (unidirectional). Opsets < 7 gave per-channel
 * slopes as a 1-D [C] tensor, meant for NCHW inputs: it becomes [C, 1, ..., 1]. */
glow_status load_prelu(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[2], out;
    GLOW_TRY(onnx_check_inputs(cx, np, 2, 2));
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    const glow_type *tx = glow_value_type(ins[0]), *ts = glow_value_type(ins[1]);
    if (opset < 7 && ts->rank == 1 && ts->dims[0] > 1 && tx->rank > 2 &&
        tx->dims[1] == ts->dims[0]) {
        int64_t dims[GLOW_MAX_DIMS];
        dims[0] = ts->dims[0];
        for (int i = 1; i < tx->rank - 1; i++)
            dims[i] = 1;
        GLOW_TRY(onnx_reshape(cx, np, ins[1], tx->rank - 1, dims, &ins[1]));
    }
    int rout;
    int64_t dims[GLOW_MAX_DIMS];
    ts = glow_value_type(ins[1]);
    if (!glow_broadcast_shapes(tx->rank, tx->dims, ts->rank, ts->dims, &rout, dims) ||
        rout != tx->rank || memcmp(dims, tx->dims, sizeof(int64_t) * (size_t)rout) != 0) {
        char a[96], b[96];
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                         "slope %s does not broadcast to the input's shape %s",
                         glow_type_str(ts, b, sizeof b), glow_type_str(tx, a, sizeof a));
    }
    GLOW_TRY(onnx_broadcast_to(cx, np, ins[1], tx->rank, tx->dims, &ins[1]));
    GLOW_TRY(onnx_build(cx, np, NK_PRELU, ins, 2, NULL, 0, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_where(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[3], out;
    GLOW_TRY(onnx_check_inputs(cx, np, 3, 3));
    for (int i = 0; i < 3; i++)
        GLOW_TRY(onnx_input(cx, np, i, &ins[i]));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_WHERE, ins, 3, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* --- Cast --- */

/* TensorProto.DataType names, for opset 1's string `to` and for messages. */
static const char *const onnx_type_names[] = {
    [0] = "UNDEFINED", [1] = "FLOAT", [2] = "UINT8", [3] = "INT8", [4] = "UINT16",
    [5] = "INT16", [6] = "INT32", [7] = "INT64", [8] = "STRING", [9] = "BOOL",
    [10] = "FLOAT16", [11] = "DOUBLE", [12] = "UINT32", [13] = "UINT64", [14] = "COMPLEX64",
    [15] = "COMPLEX128", [16] = "BFLOAT16", [17] = "FLOAT8E4M3FN", [18] = "FLOAT8E4M3FNUZ",
    [19] = "FLOAT8E5M2", [20] = "FLOAT8E5M2FNUZ", [21] = "UINT4", [22] = "INT4",
    [23] = "FLOAT4E2M1", [24] = "FLOAT8E8M0", [25] = "UINT2", [26] = "INT2",
};
#define NTYPE_NAMES ((int64_t)(sizeof onnx_type_names / sizeof onnx_type_names[0]))

static const char *onnx_type_name(int64_t code)
{
    return code >= 0 && code < NTYPE_NAMES && onnx_type_names[code] ? onnx_type_names[code]
                                                                    : "unknown";
}

/* Binds output 0 to x cast to `to` (x itself when it already has that dtype), with the
 * node's `saturate` (opset 19+, float8 targets) and `round_mode` (opset 25, e8m0). */
static glow_status cast_to(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, int64_t code)
{
    glow_dtype to;
    if (!onnx_dtype_of_code(code, &to))
        return onnx_unsupported(cx, np, "cast to element type %s (%lld)", onnx_type_name(code),
                                (long long)code);
    GLOW_TRY(onnx_attr_check(cx, np, "saturate", 2));
    GLOW_TRY(onnx_attr_check(cx, np, "round_mode", 3));
    bool saturate = onnx_attr_int(np, "saturate", 1) != 0;
    const char *round = onnx_attr_str(cx, np, "round_mode", "up");
    if (strcmp(round, "up") != 0 && strcmp(round, "down") != 0 && strcmp(round, "nearest") != 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "round_mode \"%s\" is not up, down or "
                         "nearest", round);
    glow_value out = x;
    if (glow_value_type(x)->dtype != to)
        GLOW_TRY(onnx_cast_mode(cx, np, x, to, saturate, round, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_cast(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_check_inputs(cx, np, 1, 1));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const Onnx__AttributeProto *to = onnx_attr(np, "to");
    if (!to)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'to' is required");
    if (to->has_s || (to->has_type && to->type == 3)) {
        /* Opset 1 spelled the target as a string, e.g. "FLOAT". */
        const char *name = onnx_attr_str(cx, np, "to", "");
        for (int64_t c = 1; c < NTYPE_NAMES; c++)
            if (strcmp(name, onnx_type_names[c]) == 0)
                return cast_to(cx, np, x, c);
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'to' names no element type: \"%s\"", name);
    }
    GLOW_TRY(onnx_attr_check(cx, np, "to", 2));
    return cast_to(cx, np, x, onnx_attr_int(np, "to", 0));
}

glow_status load_cast_like(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, like;
    GLOW_TRY(onnx_check_inputs(cx, np, 2, 2));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &like));
    return cast_to(cx, np, x, glow_dtype_to_onnx(glow_value_type(like)->dtype));
}

/* BitCast (opset 26) reinterprets bits between kinds of one width. A constant is copied
 * byte for byte; between integer kinds (and bool -> 8-bit) a CAST is the same thing, since
 * integer casts wrap modulo 2^bits and bool holds 0 or 1; anything else is a REINTERPRET (a
 * view, no copy), except to bool, whose bytes must be 0 or 1. */
glow_status load_bitcast(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_check_inputs(cx, np, 1, 1));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const Onnx__AttributeProto *to_attr = onnx_attr(np, "to");
    if (!to_attr)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'to' is required");
    GLOW_TRY(onnx_attr_check(cx, np, "to", 2));
    int64_t code = onnx_attr_int(np, "to", 0);
    glow_dtype to;
    if (!onnx_dtype_of_code(code, &to))
        return onnx_unsupported(cx, np, "bitcast to element type %s (%lld)",
                                onnx_type_name(code), (long long)code);
    const glow_type *xt = glow_value_type(x);
    if (glow_dtype_size(xt->dtype) != glow_dtype_size(to))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'to' = %s is not as wide as the input's %s",
                         glow_dtype_name(to), glow_dtype_name(xt->dtype));
    if (xt->dtype == to)
        return onnx_set_output(cx, np, 0, x);
    if (glow_value_is_constant(x)) {
        glow_type t = *xt;
        t.dtype = to;
        glow_value c = onnx_constant(cx, onnx_node_name(np), &t, x.node->payload.data);
        return onnx_set_output(cx, np, 0, c);
    }
    bool int_like_x = glow_dtype_is_int(xt->dtype) || xt->dtype == GLOW_BOOL;
    if (int_like_x && glow_dtype_is_int(to))
        return cast_to(cx, np, x, code);
    if (to == GLOW_BOOL)
        return onnx_unsupported(cx, np, "bitcast of a computed %s value to bool",
                                glow_dtype_name(xt->dtype));
    glow_type t = glow_type_make(to, xt->rank, xt->dims);
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_REINTERPRET, &x, 1, NULL, 0, &t, 1, &y));
    return onnx_set_output(cx, np, 0, y);
}
