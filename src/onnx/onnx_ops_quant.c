// onnx_ops_quant.c - QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, and the helpers
// the quantization loaders share (onnx_quant.h).
//
// With constant per-tensor parameters QuantizeLinear and DequantizeLinear become the graph's
// Quantize and Dequantize nodes (docs/quantization.md): the ONNX tensors keep their plain u8 /
// i8 / i16 / i32 kinds, and Reinterpret views give them their scale and offset. Quantize's
// arithmetic is QuantizeLinear's (the division in f32), so this path is taken only where ONNX
// divides in f32 too. Everything else (per-axis and blocked parameters, parameters computed at
// run time, u16, f64 or f16 arithmetic, DynamicQuantizeLinear) is computed with casts and
// elementwise math on ordinary kinds, with the order of operations and the working precision
// chosen to reproduce ONNX's reference results exactly (integer outputs are compared bit for
// bit).
#include <string.h>

#include "onnx/onnx_quant.h"

/* ONNX element kinds glowc has no dtype for, named for messages. */
static const char *onnx_code_name(int64_t code)
{
    return code == 8 ? "string" : code == 14 ? "complex64" : code == 15 ? "complex128"
                                                                       : "unknown";
}

/* The float8 and float4 kinds QuantizeLinear and DequantizeLinear convert to and from: their
 * "quantization" is a scaled cast, with no zero point. */
static bool q_float_kind(glow_dtype t)
{
    return t == GLOW_F8E4M3FN || t == GLOW_F8E4M3FNUZ || t == GLOW_F8E5M2 ||
           t == GLOW_F8E5M2FNUZ || t == GLOW_F4E2M1;
}

bool onnx_q_range(glow_dtype t, double *lo, double *hi)
{
    bool quant = t == GLOW_U8 || t == GLOW_I8 || t == GLOW_U16 || t == GLOW_I16 ||
                 t == GLOW_U4 || t == GLOW_I4 || t == GLOW_U2 || t == GLOW_I2;
    return quant && onnx_dtype_range(t, lo, hi);
}

static glow_status need_quant_kind(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                                   glow_dtype t, bool allow_i32)
{
    double lo, hi;
    if (onnx_q_range(t, &lo, &hi) || (allow_i32 && t == GLOW_I32) || q_float_kind(t))
        return GLOW_OK;
    return onnx_unsupported(cx, np, "%s of type %s (glowc quantizes to u8, i8, u16, i16, u4, "
                            "i4, u2, i2%s, float8 and float4e2m1)", what, glow_dtype_name(t),
                            allow_i32 ? ", i32" : "");
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

glow_status onnx_q_elem2(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                         glow_value b, glow_value *out)
{
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, NULL, 0, out);
}

glow_status onnx_q_clip(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, double lo,
                        double hi, glow_value *out)
{
    glow_attr a[2] = { GLOW_AF(MIN, lo), GLOW_AF(MAX, hi) };
    return onnx_build(cx, np, NK_CLIP, &v, 1, a, 2, NULL, 0, out);
}

/* --- constant per-tensor parameters and quantized views (onnx_quant.h) --- */

bool onnx_q_kind(glow_dtype t, glow_dtype *out)
{
    switch (t) {
    case GLOW_U8: *out = GLOW_U8Q; return true;
    case GLOW_I8: *out = GLOW_I8Q; return true;
    case GLOW_I16: *out = GLOW_I16Q; return true;
    case GLOW_I32: *out = GLOW_I32Q; return true;
    default: return false;
    }
}

/* The constant behind input i, or NULL (absent, computed at run time, or a failed input: the
 * caller's float path reports those). */
static const glow_node *const_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i)
{
    if (!onnx_has_input(np, i))
        return NULL;
    const onnx_binding *b = glow_strmap_get(&cx->values, np->input[i]);
    if (!b || b->poisoned || !glow_value_is_constant(b->v))
        return NULL;
    return b->v.node;
}

bool onnx_q_const_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, int i, double *v)
{
    const glow_node *c = const_input(cx, np, i);
    if (!c || glow_type_numel(&c->outs[0]) != 1)
        return false;
    *v = glow_load_f64(c->outs[0].dtype, c->payload.data, 0);
    return true;
}

bool onnx_q_const_scale(onnx_ctx *cx, const Onnx__NodeProto *np, int i, float *out)
{
    const glow_node *c = const_input(cx, np, i);
    double v;
    glow_dtype t = c ? c->outs[0].dtype : GLOW_F64;
    /* f16 and bf16 values are exact in f32; an f64 scale would be rounded. */
    if ((t != GLOW_F32 && t != GLOW_F16 && t != GLOW_BF16) || !onnx_q_const_scalar(cx, np, i, &v))
        return false;
    *out = (float)v;
    return *out > 0 && *out <= 3.4e38f;
}

