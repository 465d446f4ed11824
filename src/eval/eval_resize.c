// eval_resize.c - Reference evaluation of Resize: nearest, linear and cubic sampling with every
// ONNX coordinate transformation mode.
//
// Sampling is separable: each result coordinate maps, dim by dim, to a few source positions
// ("taps") with weights, and the result is the weighted sum over every combination of taps.
// The taps follow ONNX's reference: the n source positions nearest the mapped coordinate, with
// positions past the edges reading the edge element (or dropped and the weights renormalized
// under exclude_outside).
#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name
#define MAX_TAPS 4

typedef enum { RM_NEAREST, RM_LINEAR, RM_CUBIC } resize_mode;

typedef struct {
    resize_mode mode;
    const char *coord, *nearest;
    double a, extrap;
    bool exclude;
    const float *scales, *roi;
} resize_params;

typedef struct {
    int64_t idx[MAX_TAPS];
    double w[MAX_TAPS];
    int n;
} taps;

/* Maps result coordinate o of a dim (result length out, source length in) to a source
 * coordinate; sets *outside when tf_crop_and_resize lands outside the source. */
static double source_coord(const resize_params *p, int dim, int rank, double o, double scale,
                           int64_t out, int64_t in, bool *outside)
{
    const char *c = p->coord;
    double x;
    if (!strcmp(c, "align_corners")) {
        /* ONNX's reference aligns to the fractional size scale * in, not the integer one. */
        double width = scale * (double)in;
        x = width == 1 ? 0 : o * (double)(in - 1) / (width - 1);
    } else if (!strcmp(c, "asymmetric")) {
        x = o / scale;
    } else if (!strcmp(c, "pytorch_half_pixel")) {
        x = out > 1 ? (o + 0.5) / scale - 0.5 : 0;
    } else if (!strcmp(c, "tf_half_pixel_for_nn")) {
        x = (o + 0.5) / scale; /* Resize-11's TensorFlow nearest mode: no -0.5 shift */
    } else if (!strcmp(c, "half_pixel_symmetric")) {
        double adjust = (double)out / (scale * (double)in), center = (double)in / 2;
        x = center * (1 - adjust) + (o + 0.5) / scale - 0.5;
    } else if (!strcmp(c, "tf_crop_and_resize")) {
        double s = p->roi ? p->roi[dim] : 0, e = p->roi ? p->roi[rank + dim] : 1;
        x = out > 1 ? s * (double)(in - 1) + o * (e - s) * (double)(in - 1) / (double)(out - 1)
                    : 0.5 * (s + e) * (double)(in - 1);
        *outside = *outside || x < 0 || x > (double)(in - 1);
    } else {
        x = (o + 0.5) / scale - 0.5; /* half_pixel */
    }
    return x;
}

static void cubic_coeffs(double r, double a, double *w)
{
    double s = 1 - r;
    w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    w[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

/* The taps of source coordinate x in a dim of `in` elements. */
static void make_taps(const resize_params *p, double x, int64_t in, taps *t)
{
    /* The tap to the left of x is preferred, so an integral x has ratio 1 to the tap
     * before it (ONNX's reference convention). */
    /* Extreme scales can map far outside any tensor: bound x so the integer conversion is
     * defined (every tap then clamps to an edge anyway). */
    if (!(x > -1e15 && x < 1e15))
        x = x > 0 ? 1e15 : -1e15;
    double fl = floor(x);
    int64_t x0 = (int64_t)fl;
    double r = x - fl;
    if (r == 0) {
        x0 -= 1;
        r = 1;
    }
    int first;
    if (p->mode == RM_CUBIC) {
        t->n = 4;
        first = -1;
        cubic_coeffs(r, p->a, t->w);
    } else {
        t->n = 2;
        first = 0;
        if (p->mode == RM_LINEAR) {
            t->w[0] = 1 - r, t->w[1] = r;
        } else {
            const char *m = p->nearest;
            bool right = r == 1 ? true : !strcmp(m, "floor") ? false : !strcmp(m, "ceil") ? true
                       : !strcmp(m, "round_prefer_ceil") ? r >= 0.5 : r > 0.5;
            t->w[0] = !right, t->w[1] = right;
        }
    }
    double sum = 0;
    for (int i = 0; i < t->n; i++) {
        int64_t at = x0 + first + i;
        if (p->exclude && (at < 0 || at >= in))
            t->w[i] = 0;
        t->idx[i] = at < 0 ? 0 : at >= in ? in - 1 : at;
        sum += t->w[i];
    }
    if (p->exclude && sum != 0)
        for (int i = 0; i < t->n; i++)
            t->w[i] /= sum;
}

glow_status glow_ev_resize(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    const glow_attr *sa = glow_node_attr(n, GA_SCALES), *ra = glow_node_attr(n, GA_ROI);
    const char *mode = glow_node_str(n, GA_MODE, "nearest");
    resize_params p = {
        .mode = !strcmp(mode, "linear") ? RM_LINEAR : !strcmp(mode, "cubic") ? RM_CUBIC
                                                                              : RM_NEAREST,
        .coord = glow_node_str(n, GA_COORD_MODE, "half_pixel"),
        .nearest = glow_node_str(n, GA_NEAREST_MODE, "round_prefer_floor"),
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
        taps tp[GLOW_MAX_DIMS];
        bool outside = false;
        int64_t combos = 1;
        for (int i = 0; i < rank; i++) {
            double sx = source_coord(&p, i, rank, (double)idx[i], p.scales[i], y->dims[i],
                                     x->dims[i], &outside);
            make_taps(&p, sx, x->dims[i], &tp[i]);
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
