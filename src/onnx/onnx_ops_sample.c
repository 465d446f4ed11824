// onnx_ops_sample.c - Ops that sample their input bilinearly at run-time positions, built from
// existing nodes: DeformConv (a convolution whose taps move by run-time offsets) and RoiAlign
// (pooling over run-time boxes).
//
// The positions depend on values, so no convolution or pooling kernel applies; but their
// structure is fixed by the shapes and attributes. Positions are computed elementwise, the
// input is read at the four bilinear corners with gathers, and the samples are combined with
// MatMul (DeformConv's im2col columns [N, C * kH * kW, oH * oW] times the weights, batched over
// groups) or reductions (RoiAlign's average or maximum over each bin's samples).
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

/* --- RoiAlign --- */

/* One coordinate of RoiAlign's samples, as ONNX's reference (ONNX Runtime's algorithm) clamps
 * it: c (float [R, Q]) into [0, len - 1], its low corner floor(c), the high one (never past the
 * edge) and the fraction. */
static glow_status roi_axis(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value c, int64_t len,
                            glow_value *lo, glow_value *hi, glow_value *frac)
{
    glow_dtype ft = glow_value_type(c)->dtype;
    glow_attr a[2] = { GLOW_AF(MIN, 0.0), GLOW_AF(MAX, (double)(len - 1)) };
    GLOW_TRY(onnx_build(cx, np, NK_CLIP, &c, 1, a, 2, NULL, 0, &c));
    glow_value f, h;
    GLOW_TRY(onnx_build(cx, np, NK_FLOOR, &c, 1, NULL, 0, NULL, 0, &f));
    GLOW_TRY(bin(cx, np, NK_SUB, c, f, frac));
    GLOW_TRY(bin(cx, np, NK_ADD, f, num(cx, np, ft, 1.0), &h));
    GLOW_TRY(bin(cx, np, NK_MIN, h, num(cx, np, ft, (double)(len - 1)), &h));
    GLOW_TRY(onnx_cast(cx, np, f, GLOW_I64, lo));
    return onnx_cast(cx, np, h, GLOW_I64, hi);
}

/* RoiAlign: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> [R, C, oh, ow].
 * Each output bin averages (or, mode max, takes the largest weighted corner of) a fixed
 * sampling_ratio x sampling_ratio grid of bilinear samples. */
