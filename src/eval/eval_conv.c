// eval_conv.c - Reference evaluation of convolutions and pools (Conv, ConvTranspose, MaxPool,
// AveragePool, LpPool) over 1-3 spatial dims.
//
// Every window op is first normalized to three spatial dims (missing dims have size 1, kernel
// 1, stride 1, no padding), so one set of loops serves 1-D, 2-D and 3-D. The generic loops
// read and write through the f64 helpers; f32 convolution and pools have typed fast paths
// because whole CNNs run through them: convolution unfolds a band of output rows into a
// column buffer (im2col) and accumulates four output channels at a time in float rows, whose
// innermost loop runs over contiguous output positions and vectorizes.
#include <stdlib.h>

#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

#if defined(__GNUC__) && !defined(__clang__)
/* The f32 kernels below rely on loop vectorization, which -O2 barely does in GCC 12. */
#pragma GCC optimize("O3")
#endif


static glow_status get_ints(const glow_node *n, glow_attr_id a, int want, const int64_t **v,
                            glow_diag *d)
{
    int cnt = 0;
    *v = glow_node_ints(n, a, &cnt);
    if (!*v || cnt != want)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': '%s' has %d values, expected %d",
                         KIND_NAME(n), glow_attr_name(a), *v ? cnt : 0, want);
    return GLOW_OK;
}

/* Reads the window attributes of n for input x (rank 3..5). */
glow_status glow_ev_read_win(const glow_node *n, const glow_type *x, win3 *w, glow_diag *d)
{
    if (x->rank < 3 || x->rank > 5)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': input has rank %d, expected 3 to 5",
                         KIND_NAME(n), x->rank);
    int nsp = x->rank - 2;
    const int64_t *k, *s, *p, *dl;
    GLOW_TRY(get_ints(n, GA_KERNEL, nsp, &k, d));
    GLOW_TRY(get_ints(n, GA_STRIDES, nsp, &s, d));
    GLOW_TRY(get_ints(n, GA_PADS, 2 * nsp, &p, d));
    GLOW_TRY(get_ints(n, GA_DILATIONS, nsp, &dl, d));
    memset(w, 0, sizeof *w);
    w->nsp = nsp;
    w->n = x->dims[0];
    w->c = w->m = x->dims[1];
    w->group = glow_node_int(n, GA_GROUP, 1);
    for (int i = 0; i < 3; i++) {
        w->in[i] = w->out[i] = w->k[i] = w->s[i] = w->dil[i] = 1;
        w->pb[i] = w->pe[i] = 0;
    }
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i;
        if (k[i] < 1 || s[i] < 1 || dl[i] < 1 || p[i] < 0 || p[nsp + i] < 0 ||
            k[i] > (1 << 20) || dl[i] > (1 << 20) || s[i] > (1 << 30) || p[i] > (1 << 30) ||
            p[nsp + i] > (1 << 30))
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': bad window attributes in dim %d",
                             KIND_NAME(n), i);
        w->in[j] = x->dims[2 + i];
        w->k[j] = k[i];
        w->s[j] = s[i];
        w->pb[j] = p[i];
        w->pe[j] = p[nsp + i];
        w->dil[j] = dl[i];
    }
    if (w->group < 1)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': group %lld", KIND_NAME(n),
                         (long long)w->group);
    return GLOW_OK;
}

/* Floor-based output sizes of a forward window op. */
glow_status glow_ev_forward_out(const glow_node *n, win3 *w, glow_diag *d)
{
    for (int j = 0; j < 3; j++) {
        int64_t span = w->in[j] + w->pb[j] + w->pe[j] - w->dil[j] * (w->k[j] - 1);
        if (span < 1)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': window larger than the padded "
                             "input", KIND_NAME(n));
        w->out[j] = (span - 1) / w->s[j] + 1;
    }
    return GLOW_OK;
}

/* The expected [N, C, spatial...] shape for rank 2 + nsp. */
void glow_ev_nc_dims(const win3 *w, int64_t c, const int64_t *sp, int64_t *dims)
{
    dims[0] = w->n;
    dims[1] = c;
    for (int i = 0; i < w->nsp; i++)
        dims[2 + i] = sp[3 - w->nsp + i];
}

static bool all_f32(const glow_tensor *ins, int nin, const glow_tensor *outs)
{
    for (int i = 0; i < nin; i++)
        if (ins[i].type.dtype != GLOW_F32)
            return false;
    return outs[0].type.dtype == GLOW_F32;
}

