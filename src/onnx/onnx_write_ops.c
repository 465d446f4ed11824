// onnx_write_ops.c - The ONNX form of each graph node kind, for the writer (onnx_write.c).
//
// Float nodes become the ONNX op of the same meaning (opset 13 forms: Slice, Reshape, Clip,
// Pad, Expand, Tile and ReduceSum take their parameters as int64/float initializers). A node
// with quantized operands or results becomes DequantizeLinear of those operands, the float
// op, and QuantizeLinear of its result, the QDQ form ONNX Runtime fuses into integer kernels.
// Data movement (and MaxPool) whose operand and result have the same quantized type runs on
// the integers themselves: ONNX defines these ops for uint8/int8, it is exact, and it is
// cheaper than a dequantize-requantize round trip. Anything else fails naming the node.
#include <string.h>

#include "onnx/onnx_write_internal.h"

/* Result r of n (the writer only reads the graph). */
static glow_value res(const glow_node *n, uint32_t r)
{
    return glow_val((glow_node *)n, r);
}

static bool quantized(glow_value v)
{
    return glow_dtype_is_quantized(glow_value_type(v)->dtype);
}

/* True when operands [0, nin) and result 0 of n share one quantized type: the op can run on
 * the integers. */
static bool raw_ok(const glow_node *n, uint32_t nin)
{
    const glow_type *y = &n->outs[0];
    if (!glow_dtype_is_quantized(y->dtype))
        return false;
    for (uint32_t i = 0; i < nin; i++) {
        const glow_type *t = glow_value_type(n->ins[i]);
        if (t->dtype != y->dtype || t->scale != y->scale || t->offset != y->offset)
            return false;
    }
    return true;
}

/* The op on the first nin operands (dequantized unless raw), result 0 in float unless raw;
 * *y receives the name to pass to finish(). */
static Onnx__NodeProto *begin(wx *w, const glow_node *n, const char *op, uint32_t nin,
                              bool raw, const char **y)
{
    const char *ins[64];
    for (uint32_t i = 0; i < nin && i < 64; i++)
        ins[i] = raw ? wx_val(w, n->ins[i]) : wx_fval(w, n->ins[i]);
    *y = raw ? wx_val(w, res(n, 0)) : wx_result_begin(w, res(n, 0));
    return wx_node(w, op, n->name, (int)nin, ins, 1, y);
}

static void finish(wx *w, const glow_node *n, bool raw, const char *y)
{
    if (!raw)
        wx_result_end(w, res(n, 0), y);
}

/* The activation fused into n (fused_act), applied to x, into y. */
static void fused_act(wx *w, const glow_node *n, const char *x, const char *y)
{
    const char *act = glow_node_str(n, GA_FUSED_ACT, "");
    double alpha = glow_node_float(n, GA_FUSED_ALPHA, 0.01);
    if (!strcmp(act, "Relu") || !strcmp(act, "Sigmoid") || !strcmp(act, "Tanh")) {
        wx_node(w, act, y, 1, &x, 1, &y);
    } else if (!strcmp(act, "LeakyRelu")) {
        Onnx__NodeProto *p = wx_node(w, act, y, 1, &x, 1, &y);
        wx_attr_float(w, p, "alpha", (float)alpha);
    } else if (!strcmp(act, "Clip")) {
        const char *lo = wx_scalar(w, "clip_min", GLOW_F32, alpha);
        const char *hi = wx_scalar(w, "clip_max", GLOW_F32, glow_node_float(n, GA_FUSED_BETA, 0));
        wx_node(w, act, y, 3, (const char *[]){ x, lo, hi }, 1, &y);
    } else {
        wx_fail(w, GLOW_ERR_UNSUPPORTED, "fused activation %s", act);
    }
}

/* Copies an ints attribute under its ONNX name. */
static void copy_ints(wx *w, Onnx__NodeProto *p, const glow_node *n, glow_attr_id a,
                      const char *name)
{
    int cnt = 0;
    const int64_t *v = glow_node_ints(n, a, &cnt);
    if (v)
        wx_attr_ints(w, p, name, cnt, v);
}

