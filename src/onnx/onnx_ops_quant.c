// onnx_ops_quant.c - Quantization ops (Quantize/DequantizeLinear, DynamicQuantizeLinear, QLinear*,
// *Integer) expressed with plain arithmetic, MatMul and Conv nodes.
//
// The graph has no quantized arithmetic of its own at import: these ops become casts and
// elementwise math on ordinary kinds, with the order of operations and the working precision
// chosen to reproduce ONNX's reference results exactly (integer outputs are compared bit for
// bit). Integer products are accumulated exactly: MatMul in i32 (as ONNX specifies), Conv in f64
// (the evaluator has no integer Conv; sums of 8-bit products are exact in f64's 53 bits).
#include <string.h>

#include "onnx/onnx_internal.h"

/* ONNX element kinds glowc has no dtype for, named for messages. */
static const char *onnx_code_name(int64_t code)
{
    switch (code) {
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 25: return "uint2";
    case 26: return "int2";
    default: return "unknown";
    }
}

/* The saturation range of an integer quantized kind (u8, i8, u16, i16). */
static bool quant_range(glow_dtype t, double *lo, double *hi)
{
    bool quant = t == GLOW_U8 || t == GLOW_I8 || t == GLOW_U16 || t == GLOW_I16;
    return quant && onnx_dtype_range(t, lo, hi);
}

static glow_status need_quant_kind(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                                   glow_dtype t, bool allow_i32)
{
    double lo, hi;
    if (quant_range(t, &lo, &hi) || (allow_i32 && t == GLOW_I32))
        return GLOW_OK;
    return onnx_unsupported(cx, np, "%s of type %s (glowc quantizes to u8, i8, u16, i16%s)",
                            what, glow_dtype_name(t), allow_i32 ? ", i32" : "");
}

/* Reads a dtype attribute (TensorProto.DataType code); *set is false when absent or 0. */
static glow_status dtype_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                              glow_dtype *out, bool *set)
{
    GLOW_TRY(onnx_attr_check(cx, np, name, 2));
    int64_t code = onnx_attr_int(np, name, 0);
    *set = code != 0;
    if (!*set)
        return GLOW_OK;
    if (!onnx_dtype_of_code(code, out))
        return onnx_unsupported(cx, np, "'%s' = %lld (%s), an element type glowc lacks", name,
                                (long long)code, onnx_code_name(code));
    return GLOW_OK;
}

static glow_status elem2(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                         glow_value b, glow_value *out)
{
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, NULL, 0, out);
}

static glow_status clip(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, double lo,
                        double hi, glow_value *out)
{
    glow_attr a[2] = { GLOW_AF(MIN, lo), GLOW_AF(MAX, hi) };
    return onnx_build(cx, np, NK_CLIP, &v, 1, a, 2, NULL, 0, out);
}

/* A scale or zero point shaped to broadcast against x [rank, dims]: a scalar (or one-element
 * tensor) stays a scalar, a 1-D tensor lies along `axis`, and a blocked one (block > 0, same
 * rank as x) has each value repeated `block` times along `axis`, the last block cut short. */
