// onnx_ops_signal.c - Signal ops: Hann/Hamming/Blackman windows and MelWeightMatrix (computed
// constants), DFT and STFT (MatMul with constant cosine and sine matrices).
//
// Window and mel sizes are inputs that must be known at compile time, so those ops fold to
// constants. DFT has static lengths, so the transform is two real matrix products per part
// with the twiddle factors as constants; no FFT node kind is needed.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* The output kind from attribute `name` (a TensorProto code), default f32; floats only. */
static glow_status float_dtype_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                                    glow_dtype *out)
{
    GLOW_TRY(onnx_attr_check(cx, np, name, 2));
    int64_t code = onnx_attr_int(np, name, 1);
    if (!onnx_dtype_of_code(code, out))
        return onnx_unsupported(cx, np, "'%s' = %lld, an element type glowc lacks", name,
                                (long long)code);
    if (glow_dtype_class_of(*out) == DC_QUANT)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' = %lld", name, (long long)code);
    return GLOW_OK;
}

/* A constant scalar input read as f64. */
static glow_status scalar_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i, double *v)
{
    double *vals;
    int n;
    *v = 0; /* defined on failure too (gcc -O3 cannot tell it is unused then) */
    GLOW_TRY(onnx_input_floats(cx, np, i, &vals, &n));
    if (n != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d must hold one value, not %d", i,
                         n);
    *v = vals[0];
    return GLOW_OK;
}

/* --- windows: w[n] = a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D), D = N (periodic) or N-1 */

static glow_status load_window(onnx_ctx *cx, const Onnx__NodeProto *np, double a0, double a1,
                               double a2)
{
    double size;
    GLOW_TRY(scalar_input(cx, np, 0, &size));
    glow_dtype t;
    GLOW_TRY(float_dtype_attr(cx, np, "output_datatype", &t));
    if (!(size >= 0 && size <= (double)(1 << 24)))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "window size %g", size);
    int64_t n = (int64_t)size;
    double den = onnx_attr_int(np, "periodic", 1) ? (double)n : (double)n - 1;
    double *vals;
    void *buf;
    GLOW_TRY(onnx_const_buffer(cx, np, n, sizeof(double), (void **)&vals));
    GLOW_TRY(onnx_const_buffer(cx, np, n, glow_dtype_size(t), &buf));
    const double tau = 6.283185307179586;
    for (int64_t i = 0; i < n; i++) {
        double ang = tau * (double)i / den;
        vals[i] = a0 - a1 * cos(ang) + a2 * cos(2 * ang);
    }
    return onnx_set_output(cx, np, 0, onnx_f64_constant(cx, np, "window", t, 1, &n, vals, buf));
}

glow_status load_hann_window(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    return load_window(cx, np, 0.5, 0.5, 0.0);
}

glow_status load_hamming_window(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    return load_window(cx, np, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

glow_status load_blackman_window(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                 glow_node_kind kind)
{
    return load_window(cx, np, 0.42, 0.5, 0.08);
}

/* Triangular filters on the mel scale, [dft_length / 2 + 1, num_mel_bins], following ONNX's
 * reference (edges snapped to integer bins by floor division). */
glow_status load_mel_weight_matrix(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                   glow_node_kind kind)
{
    double nmel, dft, rate, lo_hz, hi_hz;
    GLOW_TRY(scalar_input(cx, np, 0, &nmel));
    GLOW_TRY(scalar_input(cx, np, 1, &dft));
    GLOW_TRY(scalar_input(cx, np, 2, &rate));
    GLOW_TRY(scalar_input(cx, np, 3, &lo_hz));
    GLOW_TRY(scalar_input(cx, np, 4, &hi_hz));
    glow_dtype t;
    GLOW_TRY(float_dtype_attr(cx, np, "output_datatype", &t));
    if (!(nmel >= 1 && nmel <= 65536 && dft >= 1 && dft <= (double)(1 << 24) && rate > 0))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "num_mel_bins %g, dft_length %g, "
                         "sample_rate %g", nmel, dft, rate);
    int64_t nm = (int64_t)nmel, dl = (int64_t)dft, sr = (int64_t)rate;
    int64_t nspec = dl / 2 + 1, dims[2] = { nspec, nm };
    int64_t *bins = GLOW_NEW_ARRAY(&cx->scratch, int64_t, nm + 2);
    double lo_mel = 2595.0 * log10(1.0 + lo_hz / 700.0);
    double hi_mel = 2595.0 * log10(1.0 + hi_hz / 700.0);
    double step = (hi_mel - lo_mel) / (double)(nm + 2);
    for (int64_t i = 0; i < nm + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + lo_mel) / 2595.0) - 1.0);
        double b = floor((double)(dl + 1) * hz / (double)sr);
        if (!(b >= 0 && b < (double)nspec))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "mel edge %lld falls outside the %lld "
                             "spectrogram bins", (long long)i, (long long)nspec);
        bins[i] = (int64_t)b;
    }
    double *w;
    void *buf;
    GLOW_TRY(onnx_const_buffer(cx, np, nspec * nm, sizeof(double), (void **)&w));
    GLOW_TRY(onnx_const_buffer(cx, np, nspec * nm, glow_dtype_size(t), &buf));
    for (int64_t i = 0; i < nm; i++) {
        int64_t l = bins[i], c = bins[i + 1], h = bins[i + 2];
        if (c == l)
            w[c * nm + i] = 1.0;
        else
            for (int64_t j = l; j <= c; j++)
                w[j * nm + i] = (double)(j - l) / (double)(c - l);
        for (int64_t j = c; j < h; j++)
            w[j * nm + i] = (double)(h - j) / (double)(h - c);
    }
    return onnx_set_output(cx, np, 0, onnx_f64_constant(cx, np, "mel", t, 2, dims, w, buf));
}