static void conv_attrs(wx *w, Onnx__NodeProto *p, const glow_node *n)
{
    copy_ints(w, p, n, GA_KERNEL, "kernel_shape");
    copy_ints(w, p, n, GA_STRIDES, "strides");
    copy_ints(w, p, n, GA_PADS, "pads");
    copy_ints(w, p, n, GA_DILATIONS, "dilations");
    wx_attr_int(w, p, "group", glow_node_int(n, GA_GROUP, 1));
}

static void gemm_attrs(wx *w, Onnx__NodeProto *p, const glow_node *n)
{
    wx_attr_float(w, p, "alpha", (float)glow_node_float(n, GA_ALPHA, 1));
    wx_attr_float(w, p, "beta", (float)glow_node_float(n, GA_BETA, 1));
    wx_attr_int(w, p, "transA", glow_node_int(n, GA_TRANS_A, 0));
    wx_attr_int(w, p, "transB", glow_node_int(n, GA_TRANS_B, 0));
}

/* The op, its fused activation, and the result's QuantizeLinear. */
static void with_act(wx *w, const glow_node *n, const char *op, const char **ins, int nin,
                     void (*attrs)(wx *, Onnx__NodeProto *, const glow_node *))
{
    glow_value yv = res(n, 0);
    if (n->outs[0].dtype == GLOW_I32 && nin && quantized(n->ins[0])) {
        wx_fail(w, GLOW_ERR_UNSUPPORTED, "an int32 accumulator result has no QDQ form");
        return;
    }
    const char *y = wx_result_begin(w, yv);
    bool act = glow_node_attr(n, GA_FUSED_ACT) != NULL;
    const char *t = act ? wx_unique(w, glow_arena_printf(&w->a, "%s_pre", n->name)) : y;
    Onnx__NodeProto *p = wx_node(w, op, n->name, nin, ins, 1, &t);
    if (attrs)
        attrs(w, p, n);
    if (act)
        fused_act(w, n, t, y);
    wx_result_end(w, yv, y);
}

/* ChannelwiseQuantizedConv: per-channel DequantizeLinear of the int8 weights, the int32 bias
 * dequantized with scale s_x * scales[m], a float Conv, and QuantizeLinear. */
static void write_qconv(wx *w, const glow_node *n)
{
    for (int i = 1; i < 5; i++)
        if (!glow_value_is_constant(n->ins[i])) {
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "operand %d is not a constant", i);
            return;
        }
    const glow_type *xt = glow_value_type(n->ins[0]), *wt = glow_value_type(n->ins[1]);
    int m = (int)wt->dims[0];
    const float *scales = n->ins[3].node->payload.data;
    const int32_t *offsets = n->ins[4].node->payload.data;
    /* One scale and offset for all channels is a per-tensor quantization. */
    bool same = true;
    for (int c = 1; c < m; c++)
        same = same && scales[c] == scales[0] && offsets[c] == offsets[0];
    int k = same ? 1 : m;
    float *bs = glow_arena_alloc(&w->a, sizeof(float) * (size_t)m);
    for (int c = 0; c < m; c++)
        bs[c] = (float)((double)xt->scale * scales[c]);
    const char *x = wx_fval(w, n->ins[0]);
    const char *wq = wx_val(w, n->ins[1]), *bq = wx_val(w, n->ins[2]);
    const char *wf = wx_dequantize(w, wq, wt->dtype, k, scales, offsets, wq, NULL);
    const char *bf = wx_dequantize(w, bq, GLOW_I32, same ? 1 : m, bs, NULL, bq, NULL);
    with_act(w, n, "Conv", (const char *[]){ x, wf, bf }, 3, conv_attrs);
}

/* FullyConnected(x[M, K], w[K, N], b[N]) as Gemm; a quantized one's int32 bias is in units of
 * s_x * s_w. */
static void write_fc(wx *w, const glow_node *n)
{
    const char *x = wx_fval(w, n->ins[0]), *wf = wx_fval(w, n->ins[1]), *b;
    const glow_type *bt = glow_value_type(n->ins[2]);
    if (bt->dtype == GLOW_I32 && quantized(n->ins[0]) && quantized(n->ins[1])) {
        float s = (float)((double)glow_value_type(n->ins[0])->scale *
                          glow_value_type(n->ins[1])->scale);
        const char *bq = wx_val(w, n->ins[2]);
        b = wx_dequantize(w, bq, GLOW_I32, 1, &s, NULL, bq, NULL);
    } else {
        b = wx_fval(w, n->ins[2]);
    }
    with_act(w, n, "Gemm", (const char *[]){ x, wf, b }, 3, NULL);
}

