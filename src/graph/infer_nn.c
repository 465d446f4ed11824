// infer_nn.c - Type inference for convolution, pooling, normalization, matmul and softmax.
#include <inttypes.h>
#include <string.h>

#include "graph/infer_internal.h"

/* The spatial attributes of a conv or pool over `nsp` spatial dims. */
typedef struct spatial {
    int nsp;
    const int64_t *kernel, *strides, *pads, *dil;
} spatial;

static glow_status get_spatial(infer_cx *cx, int nsp, spatial *sp)
{
    sp->nsp = nsp;
    GLOW_TRY(want_ints(cx, GA_KERNEL, nsp, &sp->kernel));
    GLOW_TRY(want_ints(cx, GA_STRIDES, nsp, &sp->strides));
    GLOW_TRY(want_ints(cx, GA_PADS, 2 * nsp, &sp->pads));
    GLOW_TRY(want_ints(cx, GA_DILATIONS, nsp, &sp->dil));
    for (int i = 0; i < nsp; i++) {
        if (sp->kernel[i] < 1 || sp->strides[i] < 1 || sp->dil[i] < 1)
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "kernel, strides and dilations must be >= 1 (dim %d: kernel %" PRId64
                         ", stride %" PRId64 ", dilation %" PRId64 ")", i, sp->kernel[i],
                         sp->strides[i], sp->dil[i]);
        if (sp->pads[i] < 0 || sp->pads[nsp + i] < 0)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "pads must be >= 0 (dim %d)", i);
        /* Keep later arithmetic far from overflow: no real model comes near these. */
        if (sp->kernel[i] > (1 << 20) || sp->dil[i] > (1 << 20) || sp->pads[i] > (1 << 30) ||
            sp->pads[nsp + i] > (1 << 30) || sp->strides[i] > (1 << 30))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "spatial attributes of dim %d are too large",
                         i);
    }
    return GLOW_OK;
}

/* Output size of a sliding window: floor((in + pb + pe - dil*(k-1) - 1)/stride) + 1. */
static glow_status window_out(infer_cx *cx, const spatial *sp, const glow_type *x,
                              int64_t *out)
{
    for (int i = 0; i < sp->nsp; i++) {
        int64_t in = x->dims[2 + i];
        if (in > ((int64_t)1 << 60))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "input %s is too large", ts(x).s);
        int64_t span = in + sp->pads[i] + sp->pads[sp->nsp + i] - sp->dil[i] * (sp->kernel[i] - 1);
        if (span < 1)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "input %s spatial dim %d (%" PRId64 ", padded %" PRId64 "+%" PRId64
                         ") is smaller than the dilated kernel %" PRId64, ts(x).s, i, in,
                         sp->pads[i], sp->pads[sp->nsp + i], sp->dil[i] * (sp->kernel[i] - 1) + 1);
        out[i] = (span - 1) / sp->strides[i] + 1;
    }
    return GLOW_OK;
}

static glow_status want_vec(infer_cx *cx, int i, const char *role, int64_t len);

/* ChannelwiseQuantizedConv(x quantized 8-bit, w i8/u8, bias i32, scales f32, offsets i32). */
static glow_status want_qconv_operands(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0), *w = in_type(cx, 1);
    if (x->dtype != GLOW_I8Q && x->dtype != GLOW_U8Q && x->dtype != GLOW_I16Q)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "input %s must be i8q, u8q or i16q", ts(x).s);
    if (w->dtype != GLOW_I8 && w->dtype != GLOW_U8)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "weight %s must be i8 or u8", ts(w).s);
    static const glow_dtype want[] = { GLOW_I32, GLOW_F32, GLOW_I32 };
    static const char *const role[] = { "bias", "scales", "offsets" };
    for (int i = 0; i < 3; i++)
        if (in_type(cx, 2 + i)->dtype != want[i])
            return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s must be %s", role[i],
                         ts(in_type(cx, 2 + i)).s, glow_dtype_name(want[i]));
    return GLOW_OK;
}

