// onnx_ops_const.c - Loaders for constants and shape queries: Constant, Identity, Shape, Size,
// ConstantOfShape, Range, EyeLike and (inference-mode) Dropout.
//
// These ops produce values that depend only on attributes, constant inputs or static shapes,
// so they become constants at import; shape-computing subgraphs then fold away.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* The name of output i for the constants these loaders create (the model's value name). */
static const char *out_name(const Onnx__NodeProto *np, int i)
{
    return onnx_has_output(np, i) ? np->output[i] : onnx_node_name(np);
}

/* A new constant holding `data` (NULL: zeros), bound to output i. */
static glow_status bind_constant(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                                 const glow_type *t, const void *data)
{
    glow_node *c = glow_constant_create(cx->m, glow_arena_strdup(cx->arena, out_name(np, i)), t,
                                        data);
    if (!c) {
        char buf[128];
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "constant %s does not fit in memory",
                         glow_type_str(t, buf, sizeof(buf)));
    }
    return onnx_set_output(cx, np, i, glow_val(c, 0));
}

/* A value of type t with every element v, bound to output i. Small ones are constants; larger
 * ones stay a BROADCAST of a scalar so the importer never allocates model-declared sizes. */
static glow_status bind_filled(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                               const glow_type *t, double v)
{
    size_t bytes = glow_type_bytes(t), esize = glow_dtype_size(t->dtype);
    if (bytes <= ONNX_FOLD_MAX_BYTES) {
        uint8_t *buf = glow_arena_try_alloc(&cx->scratch, bytes ? bytes : esize);
        if (!buf)
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "%zu bytes do not fit in memory", bytes);
        glow_store_f64(t->dtype, buf, 0, v);
        for (size_t off = esize; off < bytes; off += esize)
            memcpy(buf + off, buf, esize);
        return bind_constant(cx, np, i, t, buf);
    }
    glow_value s = onnx_scalar(cx, glow_arena_printf(cx->arena, "%s/value", out_name(np, i)),
                               t->dtype, v);
    glow_value out;
    GLOW_TRY(onnx_broadcast_to(cx, np, s, t->rank, t->dims, &out));
    return onnx_set_output(cx, np, i, out);
}

glow_status load_constant(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    if (np->n_attribute != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "expects exactly one value attribute, has %zu",
                         np->n_attribute);
    const Onnx__AttributeProto *a = np->attribute[0];
    const char *an = a->name ? a->name : "";
    glow_type t;
    if (strcmp(an, "value") == 0) {
        if (!a->t)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'value' holds no tensor");
        glow_diag d = { 0 };
        glow_tensor v;
        if (onnx_tensor_from_proto(a->t, &cx->scratch, &v, out_name(np, 0), &d) != GLOW_OK)
            return onnx_fail(cx, np, d.status, "%s", d.msg);
        return bind_constant(cx, np, 0, &v.type, v.data);
    }
    if (strcmp(an, "value_float") == 0) {
        t = glow_type_scalar(GLOW_F32);
        return bind_constant(cx, np, 0, &t, &a->f);
    }
    if (strcmp(an, "value_int") == 0) {
        t = glow_type_scalar(GLOW_I64);
        return bind_constant(cx, np, 0, &t, &a->i);
    }
    if (strcmp(an, "value_floats") == 0) {
        int64_t n = (int64_t)a->n_floats;
        t = glow_type_make(GLOW_F32, 1, &n);
        return bind_constant(cx, np, 0, &t, a->floats);
    }
    if (strcmp(an, "value_ints") == 0) {
        int64_t n = (int64_t)a->n_ints;
        t = glow_type_make(GLOW_I64, 1, &n);
        return bind_constant(cx, np, 0, &t, a->ints);
    }
    if (strcmp(an, "value_string") == 0 || strcmp(an, "value_strings") == 0)
        return onnx_unsupported(cx, np, "string constants ('%s') are not supported", an);
    if (strcmp(an, "sparse_value") == 0)
        return onnx_unsupported(cx, np, "sparse constants ('sparse_value') are not supported");
    return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "unknown attribute '%s'", an);
}

glow_status load_identity(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value v;
    GLOW_TRY(onnx_input_any(cx, np, 0, &v));   /* sequences and optionals pass too */
    return onnx_set_output(cx, np, 0, v);
}

glow_status load_shape(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value v;
    GLOW_TRY(onnx_input(cx, np, 0, &v));
    const glow_type *vt = glow_value_type(v);
    int64_t r = vt->rank, start = 0, end = r;
    if (opset >= 15) {
        /* Negative bounds count from the end; out-of-range ones are clamped (ONNX spec). */
        start = onnx_attr_int(np, "start", 0);
        end = onnx_attr_int(np, "end", r);
        if (start < 0)
            start += r;
        if (end < 0)
            end += r;
        start = start < 0 ? 0 : start > r ? r : start;
        end = end < 0 ? 0 : end > r ? r : end;
    }
    int64_t n = end > start ? end - start : 0;
    glow_type t = glow_type_make(GLOW_I64, 1, &n);
    return bind_constant(cx, np, 0, &t, n ? vt->dims + start : NULL);
}