static void pool_attrs(wx *w, Onnx__NodeProto *p, const glow_node *n, bool dilations)
{
    copy_ints(w, p, n, GA_KERNEL, "kernel_shape");
    copy_ints(w, p, n, GA_STRIDES, "strides");
    copy_ints(w, p, n, GA_PADS, "pads");
    if (dilations)
        copy_ints(w, p, n, GA_DILATIONS, "dilations");
}

static void write_avg_pool(wx *w, const glow_node *n)
{
    int cnt = 0;
    const int64_t *dil = glow_node_ints(n, GA_DILATIONS, &cnt), *extra;
    for (int i = 0; dil && i < cnt; i++)
        if (dil[i] != 1) {
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "AveragePool has no dilations before opset 19");
            return;
        }
    int64_t cip = glow_node_int(n, GA_COUNT_INCLUDE_PAD, 0);
    extra = glow_node_ints(n, GA_CEIL_EXTRA, &cnt);
    for (int i = 0; cip && extra && i < cnt; i++)
        if (extra[i]) {
            /* Explicit pads would count the ceil_mode cells ONNX leaves out. */
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "count_include_pad with ceil_mode padding");
            return;
        }
    const char *y;
    Onnx__NodeProto *p = begin(w, n, "AveragePool", 1, false, &y);
    pool_attrs(w, p, n, false);
    wx_attr_int(w, p, "count_include_pad", cip);
    finish(w, n, false, y);
}

static void write_max_pool(wx *w, const glow_node *n)
{
    bool raw = raw_ok(n, 1);
    const char *y;
    Onnx__NodeProto *p = begin(w, n, "MaxPool", 1, raw, &y);
    if (n->nout > 1) {
        if (!raw && quantized(res(n, 0))) {
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "indices of a requantizing MaxPool");
            return;
        }
        p->output = glow_arena_memdup(&w->a, (const char *[]){ y, wx_val(w, res(n, 1)) },
                                      2 * sizeof(char *));
        p->n_output = 2;
    }
    pool_attrs(w, p, n, true);
    finish(w, n, raw, y);
}

/* Slice's per-dim starts/ends/steps as opset-13 inputs; an end before index 0 of a
 * negative-step slice is written as INT64_MIN (ONNX reads -1 as the last index). */
static void write_slice(wx *w, const glow_node *n)
{
    int r = 0;
    const int64_t *st = glow_node_ints(n, GA_STARTS, &r), *en = glow_node_ints(n, GA_ENDS, &r);
    const int64_t *sp = glow_node_ints(n, GA_STEPS, &r);
    int64_t *ends = glow_arena_alloc(&w->a, sizeof(int64_t) * (size_t)(r + 1));
    int64_t *axes = glow_arena_alloc(&w->a, sizeof(int64_t) * (size_t)(r + 1));
    for (int i = 0; i < r; i++) {
        ends[i] = sp[i] < 0 && en[i] < 0 ? INT64_MIN : en[i];
        axes[i] = i;
    }
    bool raw = raw_ok(n, 1);
    const char *y;
    Onnx__NodeProto *p = begin(w, n, "Slice", 1, raw, &y);
    wx_add_input(w, p, wx_ints(w, "starts", r, st));
    wx_add_input(w, p, wx_ints(w, "ends", r, ends));
    wx_add_input(w, p, wx_ints(w, "axes", r, axes));
    wx_add_input(w, p, wx_ints(w, "steps", r, sp));
    finish(w, n, raw, y);
}

static void write_reduce(wx *w, const glow_node *n)
{
    int cnt = 0;
    const int64_t *axes = glow_node_ints(n, GA_AXES, &cnt);
    const char *y;
    Onnx__NodeProto *p = begin(w, n, glow_node_kind_name(n->kind), 1, false, &y);
    /* Opset 13's ReduceSum takes its axes as an input; the others still as an attribute. */
    if (n->kind == NK_REDUCE_SUM)
        wx_add_input(w, p, wx_ints(w, "axes", cnt, axes));
    else
        wx_attr_ints(w, p, "axes", cnt, axes);
    wx_attr_int(w, p, "keepdims", glow_node_int(n, GA_KEEPDIMS, 1));
    finish(w, n, false, y);
}

