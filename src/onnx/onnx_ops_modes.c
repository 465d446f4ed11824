// onnx_ops_modes.c - Less common modes of ops whose main form is imported elsewhere, built from
// the graph's existing nodes: MaxPool's column-major indices (storage_order=1) and Resize with
// antialias=1.
//
// Keeping them here leaves the main loaders short and the common path untouched: a model
// that does not use a mode builds exactly the graph it built before.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"
#include "resize_math.h"

static glow_value i64c(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t v)
{
    return onnx_sub_scalar(cx, np, "c", GLOW_I64, (double)v);
}

static glow_status ibin(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                        glow_value b, glow_value *out)
{
    glow_attr fmod = GLOW_AI(FMOD, 0);   /* Mod's required attribute: integer remainder */
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, &fmod, k == NK_MOD, out);
}

/* MaxPool's indices with storage_order=1. The pool node gives each max's flat row-major NCHW
 * index; ONNX's column-major form keeps the (n, c) plane offset and numbers the positions
 * inside the plane with the first spatial dim fastest: for [H, W], h + w * H instead of
 * h * W + w. The index is split into its spatial coordinates (non-negative, so truncating
 * division and remainder are exact) and recombined with the reversed strides. */
glow_status onnx_column_major_indices(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value idx,
                                      const glow_type *xt, glow_value *out)
{
    int k = xt->rank - 2;
    if (k <= 1) {
        *out = idx;   /* one spatial dim: both orders agree */
        return GLOW_OK;
    }
    glow_value q = idx, coord[GLOW_MAX_DIMS];
    for (int i = k - 1; i >= 0; i--) {
        glow_value s = i64c(cx, np, xt->dims[2 + i]);
        GLOW_TRY(ibin(cx, np, NK_MOD, q, s, &coord[i]));
        GLOW_TRY(ibin(cx, np, NK_DIV, q, s, &q));
    }
    int64_t plane = 1;
    for (int i = 0; i < k; i++)
        plane *= xt->dims[2 + i];
    glow_value col;
    GLOW_TRY(ibin(cx, np, NK_MUL, q, i64c(cx, np, plane), &col));
    int64_t stride = 1;
    for (int i = 0; i < k; i++) {
        glow_value term = coord[i];
        if (stride != 1)
            GLOW_TRY(ibin(cx, np, NK_MUL, term, i64c(cx, np, stride), &term));
        GLOW_TRY(ibin(cx, np, NK_ADD, col, term, &col));
        stride *= xt->dims[2 + i];
    }
    *out = col;
    return GLOW_OK;
}

/* --- Resize with antialias=1 --- */