static glow_status expand_qparam(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                                 glow_value v, const glow_type *xt, int axis, int64_t block,
                                 glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    char a[96], b[96];
    if (glow_type_numel(t) == 1 && block == 0)
        return onnx_reshape(cx, np, v, 0, NULL, out);
    if (axis < 0 || axis >= xt->rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "%s %s needs an axis, which is out of "
                         "range for input %s", what, glow_type_str(t, a, sizeof a),
                         glow_type_str(xt, b, sizeof b));
    if (block == 0) {
        if (t->rank != 1 || xt->rank == 0 || t->dims[0] != xt->dims[axis])
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "%s %s does not fit input %s on axis "
                             "%d", what, glow_type_str(t, a, sizeof a),
                             glow_type_str(xt, b, sizeof b), axis);
        int64_t dims[GLOW_MAX_DIMS];
        for (int i = 0; i < xt->rank; i++)
            dims[i] = i == axis ? t->dims[0] : 1;
        return onnx_reshape(cx, np, v, xt->rank, dims, out);
    }
    bool fits = t->rank == xt->rank && xt->rank > 0;
    for (int i = 0; fits && i < xt->rank; i++)
        fits = i == axis ? t->dims[i] == (xt->dims[i] + block - 1) / block
                         : t->dims[i] == xt->dims[i];
    if (!fits)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "%s %s does not fit input %s in blocks of "
                         "%lld on axis %d", what, glow_type_str(t, a, sizeof a),
                         glow_type_str(xt, b, sizeof b), (long long)block, axis);
    if (xt->rank + 1 > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "blocked quantization of a rank-%d input", xt->rank);
    /* [.., S, ..] -> [.., S, 1, ..] -> [.., S, block, ..] -> [.., S*block, ..] -> slice. */
    int64_t d1[GLOW_MAX_DIMS], d2[GLOW_MAX_DIMS], d3[GLOW_MAX_DIMS];
    int r = 0;
    for (int i = 0; i < t->rank; i++) {
        d1[r] = d2[r] = t->dims[i];
        r++;
        if (i == axis) {
            d1[r] = 1;
            d2[r] = block;
            r++;
        }
        d3[i] = i == axis ? t->dims[i] * block : t->dims[i];
    }
    glow_value cur;
    GLOW_TRY(onnx_reshape(cx, np, v, r, d1, &cur));
    GLOW_TRY(onnx_broadcast_to(cx, np, cur, r, d2, &cur));
    GLOW_TRY(onnx_reshape(cx, np, cur, t->rank, d3, &cur));
    if (d3[axis] != xt->dims[axis])
        GLOW_TRY(onnx_slice_axis(cx, np, cur, axis, 0, xt->dims[axis], &cur));
    *out = cur;
    return GLOW_OK;
}

/* Reads axis (opset >= 13) and block_size (opset >= 21) for input x. */
static glow_status quant_axis(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              const glow_type *xt, int *axis, int64_t *block)
{
    GLOW_TRY(onnx_attr_check(cx, np, "axis", 2));
    GLOW_TRY(onnx_attr_check(cx, np, "block_size", 2));
    *axis = 0;
    *block = opset >= 21 ? onnx_attr_int(np, "block_size", 0) : 0;
    if (*block < 0 || *block > ((int64_t)1 << 31))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "block_size = %lld", (long long)*block);
    int64_t ax = opset >= 13 ? onnx_attr_int(np, "axis", 1) : 1;
    if (xt->rank == 0)
        return GLOW_OK;
    /* Axis only matters for per-axis and blocked parameters: an out-of-range default on a
     * low-rank input with per-tensor parameters is not an error. */
    if (ax < -(int64_t)xt->rank || ax >= xt->rank) {
        *axis = -1;
        return GLOW_OK;
    }
    return onnx_axis(cx, np, ax, xt->rank, axis);
}

static glow_status check_axis(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value p, int axis,
                              int64_t block)
{
    if (axis >= 0 || (glow_type_numel(glow_value_type(p)) == 1 && block == 0))
        return GLOW_OK;
    return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis is out of range for the input's rank");
}