glow_status load_roi_align(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                           glow_node_kind kind)
{
    glow_value x, rois, bidx;
    GLOW_TRY(onnx_check_inputs(cx, np, 3, 3));
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &rois));
    GLOW_TRY(onnx_input(cx, np, 2, &bidx));
    const glow_type *xt = glow_value_type(x), *rt = glow_value_type(rois);
    glow_dtype ft = xt->dtype;
    if (xt->rank != 4 || !glow_dtype_is_float(ft) || rt->rank != 2 || rt->dims[1] != 4 ||
        glow_value_type(bidx)->rank != 1 || glow_value_type(bidx)->dims[0] != rt->dims[0] ||
        !glow_dtype_is_int(glow_value_type(bidx)->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "expects X float [N, C, H, W], rois "
                         "[R, 4] and integer batch_indices [R]");
    const char *mode = onnx_attr_str(cx, np, "mode", "avg");
    const char *coord = onnx_attr_str(cx, np, "coordinate_transformation_mode",
                                      opset >= 16 ? "half_pixel" : "output_half_pixel");
    bool max_mode = !strcmp(mode, "max"), half = !strcmp(coord, "half_pixel");
    if (!max_mode && strcmp(mode, "avg"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' (avg or max)", mode);
    if (!half && strcmp(coord, "output_half_pixel"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "coordinate_transformation_mode '%s' "
                         "(half_pixel or output_half_pixel)", coord);
    int64_t oh = onnx_attr_int(np, "output_height", 1), ow = onnx_attr_int(np, "output_width", 1);
    int64_t sr = onnx_attr_int(np, "sampling_ratio", 0);
    double scale = onnx_attr_float(np, "spatial_scale", 1.0f);
    if (oh < 1 || ow < 1 || oh > 4096 || ow > 4096 || sr < 0 || sr > 64)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "output size %lld x %lld or sampling_ratio "
                         "%lld out of range", (long long)oh, (long long)ow, (long long)sr);
    if (sr == 0)
        return onnx_unsupported(cx, np, "sampling_ratio=0 (a sample count that depends on each "
                                "box's size); give sampling_ratio > 0");
    int64_t nr = rt->dims[0], n = xt->dims[0], c = xt->dims[1], h = xt->dims[2], w = xt->dims[3];
    if (nr == 0 || n * c * h * w == 0)
        return onnx_unsupported(cx, np, "no boxes or an empty X");
    int64_t q = oh * ow * sr * sr;

    /* Per box: start and bin size along y and x ([R, 1]). */
    glow_value r, start[2], bsz[2];
    GLOW_TRY(onnx_cast(cx, np, rois, ft, &r));
    double shift = half ? 0.5 : 0.0;
    for (int i = 0; i < 2; i++) {   /* 0: y (rois columns 1, 3), 1: x (columns 0, 2) */
        glow_value a, b, size;
        GLOW_TRY(onnx_slice_axis(cx, np, r, 1, 1 - i, 2 - i, &a));
        GLOW_TRY(onnx_slice_axis(cx, np, r, 1, 3 - i, 4 - i, &b));
        GLOW_TRY(bin(cx, np, NK_MUL, a, num(cx, np, ft, scale), &a));
        GLOW_TRY(bin(cx, np, NK_SUB, a, num(cx, np, ft, shift), &start[i]));
        GLOW_TRY(bin(cx, np, NK_MUL, b, num(cx, np, ft, scale), &b));
        GLOW_TRY(bin(cx, np, NK_SUB, b, num(cx, np, ft, shift), &b));
        GLOW_TRY(bin(cx, np, NK_SUB, b, start[i], &size));
        if (!half)   /* the legacy mode makes every box at least one pixel */
            GLOW_TRY(bin(cx, np, NK_MAX, size, num(cx, np, ft, 1.0), &size));
        GLOW_TRY(bin(cx, np, NK_DIV, size, num(cx, np, ft, (double)(i == 0 ? oh : ow)),
                     &bsz[i]));
    }
    /* Sample q = ((py * ow + px) * sr + iy) * sr + ix sits at bin + (i + 0.5) / sr bins. */
    double *vals;
    void *buf[2];
    GLOW_TRY(onnx_const_buffer(cx, np, q, sizeof(double), (void **)&vals));
    glow_value pos[2], empty = { 0 };
    for (int i = 0; i < 2; i++) {
        for (int64_t k = 0; k < q; k++) {
            int64_t ix = k % sr, iy = k / sr % sr, px = k / (sr * sr) % ow, py = k / (sr * sr * ow);
            vals[k] = i == 0 ? (double)py + ((double)iy + 0.5) / (double)sr
                             : (double)px + ((double)ix + 0.5) / (double)sr;
        }
        GLOW_TRY(onnx_const_buffer(cx, np, q, glow_dtype_size(ft), &buf[i]));
        glow_value grid = onnx_f64_constant(cx, np, i == 0 ? "grid_y" : "grid_x", ft, 2,
                                            (int64_t[]){ 1, q }, vals, buf[i]);
        glow_value lo, hi, out;
        GLOW_TRY(bin(cx, np, NK_MUL, bsz[i], grid, &pos[i]));
        GLOW_TRY(bin(cx, np, NK_ADD, start[i], pos[i], &pos[i]));
        /* Samples more than one pixel outside the image read nothing. */
        int64_t len = i == 0 ? h : w;
        GLOW_TRY(bin(cx, np, NK_LESS, pos[i], num(cx, np, ft, -1.0), &lo));
        GLOW_TRY(bin(cx, np, NK_GREATER, pos[i], num(cx, np, ft, (double)len), &hi));
        GLOW_TRY(bin(cx, np, NK_OR, lo, hi, &out));
        GLOW_TRY(empty.node ? bin(cx, np, NK_OR, empty, out, &empty) : (empty = out, GLOW_OK));
    }
    glow_value inside;
    GLOW_TRY(onnx_build(cx, np, NK_NOT, &empty, 1, NULL, 0, NULL, 0, &inside));
    GLOW_TRY(onnx_cast(cx, np, inside, ft, &inside));
    glow_value lo[2], hi[2], fr[2];
    GLOW_TRY(roi_axis(cx, np, pos[0], h, &lo[0], &hi[0], &fr[0]));
    GLOW_TRY(roi_axis(cx, np, pos[1], w, &lo[1], &hi[1], &fr[1]));

    /* X as rows [N * H * W, C]; a sample's row is b * H * W + y * W + x. */
    glow_value xr, base, b64;
    glow_attr perm = GLOW_AINTS(PERM, ((int64_t[]){ 0, 2, 3, 1 }), 4);
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &x, 1, &perm, 1, NULL, 0, &xr));
    GLOW_TRY(onnx_reshape(cx, np, xr, 2, (int64_t[]){ n * h * w, c }, &xr));
    GLOW_TRY(onnx_cast(cx, np, bidx, GLOW_I64, &b64));
    GLOW_TRY(onnx_reshape(cx, np, b64, 2, (int64_t[]){ nr, 1 }, &b64));
    GLOW_TRY(bin(cx, np, NK_MUL, b64, num(cx, np, GLOW_I64, (double)(h * w)), &base));
    glow_value acc = { 0 };
    for (int k = 0; k < 4; k++) {
        glow_value yy = (k & 2) ? hi[0] : lo[0], xx = (k & 1) ? hi[1] : lo[1];
        glow_value wy = fr[0], wx = fr[1], row, v, wgt;
        if (!(k & 2))
            GLOW_TRY(bin(cx, np, NK_SUB, num(cx, np, ft, 1.0), fr[0], &wy));
        if (!(k & 1))
            GLOW_TRY(bin(cx, np, NK_SUB, num(cx, np, ft, 1.0), fr[1], &wx));
        GLOW_TRY(bin(cx, np, NK_MUL, wy, wx, &wgt));
        GLOW_TRY(bin(cx, np, NK_MUL, wgt, inside, &wgt));
        GLOW_TRY(bin(cx, np, NK_MUL, yy, num(cx, np, GLOW_I64, (double)w), &row));
        GLOW_TRY(bin(cx, np, NK_ADD, row, xx, &row));
        GLOW_TRY(bin(cx, np, NK_ADD, row, base, &row));
        glow_attr ax = GLOW_AI(AXIS, 0);
        GLOW_TRY(onnx_build(cx, np, NK_GATHER, (glow_value[]){ xr, row }, 2, &ax, 1, NULL, 0,
                            &v));   /* [R, Q, C] */
        GLOW_TRY(onnx_reshape(cx, np, wgt, 3, (int64_t[]){ nr, q, 1 }, &wgt));
        GLOW_TRY(bin(cx, np, NK_MUL, v, wgt, &v));
        GLOW_TRY(acc.node ? bin(cx, np, max_mode ? NK_MAX : NK_ADD, acc, v, &acc)
                          : (acc = v, GLOW_OK));
    }
    /* Over each bin's sr * sr samples: the mean, or the maximum. */
    glow_value y;
    int64_t axes[1] = { 2 };
    glow_attr red[2] = { GLOW_AINTS(AXES, axes, 1), GLOW_AI(KEEPDIMS, 0) };
    GLOW_TRY(onnx_reshape(cx, np, acc, 4, (int64_t[]){ nr, oh * ow, sr * sr, c }, &y));
    GLOW_TRY(onnx_build(cx, np, max_mode ? NK_REDUCE_MAX : NK_REDUCE_MEAN, &y, 1, red, 2, NULL,
                        0, &y));
    glow_attr back = GLOW_AINTS(PERM, ((int64_t[]){ 0, 2, 1 }), 3);
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &y, 1, &back, 1, NULL, 0, &y));
    GLOW_TRY(onnx_reshape(cx, np, y, 4, (int64_t[]){ nr, c, oh, ow }, &y));
    return onnx_set_output(cx, np, 0, y);
}
