// onnx_ops_resize.c - ONNX loaders for spatial rearrangement: Resize, Upsample, DepthToSpace,
// SpaceToDepth.
//
// Resize carries its output shape as the declared result type and its sampling as attributes
// with every ONNX default made explicit: `scales` holds the effective per-dim scale the
// coordinate transform divides by (the given scale, or out/in when sizes were given, or the
// single aspect-preserving scale under keep_aspect_ratio_policy), so no later stage needs to
// know which of ONNX's inputs the model used.
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"
#include "resize_math.h"

static bool is_one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return true;
    return false;
}

/* Reads optional constant input i as floats; *count is -1 when absent, 0 when empty. */
static glow_status opt_floats(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const char *what,
                              double **vals, int *count)
{
    *count = -1;
    if (!onnx_has_input(np, i))
        return GLOW_OK;
    GLOW_TRY(onnx_input_static(cx, np, i, what));
    return onnx_input_floats(cx, np, i, vals, count);
}

/* The RESIZE node with every attribute explicit. */
typedef struct resize_spec {
    const char *mode, *coord, *nearest;
    double cubic_a, extrap;
    int64_t exclude;
    const float *roi;     /* 2 * rank values (starts then ends) or NULL */
    bool antialias;       /* linear and cubic only (onnx_resize_antialias) */
} resize_spec;

static glow_status build_resize(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                const double *out_f, const double *scales, const resize_spec *s)
{
    const glow_type *xt = glow_value_type(x);
    glow_type ot = *xt;
    int64_t numel = 1;
    int64_t out_dims[GLOW_MAX_DIMS];
    for (int i = 0; i < xt->rank; i++) {
        /* Sizes come from model floats: range-check before converting to integers. */
        if (!(out_f[i] >= 0 && out_f[i] < 9e15))
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output dim %d (%g) is invalid or too "
                             "large", i, out_f[i]);
        out_dims[i] = (int64_t)out_f[i];
        if (!glow_mul_overflow_i64(numel, out_dims[i], &numel))
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output dim %d (%" PRId64
                             ") is invalid or too large", i, out_dims[i]);
        ot.dims[i] = out_dims[i];
    }
    float *sc = GLOW_NEW_ARRAY(&cx->scratch, float, GLOW_MAX_DIMS);
    for (int i = 0; i < xt->rank; i++)
        sc[i] = (float)scales[i];
    glow_attr attrs[9] = {
        GLOW_AFLOATS(SCALES, sc, xt->rank), GLOW_ASTR(MODE, s->mode), GLOW_ASTR(COORD_MODE, s->coord),
        GLOW_ASTR(NEAREST_MODE, s->nearest), GLOW_AF(CUBIC_COEFF_A, s->cubic_a),
        GLOW_AI(EXCLUDE_OUTSIDE, s->exclude), GLOW_AF(EXTRAPOLATION_VALUE, s->extrap) };
    int nattr = 7;
    if (s->roi)
        attrs[nattr++] = GLOW_AFLOATS(ROI, s->roi, 2 * xt->rank);
    glow_value out;
    if (s->antialias) {
        resize_aa aa = { !strcmp(s->mode, "cubic"), s->exclude != 0, s->cubic_a,
                         gk_coord_mode_code(s->coord) };
        GLOW_TRY(onnx_resize_antialias(cx, np, x, out_dims, scales, &aa, &out));
        return onnx_set_output(cx, np, 0, out);
    }
    GLOW_TRY(onnx_build(cx, np, NK_RESIZE, &x, 1, attrs, nattr, &ot, 1, &out));
    return onnx_set_output(cx, np, 0, out);
}

static const char *const resize_modes[] = { "nearest", "linear", "cubic", NULL };
static const char *const nearest_modes[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
                                             "ceil", NULL };

