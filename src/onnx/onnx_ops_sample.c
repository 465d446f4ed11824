// onnx_ops_sample.c - DeformConv: a convolution that reads its input at positions moved by
// run-time offsets, built from existing nodes.
//
// The sampling positions depend on values, so no convolution kernel applies; but their
// structure is fixed by the shapes. Each kernel tap's positions are computed elementwise from
// the offsets, the input is read at the four bilinear corners with GatherElements (zero
// outside the image, as ONNX's reference), and the sampled columns [N, C * kH * kW, oH * oW]
// meet the weights in one batched MatMul per group - the im2col form of convolution.
#include <string.h>

#include "onnx/onnx_internal.h"

static glow_status bin(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                       glow_value b, glow_value *out)
{
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, NULL, 0, out);
}

static glow_value num(onnx_ctx *cx, const Onnx__NodeProto *np, glow_dtype t, double v)
{
    return onnx_sub_scalar(cx, np, "c", t, v);
}

/* Per spatial dim (2-D only): the window's attributes with ONNX's defaults. */
typedef struct {
    int64_t k[2], s[2], d[2], pb[2], pe[2], out[2];
} window2;

static glow_status read_window(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_type *xt,
                               const glow_type *wt, window2 *w)
{
    const int64_t *v;
    int n;
    for (int i = 0; i < 2; i++) {
        w->k[i] = wt->dims[2 + i];
        w->s[i] = w->d[i] = 1;
        w->pb[i] = w->pe[i] = 0;
    }
    if ((n = onnx_attr_ints(np, "kernel_shape", &v)) >= 0 &&
        (n != 2 || v[0] != w->k[0] || v[1] != w->k[1]))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "kernel_shape does not match W");
    if ((n = onnx_attr_ints(np, "strides", &v)) >= 0) {
        if (n != 2 || v[0] < 1 || v[1] < 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "strides must be 2 positive values");
        w->s[0] = v[0], w->s[1] = v[1];
    }
    if ((n = onnx_attr_ints(np, "dilations", &v)) >= 0) {
        if (n != 2 || v[0] < 1 || v[1] < 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "dilations must be 2 positive values");
        w->d[0] = v[0], w->d[1] = v[1];
    }
    if ((n = onnx_attr_ints(np, "pads", &v)) >= 0) {
        if (n != 4 || v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "pads must be 4 values >= 0");
        w->pb[0] = v[0], w->pb[1] = v[1], w->pe[0] = v[2], w->pe[1] = v[3];
    }
    for (int i = 0; i < 2; i++) {
        int64_t span = w->d[i] * (w->k[i] - 1) + 1, len = xt->dims[2 + i] + w->pb[i] + w->pe[i];
        if (len < span)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "the kernel does not fit the padded "
                             "input");
        w->out[i] = (len - span) / w->s[i] + 1;
    }
    return GLOW_OK;
}

/* The base sampling position of each tap and output position along dim i, as a constant
 * [kH * kW, oH * oW] (dim 0: rows, dim 1: columns): out * stride - pad + tap * dilation. */
static glow_value base_positions(onnx_ctx *cx, const Onnx__NodeProto *np, const window2 *w,
                                 int i, glow_dtype ft, double *vals, void *buf)
{
    int64_t kk = w->k[0] * w->k[1], p = w->out[0] * w->out[1];
    for (int64_t t = 0; t < kk; t++)
        for (int64_t q = 0; q < p; q++) {
            int64_t tap = i == 0 ? t / w->k[1] : t % w->k[1];
            int64_t o = i == 0 ? q / w->out[1] : q % w->out[1];
            vals[t * p + q] = (double)(o * w->s[i] - w->pb[i] + tap * w->d[i]);
        }
    return onnx_f64_constant(cx, np, i == 0 ? "base_h" : "base_w", ft, 2, (int64_t[]){ kk, p },
                             vals, buf);
}

/* The 0/1 factor of corner coordinate c (float) being inside [0, len), and c clamped to an
 * index there (i64). */
static glow_status corner(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value c, int64_t len,
                          glow_value *ok, glow_value *idx)
{
    glow_dtype ft = glow_value_type(c)->dtype;
    glow_value ge, le;
    GLOW_TRY(bin(cx, np, NK_GREATER_EQUAL, c, num(cx, np, ft, 0.0), &ge));
    GLOW_TRY(bin(cx, np, NK_LESS_EQUAL, c, num(cx, np, ft, (double)(len - 1)), &le));
    GLOW_TRY(bin(cx, np, NK_AND, ge, le, ok));
    GLOW_TRY(onnx_cast(cx, np, *ok, ft, ok));
    glow_attr a[2] = { GLOW_AF(MIN, 0.0), GLOW_AF(MAX, (double)(len - 1)) };
    GLOW_TRY(onnx_build(cx, np, NK_CLIP, &c, 1, a, 2, NULL, 0, &c));
    return onnx_cast(cx, np, c, GLOW_I64, idx);
}