static glow_status infer_conv(infer_cx *cx)
{
    const glow_node *n = cx->n;
    bool tr = n->kind == NK_CONV_TRANSPOSE, q = n->kind == NK_CHANNELWISE_QCONV;
    GLOW_TRY(want_rank(cx, 0, "input", 3, 5));
    const glow_type *x = in_type(cx, 0), *w = in_type(cx, 1);
    if (q) {
        GLOW_TRY(want_qconv_operands(cx));
    } else {
        GLOW_TRY(want_float(cx, 0, "input"));
        GLOW_TRY(want_float(cx, 1, "weight"));
        if (!glow_dtype_is_quantized(x->dtype))
            GLOW_TRY(want_same_dtype(cx, 0, 1, "input", "weight"));
    }
    if (w->rank != x->rank)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "weight %s has rank %d, input %s has rank %d",
                     ts(w).s, w->rank, ts(x).s, x->rank);
    int nsp = x->rank - 2;
    spatial sp;
    GLOW_TRY(get_spatial(cx, nsp, &sp));
    int64_t group = attr_i(cx, GA_GROUP, 1);
    if (group < 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "group %" PRId64 " must be >= 1", group);
    for (int i = 0; i < nsp; i++)
        if (w->dims[2 + i] != sp.kernel[i])
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "weight %s spatial dim %d is %" PRId64 ", but 'kernel' says %" PRId64,
                         ts(w).s, i, w->dims[2 + i], sp.kernel[i]);
    int64_t c = x->dims[1], m;
    if (!tr) {
        /* w [M, C/group, k...] */
        m = w->dims[0];
        if (w->dims[1] * group != c)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "weight %s has %" PRId64 " input channels per group, input %s has %"
                         PRId64 " (group %" PRId64 ")", ts(w).s, w->dims[1], ts(x).s, c,
                         group);
        if (m % group != 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "weight %s has %" PRId64 " output channels, not a multiple of group %"
                         PRId64, ts(w).s, m, group);
    } else {
        /* w [C, M/group, k...] */
        if (w->dims[0] != c)
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "weight %s has %" PRId64 " input channels, input %s has %" PRId64,
                         ts(w).s, w->dims[0], ts(x).s, c);
        if (c % group != 0)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "input channels %" PRId64
                         " are not a multiple of group %" PRId64, c, group);
        if (!mul_ok(w->dims[1], group, &m))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "output channels overflow");
    }
    for (uint32_t i = 2; q && i < n->nin; i++) {
        static const char *const role[] = { "", "", "bias", "scales", "offsets" };
        GLOW_TRY(want_vec(cx, (int)i, role[i], m));
    }
    if (n->nin == 3 && !q) {
        const glow_type *b = in_type(cx, 2);
        if (b->rank != 1 || b->dims[0] != m)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "bias %s must have shape [%" PRId64 "]",
                         ts(b).s, m);
        if (!glow_dtype_is_quantized(x->dtype))
            GLOW_TRY(want_same_dtype(cx, 0, 2, "input", "bias"));
        else
            GLOW_TRY(want_float(cx, 2, "bias"));
    }
    int64_t dims[GLOW_MAX_DIMS] = { x->dims[0], m };
    if (!tr) {
        GLOW_TRY(window_out(cx, &sp, x, dims + 2));
        set_out_dims(cx, 0, q ? quant_result_kind(cx, x->dtype) : x->dtype, x->rank, dims);
        return GLOW_OK;
    }
    const int64_t *opad;
    GLOW_TRY(want_ints(cx, GA_OUTPUT_PADDING, nsp, &opad));
    for (int i = 0; i < nsp; i++) {
        if (opad[i] < 0 || (opad[i] >= sp.strides[i] && opad[i] >= sp.dil[i]))
            return ifail(cx, GLOW_ERR_BAD_ATTR,
                         "output_padding %" PRId64 " (dim %d) must be less than the stride or "
                         "the dilation", opad[i], i);
        int64_t in = x->dims[2 + i];
        /* stride*(in-1) + dil*(k-1) + 1 - pb - pe, computed in int64 with bounded inputs. */
        if (in > ((int64_t)1 << 40))
            return ifail(cx, GLOW_ERR_TOO_LARGE, "input %s is too large", ts(x).s);
        int64_t base = sp.strides[i] * (in - 1) + sp.dil[i] * (sp.kernel[i] - 1) + 1 -
                       sp.pads[i] - sp.pads[nsp + i];
        if (!cx->declared) {
            dims[2 + i] = base + opad[i];
        } else {
            const glow_type *r = &cx->declared[0];
            int64_t got = r->rank == x->rank ? r->dims[2 + i] : -1;
            if (got < base || got > base + opad[i])
                return ifail(cx, GLOW_ERR_BAD_SHAPE,
                             "declared result %s spatial dim %d should be %" PRId64
                             " (up to %" PRId64 " with output_padding)", ts(r).s, i, base,
                             base + opad[i]);
            dims[2 + i] = got;
        }
        if (dims[2 + i] < 1)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "result spatial dim %d is %" PRId64 " (< 1)",
                         i, dims[2 + i]);
    }
    if (cx->declared) {
        const glow_type *r = &cx->declared[0];
        if (r->rank != x->rank || r->dims[0] != dims[0] || r->dims[1] != dims[1])
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s should be [%" PRId64
                         ", %" PRId64 ", ...]", ts(r).s, dims[0], dims[1]);
    }
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    return GLOW_OK;
}