/* Nodes whose result is a shape-changing view or copy of operand 0, with the result's shape
 * or a parameter as an int64 initializer. */
static void write_movement(wx *w, const glow_node *n)
{
    const glow_type *yt = &n->outs[0];
    bool raw = raw_ok(n, n->kind == NK_CONCAT ? n->nin : 1);
    const char *y;
    Onnx__NodeProto *p;
    switch (n->kind) {
    case NK_RESHAPE:
    case NK_BROADCAST:
        p = begin(w, n, n->kind == NK_RESHAPE ? "Reshape" : "Expand", 1, raw, &y);
        wx_add_input(w, p, wx_ints(w, "shape", yt->rank, yt->dims));
        break;
    case NK_TRANSPOSE:
        p = begin(w, n, "Transpose", 1, raw, &y);
        copy_ints(w, p, n, GA_PERM, "perm");
        break;
    case NK_CONCAT:
        p = begin(w, n, "Concat", n->nin, raw, &y);
        wx_attr_int(w, p, "axis", glow_node_int(n, GA_AXIS, 0));
        break;
    case NK_TILE: {
        int cnt = 0;
        const int64_t *rep = glow_node_ints(n, GA_REPEATS, &cnt);
        p = begin(w, n, "Tile", 1, raw, &y);
        wx_add_input(w, p, wx_ints(w, "repeats", cnt, rep));
        break;
    }
    case NK_GATHER:
        p = begin(w, n, "Gather", 1, raw, &y);
        wx_add_input(w, p, wx_val(w, n->ins[1]));
        wx_attr_int(w, p, "axis", glow_node_int(n, GA_AXIS, 0));
        break;
    case NK_DEPTH_TO_SPACE:
        p = begin(w, n, "DepthToSpace", 1, raw, &y);
        wx_attr_int(w, p, "blocksize", glow_node_int(n, GA_BLOCKSIZE, 1));
        wx_attr_str(w, p, "mode", glow_node_str(n, GA_MODE, "DCR"));
        break;
    case NK_SPACE_TO_DEPTH:
        p = begin(w, n, "SpaceToDepth", 1, raw, &y);
        wx_attr_int(w, p, "blocksize", glow_node_int(n, GA_BLOCKSIZE, 1));
        break;
    default:
        GLOW_UNREACHABLE();
    }
    finish(w, n, raw, y);
}

/* Quantize, Dequantize, RescaleQuantized and Reinterpret. */
static void write_qnode(wx *w, const glow_node *n)
{
    glow_value x = n->ins[0], y = res(n, 0);
    const char *yn;
    switch (n->kind) {
    case NK_QUANTIZE:
        wx_quantize_into(w, wx_fval(w, x), y);
        break;
    case NK_DEQUANTIZE:
        if (n->outs[0].dtype != GLOW_F32) {
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "DequantizeLinear gives f32 only at opset 13");
            return;
        }
        wx_dequantize(w, wx_val(w, x), glow_value_type(x)->dtype, 1,
                      &glow_value_type(x)->scale, &glow_value_type(x)->offset, NULL,
                      wx_val(w, y));
        break;
    case NK_RESCALE_QUANTIZED:
        wx_quantize_into(w, wx_fval(w, x), y);
        break;
    case NK_REINTERPRET:
        /* The same integers; ONNX types carry no scale. */
        yn = wx_val(w, y);
        wx_node(w, "Identity", yn, 1, (const char *[]){ wx_val(w, x) }, 1, &yn);
        break;
    default:
        GLOW_UNREACHABLE();
    }
}

/* Elementwise kinds whose ONNX op has the same name and takes the node's float attributes
 * (alpha, beta, gamma, lambd, bias) under their own names. */
