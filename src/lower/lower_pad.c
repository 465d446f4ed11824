// lower_pad.c - Lowers constant-mode Pad to Splat + InsertTensor (with a Slice first for
// negative pads, which crop). Reflect, edge and wrap padding stay whole.
#include <string.h>

#include "lower/lower_internal.h"

void lower_pad(lower_cx *cx, bool *applied)
{
    glow_node *n = cx->n;
    const glow_type *y = &n->outs[0];
    const glow_type *xt = lw_type(lw_in(cx, 0));
    int np = 0;
    const int64_t *pads = glow_node_ints(n, GA_PADS, &np);
    if (strcmp(glow_node_str(n, GA_MODE, "constant"), "constant") != 0 ||
        glow_dtype_is_quantized(y->dtype) || np != 2 * xt->rank)
        return;
    *applied = true;
    int r = xt->rank;
    /* Crop first: a negative pad removes elements from that end. */
    int64_t starts[GLOW_MAX_DIMS], ends[GLOW_MAX_DIMS], at[GLOW_MAX_DIMS];
    bool crop = false, grow = false;
    for (int k = 0; k < r; k++) {
        int64_t b = pads[k], e = pads[r + k];
        starts[k] = b < 0 ? -b : 0;
        ends[k] = e < 0 ? xt->dims[k] + e : xt->dims[k];
        at[k] = b > 0 ? b : 0;
        crop |= b < 0 || e < 0;
        grow |= b > 0 || e > 0;
    }
    glow_value x = lw_in(cx, 0);
    if (crop)
        x = lw_slice(cx, "crop", x, starts, ends);
    if (!grow) {
        cx->out[0] = x;
        return;
    }
    glow_value fill = lw_splat(cx, "fill", y, glow_node_float(n, GA_VALUE, 0.0));
    glow_value ins[2] = { fill, x };
    glow_attr a = GLOW_AINTS(STARTS, at, r);
    cx->out[0] = lw_build(cx, NK_INSERT_TENSOR, "insert", ins, 2, &a, 1, NULL);
}
