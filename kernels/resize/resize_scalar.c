// resize_scalar.c - Reference f32 Resize (nearest, linear, cubic; every coordinate mode) over up
// to four dims, sampled exactly as the evaluator samples (kernels/resize_math.h): the same taps
// and weights, the weighted sum over every combination of taps in the same order, in double.
// Split over result rows (all dims but the last).
#include "kernels.h"
#include "resize_math.h"

/* The four dims are the tensor's, padded in front with `lead` dims of size 1 that are not
 * sampled (so the products of weights are the evaluator's over the real dims). scale, roi
 * start and end per dim; mode, coord and nearest are gk_resize_mode, gk_coord_mode and
 * gk_nearest_mode; results whose tf_crop_and_resize coordinate falls outside the source get
 * extrap. */
void gk_resize_f32_scalar(const float *x, float *y, int64_t i0, int64_t i1, int64_t i2,
                          int64_t i3, int64_t o0, int64_t o1, int64_t o2, int64_t o3,
                          int64_t lead, double s0, double s1, double s2, double s3,
                          double rs0, double rs1, double rs2, double rs3, double re0,
                          double re1, double re2, double re3, int mode, int coord,
                          int nearest, double a, int exclude, double extrap, int tid,
                          int nthreads)
{
    const int64_t in[4] = { i0, i1, i2, i3 }, out[4] = { o0, o1, o2, o3 };
    const double sc[4] = { s0, s1, s2, s3 }, rs[4] = { rs0, rs1, rs2, rs3 };
    const double re[4] = { re0, re1, re2, re3 };
    const int64_t xs[4] = { i1 * i2 * i3, i2 * i3, i3, 1 };
    int64_t lo, hi;
    gk_split(o0 * o1 * o2, 1, tid, nthreads, &lo, &hi);
    for (int64_t row = lo; row < hi; row++) {
        int64_t o[4] = { row / (o1 * o2), row / o2 % o1, row % o2, 0 };
        gk_taps tp[4];
        bool row_outside = false;
        int64_t row_combos = 1;
        for (int i = (int)lead; i < 3; i++) {
            double sx = gk_resize_coord(coord, (double)o[i], sc[i], out[i], in[i], rs[i],
                                        re[i], &row_outside);
            gk_resize_taps(mode, nearest, a, exclude, sx, in[i], &tp[i]);
            row_combos *= tp[i].n;
        }
        float *yr = y + row * o3;
        for (int64_t ox = 0; ox < o3; ox++) {
            bool outside = row_outside;
            if (lead < 4) {
                double sx = gk_resize_coord(coord, (double)ox, s3, o3, i3, rs3, re3, &outside);
                gk_resize_taps(mode, nearest, a, exclude, sx, i3, &tp[3]);
            }
            int64_t combos = row_combos * (lead < 4 ? tp[3].n : 1);
            double acc = 0;
            for (int64_t c = 0; c < combos && !outside; c++) {
                int64_t rest = c, off = 0;
                double w = 1;
                for (int i = 3; i >= (int)lead; i--) {
                    int k = (int)(rest % tp[i].n);
                    rest /= tp[i].n;
                    w *= tp[i].w[k];
                    off += tp[i].idx[k] * xs[i];
                }
                if (w != 0)
                    acc += w * x[off];
            }
            yr[ox] = (float)(outside ? extrap : acc);
        }
    }
}
