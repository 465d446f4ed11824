// eval_quant.c - The exact integer reference of every quantized node (docs/quantization.md):
// Quantize, Dequantize, RescaleQuantized, the quantized forms of Add, Sub, Mul, Max, Min,
// Relu, Clip, MaxPool, AveragePool, FullyConnected and MatMul, and ChannelwiseQuantizedConv.
//
// Accumulators are exact int32 sums (int64 while summing, checked to fit: an 8-bit model with
// a reduction long enough to overflow int32 fails here rather than differing from the
// kernels), int64 for products with a 16-bit operand (--precision int16, which has no
// kernels); every rounding is kernels/qmath.h's, which the int8 kernels share.
#include <stdlib.h>

#include "eval/eval_internal.h"
#include "qmath.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

static int32_t ldq(glow_dtype t, const void *p, int64_t i)
{
    switch (t) {
    case GLOW_I8Q: case GLOW_I8: return ((const int8_t *)p)[i];
    case GLOW_U8Q: case GLOW_U8: return ((const uint8_t *)p)[i];
    case GLOW_I16Q: case GLOW_I16: return ((const int16_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

static void stq(glow_dtype t, void *p, int64_t i, int32_t v)
{
    switch (t) {
    case GLOW_I8Q: ((int8_t *)p)[i] = (int8_t)v; break;
    case GLOW_U8Q: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case GLOW_I16Q: ((int16_t *)p)[i] = (int16_t)v; break;
    default: ((int32_t *)p)[i] = v; break;
    }
}

/* The result's range narrowed by a fused Relu or Clip (a Clip node's own bounds likewise). */
static glow_status out_range(const glow_node *n, const glow_type *y, const char *act,
                             double alpha, double beta, int32_t *lo, int32_t *hi, glow_diag *d)
{
    glow_dtype_qrange(y->dtype, lo, hi);
    if (!act || !*act)
        return GLOW_OK;
    if (!glow_dtype_is_quantized(y->dtype) || (strcmp(act, "Relu") && strcmp(act, "Clip")))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': no quantized form of fused "
                         "activation '%s' with result %s", KIND_NAME(n), act,
                         glow_dtype_name(y->dtype));
    gk_q_act_range(!strcmp(act, "Relu") ? GK_QACT_RELU : GK_QACT_CLIP, alpha, beta, y->scale,
                   y->offset, lo, hi);
    return GLOW_OK;
}

static glow_status fused_range(const glow_node *n, const glow_type *y, int32_t *lo, int32_t *hi,
                               glow_diag *d)
{
    return out_range(n, y, glow_node_str(n, GA_FUSED_ACT, ""),
                     glow_node_float(n, GA_FUSED_ALPHA, 0), glow_node_float(n, GA_FUSED_BETA, 0),
                     lo, hi, d);
}

/* An accumulator into the result: requantized, or itself for an i32 result. Products with
 * a 16-bit operand accumulate in int64 (a 16 x 8-bit product sum outgrows int32 within a few
 * hundred terms); the requantization converts that to f32 the same way. */
static void store_acc(const glow_type *y, void *p, int64_t i, int64_t acc, float mult,
                      int32_t lo, int32_t hi)
{
    if (!glow_dtype_is_quantized(y->dtype))
        stq(GLOW_I32, p, i, (int32_t)acc);
    else
        stq(y->dtype, p, i, gk_q_clamp(gk_q_round((float)acc * mult) + y->offset, lo, hi));
}

/* Whether a product of these operand kinds accumulates in int64. */
static bool wide_acc(glow_dtype a, glow_dtype b)
{
    return a == GLOW_I16Q || b == GLOW_I16Q;
}

static glow_status acc_fits(const glow_node *n, int64_t acc, bool wide, glow_diag *d)
{
    if (wide ? glow_dtype_is_quantized(n->outs[0].dtype) : acc >= INT32_MIN && acc <= INT32_MAX)
        return GLOW_OK;
    return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': the int32 accumulator overflows "
                     "(%lld)", KIND_NAME(n), (long long)acc);
}

/* --- conversions --- */

static glow_status convert(const glow_node *n, const glow_tensor *x, glow_tensor *y)
{
    const glow_type *tx = &x->type, *ty = &y->type;
    int64_t count = ev_numel(ty);
    int32_t lo, hi;
    glow_dtype_qrange(ty->dtype, &lo, &hi);
    float mult = gk_q_multiplier(tx->scale, ty->scale);
    for (int64_t i = 0; i < count; i++) {
        if (n->kind == NK_QUANTIZE) {
            float v = (float)glow_load_f64(tx->dtype, x->data, (size_t)i);
            stq(ty->dtype, y->data, i, gk_quantize(v, ty->scale, ty->offset, lo, hi));
        } else if (n->kind == NK_DEQUANTIZE) {
            float v = gk_dequantize(ldq(tx->dtype, x->data, i), tx->scale, tx->offset);
            glow_store_f64(ty->dtype, y->data, (size_t)i, v);
        } else {
            int32_t q = ldq(tx->dtype, x->data, i) - tx->offset;
            stq(ty->dtype, y->data, i, gk_requant(q, mult, ty->offset, lo, hi));
        }
    }
    return GLOW_OK;
}

/* --- elementwise --- */

static glow_status elementwise(const glow_node *n, const glow_tensor *ins, glow_tensor *y,
                               glow_diag *d)
{
    const glow_type *ta = &ins[0].type, *ty = &y->type;
    const glow_type *tb = n->nin > 1 ? &ins[1].type : ta;
    int64_t count = ev_numel(ty);
    int32_t lo, hi;
    const char *clip = n->kind == NK_CLIP ? "Clip" : n->kind == NK_RELU ? "Relu" : "";
    GLOW_TRY(out_range(n, ty, clip, glow_node_float(n, GA_MIN, 0),
                       glow_node_float(n, GA_MAX, 0), &lo, &hi, d));
    float ma = gk_q_multiplier(ta->scale, ty->scale), mb = gk_q_multiplier(tb->scale, ty->scale);
    float mm = gk_q_multiplier((double)ta->scale * tb->scale, ty->scale);
    for (int64_t i = 0; i < count; i++) {
        int32_t a = ldq(ta->dtype, ins[0].data, i) - ta->offset;
        int32_t b = n->nin > 1 ? ldq(tb->dtype, ins[1].data, i) - tb->offset : 0;
        int32_t r;
        switch (n->kind) {
        case NK_ADD: case NK_SUB:
            /* Sub is Add with b's multiplier negated: the same bits as a difference. */
            r = gk_qadd(a, b, ma, n->kind == NK_SUB ? -mb : mb, ty->offset, lo, hi);
            break;
        case NK_MUL:
            r = gk_requant(a * b, mm, ty->offset, lo, hi);
            break;
        case NK_MAX: case NK_MIN: {
            int32_t ra = gk_requant(a, ma, ty->offset, lo, hi);
            int32_t rb = gk_requant(b, mb, ty->offset, lo, hi);
            r = (n->kind == NK_MAX) == (ra > rb) ? ra : rb;
            break;
        }
        default: /* Relu (lo raised to the offset) and Clip (lo, hi narrowed) */
            r = gk_requant(a, ma, ty->offset, lo, hi);
            break;
        }
        stq(ty->dtype, y->data, i, r);
    }
    return GLOW_OK;
}

/* --- pooling --- */

static glow_status pool(const glow_node *n, const glow_tensor *x, glow_tensor *y,
                        glow_diag *d)
{
    win3 w;
    GLOW_TRY(glow_ev_read_win(n, &x->type, &w, d));
    GLOW_TRY(glow_ev_forward_out(n, &w, d));
    int64_t dims[GLOW_MAX_DIMS];
    glow_ev_nc_dims(&w, w.c, w.out, dims);
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, w.nsp + 2, dims, d));
    const glow_type *tx = &x->type, *ty = &y->type;
    bool is_max = n->kind == NK_MAX_POOL;
    bool include_pad = glow_node_int(n, GA_COUNT_INCLUDE_PAD, 0) != 0;
    int32_t lo, hi;
    glow_dtype_qrange(ty->dtype, &lo, &hi);
    float mult = gk_q_multiplier(tx->scale, ty->scale);
    /* ONNX counts the model's own pads only, not the end padding that ceil_mode added. */
    int64_t own_pe[3] = { w.pe[0], w.pe[1], w.pe[2] };
    int ncx = 0;
    const int64_t *cx = glow_node_ints(n, GA_CEIL_EXTRA, &ncx);
    for (int i = 0; cx && i < ncx && i < w.nsp; i++)
        own_pe[3 - w.nsp + i] -= cx[i];
    int64_t in_plane = w.in[0] * w.in[1] * w.in[2], oi = 0;
    for (int64_t p = 0; p < w.n * w.c; p++) {
        const int64_t base = p * in_plane;
        for (int64_t od = 0; od < w.out[0]; od++)
            for (int64_t oh = 0; oh < w.out[1]; oh++)
                for (int64_t ow = 0; ow < w.out[2]; ow++, oi++) {
                    int64_t acc = 0, taps = 0, best = INT64_MIN;
                    for (int64_t kd = 0; kd < w.k[0]; kd++)
                        for (int64_t kh = 0; kh < w.k[1]; kh++)
                            for (int64_t kw = 0; kw < w.k[2]; kw++) {
                                int64_t id = od * w.s[0] - w.pb[0] + kd * w.dil[0];
                                int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.dil[1];
                                int64_t iw = ow * w.s[2] - w.pb[2] + kw * w.dil[2];
                                if (id < 0 || id >= w.in[0] || ih < 0 || ih >= w.in[1] ||
                                    iw < 0 || iw >= w.in[2])
                                    continue;
                                int32_t v = ldq(tx->dtype, x->data,
                                                base + (id * w.in[1] + ih) * w.in[2] + iw);
                                best = v > best ? v : best;
                                acc += v - tx->offset;
                                taps++;
                            }
                    int32_t r;
                    if (is_max && !taps) {
                        r = lo;   /* no tap inside: the kind's minimum, as the kernels give */
                    } else if (is_max) {
                        r = gk_requant((int32_t)(best - tx->offset), mult, ty->offset, lo, hi);
                    } else {
                        /* The padded window's count: the window clipped to the padded input. */
                        int64_t count = include_pad ? 1 : taps;
                        for (int j = 0; include_pad && j < 3; j++) {
                            int64_t o = j == 0 ? od : j == 1 ? oh : ow, in = 0;
                            for (int64_t k = 0; k < w.k[j]; k++) {
                                int64_t i = o * w.s[j] - w.pb[j] + k * w.dil[j];
                                in += i < w.in[j] + own_pe[j];
                            }
                            count *= in;
                        }
                        GLOW_TRY(acc_fits(n, acc, false, d));
                        float m = gk_q_avg_multiplier(tx->scale, ty->scale, count);
                        r = count ? gk_requant((int32_t)acc, m, ty->offset, lo, hi)
                                  : gk_q_clamp(ty->offset, lo, hi);
                    }
                    stq(ty->dtype, y->data, oi, r);
                }
    }
    return GLOW_OK;
}