bool onnx_q_const_zero(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int32_t *out)
{
    double v = 0;
    if (onnx_has_input(np, i) && !onnx_q_const_scalar(cx, np, i, &v))
        return false;
    if (!(v >= INT32_MIN && v <= INT32_MAX))
        return false;
    *out = (int32_t)v;
    return true;
}

glow_status onnx_q_view(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, glow_dtype to,
                        onnx_qparam q, glow_value *out)
{
    const glow_type *vt = glow_value_type(v);
    glow_type t = glow_type_make(to, vt->rank, vt->dims);
    if (glow_dtype_is_quantized(to)) {
        t.scale = q.scale;
        t.offset = q.offset;
    }
    if (v.node->kind == NK_REINTERPRET && glow_type_equal(glow_value_type(v.node->ins[0]), &t)) {
        *out = v.node->ins[0];
        return GLOW_OK;
    }
    if (glow_type_equal(vt, &t)) {
        *out = v;
        return GLOW_OK;
    }
    return onnx_build(cx, np, NK_REINTERPRET, &v, 1, NULL, 0, &t, 1, out);
}

/* The values of parameter input i (absent: n copies of dflt) when it is a constant of one
 * value or of n values along the data's axis; NULL otherwise. */
static double *const_params(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int64_t n,
                            double dflt)
{
    const glow_node *c = const_input(cx, np, i);
    if (onnx_has_input(np, i) && !c)
        return NULL;
    int64_t k = c ? glow_type_numel(&c->outs[0]) : 1;
    if (k != 1 && (k != n || c->outs[0].rank != 1))
        return NULL;
    double *v = GLOW_NEW_ARRAY(cx->arena, double, n);
    for (int64_t j = 0; j < n; j++)
        v[j] = c ? glow_load_f64(c->outs[0].dtype, c->payload.data, (size_t)(k == 1 ? 0 : j))
                 : dflt;
    return v;
}

/* Remembers the integers behind y = DequantizeLinear(x) when both are constants (a QDQ
 * model's weight or bias), for onnx_q_fuse_product. Scales must be exact in f32. */
static void record_dq(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, glow_value y,
                      int axis, int64_t block)
{
    const glow_type *xt = glow_value_type(x);
    const glow_node *s = const_input(cx, np, 1);
    if (!glow_value_is_constant(x) || y.node->kind != NK_CONSTANT || block != 0 || !s ||
        glow_value_type(y)->dtype != GLOW_F32 ||
        (xt->dtype != GLOW_U8 && xt->dtype != GLOW_I8 && xt->dtype != GLOW_I32))
        return;
    glow_dtype st = s->outs[0].dtype;
    if (st != GLOW_F32 && st != GLOW_F16 && st != GLOW_BF16)
        return;
    onnx_dq_const *r = GLOW_NEW(cx->arena, onnx_dq_const);
    r->axis = glow_type_numel(&s->outs[0]) == 1 ? -1 : axis;
    r->n = r->axis >= 0 ? xt->dims[r->axis] : 1;
    r->scales = const_params(cx, np, 1, r->n, 1.0);
    r->offsets = const_params(cx, np, 2, r->n, 0.0);
    if (!r->scales || !r->offsets)
        return;
    r->result = y.node;
    r->q = x;
    r->next = cx->dq_consts;
    cx->dq_consts = r;
}