/* --- Conv --- */

/* y[m][p] += sum_kk w[m][kk] * col[kk][p] for 4 rows of m at once (p < np). */
static void gemm4_f32(int64_t np, int64_t kdim, const float *w0, const float *w1,
                      const float *w2, const float *w3, const float *col, int64_t ldc,
                      float *restrict y0, float *restrict y1, float *restrict y2,
                      float *restrict y3)
{
    for (int64_t kk = 0; kk < kdim; kk++) {
        const float *restrict c = col + kk * ldc;
        float a0 = w0[kk], a1 = w1[kk], a2 = w2[kk], a3 = w3[kk];
        for (int64_t p = 0; p < np; p++) {
            float v = c[p];
            y0[p] += a0 * v;
            y1[p] += a1 * v;
            y2[p] += a2 * v;
            y3[p] += a3 * v;
        }
    }
}

static void gemm1_f32(int64_t np, int64_t kdim, const float *w0, const float *col,
                      int64_t ldc, float *restrict y0)
{
    for (int64_t kk = 0; kk < kdim; kk++) {
        const float *restrict c = col + kk * ldc;
        float a0 = w0[kk];
        for (int64_t p = 0; p < np; p++)
            y0[p] += a0 * c[p];
    }
}

/* Fills col[kk][q] for the output rows [r0, r1) (rows = od * OH + oh) of one group. */
static void im2col_f32(const win3 *w, const float *x, int64_t cg, int64_t r0, int64_t r1,
                       float *col)
{
    int64_t ow_n = w->out[2], np = (r1 - r0) * ow_n;
    int64_t kk = 0;
    for (int64_t c = 0; c < cg; c++) {
        const float *xc = x + c * w->in[0] * w->in[1] * w->in[2];
        for (int64_t kd = 0; kd < w->k[0]; kd++)
            for (int64_t kh = 0; kh < w->k[1]; kh++)
                for (int64_t kw = 0; kw < w->k[2]; kw++, kk++) {
                    float *dst = col + kk * np;
                    for (int64_t r = r0; r < r1; r++) {
                        int64_t od = r / w->out[1], oh = r % w->out[1];
                        int64_t id = od * w->s[0] - w->pb[0] + kd * w->dil[0];
                        int64_t ih = oh * w->s[1] - w->pb[1] + kh * w->dil[1];
                        float *row = dst + (r - r0) * ow_n;
                        if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1]) {
                            memset(row, 0, sizeof(float) * (size_t)ow_n);
                            continue;
                        }
                        const float *src = xc + (id * w->in[1] + ih) * w->in[2];
                        int64_t off = kw * w->dil[2] - w->pb[2], st = w->s[2];
                        for (int64_t ow = 0; ow < ow_n; ow++) {
                            int64_t iw = ow * st + off;
                            row[ow] = iw >= 0 && iw < w->in[2] ? src[iw] : 0.0f;
                        }
                    }
                }
    }
}