static bool plain_elementwise(glow_node_kind k)
{
    switch (k) {
    case NK_ADD: case NK_SUB: case NK_MUL: case NK_DIV: case NK_POW: case NK_MAX: case NK_MIN:
    case NK_PRELU: case NK_EQUAL: case NK_LESS: case NK_LESS_EQUAL: case NK_GREATER:
    case NK_GREATER_EQUAL: case NK_AND: case NK_OR: case NK_XOR: case NK_NOT: case NK_WHERE:
    case NK_RELU: case NK_SIGMOID: case NK_TANH: case NK_EXP: case NK_LOG: case NK_SQRT:
    case NK_ABS: case NK_NEG: case NK_FLOOR: case NK_CEIL: case NK_ROUND: case NK_RECIPROCAL:
    case NK_ERF: case NK_SIN: case NK_COS: case NK_TAN: case NK_ASIN: case NK_ACOS:
    case NK_ATAN: case NK_SINH: case NK_COSH: case NK_ASINH: case NK_ACOSH: case NK_ATANH:
    case NK_SIGN: case NK_ISNAN: case NK_SOFTPLUS: case NK_SOFTSIGN: case NK_ELU: case NK_SELU:
    case NK_CELU: case NK_LEAKY_RELU: case NK_THRESHOLDED_RELU: case NK_HARD_SIGMOID:
    case NK_SHRINK:
        return true;
    default:
        return false;
    }
}

static void write_elementwise(wx *w, const glow_node *n)
{
    const char *y;
    Onnx__NodeProto *p = begin(w, n, glow_node_kind_name(n->kind), n->nin, false, &y);
    for (uint32_t i = 0; i < n->nattr; i++)
        if (glow_attr_kind_of(n->attrs[i].id) == AK_FLOAT)
            wx_attr_float(w, p, glow_attr_name(n->attrs[i].id), (float)n->attrs[i].v.f);
    finish(w, n, false, y);
}