static glow_status infer_pool(infer_cx *cx)
{
    const glow_node *n = cx->n;
    GLOW_TRY(want_rank(cx, 0, "input", 3, 5));
    const glow_type *x = in_type(cx, 0);
    if (n->kind == NK_MAX_POOL)
        GLOW_TRY(want_numeric(cx, 0, "input"));
    else
        GLOW_TRY(want_float(cx, 0, "input"));
    spatial sp;
    GLOW_TRY(get_spatial(cx, x->rank - 2, &sp));
    if (n->kind == NK_LP_POOL && attr_i(cx, GA_P, 2) < 1)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "p %" PRId64 " must be >= 1", attr_i(cx, GA_P, 2));
    int64_t dims[GLOW_MAX_DIMS] = { x->dims[0], x->dims[1] };
    GLOW_TRY(window_out(cx, &sp, x, dims + 2));
    set_out_dims(cx, 0, x->dtype, x->rank, dims);
    if (cx->nout > 1)
        set_out_dims(cx, 1, GLOW_I64, x->rank, dims);
    return GLOW_OK;
}

/* Operand i must have shape [len]. */
static glow_status want_vec(infer_cx *cx, int i, const char *role, int64_t len)
{
    const glow_type *t = in_type(cx, i);
    if (t->rank == 1 && t->dims[0] == len)
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_SHAPE, "%s %s must have shape [%" PRId64 "]", role, ts(t).s,
                 len);
}

/* Operand i must have the shape of x's dims [axis, rank). */
static glow_status want_tail(infer_cx *cx, int i, const char *role, int axis)
{
    const glow_type *x = in_type(cx, 0), *t = in_type(cx, i);
    bool ok = t->rank == x->rank - axis;
    for (int k = 0; ok && k < t->rank; k++)
        ok = t->dims[k] == x->dims[axis + k];
    if (ok)
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_SHAPE, "%s %s must have the shape of input %s from axis %d",
                 role, ts(t).s, ts(x).s, axis);
}

static const char *const norm_roles[] = { "input", "scale", "bias", "mean", "var" };