static glow_status conv_f32(const win3 *w, const glow_tensor *ins, int nin, glow_tensor *y,
                            glow_diag *d, const glow_node *n)
{
    const float *x = ins[0].data, *wt = ins[1].data;
    const float *bias = nin > 2 ? ins[2].data : NULL;
    float *out = y->data;
    int64_t cg = w->c / w->group, mg = w->m / w->group;
    int64_t kdim = cg * w->k[0] * w->k[1] * w->k[2];
    int64_t rows = w->out[0] * w->out[1], ow_n = w->out[2], plane = rows * ow_n;
    int64_t in_plane = w->in[0] * w->in[1] * w->in[2];
    /* A 1x1 convolution without stride or padding reads its input as the column buffer. */
    bool direct = w->k[0] * w->k[1] * w->k[2] == 1 && w->s[0] * w->s[1] * w->s[2] == 1 &&
                  !w->pb[0] && !w->pb[1] && !w->pb[2] && !w->pe[0] && !w->pe[1] && !w->pe[2];
    /* Bands of whole output rows sized so the column buffer stays cache-sized. */
    int64_t band = ((int64_t)1 << 17) / (kdim > 0 ? kdim : 1) / (ow_n > 0 ? ow_n : 1);
    if (band < 1)
        band = 1;
    if (band > rows)
        band = rows;
    if (direct)
        band = rows;
    float *col = NULL;
    if (!direct && kdim > 0 && plane > 0) {
        col = malloc(sizeof(float) * (size_t)kdim * (size_t)(band * ow_n));
        if (!col)
            return glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': no memory for the column buffer",
                             KIND_NAME(n));
    }
    for (int64_t b = 0; b < w->n; b++)
        for (int64_t g = 0; g < w->group; g++) {
            const float *xg = x + (b * w->c + g * cg) * in_plane;
            float *yg = out + (b * w->m + g * mg) * plane;
            for (int64_t m = 0; m < mg; m++) {
                float bv = bias ? bias[g * mg + m] : 0.0f;
                for (int64_t p = 0; p < plane; p++)
                    yg[m * plane + p] = bv;
            }
            for (int64_t r0 = 0; r0 < rows; r0 += band) {
                int64_t r1 = r0 + band < rows ? r0 + band : rows;
                int64_t np = (r1 - r0) * ow_n, p0 = r0 * ow_n, ldc = np;
                const float *c = xg;
                if (direct)
                    ldc = in_plane;
                else
                    im2col_f32(w, xg, cg, r0, r1, col), c = col;
                const float *wg = wt + g * mg * kdim;
                int64_t m = 0;
                for (; m + 4 <= mg; m += 4)
                    gemm4_f32(np, kdim, wg + m * kdim, wg + (m + 1) * kdim,
                              wg + (m + 2) * kdim, wg + (m + 3) * kdim, c, ldc,
                              yg + m * plane + p0, yg + (m + 1) * plane + p0,
                              yg + (m + 2) * plane + p0, yg + (m + 3) * plane + p0);
                for (; m < mg; m++)
                    gemm1_f32(np, kdim, wg + m * kdim, c, ldc, yg + m * plane + p0);
            }
        }
    free(col);
    return GLOW_OK;
}

/* Any float kind, accumulating in f64. */
static void conv_generic(const win3 *w, const glow_tensor *ins, int nin, glow_tensor *y)
{
    glow_dtype tx = ins[0].type.dtype, tw = ins[1].type.dtype, ty = y->type.dtype;
    int64_t cg = w->c / w->group, mg = w->m / w->group;
    int64_t ksz = w->k[0] * w->k[1] * w->k[2], in_plane = w->in[0] * w->in[1] * w->in[2];
    int64_t yi = 0;
    for (int64_t b = 0; b < w->n; b++)
        for (int64_t m = 0; m < w->m; m++) {
            int64_t g = m / mg;
            double bias = nin > 2 ? ev_ldf(ins[2].type.dtype, ins[2].data, m) : 0.0;
            for (int64_t od = 0; od < w->out[0]; od++)
                for (int64_t oh = 0; oh < w->out[1]; oh++)
                    for (int64_t ow = 0; ow < w->out[2]; ow++, yi++) {
                        double acc = bias;
                        for (int64_t c = 0; c < cg; c++) {
                            int64_t xb = (b * w->c + g * cg + c) * in_plane;
                            int64_t wb = (m * cg + c) * ksz, ki = 0;
                            for (int64_t kd = 0; kd < w->k[0]; kd++)
                                for (int64_t kh = 0; kh < w->k[1]; kh++)
                                    for (int64_t kw = 0; kw < w->k[2]; kw++, ki++) {
                                        int64_t id = od * w->s[0] - w->pb[0] + kd * w->dil[0];
                                        int64_t ih = oh * w->s[1] - w->pb[1] + kh * w->dil[1];
                                        int64_t iw = ow * w->s[2] - w->pb[2] + kw * w->dil[2];
                                        if (id < 0 || id >= w->in[0] || ih < 0 ||
                                            ih >= w->in[1] || iw < 0 || iw >= w->in[2])
                                            continue;
                                        int64_t xi = xb + (id * w->in[1] + ih) * w->in[2] + iw;
                                        acc += ev_ldf(tx, ins[0].data, xi) *
                                               ev_ldf(tw, ins[1].data, wb + ki);
                                    }
                        }
                        ev_stf(ty, y->data, yi, acc);
                    }
        }
}