const onnx_dq_const *onnx_q_find_dq(const onnx_ctx *cx, glow_value v)
{
    for (const onnx_dq_const *r = cx->dq_consts; r; r = r->next)
        if (r->result == v.node)
            return r;
    return NULL;
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
    glow_value y;
    /* Dequantize computes (x - zp) * scale in f32 as ONNX does; an i32 input takes this path
     * only with a zero point of 0, where ONNX's f32 subtraction is exact too. */
    glow_dtype qk;
    onnx_qparam q;
    if (block == 0 && out_t != GLOW_F64 && onnx_q_kind(xt->dtype, &qk) &&
        onnx_q_const_scale(cx, np, 1, &q.scale) && onnx_q_const_zero(cx, np, 2, &q.offset) &&
        (xt->dtype != GLOW_I32 || q.offset == 0)) {
        glow_type ft = glow_type_make(GLOW_F32, xt->rank, xt->dims);
        GLOW_TRY(onnx_q_view(cx, np, x, qk, q, &y));
        GLOW_TRY(onnx_build(cx, np, NK_DEQUANTIZE, &y, 1, NULL, 0, &ft, 1, &y));
        GLOW_TRY(onnx_cast(cx, np, y, out_t, &y));
        record_dq(cx, np, x, y, axis, block);
        return onnx_set_output(cx, np, 0, y);
    }
    /* (x - zp) * scale in f32 (f64 when asked for), then one rounding to the output kind, as
     * ONNX's reference computes it. */
    glow_dtype ct = out_t == GLOW_F64 ? GLOW_F64 : GLOW_F32;
    GLOW_TRY(onnx_cast(cx, np, x, ct, &y));
    if (has_zp) {
        GLOW_TRY(expand_qparam(cx, np, "x_zero_point", zp, xt, axis, block, &zp));
        GLOW_TRY(onnx_cast(cx, np, zp, ct, &zp));
        GLOW_TRY(onnx_q_elem2(cx, np, NK_SUB, y, zp, &y));
    }
    GLOW_TRY(expand_qparam(cx, np, "x_scale", scale, xt, axis, block, &scale));
    GLOW_TRY(onnx_cast(cx, np, scale, ct, &scale));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_MUL, y, scale, &y));
    GLOW_TRY(onnx_cast(cx, np, y, out_t, &y));
    record_dq(cx, np, x, y, axis, block);
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
    if (!onnx_q_range(out_t, &lo, &hi))
        return onnx_unsupported(cx, np, "quantizing to %s", glow_dtype_name(out_t));
    glow_value q;
    GLOW_TRY(onnx_cast(cx, np, x, ct, &x));
    GLOW_TRY(onnx_cast(cx, np, scale, ct, &scale));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_DIV, x, scale, &q));
    GLOW_TRY(onnx_build(cx, np, NK_ROUND, &q, 1, NULL, 0, NULL, 0, &q));
    if (zp.node) {
        GLOW_TRY(onnx_q_clip(cx, np, q, lo - hi, hi - lo, &q));
        GLOW_TRY(onnx_cast(cx, np, q, GLOW_I32, &q));
        GLOW_TRY(onnx_cast(cx, np, zp, GLOW_I32, &zp));
        GLOW_TRY(onnx_q_elem2(cx, np, NK_ADD, q, zp, &q));
    }
    GLOW_TRY(onnx_q_clip(cx, np, q, lo, hi, &q));
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
    bool saturate = onnx_attr_int(np, "saturate", 1) != 0;
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
    glow_value y;
    /* Quantize divides in f32: the node serves where ONNX's reference does too. */
    glow_dtype qk;
    onnx_qparam q;
    if (block == 0 && ct == GLOW_F32 && onnx_q_kind(out_t, &qk) &&
        onnx_q_const_scale(cx, np, 1, &q.scale) && onnx_q_const_zero(cx, np, 2, &q.offset)) {
        glow_type t = glow_type_make(qk, xt->rank, xt->dims);
        t.scale = q.scale;
        t.offset = q.offset;
        bool fused = false;
        if (qk == GLOW_U8Q || qk == GLOW_I8Q)
            GLOW_TRY(onnx_q_fuse_product(cx, np, x, qk, q, &y, &fused));
        if (!fused)
            GLOW_TRY(onnx_build(cx, np, NK_QUANTIZE, &x, 1, NULL, 0, &t, 1, &y));
        GLOW_TRY(onnx_q_view(cx, np, y, out_t, q, &y));
        return onnx_set_output(cx, np, 0, y);
    }
    GLOW_TRY(expand_qparam(cx, np, "y_scale", scale, xt, axis, block, &scale));
    if (q_float_kind(out_t)) {
        /* x / scale rounded once to the float kind (saturating unless told not to); ONNX's
         * reference leaves the zero point, which must be 0, out. */
        GLOW_TRY(onnx_cast(cx, np, x, ct, &x));
        GLOW_TRY(onnx_cast(cx, np, scale, ct, &scale));
        GLOW_TRY(onnx_q_elem2(cx, np, NK_DIV, x, scale, &y));
        GLOW_TRY(onnx_cast_mode(cx, np, y, out_t, saturate, NULL, &y));
        return onnx_set_output(cx, np, 0, y);
    }
    if (has_zp)
        GLOW_TRY(expand_qparam(cx, np, "y_zero_point", zp, xt, axis, block, &zp));
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
    GLOW_TRY(onnx_q_elem2(cx, np, NK_MIN, lo, zero, &lo));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_MAX, hi, zero, &hi));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_SUB, hi, lo, &scale));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_DIV, scale, qmax, &scale));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_DIV, lo, scale, &zp));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_SUB, zero, zp, &zp));
    GLOW_TRY(onnx_q_clip(cx, np, zp, 0.0, 255.0, &zp));
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