static glow_status infer_norm(infer_cx *cx)
{
    const glow_node *n = cx->n;
    const glow_type *x = in_type(cx, 0);
    for (uint32_t i = 0; i < n->nin; i++)
        GLOW_TRY(want_float(cx, (int)i, norm_roles[i]));
    switch (n->kind) {
    case NK_BATCH_NORM:
    case NK_INSTANCE_NORM:
        GLOW_TRY(want_rank(cx, 0, "input", n->kind == NK_BATCH_NORM ? 2 : 3, GLOW_MAX_DIMS));
        for (uint32_t i = 1; i < n->nin; i++)
            GLOW_TRY(want_vec(cx, (int)i, norm_roles[i], x->dims[1]));
        break;
    case NK_GROUP_NORM: {
        GLOW_TRY(want_rank(cx, 0, "input", 2, GLOW_MAX_DIMS));
        int64_t g = attr_i(cx, GA_NUM_GROUPS, 1);
        if (g < 1 || x->dims[1] % g != 0)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "num_groups %" PRId64
                         " does not divide the %" PRId64 " channels of input %s", g,
                         x->dims[1], ts(x).s);
        /* Opset 18 gave scale and bias per group, opset 21 per channel. */
        for (int i = 1; i < 3; i++) {
            const glow_type *t = in_type(cx, i);
            if (!(t->rank == 1 && (t->dims[0] == x->dims[1] || t->dims[0] == g)))
                return ifail(cx, GLOW_ERR_BAD_SHAPE,
                             "%s %s must have shape [%" PRId64 "] or [%" PRId64 "]",
                             norm_roles[i], ts(t).s, x->dims[1], g);
        }
        break;
    }
    case NK_LAYER_NORM:
    case NK_RMS_NORM: {
        int axis;
        GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
        GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
        for (uint32_t i = 1; i < n->nin; i++)
            GLOW_TRY(want_tail(cx, (int)i, norm_roles[i], axis));
        if (n->kind == NK_LAYER_NORM && cx->nout > 1) {
            int64_t dims[GLOW_MAX_DIMS];
            for (int k = 0; k < x->rank; k++)
                dims[k] = k < axis ? x->dims[k] : 1;
            set_out_dims(cx, 1, x->dtype, x->rank, dims);
            if (cx->nout > 2)
                set_out_dims(cx, 2, x->dtype, x->rank, dims);
        }
        break;
    }
    case NK_LRN:
        GLOW_TRY(want_rank(cx, 0, "input", 3, GLOW_MAX_DIMS));
        if (attr_i(cx, GA_SIZE, 0) < 1)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "size %" PRId64 " must be >= 1",
                         attr_i(cx, GA_SIZE, 0));
        break;
    case NK_LP_NORM: {
        int axis;
        GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
        GLOW_TRY(want_axis(cx, GA_AXIS, x->rank, &axis));
        int64_t p = attr_i(cx, GA_P, 2);
        if (p != 1 && p != 2)
            return ifail(cx, GLOW_ERR_BAD_ATTR, "p %" PRId64 " must be 1 or 2", p);
        break;
    }
    default:
        GLOW_UNREACHABLE();
    }
    if (n->kind != NK_LAYER_NORM && attr_f(cx, GA_EPSILON, 0) < 0)
        return ifail(cx, GLOW_ERR_BAD_ATTR, "epsilon %g must be >= 0",
                     attr_f(cx, GA_EPSILON, 0));
    set_out(cx, 0, x);
    return GLOW_OK;
}

