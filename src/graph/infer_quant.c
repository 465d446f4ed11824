// infer_quant.c - Type inference for Quantize, Dequantize, RescaleQuantized and Reinterpret: the shape is
// the operand's, the element kind and its scale and offset are declared (docs/quantization.md).
#include <math.h>

#include "graph/infer_internal.h"

/* The declared result must exist, have the operand's shape and a kind of class `cls`
 * (DC_QUANT or DC_FLOAT); quantized results need a positive finite scale. */
static glow_status declared_result(infer_cx *cx, bool quantized, const char *what)
{
    const glow_type *x = in_type(cx, 0);
    if (!cx->declared || cx->ndeclared < 1)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "needs a declared %s result type", what);
    const glow_type *r = &cx->declared[0];
    bool ok = quantized ? glow_dtype_is_quantized(r->dtype)
                        : cx->n->kind == NK_REINTERPRET ? r->dtype != GLOW_BOOL
                                                       : glow_dtype_is_float(r->dtype);
    if (!ok)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "declared result %s must be %s", ts(r).s, what);
    if (quantized && !(r->scale > 0 && isfinite(r->scale)))
        return ifail(cx, GLOW_ERR_BAD_TYPE, "declared result %s has scale %g (must be > 0)",
                     ts(r).s, (double)r->scale);
    glow_type t = *r;
    t.rank = x->rank;
    for (int k = 0; k < GLOW_MAX_DIMS; k++)
        t.dims[k] = k < x->rank ? x->dims[k] : 0;
    set_out(cx, 0, &t);
    return GLOW_OK;
}

glow_status infer_quant(infer_cx *cx, bool *handled)
{
    *handled = true;
    const glow_type *x = in_type(cx, 0);
    switch (cx->n->kind) {
    case NK_QUANTIZE:
        if (!glow_dtype_is_float(x->dtype))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "operand %s must be a float tensor", ts(x).s);
        return declared_result(cx, true, "quantized");
    case NK_DEQUANTIZE:
    case NK_RESCALE_QUANTIZED:
        if (!glow_dtype_is_quantized(x->dtype))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "operand %s must be quantized", ts(x).s);
        return declared_result(cx, cx->n->kind == NK_RESCALE_QUANTIZED,
                               cx->n->kind == NK_DEQUANTIZE ? "float" : "quantized");
    case NK_REINTERPRET: {
        if (!cx->declared || cx->ndeclared < 1)
            return ifail(cx, GLOW_ERR_BAD_TYPE, "needs a declared result type");
        const glow_type *r = &cx->declared[0];
        bool qx = glow_dtype_is_quantized(x->dtype), qr = glow_dtype_is_quantized(r->dtype);
        bool ix = qx || glow_dtype_is_int(x->dtype), ir = qr || glow_dtype_is_int(r->dtype);
        bool plain = !qx && !qr && r->dtype != GLOW_BOOL;
        if ((!plain && (!ix || !ir || !(qx || qr))) ||
            glow_dtype_size(x->dtype) != glow_dtype_size(r->dtype))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "cannot reinterpret %s as %s (one element size; "
                         "integer storage quantized on one side, or two plain kinds, not to "
                         "bool)", ts(x).s, ts(r).s);
        if (qr && !(r->scale > 0 && isfinite(r->scale)))
            return ifail(cx, GLOW_ERR_BAD_TYPE, "declared result %s has scale %g (must be > 0)",
                         ts(r).s, (double)r->scale);
        return declared_result(cx, qr, qr ? "quantized" : "a kind other than bool");
    }
    default:
        *handled = false;
        return GLOW_OK;
    }
}
