// onnx_ops_nn.c - Loaders for convolutions and pools (Conv, ConvTranspose, *Pool, Global*Pool).
//
// Every window op shares one normalization step (read_window): ONNX's optional and
// version-dependent attributes (kernel_shape, strides, pads, dilations, auto_pad, ceil_mode)
// become the graph's explicit form, one value per spatial dim with pads as begins then ends.
// auto_pad is resolved into explicit pads and ceil_mode into extra end padding, so later
// stages only ever compute floor-based output sizes.
#include <string.h>

#include "onnx/onnx_internal.h"

#define MAX_SPATIAL 3
/* Window values beyond this are surely malformed; the bound keeps the size arithmetic
 * below far away from int64 overflow. */
#define MAX_WINDOW_VALUE ((int64_t)1 << 31)

typedef struct window {
    int n;                          /* spatial dims */
    int64_t kernel[MAX_SPATIAL];
    int64_t strides[MAX_SPATIAL];
    int64_t dilations[MAX_SPATIAL];
    int64_t pads[2 * MAX_SPATIAL];  /* begins, then ends */
    int64_t ceil_extra[MAX_SPATIAL]; /* part of each end pad added for ceil_mode */
} window;

typedef enum { PAD_NOTSET, PAD_VALID, PAD_SAME_UPPER, PAD_SAME_LOWER } auto_pad_mode;

static glow_status read_auto_pad(onnx_ctx *cx, const Onnx__NodeProto *np, auto_pad_mode *mode)
{
    const char *s = onnx_attr_str(cx, np, "auto_pad", "NOTSET");
    if (strcmp(s, "NOTSET") == 0)
        *mode = PAD_NOTSET;
    else if (strcmp(s, "VALID") == 0)
        *mode = PAD_VALID;
    else if (strcmp(s, "SAME_UPPER") == 0)
        *mode = PAD_SAME_UPPER;
    else if (strcmp(s, "SAME_LOWER") == 0)
        *mode = PAD_SAME_LOWER;
    else
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "unknown auto_pad '%s'", s);
    return GLOW_OK;
}

/* Reads an ints attribute holding exactly `count` values in [lo, MAX_WINDOW_VALUE], or fills
 * `dflt` when absent. */
static glow_status read_ints(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                             int count, int64_t lo, int64_t dflt, int64_t *out)
{
    const int64_t *vals;
    int n = onnx_attr_ints(np, name, &vals);
    if (n < 0) {
        for (int i = 0; i < count; i++)
            out[i] = dflt;
        return GLOW_OK;
    }
    if (n != count)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s' has %d values, expected %d", name, n,
                         count);
    for (int i = 0; i < n; i++) {
        if (vals[i] < lo || vals[i] > MAX_WINDOW_VALUE)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'%s'[%d] = %lld is out of range",
                             name, i, (long long)vals[i]);
        out[i] = vals[i];
    }
    return GLOW_OK;
}

/* Window attributes of the wrong AttributeProto type would otherwise read as absent. */
static glow_status check_window_attr_types(onnx_ctx *cx, const Onnx__NodeProto *np)
{
    static const char *const ints[] = { "kernel_shape", "strides", "pads", "dilations",
                                        "output_padding", "output_shape" };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        GLOW_TRY(onnx_attr_check(cx, np, ints[i], 7));
    GLOW_TRY(onnx_attr_check(cx, np, "auto_pad", 3));
    GLOW_TRY(onnx_attr_check(cx, np, "group", 2));
    return onnx_attr_check(cx, np, "ceil_mode", 2);
}

/* Checks that x is [N, C, spatial...] with 1..3 spatial dims. */
static glow_status check_nc_input(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                  int *nsp)
{
    GLOW_TRY(check_window_attr_types(cx, np));
    const glow_type *t = glow_value_type(x);
    if (t->rank < 3 || t->rank > 2 + MAX_SPATIAL)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                         "input X has rank %d, expected 3 to 5 (N, C, 1-3 spatial dims)",
                         t->rank);
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] > MAX_WINDOW_VALUE)
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "input X dim %d is too large", i);
    *nsp = t->rank - 2;
    return GLOW_OK;
}

/* Fills w from the node's attributes for input x (rank 2 + w->n). `kernel` is the kernel
 * taken from the weights (NULL for pools, whose kernel_shape is required). ceil_mode is
 * folded into extra end padding, whose size is kept in ceil_extra. */
