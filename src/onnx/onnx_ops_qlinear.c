// onnx_ops_qlinear.c - Integer and quantized products: MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv.
//
// With constant parameters (per tensor; a convolution's weights may also have one scale and
// zero point per output channel) they become the graph's quantized nodes: MatMul of quantized
// operands and ChannelwiseQuantizedConv, each accumulating exactly in int32 and requantizing
// through one f32 multiplier into a declared result (docs/quantization.md), or handing out the
// accumulator itself as i32 (the *Integer ops). The ONNX tensors keep their plain u8 / i8
// kinds; Reinterpret views give them their scale and offset.
//
// QDQ models (DequantizeLinear'd activations, weights and bias into a float Conv or MatMul whose
// result goes to QuantizeLinear) import the same way: QuantizeLinear finds the product and
// rebuilds it from the integers behind the dequantized operands (onnx_q_fuse_product).
//
// Parameters computed at run time (and per-row / per-column MatMul parameters, which no
// quantized type can hold) keep the plain-arithmetic form: integer products accumulated
// exactly (MatMul in i32 as ONNX specifies, Conv in f64, whose 53 bits hold any sum of 8-bit
// products), then requantized in f64 as ONNX's reference does.
#include <math.h>
#include <string.h>

#include "onnx/onnx_quant.h"

static glow_status need_8bit(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value v)
{
    glow_dtype t = glow_value_type(v)->dtype;
    if (t == GLOW_U8 || t == GLOW_I8)
        return GLOW_OK;
    return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d must be u8 or i8, not %s", i,
                     glow_dtype_name(t));
}

/* A zero point (input zi, optional) must have its data's kind. */
static glow_status check_zero_kind(onnx_ctx *cx, const Onnx__NodeProto *np, int zi, glow_value v)
{
    if (!onnx_has_input(np, zi))
        return GLOW_OK;
    glow_value zp;
    GLOW_TRY(onnx_input(cx, np, zi, &zp));
    glow_dtype zt = glow_value_type(zp)->dtype, vt = glow_value_type(v)->dtype;
    if (zt != vt)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "zero point input %d is %s, its data is %s",
                         zi, glow_dtype_name(zt), glow_dtype_name(vt));
    return GLOW_OK;
}

/* The scale inputs must share one float kind. */
static glow_status check_scales(onnx_ctx *cx, const Onnx__NodeProto *np, int i1, int i2, int i3)
{
    glow_value s1, s2, s3;
    GLOW_TRY(onnx_input(cx, np, i1, &s1));
    GLOW_TRY(onnx_input(cx, np, i2, &s2));
    GLOW_TRY(onnx_input(cx, np, i3, &s3));
    glow_dtype st = glow_value_type(s1)->dtype;
    if (!glow_dtype_is_float(st) || glow_value_type(s2)->dtype != st ||
        glow_value_type(s3)->dtype != st)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "scales must share one float type");
    return GLOW_OK;
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

/* Scale input is and zero point input iz, both constant and per tensor. */
static bool const_qparam(onnx_ctx *cx, const Onnx__NodeProto *np, int is, int iz,
                         onnx_qparam *q)
{
    return onnx_q_const_scale(cx, np, is, &q->scale) && onnx_q_const_zero(cx, np, iz, &q->offset);
}

/* A quantized result type of kind `plain`'s quantized twin (only the kind and parameters count:
 * the node infers its shape). */
static glow_type result_type(glow_dtype plain, onnx_qparam q)
{
    glow_dtype k = GLOW_I32;
    onnx_q_kind(plain, &k);
    glow_type t = glow_type_scalar(k);
    t.scale = q.scale;
    t.offset = q.offset;
    return t;
}

/* --- quantized nodes --- */

/* MatMul of a and b seen through their parameters, into `res`; a quantized result is handed
 * out as plain `out_t`. */