static glow_status infer_matmul(infer_cx *cx)
{
    const glow_node *n = cx->n;
    const glow_type *a = in_type(cx, 0), *b = in_type(cx, 1);
    GLOW_TRY(want_numeric(cx, 0, "operand A"));
    GLOW_TRY(want_numeric(cx, 1, "operand B"));
    if (!glow_dtype_is_quantized(a->dtype))
        GLOW_TRY(want_same_dtype(cx, 0, 1, "operand A", "operand B"));
    int64_t dims[GLOW_MAX_DIMS];
    if (n->kind == NK_MATMUL) {
        GLOW_TRY(want_rank(cx, 0, "operand A", 2, GLOW_MAX_DIMS));
        if (b->rank != a->rank)
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "operand A %s and operand B %s differ in rank",
                         ts(a).s, ts(b).s);
        int r = a->rank;
        for (int k = 0; k < r - 2; k++) {
            if (a->dims[k] != b->dims[k])
                return ifail(cx, GLOW_ERR_BAD_SHAPE,
                             "operand A %s and operand B %s differ in batch dim %d", ts(a).s,
                             ts(b).s, k);
            dims[k] = a->dims[k];
        }
        if (a->dims[r - 1] != b->dims[r - 2])
            return ifail(cx, GLOW_ERR_BAD_SHAPE,
                         "operand A %s has K = %" PRId64 ", operand B %s has K = %" PRId64,
                         ts(a).s, a->dims[r - 1], ts(b).s, b->dims[r - 2]);
        dims[r - 2] = a->dims[r - 2];
        dims[r - 1] = b->dims[r - 1];
        set_out_dims(cx, 0, quant_result_kind(cx, a->dtype), r, dims);
        return GLOW_OK;
    }
    GLOW_TRY(want_rank(cx, 0, "operand A", 2, 2));
    GLOW_TRY(want_rank(cx, 1, "operand B", 2, 2));
    bool ta = n->kind == NK_GEMM && attr_i(cx, GA_TRANS_A, 0);
    bool tb = n->kind == NK_GEMM && attr_i(cx, GA_TRANS_B, 0);
    int64_t m = a->dims[ta ? 1 : 0], ka = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
    if (ka != kb)
        return ifail(cx, GLOW_ERR_BAD_SHAPE,
                     "operand A %s%s has K = %" PRId64 ", operand B %s%s has K = %" PRId64,
                     ts(a).s, ta ? " (transposed)" : "", ka, ts(b).s,
                     tb ? " (transposed)" : "", kb);
    if (n->nin == 3) {
        const glow_type *c = in_type(cx, 2);
        const char *role = n->kind == NK_GEMM ? "operand C" : "bias";
        if (n->kind == NK_GEMM &&
            !(c->rank == 2 && c->dims[0] == m && c->dims[1] == nn))
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "%s %s must have shape [%" PRId64 ", %" PRId64
                         "]", role, ts(c).s, m, nn);
        if (n->kind == NK_FULLY_CONNECTED)
            GLOW_TRY(want_vec(cx, 2, role, nn));
        if (!glow_dtype_is_quantized(a->dtype))
            GLOW_TRY(want_same_dtype(cx, 0, 2, "operand A", role));
    }
    dims[0] = m;
    dims[1] = nn;
    set_out_dims(cx, 0, quant_result_kind(cx, a->dtype), 2, dims);
    return GLOW_OK;
}

static glow_status infer_softmax(infer_cx *cx)
{
    int axis;
    GLOW_TRY(want_float(cx, 0, "input"));
    GLOW_TRY(want_rank(cx, 0, "input", 1, GLOW_MAX_DIMS));
    GLOW_TRY(want_axis(cx, GA_AXIS, in_type(cx, 0)->rank, &axis));
    set_out(cx, 0, in_type(cx, 0));
    return GLOW_OK;
}

glow_status infer_nn(infer_cx *cx, bool *handled)
{
    *handled = true;
    switch (cx->n->kind) {
    case NK_CONV:
    case NK_CONV_TRANSPOSE:
    case NK_CHANNELWISE_QCONV:
        return infer_conv(cx);
    case NK_MAX_POOL:
    case NK_AVG_POOL:
    case NK_LP_POOL:
        return infer_pool(cx);
    case NK_BATCH_NORM:
    case NK_INSTANCE_NORM:
    case NK_LAYER_NORM:
    case NK_GROUP_NORM:
    case NK_RMS_NORM:
    case NK_LRN:
    case NK_LP_NORM:
        return infer_norm(cx);
    case NK_MATMUL:
    case NK_GEMM:
    case NK_FULLY_CONNECTED:
        return infer_matmul(cx);
    case NK_SOFTMAX:
    case NK_LOG_SOFTMAX:
    case NK_HARDMAX:
        return infer_softmax(cx);
    default:
        *handled = false;
        return GLOW_OK;
    }
}
