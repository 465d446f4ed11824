// onnx_ops_misc.c - CenterCropPad, AffineGrid, Col2Im, MaxUnpool, Det and GridSample, built from
// constants computed at import and existing node kinds.
//
// The value-independent structure of each op (base grids, scatter indices) becomes a constant
// and the data-dependent part runs as MatMul, Scatter/GatherElements, Pad and elementwise nodes, so
// no node kind is needed for them.
#include <string.h>

#include "onnx/onnx_internal.h"

/* --- shape-changing ops --- */

/* Crops (centered, the extra element taken from the end) or zero-pads each listed axis to
 * `shape`: one Pad with negative pads where cropping. */
glow_status load_center_crop_pad(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                 glow_node_kind kind)
{
    glow_value x, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int64_t *shape;
    int n;
    GLOW_TRY(onnx_input_ints(cx, np, 1, &shape, &n));
    GLOW_TRY(onnx_attr_check(cx, np, "axes", 7));
    const int64_t *axes_in = NULL;
    int naxes = onnx_attr_ints(np, "axes", &axes_in);
    bool has_axes = naxes >= 0;
    if (!has_axes)
        naxes = xt->rank;
    if (naxes != n)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "'shape' has %d values for %d axes", n,
                         naxes);
    int64_t pads[2 * GLOW_MAX_DIMS] = { 0 };
    bool seen[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < n; i++) {
        int ax = i;
        if (has_axes)
            GLOW_TRY(onnx_axis(cx, np, axes_in[i], xt->rank, &ax));
        if (seen[ax])
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %d is listed twice", ax);
        seen[ax] = true;
        if (shape[i] < 0 || shape[i] > ((int64_t)1 << 40))
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "shape[%d] = %lld", i,
                             (long long)shape[i]);
        int64_t d = shape[i] - xt->dims[ax], mag = d < 0 ? -d : d, sign = d < 0 ? -1 : 1;
        pads[ax] = sign * (mag / 2);
        pads[xt->rank + ax] = sign * (mag - mag / 2);
    }
    glow_attr a[3] = { GLOW_AINTS(PADS, pads, 2 * xt->rank), GLOW_ASTR(MODE, "constant"),
                       GLOW_AF(VALUE, 0.0) };
    GLOW_TRY(onnx_build(cx, np, NK_PAD, &x, 1, a, 3, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* grid[n, spatial..., :] = theta[n] @ (x, y[, z], 1): the base coordinates are a constant
 * [P, r+1] (P spatial points), broadcast over N and multiplied by theta transposed. */
glow_status load_affine_grid(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    glow_value theta, y;
    GLOW_TRY(onnx_input(cx, np, 0, &theta));
    int64_t *size;
    int ns;
    GLOW_TRY(onnx_input_ints(cx, np, 1, &size, &ns));
    const glow_type *tt = glow_value_type(theta);
    int r = ns - 2;   /* 2 or 3 spatial dims */
    if ((r != 2 && r != 3) || tt->rank != 3 || tt->dims[1] != r || tt->dims[2] != r + 1 ||
        tt->dims[0] != size[0] || !glow_dtype_is_float(tt->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "theta must be [N, %d, %d] floats and size "
                         "[N, C, (D,) H, W]", r, r + 1);
    bool align = onnx_attr_int(np, "align_corners", 0) != 0;
    int64_t npts = 1;
    for (int i = 2; i < ns; i++) {
        if (size[i] < 1 || size[i] > (1 << 20) || npts > (int64_t)(1 << 24) / size[i])
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "size[%d] = %lld", i,
                             (long long)size[i]);
        npts *= size[i];
    }
    double *base;
    void *buf;
    GLOW_TRY(onnx_const_buffer(cx, np, npts * (r + 1), sizeof(double), (void **)&base));
    GLOW_TRY(onnx_const_buffer(cx, np, npts * (r + 1), glow_dtype_size(tt->dtype), &buf));
    for (int64_t p = 0; p < npts; p++) {
        int64_t rest = p;
        /* Coordinates in (x, y, z) order: the innermost spatial dim is x. */
        for (int k = 0; k < r; k++) {
            int64_t len = size[ns - 1 - k], idx = rest % len;
            rest /= len;
            base[p * (r + 1) + k] = align ? (len > 1 ? -1.0 + 2.0 * (double)idx / (double)(len - 1)
                                                     : -1.0)
                                          : (2.0 * (double)idx + 1.0) / (double)len - 1.0;
        }
        base[p * (r + 1) + r] = 1.0;
    }
    int64_t bdims[3] = { size[0], npts, r + 1 };
    glow_value b = onnx_f64_constant(cx, np, "base_grid", tt->dtype, 2, &bdims[1], base, buf);
    GLOW_TRY(onnx_broadcast_to(cx, np, b, 3, bdims, &b));
    static const int64_t perm[3] = { 0, 2, 1 };
    glow_attr pa = GLOW_AINTS(PERM, perm, 3);
    glow_value tht;
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &theta, 1, &pa, 1, NULL, 0, &tht));
    GLOW_TRY(onnx_build(cx, np, NK_MATMUL, (glow_value[]){ b, tht }, 2, NULL, 0, NULL, 0, &y));
    int64_t odims[GLOW_MAX_DIMS];
    odims[0] = size[0];
    for (int i = 0; i < r; i++)
        odims[1 + i] = size[2 + i];
    odims[1 + r] = r;
    GLOW_TRY(onnx_reshape(cx, np, y, r + 2, odims, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* Reads an optional ints attribute of `n` values >= lo (dflt when absent). */
static glow_status ints_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name, int n,
                             int64_t lo, int64_t dflt, int64_t *out)
{
    GLOW_TRY(onnx_attr_check(cx, np, name, 7));
    const int64_t *v;
    int c = onnx_attr_ints(np, name, &v);
    for (int i = 0; i < n; i++)
        out[i] = c < 0 ? dflt : 0;
    if (c < 0)
        return GLOW_OK;
    if (c != n)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' has %d values, expected %d", name, c, n);
    for (int i = 0; i < n; i++) {
        if (v[i] < lo || v[i] > (1 << 20))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s'[%d] = %lld", name, i,
                             (long long)v[i]);
        out[i] = v[i];
    }
    return GLOW_OK;
}

/* Scatters v (any shape, flattened to [lead, count]) into zeros [lead, size + 1] along axis 1
 * at constant positions idx[count] (size = dropped), summing or overwriting, and returns the
 * first `size` columns. */
static glow_status scatter_flat(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                                glow_value idx, int64_t lead, int64_t count, int64_t size,
                                const char *reduction, glow_value *out)
{
    const glow_type *vt = glow_value_type(v);
    int64_t vd[2] = { lead, count }, zd[2] = { lead, size + 1 };
    if (size + 1 > (int64_t)(ONNX_FOLD_MAX_BYTES / 8) / (lead ? lead : 1))
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "result of %lld x %lld values is too large",
                         (long long)lead, (long long)size);
    glow_type zt = glow_type_make(vt->dtype, 2, zd);
    glow_value zeros = onnx_constant(cx, onnx_sub_name(cx, np, "zeros"), &zt, NULL);
    if (!zeros.node)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "out of memory for the result");
    GLOW_TRY(onnx_reshape(cx, np, v, 2, vd, &v));
    if (glow_value_type(idx)->rank == 1) {
        int64_t one[2] = { 1, count };
        GLOW_TRY(onnx_reshape(cx, np, idx, 2, one, &idx));
        GLOW_TRY(onnx_broadcast_to(cx, np, idx, 2, vd, &idx));
    }
    glow_attr a[2] = { GLOW_AI(AXIS, 1), GLOW_ASTR(REDUCTION, reduction) };
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_SCATTER_ELEMENTS, (glow_value[]){ zeros, idx, v }, 3, a, 2,
                        NULL, 0, &y));
    return onnx_slice_axis(cx, np, y, 1, 0, size, out);
}