/* Reads Resize's string and number attributes for this opset into s. */
static glow_status resize_attrs(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                resize_spec *s)
{
    memset(s, 0, sizeof *s);
    s->mode = onnx_attr_str(cx, np, "mode", "nearest");
    if (!is_one_of(s->mode, resize_modes) || (opset < 11 && !strcmp(s->mode, "cubic")))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' is not valid", s->mode);
    s->cubic_a = -0.75;
    if (opset < 11) {
        /* Resize-10 predates the coordinate modes: it samples like Upsample. */
        s->coord = "asymmetric";
        s->nearest = "floor";
        return GLOW_OK;
    }
    s->coord = onnx_attr_str(cx, np, "coordinate_transformation_mode", "half_pixel");
    static const char *const coords[] = { "half_pixel", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_crop_and_resize", NULL };
    bool ok = is_one_of(s->coord, coords) ||
              (opset < 13 && !strcmp(s->coord, "tf_half_pixel_for_nn")) ||
              (opset >= 19 && !strcmp(s->coord, "half_pixel_symmetric"));
    if (!ok)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "coordinate_transformation_mode '%s' is not "
                         "valid", s->coord);
    s->nearest = onnx_attr_str(cx, np, "nearest_mode", "round_prefer_floor");
    if (!is_one_of(s->nearest, nearest_modes))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "nearest_mode '%s' is not valid", s->nearest);
    s->cubic_a = onnx_attr_float(np, "cubic_coeff_a", -0.75f);
    s->exclude = onnx_attr_int(np, "exclude_outside", 0) != 0;
    s->extrap = onnx_attr_float(np, "extrapolation_value", 0.0f);
    /* Antialiasing widens linear and cubic filters; ONNX ignores it for nearest. */
    s->antialias = opset >= 18 && onnx_attr_int(np, "antialias", 0) != 0 &&
                   strcmp(s->mode, "nearest");
    if (s->antialias && !strcmp(s->coord, "tf_crop_and_resize"))
        return onnx_unsupported(cx, np, "antialias=1 with tf_crop_and_resize");
    return GLOW_OK;
}

glow_status load_resize(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int r = xt->rank;
    resize_spec s;
    GLOW_TRY(resize_attrs(cx, np, opset, &s));
    /* Axes the roi/scales/sizes refer to (opset 18), else all. */
    int axes[GLOW_MAX_DIMS], naxes = r;
    for (int i = 0; i < r; i++)
        axes[i] = i;
    const int64_t *av;
    int nav = opset >= 18 ? onnx_attr_ints(np, "axes", &av) : -1;
    if (nav >= 0) {
        if (nav > r)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'axes' has %d values for rank %d", nav, r);
        bool seen[GLOW_MAX_DIMS] = { false };
        for (int i = 0; i < nav; i++) {
            GLOW_TRY(onnx_axis(cx, np, av[i], r, &axes[i]));
            if (seen[axes[i]])
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %" PRId64 " is repeated", av[i]);
            seen[axes[i]] = true;
        }
        naxes = nav;
    }
    double *roi = NULL, *scales = NULL, *sizes_f = NULL;
    int nroi = -1, nscales, nsizes = -1;
    if (opset < 11) {
        GLOW_TRY(opt_floats(cx, np, 1, "scales", &scales, &nscales));
    } else {
        /* roi matters only to tf_crop_and_resize; elsewhere it may even be computed. */
        if (!strcmp(s.coord, "tf_crop_and_resize"))
            GLOW_TRY(opt_floats(cx, np, 1, "roi", &roi, &nroi));
        GLOW_TRY(opt_floats(cx, np, 2, "scales", &scales, &nscales));
        GLOW_TRY(opt_floats(cx, np, 3, "sizes", &sizes_f, &nsizes));
    }
    bool has_scales = nscales > 0, has_sizes = nsizes > 0;
    if (has_scales == has_sizes)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "exactly one of 'scales' (%d values) and "
                         "'sizes' (%d values) must be given", nscales, nsizes);
    int ngiven = has_scales ? nscales : nsizes;
    if (ngiven != naxes)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' has %d values; expected %d",
                         has_scales ? "scales" : "sizes", ngiven, naxes);
    /* Per-dim roi, needed only by tf_crop_and_resize (ignored otherwise per the spec). */
    float *roi_full = NULL;
    if (!strcmp(s.coord, "tf_crop_and_resize")) {
        roi_full = GLOW_NEW_ARRAY(&cx->scratch, float, 2 * GLOW_MAX_DIMS);
        for (int i = 0; i < r; i++) {
            roi_full[i] = 0;
            roi_full[r + i] = 1;
        }
        if (nroi > 0 && nroi != 2 * naxes)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'roi' has %d values; expected %d", nroi,
                             2 * naxes);
        for (int i = 0; i < naxes && nroi > 0; i++) {
            roi_full[axes[i]] = (float)roi[i];
            roi_full[r + axes[i]] = (float)roi[naxes + i];
        }
        s.roi = roi_full;
    }
    double sc[GLOW_MAX_DIMS], out[GLOW_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        sc[i] = 1.0;
        out[i] = (double)xt->dims[i];
    }
    if (has_scales) {
        for (int i = 0; i < naxes; i++) {
            int a = axes[i];
            if (!(scales[i] > 0) || !(scales[i] < 1e9))
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "scale %g for axis %d is not positive",
                                 scales[i], a);
            double span = roi_full ? (double)roi_full[r + a] - roi_full[a] : 1.0;
            sc[a] = scales[i];
            out[a] = floor((double)xt->dims[a] * span * scales[i]);
        }
    } else {
        const char *policy = opset >= 18 ? onnx_attr_str(cx, np, "keep_aspect_ratio_policy",
                                                         "stretch") : "stretch";
        bool stretch = !strcmp(policy, "stretch"), smaller = !strcmp(policy, "not_smaller");
        if (!stretch && !smaller && strcmp(policy, "not_larger"))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "keep_aspect_ratio_policy '%s' is not "
                             "valid", policy);
        double keep = smaller ? 0 : INFINITY;
        for (int i = 0; i < naxes; i++) {
            int a = axes[i];
            if (!(sizes_f[i] >= 0 && sizes_f[i] < 1e12) || xt->dims[a] == 0)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "size %g for axis %d (of %" PRId64
                                 ") is invalid", sizes_f[i], a, xt->dims[a]);
            double q = sizes_f[i] / (double)xt->dims[a];
            if (stretch) {
                out[a] = floor(sizes_f[i]);
                sc[a] = q;
            }
            keep = smaller ? fmax(keep, q) : fmin(keep, q);
        }
        /* Aspect-preserving policies use one scale for all axes and round the sizes. */
        for (int i = 0; i < naxes && !stretch; i++) {
            int a = axes[i];
            sc[a] = keep;
            out[a] = floor(keep * (double)xt->dims[a] + 0.5);
        }
    }
    return build_resize(cx, np, x, out, sc, &s);
}

