// weights.c - Quantized convolution and fully connected layers: int8 weights (one scale per
// output channel, or one per tensor), int32 biases in the accumulator's units, made here from
// the float constants.
//
// Weights are symmetric in every schema (offset 0, values in [-127, 127], or [-63, 63] with
// --reduce-range): the int8 kernels
// multiply unsigned activations by signed weights (VNNI's vpdpbusd), and a weight offset would
// cost a sum of the inputs under every window. The schema decides the activations.
#include <math.h>
#include <stdlib.h>

#include "quant/quant_internal.h"
#include "qmath.h"

void quant_constant_minmax(const glow_node *c, double *lo, double *hi)
{
    const glow_tensor *t = &c->payload;
    int64_t count = glow_type_numel(&t->type);
    *lo = *hi = 0;
    for (int64_t i = 0; i < count; i++) {
        double v = glow_load_f64(t->type.dtype, t->data, (size_t)i);
        if (v < *lo)
            *lo = v;
        if (v > *hi)
            *hi = v;
    }
}

void quant_fold_act(glow_node *q, const glow_node *act)
{
    glow_node_set_str(q, GA_FUSED_ACT, glow_node_kind_name(act->kind));
    if (act->kind == NK_CLIP) {
        glow_node_set_float(q, GA_FUSED_ALPHA, glow_node_float(act, GA_MIN, 0));
        glow_node_set_float(q, GA_FUSED_BETA, glow_node_float(act, GA_MAX, 0));
    }
}

/* Symmetric int8 of `per` floats with scale max|w| / q (1 for an all-zero group), q = 127, or
 * 63 with reduce_range (7-bit weights). */
static float quant_group(const float *w, int64_t per, bool reduce_range, int8_t *out)
{
    int q = reduce_range ? 63 : 127;
    float amax = 0;
    for (int64_t i = 0; i < per; i++)
        amax = fabsf(w[i]) > amax ? fabsf(w[i]) : amax;
    float scale = amax > 0 ? amax / (float)q : 1.0f;
    for (int64_t i = 0; i < per; i++)
        out[i] = (int8_t)gk_quantize(w[i], scale, 0, -q, q);
    return scale;
}

/* b / (sx * sw) rounded to nearest even and saturated to int32. */
static int32_t quant_bias(float b, double sx, double sw)
{
    double v = nearbyint((double)b / (sx * sw));
    return v > INT32_MAX ? INT32_MAX : v < -2147483647.0 ? -2147483647 : (int32_t)v;
}

static glow_node *new_constant(quant_cx *cx, const glow_node *base, const char *what,
                               glow_dtype t, int rank, const int64_t *dims, const void *data)
{
    char name[512];
    snprintf(name, sizeof name, "%s/%s", base->name, what);
    glow_type ty = glow_type_make(t, rank, dims);
    glow_node *c = glow_constant_create(cx->f->module, name, &ty, data);
    if (!c && cx->status == GLOW_OK)
        cx->status = glow_fail(cx->d, GLOW_ERR_TOO_LARGE, "%s: no memory for quantized %s",
                               base->name, what);
    return c;
}

static bool f32_constant(glow_value v)
{
    return glow_value_is_constant(v) && glow_value_type(v)->dtype == GLOW_F32;
}