/* --- DFT --- */

/* x[..., 0:1] or x[..., 1:2] (the real or imaginary part) without its last dim, with `axis`
 * moved last and flattened to [batch, n]; `perm` receives the transposition used. */
static glow_status dft_part(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, int part,
                            int axis, int64_t *perm, glow_value *out)
{
    const glow_type *xt = glow_value_type(x);
    int r = xt->rank - 1;
    glow_value v;
    GLOW_TRY(onnx_slice_axis(cx, np, x, r, part, part + 1, &v));
    GLOW_TRY(onnx_reshape(cx, np, v, r, xt->dims, &v));
    int k = 0;
    for (int i = 0; i < r; i++)
        if (i != axis)
            perm[k++] = i;
    perm[k] = axis;
    if (axis != r - 1) {
        glow_attr a = GLOW_AINTS(PERM, perm, r);
        GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &v, 1, &a, 1, NULL, 0, &v));
    }
    int64_t n = xt->dims[axis], flat[2] = { glow_type_numel(xt) / (n * xt->dims[r]), n };
    return onnx_reshape(cx, np, v, 2, flat, out);
}

/* The constant [rows, cols] matrix m[t][k] = f(2 pi t k / len) * scale(k). */
static glow_status twiddles(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                            glow_dtype dt, int64_t rows, int64_t cols, int64_t len, bool sine,
                            double sign, const double *colscale, glow_value *out)
{
    if (rows * cols > (int64_t)(ONNX_FOLD_MAX_BYTES / 8))
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "DFT of length %lld is too large",
                         (long long)len);
    double *m;
    void *buf;
    GLOW_TRY(onnx_const_buffer(cx, np, rows * cols, sizeof(double), (void **)&m));
    GLOW_TRY(onnx_const_buffer(cx, np, rows * cols, glow_dtype_size(dt), &buf));
    for (int64_t t = 0; t < rows; t++)
        for (int64_t k = 0; k < cols; k++) {
            /* Reduce t*k modulo len first, so the angle stays accurate for long transforms. */
            double ang = 6.283185307179586 * (double)((t * k) % len) / (double)len;
            m[t * cols + k] = (sine ? sign * sin(ang) : cos(ang)) * colscale[k];
        }
    int64_t dims[2] = { rows, cols };
    *out = onnx_f64_constant(cx, np, what, dt, 2, dims, m, buf);
    return GLOW_OK;
}

static glow_status mm(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value a, glow_value b,
                      glow_value *out)
{
    return onnx_build(cx, np, NK_MATMUL, (glow_value[]){ a, b }, 2, NULL, 0, NULL, 0, out);
}

static glow_status dft_core(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, int axis,
                            int64_t len, bool inverse, bool onesided, glow_value *out);

/* Real and imaginary parts as real matrix products: forward
 *   Yr = xr C + xi S,  Yi = xi C - xr S   (C = cos, S = sin of 2 pi t k / L),
 * inverse (scaled by 1/L) with the sine's sign flipped; the one-sided inverse (irfft) weighs
 * the implicit conjugate half by 2 and yields only the real part. */