glow_status load_dequantize_linear(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                   glow_node_kind kind)
{
    glow_value x, scale, zp = { 0 };
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &scale));
    bool has_zp = onnx_has_input(np, 2);
    if (has_zp)
        GLOW_TRY(onnx_input(cx, np, 2, &zp));
    const glow_type *xt = glow_value_type(x);
    GLOW_TRY(need_quant_kind(cx, np, "input x", xt->dtype, true));
    if (has_zp && glow_value_type(zp)->dtype != xt->dtype)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "x_zero_point is %s but x is %s",
                         glow_dtype_name(glow_value_type(zp)->dtype),
                         glow_dtype_name(xt->dtype));
    glow_dtype st = glow_value_type(scale)->dtype, out_t = st;
    if (!glow_dtype_is_float(st))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "x_scale must be a float tensor, not %s",
                         glow_dtype_name(st));
    bool set = false;
    if (opset >= 23)
        GLOW_TRY(dtype_attr(cx, np, "output_dtype", &out_t, &set));
    if (!glow_dtype_is_float(out_t))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "output_dtype %s is not a float type",
                         glow_dtype_name(out_t));
    int axis;
    int64_t block;
    GLOW_TRY(quant_axis(cx, np, opset, xt, &axis, &block));
    GLOW_TRY(check_axis(cx, np, scale, axis, block));
    /* (x - zp) * scale in f32 (f64 when asked for), then one rounding to the output kind, as
     * ONNX's reference computes it. */
    glow_dtype ct = out_t == GLOW_F64 ? GLOW_F64 : GLOW_F32;
    glow_value y;
    GLOW_TRY(onnx_cast(cx, np, x, ct, &y));
    if (has_zp) {
        GLOW_TRY(expand_qparam(cx, np, "x_zero_point", zp, xt, axis, block, &zp));
        GLOW_TRY(onnx_cast(cx, np, zp, ct, &zp));
        GLOW_TRY(elem2(cx, np, NK_SUB, y, zp, &y));
    }
    GLOW_TRY(expand_qparam(cx, np, "x_scale", scale, xt, axis, block, &scale));
    GLOW_TRY(onnx_cast(cx, np, scale, ct, &scale));
    GLOW_TRY(elem2(cx, np, NK_MUL, y, scale, &y));
    GLOW_TRY(onnx_cast(cx, np, y, out_t, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* y = saturate(round_half_even(x / scale) + zp) as `out_t`, with scale and zp already shaped
 * to broadcast against x (zp may be absent: .node NULL). The division runs in `ct`; the
 * rounded quotient is clipped so the i32 addition of the zero point cannot overflow, and the
 * sum is saturated to out_t's range. */
static glow_status quantize(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                            glow_value scale, glow_value zp, glow_dtype ct, glow_dtype out_t,
                            glow_value *out)
{
    double lo, hi;
    if (!quant_range(out_t, &lo, &hi))
        return onnx_unsupported(cx, np, "quantizing to %s", glow_dtype_name(out_t));
    glow_value q;
    GLOW_TRY(onnx_cast(cx, np, x, ct, &x));
    GLOW_TRY(onnx_cast(cx, np, scale, ct, &scale));
    GLOW_TRY(elem2(cx, np, NK_DIV, x, scale, &q));
    GLOW_TRY(onnx_build(cx, np, NK_ROUND, &q, 1, NULL, 0, NULL, 0, &q));
    if (zp.node) {
        GLOW_TRY(clip(cx, np, q, lo - hi, hi - lo, &q));
        GLOW_TRY(onnx_cast(cx, np, q, GLOW_I32, &q));
        GLOW_TRY(onnx_cast(cx, np, zp, GLOW_I32, &zp));
        GLOW_TRY(elem2(cx, np, NK_ADD, q, zp, &q));
    }
    GLOW_TRY(clip(cx, np, q, lo, hi, &q));
    return onnx_cast(cx, np, q, out_t, out);
}

/* The kind ONNX's reference divides in: both operands' kind when they agree, else f32 (f64
 * when either is f64 or x is an integer). */
static glow_dtype division_kind(glow_dtype x, glow_dtype s)
{
    if (x == s && glow_dtype_is_float(x))
        return x;
    if (x == GLOW_F64 || s == GLOW_F64 || !glow_dtype_is_float(x))
        return GLOW_F64;
    return GLOW_F32;
}

glow_status load_quantize_linear(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                 glow_node_kind kind)
{
    glow_value x, scale, zp = { 0 };
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &scale));
    bool has_zp = onnx_has_input(np, 2);
    if (has_zp)
        GLOW_TRY(onnx_input(cx, np, 2, &zp));
    const glow_type *xt = glow_value_type(x);
    glow_dtype st = glow_value_type(scale)->dtype;
    if (!glow_dtype_is_float(st))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "y_scale must be a float tensor, not %s",
                         glow_dtype_name(st));
    if (!glow_dtype_is_float(xt->dtype) && xt->dtype != GLOW_I32)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input x must be float or i32, not %s",
                         glow_dtype_name(xt->dtype));
    GLOW_TRY(onnx_attr_check(cx, np, "saturate", 2)); /* only float8 outputs use it */
    glow_dtype out_t = GLOW_U8, attr_t = GLOW_U8;
    bool set = false;
    if (opset >= 21)
        GLOW_TRY(dtype_attr(cx, np, "output_dtype", &attr_t, &set));
    if (has_zp) {
        out_t = glow_value_type(zp)->dtype;
        if (set && attr_t != out_t)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "output_dtype %s differs from "
                             "y_zero_point's type %s", glow_dtype_name(attr_t),
                             glow_dtype_name(out_t));
    } else if (set) {
        out_t = attr_t;
    }
    GLOW_TRY(need_quant_kind(cx, np, "output y", out_t, false));
    glow_dtype ct = division_kind(xt->dtype, st), prec;
    bool has_prec = false;
    if (opset >= 23)
        GLOW_TRY(dtype_attr(cx, np, "precision", &prec, &has_prec));
    if (has_prec) {
        if (!glow_dtype_is_float(prec))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "precision %s is not a float type",
                             glow_dtype_name(prec));
        ct = prec;
    }
    int axis;
    int64_t block;
    GLOW_TRY(quant_axis(cx, np, opset, xt, &axis, &block));
    GLOW_TRY(check_axis(cx, np, scale, axis, block));
    GLOW_TRY(expand_qparam(cx, np, "y_scale", scale, xt, axis, block, &scale));
    if (has_zp)
        GLOW_TRY(expand_qparam(cx, np, "y_zero_point", zp, xt, axis, block, &zp));
    glow_value y;
    GLOW_TRY(quantize(cx, np, x, scale, zp, ct, out_t, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* ONNX's function body: the range [min(x), max(x)] widened to include 0 maps onto [0, 255]. */
glow_status load_dynamic_quantize_linear(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                         glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    if (xt->dtype != GLOW_F32)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input x must be f32, not %s",
                         glow_dtype_name(xt->dtype));
    if (glow_type_numel(xt) == 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input x is empty (no range to quantize)");
    int64_t axes[GLOW_MAX_DIMS];
    for (int i = 0; i < xt->rank; i++)
        axes[i] = i;
    glow_attr ra[2] = { GLOW_AINTS(AXES, axes, xt->rank), GLOW_AI(KEEPDIMS, 0) };
    glow_value lo = x, hi = x, zero, qmax, scale, zp, y;
    if (xt->rank > 0) {
        GLOW_TRY(onnx_build(cx, np, NK_REDUCE_MIN, &x, 1, ra, 2, NULL, 0, &lo));
        GLOW_TRY(onnx_build(cx, np, NK_REDUCE_MAX, &x, 1, ra, 2, NULL, 0, &hi));
    }
    const char *nm = onnx_node_name(np);
    zero = onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/qmin", nm), GLOW_F32, 0.0);
    qmax = onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/qmax", nm), GLOW_F32, 255.0);
    GLOW_TRY(elem2(cx, np, NK_MIN, lo, zero, &lo));
    GLOW_TRY(elem2(cx, np, NK_MAX, hi, zero, &hi));
    GLOW_TRY(elem2(cx, np, NK_SUB, hi, lo, &scale));
    GLOW_TRY(elem2(cx, np, NK_DIV, scale, qmax, &scale));
    GLOW_TRY(elem2(cx, np, NK_DIV, lo, scale, &zp));
    GLOW_TRY(elem2(cx, np, NK_SUB, zero, zp, &zp));
    GLOW_TRY(clip(cx, np, zp, 0.0, 255.0, &zp));
    GLOW_TRY(onnx_build(cx, np, NK_ROUND, &zp, 1, NULL, 0, NULL, 0, &zp));
    GLOW_TRY(onnx_cast(cx, np, zp, GLOW_U8, &zp));
    GLOW_TRY(quantize(cx, np, x, scale, zp, GLOW_F32, GLOW_U8, &y));
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    if (onnx_has_output(np, 1))
        GLOW_TRY(onnx_set_output(cx, np, 1, scale));
    if (onnx_has_output(np, 2))
        GLOW_TRY(onnx_set_output(cx, np, 2, zp));
    return GLOW_OK;
}

/* --- integer MatMul and Conv --- */

/* Runs another op's loader (Conv, MatMul) on already built values, so the integer ops share
 * its attribute handling and broadcasting: the values are bound to private names, a copy of
 * np (same attributes, name and op type for messages) reads them, and the copy's single
 * output is returned. */
static glow_status delegate(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, onnx_loader fn,
                            const glow_value *ins, int nin, glow_value *out)
{
    char **names = GLOW_NEW_ARRAY(cx->arena, char *, nin + 1);
    for (int i = 0; i <= nin; i++) {
        /* '\x01' cannot start a name ONNX models use, so these never collide. */
        names[i] = glow_arena_printf(cx->arena, "\x01%s/%d/%d", onnx_node_name(np), cx->nbuilt++,
                                     i);
        if (i < nin) {
            onnx_binding *b = GLOW_NEW(cx->arena, onnx_binding);
            b->v = ins[i];
            b->poisoned = false;
            glow_strmap_put(&cx->values, names[i], b);
        }
    }
    Onnx__NodeProto sub = *np;
    sub.n_input = (size_t)nin;
    sub.input = names;
    sub.n_output = 1;
    sub.output = &names[nin];
    GLOW_TRY(fn(cx, &sub, opset, ONNX_CUSTOM));
    const onnx_binding *b = glow_strmap_get(&cx->values, names[nin]);
    if (!b || b->poisoned)
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "inner loader bound no result");
    *out = b->v;
    return GLOW_OK;
}

/* v - zp (zp optional input `zi`) cast to `ct`. A 1-D zero point of more than one value is
 * per row (matrix A: axis rank-2) or per output channel (conv weights: axis 0); `axis` < 0
 * leaves it to NumPy broadcasting (per column of B). */
static glow_status sub_zero_point(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int zi,
                                  int axis, glow_dtype ct, glow_value *out)
{
    GLOW_TRY(onnx_cast(cx, np, v, ct, out));
    if (!onnx_has_input(np, zi))
        return GLOW_OK;
    glow_value zp;
    GLOW_TRY(onnx_input(cx, np, zi, &zp));
    const glow_type *vt = glow_value_type(v), *zt = glow_value_type(zp);
    if (zt->dtype != vt->dtype)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "zero point input %d is %s, its data is %s",
                         zi, glow_dtype_name(zt->dtype), glow_dtype_name(vt->dtype));
    if (zt->rank == 1 && zt->dims[0] > 1 && axis >= 0 && axis < vt->rank &&
        zt->dims[0] == vt->dims[axis]) {
        int64_t dims[GLOW_MAX_DIMS];
        for (int i = 0; i < vt->rank - axis; i++)
            dims[i] = i == 0 ? zt->dims[0] : 1;
        GLOW_TRY(onnx_reshape(cx, np, zp, vt->rank - axis, dims, &zp));
    }
    GLOW_TRY(onnx_cast(cx, np, zp, ct, &zp));
    return elem2(cx, np, NK_SUB, *out, zp, out);
}