/* Checks the weight (and bias) of a Conv or ConvTranspose against the input. */
static glow_status check_conv_operands(const glow_node *n, const glow_tensor *ins, int nin,
                                       win3 *w, bool transposed, glow_diag *d)
{
    const glow_type *x = &ins[0].type, *wt = &ins[1].type;
    if (wt->rank != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': weight rank %d differs from input "
                         "rank %d", KIND_NAME(n), wt->rank, x->rank);
    int64_t wd[GLOW_MAX_DIMS];
    if (!transposed) {
        w->m = wt->dims[0];
        if (w->c % w->group != 0 || w->m % w->group != 0)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': channels not divisible by group "
                             "%lld", KIND_NAME(n), (long long)w->group);
        wd[0] = w->m;
        wd[1] = w->c / w->group;
    } else {
        if (w->c % w->group != 0)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': channels not divisible by group "
                             "%lld", KIND_NAME(n), (long long)w->group);
        wd[0] = w->c;
        wd[1] = wt->dims[1];
        w->m = wt->dims[1] * w->group;
    }
    for (int i = 0; i < w->nsp; i++)
        wd[2 + i] = w->k[3 - w->nsp + i];
    GLOW_TRY(glow_ev_expect_shape(n, "weight", wt, x->rank, wd, d));
    if (nin > 2)
        GLOW_TRY(glow_ev_expect_shape(n, "bias", &ins[2].type, 1, &w->m, d));
    return GLOW_OK;
}

glow_status glow_ev_conv(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    win3 w;
    int nin = (int)n->nin;
    GLOW_TRY(glow_ev_read_win(n, &ins[0].type, &w, d));
    GLOW_TRY(check_conv_operands(n, ins, nin, &w, false, d));
    GLOW_TRY(glow_ev_forward_out(n, &w, d));
    int64_t dims[GLOW_MAX_DIMS];
    glow_ev_nc_dims(&w, w.m, w.out, dims);
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, w.nsp + 2, dims, d));
    if (all_f32(ins, nin, outs) && !glow_ev_reference())
        return conv_f32(&w, ins, nin, &outs[0], d, n);
    conv_generic(&w, ins, nin, &outs[0]);
    return GLOW_OK;
}

/* ConvTranspose scatters each input element through the kernel into an f64 accumulator:
 * y[o] += x[i] * w[k] where o = i * stride - pad_begin + k * dilation. */
glow_status glow_ev_conv_transpose(const glow_node *n, const glow_tensor *ins,
                                   glow_tensor *outs, glow_diag *d)
{
    win3 w;
    int nin = (int)n->nin;
    GLOW_TRY(glow_ev_read_win(n, &ins[0].type, &w, d));
    GLOW_TRY(check_conv_operands(n, ins, nin, &w, true, d));
    const glow_type *yt = &outs[0].type;
    if (yt->rank != ins[0].type.rank || yt->dims[0] != w.n || yt->dims[1] != w.m)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result shape does not match",
                         KIND_NAME(n));
    for (int i = 0; i < w.nsp; i++)
        w.out[3 - w.nsp + i] = yt->dims[2 + i];
    int64_t count = ev_numel(yt);
    double *acc = calloc((size_t)(count > 0 ? count : 1), sizeof(double));
    if (!acc)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "%s '%s': no memory for the accumulator",
                         KIND_NAME(n));
    glow_dtype tx = ins[0].type.dtype, tw = ins[1].type.dtype;
    int64_t cg = w.c / w.group, mg = w.m / w.group, ksz = w.k[0] * w.k[1] * w.k[2];
    int64_t in_plane = w.in[0] * w.in[1] * w.in[2], out_plane = w.out[0] * w.out[1] * w.out[2];
    for (int64_t b = 0; b < w.n; b++)
        for (int64_t c = 0; c < w.c; c++) {
            int64_t g = c / cg;
            for (int64_t i = 0; i < in_plane; i++) {
                double xv = ev_ldf(tx, ins[0].data, (b * w.c + c) * in_plane + i);
                int64_t id = i / (w.in[1] * w.in[2]), ih = i / w.in[2] % w.in[1];
                int64_t iw = i % w.in[2];
                for (int64_t mm = 0; mm < mg; mm++) {
                    int64_t m = g * mg + mm, wb = (c * mg + mm) * ksz, ki = 0;
                    double *ym = acc + (b * w.m + m) * out_plane;
                    for (int64_t kd = 0; kd < w.k[0]; kd++)
                        for (int64_t kh = 0; kh < w.k[1]; kh++)
                            for (int64_t kw = 0; kw < w.k[2]; kw++, ki++) {
                                int64_t od = id * w.s[0] - w.pb[0] + kd * w.dil[0];
                                int64_t oh = ih * w.s[1] - w.pb[1] + kh * w.dil[1];
                                int64_t ow = iw * w.s[2] - w.pb[2] + kw * w.dil[2];
                                if (od < 0 || od >= w.out[0] || oh < 0 || oh >= w.out[1] ||
                                    ow < 0 || ow >= w.out[2])
                                    continue;
                                ym[(od * w.out[1] + oh) * w.out[2] + ow] +=
                                    xv * ev_ldf(tw, ins[1].data, wb + ki);
                            }
                }
            }
        }
    for (int64_t i = 0; i < count; i++) {
        int64_t m = i / out_plane % w.m;
        double bias = nin > 2 ? ev_ldf(ins[2].type.dtype, ins[2].data, m) : 0.0;
        ev_stf(yt->dtype, outs[0].data, i, acc[i] + bias);
    }
    free(acc);
    return GLOW_OK;
}

