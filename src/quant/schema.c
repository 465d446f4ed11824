// schema.c - From a recorded range to a quantized type: the calibration that picks the range
// (min/max, or the KL-optimal clipping threshold over the histogram) and the schema that turns
// it into a kind, a scale and an offset.
//
// Every range is widened to contain 0 first, so real zero (padding, ReLU's floor, a bias-free
// channel) is exactly representable: its integer is the offset.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "quant/quant.h"

/* Ranges narrower than this (a constant-zero tensor) get this width instead. */
#define MIN_RANGE 1e-6

static float pow2_ceil(double s)
{
    return (float)exp2(ceil(log2(s)));
}

glow_type glow_quant_type(double lo, double hi, const glow_quant_options *o,
                          const glow_type *shape)
{
    glow_type t = *shape;
    bool nonneg = lo >= 0;
    lo = lo < 0 ? lo : 0;
    hi = hi > 0 ? hi : 0;
    if (hi - lo < MIN_RANGE)
        hi = lo + MIN_RANGE;
    double absmax = -lo > hi ? -lo : hi;
    if (o->precision == GLOW_I16Q) {
        t.dtype = GLOW_I16Q;
        t.scale = (float)(absmax / 32767.0);
        t.offset = 0;
        return t;
    }
    switch (o->schema) {
    case GLOW_QSCHEMA_ASYMMETRIC: {
        t.dtype = GLOW_U8Q;
        t.scale = (float)((hi - lo) / 255.0);
        double z = nearbyint(-lo / (double)t.scale);
        t.offset = (int32_t)(z < 0 ? 0 : z > 255 ? 255 : z);
        return t;
    }
    case GLOW_QSCHEMA_SYMMETRIC_UINT8:
        if (nonneg) {
            t.dtype = GLOW_U8Q;
            t.scale = (float)(hi / 255.0);
            t.offset = 0;
            return t;
        }
        /* fallthrough */
    case GLOW_QSCHEMA_SYMMETRIC:
    case GLOW_QSCHEMA_SYMMETRIC_POWER2:
        t.dtype = GLOW_I8Q;
        t.scale = (float)(absmax / 127.0);
        if (o->schema == GLOW_QSCHEMA_SYMMETRIC_POWER2)
            t.scale = pow2_ceil(absmax / 127.0);
        t.offset = 0;
        return t;
    }
    return t;
}

/* --- KL calibration --- */

/* KL(P || Q) of two histograms of `n` bins given as counts (normalized here); bins where P
 * is 0 add nothing, bins where Q is 0 but P is not get a small floor (Q was quantized away). */
static double kl_divergence(const double *p, const double *q, int n)
{
    double sp = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        sp += p[i];
        sq += q[i];
    }
    if (sp <= 0 || sq <= 0)
        return INFINITY;
    double kl = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] <= 0)
            continue;
        double pi = p[i] / sp, qi = q[i] > 0 ? q[i] / sq : 1e-12;
        kl += pi * log(pi / qi);
    }
    return kl;
}

/* TensorRT's entropy calibration on a histogram of |x| (`n` bins of width w): for each
 * candidate threshold of i bins, P is the histogram clipped at i (the outliers added to its
 * last bin) and Q is the first i bins (without the outliers: what clipping loses shows as
 * P's heavier last bin) squeezed into `levels` levels and spread back over the non-empty bins;
 * the i with the least KL(P || Q) wins. Returns the threshold in bins. */
static int kl_threshold_bins(const double *h, int n, int levels)
{
    if (n <= levels)
        return n;
    double *p = malloc(sizeof(double) * (size_t)n), *q = malloc(sizeof(double) * (size_t)n);
    if (!p || !q) {
        free(p);
        free(q);
        return n;
    }
    /* Thresholds below the median of |x| are not candidates: for a distribution far from 0
     * (a global average pool's means) the bins before its mass are empty, and a threshold
     * just past where the mass begins looks lossless to the divergence while it clips half
     * the values. */
    double total = 0, acc = 0;
    for (int i = 0; i < n; i++)
        total += h[i];
    int start = levels;
    for (int i = 0; i < n && acc < total / 2; i++) {
        acc += h[i];
        if (acc >= total / 2 && i + 1 > start)
            start = i + 1;
    }
    double total_above = 0;
    for (int i = start; i < n; i++)
        total_above += h[i];
    int best = n;
    double best_kl = INFINITY;
    for (int i = start; i <= n; i++) {
        memcpy(p, h, sizeof(double) * (size_t)i);
        p[i - 1] += total_above;
        /* Merge the i bins into `levels` groups; each group's count spreads evenly over the
         * group's non-empty bins of h. */
        for (int g = 0; g < levels; g++) {
            int b0 = (int)((int64_t)g * i / levels), b1 = (int)((int64_t)(g + 1) * i / levels);
            double sum = 0;
            int nonzero = 0;
            for (int b = b0; b < b1; b++) {
                sum += h[b];
                nonzero += h[b] > 0;
            }
            for (int b = b0; b < b1; b++)
                q[b] = h[b] > 0 ? sum / nonzero : 0;
        }
        double kl = kl_divergence(p, q, i);
        if (kl < best_kl) {
            best_kl = kl;
            best = i;
        }
        if (i < n)
            total_above -= h[i];
    }
    free(p);
    free(q);
    return best;
}

