// onnx_tensor.c - Converts between ONNX TensorProto / ValueInfoProto and glowc tensors and types.
//
// Every size here comes from an untrusted file, so the element count and byte size are computed
// with checked arithmetic and compared with the data actually present before anything is
// allocated: a tensor can only be as large as the bytes that describe it.
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_data is little-endian; glowc assumes a little-endian host"
#endif

/* ONNX TensorProto.DataType codes we name in messages. */
enum { ONNX_STRING = 8, ONNX_COMPLEX64 = 14, ONNX_COMPLEX128 = 15 };

static const char *onnx_type_code_name(int code)
{
    switch (code) {
    case 0: return "undefined";
    case ONNX_STRING: return "string";
    case ONNX_COMPLEX64: return "complex64";
    case ONNX_COMPLEX128: return "complex128";
    case 17: case 18: case 19: case 20: return "float8";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    default: return "unknown";
    }
}

/* Checks dims and computes the element count; fails on negative dims or overflow. */
static glow_status checked_shape(const int64_t *dims, size_t ndims, glow_dtype dt, int64_t *numel,
                                 size_t *bytes, const char *what, glow_diag *d)
{
    if (ndims > GLOW_MAX_DIMS)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED,
                         "tensor '%s' has rank %zu; glowc supports at most %d dims", what, ndims,
                         GLOW_MAX_DIMS);
    int64_t n = 1;
    for (size_t i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return glow_fail(d, GLOW_ERR_PARSE, "tensor '%s' has negative dim %zu (%lld)", what,
                             i, (long long)dims[i]);
        if (!glow_mul_overflow_i64(n, dims[i], &n))
            return glow_fail(d, GLOW_ERR_TOO_LARGE,
                             "tensor '%s' declares more elements than can be addressed "
                             "(dim %zu is %lld)", what, i, (long long)dims[i]);
    }
    int64_t b;
    /* 1 TiB: far beyond any real tensor, and small enough that sums of sizes cannot overflow. */
    if (!glow_mul_overflow_i64(n, (int64_t)glow_dtype_size(dt), &b) || b > ((int64_t)1 << 40))
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor '%s' of %lld elements is too large", what,
                         (long long)n);
    *numel = n;
    *bytes = (size_t)b;
    return GLOW_OK;
}

/* Number of typed-field values and a pointer to them for dtype dt, or -1 for no field. */
static size_t typed_count(const Onnx__TensorProto *tp, glow_dtype dt)
{
    switch (dt) {
    case GLOW_F32: return tp->n_float_data;
    case GLOW_F64: return tp->n_double_data;
    case GLOW_I64: return tp->n_int64_data;
    case GLOW_U32: case GLOW_U64: return tp->n_uint64_data;
    default: return tp->n_int32_data;   /* f16, bf16 (bits), i8..i32, u8, u16, bool */
    }
}

static const char *typed_field_name(glow_dtype dt)
{
    switch (dt) {
    case GLOW_F32: return "float_data";
    case GLOW_F64: return "double_data";
    case GLOW_I64: return "int64_data";
    case GLOW_U32: case GLOW_U64: return "uint64_data";
    default: return "int32_data";
    }
}

/* Stores the typed field values into dst (numel elements of dt). */
static void copy_typed(const Onnx__TensorProto *tp, glow_dtype dt, void *dst, size_t numel)
{
    if (numel == 0)
        return;   /* the field's pointer is NULL then, which memcpy must not see */
    switch (dt) {
    case GLOW_F32: memcpy(dst, tp->float_data, numel * 4); return;
    case GLOW_F64: memcpy(dst, tp->double_data, numel * 8); return;
    case GLOW_I64: memcpy(dst, tp->int64_data, numel * 8); return;
    case GLOW_U64: memcpy(dst, tp->uint64_data, numel * 8); return;
    case GLOW_U32:
        for (size_t i = 0; i < numel; i++)
            ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
        return;
    case GLOW_F16: case GLOW_BF16: case GLOW_U16:
        for (size_t i = 0; i < numel; i++)
            ((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
        return;
    case GLOW_I16:
        for (size_t i = 0; i < numel; i++)
            ((int16_t *)dst)[i] = (int16_t)tp->int32_data[i];
        return;
    case GLOW_I8:
        for (size_t i = 0; i < numel; i++)
            ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
        return;
    case GLOW_U8:
        for (size_t i = 0; i < numel; i++)
            ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
        return;
    case GLOW_BOOL:
        for (size_t i = 0; i < numel; i++)
            ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
        return;
    case GLOW_I32: memcpy(dst, tp->int32_data, numel * 4); return;
    default: GLOW_UNREACHABLE();
    }
}

glow_status onnx_tensor_from_proto(const Onnx__TensorProto *tp, glow_arena *a, glow_tensor *t,
                                   const char *what, glow_diag *d)
{
    if (!what || !*what)
        what = tp->name && *tp->name ? tp->name : "(unnamed)";
    int code = tp->has_data_type ? tp->data_type : 0;
    glow_dtype dt;
    if (code == ONNX_STRING || !glow_dtype_from_onnx(code, &dt))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED,
                         "tensor '%s' has element type %s (ONNX code %d), which glowc does not "
                         "support", what, onnx_type_code_name(code), code);
    if ((tp->has_data_location && tp->data_location == 1) || tp->n_external_data > 0)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED,
                         "tensor '%s' keeps its data in an external file, which glowc does not "
                         "support", what);
    if (tp->segment)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "tensor '%s' is a segment of a larger tensor, "
                         "which glowc does not support", what);

    int64_t numel;
    size_t bytes;
    GLOW_TRY(checked_shape(tp->dims, tp->n_dims, dt, &numel, &bytes, what, d));

    if (tp->has_raw_data) {
        if (tp->raw_data.len != bytes)
            return glow_fail(d, GLOW_ERR_PARSE,
                             "tensor '%s' has %zu bytes of raw_data; %s[%lld elements] needs %zu",
                             what, tp->raw_data.len, glow_dtype_name(dt), (long long)numel, bytes);
    } else {
        size_t have = typed_count(tp, dt);
        if (have != (size_t)numel)
            return glow_fail(d, GLOW_ERR_PARSE, "tensor '%s' has %zu values in %s; its shape "
                             "needs %lld", what, have, typed_field_name(dt), (long long)numel);
    }

    /* The data is present in the file, so this allocation is bounded by the file size. */
    void *data = glow_arena_try_alloc(a, bytes ? bytes : 1);
    if (!data)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor '%s' (%zu bytes) does not fit in memory",
                         what, bytes);
    if (tp->has_raw_data && bytes)
        memcpy(data, tp->raw_data.data, bytes);
    else
        copy_typed(tp, dt, data, (size_t)numel);
    if (dt == GLOW_BOOL) {
        /* Normalize so that later bitwise comparisons and the kernels see 0 or 1 only. */
        for (size_t i = 0; i < bytes; i++)
            ((uint8_t *)data)[i] = ((uint8_t *)data)[i] != 0;
    }
    glow_type ty = glow_type_make(dt, (int)tp->n_dims, tp->dims);
    *t = glow_tensor_borrow(&ty, data);
    return GLOW_OK;
}

