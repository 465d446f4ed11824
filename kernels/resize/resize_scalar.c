// resize_scalar.c - Reference Resize (nearest, linear, cubic; every coordinate mode) of f32 or
// any numeric kind (one body, the kind a constant once inlined) over up to four dims, sampled
// exactly as the evaluator samples (kernels/resize_math.h): the same taps and weights, the
// weighted sum over every combination of taps in the same order, in double. Split over result
// rows (all dims but the last).
#include "gk_dtype.h"
#include "kernels.h"
#include "resize_math.h"

/* Result positions along the last dim whose taps are worked out at once (on the stack). */
#define CHUNK 128

/* One combination of taps of the dims before the last: its source offset and its weights from
 * the third dim down (those of the real dims only). */
typedef struct {
    int64_t off;
    double w[3];
} row_term;

/* The combinations of the row's taps with no zero weight, in the evaluator's order (the first
 * dim slowest); a zero weight makes the whole product zero, which the evaluator skips. */
static int row_terms(const gk_taps *tp, int lead, const int64_t *xs, row_term *terms)
{
    int nt = 1;
    terms[0].off = 0;
    for (int i = lead; i < 3; i++) {
        int nn = 0;
        row_term next[GK_RESIZE_MAX_TAPS * GK_RESIZE_MAX_TAPS * GK_RESIZE_MAX_TAPS];
        for (int t = 0; t < nt; t++)
            for (int k = 0; k < tp[i].n; k++) {
                if (tp[i].w[k] == 0)
                    continue;
                next[nn] = terms[t];
                next[nn].off += tp[i].idx[k] * xs[i];
                next[nn].w[2 - i] = tp[i].w[k];
                nn++;
            }
        memcpy(terms, next, sizeof(row_term) * (size_t)nn);
        nt = nn;
    }
    return nt;
}

/* The four dims are the tensor's, padded in front with `lead` dims of size 1 that are not
 * sampled (so the products of weights are the evaluator's over the real dims). scale, roi
 * start and end per dim; mode, coord and nearest are gk_resize_mode, gk_coord_mode and
 * gk_nearest_mode; results whose tf_crop_and_resize coordinate falls outside the source get
 * extrap. Each product of weights is formed as the evaluator forms it (last dim first). */
static inline void resize(int dt, const void *x, void *y, int64_t i0, int64_t i1, int64_t i2,
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
    int nw = 3 - (int)lead;   /* weights of a row term */
    int64_t lo, hi;
    gk_split(o0 * o1 * o2, 1, tid, nthreads, &lo, &hi);
    for (int64_t ox0 = 0; ox0 < o3 && lo < hi; ox0 += CHUNK) {
        int64_t nx = o3 - ox0 < CHUNK ? o3 - ox0 : CHUNK;
        /* The last dim's taps, tap-major so the loops below run over positions. */
        int64_t idx3[GK_RESIZE_MAX_TAPS][CHUNK];
        double w3[GK_RESIZE_MAX_TAPS][CHUNK];
        bool out3[CHUNK];
        int n3 = 0;
        for (int64_t i = 0; i < nx; i++) {
            gk_taps t;
            out3[i] = false;
            double sx = gk_resize_coord(coord, (double)(ox0 + i), s3, o3, i3, rs3, re3,
                                        &out3[i]);
            gk_resize_taps(mode, nearest, a, exclude, sx, i3, &t);
            n3 = t.n;
            for (int k = 0; k < t.n; k++)
                idx3[k][i] = t.idx[k], w3[k][i] = t.w[k];
        }
        for (int64_t row = lo; row < hi; row++) {
            int64_t o[3] = { row / (o1 * o2), row / o2 % o1, row % o2 };
            gk_taps tp[3];
            bool row_outside = false;
            for (int i = (int)lead; i < 3; i++) {
                double sx = gk_resize_coord(coord, (double)o[i], sc[i], out[i], in[i], rs[i],
                                            re[i], &row_outside);
                gk_resize_taps(mode, nearest, a, exclude, sx, in[i], &tp[i]);
            }
            row_term terms[GK_RESIZE_MAX_TAPS * GK_RESIZE_MAX_TAPS * GK_RESIZE_MAX_TAPS];
            int nt = row_terms(tp, (int)lead, xs, terms);
            /* Each result adds its terms in the evaluator's order (row term, then last-dim
             * tap). A zero weight adds +0 where the evaluator skips the term: the same sum,
             * as the running sum starts at +0 and so is never -0. */
            double acc[CHUNK];
            for (int64_t i = 0; i < nx; i++)
                acc[i] = 0;
            for (int r = 0; r < nt && !row_outside; r++)
                for (int k = 0; k < n3; k++) {
                    int64_t xr = terms[r].off;
                    for (int64_t i = 0; i < nx; i++) {
                        double w = w3[k][i];
                        for (int j = 0; j < nw; j++)
                            w *= terms[r].w[j];
                        acc[i] += w != 0 ? w * gk_ldf(dt, x, xr + idx3[k][i]) : 0.0;
                    }
                }
            for (int64_t i = 0; i < nx; i++)
                gk_stf(dt, y, row * o3 + ox0 + i, row_outside || out3[i] ? extrap : acc[i]);
        }
    }
}

void gk_resize_f32_scalar(const float *x, float *y, int64_t i0, int64_t i1, int64_t i2,
                          int64_t i3, int64_t o0, int64_t o1, int64_t o2, int64_t o3,
                          int64_t lead, double s0, double s1, double s2, double s3,
                          double rs0, double rs1, double rs2, double rs3, double re0,
                          double re1, double re2, double re3, int mode, int coord,
                          int nearest, double a, int exclude, double extrap, int tid,
                          int nthreads)
{
    resize(GK_DT_F32, x, y, i0, i1, i2, i3, o0, o1, o2, o3, lead, s0, s1, s2, s3, rs0, rs1, rs2,
           rs3, re0, re1, re2, re3, mode, coord, nearest, a, exclude, extrap, tid, nthreads);
}

/* Any numeric kind dt: read as double, the sum stored as the evaluator stores it (integers
 * truncated and saturated). */
void gk_resize_any_scalar(int dt, const void *x, void *y, int64_t i0, int64_t i1, int64_t i2,
                          int64_t i3, int64_t o0, int64_t o1, int64_t o2, int64_t o3,
                          int64_t lead, double s0, double s1, double s2, double s3,
                          double rs0, double rs1, double rs2, double rs3, double re0,
                          double re1, double re2, double re3, int mode, int coord,
                          int nearest, double a, int exclude, double extrap, int tid,
                          int nthreads)
{
    resize(dt, x, y, i0, i1, i2, i3, o0, o1, o2, o3, lead, s0, s1, s2, s3, rs0, rs1, rs2, rs3,
           re0, re1, re2, re3, mode, coord, nearest, a, exclude, extrap, tid, nthreads);
}