static glow_status quant_matmul(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value a,
                                onnx_qparam qa, glow_value b, onnx_qparam qb,
                                const glow_type *res, glow_dtype out_t, glow_value *out)
{
    glow_dtype ka = GLOW_U8Q, kb = GLOW_U8Q;
    onnx_q_kind(glow_value_type(a)->dtype, &ka);
    onnx_q_kind(glow_value_type(b)->dtype, &kb);
    GLOW_TRY(onnx_q_view(cx, np, a, ka, qa, &a));
    GLOW_TRY(onnx_q_view(cx, np, b, kb, qb, &b));
    GLOW_TRY(onnx_matmul(cx, np, a, b, res, out));
    if (res->dtype == GLOW_I32)
        return GLOW_OK;
    return onnx_q_view(cx, np, *out, out_t, (onnx_qparam){ 0 }, out);
}

/* Per-output-channel parameters of a convolution with m output channels: input i absent
 * (every value `dflt`), or a constant of 1 or m values (a single value broadcast). False when
 * computed at run time or of another length. */
static bool const_channels(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int64_t m,
                           double dflt, double *vals)
{
    const glow_node *c = NULL;
    if (onnx_has_input(np, i)) {
        const onnx_binding *b = glow_strmap_get(&cx->values, np->input[i]);
        if (!b || b->poisoned || !glow_value_is_constant(b->v))
            return false;
        c = b->v.node;
    }
    int64_t n = c ? glow_type_numel(&c->outs[0]) : 1;
    if (n != 1 && !(n == m && c->outs[0].rank == 1))
        return false;
    for (int64_t k = 0; k < m; k++)
        vals[k] = c ? glow_load_f64(c->outs[0].dtype, c->payload.data, (size_t)(n == 1 ? 0 : k))
                    : dflt;
    return true;
}

/* Weight scales as f32: positive, finite, and exact in f32 (not f64). */
static bool usable_scales(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const double *v,
                          int64_t m)
{
    const onnx_binding *b = glow_strmap_get(&cx->values, np->input[i]);
    glow_dtype t = b ? glow_value_type(b->v)->dtype : GLOW_F64;
    if (t != GLOW_F32 && t != GLOW_F16 && t != GLOW_BF16)
        return false;
    for (int64_t k = 0; k < m; k++)
        if (!(v[k] > 0 && v[k] <= 3.4e38))
            return false;
    return true;
}

/* ChannelwiseQuantizedConv(x seen with qx, w, bias, w_scales, w_offsets) into `res`; `ib`
 * is the bias input (-1: none, zeros). Reads Conv's attributes as Conv does. */
static glow_status quant_conv(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                              onnx_qparam qx, glow_value w, const double *scales,
                              const double *offsets, int ib, const glow_type *res,
                              glow_value *out)
{
    glow_attr attrs[ONNX_CONV_MAX_ATTRS];
    int na;
    GLOW_TRY(onnx_conv_attrs(cx, np, x, w, attrs, &na));
    int64_t m = glow_value_type(w)->dims[0];
    void *buf;
    glow_value ins[5];
    glow_dtype kx = GLOW_U8Q;
    onnx_q_kind(glow_value_type(x)->dtype, &kx);
    GLOW_TRY(onnx_q_view(cx, np, x, kx, qx, &ins[0]));
    ins[1] = w;
    if (ib >= 0) {
        GLOW_TRY(onnx_input(cx, np, ib, &ins[2]));
        if (glow_value_type(ins[2])->dtype != GLOW_I32)
            return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "bias B must be i32, not %s",
                             glow_dtype_name(glow_value_type(ins[2])->dtype));
    } else {
        /* No bias: zeros (the buffer comes zeroed). */
        glow_type bt = glow_type_make(GLOW_I32, 1, &m);
        GLOW_TRY(onnx_const_buffer(cx, np, m, sizeof(int32_t), &buf));
        ins[2] = onnx_constant(cx, onnx_sub_name(cx, np, "bias"), &bt, buf);
    }
    GLOW_TRY(onnx_const_buffer(cx, np, m, sizeof(float), &buf));
    ins[3] = onnx_f64_constant(cx, np, "scales", GLOW_F32, 1, &m, scales, buf);
    GLOW_TRY(onnx_const_buffer(cx, np, m, sizeof(int32_t), &buf));
    ins[4] = onnx_f64_constant(cx, np, "offsets", GLOW_I32, 1, &m, offsets, buf);
    return onnx_build(cx, np, NK_CHANNELWISE_QCONV, ins, 5, attrs, na, res, 1, out);
}