/* --- matrix products --- */

/* FullyConnected x [M, K] . w [K, N] + bias [N], and MatMul [..., M, K] . [..., K, N]. */
static glow_status matmul(const glow_node *n, const glow_tensor *ins, glow_tensor *y,
                          glow_diag *d)
{
    const glow_type *ta = &ins[0].type, *tb = &ins[1].type, *ty = &y->type;
    int r = ta->rank;
    if (r < 2 || tb->rank != r || ty->rank != r || ta->dims[r - 1] != tb->dims[r - 2] ||
        (n->kind == NK_FULLY_CONNECTED && r != 2))
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand shapes do not multiply",
                         KIND_NAME(n));
    int64_t m = ta->dims[r - 2], k = ta->dims[r - 1], nn = tb->dims[r - 1];
    int64_t batch = ev_prod(ta->dims, 0, r - 2);
    int64_t dims[GLOW_MAX_DIMS];
    memcpy(dims, ta->dims, sizeof dims);
    dims[r - 1] = nn;
    GLOW_TRY(glow_ev_expect_shape(n, "result", ty, r, dims, d));
    const glow_tensor *bias = n->kind == NK_FULLY_CONNECTED && n->nin > 2 ? &ins[2] : NULL;
    if (bias && (bias->type.rank != 1 || bias->type.dims[0] != nn ||
                 (bias->type.dtype != GLOW_I32 && bias->type.dtype != GLOW_I32Q)))
        return glow_fail(d, GLOW_ERR_BAD_TYPE, "%s '%s': a quantized product's bias must be "
                         "i32 [%lld]", KIND_NAME(n), (long long)nn);
    int32_t lo, hi;
    GLOW_TRY(fused_range(n, ty, &lo, &hi, d));
    float mult = gk_q_multiplier((double)ta->scale * tb->scale, ty->scale);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                int64_t acc = bias ? ldq(GLOW_I32, bias->data, j) : 0;
                for (int64_t kk = 0; kk < k; kk++)
                    acc += (int64_t)(ldq(ta->dtype, ins[0].data, (b * m + i) * k + kk) -
                                     ta->offset) *
                           (ldq(tb->dtype, ins[1].data, (b * k + kk) * nn + j) - tb->offset);
                GLOW_TRY(acc_fits(n, acc, wide_acc(ta->dtype, tb->dtype), d));
                store_acc(ty, y->data, (b * m + i) * nn + j, acc, mult, lo, hi);
            }
    return GLOW_OK;
}