/* input [N, C * prod(block), L] -> [N, C, image...]: every column element is added to the
 * image position it came from (a constant index per element; padding positions dropped). */
glow_status load_col2im(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    int64_t *img, *blk;
    int ni, nb;
    GLOW_TRY(onnx_input_ints(cx, np, 1, &img, &ni));
    GLOW_TRY(onnx_input_ints(cx, np, 2, &blk, &nb));
    const glow_type *xt = glow_value_type(x);
    if (ni != nb || ni < 1 || ni + 2 > GLOW_MAX_DIMS || xt->rank != 3)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input must be [N, C*K, L] with matching "
                         "image_shape and block_shape");
    int64_t dil[GLOW_MAX_DIMS], str[GLOW_MAX_DIMS], pads[2 * GLOW_MAX_DIMS];
    GLOW_TRY(ints_attr(cx, np, "dilations", ni, 1, 1, dil));
    GLOW_TRY(ints_attr(cx, np, "strides", ni, 1, 1, str));
    GLOW_TRY(ints_attr(cx, np, "pads", 2 * ni, 0, 0, pads));
    int64_t k = 1, l = 1, hw = 1, cols[GLOW_MAX_DIMS];
    for (int i = 0; i < ni; i++) {
        if (img[i] < 1 || img[i] > (1 << 20) || blk[i] < 1 || blk[i] > (1 << 20))
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "image or block dim %d out of range", i);
        cols[i] = (img[i] + pads[i] + pads[ni + i] - dil[i] * (blk[i] - 1) - 1) / str[i] + 1;
        if (cols[i] < 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "no sliding blocks along dim %d", i);
        k *= blk[i];
        l *= cols[i];
        hw *= img[i];
        if (k > (1 << 24) || l > (1 << 24) || hw > (1 << 24))
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "image or blocks too large");
    }
    if (xt->dims[1] % k != 0 || xt->dims[2] != l)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input dims must be [N, C*%lld, %lld]",
                         (long long)k, (long long)l);
    int64_t c = xt->dims[1] / k, n = xt->dims[0];
    if (k * l > (int64_t)(ONNX_FOLD_MAX_BYTES / 8))
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "too many column elements");
    int64_t *idx;
    GLOW_TRY(onnx_const_buffer(cx, np, k * l, sizeof(int64_t), (void **)&idx));
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t ll = 0; ll < l; ll++) {
            int64_t kr = kk, lr = ll, pos = 0, scale = 1;
            bool inside = true;
            for (int i = ni - 1; i >= 0; i--) {
                int64_t off = kr % blk[i], cl = lr % cols[i];
                kr /= blk[i];
                lr /= cols[i];
                int64_t p = cl * str[i] - pads[i] + off * dil[i];
                inside = inside && p >= 0 && p < img[i];
                pos += p * scale;
                scale *= img[i];
            }
            idx[kk * l + ll] = inside ? pos : hw;
        }
    int64_t kl = k * l;
    glow_type it = glow_type_make(GLOW_I64, 1, &kl);
    glow_value iv = onnx_constant(cx, onnx_sub_name(cx, np, "indices"), &it, idx);
    GLOW_TRY(scatter_flat(cx, np, x, iv, n * c, kl, hw, "add", &y));
    int64_t od[GLOW_MAX_DIMS] = { n, c };
    memcpy(&od[2], img, sizeof(int64_t) * (size_t)ni);
    GLOW_TRY(onnx_reshape(cx, np, y, ni + 2, od, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* Y = zeros of the pooled input's original shape with X written at the flat positions I, then
 * zero-padded at the end to output_shape when given. */
glow_status load_max_unpool(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, ind, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &ind));
    const glow_type *xt = glow_value_type(x), *it = glow_value_type(ind);
    int nsp = xt->rank - 2;
    if (nsp < 1 || nsp > 3 || !glow_type_same_shape(xt, it) ||
        (it->dtype != GLOW_I64 && it->dtype != GLOW_I32))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "X must be [N, C, 1-3 spatial dims] and I "
                         "integer indices of the same shape");
    if (!onnx_attr(np, "kernel_shape"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required 'kernel_shape'");
    int64_t ks[3], st[3], pads[6];
    GLOW_TRY(ints_attr(cx, np, "kernel_shape", nsp, 1, 1, ks));
    GLOW_TRY(ints_attr(cx, np, "strides", nsp, 1, 1, st));
    GLOW_TRY(ints_attr(cx, np, "pads", 2 * nsp, 0, 0, pads));
    int64_t inf[GLOW_MAX_DIMS] = { xt->dims[0], xt->dims[1] }, total = xt->dims[0] * xt->dims[1];
    for (int i = 0; i < nsp; i++) {
        inf[2 + i] = (xt->dims[2 + i] - 1) * st[i] - (pads[i] + pads[nsp + i]) + ks[i];
        if (inf[2 + i] < 1 || inf[2 + i] > (1 << 24) || total > (int64_t)(1 << 26) / inf[2 + i])
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "unpooled dim %d is %lld", i,
                             (long long)inf[2 + i]);
        total *= inf[2 + i];
    }
    int64_t count = glow_type_numel(xt);
    GLOW_TRY(onnx_cast(cx, np, ind, GLOW_I64, &ind));
    int64_t id2[2] = { 1, count };
    GLOW_TRY(onnx_reshape(cx, np, ind, 2, id2, &ind));
    GLOW_TRY(scatter_flat(cx, np, x, ind, 1, count, total, "none", &y));
    GLOW_TRY(onnx_reshape(cx, np, y, xt->rank, inf, &y));
    if (onnx_has_input(np, 2)) {
        int64_t *shape;
        int n;
        GLOW_TRY(onnx_input_ints(cx, np, 2, &shape, &n));
        if (n != xt->rank)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "output_shape has %d values for rank "
                             "%d", n, xt->rank);
        int64_t p[2 * GLOW_MAX_DIMS] = { 0 };
        bool any = false;
        for (int i = 0; i < n; i++) {
            if (shape[i] < inf[i] || shape[i] > (1 << 24))
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "output_shape[%d] = %lld is below "
                                 "the unpooled size %lld", i, (long long)shape[i],
                                 (long long)inf[i]);
            p[n + i] = shape[i] - inf[i];
            any = any || p[n + i] != 0;
        }
        glow_attr a[3] = { GLOW_AINTS(PADS, p, 2 * n), GLOW_ASTR(MODE, "constant"),
                           GLOW_AF(VALUE, 0.0) };
        if (any)
            GLOW_TRY(onnx_build(cx, np, NK_PAD, &y, 1, a, 3, NULL, 0, &y));
    }
    return onnx_set_output(cx, np, 0, y);
}