glow_status load_upsample(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    resize_spec s = { .coord = "asymmetric", .nearest = "floor", .cubic_a = -0.75 };
    s.mode = onnx_attr_str(cx, np, "mode", "nearest");
    if (!strcmp(s.mode, "bilinear"))
        s.mode = "linear";
    if (strcmp(s.mode, "nearest") && strcmp(s.mode, "linear"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' is not valid", s.mode);
    double *scales = NULL;
    int n;
    if (opset < 9) {
        const float *fs;
        n = onnx_attr_floats(np, "scales", &fs);
        if (n > 0) {
            scales = GLOW_NEW_ARRAY(&cx->scratch, double, n);
            for (int i = 0; i < n; i++)
                scales[i] = fs[i];
        }
    } else {
        GLOW_TRY(opt_floats(cx, np, 1, "scales", &scales, &n));
    }
    if (n != xt->rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'scales' has %d values for rank %d", n,
                         xt->rank);
    double out[GLOW_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        if (!(scales[i] >= 1 && scales[i] < 1e9))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "scale %g for axis %d is below 1",
                             scales[i], i);
        out[i] = floor((double)xt->dims[i] * scales[i]);
    }
    return build_resize(cx, np, x, out, scales, &s);
}

/* DepthToSpace and SpaceToDepth (the row's kind): blocksize (and DepthToSpace's mode) on a 4-D input. */
glow_status load_block(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                       glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    if (!onnx_attr(np, "blocksize"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'blocksize' is missing");
    int64_t bs = onnx_attr_int(np, "blocksize", 0);
    if (bs <= 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'blocksize' is %" PRId64, bs);
    glow_attr attrs[2] = { GLOW_AI(BLOCKSIZE, bs) };
    int nattr = 1;
    if (kind == NK_DEPTH_TO_SPACE) {
        const char *mode = opset >= 11 ? onnx_attr_str(cx, np, "mode", "DCR") : "DCR";
        if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mode '%s' is neither DCR nor CRD", mode);
        attrs[nattr++] = GLOW_ASTR(MODE, mode);
    }
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, attrs, nattr, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