/* m from the weights [M, C/group, k...] (checked again by Conv's attribute reading). */
static bool out_channels(glow_value w, int64_t *m)
{
    const glow_type *t = glow_value_type(w);
    *m = t->rank >= 1 ? t->dims[0] : 0;
    return t->rank >= 3 && *m >= 1;
}

/* --- QDQ: DequantizeLinear'd operands, a float product, QuantizeLinear --- */

/* The quantized value a float operand was dequantized from at run time, if it was. */
static bool dequantized(glow_value v, glow_value *q)
{
    if (v.node->kind != NK_DEQUANTIZE)
        return false;
    *q = v.node->ins[0];
    glow_dtype t = glow_value_type(*q)->dtype;
    return t == GLOW_U8Q || t == GLOW_I8Q;
}

/* The bias record fits ChannelwiseQuantizedConv's i32 bias when its scales are the products
 * of the input's and the weights' (as quantizers write them; rounding of that product in f32
 * is tolerated) and its zero points are 0. */
static bool bias_fits(const onnx_dq_const *b, int64_t m, float sx, const double *sw)
{
    if (glow_value_type(b->q)->dtype != GLOW_I32 || glow_value_type(b->q)->rank != 1 ||
        glow_value_type(b->q)->dims[0] != m || (b->n != 1 && b->n != m))
        return false;
    for (int64_t k = 0; k < m; k++) {
        double want = (double)sx * sw[k], got = b->scales[b->n == 1 ? 0 : k];
        if (b->offsets[b->n == 1 ? 0 : k] != 0 || fabs(got - want) > 1e-6 * want)
            return false;
    }
    return true;
}

/* Conv(DQ(xq), DQ(w const), DQ(b const)?) as ChannelwiseQuantizedConv into `res`. */
static glow_status fuse_conv(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_node *c,
                             const glow_type *res, glow_value *out, bool *fused)
{
    glow_value xq;
    const onnx_dq_const *w = onnx_q_find_dq(cx, c->ins[1]);
    if (!dequantized(c->ins[0], &xq) || !w || (w->axis != -1 && w->axis != 0))
        return GLOW_OK;
    const glow_type *wt = glow_value_type(w->q);
    int64_t m = wt->dims[0];
    if (wt->dtype != GLOW_I8 && wt->dtype != GLOW_U8)
        return GLOW_OK;
    double *sw = GLOW_NEW_ARRAY(&cx->scratch, double, m);
    double *zw = GLOW_NEW_ARRAY(&cx->scratch, double, m);
    for (int64_t k = 0; k < m; k++) {
        sw[k] = w->scales[w->n == 1 ? 0 : k];
        zw[k] = w->offsets[w->n == 1 ? 0 : k];
        if (!(sw[k] > 0 && sw[k] <= 3.4e38))
            return GLOW_OK;
    }
    glow_value ins[5] = { xq, w->q };
    void *buf;
    if (c->nin == 3) {
        const onnx_dq_const *b = onnx_q_find_dq(cx, c->ins[2]);
        if (!b || !bias_fits(b, m, glow_value_type(xq)->scale, sw))
            return GLOW_OK;
        ins[2] = b->q;
    } else {
        glow_type bt = glow_type_make(GLOW_I32, 1, &m);
        GLOW_TRY(onnx_const_buffer(cx, np, m, sizeof(int32_t), &buf));
        ins[2] = onnx_constant(cx, onnx_sub_name(cx, np, "bias"), &bt, buf);
    }
    GLOW_TRY(onnx_const_buffer(cx, np, m, sizeof(float), &buf));
    ins[3] = onnx_f64_constant(cx, np, "scales", GLOW_F32, 1, &m, sw, buf);
    GLOW_TRY(onnx_const_buffer(cx, np, m, sizeof(int32_t), &buf));
    ins[4] = onnx_f64_constant(cx, np, "offsets", GLOW_I32, 1, &m, zw, buf);
    /* The float Conv's attributes are already Conv's normalized form. */
    GLOW_TRY(onnx_build(cx, np, NK_CHANNELWISE_QCONV, ins, 5, c->attrs, (int)c->nattr, res, 1,
                        out));
    *fused = true;
    return GLOW_OK;
}