/* --- Pools --- */

static glow_status pool_setup(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              win3 *w, glow_diag *d)
{
    GLOW_TRY(glow_ev_read_win(n, &ins[0].type, w, d));
    w->group = 1;
    GLOW_TRY(glow_ev_forward_out(n, w, d));
    int64_t dims[GLOW_MAX_DIMS];
    glow_ev_nc_dims(w, w->c, w->out, dims);
    for (uint32_t r = 0; r < n->nout; r++)
        GLOW_TRY(glow_ev_expect_shape(n, r ? "index result" : "result", &outs[r].type,
                                      w->nsp + 2, dims, d));
    return GLOW_OK;
}

/* Range of kernel taps along one dim whose input coordinate lies in [0, in). */
static inline void tap_range(const win3 *w, int j, int64_t o, int64_t *lo, int64_t *hi)
{
    int64_t start = o * w->s[j] - w->pb[j], dl = w->dil[j];
    int64_t a = 0, b = w->k[j];
    if (start < 0)
        a = (-start + dl - 1) / dl;
    int64_t last = w->in[j] - 1 - start; /* largest k * dl allowed */
    if (last < 0)
        b = 0;
    else if (last / dl + 1 < b)
        b = last / dl + 1;
    *lo = a;
    *hi = b > a ? b : a;
}

/* MaxPool (numeric kinds) with the optional flattened NCHW index of each maximum (the first
 * one in window order on ties, as ONNX's reference). Windows entirely in the padding give
 * -inf (or the kind's first element) and index 0; no valid model produces one. */
static glow_status max_pool(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    win3 w;
    GLOW_TRY(pool_setup(n, ins, outs, &w, d));
    glow_dtype t = ins[0].type.dtype;
    bool f32 = t == GLOW_F32;
    const float *xf = ins[0].data;
    float *yf = outs[0].data;
    bool want_idx = n->nout > 1;
    int64_t in_plane = w.in[0] * w.in[1] * w.in[2], yi = 0;
    for (int64_t nc = 0; nc < w.n * w.c; nc++)
        for (int64_t od = 0; od < w.out[0]; od++)
            for (int64_t oh = 0; oh < w.out[1]; oh++)
                for (int64_t ow = 0; ow < w.out[2]; ow++, yi++) {
                    int64_t lo[3], hi[3];
                    tap_range(&w, 0, od, &lo[0], &hi[0]);
                    tap_range(&w, 1, oh, &lo[1], &hi[1]);
                    tap_range(&w, 2, ow, &lo[2], &hi[2]);
                    double best = -INFINITY;
                    int64_t arg = -1;
                    for (int64_t kd = lo[0]; kd < hi[0]; kd++)
                        for (int64_t kh = lo[1]; kh < hi[1]; kh++) {
                            int64_t id = od * w.s[0] - w.pb[0] + kd * w.dil[0];
                            int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.dil[1];
                            int64_t rb = nc * in_plane + (id * w.in[1] + ih) * w.in[2];
                            for (int64_t kw = lo[2]; kw < hi[2]; kw++) {
                                int64_t xi = rb + ow * w.s[2] - w.pb[2] + kw * w.dil[2];
                                double v = f32 ? xf[xi] : ev_ldf(t, ins[0].data, xi);
                                if (arg < 0 || v > best)
                                    best = v, arg = xi;
                            }
                        }
                    if (arg < 0)
                        arg = 0;
                    if (f32)
                        yf[yi] = (float)best;
                    else if (ev_is_float(t))
                        ev_stf(t, outs[0].data, yi, best);
                    else
                        ev_copy(outs[0].data, yi, ins[0].data, arg, ev_size(t));
                    if (want_idx)
                        ((int64_t *)outs[1].data)[yi] = arg;
                }
    return GLOW_OK;
}