/* The mean squared error the histogram predicts for values quantized with the type the schema
 * makes of [lo, hi]: values outside the representable range lose what clipping cuts off, the
 * others the rounding error of a uniform step (step^2 / 12). Bin centers stand for the
 * values. */
static double expected_mse(const glow_quant_range *r, const glow_quant_options *o, double lo,
                           double hi)
{
    glow_type shape = { .dtype = GLOW_F32 };
    glow_type t = glow_quant_type(lo, hi, o, &shape);
    int32_t qmin, qmax;
    glow_dtype_qrange(t.dtype, &qmin, &qmax);
    double s = t.scale, rlo = s * (double)(qmin - t.offset), rhi = s * (double)(qmax - t.offset);
    double w = (r->max - r->min) / r->nbins, err = 0, total = 0;
    for (int b = 0; b < r->nbins; b++) {
        double c = r->min + (b + 0.5) * w, n = (double)r->hist[b];
        /* The bin around 0 is mostly exact zeros where there are many (a ReLU's): they
         * quantize exactly in every schema, so they count for neither candidate. */
        if (r->min + b * w <= 0 && 0 < r->min + (b + 1) * w)
            continue;
        double e = c < rlo ? (rlo - c) * (rlo - c) : c > rhi ? (c - rhi) * (c - rhi)
                                                              : s * s / 12;
        err += n * e;
        total += n;
    }
    return total > 0 ? err / total : 0;
}

void glow_quant_calibrate(const glow_quant_range *r, const glow_quant_options *o, double *lo,
                          double *hi)
{
    *lo = r->min;
    *hi = r->max;
    if (o->calibration != GLOW_QCALIB_KL || !r->hist || r->nbins < 2 || !(r->max > r->min))
        return;
    /* The histogram of |x|: each bin's count goes to the |x| bin of its center. */
    double absmax = fmax(fabs(r->min), fabs(r->max));
    int n = r->nbins;
    double *h = calloc((size_t)n, sizeof(double));
    if (!h)
        return;
    double w = (r->max - r->min) / n, aw = absmax / n;
    for (int b = 0; b < n; b++) {
        double c = fabs(r->min + (b + 0.5) * w);
        int ab = (int)(c / aw);
        h[ab < n ? ab : n - 1] += (double)r->hist[b];
    }
    /* Real zero is exact in every schema (it is the offset), so the bin around it (a ReLU's
     * spike of exact zeros) is no information to keep: left in, it makes the search favour
     * the narrowest threshold, whose first level is that bin alone. */
    h[0] = 0;
    /* 8-bit ranges that stay >= 0 have 256 levels on one side, signed ones 128 per side. */
    int levels = r->min >= 0 && o->precision != GLOW_I16Q ? 256 : 128;
    int t = kl_threshold_bins(h, n, levels);
    free(h);
    double thr = (t + 0.5) * aw;
    if (thr >= absmax)
        return;
    /* The divergence compares distributions, not values: it may clip a few large values that
     * matter most (a classifier's top scores), so its threshold stands only where the
     * histogram says it also loses less than the whole range would. */
    double klo = fmax(*lo, -thr), khi = fmin(*hi, thr);
    if (expected_mse(r, o, klo, khi) < expected_mse(r, o, *lo, *hi)) {
        *lo = klo;
        *hi = khi;
    }
}

/* --- names --- */

bool glow_quant_schema_from_name(const char *name, glow_quant_schema *out)
{
    static const char *const names[] = { "asymmetric", "symmetric", "symmetric-uint8",
                                         "symmetric-power2" };
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, names[i])) {
            *out = (glow_quant_schema)i;
            return true;
        }
    return false;
}

bool glow_quant_calibration_from_name(const char *name, glow_quant_calibration *out)
{
    if (!strcmp(name, "minmax"))
        *out = GLOW_QCALIB_MINMAX;
    else if (!strcmp(name, "kl"))
        *out = GLOW_QCALIB_KL;
    else
        return false;
    return true;
}

bool glow_quant_kind_list_ok(const char *list, char *bad, size_t badlen)
{
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        bool found = len == 0;
        for (int k = 0; k < NK_COUNT && !found; k++) {
            const char *name = glow_node_kind_name((glow_node_kind)k);
            found = strlen(name) == len && !strncasecmp(name, p, len);
        }
        if (!found) {
            snprintf(bad, badlen, "%.*s", (int)len, p);
            return false;
        }
        p += len + (p[len] == ',');
    }
    return true;
}