static glow_status need_8bit(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value v)
{
    glow_dtype t = glow_value_type(v)->dtype;
    if (t == GLOW_U8 || t == GLOW_I8)
        return GLOW_OK;
    return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d must be u8 or i8, not %s", i,
                     glow_dtype_name(t));
}

glow_status load_matmul_integer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    glow_value a, b;
    GLOW_TRY(onnx_input(cx, np, 0, &a));
    GLOW_TRY(onnx_input(cx, np, 1, &b));
    GLOW_TRY(need_8bit(cx, np, 0, a));
    GLOW_TRY(need_8bit(cx, np, 1, b));
    int ra = glow_value_type(a)->rank;
    GLOW_TRY(sub_zero_point(cx, np, a, 2, ra >= 2 ? ra - 2 : -1, GLOW_I32, &a));
    GLOW_TRY(sub_zero_point(cx, np, b, 3, -1, GLOW_I32, &b));
    glow_value y;
    GLOW_TRY(delegate(cx, np, opset, load_matmul, (glow_value[]){ a, b }, 2, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_conv_integer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    glow_value x, w, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &w));
    GLOW_TRY(need_8bit(cx, np, 0, x));
    GLOW_TRY(need_8bit(cx, np, 1, w));
    GLOW_TRY(sub_zero_point(cx, np, x, 2, -1, GLOW_F64, &x));
    GLOW_TRY(sub_zero_point(cx, np, w, 3, 0, GLOW_F64, &w));
    GLOW_TRY(delegate(cx, np, opset, load_conv, (glow_value[]){ x, w }, 2, &y));
    GLOW_TRY(onnx_cast(cx, np, y, GLOW_I32, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* acc * (s1 * s2 / sy) + zy, rounded half to even and saturated to the output kind: ONNX's
 * reference forms the scale ratio in the scales' own kind, then works in f64. `s2` may be
 * per output channel (conv: laid along axis 1 of acc). */
static glow_status requantize(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value acc, int is1,
                              int is2, int isy, int izy, bool conv, glow_dtype out_t,
                              glow_value *out)
{
    glow_value s1, s2, sy, f;
    GLOW_TRY(onnx_input(cx, np, is1, &s1));
    GLOW_TRY(onnx_input(cx, np, is2, &s2));
    GLOW_TRY(onnx_input(cx, np, isy, &sy));
    const glow_type *t2 = glow_value_type(s2), *at = glow_value_type(acc);
    if (conv && t2->rank == 1 && t2->dims[0] > 1 && at->rank >= 2) {
        int64_t dims[GLOW_MAX_DIMS];
        for (int i = 0; i < at->rank - 1; i++)
            dims[i] = i == 0 ? t2->dims[0] : 1;
        GLOW_TRY(onnx_reshape(cx, np, s2, at->rank - 1, dims, &s2));
    }
    glow_dtype st = glow_value_type(s1)->dtype;
    if (!glow_dtype_is_float(st) || glow_value_type(s2)->dtype != st ||
        glow_value_type(sy)->dtype != st)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "scales must share one float type");
    GLOW_TRY(elem2(cx, np, NK_MUL, s1, s2, &f));
    GLOW_TRY(elem2(cx, np, NK_DIV, f, sy, &f));
    GLOW_TRY(onnx_cast(cx, np, f, GLOW_F64, &f));
    GLOW_TRY(onnx_cast(cx, np, acc, GLOW_F64, &acc));
    GLOW_TRY(elem2(cx, np, NK_MUL, acc, f, &acc));
    if (onnx_has_input(np, izy)) {
        glow_value zy;
        GLOW_TRY(onnx_input(cx, np, izy, &zy));
        GLOW_TRY(onnx_cast(cx, np, zy, GLOW_F64, &zy));
        GLOW_TRY(elem2(cx, np, NK_ADD, acc, zy, &acc));
    }
    double lo, hi;
    if (!quant_range(out_t, &lo, &hi))
        return onnx_unsupported(cx, np, "output of type %s", glow_dtype_name(out_t));
    GLOW_TRY(onnx_build(cx, np, NK_ROUND, &acc, 1, NULL, 0, NULL, 0, &acc));
    GLOW_TRY(clip(cx, np, acc, lo, hi, &acc));
    return onnx_cast(cx, np, acc, out_t, out);
}

/* The output kind: y_zero_point's, else the first input's. */
static glow_status qlinear_out_kind(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                    int izy, glow_dtype *out)
{
    *out = glow_value_type(x)->dtype;
    if (onnx_has_input(np, izy)) {
        glow_value zy;
        GLOW_TRY(onnx_input(cx, np, izy, &zy));
        *out = glow_value_type(zy)->dtype;
    }
    return GLOW_OK;
}

/* Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point. */
glow_status load_qlinear_matmul(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    glow_value a, b, y;
    GLOW_TRY(onnx_input(cx, np, 0, &a));
    GLOW_TRY(onnx_input(cx, np, 3, &b));
    GLOW_TRY(need_8bit(cx, np, 0, a));
    GLOW_TRY(need_8bit(cx, np, 3, b));
    glow_dtype out_t;
    GLOW_TRY(qlinear_out_kind(cx, np, a, 7, &out_t));
    GLOW_TRY(sub_zero_point(cx, np, a, 2, -1, GLOW_I32, &a));
    GLOW_TRY(sub_zero_point(cx, np, b, 5, -1, GLOW_I32, &b));
    GLOW_TRY(delegate(cx, np, opset, load_matmul, (glow_value[]){ a, b }, 2, &y));
    GLOW_TRY(requantize(cx, np, y, 1, 4, 6, 7, false, out_t, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B. */
glow_status load_qlinear_conv(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    glow_value ins[3], y;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 3, &ins[1]));
    GLOW_TRY(need_8bit(cx, np, 0, ins[0]));
    GLOW_TRY(need_8bit(cx, np, 3, ins[1]));
    glow_dtype out_t;
    GLOW_TRY(qlinear_out_kind(cx, np, ins[0], 7, &out_t));
    GLOW_TRY(sub_zero_point(cx, np, ins[0], 2, -1, GLOW_F64, &ins[0]));
    GLOW_TRY(sub_zero_point(cx, np, ins[1], 5, 0, GLOW_F64, &ins[1]));
    int nin = 2;
    if (onnx_has_input(np, 8)) {
        GLOW_TRY(onnx_input(cx, np, 8, &ins[2]));
        if (glow_value_type(ins[2])->dtype != GLOW_I32)
            return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "bias B must be i32, not %s",
                             glow_dtype_name(glow_value_type(ins[2])->dtype));
        GLOW_TRY(onnx_cast(cx, np, ins[2], GLOW_F64, &ins[2]));
        nin = 3;
    }
    GLOW_TRY(delegate(cx, np, opset, load_conv, ins, nin, &y));
    GLOW_TRY(requantize(cx, np, y, 1, 4, 6, 7, true, out_t, &y));
    return onnx_set_output(cx, np, 0, y);
}
