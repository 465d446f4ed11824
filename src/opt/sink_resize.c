// sink_resize.c - A 1x1 Conv of an upsampled tensor computes the same thing at the lower
// resolution, upsampled: Conv(Resize(x)) -> Resize(Conv(x)).
//
// A 1x1 convolution mixes channels pixel by pixel, and a nearest or linear Resize mixes pixels
// channel by channel with taps whose weights sum to 1, so the two commute, the bias included.
// Done the other way round, the convolution runs on scale_h * scale_w times fewer pixels and
// the Resize moves its output channels instead of its input channels (LR-ASPP's segmentation
// head: a 2x bilinear upsample of 128 channels feeding a 1x1 classifier to 21). The Resize
// moves only when the Conv is its one user, the Conv has no fused activation (a Relu does not
// commute with linear taps) and the Resize scales only the spatial dims; cubic taps and
// tf_crop_and_resize (whose extrapolated pixels are a constant, not a mix) stay.
// Requires: verified graph. Keeps: topological order; results within float rounding (the
// taps' sum is 1 only up to it), exact for nearest.
#include <string.h>

#include "opt/opt_internal.h"

/* Every entry of the INTS attribute a is v (an absent one counts as v). */
static bool all_of(const glow_node *n, glow_attr_id a, int64_t v)
{
    int k = 0;
    const int64_t *p = glow_node_ints(n, a, &k);
    for (int i = 0; p && i < k; i++)
        if (p[i] != v)
            return false;
    return true;
}

static bool pointwise_conv(const glow_node *c)
{
    const glow_type *w = glow_value_type(c->ins[1]);
    if (c->kind != NK_CONV || c->outs[0].dtype != GLOW_F32 || glow_node_attr(c, GA_FUSED_ACT))
        return false;
    for (int i = 2; i < w->rank; i++)
        if (w->dims[i] != 1)
            return false;
    return all_of(c, GA_STRIDES, 1) && all_of(c, GA_PADS, 0);
}

static bool str_is(const glow_node *n, glow_attr_id a, const char *s)
{
    return strcmp(glow_node_str(n, a, ""), s) == 0;
}

static bool spatial_resize(const glow_node *r)
{
    const glow_type *x = glow_value_type(r->ins[0]), *y = &r->outs[0];
    if (r->kind != NK_RESIZE || !opt_single_use(glow_val((glow_node *)r, 0)) || x->rank < 3 || x->dtype != GLOW_F32 ||
        x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1] ||
        !(str_is(r, GA_MODE, "nearest") || str_is(r, GA_MODE, "linear")) ||
        str_is(r, GA_COORD_MODE, "tf_crop_and_resize"))
        return false;
    return true;
}

static void sink(opt_cx *cx, glow_node *c)
{
    glow_node *r = c->ins[0].node;
    glow_value x = r->ins[0];
    const glow_type *xt = glow_value_type(x);
    glow_type low = c->outs[0];
    memcpy(low.dims + 2, xt->dims + 2, (size_t)(xt->rank - 2) * sizeof low.dims[0]);
    glow_value ins[3];
    memcpy(ins, c->ins, c->nin * sizeof ins[0]);
    ins[0] = x;
    glow_node *c2 = opt_build(cx, c, c, "low", NK_CONV, ins, (int)c->nin, c->attrs,
                              (int)c->nattr, &low);
    if (!c2)
        return;
    glow_node *r2 = opt_build(cx, c, c, "resize", NK_RESIZE, &(glow_value){ c2, 0 }, 1,
                              r->attrs, (int)r->nattr, &c->outs[0]);
    if (r2)
        opt_replace(cx, c, glow_val(r2, 0));
}

void glow_pass_sink_resize(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_CONV && n->nin >= 2 && n->ins[0].node->kind == NK_RESIZE &&
            pointwise_conv(n) && spatial_resize(n->ins[0].node))
            sink(cx, n);
    }
}