static glow_status read_window(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                               const int64_t *kernel, bool allow_ceil, window *w)
{
    const glow_type *xt = glow_value_type(x);
    int n = w->n;
    if (kernel) {
        const int64_t *ks;
        int nk = onnx_attr_ints(np, "kernel_shape", &ks);
        if (nk >= 0) {
            if (nk != n)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                                 "'kernel_shape' has %d values, expected %d", nk, n);
            for (int i = 0; i < n; i++)
                if (ks[i] != kernel[i])
                    return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                                     "'kernel_shape'[%d] = %lld does not match W's %lld", i,
                                     (long long)ks[i], (long long)kernel[i]);
        }
        for (int i = 0; i < n; i++) {
            if (kernel[i] < 1 || kernel[i] > MAX_WINDOW_VALUE)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "W's kernel dim %d is %lld", i,
                                 (long long)kernel[i]);
            w->kernel[i] = kernel[i];
        }
    } else {
        if (!onnx_attr(np, "kernel_shape"))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required 'kernel_shape'");
        GLOW_TRY(read_ints(cx, np, "kernel_shape", n, 1, 1, w->kernel));
    }
    GLOW_TRY(read_ints(cx, np, "strides", n, 1, 1, w->strides));
    GLOW_TRY(read_ints(cx, np, "dilations", n, 1, 1, w->dilations));
    GLOW_TRY(read_ints(cx, np, "pads", 2 * n, 0, 0, w->pads));

    auto_pad_mode mode;
    GLOW_TRY(read_auto_pad(cx, np, &mode));
    int64_t ceil_mode = allow_ceil ? onnx_attr_int(np, "ceil_mode", 0) : 0;
    for (int i = 0; i < n; i++) {
        w->ceil_extra[i] = 0;
        int64_t in = xt->dims[2 + i];
        int64_t eff = (w->kernel[i] - 1) * w->dilations[i] + 1;
        int64_t s = w->strides[i];
        if (mode == PAD_VALID) {
            w->pads[i] = w->pads[n + i] = 0;
        } else if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER) {
            /* SAME keeps ceil(in / stride) outputs whatever ceil_mode says. */
            int64_t out = (in + s - 1) / s;
            int64_t total = (out - 1) * s + eff - in;
            if (total < 0)
                total = 0;
            int64_t small = total / 2, big = total - total / 2;
            w->pads[i] = mode == PAD_SAME_UPPER ? small : big;
            w->pads[n + i] = mode == PAD_SAME_UPPER ? big : small;
            continue;
        }
        int64_t span = in + w->pads[i] + w->pads[n + i];
        if (span < eff)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                             "spatial dim %d: padded input %lld is smaller than the window %lld",
                             i, (long long)span, (long long)eff);
        if (ceil_mode) {
            int64_t out = (span - eff + s - 1) / s + 1;
            /* A last window that would start inside the end padding is dropped (as in
             * PyTorch and the ONNX reference). */
            if ((out - 1) * s >= in + w->pads[i])
                out--;
            int64_t extra = (out - 1) * s + eff - span;
            if (extra > 0) {
                w->pads[n + i] += extra;
                w->ceil_extra[i] = extra;
            }
        }
    }
    return GLOW_OK;
}

/* The normalized attribute list of a window op; returns the count. */
static int window_attrs(const window *w, glow_attr *a)
{
    a[0] = GLOW_AINTS(KERNEL, w->kernel, w->n);
    a[1] = GLOW_AINTS(STRIDES, w->strides, w->n);
    a[2] = GLOW_AINTS(PADS, w->pads, 2 * w->n);
    a[3] = GLOW_AINTS(DILATIONS, w->dilations, w->n);
    return 4;
}

/* Result `i` of a multi-result node built by onnx_build. */
static glow_status node_result(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v,
                               uint32_t i, glow_value *out)
{
    if (i >= v.node->nout)
        return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "node has no result %u", i);
    *out = glow_val(v.node, i);
    return GLOW_OK;
}

glow_status onnx_conv_attrs(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, glow_value wv,
                            glow_attr *attrs, int *na)
{
    /* The attributes point into the window: scratch keeps it alive until the node is built. */
    window *w = GLOW_NEW(&cx->scratch, window);
    GLOW_TRY(check_nc_input(cx, np, x, &w->n));
    const glow_type *wt = glow_value_type(wv);
    if (wt->rank != 2 + w->n)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "W has rank %d, expected %d", wt->rank,
                         2 + w->n);
    GLOW_TRY(read_window(cx, np, x, &wt->dims[2], false, w));
    int64_t group = onnx_attr_int(np, "group", 1);
    if (group < 1 || group > MAX_WINDOW_VALUE)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "group = %lld", (long long)group);
    *na = window_attrs(w, attrs);
    attrs[(*na)++] = GLOW_AI(GROUP, group);
    return GLOW_OK;
}

