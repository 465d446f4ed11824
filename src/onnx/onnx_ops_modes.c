// onnx_ops_modes.c - Less common modes of ops whose main form is imported elsewhere, built from
// the graph's existing nodes: MaxPool's column-major indices (storage_order=1).
//
// Keeping them here leaves the main loaders short and the common path untouched: a model
// that does not use a mode builds exactly the graph it built before.
#include "onnx/onnx_internal.h"

static glow_value i64c(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t v)
{
    return onnx_sub_scalar(cx, np, "c", GLOW_I64, (double)v);
}

static glow_status ibin(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                        glow_value b, glow_value *out)
{
    glow_attr fmod = GLOW_AI(FMOD, 0);   /* Mod's required attribute: integer remainder */
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, &fmod, k == NK_MOD, out);
}

/* MaxPool's indices with storage_order=1. The pool node gives each max's flat row-major NCHW
 * index; ONNX's column-major form keeps the (n, c) plane offset and numbers the positions
 * inside the plane with the first spatial dim fastest: for [H, W], h + w * H instead of
 * h * W + w. The index is split into its spatial coordinates (non-negative, so truncating
 * division and remainder are exact) and recombined with the reversed strides. */
glow_status onnx_column_major_indices(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value idx,
                                      const glow_type *xt, glow_value *out)
{
    int k = xt->rank - 2;
    if (k <= 1) {
        *out = idx;   /* one spatial dim: both orders agree */
        return GLOW_OK;
    }
    glow_value q = idx, coord[GLOW_MAX_DIMS];
    for (int i = k - 1; i >= 0; i--) {
        glow_value s = i64c(cx, np, xt->dims[2 + i]);
        GLOW_TRY(ibin(cx, np, NK_MOD, q, s, &coord[i]));
        GLOW_TRY(ibin(cx, np, NK_DIV, q, s, &q));
    }
    int64_t plane = 1;
    for (int i = 0; i < k; i++)
        plane *= xt->dims[2 + i];
    glow_value col;
    GLOW_TRY(ibin(cx, np, NK_MUL, q, i64c(cx, np, plane), &col));
    int64_t stride = 1;
    for (int i = 0; i < k; i++) {
        glow_value term = coord[i];
        if (stride != 1)
            GLOW_TRY(ibin(cx, np, NK_MUL, term, i64c(cx, np, stride), &term));
        GLOW_TRY(ibin(cx, np, NK_ADD, col, term, &col));
        stride *= xt->dims[2 + i];
    }
    *out = col;
    return GLOW_OK;
}