/* MatMul(DQ(aq), DQ(b const), per tensor) as a quantized MatMul into `res`. */
static glow_status fuse_matmul(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_node *mm,
                               const glow_type *res, glow_value *out, bool *fused)
{
    glow_value aq, bq;
    const onnx_dq_const *b = onnx_q_find_dq(cx, mm->ins[1]);
    if (!dequantized(mm->ins[0], &aq) || !b || b->n != 1)
        return GLOW_OK;
    glow_dtype kb;
    glow_dtype bt = glow_value_type(b->q)->dtype;
    onnx_qparam qb = { (float)b->scales[0], (int32_t)b->offsets[0] };
    if ((bt != GLOW_I8 && bt != GLOW_U8) || !onnx_q_kind(bt, &kb) || !(qb.scale > 0))
        return GLOW_OK;
    GLOW_TRY(onnx_q_view(cx, np, b->q, kb, qb, &bq));
    GLOW_TRY(onnx_build(cx, np, NK_MATMUL, (glow_value[]){ aq, bq }, 2, NULL, 0, res, 1, out));
    *fused = true;
    return GLOW_OK;
}

glow_status onnx_q_fuse_product(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                glow_dtype qk, onnx_qparam q, glow_value *out, bool *fused)
{
    *fused = false;
    const glow_node *p = x.node;
    if (x.res != 0 || glow_value_type(x)->dtype != GLOW_F32)
        return GLOW_OK;
    glow_type res = glow_type_scalar(qk);
    res.scale = q.scale;
    res.offset = q.offset;
    if (p->kind == NK_CONV && p->nin >= 2)
        return fuse_conv(cx, np, p, &res, out, fused);
    if (p->kind == NK_MATMUL)
        return fuse_matmul(cx, np, p, &res, out, fused);
    return GLOW_OK;
}

/* --- plain arithmetic, for parameters computed at run time --- */

/* v - zp (zp optional input `zi`) cast to `ct`. A 1-D zero point of more than one value is
 * per row (matrix A: axis rank-2) or per output channel (conv weights: axis 0); `axis` < 0
 * leaves it to NumPy broadcasting (per column of B). */
static glow_status sub_zero_point(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int zi,
                                  int axis, glow_dtype ct, glow_value *out)
{
    GLOW_TRY(check_zero_kind(cx, np, zi, v));
    GLOW_TRY(onnx_cast(cx, np, v, ct, out));
    if (!onnx_has_input(np, zi))
        return GLOW_OK;
    glow_value zp;
    GLOW_TRY(onnx_input(cx, np, zi, &zp));
    const glow_type *vt = glow_value_type(v), *zt = glow_value_type(zp);
    if (zt->rank == 1 && zt->dims[0] > 1 && axis >= 0 && axis < vt->rank &&
        zt->dims[0] == vt->dims[axis]) {
        int64_t dims[GLOW_MAX_DIMS];
        for (int i = 0; i < vt->rank - axis; i++)
            dims[i] = i == 0 ? zt->dims[0] : 1;
        GLOW_TRY(onnx_reshape(cx, np, zp, vt->rank - axis, dims, &zp));
    }
    GLOW_TRY(onnx_cast(cx, np, zp, ct, &zp));
    return onnx_q_elem2(cx, np, NK_SUB, *out, zp, out);
}