/* --- convolution --- */

static glow_status qconv(const glow_node *n, const glow_tensor *ins, glow_tensor *y,
                         glow_diag *d)
{
    win3 w;
    const glow_type *tx = &ins[0].type, *tw = &ins[1].type, *ty = &y->type;
    GLOW_TRY(glow_ev_read_win(n, tx, &w, d));
    GLOW_TRY(glow_ev_forward_out(n, &w, d));
    w.m = tw->dims[0];
    int64_t cg = w.c / w.group, mg = w.m / w.group;
    if (tw->rank != tx->rank || w.c % w.group || w.m % w.group || tw->dims[1] != cg)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': weight does not match the input",
                         KIND_NAME(n));
    for (int i = 0; i < w.nsp; i++)
        if (tw->dims[2 + i] != w.k[3 - w.nsp + i])
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': weight does not match the kernel",
                             KIND_NAME(n));
    for (int i = 2; i < 5; i++)
        if (ins[i].type.rank != 1 || ins[i].type.dims[0] != w.m)
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand %d must have %lld "
                             "values", KIND_NAME(n), i, (long long)w.m);
    int64_t dims[GLOW_MAX_DIMS];
    glow_ev_nc_dims(&w, w.m, w.out, dims);
    GLOW_TRY(glow_ev_expect_shape(n, "result", ty, w.nsp + 2, dims, d));
    int32_t lo, hi;
    GLOW_TRY(fused_range(n, ty, &lo, &hi, d));
    const float *scales = ins[3].data;
    int64_t ksz = w.k[0] * w.k[1] * w.k[2], in_plane = w.in[0] * w.in[1] * w.in[2];
    int64_t oi = 0;
    for (int64_t b = 0; b < w.n; b++)
        for (int64_t m = 0; m < w.m; m++) {
            int64_t g = m / mg;
            int32_t woff = ldq(GLOW_I32, ins[4].data, m);
            float mult = gk_q_multiplier((double)tx->scale * scales[m], ty->scale);
            for (int64_t od = 0; od < w.out[0]; od++)
                for (int64_t oh = 0; oh < w.out[1]; oh++)
                    for (int64_t ow = 0; ow < w.out[2]; ow++, oi++) {
                        int64_t acc = ldq(GLOW_I32, ins[2].data, m);
                        for (int64_t c = 0; c < cg; c++) {
                            int64_t xb = (b * w.c + g * cg + c) * in_plane;
                            int64_t wb = (m * cg + c) * ksz, ki = 0;
                            for (int64_t kd = 0; kd < w.k[0]; kd++)
                                for (int64_t kh = 0; kh < w.k[1]; kh++)
                                    for (int64_t kw = 0; kw < w.k[2]; kw++, ki++) {
                                        int64_t id = od * w.s[0] - w.pb[0] + kd * w.dil[0];
                                        int64_t ih = oh * w.s[1] - w.pb[1] + kh * w.dil[1];
                                        int64_t iw = ow * w.s[2] - w.pb[2] + kw * w.dil[2];
                                        if (id < 0 || id >= w.in[0] || ih < 0 ||
                                            ih >= w.in[1] || iw < 0 || iw >= w.in[2])
                                            continue;
                                        int64_t xi = xb + (id * w.in[1] + ih) * w.in[2] + iw;
                                        acc += (int64_t)(ldq(tx->dtype, ins[0].data, xi) -
                                                         tx->offset) *
                                               (ldq(tw->dtype, ins[1].data, wb + ki) - woff);
                                    }
                        }
                        GLOW_TRY(acc_fits(n, acc, wide_acc(tx->dtype, tw->dtype), d));
                        store_acc(ty, y->data, oi, acc, mult, lo, hi);
                    }
        }
    return GLOW_OK;
}