/* AveragePool and LpPool. Average divides by the taps inside the input, or with
 * count_include_pad by the taps inside input plus pads. The importer folds ceil_mode into
 * extra end padding and records how much in ceil_extra: those cells are not counted, as
 * ONNX counts only the model's own pads. */
static glow_status avg_pool(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    win3 w;
    GLOW_TRY(pool_setup(n, ins, outs, &w, d));
    int64_t own_pe[3] = { w.pe[0], w.pe[1], w.pe[2] };
    int ncx = 0;
    const int64_t *cx = glow_node_ints(n, GA_CEIL_EXTRA, &ncx);
    if (cx && ncx != w.nsp)
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': 'ceil_extra' has %d values, "
                         "expected %d", KIND_NAME(n), ncx, w.nsp);
    for (int i = 0; cx && i < w.nsp; i++) {
        int j = 3 - w.nsp + i;
        if (cx[i] < 0 || cx[i] > w.pe[j])
            return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': 'ceil_extra'[%d] = %lld is not "
                             "within the end pad %lld", KIND_NAME(n), i, (long long)cx[i],
                             (long long)w.pe[j]);
        own_pe[j] -= cx[i];
    }
    glow_dtype t = ins[0].type.dtype;
    bool f32 = t == GLOW_F32, lp = n->kind == NK_LP_POOL;
    bool cip = glow_node_int(n, GA_COUNT_INCLUDE_PAD, 0) != 0;
    int64_t p = glow_node_int(n, GA_P, 2);
    const float *xf = ins[0].data;
    int64_t in_plane = w.in[0] * w.in[1] * w.in[2], yi = 0;
    for (int64_t nc = 0; nc < w.n * w.c; nc++)
        for (int64_t od = 0; od < w.out[0]; od++)
            for (int64_t oh = 0; oh < w.out[1]; oh++)
                for (int64_t ow = 0; ow < w.out[2]; ow++, yi++) {
                    int64_t o[3] = { od, oh, ow }, lo[3], hi[3], padded = 1;
                    for (int j = 0; j < 3; j++) {
                        tap_range(&w, j, o[j], &lo[j], &hi[j]);
                        /* Taps inside [-pad_begin, in + the model's pad_end). */
                        int64_t start = o[j] * w.s[j] - w.pb[j], cnt = 0;
                        for (int64_t k = 0; k < w.k[j]; k++) {
                            int64_t c = start + k * w.dil[j];
                            cnt += c >= -w.pb[j] && c < w.in[j] + own_pe[j];
                        }
                        padded *= cnt;
                    }
                    double acc = 0;
                    int64_t count = 0;
                    for (int64_t kd = lo[0]; kd < hi[0]; kd++)
                        for (int64_t kh = lo[1]; kh < hi[1]; kh++) {
                            int64_t id = od * w.s[0] - w.pb[0] + kd * w.dil[0];
                            int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.dil[1];
                            int64_t rb = nc * in_plane + (id * w.in[1] + ih) * w.in[2];
                            for (int64_t kw = lo[2]; kw < hi[2]; kw++, count++) {
                                int64_t xi = rb + ow * w.s[2] - w.pb[2] + kw * w.dil[2];
                                double v = f32 ? xf[xi] : ev_ldf(t, ins[0].data, xi);
                                acc += lp ? pow(fabs(v), (double)p) : v;
                            }
                        }
                    double r;
                    if (lp)
                        r = pow(acc, 1.0 / (double)p);
                    else
                        r = acc / (double)(cip ? padded : count);
                    if (f32)
                        ((float *)outs[0].data)[yi] = (float)r;
                    else
                        ev_stf(t, outs[0].data, yi, r);
                }
    return GLOW_OK;
}

glow_status glow_ev_pool(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    if (n->kind == NK_MAX_POOL)
        return max_pool(n, ins, outs, d);
    return avg_pool(n, ins, outs, d);
}