/* Conv of f64 operands (Conv's attributes), the result exact integers. */
static glow_status float_conv(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_value *ins,
                              int nin, glow_value *out)
{
    glow_attr attrs[ONNX_CONV_MAX_ATTRS];
    int na;
    GLOW_TRY(onnx_conv_attrs(cx, np, ins[0], ins[1], attrs, &na));
    return onnx_build(cx, np, NK_CONV, ins, nin, attrs, na, NULL, 0, out);
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
    GLOW_TRY(onnx_q_elem2(cx, np, NK_MUL, s1, s2, &f));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_DIV, f, sy, &f));
    GLOW_TRY(onnx_cast(cx, np, f, GLOW_F64, &f));
    GLOW_TRY(onnx_cast(cx, np, acc, GLOW_F64, &acc));
    GLOW_TRY(onnx_q_elem2(cx, np, NK_MUL, acc, f, &acc));
    if (onnx_has_input(np, izy)) {
        glow_value zy;
        GLOW_TRY(onnx_input(cx, np, izy, &zy));
        GLOW_TRY(onnx_cast(cx, np, zy, GLOW_F64, &zy));
        GLOW_TRY(onnx_q_elem2(cx, np, NK_ADD, acc, zy, &acc));
    }
    double lo, hi;
    if (!onnx_q_range(out_t, &lo, &hi))
        return onnx_unsupported(cx, np, "output of type %s", glow_dtype_name(out_t));
    GLOW_TRY(onnx_build(cx, np, NK_ROUND, &acc, 1, NULL, 0, NULL, 0, &acc));
    GLOW_TRY(onnx_q_clip(cx, np, acc, lo, hi, &acc));
    return onnx_cast(cx, np, acc, out_t, out);
}

/* --- loaders --- */

