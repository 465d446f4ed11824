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

/* Bytes a file holds for numel elements of dt: the 4- and 2-bit kinds are packed, the first
 * element in the lowest bits of a byte (numel is at most 2^40, so this cannot overflow). */
static size_t file_bytes(glow_dtype dt, int64_t numel)
{
    int bits = glow_dtype_file_bits(dt);
    return (size_t)(((uint64_t)numel * (uint64_t)bits + 7) / 8);
}

/* Unpacks n elements of 4- or 2-bit kind dt from packed bytes into one byte each, the signed
 * integers sign-extended (in-memory layout, kernels/gk_lowbit.h). */
static void unpack_lowbit(glow_dtype dt, const uint8_t *src, uint8_t *dst, size_t n)
{
    int bits = glow_dtype_file_bits(dt), per = 8 / bits;
    unsigned mask = (1u << bits) - 1, sign = 1u << (bits - 1);
    bool is_signed = dt == GLOW_I4 || dt == GLOW_I2;
    for (size_t i = 0; i < n; i++) {
        unsigned v = (src[i / (size_t)per] >> (bits * (int)(i % (size_t)per))) & mask;
        if (is_signed && (v & sign))
            v |= ~mask;
        dst[i] = (uint8_t)v;
    }
}

void *onnx_pack_lowbit(const glow_tensor *t, size_t *len)
{
    glow_dtype dt = t->type.dtype;
    int64_t numel = glow_type_numel(&t->type);
    *len = file_bytes(dt, numel);
    if (glow_dtype_file_bits(dt) >= 8)
        return NULL;
    int bits = glow_dtype_file_bits(dt), per = 8 / bits;
    uint8_t *out = glow_xmalloc(*len ? *len : 1);
    memset(out, 0, *len);
    const uint8_t *src = t->data;
    for (size_t i = 0; i < (size_t)numel; i++)
        out[i / (size_t)per] |= (uint8_t)((src[i] & ((1u << bits) - 1))
                                          << (bits * (int)(i % (size_t)per)));
    return out;
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
    default:
        /* The low-bit kinds: one value per byte, 4- and 2-bit ones packed (see below). */
        for (size_t i = 0; i < numel; i++)
            ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
        return;
    }
}

glow_status onnx_tensor_from_proto(const Onnx__TensorProto *tp, glow_arena *a, glow_tensor *t,
                                   const char *what, glow_diag *d)
{
    if (!what || !*what)
        what = tp->name && *tp->name ? tp->name : "(unnamed)";
    int code = tp->has_data_type ? tp->data_type : 0;
    glow_dtype dt;
    if (!glow_dtype_from_onnx(code, &dt))
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
    if (dt == GLOW_STRING)
        return onnx_strings_from_proto(tp, a, t, numel, what, d);

    /* The 4- and 2-bit kinds are packed in raw_data and in int32_data (one byte of packed
     * values per int32) alike. */
    bool packed = glow_dtype_file_bits(dt) < 8;
    size_t fbytes = file_bytes(dt, numel);
    if (tp->has_raw_data) {
        if (tp->raw_data.len != fbytes)
            return glow_fail(d, GLOW_ERR_PARSE,
                             "tensor '%s' has %zu bytes of raw_data; %s[%lld elements] needs %zu",
                             what, tp->raw_data.len, glow_dtype_name(dt), (long long)numel,
                             fbytes);
    } else {
        size_t have = typed_count(tp, dt), want = packed ? fbytes : (size_t)numel;
        if (have != want)
            return glow_fail(d, GLOW_ERR_PARSE, "tensor '%s' has %zu values in %s; its shape "
                             "needs %zu", what, have, typed_field_name(dt), want);
    }

    /* The data is present in the file, so this allocation is bounded by the file size. */
    void *data = glow_arena_try_alloc(a, bytes ? bytes : 1);
    if (!data)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor '%s' (%zu bytes) does not fit in memory",
                         what, bytes);
    if (packed && numel) {
        const uint8_t *src = tp->raw_data.data;
        uint8_t *tmp = NULL;
        if (!tp->has_raw_data) {
            tmp = glow_xmalloc(fbytes);
            copy_typed(tp, dt, tmp, fbytes);
            src = tmp;
        }
        unpack_lowbit(dt, src, data, (size_t)numel);
        free(tmp);
    } else if (tp->has_raw_data && bytes) {
        memcpy(data, tp->raw_data.data, bytes);
    } else {
        copy_typed(tp, dt, data, (size_t)numel);
    }
    if (dt == GLOW_BOOL) {
        /* Normalize so that later bitwise comparisons and the kernels see 0 or 1 only. */
        for (size_t i = 0; i < bytes; i++)
            ((uint8_t *)data)[i] = ((uint8_t *)data)[i] != 0;
    }
    glow_type ty = glow_type_make(dt, (int)tp->n_dims, tp->dims);
    *t = glow_tensor_borrow(&ty, data);
    return GLOW_OK;
}

bool onnx_tensor_raw_plain(const Onnx__TensorProto *tp, glow_type *ty)
{
    glow_dtype dt;
    if (!tp->has_raw_data || !glow_dtype_from_onnx(tp->has_data_type ? tp->data_type : 0, &dt) ||
        dt == GLOW_STRING || dt == GLOW_BOOL || glow_dtype_file_bits(dt) < 8 ||
        (tp->has_data_location && tp->data_location == 1) || tp->n_external_data > 0 ||
        tp->segment)
        return false;
    int64_t numel;
    size_t bytes;
    glow_diag d = { 0 };
    if (checked_shape(tp->dims, tp->n_dims, dt, &numel, &bytes, "", &d) != GLOW_OK ||
        tp->raw_data.len != bytes || bytes == 0)
        return false;
    *ty = glow_type_make(dt, (int)tp->n_dims, tp->dims);
    return true;
}

void *onnx_tensor_to_proto(const glow_tensor *t, const char *name, Onnx__TensorProto *tp,
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
    if (t->type.dtype == GLOW_STRING)
        return onnx_strings_to_proto(t, tp);
    tp->has_raw_data = true;
    void *packed = onnx_pack_lowbit(t, &tp->raw_data.len);
    tp->raw_data.data = packed ? packed : (uint8_t *)t->data;
    return packed;
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
    if (!glow_dtype_from_onnx(code, &dt))
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