glow_status load_conv(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[3];
    int nin = onnx_has_input(np, 2) ? 3 : 2;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    if (nin == 3)
        GLOW_TRY(onnx_input(cx, np, 2, &ins[2]));
    glow_attr attrs[ONNX_CONV_MAX_ATTRS];
    int na;
    GLOW_TRY(onnx_conv_attrs(cx, np, ins[0], ins[1], attrs, &na));
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_CONV, ins, nin, attrs, na, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_conv_transpose(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    glow_value ins[3];
    int nin = onnx_has_input(np, 2) ? 3 : 2;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    if (nin == 3)
        GLOW_TRY(onnx_input(cx, np, 2, &ins[2]));
    window w;
    GLOW_TRY(check_nc_input(cx, np, ins[0], &w.n));
    const glow_type *xt = glow_value_type(ins[0]);
    const glow_type *wt = glow_value_type(ins[1]);
    int n = w.n;
    if (wt->rank != 2 + n)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "W has rank %d, expected %d", wt->rank,
                         2 + n);
    int64_t group = onnx_attr_int(np, "group", 1);
    if (group < 1 || group > MAX_WINDOW_VALUE)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "group = %lld", (long long)group);
    if (wt->dims[1] < 1 || wt->dims[1] > MAX_WINDOW_VALUE)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "W dim 1 is %lld", (long long)wt->dims[1]);

    auto_pad_mode mode;
    GLOW_TRY(read_auto_pad(cx, np, &mode));
    for (int i = 0; i < n; i++) {
        if (wt->dims[2 + i] < 1 || wt->dims[2 + i] > MAX_WINDOW_VALUE)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "W's kernel dim %d is %lld", i,
                             (long long)wt->dims[2 + i]);
        w.kernel[i] = wt->dims[2 + i];
    }
    const int64_t *ks;
    int nk = onnx_attr_ints(np, "kernel_shape", &ks);
    if (nk >= 0 && nk != n)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'kernel_shape' has %d values, expected %d",
                         nk, n);
    for (int i = 0; i < nk; i++)
        if (ks[i] != w.kernel[i])
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                             "'kernel_shape'[%d] = %lld does not match W's %lld", i,
                             (long long)ks[i], (long long)w.kernel[i]);
    GLOW_TRY(read_ints(cx, np, "strides", n, 1, 1, w.strides));
    GLOW_TRY(read_ints(cx, np, "dilations", n, 1, 1, w.dilations));
    GLOW_TRY(read_ints(cx, np, "pads", 2 * n, 0, 0, w.pads));
    int64_t outpad[MAX_SPATIAL];
    GLOW_TRY(read_ints(cx, np, "output_padding", n, 0, 0, outpad));

    /* output_shape (spatial dims, or all dims as some exporters write) overrides pads. */
    const int64_t *os;
    int nos = onnx_attr_ints(np, "output_shape", &os);
    if (nos >= 0) {
        if (nos != n && nos != n + 2)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                             "'output_shape' has %d values, expected %d", nos, n);
        os += nos - n;
    }
    if (mode == PAD_VALID)
        memset(w.pads, 0, sizeof w.pads);
    for (int i = 0; i < n; i++) {
        int64_t in = xt->dims[2 + i];
        int64_t natural = w.strides[i] * (in - 1) + outpad[i] +
                          (w.kernel[i] - 1) * w.dilations[i] + 1;
        int64_t want = -1;
        if (nos >= 0)
            want = os[i];
        else if (mode == PAD_SAME_UPPER || mode == PAD_SAME_LOWER)
            want = in * w.strides[i];
        if (want >= 0) {
            if (want < 1 || want > MAX_WINDOW_VALUE)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "output size %lld for dim %d",
                                 (long long)want, i);
            int64_t total = natural - want;
            /* Floor division: a negative total (output larger than the natural size)
             * becomes negative end padding, i.e. extra output padding. */
            int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            if (mode == PAD_SAME_UPPER) {
                w.pads[i] = half;
                w.pads[n + i] = total - half;
            } else {
                w.pads[i] = total - half;
                w.pads[n + i] = half;
            }
            if (w.pads[n + i] < 0) {
                outpad[i] -= w.pads[n + i];
                w.pads[n + i] = 0;
            }
            if (w.pads[i] < 0)
                return onnx_unsupported(cx, np,
                                        "output_shape %lld needs negative begin padding in "
                                        "dim %d", (long long)want, i);
        }
    }

    glow_type out = glow_type_make(xt->dtype, xt->rank, xt->dims);
    if (!glow_mul_overflow_i64(wt->dims[1], group, &out.dims[1]))
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output channel count overflows");
    for (int i = 0; i < n; i++) {
        int64_t in = xt->dims[2 + i];
        int64_t o = w.strides[i] * (in - 1) + outpad[i] + (w.kernel[i] - 1) * w.dilations[i] +
                    1 - w.pads[i] - w.pads[n + i];
        if (o < 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "output spatial dim %d would be %lld",
                             i, (long long)o);
        out.dims[2 + i] = o;
    }

    glow_attr attrs[6];
    int na = window_attrs(&w, attrs);
    attrs[na++] = GLOW_AI(GROUP, group);
    attrs[na++] = GLOW_AINTS(OUTPUT_PADDING, outpad, n);
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_CONV_TRANSPOSE, ins, nin, attrs, na, &out, 1, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_max_pool(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    window w;
    GLOW_TRY(check_nc_input(cx, np, x, &w.n));
    GLOW_TRY(read_window(cx, np, x, NULL, opset >= 10, &w));
    int64_t order = onnx_attr_int(np, "storage_order", 0);
    if (order != 0 && order != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "storage_order=%lld (0 row-major or 1 "
                         "column-major)", (long long)order);
    glow_attr attrs[4];
    int na = window_attrs(&w, attrs);
    /* The indices are a result only when the model uses them (no declared types, just the
     * count). */
    int nres = onnx_has_output(np, 1) ? 2 : 1;
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_MAX_POOL, &x, 1, attrs, na, NULL, nres, &y));
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    if (onnx_has_output(np, 1)) {
        glow_value idx;
        GLOW_TRY(node_result(cx, np, y, 1, &idx));
        if (order == 1)
            GLOW_TRY(onnx_column_major_indices(cx, np, idx, glow_value_type(x), &idx));
        GLOW_TRY(onnx_set_output(cx, np, 1, idx));
    }
    return GLOW_OK;
}