glow_status load_dft(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    if (xt->rank < 2 || (xt->dims[xt->rank - 1] != 1 && xt->dims[xt->rank - 1] != 2) ||
        !glow_dtype_is_float(xt->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input must be float [..., N, 1 or 2]");
    int r = xt->rank - 1;
    int64_t ax = opset >= 20 ? -2 : 1;
    if (opset >= 20 && onnx_has_input(np, 2)) {
        int64_t *v;
        int n;
        GLOW_TRY(onnx_input_ints(cx, np, 2, &v, &n));
        if (n != 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "axis must hold one value");
        ax = v[0];
    } else if (opset < 20) {
        ax = onnx_attr_int(np, "axis", 1);
    }
    if (ax < 0)
        ax += xt->rank;
    if (ax < 0 || ax >= r)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis is out of range for rank %d",
                         xt->rank);
    int axis = (int)ax;
    bool inverse = onnx_attr_int(np, "inverse", 0) != 0;
    bool onesided = onnx_attr_int(np, "onesided", 0) != 0;
    int64_t n = xt->dims[axis];
    int64_t len = inverse && onesided ? 2 * (n - 1) : n;
    if (onnx_has_input(np, 1)) {
        double *v;
        int c;
        GLOW_TRY(onnx_input_floats(cx, np, 1, &v, &c));
        if (c != 1 || !(v[0] >= 1 && v[0] <= (double)(1 << 24)))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "dft_length must be one positive value");
        len = (int64_t)v[0];
    }
    glow_value y;
    GLOW_TRY(dft_core(cx, np, x, axis, len, inverse, onesided, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* The transform of x [..., n at axis, ..., 1 or 2] with length len. */
static glow_status dft_core(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, int axis,
                            int64_t len, bool inverse, bool onesided, glow_value *out)
{
    const glow_type *xt = glow_value_type(x);
    int r = xt->rank - 1;
    int64_t n = xt->dims[axis];
    if (len < 1 || n < 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "empty transform");
    bool complex_in = xt->dims[r] == 2;
    /* Rows of the matrices: the input samples used (the first min(n, len), or the one-sided
     * spectrum's bins); columns: the outputs. */
    int64_t rows = inverse && onesided ? (n < len / 2 + 1 ? n : len / 2 + 1) : (n < len ? n : len);
    int64_t cols = !inverse && onesided ? len / 2 + 1 : len;
    double *scale = GLOW_NEW_ARRAY(&cx->scratch, double, cols > rows ? cols : rows);
    for (int64_t k = 0; k < (cols > rows ? cols : rows); k++)
        scale[k] = 1.0;
    int64_t perm[GLOW_MAX_DIMS];
    glow_value xr, xi = { 0 }, c, s, yr, yi, t;
    GLOW_TRY(dft_part(cx, np, x, 0, axis, perm, &xr));
    if (complex_in)
        GLOW_TRY(dft_part(cx, np, x, 1, axis, perm, &xi));
    if (rows < n) {
        GLOW_TRY(onnx_slice_axis(cx, np, xr, 1, 0, rows, &xr));
        if (complex_in)
            GLOW_TRY(onnx_slice_axis(cx, np, xi, 1, 0, rows, &xi));
    }
    double sign = inverse ? -1.0 : 1.0;
    if (inverse) {
        /* The 1/L normalization folds into the matrices' columns. */
        for (int64_t k = 0; k < cols; k++)
            scale[k] = 1.0 / (double)len;
    }
    GLOW_TRY(twiddles(cx, np, "cos", xt->dtype, rows, cols, len, false, 1.0, scale, &c));
    GLOW_TRY(twiddles(cx, np, "sin", xt->dtype, rows, cols, len, true, sign, scale, &s));
    if (inverse && onesided) {
        /* Weigh rows: 2 except bin 0 and the Nyquist bin of an even length. */
        double *w = GLOW_NEW_ARRAY(&cx->scratch, double, rows);
        void *buf;
        GLOW_TRY(onnx_const_buffer(cx, np, rows, glow_dtype_size(xt->dtype), &buf));
        for (int64_t k = 0; k < rows; k++)
            w[k] = (k == 0 || (len % 2 == 0 && k == len / 2)) ? 1.0 : 2.0;
        int64_t wd[2] = { rows, 1 };
        glow_value wv = onnx_f64_constant(cx, np, "weights", xt->dtype, 2, wd, w, buf);
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ c, wv }, 2, NULL, 0, &c));
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ s, wv }, 2, NULL, 0, &s));
    }
    /* Forward: Yr = xr C + xi S, Yi = xi C - xr S (s holds +sin). Inverse: s holds -sin, so
     * the same expressions give Yr = xr C - xi sin, Yi = xi C + xr sin. */
    GLOW_TRY(mm(cx, np, xr, c, &yr));
    if (complex_in) {
        GLOW_TRY(mm(cx, np, xi, s, &t));
        GLOW_TRY(onnx_build(cx, np, NK_ADD, (glow_value[]){ yr, t }, 2, NULL, 0, NULL, 0, &yr));
    }
    bool real_out = inverse && onesided;
    if (!real_out) {
        GLOW_TRY(mm(cx, np, xr, s, &t));
        GLOW_TRY(onnx_build(cx, np, NK_NEG, &t, 1, NULL, 0, NULL, 0, &yi));
        if (complex_in) {
            GLOW_TRY(mm(cx, np, xi, c, &t));
            GLOW_TRY(onnx_build(cx, np, NK_ADD, (glow_value[]){ yi, t }, 2, NULL, 0, NULL, 0,
                                &yi));
        }
    }
    /* Back to [..., cols at axis, ...] with a trailing part dim. */
    int64_t tdims[GLOW_MAX_DIMS], inv[GLOW_MAX_DIMS], odims[GLOW_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        tdims[i] = perm[i] == axis ? cols : xt->dims[perm[i]];
        inv[perm[i]] = i;
    }
    for (int i = 0; i < r; i++)
        odims[i] = i == axis ? cols : xt->dims[i];
    odims[r] = 1;
    glow_value parts[2] = { yr, yi };
    for (int p = 0; p < (real_out ? 1 : 2); p++) {
        GLOW_TRY(onnx_reshape(cx, np, parts[p], r, tdims, &parts[p]));
        if (axis != r - 1) {
            glow_attr a = GLOW_AINTS(PERM, inv, r);
            GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &parts[p], 1, &a, 1, NULL, 0, &parts[p]));
        }
        GLOW_TRY(onnx_reshape(cx, np, parts[p], r + 1, odims, &parts[p]));
    }
    *out = parts[0];
    if (real_out)
        return GLOW_OK;
    glow_attr a = GLOW_AI(AXIS, r);
    return onnx_build(cx, np, NK_CONCAT, parts, 2, &a, 1, NULL, 0, out);
}