/* Determinants of [..., M, M] for M <= 3 by cofactor expansion (no LU without a node kind). */
glow_status load_det(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    if (xt->rank < 2 || xt->dims[xt->rank - 1] != xt->dims[xt->rank - 2] ||
        !glow_dtype_is_float(xt->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input must be float [..., M, M]");
    int64_t m = xt->dims[xt->rank - 1];
    if (m < 1 || m > 3)
        return onnx_unsupported(cx, np, "determinant of %lldx%lld matrices (glowc expands "
                                "only up to 3x3)", (long long)m, (long long)m);
    int64_t flat[GLOW_MAX_DIMS];
    memcpy(flat, xt->dims, sizeof(int64_t) * (size_t)(xt->rank - 2));
    flat[xt->rank - 2] = m * m;
    GLOW_TRY(onnx_reshape(cx, np, x, xt->rank - 1, flat, &x));
    glow_value e[9];
    for (int i = 0; i < m * m; i++) {
        int64_t one = i;
        glow_type st = glow_type_scalar(GLOW_I64);
        glow_value iv = onnx_constant(cx, onnx_sub_name(cx, np, "index"), &st, &one);
        glow_attr a = GLOW_AI(AXIS, xt->rank - 2);
        GLOW_TRY(onnx_build(cx, np, NK_GATHER, (glow_value[]){ x, iv }, 2, &a, 1, NULL, 0,
                            &e[i]));
    }
    if (m == 1) {
        y = e[0];
    } else if (m == 2) {
        glow_value ad, bc;
        GLOW_TRY(onnx_build(cx, np, NK_MUL, (glow_value[]){ e[0], e[3] }, 2, NULL, 0, NULL, 0,
                            &ad));
        GLOW_TRY(onnx_build(cx, np, NK_MUL, (glow_value[]){ e[1], e[2] }, 2, NULL, 0, NULL, 0,
                            &bc));
        GLOW_TRY(onnx_build(cx, np, NK_SUB, (glow_value[]){ ad, bc }, 2, NULL, 0, NULL, 0, &y));
    } else {
        /* a(ei - fh) - b(di - fg) + c(dh - eg) */
        static const int t[3][5] = { { 0, 4, 8, 5, 7 }, { 1, 3, 8, 5, 6 }, { 2, 3, 7, 4, 6 } };
        glow_value term[3];
        for (int i = 0; i < 3; i++) {
            glow_value p, q, minor;
            GLOW_TRY(onnx_build(cx, np, NK_MUL, (glow_value[]){ e[t[i][1]], e[t[i][2]] }, 2,
                                NULL, 0, NULL, 0, &p));
            GLOW_TRY(onnx_build(cx, np, NK_MUL, (glow_value[]){ e[t[i][3]], e[t[i][4]] }, 2,
                                NULL, 0, NULL, 0, &q));
            GLOW_TRY(onnx_build(cx, np, NK_SUB, (glow_value[]){ p, q }, 2, NULL, 0, NULL, 0,
                                &minor));
            GLOW_TRY(onnx_build(cx, np, NK_MUL, (glow_value[]){ e[t[i][0]], minor }, 2, NULL, 0,
                                NULL, 0, &term[i]));
        }
        GLOW_TRY(onnx_build(cx, np, NK_SUB, term, 2, NULL, 0, NULL, 0, &y));
        GLOW_TRY(onnx_build(cx, np, NK_ADD, (glow_value[]){ y, term[2] }, 2, NULL, 0, NULL, 0,
                            &y));
    }
    return onnx_set_output(cx, np, 0, y);
}

/* --- GridSample (nearest, linear, cubic; zeros, border and reflection padding) --- */

static glow_status un1(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                       glow_value *out)
{
    return onnx_build(cx, np, k, &a, 1, NULL, 0, NULL, 0, out);
}

static glow_status bin(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                       glow_value b, glow_value *out)
{
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, NULL, 0, out);
}

static glow_value scal(onnx_ctx *cx, const Onnx__NodeProto *np, glow_dtype t, double v)
{
    return onnx_sub_scalar(cx, np, "c", t, v);
}

static glow_status where(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value c, glow_value a,
                         glow_value b, glow_value *out)
{
    return onnx_build_elemwise(cx, np, NK_WHERE, (glow_value[]){ c, a, b }, 3, NULL, 0, out);
}

/* u < lo or u > hi (bool), for the coordinates the padding modes move. */
static glow_status outside(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value u, double lo,
                           double hi, glow_value *out)
{
    glow_dtype ft = glow_value_type(u)->dtype;
    glow_value a, b;
    GLOW_TRY(bin(cx, np, NK_LESS, u, scal(cx, np, ft, lo), &a));
    GLOW_TRY(bin(cx, np, NK_GREATER, u, scal(cx, np, ft, hi), &b));
    return bin(cx, np, NK_OR, a, b, out);
}

/* ONNX's reflection padding: a coordinate outside [lo, hi] is reflected at the borders until
 * it lies inside. With period P = 2 (hi - lo) that is lo + min(m, P - m) for
 * m = (u - lo) mod P (non-negative); coordinates already inside stay exactly as they are. */
static glow_status reflect(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value u, double lo,
                           double hi, glow_value *out)
{
    glow_dtype ft = glow_value_type(u)->dtype;
    double period = 2.0 * (hi - lo);
    glow_value out_of, t, m, neg, mp, f, r;
    GLOW_TRY(outside(cx, np, u, lo, hi, &out_of));
    if (period <= 0)   /* one sample: everything reflects onto it */
        return where(cx, np, out_of, scal(cx, np, ft, lo), u, out);
    glow_attr fm = GLOW_AI(FMOD, 1);
    GLOW_TRY(bin(cx, np, NK_SUB, u, scal(cx, np, ft, lo), &t));
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MOD, (glow_value[]){ t, scal(cx, np, ft, period) },
                                 2, &fm, 1, &m));
    GLOW_TRY(bin(cx, np, NK_LESS, m, scal(cx, np, ft, 0.0), &neg));
    GLOW_TRY(bin(cx, np, NK_ADD, m, scal(cx, np, ft, period), &mp));
    GLOW_TRY(where(cx, np, neg, mp, m, &m));
    GLOW_TRY(bin(cx, np, NK_SUB, scal(cx, np, ft, period), m, &f));
    GLOW_TRY(bin(cx, np, NK_MIN, m, f, &f));
    GLOW_TRY(bin(cx, np, NK_ADD, f, scal(cx, np, ft, lo), &r));
    return where(cx, np, out_of, r, u, out);
}