glow_status load_size(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value v;
    GLOW_TRY(onnx_input(cx, np, 0, &v));
    int64_t n = glow_type_numel(glow_value_type(v));
    glow_type t = glow_type_scalar(GLOW_I64);
    return bind_constant(cx, np, 0, &t, &n);
}

glow_status load_constant_of_shape(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                   glow_node_kind kind)
{
    int64_t *dims;
    int n;
    GLOW_TRY(onnx_input_ints(cx, np, 0, &dims, &n));
    if (n > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "output rank %d exceeds glowc's limit of %d dims", n,
                                GLOW_MAX_DIMS);
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "shape value %d is negative (%lld)", i,
                             (long long)dims[i]);
        if (!glow_mul_overflow_i64(numel, dims[i], &numel) || numel > (INT64_MAX >> 4))
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output shape is too large");
    }
    glow_dtype dt = GLOW_F32;
    double v = 0;
    const Onnx__AttributeProto *a = onnx_attr(np, "value");
    if (a) {
        if (!a->t)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'value' holds no tensor");
        glow_diag d = { 0 };
        glow_tensor vt;
        if (onnx_tensor_from_proto(a->t, &cx->scratch, &vt, "value", &d) != GLOW_OK)
            return onnx_fail(cx, np, d.status, "%s", d.msg);
        if (glow_type_numel(&vt.type) != 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'value' must hold one "
                             "element, has %lld", (long long)glow_type_numel(&vt.type));
        dt = vt.type.dtype;
        v = glow_load_f64(dt, vt.data, 0);
        if (glow_dtype_class_of(dt) == DC_SINT || glow_dtype_class_of(dt) == DC_UINT) {
            /* Wide integers do not survive a trip through double; keep them exact. */
            glow_type t = glow_type_make(dt, n, dims);
            if (glow_type_bytes(&t) <= ONNX_FOLD_MAX_BYTES) {
                size_t es = glow_dtype_size(dt), bytes = glow_type_bytes(&t);
                uint8_t *buf = glow_arena_try_alloc(&cx->scratch, bytes ? bytes : es);
                if (!buf)
                    return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output does not fit in memory");
                for (size_t off = 0; off < bytes; off += es)
                    memcpy(buf + off, vt.data, es);
                return bind_constant(cx, np, 0, &t, buf);
            }
        }
    }
    glow_type t = glow_type_make(dt, n, dims);
    return bind_filled(cx, np, 0, &t, v);
}

/* Reads constant scalar input i of Range as f64 (also checking it has one element). */
static glow_status range_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_dtype dt,
                                const glow_tensor **t)
{
    GLOW_TRY(onnx_input_const(cx, np, i, t));
    if (glow_type_numel(&(*t)->type) != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d '%s' must be a scalar", i,
                         np->input[i]);
    if ((*t)->type.dtype != dt)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d '%s' is %s; start is %s", i,
                         np->input[i], glow_dtype_name((*t)->type.dtype), glow_dtype_name(dt));
    return GLOW_OK;
}

glow_status load_range(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    const glow_tensor *ts, *tl, *td;
    GLOW_TRY(onnx_input_const(cx, np, 0, &ts));
    glow_dtype dt = ts->type.dtype;
    /* f16 and bf16 since opset 27; their values are computed in f64 and rounded once. */
    if (dt != GLOW_F32 && dt != GLOW_F64 && dt != GLOW_I16 && dt != GLOW_I32 && dt != GLOW_I64 &&
        dt != GLOW_F16 && dt != GLOW_BF16)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "element type %s is not allowed",
                         glow_dtype_name(dt));
    GLOW_TRY(range_scalar(cx, np, 0, dt, &ts));
    GLOW_TRY(range_scalar(cx, np, 1, dt, &tl));
    GLOW_TRY(range_scalar(cx, np, 2, dt, &td));
    bool is_int = glow_dtype_is_int(dt);
    double start = glow_load_f64(dt, ts->data, 0), limit = glow_load_f64(dt, tl->data, 0);
    double delta = glow_load_f64(dt, td->data, 0);
    if (delta == 0 || isnan(delta) || isnan(start) || isnan(limit))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "delta must be a non-zero number");
    double count = ceil((limit - start) / delta);
    if (!(count > 0))
        count = 0;
    if (count * (double)glow_dtype_size(dt) > (double)ONNX_FOLD_MAX_BYTES)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "range of %.0f elements is too large",
                         count);
    int64_t n = (int64_t)count;
    glow_type t = glow_type_make(dt, 1, &n);
    uint8_t *buf = glow_arena_try_alloc(&cx->scratch, (size_t)n * glow_dtype_size(dt) + 8);
    if (!buf)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "range does not fit in memory");
    if (is_int) {
        /* Exact integer steps; unsigned arithmetic makes wrap-around defined. */
        uint64_t s = (uint64_t)glow_load_i64(dt, ts->data, 0);
        uint64_t dl = (uint64_t)glow_load_i64(dt, td->data, 0);
        for (int64_t k = 0; k < n; k++)
            glow_store_i64(dt, buf, (size_t)k, (int64_t)(s + (uint64_t)k * dl));
    } else {
        for (int64_t k = 0; k < n; k++)
            glow_store_f64(dt, buf, (size_t)k, start + (double)k * delta);
    }
    return bind_constant(cx, np, 0, &t, buf);
}