/* Inputs: A, B, a_zero_point, b_zero_point. */
glow_status load_matmul_integer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    glow_value a, b, y;
    GLOW_TRY(onnx_input(cx, np, 0, &a));
    GLOW_TRY(onnx_input(cx, np, 1, &b));
    GLOW_TRY(need_8bit(cx, np, 0, a));
    GLOW_TRY(need_8bit(cx, np, 1, b));
    GLOW_TRY(check_zero_kind(cx, np, 2, a));
    GLOW_TRY(check_zero_kind(cx, np, 3, b));
    onnx_qparam qa = { 1.0f, 0 }, qb = { 1.0f, 0 };
    if (onnx_q_const_zero(cx, np, 2, &qa.offset) && onnx_q_const_zero(cx, np, 3, &qb.offset)) {
        glow_type res = glow_type_scalar(GLOW_I32);
        GLOW_TRY(quant_matmul(cx, np, a, qa, b, qb, &res, GLOW_I32, &y));
        return onnx_set_output(cx, np, 0, y);
    }
    int ra = glow_value_type(a)->rank;
    GLOW_TRY(sub_zero_point(cx, np, a, 2, ra >= 2 ? ra - 2 : -1, GLOW_I32, &a));
    GLOW_TRY(sub_zero_point(cx, np, b, 3, -1, GLOW_I32, &b));
    GLOW_TRY(onnx_matmul(cx, np, a, b, NULL, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* Inputs: x, w, x_zero_point, w_zero_point. */
glow_status load_conv_integer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    glow_value x, w, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &w));
    GLOW_TRY(need_8bit(cx, np, 0, x));
    GLOW_TRY(need_8bit(cx, np, 1, w));
    GLOW_TRY(check_zero_kind(cx, np, 2, x));
    GLOW_TRY(check_zero_kind(cx, np, 3, w));
    int64_t m;
    onnx_qparam qx = { 1.0f, 0 };
    if (out_channels(w, &m) && onnx_q_const_zero(cx, np, 2, &qx.offset)) {
        double *ones = GLOW_NEW_ARRAY(&cx->scratch, double, m);
        double *offsets = GLOW_NEW_ARRAY(&cx->scratch, double, m);
        if (const_channels(cx, np, 3, m, 0.0, offsets)) {
            for (int64_t k = 0; k < m; k++)
                ones[k] = 1.0;
            glow_type res = glow_type_scalar(GLOW_I32);
            GLOW_TRY(quant_conv(cx, np, x, qx, w, ones, offsets, -1, &res, &y));
            return onnx_set_output(cx, np, 0, y);
        }
    }
    GLOW_TRY(sub_zero_point(cx, np, x, 2, -1, GLOW_F64, &x));
    GLOW_TRY(sub_zero_point(cx, np, w, 3, 0, GLOW_F64, &w));
    GLOW_TRY(float_conv(cx, np, (glow_value[]){ x, w }, 2, &y));
    GLOW_TRY(onnx_cast(cx, np, y, GLOW_I32, &y));
    return onnx_set_output(cx, np, 0, y);
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
    GLOW_TRY(check_zero_kind(cx, np, 2, a));
    GLOW_TRY(check_zero_kind(cx, np, 5, b));
    GLOW_TRY(check_scales(cx, np, 1, 4, 6));
    glow_dtype out_t;
    GLOW_TRY(qlinear_out_kind(cx, np, a, 7, &out_t));
    onnx_qparam qa, qb, qy;
    if ((out_t == GLOW_U8 || out_t == GLOW_I8) && const_qparam(cx, np, 1, 2, &qa) &&
        const_qparam(cx, np, 4, 5, &qb) && const_qparam(cx, np, 6, 7, &qy)) {
        glow_type res = result_type(out_t, qy);
        GLOW_TRY(quant_matmul(cx, np, a, qa, b, qb, &res, out_t, &y));
        return onnx_set_output(cx, np, 0, y);
    }
    GLOW_TRY(sub_zero_point(cx, np, a, 2, -1, GLOW_I32, &a));
    GLOW_TRY(sub_zero_point(cx, np, b, 5, -1, GLOW_I32, &b));
    GLOW_TRY(onnx_matmul(cx, np, a, b, NULL, &y));
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
    GLOW_TRY(check_zero_kind(cx, np, 2, ins[0]));
    GLOW_TRY(check_zero_kind(cx, np, 5, ins[1]));
    GLOW_TRY(check_scales(cx, np, 1, 4, 6));
    glow_dtype out_t;
    GLOW_TRY(qlinear_out_kind(cx, np, ins[0], 7, &out_t));
    int64_t m;
    onnx_qparam qx, qy;
    if ((out_t == GLOW_U8 || out_t == GLOW_I8) && out_channels(ins[1], &m) &&
        const_qparam(cx, np, 1, 2, &qx) && const_qparam(cx, np, 6, 7, &qy)) {
        double *scales = GLOW_NEW_ARRAY(&cx->scratch, double, m);
        double *offsets = GLOW_NEW_ARRAY(&cx->scratch, double, m);
        if (const_channels(cx, np, 4, m, 1.0, scales) && usable_scales(cx, np, 4, scales, m) &&
            const_channels(cx, np, 5, m, 0.0, offsets)) {
            glow_type res = result_type(out_t, qy);
            GLOW_TRY(quant_conv(cx, np, ins[0], qx, ins[1], scales, offsets,
                                onnx_has_input(np, 8) ? 8 : -1, &res, &y));
            GLOW_TRY(onnx_q_view(cx, np, y, out_t, (onnx_qparam){ 0 }, &y));
            return onnx_set_output(cx, np, 0, y);
        }
    }
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
    GLOW_TRY(float_conv(cx, np, ins, nin, &y));
    GLOW_TRY(requantize(cx, np, y, 1, 4, 6, 7, true, out_t, &y));
    return onnx_set_output(cx, np, 0, y);
}