void onnx_tensor_to_proto(const glow_tensor *t, const char *name, Onnx__TensorProto *tp,
                          int64_t *dims_storage)
{
    onnx__tensor_proto__init(tp);
    for (int i = 0; i < t->type.rank; i++)
        dims_storage[i] = t->type.dims[i];
    tp->n_dims = t->type.rank;
    tp->dims = dims_storage;
    tp->has_data_type = true;
    tp->data_type = glow_dtype_to_onnx(t->type.dtype);
    tp->name = (char *)(name ? name : "");
    tp->has_raw_data = true;
    tp->raw_data.len = glow_tensor_bytes(t);
    tp->raw_data.data = (uint8_t *)t->data;
}

/* Looks `sym` up in the "NAME=VALUE" defines; returns -1 when absent, -2 when malformed. */
static int64_t lookup_define(const glow_onnx_options *opt, const char *sym)
{
    if (!opt)
        return -1;
    size_t len = strlen(sym);
    for (int i = 0; i < opt->ndefines; i++) {
        const char *def = opt->defines[i];
        if (!def || strncmp(def, sym, len) != 0 || def[len] != '=')
            continue;
        const char *v = def + len + 1;
        char *end;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 0)
            return -2;
        return x;
    }
    return -1;
}

glow_status onnx_value_info_type(const Onnx__ValueInfoProto *vi, const glow_onnx_options *opt,
                                 glow_type *t, glow_diag *d)
{
    const char *name = vi->name ? vi->name : "";
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
        return glow_fail(d, GLOW_ERR_PARSE, "input '%s' has no type", name);
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' is a sequence; glowc supports "
                         "tensor inputs only", name);
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' is a map; glowc supports tensor "
                         "inputs only", name);
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' is an optional; glowc supports "
                         "tensor inputs only", name);
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' is a sparse tensor; glowc "
                         "supports dense tensor inputs only", name);
    default:
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' has an unknown kind of type (%d)",
                         name, (int)tp->value_case);
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int code = tt && tt->has_elem_type ? tt->elem_type : 0;
    glow_dtype dt;
    if (code == ONNX_STRING || !glow_dtype_from_onnx(code, &dt))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' has element type %s (ONNX code "
                         "%d), which glowc does not support", name, onnx_type_code_name(code),
                         code);
    if (!tt->shape)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "input '%s' has no shape (unknown rank); glowc "
                         "needs static shapes", name);
    if (tt->shape->n_dim > GLOW_MAX_DIMS)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' has rank %zu; glowc supports at "
                         "most %d dims", name, tt->shape->n_dim, GLOW_MAX_DIMS);
    int64_t dims[GLOW_MAX_DIMS];
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[i];
        if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (dim->dim_value < 0)
                return glow_fail(d, GLOW_ERR_PARSE, "input '%s' has negative dim %zu (%lld)",
                                 name, i, (long long)dim->dim_value);
            dims[i] = dim->dim_value;
        } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   dim->dim_param && *dim->dim_param) {
            int64_t v = lookup_define(opt, dim->dim_param);
            if (v == -2)
                return glow_fail(d, GLOW_ERR_USAGE, "the value given for symbol '%s' (input "
                                 "'%s') is not a non-negative integer", dim->dim_param, name);
            if (v < 0)
                return glow_fail(d, GLOW_ERR_BAD_SHAPE,
                                 "input '%s' has symbolic dim %zu '%s'; give it a value with "
                                 "--define %s=VALUE", name, i, dim->dim_param, dim->dim_param);
            dims[i] = v;
        } else {
            return glow_fail(d, GLOW_ERR_BAD_SHAPE, "input '%s' has unknown dim %zu (no value "
                             "and no name); glowc needs static shapes", name, i);
        }
    }
    int64_t numel;
    size_t bytes;
    GLOW_TRY(checked_shape(dims, tt->shape->n_dim, dt, &numel, &bytes, name, d));
    *t = glow_type_make(dt, (int)tt->shape->n_dim, dims);
    return GLOW_OK;
}
