// eval_resize.c - Reference evaluation of Resize: nearest, linear and cubic sampling with every
// ONNX coordinate transformation mode.
//
// Sampling is separable: each result coordinate maps, dim by dim, to a few source positions
// ("taps") with weights (kernels/resize_math.h, shared with the cpu backend's Resize kernel),
// and the result is the weighted sum over every combination of taps.
#include "eval/eval_internal.h"
#include "resize_math.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

typedef struct {
    int mode, coord, nearest;
    double a, extrap;
    bool exclude;
    const float *scales, *roi;
} resize_params;

glow_status glow_ev_resize(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    const glow_attr *sa = glow_node_attr(n, GA_SCALES), *ra = glow_node_attr(n, GA_ROI);
    const char *mode = glow_node_str(n, GA_MODE, "nearest");
    resize_params p = {
        .mode = gk_resize_mode_code(mode),
        .coord = gk_coord_mode_code(glow_node_str(n, GA_COORD_MODE, "half_pixel")),
        .nearest = gk_nearest_mode_code(glow_node_str(n, GA_NEAREST_MODE,
                                                      "round_prefer_floor")),
        .a = glow_node_float(n, GA_CUBIC_COEFF_A, -0.75),
        .extrap = glow_node_float(n, GA_EXTRAPOLATION_VALUE, 0.0),
        .exclude = glow_node_int(n, GA_EXCLUDE_OUTSIDE, 0) != 0,
        .scales = sa && sa->n == (uint32_t)x->rank ? sa->v.floats : NULL,
        .roi = ra && ra->n == 2 * (uint32_t)x->rank ? ra->v.floats : NULL,
    };
    if (!p.scales || y->rank != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': needs one scale per dim and a result "
                         "of rank %d", KIND_NAME(n), x->rank);
    if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic"))
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': unknown mode '%s'", KIND_NAME(n), mode);
    for (int i = 0; i < x->rank; i++)
        if (!(p.scales[i] > 0) || (x->dims[i] == 0 && y->dims[i] > 0))
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': bad scale or empty source in dim "
                             "%d", KIND_NAME(n), i);
    int rank = x->rank;
    int64_t xs[GLOW_MAX_DIMS], idx[GLOW_MAX_DIMS] = { 0 }, count = ev_numel(y);
    ev_strides(x, xs);
    glow_dtype t = x->dtype;
    for (int64_t o = 0; o < count; o++) {
        gk_taps tp[GLOW_MAX_DIMS];
        bool outside = false;
        int64_t combos = 1;
        for (int i = 0; i < rank; i++) {
            double sx = gk_resize_coord(p.coord, (double)idx[i], p.scales[i], y->dims[i],
                                        x->dims[i], p.roi ? p.roi[i] : 0,
                                        p.roi ? p.roi[rank + i] : 1, &outside);
            gk_resize_taps(p.mode, p.nearest, p.a, p.exclude, sx, x->dims[i], &tp[i]);
            combos *= tp[i].n;
        }
        double acc = 0;
        for (int64_t c = 0; c < combos && !outside; c++) {
            int64_t rest = c, off = 0;
            double w = 1;
            for (int i = rank - 1; i >= 0; i--) {
                int k = (int)(rest % tp[i].n);
                rest /= tp[i].n;
                w *= tp[i].w[k];
                off += tp[i].idx[k] * xs[i];
            }
            if (w != 0)
                acc += w * ev_ldf(t, ins[0].data, off);
        }
        ev_stf(t, outs[0].data, o, outside ? p.extrap : acc);
        ev_next(rank, y->dims, idx);
    }
    return GLOW_OK;
}