bool quant_conv(quant_cx *cx, glow_node *n, glow_node *act, const glow_type *yt,
                quant_replace_fn replace)
{
    const glow_type *wt = glow_value_type(n->ins[1]);
    if (!f32_constant(n->ins[1]) || (n->nin > 2 && !f32_constant(n->ins[2])))
        return false;
    glow_value x;
    if (!quant_operand(cx, n, n->ins[0], NULL, &x))
        return false;
    const glow_type *xt = glow_value_type(x);
    if (xt->dtype != GLOW_U8Q && xt->dtype != GLOW_I8Q && xt->dtype != GLOW_I16Q)
        return false;
    int64_t m = wt->dims[0], per = glow_type_numel(wt) / (m ? m : 1);
    const float *w = n->ins[1].node->payload.data;
    const float *b = n->nin > 2 ? n->ins[2].node->payload.data : NULL;
    int8_t *w8 = malloc((size_t)(m * per) + 1);
    float *scales = malloc(sizeof(float) * (size_t)m + 1);
    int32_t *bias = malloc(sizeof(int32_t) * (size_t)m + 1);
    int32_t *offsets = calloc((size_t)m + 1, sizeof(int32_t));
    bool ok = w8 && scales && bias && offsets;
    if (ok && cx->o->per_channel) {
        for (int64_t c = 0; c < m; c++)
            scales[c] = quant_group(w + c * per, per, cx->o->reduce_range, w8 + c * per);
    } else if (ok) {
        float s = quant_group(w, m * per, cx->o->reduce_range, w8);
        for (int64_t c = 0; c < m; c++)
            scales[c] = s;
    }
    for (int64_t c = 0; ok && c < m; c++)
        bias[c] = b ? quant_bias(b[c], xt->scale, scales[c]) : 0;
    glow_node *q = NULL;
    if (ok) {
        glow_value ins[5] = {
            x, glow_val(new_constant(cx, n, "qweights", GLOW_I8, wt->rank, wt->dims, w8), 0),
            glow_val(new_constant(cx, n, "qbias", GLOW_I32, 1, &m, bias), 0),
            glow_val(new_constant(cx, n, "qscales", GLOW_F32, 1, &m, scales), 0),
            glow_val(new_constant(cx, n, "qoffsets", GLOW_I32, 1, &m, offsets), 0) };
        ok = cx->status == GLOW_OK;
        if (ok)
            q = quant_build(cx, n, n, NULL, NK_CHANNELWISE_QCONV, ins, 5, n->attrs,
                            (int)n->nattr, yt);
    }
    free(w8);
    free(scales);
    free(bias);
    free(offsets);
    if (!q)
        return false;
    if (act)
        quant_fold_act(q, act);
    replace(cx, n, act, q);
    return true;
}

bool quant_fc(quant_cx *cx, glow_node *n, glow_node *act, const glow_type *yt,
              quant_replace_fn replace)
{
    const glow_type *wt = glow_value_type(n->ins[1]);
    if (!f32_constant(n->ins[1]) || !f32_constant(n->ins[2]))
        return false;
    glow_value x;
    if (!quant_operand(cx, n, n->ins[0], NULL, &x))
        return false;
    const glow_type *xt = glow_value_type(x);
    int64_t count = glow_type_numel(wt), nn = wt->dims[1];
    int8_t *w8 = malloc((size_t)count + 1);
    int32_t *bias = malloc(sizeof(int32_t) * (size_t)nn + 1);
    glow_node *q = NULL;
    if (w8 && bias) {
        float sw = quant_group(n->ins[1].node->payload.data, count, cx->o->reduce_range, w8);
        const float *b = n->ins[2].node->payload.data;
        for (int64_t c = 0; c < nn; c++)
            bias[c] = quant_bias(b[c], xt->scale, sw);
        glow_node *wc = new_constant(cx, n, "qweights", GLOW_I8Q, 2, wt->dims, w8);
        glow_node *bc = new_constant(cx, n, "qbias", GLOW_I32, 1, &nn, bias);
        if (wc && bc) {
            wc->outs[0].scale = sw;
            wc->payload.type.scale = sw;
            glow_value ins[3] = { x, glow_val(wc, 0), glow_val(bc, 0) };
            q = quant_build(cx, n, n, NULL, NK_FULLY_CONNECTED, ins, 3, n->attrs,
                            (int)n->nattr, yt);
        }
    }
    free(w8);
    free(bias);
    if (!q)
        return false;
    if (act)
        quant_fold_act(q, act);
    replace(cx, n, act, q);
    return true;
}