bool glow_ev_quant_kind(glow_node_kind k)
{
    switch (k) {
    case NK_QUANTIZE: case NK_DEQUANTIZE: case NK_RESCALE_QUANTIZED: case NK_REINTERPRET:
    case NK_CHANNELWISE_QCONV: case NK_ADD: case NK_SUB: case NK_MUL: case NK_MAX:
    case NK_MIN: case NK_RELU: case NK_CLIP: case NK_MAX_POOL: case NK_AVG_POOL:
    case NK_FULLY_CONNECTED: case NK_MATMUL:
        return true;
    default:
        return false;
    }
}

bool glow_ev_quant_types(glow_node_kind k, const glow_type *const *in, int nin,
                         const glow_type *out, int nout)
{
    if (nin < 1 || nout != 1 || !glow_ev_quant_kind(k))
        return false;
    glow_dtype x = in[0]->dtype, y = out[0].dtype;
    bool qx = glow_dtype_is_quantized(x), qy = glow_dtype_is_quantized(y);
    switch (k) {
    case NK_QUANTIZE: return ev_is_float(x) && qy;
    case NK_DEQUANTIZE: return qx && ev_is_float(y);
    case NK_RESCALE_QUANTIZED: return qx && qy;
    case NK_REINTERPRET:
        return ((qx || qy) ? (qx || ev_is_int(x)) && (qy || ev_is_int(y)) : y != GLOW_BOOL) &&
               ev_size(x) == ev_size(y);
    case NK_CHANNELWISE_QCONV:
        return nin == 5 && (x == GLOW_I8Q || x == GLOW_U8Q || x == GLOW_I16Q) &&
               (in[1]->dtype == GLOW_I8 || in[1]->dtype == GLOW_U8) &&
               in[2]->dtype == GLOW_I32 && in[3]->dtype == GLOW_F32 &&
               in[4]->dtype == GLOW_I32 && (qy || y == GLOW_I32);
    case NK_FULLY_CONNECTED: case NK_MATMUL:
        return nin >= 2 && qx && glow_dtype_is_quantized(in[1]->dtype) &&
               (qy || y == GLOW_I32);
    default:
        for (int i = 0; i < nin; i++)
            if (!glow_dtype_is_quantized(in[i]->dtype) || in[i]->dtype == GLOW_I32Q)
                return false;
        return qy && y != GLOW_I32Q && nin == (k == NK_RELU || k == NK_CLIP ||
                                               k == NK_MAX_POOL || k == NK_AVG_POOL ? 1 : 2);
    }
}

glow_status glow_ev_quant(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    switch (n->kind) {
    case NK_QUANTIZE: case NK_DEQUANTIZE: case NK_RESCALE_QUANTIZED:
        if (!glow_type_same_shape(&ins[0].type, &outs[0].type))
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result shape differs",
                             KIND_NAME(n));
        return convert(n, &ins[0], &outs[0]);
    case NK_REINTERPRET:
        if (ev_numel(&ins[0].type) != ev_numel(&outs[0].type))
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': result size differs",
                             KIND_NAME(n));
        memcpy(outs[0].data, ins[0].data, glow_type_bytes(&outs[0].type));
        return GLOW_OK;
    case NK_CHANNELWISE_QCONV: return qconv(n, ins, &outs[0], d);
    case NK_FULLY_CONNECTED: case NK_MATMUL: return matmul(n, ins, &outs[0], d);
    case NK_MAX_POOL: case NK_AVG_POOL: return pool(n, &ins[0], &outs[0], d);
    default:
        for (uint32_t i = 0; i < n->nin; i++)
            if (!glow_type_same_shape(&ins[i].type, &outs[0].type))
                return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operand %u shape differs",
                                 KIND_NAME(n), i);
        return elementwise(n, ins, &outs[0], d);
    }
}