/* Keys' cubic kernel with coefficient a at distance x. */
static double cubic_kernel(double x, double a)
{
    x = fabs(x);
    if (x <= 1)
        return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* Row o of the [out, in] interpolation matrix of one axis, added into w[0..in). ONNX's
 * reference widens the kernel by 1 / scale when downsampling (the antialias filter): the taps
 * are the 2 - 2 * start source positions around the mapped coordinate, start = floor(-r / s) + 1
 * for the kernel radius r (1 linear, 2 cubic) and s = min(scale, 1); their weights are the
 * kernel at s * distance, normalized to sum 1. Taps past the edges read the edge element, or
 * are dropped (and the rest renormalized) under exclude_outside. */
static void antialias_row(const resize_aa *aa, double scale, int64_t o, int64_t out,
                          int64_t in, double *w)
{
    bool outside = false;
    double xo = gk_resize_coord(aa->coord, (double)o, scale, out, in, 0, 1, &outside);
    double s = scale < 1 ? scale : 1;
    /* The tap left of xo is at distance `ratio` in (0, 1]: an integer xo counts as 1. */
    double base = floor(xo), ratio = xo - base;
    if (ratio == 0) {
        ratio = 1;
        base -= 1;
    }
    int64_t start = (int64_t)floor(-(aa->cubic ? 2.0 : 1.0) / s) + 1, n = 2 - 2 * start;
    double tw[64], sum = 0;
    int64_t ti[64];
    for (int64_t j = 0; j < n && j < 64; j++) {
        double dist = s * ((double)(start + j) - ratio);
        double v = aa->cubic ? cubic_kernel(dist, aa->cubic_a) : fmax(0.0, 1 - fabs(dist));
        int64_t idx = (int64_t)base + start + j;
        if (aa->exclude && (idx < 0 || idx >= in))
            v = 0;
        ti[j] = idx < 0 ? 0 : idx >= in ? in - 1 : idx;
        tw[j] = v;
        sum += v;
    }
    for (int64_t j = 0; j < n && j < 64; j++)
        w[ti[j]] += sum != 0 ? tw[j] / sum : 0;
}

glow_status onnx_resize_antialias(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                  const int64_t *out_dims, const double *scales,
                                  const resize_aa *aa, glow_value *out)
{
    const glow_type *xt = glow_value_type(x);
    int r = xt->rank;
    glow_dtype ft = xt->dtype;
    if (!glow_dtype_is_float(ft))
        return onnx_unsupported(cx, np, "antialias=1 on %s (float inputs only)",
                                glow_dtype_name(ft));
    for (int a = 0; a < r; a++) {
        int64_t in = xt->dims[a], o = out_dims[a];
        if (in == o && scales[a] == 1.0)
            continue;   /* an axis kept as it is samples itself */
        /* The kernel is 2 - 2 * start taps wide: bound it like the row buffer. */
        double s = scales[a] < 1 ? scales[a] : 1;
        if (in == 0 || o == 0 || floor((aa->cubic ? 2.0 : 1.0) / s) > 31)
            return onnx_unsupported(cx, np, "antialias=1 with scale %g on axis %d of %lld (a "
                                    "kernel above 64 taps or an empty dim)", scales[a], a,
                                    (long long)in);
        /* x moved so that axis a is last and flattened to [rest, in], times M^T [in, out]. */
        int64_t perm[GLOW_MAX_DIMS], inv[GLOW_MAX_DIMS], dims[GLOW_MAX_DIMS], rest = 1;
        for (int i = 0, k = 0; i < r; i++)
            if (i != a)
                perm[k++] = i;
        perm[r - 1] = a;
        for (int i = 0; i < r; i++) {
            inv[perm[i]] = i;
            dims[i] = glow_value_type(x)->dims[perm[i]];
            if (i < r - 1)
                rest *= dims[i];
        }
        double *m;
        void *buf;
        GLOW_TRY(onnx_const_buffer(cx, np, in * o, sizeof(double), (void **)&m));
        GLOW_TRY(onnx_const_buffer(cx, np, in * o, glow_dtype_size(ft), &buf));
        double *row = GLOW_NEW_ARRAY(&cx->scratch, double, in);
        for (int64_t k = 0; k < o; k++) {
            memset(row, 0, sizeof(double) * (size_t)in);
            antialias_row(aa, scales[a], k, o, in, row);
            for (int64_t i = 0; i < in; i++)
                m[i * o + k] = row[i];
        }
        glow_value mt = onnx_f64_constant(cx, np, "antialias", ft, 2, (int64_t[]){ in, o }, m,
                                          buf);
        glow_value v = x;
        if (a != r - 1) {
            glow_attr pa = GLOW_AINTS(PERM, perm, r);
            GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &v, 1, &pa, 1, NULL, 0, &v));
        }
        GLOW_TRY(onnx_reshape(cx, np, v, 2, (int64_t[]){ rest, in }, &v));
        GLOW_TRY(onnx_matmul(cx, np, v, mt, NULL, &v));
        dims[r - 1] = o;
        GLOW_TRY(onnx_reshape(cx, np, v, r, dims, &v));
        if (a != r - 1) {
            glow_attr ia = GLOW_AINTS(PERM, inv, r);
            GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &v, 1, &ia, 1, NULL, 0, &v));
        }
        x = v;
    }
    *out = x;
    return GLOW_OK;
}