/* Keys' cubic convolution weight (a = -0.75, as ONNX) at distance s: for the inner taps
 * (s in [0, 1]) ((a + 2) s - (a + 3)) s^2 + 1, for the outer ones (s in [1, 2])
 * ((a s - 5a) s + 8a) s - 4a. */
static glow_status cubic_weight(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value s,
                                bool outer, glow_value *out)
{
    const double a = -0.75;
    glow_dtype ft = glow_value_type(s)->dtype;
    glow_value w;
    if (outer) {
        GLOW_TRY(bin(cx, np, NK_MUL, s, scal(cx, np, ft, a), &w));
        GLOW_TRY(bin(cx, np, NK_SUB, w, scal(cx, np, ft, 5 * a), &w));
        GLOW_TRY(bin(cx, np, NK_MUL, w, s, &w));
        GLOW_TRY(bin(cx, np, NK_ADD, w, scal(cx, np, ft, 8 * a), &w));
        GLOW_TRY(bin(cx, np, NK_MUL, w, s, &w));
        return bin(cx, np, NK_SUB, w, scal(cx, np, ft, 4 * a), out);
    }
    GLOW_TRY(bin(cx, np, NK_MUL, s, scal(cx, np, ft, a + 2), &w));
    GLOW_TRY(bin(cx, np, NK_SUB, w, scal(cx, np, ft, a + 3), &w));
    GLOW_TRY(bin(cx, np, NK_MUL, w, s, &w));
    GLOW_TRY(bin(cx, np, NK_MUL, w, s, &w));
    return bin(cx, np, NK_ADD, w, scal(cx, np, ft, 1.0), out);
}