glow_status load_avg_pool(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    window w;
    GLOW_TRY(check_nc_input(cx, np, x, &w.n));
    GLOW_TRY(read_window(cx, np, x, NULL, opset >= 10, &w));
    int64_t cip = opset >= 7 ? onnx_attr_int(np, "count_include_pad", 0) : 0;
    glow_attr attrs[6];
    int na = window_attrs(&w, attrs);
    attrs[na++] = GLOW_AI(COUNT_INCLUDE_PAD, cip != 0);
    /* Padding added for ceil_mode is not the model's: count_include_pad must not count it. */
    bool extra = false;
    for (int i = 0; i < w.n; i++)
        extra |= w.ceil_extra[i] != 0;
    if (cip && extra)
        attrs[na++] = GLOW_AINTS(CEIL_EXTRA, w.ceil_extra, w.n);
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_AVG_POOL, &x, 1, attrs, na, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* LpPool and GlobalLpPool: `p` was a float attribute in opset 1 and an int since opset 2. */
static glow_status read_p(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, int64_t *p)
{
    if (opset < 2) {
        float pf = onnx_attr_float(np, "p", 2.0f);
        if (!(pf >= 1.0f && pf <= 64.0f) || pf != (float)(int64_t)pf)
            return onnx_unsupported(cx, np, "p = %g (only integer p >= 1)", (double)pf);
        *p = (int64_t)pf;
    } else {
        *p = onnx_attr_int(np, "p", 2);
        if (*p < 1 || *p > 64)
            return onnx_unsupported(cx, np, "p = %lld (only 1 to 64)", (long long)*p);
    }
    return GLOW_OK;
}

glow_status load_lp_pool(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    window w;
    GLOW_TRY(check_nc_input(cx, np, x, &w.n));
    GLOW_TRY(read_window(cx, np, x, NULL, opset >= 18, &w));
    int64_t p;
    GLOW_TRY(read_p(cx, np, opset, &p));
    glow_attr attrs[5];
    int na = window_attrs(&w, attrs);
    attrs[na++] = GLOW_AI(P, p);
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_LP_POOL, &x, 1, attrs, na, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

/* GlobalAveragePool, GlobalMaxPool, GlobalLpPool (the row's kind: AVG_POOL, MAX_POOL,
 * LP_POOL): pools whose window covers all spatial dims. */
glow_status load_global_pool(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    window w;
    GLOW_TRY(check_nc_input(cx, np, x, &w.n));
    const glow_type *xt = glow_value_type(x);
    for (int i = 0; i < w.n; i++) {
        if (xt->dims[2 + i] < 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "spatial dim %d is empty", i);
        w.kernel[i] = xt->dims[2 + i];
        w.strides[i] = w.dilations[i] = 1;
        w.pads[i] = w.pads[w.n + i] = 0;
    }
    glow_attr attrs[5];
    int na = window_attrs(&w, attrs);
    if (kind == NK_AVG_POOL) {
        attrs[na++] = GLOW_AI(COUNT_INCLUDE_PAD, 0);
    } else if (kind == NK_LP_POOL) {
        int64_t p;
        GLOW_TRY(read_p(cx, np, opset, &p));
        attrs[na++] = GLOW_AI(P, p);
    }
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, attrs, na, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