glow_status load_eye_like(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value v;
    GLOW_TRY(onnx_input(cx, np, 0, &v));
    const glow_type *vt = glow_value_type(v);
    if (vt->rank != 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input must be 2-D, is rank %d", vt->rank);
    glow_dtype dt = vt->dtype;
    if (onnx_attr(np, "dtype")) {
        int64_t code = onnx_attr_int(np, "dtype", 0);
        if (!onnx_dtype_of_code(code, &dt))
            return onnx_unsupported(cx, np, "dtype %lld is not supported", (long long)code);
    }
    if (glow_dtype_is_quantized(dt))
        return onnx_unsupported(cx, np, "quantized element type %s", glow_dtype_name(dt));
    int64_t k = onnx_attr_int(np, "k", 0);
    glow_type t = glow_type_make(dt, 2, vt->dims);
    size_t bytes = glow_type_bytes(&t);
    if (bytes > ONNX_FOLD_MAX_BYTES)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output of %zu bytes is too large", bytes);
    uint8_t *buf = glow_arena_try_alloc(&cx->scratch, bytes ? bytes : 8);
    if (!buf)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "output does not fit in memory");
    int64_t rows = vt->dims[0], cols = vt->dims[1];
    for (int64_t r = 0; r < rows; r++) {
        /* Compare in a form that cannot overflow for any k. */
        if (k < -cols || k >= cols)
            break;
        int64_t c = r + k;
        if (c >= 0 && c < cols)
            glow_store_f64(dt, buf, (size_t)(r * cols + c), 1.0);
    }
    return bind_constant(cx, np, 0, &t, buf);
}

glow_status load_dropout(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value v;
    GLOW_TRY(onnx_input(cx, np, 0, &v));
    if (opset >= 12 && onnx_has_input(np, 2)) {
        const glow_tensor *tm;
        GLOW_TRY(onnx_input_const(cx, np, 2, &tm));
        if (glow_type_numel(&tm->type) != 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "training_mode must be a scalar");
        /* Training mode is deterministic only when nothing is dropped (ratio 0; the ratio's
         * default is 0.5): then, as at inference, Y = X and the mask is all true. */
        double *ratio = NULL;
        int nratio = 0;
        if (glow_load_f64(tm->type.dtype, tm->data, 0) != 0 &&
            (!onnx_has_input(np, 1) || onnx_input_floats(cx, np, 1, &ratio, &nratio) ||
             nratio != 1 || ratio[0] != 0.0)) {
            /* With a seed the mask is the reference's, drawn at import (onnx_dropout.c). */
            bool known = !onnx_has_input(np, 1) || (ratio && nratio == 1);
            if (onnx_attr(np, "seed") && known)
                return onnx_dropout_seeded(cx, np, v, ratio ? ratio[0] : 0.5, opset);
            return onnx_unsupported(cx, np, "training_mode=true with a ratio other than 0 "
                                    "and no seed drops at random; give a seed, ratio 0 or "
                                    "training_mode=false");
        }
    }
    /* Inference: the output is the input, and nothing is dropped. */
    GLOW_TRY(onnx_set_output(cx, np, 0, v));
    if (onnx_has_output(np, 1)) {
        const glow_type *vt = glow_value_type(v);
        glow_type t = glow_type_make(opset >= 10 ? GLOW_BOOL : vt->dtype, vt->rank, vt->dims);
        GLOW_TRY(bind_filled(cx, np, 1, &t, 1.0));
    }
    return GLOW_OK;
}

/* --- computed constants, shared by the loaders that build them --- */

glow_status onnx_const_buffer(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t count,
                              size_t size, void **out)
{
    if (count < 0 || count > (int64_t)(ONNX_FOLD_MAX_BYTES / size))
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "computed constant of %lld values is too "
                         "large", (long long)count);
    *out = glow_arena_try_alloc(&cx->scratch, (size_t)(count ? count : 1) * size);
    if (!*out)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "out of memory for a computed constant");
    memset(*out, 0, (size_t)(count ? count : 1) * size);
    return GLOW_OK;
}

glow_value onnx_f64_constant(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                             glow_dtype t, int rank, const int64_t *dims, const double *vals,
                             void *buf)
{
    glow_type ty = glow_type_make(t, rank, dims);
    int64_t n = glow_type_numel(&ty);
    for (int64_t i = 0; i < n; i++)
        glow_store_f64(t, buf, (size_t)i, vals[i]);
    return onnx_constant(cx, onnx_sub_name(cx, np, what), &ty, buf);
}