static void write_misc(wx *w, const glow_node *n)
{
    const char *y;
    Onnx__NodeProto *p;
    switch (n->kind) {
    case NK_CONV:
        with_act(w, n, "Conv", (const char *[]){ wx_fval(w, n->ins[0]), wx_fval(w, n->ins[1]),
                 n->nin > 2 ? wx_fval(w, n->ins[2]) : NULL }, (int)n->nin, conv_attrs);
        return;
    case NK_GEMM:
        with_act(w, n, "Gemm", (const char *[]){ wx_fval(w, n->ins[0]), wx_fval(w, n->ins[1]),
                 n->nin > 2 ? wx_fval(w, n->ins[2]) : NULL }, (int)n->nin, gemm_attrs);
        return;
    case NK_MATMUL:
        with_act(w, n, "MatMul", (const char *[]){ wx_fval(w, n->ins[0]),
                 wx_fval(w, n->ins[1]) }, 2, NULL);
        return;
    case NK_CLIP: {
        glow_dtype ft = quantized(n->ins[0]) ? GLOW_F32 : glow_value_type(n->ins[0])->dtype;
        p = begin(w, n, "Clip", 1, false, &y);
        wx_add_input(w, p, wx_scalar(w, "clip_min", ft, glow_node_float(n, GA_MIN, 0)));
        wx_add_input(w, p, wx_scalar(w, "clip_max", ft, glow_node_float(n, GA_MAX, 0)));
        break;
    }
    case NK_SOFTMAX: case NK_LOG_SOFTMAX: case NK_HARDMAX:
        p = begin(w, n, glow_node_kind_name(n->kind), 1, false, &y);
        wx_attr_int(w, p, "axis", glow_node_int(n, GA_AXIS, -1));
        break;
    case NK_ARG_MAX: case NK_ARG_MIN:
        p = begin(w, n, glow_node_kind_name(n->kind), 1, false, &y);
        wx_attr_int(w, p, "axis", glow_node_int(n, GA_AXIS, 0));
        wx_attr_int(w, p, "keepdims", glow_node_int(n, GA_KEEPDIMS, 1));
        wx_attr_int(w, p, "select_last_index", glow_node_int(n, GA_SELECT_LAST, 0));
        break;
    case NK_BATCH_NORM:
        p = begin(w, n, "BatchNormalization", 5, false, &y);
        wx_attr_float(w, p, "epsilon", (float)glow_node_float(n, GA_EPSILON, 1e-5));
        break;
    case NK_LRN:
        p = begin(w, n, "LRN", 1, false, &y);
        wx_attr_int(w, p, "size", glow_node_int(n, GA_SIZE, 1));
        wx_attr_float(w, p, "alpha", (float)glow_node_float(n, GA_ALPHA, 1e-4));
        wx_attr_float(w, p, "beta", (float)glow_node_float(n, GA_BETA, 0.75));
        wx_attr_float(w, p, "bias", (float)glow_node_float(n, GA_BIAS, 1));
        break;
    case NK_CAST:
        p = begin(w, n, "Cast", 1, false, &y);
        wx_attr_int(w, p, "to", wx_onnx_dtype(quantized(res(n, 0))
                                              ? GLOW_F32 : n->outs[0].dtype));
        break;
    case NK_PAD: {
        const char *mode = glow_node_str(n, GA_MODE, "constant");
        int cnt = 0;
        const int64_t *pads = glow_node_ints(n, GA_PADS, &cnt);
        if (!strcmp(mode, "wrap")) {
            wx_fail(w, GLOW_ERR_UNSUPPORTED, "Pad mode 'wrap' needs opset 19");
            return;
        }
        glow_dtype ft = quantized(n->ins[0]) ? GLOW_F32 : glow_value_type(n->ins[0])->dtype;
        p = begin(w, n, "Pad", 1, false, &y);
        wx_add_input(w, p, wx_ints(w, "pads", cnt, pads));
        wx_add_input(w, p, wx_scalar(w, "pad_value", ft, glow_node_float(n, GA_VALUE, 0)));
        wx_attr_str(w, p, "mode", mode);
        break;
    }
    case NK_SPLAT: {
        /* A constant filled with the value. */
        const glow_type *t = &n->outs[0];
        size_t count = (size_t)glow_type_numel(t);
        void *data = glow_arena_alloc(&w->a, glow_type_bytes(t) + 1);
        double v = glow_node_float(n, GA_VALUE, 0);
        for (size_t i = 0; i < count; i++)
            glow_store_f64(t->dtype, data, i, v);
        const char *c = wx_init(w, glow_arena_printf(&w->a, "%s_value", n->name),
                                wx_onnx_dtype(t->dtype), t->rank, t->dims, data);
        y = wx_val(w, res(n, 0));
        wx_node(w, "Identity", y, 1, &c, 1, &y);
        return;
    }
    default:
        wx_fail(w, GLOW_ERR_UNSUPPORTED, "glowc has no ONNX form for this kind of node");
        return;
    }
    finish(w, n, false, y);
}

glow_status wx_write_node(wx *w, const glow_node *n)
{
    switch (n->kind) {
    case NK_QUANTIZE: case NK_DEQUANTIZE: case NK_RESCALE_QUANTIZED: case NK_REINTERPRET:
        write_qnode(w, n);
        break;
    case NK_CHANNELWISE_QCONV:
        write_qconv(w, n);
        break;
    case NK_FULLY_CONNECTED:
        write_fc(w, n);
        break;
    case NK_MAX_POOL:
        write_max_pool(w, n);
        break;
    case NK_AVG_POOL:
        write_avg_pool(w, n);
        break;
    case NK_SLICE:
        write_slice(w, n);
        break;
    case NK_REDUCE_SUM: case NK_REDUCE_MEAN: case NK_REDUCE_MAX: case NK_REDUCE_MIN:
    case NK_REDUCE_PROD: case NK_REDUCE_L1: case NK_REDUCE_L2: case NK_REDUCE_LOG_SUM:
    case NK_REDUCE_LOG_SUM_EXP: case NK_REDUCE_SUM_SQUARE:
        write_reduce(w, n);
        break;
    case NK_RESHAPE: case NK_BROADCAST: case NK_TRANSPOSE: case NK_CONCAT: case NK_TILE:
    case NK_GATHER: case NK_DEPTH_TO_SPACE: case NK_SPACE_TO_DEPTH:
        write_movement(w, n);
        break;
    default:
        if (plain_elementwise(n->kind))
            write_elementwise(w, n);
        else
            write_misc(w, n);
    }
    return w->status;
}