/* One sampling tap along one spatial dim: index t (float, [N, Q]) -> the i64 index clamped
 * into [0, len) and, with zeros padding, a 0/1 validity factor folded into *w; with reflection
 * padding the index is first reflected into [lo, hi] (ONNX reflects the taps too). */
static glow_status tap_index(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value t, int64_t len,
                             bool zeros, const double *refl, glow_value *w, glow_value *idx)
{
    glow_dtype ft = glow_value_type(t)->dtype;
    if (zeros) {
        glow_value ge, le, ok;
        GLOW_TRY(bin(cx, np, NK_GREATER_EQUAL, t, scal(cx, np, ft, 0.0), &ge));
        GLOW_TRY(bin(cx, np, NK_LESS_EQUAL, t, scal(cx, np, ft, (double)(len - 1)), &le));
        GLOW_TRY(bin(cx, np, NK_AND, ge, le, &ok));
        GLOW_TRY(onnx_cast(cx, np, ok, ft, &ok));
        GLOW_TRY(w->node ? bin(cx, np, NK_MUL, *w, ok, w) : (*w = ok, GLOW_OK));
    }
    if (refl)
        GLOW_TRY(reflect(cx, np, t, refl[0], refl[1], &t));
    glow_attr a[2] = { GLOW_AF(MIN, 0.0), GLOW_AF(MAX, (double)(len - 1)) };
    GLOW_TRY(onnx_build(cx, np, NK_CLIP, &t, 1, a, 2, NULL, 0, &t));
    return onnx_cast(cx, np, t, GLOW_I64, idx);
}

