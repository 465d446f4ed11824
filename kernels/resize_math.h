// resize_math.h - Resize's sampling math, one result coordinate at a time: the source
// coordinate of each ONNX coordinate transformation mode and the taps (source positions and
// weights) of nearest, linear and cubic sampling. Written once here and included by the Resize
// kernel (kernels/resize) and the reference evaluator (src/eval/eval_resize.c), so both sample
// the same positions with the same weights, bit for bit.
//
// The taps follow ONNX's reference: the n source positions nearest the mapped coordinate,
// positions past the edges reading the edge element (or dropped and the weights renormalized
// under exclude_outside).
#ifndef GK_RESIZE_MATH_H
#define GK_RESIZE_MATH_H

#include "gk.h"

#define GK_RESIZE_MAX_TAPS 4

typedef struct {
    int64_t idx[GK_RESIZE_MAX_TAPS];
    double w[GK_RESIZE_MAX_TAPS];
    int n;
} gk_taps;

/* Maps result coordinate o of a dim (result length out, source length in) to a source
 * coordinate with coordinate mode `coord` (gk_coord_mode); roi_s / roi_e are the dim's region
 * of interest (tf_crop_and_resize), which sets *outside when it lands outside the source. */
static inline double gk_resize_coord(int coord, double o, double scale, int64_t out,
                                     int64_t in, double roi_s, double roi_e, bool *outside)
{
    /* A scale that is out/in rounded to float is taken as out/in: sizes reach here only as
     * that float ratio (the node's scales attribute), and its rounding moves a coordinate that
     * lands exactly on a source element by an ulp, to the wrong side of nearest's floor or
     * ceil (1 -> 3 elements, half_pixel: x = 1 - 6e-8, floor 0 instead of 1, where ONNX's
     * reference and ONNX Runtime take 1). A given scale that is not such a ratio is kept. */
    double exact = in > 0 ? (double)out / (double)in : scale;
    if ((float)exact == (float)scale)
        scale = exact;
    double x;
    switch (coord) {
    case GK_COORD_ALIGN_CORNERS: {
        /* ONNX's reference aligns to the fractional size scale * in, not the integer one. */
        double width = scale * (double)in;
        x = width == 1 ? 0 : o * (double)(in - 1) / (width - 1);
        break;
    }
    case GK_COORD_ASYMMETRIC:
        x = o / scale;
        break;
    case GK_COORD_PYTORCH_HALF_PIXEL:
        x = out > 1 ? (o + 0.5) / scale - 0.5 : 0;
        break;
    case GK_COORD_TF_HALF_PIXEL_FOR_NN:
        x = (o + 0.5) / scale; /* Resize-11's TensorFlow nearest mode: no -0.5 shift */
        break;
    case GK_COORD_HALF_PIXEL_SYMMETRIC: {
        double adjust = (double)out / (scale * (double)in), center = (double)in / 2;
        x = center * (1 - adjust) + (o + 0.5) / scale - 0.5;
        break;
    }
    case GK_COORD_TF_CROP_AND_RESIZE:
        x = out > 1 ? roi_s * (double)(in - 1) +
                          o * (roi_e - roi_s) * (double)(in - 1) / (double)(out - 1)
                    : 0.5 * (roi_s + roi_e) * (double)(in - 1);
        *outside = *outside || x < 0 || x > (double)(in - 1);
        break;
    default:
        x = (o + 0.5) / scale - 0.5; /* half_pixel */
        break;
    }
    return x;
}

static inline void gk_cubic_coeffs(double r, double a, double *w)
{
    double s = 1 - r;
    w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    w[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

/* The taps of source coordinate x in a dim of `in` elements for sampling mode `mode`
 * (gk_resize_mode), nearest rounding `nearest` (gk_nearest_mode) and cubic coefficient a. */
static inline void gk_resize_taps(int mode, int nearest, double a, bool exclude, double x,
                                  int64_t in, gk_taps *t)
{
    /* Extreme scales can map far outside any tensor: bound x so the integer conversion is
     * defined (every tap then clamps to an edge anyway). */
    if (!(x > -1e15 && x < 1e15))
        x = x > 0 ? 1e15 : -1e15;
    /* The tap to the left of x is preferred, so an integral x has ratio 1 to the tap
     * before it (ONNX's reference convention). */
    double fl = floor(x);
    int64_t x0 = (int64_t)fl;
    double r = x - fl;
    if (r == 0) {
        x0 -= 1;
        r = 1;
    }
    int first;
    if (mode == GK_RESIZE_CUBIC) {
        t->n = 4;
        first = -1;
        gk_cubic_coeffs(r, a, t->w);
    } else {
        t->n = 2;
        first = 0;
        if (mode == GK_RESIZE_LINEAR) {
            t->w[0] = 1 - r, t->w[1] = r;
        } else {
            bool right = r == 1 ? true : nearest == GK_NEAREST_FLOOR ? false
                       : nearest == GK_NEAREST_CEIL ? true
                       : nearest == GK_NEAREST_ROUND_PREFER_CEIL ? r >= 0.5 : r > 0.5;
            t->w[0] = !right, t->w[1] = right;
        }
    }
    double sum = 0;
    for (int i = 0; i < t->n; i++) {
        int64_t at = x0 + first + i;
        if (exclude && (at < 0 || at >= in))
            t->w[i] = 0;
        t->idx[i] = at < 0 ? 0 : at >= in ? in - 1 : at;
        sum += t->w[i];
    }
    if (exclude && sum != 0)
        for (int i = 0; i < t->n; i++)
            t->w[i] /= sum;
}

/* The codes of Resize's attribute strings, for the evaluator and the backend's selector (an
 * unknown coordinate mode samples as half_pixel, an unknown nearest mode as
 * round_prefer_floor, an unknown mode as nearest, as the evaluator always did). */
static inline int gk_resize_mode_code(const char *m)
{
    return !strcmp(m, "linear") ? GK_RESIZE_LINEAR : !strcmp(m, "cubic") ? GK_RESIZE_CUBIC
                                                                         : GK_RESIZE_NEAREST;
}

static inline int gk_coord_mode_code(const char *c)
{
    return !strcmp(c, "align_corners") ? GK_COORD_ALIGN_CORNERS
         : !strcmp(c, "asymmetric") ? GK_COORD_ASYMMETRIC
         : !strcmp(c, "pytorch_half_pixel") ? GK_COORD_PYTORCH_HALF_PIXEL
         : !strcmp(c, "tf_half_pixel_for_nn") ? GK_COORD_TF_HALF_PIXEL_FOR_NN
         : !strcmp(c, "half_pixel_symmetric") ? GK_COORD_HALF_PIXEL_SYMMETRIC
         : !strcmp(c, "tf_crop_and_resize") ? GK_COORD_TF_CROP_AND_RESIZE
                                            : GK_COORD_HALF_PIXEL;
}

static inline int gk_nearest_mode_code(const char *m)
{
    return !strcmp(m, "floor") ? GK_NEAREST_FLOOR : !strcmp(m, "ceil") ? GK_NEAREST_CEIL
         : !strcmp(m, "round_prefer_ceil") ? GK_NEAREST_ROUND_PREFER_CEIL
                                           : GK_NEAREST_ROUND_PREFER_FLOOR;
}

#endif