/* Frames of the signal [batch, length, 1 or 2] gathered with constant indices into
 * [batch, frames, frame_length, parts], weighted by the window, then one DFT per frame. */
glow_status load_stft(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, win = { 0 }, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    if (xt->rank != 3 || (xt->dims[2] != 1 && xt->dims[2] != 2) ||
        !glow_dtype_is_float(xt->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "signal must be float [batch, length, 1 "
                         "or 2]");
    double step;
    GLOW_TRY(scalar_input(cx, np, 1, &step));
    int64_t flen = xt->dims[1];
    if (onnx_has_input(np, 2)) {
        GLOW_TRY(onnx_input(cx, np, 2, &win));
        const glow_type *wt = glow_value_type(win);
        if (wt->rank != 1 || wt->dtype != xt->dtype)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "window must be 1-D of the signal's "
                             "type");
        flen = wt->dims[0];
    }
    if (onnx_has_input(np, 3)) {
        double v;
        GLOW_TRY(scalar_input(cx, np, 3, &v));
        if (!(v >= 1 && v <= (double)(1 << 24)))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "frame_length %g", v);
        if (win.node && (int64_t)v != flen)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "frame_length %g differs from the "
                             "window's %lld", v, (long long)flen);
        flen = (int64_t)v;
    }
    if (!(step >= 1 && step <= (double)(1 << 24)) || flen < 1 || flen > xt->dims[1])
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "frame_step %g / frame_length %lld do not "
                         "fit a signal of %lld samples", step, (long long)flen,
                         (long long)xt->dims[1]);
    int64_t hop = (int64_t)step, frames = 1 + (xt->dims[1] - flen) / hop;
    int64_t *idx;
    GLOW_TRY(onnx_const_buffer(cx, np, frames * flen, sizeof(int64_t), (void **)&idx));
    for (int64_t f = 0; f < frames; f++)
        for (int64_t t = 0; t < flen; t++)
            idx[f * flen + t] = f * hop + t;
    int64_t idims[2] = { frames, flen };
    glow_type it = glow_type_make(GLOW_I64, 2, idims);
    glow_value iv = onnx_constant(cx, onnx_sub_name(cx, np, "frames"), &it, idx);
    glow_attr a = GLOW_AI(AXIS, 1);
    GLOW_TRY(onnx_build(cx, np, NK_GATHER, (glow_value[]){ x, iv }, 2, &a, 1, NULL, 0, &x));
    if (win.node) {
        int64_t wd[2] = { flen, 1 };
        GLOW_TRY(onnx_reshape(cx, np, win, 2, wd, &win));
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, (glow_value[]){ x, win }, 2, NULL, 0, &x));
    }
    bool onesided = onnx_attr_int(np, "onesided", 1) != 0;
    GLOW_TRY(dft_core(cx, np, x, 2, flen, false, onesided, &y));
    return onnx_set_output(cx, np, 0, y);
}