glow_status load_grid_sample(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    glow_value x, grid;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_input(cx, np, 1, &grid));
    const glow_type *xt = glow_value_type(x), *gt = glow_value_type(grid);
    int d = xt->rank - 2;
    if (d < 1 || d > 3 || gt->rank != d + 2 || gt->dims[0] != xt->dims[0] ||
        gt->dims[d + 1] != d || !glow_dtype_is_float(xt->dtype) || gt->dtype != xt->dtype)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "X must be float [N, C, 1-3 dims] and grid "
                         "[N, out dims..., %d] of the same type", d);
    const char *mode = onnx_attr_str(cx, np, "mode", opset >= 20 ? "linear" : "bilinear");
    const char *pad = onnx_attr_str(cx, np, "padding_mode", "zeros");
    bool align = onnx_attr_int(np, "align_corners", 0) != 0;
    bool nearest = !strcmp(mode, "nearest");
    bool cubic = !strcmp(mode, "cubic") || !strcmp(mode, "bicubic");
    if (!nearest && !cubic && strcmp(mode, "linear") && strcmp(mode, "bilinear"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' (nearest, linear or cubic)",
                         mode);
    bool zeros = !strcmp(pad, "zeros"), reflection = !strcmp(pad, "reflection");
    if (!zeros && !reflection && strcmp(pad, "border"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "padding_mode '%s' (zeros, border or "
                         "reflection)", pad);
    if (glow_type_numel(xt) == 0 || glow_type_numel(gt) == 0)
        return onnx_unsupported(cx, np, "empty X or grid");
    glow_dtype ft = xt->dtype;
    int64_t n = xt->dims[0], c = xt->dims[1], q = glow_type_numel(gt) / (n * d), p = 1;
    for (int i = 0; i < d; i++)
        p *= xt->dims[2 + i];
    int64_t gq[2] = { n, q };
    /* Per dim: taps (index, weight) of the sampling position. */
    glow_value idx[3][4], wt[3][4];
    int ntaps = nearest ? 1 : cubic ? 4 : 2;
    for (int i = 0; i < d; i++) {
        int64_t len = xt->dims[2 + i];
        /* The coordinates inside the image: the padding modes only move those outside. */
        double border[2] = { align ? 0.0 : -0.5, align ? (double)(len - 1) : len - 0.5 };
        const double *refl = reflection ? border : NULL;
        glow_value g, u, one = scal(cx, np, ft, 1.0);
        GLOW_TRY(onnx_slice_axis(cx, np, grid, d + 1, d - 1 - i, d - i, &g));
        GLOW_TRY(onnx_reshape(cx, np, g, 2, gq, &g));
        GLOW_TRY(bin(cx, np, NK_ADD, g, one, &u));
        if (align) {
            GLOW_TRY(bin(cx, np, NK_MUL, u, scal(cx, np, ft, 0.5 * (double)(len - 1)), &u));
        } else {
            GLOW_TRY(bin(cx, np, NK_MUL, u, scal(cx, np, ft, (double)len), &u));
            GLOW_TRY(bin(cx, np, NK_SUB, u, one, &u));
            GLOW_TRY(bin(cx, np, NK_MUL, u, scal(cx, np, ft, 0.5), &u));
        }
        if (nearest)
            GLOW_TRY(un1(cx, np, NK_ROUND, u, &u));
        if (reflection) {
            GLOW_TRY(reflect(cx, np, u, border[0], border[1], &u));
        } else if (!zeros && cubic) {
            /* Border: ONNX clamps to [0, len - 1] only what lies outside the image, and the
             * cubic taps of a coordinate in the half pixel at the edge see the difference. */
            glow_value lo, hi, c0 = scal(cx, np, ft, 0.0);
            glow_value c1 = scal(cx, np, ft, (double)(len - 1));
            GLOW_TRY(bin(cx, np, NK_LESS, u, scal(cx, np, ft, border[0]), &lo));
            GLOW_TRY(bin(cx, np, NK_GREATER, u, scal(cx, np, ft, border[1]), &hi));
            GLOW_TRY(where(cx, np, lo, c0, u, &u));
            GLOW_TRY(where(cx, np, hi, c1, u, &u));
        } else if (!zeros) {
            glow_attr a[2] = { GLOW_AF(MIN, 0.0), GLOW_AF(MAX, (double)(len - 1)) };
            GLOW_TRY(onnx_build(cx, np, NK_CLIP, &u, 1, a, 2, NULL, 0, &u));
        }
        if (nearest) {
            wt[i][0] = (glow_value){ 0 };
            GLOW_TRY(tap_index(cx, np, u, len, zeros, refl, &wt[i][0], &idx[i][0]));
            continue;
        }
        glow_value i0, f;
        GLOW_TRY(un1(cx, np, NK_FLOOR, u, &i0));
        GLOW_TRY(bin(cx, np, NK_SUB, u, i0, &f));
        if (cubic) {
            /* Taps i0 - 1 .. i0 + 2 at distances 1 + f, f, 1 - f, 2 - f. */
            glow_value s[4];
            GLOW_TRY(bin(cx, np, NK_ADD, f, one, &s[0]));
            s[1] = f;
            GLOW_TRY(bin(cx, np, NK_SUB, one, f, &s[2]));
            GLOW_TRY(bin(cx, np, NK_SUB, scal(cx, np, ft, 2.0), f, &s[3]));
            for (int j = 0; j < 4; j++) {
                glow_value tj;
                GLOW_TRY(cubic_weight(cx, np, s[j], j == 0 || j == 3, &wt[i][j]));
                GLOW_TRY(bin(cx, np, NK_ADD, i0, scal(cx, np, ft, (double)(j - 1)), &tj));
                GLOW_TRY(tap_index(cx, np, tj, len, zeros, refl, &wt[i][j], &idx[i][j]));
            }
            continue;
        }
        glow_value i1, f1;
        GLOW_TRY(bin(cx, np, NK_SUB, one, f, &f1));
        GLOW_TRY(bin(cx, np, NK_ADD, i0, one, &i1));
        wt[i][0] = f1;
        wt[i][1] = f;
        GLOW_TRY(tap_index(cx, np, i0, len, zeros, refl, &wt[i][0], &idx[i][0]));
        GLOW_TRY(tap_index(cx, np, i1, len, zeros, refl, &wt[i][1], &idx[i][1]));
    }
    int64_t xd[3] = { n, c, p }, id3[3] = { n, 1, q }, bd[3] = { n, c, q };
    glow_value xf, y = { 0 };
    GLOW_TRY(onnx_reshape(cx, np, x, 3, xd, &xf));
    int combos = d == 1 ? ntaps : d == 2 ? ntaps * ntaps : ntaps * ntaps * ntaps;
    for (int k = 0; k < combos; k++) {
        glow_value flat = { 0 }, w = { 0 }, v;
        int64_t stride = 1;
        for (int i = d - 1, rest = k; i >= 0; i--, rest /= ntaps) {
            int t = rest % ntaps;
            glow_value term = idx[i][t];
            if (stride != 1)
                GLOW_TRY(bin(cx, np, NK_MUL, term, scal(cx, np, GLOW_I64, (double)stride),
                             &term));
            GLOW_TRY(flat.node ? bin(cx, np, NK_ADD, flat, term, &flat) : (flat = term, GLOW_OK));
            if (wt[i][t].node)
                GLOW_TRY(w.node ? bin(cx, np, NK_MUL, w, wt[i][t], &w) : (w = wt[i][t], GLOW_OK));
            stride *= xt->dims[2 + i];
        }
        GLOW_TRY(onnx_reshape(cx, np, flat, 3, id3, &flat));
        GLOW_TRY(onnx_broadcast_to(cx, np, flat, 3, bd, &flat));
        glow_attr a = GLOW_AI(AXIS, 2);
        GLOW_TRY(onnx_build(cx, np, NK_GATHER_ELEMENTS, (glow_value[]){ xf, flat }, 2, &a, 1,
                            NULL, 0, &v));
        if (w.node) {
            GLOW_TRY(onnx_reshape(cx, np, w, 3, id3, &w));
            GLOW_TRY(bin(cx, np, NK_MUL, v, w, &v));
        }
        GLOW_TRY(y.node ? bin(cx, np, NK_ADD, y, v, &y) : (y = v, GLOW_OK));
    }
    int64_t od[GLOW_MAX_DIMS] = { n, c };
    memcpy(&od[2], &gt->dims[1], sizeof(int64_t) * (size_t)d);
    GLOW_TRY(onnx_reshape(cx, np, y, d + 2, od, &y));
    return onnx_set_output(cx, np, 0, y);
}