/* DeformConv (opset 19+, 2-D): X [N, C, H, W], W [M, C / group, kH, kW], offset
 * [N, offset_group * kH * kW * 2, oH, oW] (per tap: the h then the w offset), B [M]?,
 * mask [N, offset_group * kH * kW, oH, oW]?. */
glow_status load_deform_conv(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    glow_value x, wv, off, bias = { 0 }, mask = { 0 };
    GLOW_TRY(onnx_check_inputs(cx, np, 3, 5));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &wv));
    GLOW_TRY(onnx_input(cx, np, 2, &off));
    if (onnx_has_input(np, 3))
        GLOW_TRY(onnx_input(cx, np, 3, &bias));
    if (onnx_has_input(np, 4))
        GLOW_TRY(onnx_input(cx, np, 4, &mask));
    const glow_type *xt = glow_value_type(x), *wt = glow_value_type(wv);
    glow_dtype ft = xt->dtype;
    if (xt->rank != 4)
        return onnx_unsupported(cx, np, "%d-D input (glowc supports 2-D DeformConv)",
                                xt->rank - 2);
    if (!glow_dtype_is_float(ft) || wt->rank != 4 || wt->dtype != ft)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "X and W must be float [N, C, H, W] and "
                         "[M, C / group, kH, kW] of one type");
    int64_t n = xt->dims[0], c = xt->dims[1], h = xt->dims[2], wd = xt->dims[3];
    int64_t m = wt->dims[0], g = onnx_attr_int(np, "group", 1);
    int64_t og = onnx_attr_int(np, "offset_group", 1);
    if (g < 1 || og < 1 || c % g || m % g || c % og || wt->dims[1] != c / g)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "group %lld and offset_group %lld must "
                         "divide the channels (C %lld, M %lld) and W must be [M, C / group, ...]",
                         (long long)g, (long long)og, (long long)c, (long long)m);
    window2 w;
    GLOW_TRY(read_window(cx, np, xt, wt, &w));
    int64_t kk = w.k[0] * w.k[1], p = w.out[0] * w.out[1];
    const int64_t off_dims[4] = { n, og * kk * 2, w.out[0], w.out[1] };
    const int64_t mask_dims[4] = { n, og * kk, w.out[0], w.out[1] };
    glow_type off_t = glow_type_make(ft, 4, off_dims), mask_t = glow_type_make(ft, 4, mask_dims);
    if (!glow_type_equal(glow_value_type(off), &off_t) ||
        (mask.node && !glow_type_equal(glow_value_type(mask), &mask_t)))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "offset must be [%lld, %lld, %lld, %lld] "
                         "and mask [%lld, %lld, ...] of X's type", (long long)n,
                         (long long)off_dims[1], (long long)w.out[0], (long long)w.out[1],
                         (long long)n, (long long)mask_dims[1]);
    if (bias.node && glow_type_numel(glow_value_type(bias)) != m)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "B must have M = %lld values",
                         (long long)m);

    /* Sampling positions [N, og, kk, p] for h and w: base + offset. */
    double *vals;
    void *buf[2];
    GLOW_TRY(onnx_const_buffer(cx, np, kk * p, sizeof(double), (void **)&vals));
    glow_value pos[2];
    int64_t od[5] = { n, og, kk, 2, p };
    glow_value o5;
    GLOW_TRY(onnx_reshape(cx, np, off, 5, od, &o5));
    for (int i = 0; i < 2; i++) {
        GLOW_TRY(onnx_const_buffer(cx, np, kk * p, glow_dtype_size(ft), &buf[i]));
        glow_value base = base_positions(cx, np, &w, i, ft, vals, buf[i]), oi;
        GLOW_TRY(onnx_slice_axis(cx, np, o5, 3, i, i + 1, &oi));
        GLOW_TRY(onnx_reshape(cx, np, oi, 4, (int64_t[]){ n, og, kk, p }, &oi));
        GLOW_TRY(bin(cx, np, NK_ADD, oi, base, &pos[i]));
    }
    /* Bilinear sampling: four corners, each with its weight and an inside factor. */
    glow_value lo[2], fr[2];
    for (int i = 0; i < 2; i++) {
        GLOW_TRY(onnx_build(cx, np, NK_FLOOR, &pos[i], 1, NULL, 0, NULL, 0, &lo[i]));
        GLOW_TRY(bin(cx, np, NK_SUB, pos[i], lo[i], &fr[i]));
    }
    int64_t len[2] = { h, wd };
    glow_value xf, cols = { 0 };
    GLOW_TRY(onnx_reshape(cx, np, x, 3, (int64_t[]){ n, c, h * wd }, &xf));
    const int64_t gdims[4] = { n, og, c / og, kk * p }, cdims[3] = { n, c, kk * p };
    for (int corner_i = 0; corner_i < 4; corner_i++) {
        glow_value wgt = { 0 }, flat = { 0 };
        for (int i = 0; i < 2; i++) {
            bool high = (corner_i >> (1 - i)) & 1;
            glow_value cc = lo[i], fw = fr[i], ok, idx;
            if (high) {
                GLOW_TRY(bin(cx, np, NK_ADD, lo[i], num(cx, np, ft, 1.0), &cc));
            } else {
                GLOW_TRY(bin(cx, np, NK_SUB, num(cx, np, ft, 1.0), fr[i], &fw));
            }
            GLOW_TRY(corner(cx, np, cc, len[i], &ok, &idx));
            GLOW_TRY(bin(cx, np, NK_MUL, fw, ok, &fw));
            GLOW_TRY(wgt.node ? bin(cx, np, NK_MUL, wgt, fw, &wgt) : (wgt = fw, GLOW_OK));
            if (i == 0)
                GLOW_TRY(bin(cx, np, NK_MUL, idx, num(cx, np, GLOW_I64, (double)wd), &flat));
            else
                GLOW_TRY(bin(cx, np, NK_ADD, flat, idx, &flat));
        }
        if (mask.node) {
            glow_value mk;
            GLOW_TRY(onnx_reshape(cx, np, mask, 4, (int64_t[]){ n, og, kk, p }, &mk));
            GLOW_TRY(bin(cx, np, NK_MUL, wgt, mk, &wgt));
        }
        /* Each offset group's positions serve its C / og channels. */
        glow_value idx4, w4, v;
        GLOW_TRY(onnx_reshape(cx, np, flat, 4, (int64_t[]){ n, og, 1, kk * p }, &idx4));
        GLOW_TRY(onnx_broadcast_to(cx, np, idx4, 4, gdims, &idx4));
        GLOW_TRY(onnx_reshape(cx, np, idx4, 3, cdims, &idx4));
        glow_attr ax = GLOW_AI(AXIS, 2);
        GLOW_TRY(onnx_build(cx, np, NK_GATHER_ELEMENTS, (glow_value[]){ xf, idx4 }, 2, &ax, 1,
                            NULL, 0, &v));
        GLOW_TRY(onnx_reshape(cx, np, wgt, 4, (int64_t[]){ n, og, 1, kk * p }, &w4));
        GLOW_TRY(onnx_broadcast_to(cx, np, w4, 4, gdims, &w4));
        GLOW_TRY(onnx_reshape(cx, np, w4, 3, cdims, &w4));
        GLOW_TRY(bin(cx, np, NK_MUL, v, w4, &v));
        GLOW_TRY(cols.node ? bin(cx, np, NK_ADD, cols, v, &cols) : (cols = v, GLOW_OK));
    }
    /* Y[n, g, m', p] = W[g, m', c' k] x cols[n, g, c' k, p] (batch dims broadcast). */
    glow_value y, wg;
    GLOW_TRY(onnx_reshape(cx, np, cols, 4, (int64_t[]){ n, g, c / g * kk, p }, &cols));
    GLOW_TRY(onnx_reshape(cx, np, wv, 4, (int64_t[]){ 1, g, m / g, c / g * kk }, &wg));
    GLOW_TRY(onnx_matmul(cx, np, wg, cols, NULL, &y));
    GLOW_TRY(onnx_reshape(cx, np, y, 4, (int64_t[]){ n, m, w.out[0], w.out[1] }, &y));
    if (bias.node) {
        GLOW_TRY(onnx_cast(cx, np, bias, ft, &bias));
        GLOW_TRY(onnx_reshape(cx, np, bias, 4, (int64_t[]){ 1, m, 1, 1 }, &bias));
        GLOW_TRY(bin(cx, np, NK_ADD, y, bias, &y));
    }
    return onnx_set_output(cx, np, 0, y);
}
