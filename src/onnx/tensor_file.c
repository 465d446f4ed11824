// tensor_file.c - Reads and writes tensors as ONNX TensorProto (.pb) and NumPy (.npy) files.
//
// .npy headers are a Python dict literal; rather than trusting its layout, a small scanner
// reads it as quoted strings, True/False and integer tuples, and rejects anything else.
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

static const uint8_t npy_magic[6] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

/* Moves a borrowed tensor into fresh owned storage. */
static glow_status own_copy(const glow_tensor *src, glow_tensor *t, glow_diag *d)
{
    glow_tensor out;
    if (src->type.dtype == GLOW_STRING) /* the bytes too, in the tensor's own block */
        return glow_tensor_alloc_strings(t, &src->type, (const char *const *)src->data, d);
    GLOW_TRY(glow_tensor_alloc(&out, &src->type, d));
    size_t bytes = glow_tensor_bytes(src);
    if (bytes)
        memcpy(out.data, src->data, bytes);
    *t = out;
    return GLOW_OK;
}

glow_status glow_tensor_read_pb(const uint8_t *data, size_t size, glow_tensor *t, char **name,
                                glow_diag *d)
{
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
    if (!tp)
        return glow_fail(d, GLOW_ERR_PARSE, "not a valid ONNX TensorProto (%zu bytes)", size);
    /* SequenceProto and OptionalProto share field numbers with TensorProto: their element
     * values (field 3) parse as TensorProto's segment, which real tensor files never use. */
    if (tp->segment) {
        onnx__tensor_proto__free_unpacked(tp, NULL);
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "the file holds a sequence or optional value "
                         "(SequenceProto / OptionalProto) or a tensor segment; glowc reads "
                         "whole tensors only");
    }
    glow_arena scratch = { 0 };
    glow_tensor tmp;
    const char *what = tp->name && *tp->name ? tp->name : "(unnamed)";
    glow_status s = onnx_tensor_from_proto(tp, &scratch, &tmp, what, d);
    if (s == GLOW_OK)
        s = own_copy(&tmp, t, d);
    if (s == GLOW_OK && name) {
        const char *n = tp->name ? tp->name : "";
        *name = glow_xmalloc(strlen(n) + 1);
        strcpy(*name, n);
    }
    glow_arena_release(&scratch);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return s;
}

glow_status glow_tensor_to_pb(const glow_tensor *t, const char *name, uint8_t **data,
                              size_t *size, glow_diag *d)
{
    if (glow_dtype_to_onnx(t->type.dtype) == 0)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "tensor '%s' of type %s has no ONNX "
                         "equivalent", name ? name : "", glow_dtype_name(t->type.dtype));
    Onnx__TensorProto tp;
    int64_t dims[GLOW_MAX_DIMS];
    void *packed = onnx_tensor_to_proto(t, name, &tp, dims);
    size_t n = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = glow_xmalloc(n ? n : 1);
    *size = onnx__tensor_proto__pack(&tp, buf);
    *data = buf;
    free(packed);
    return GLOW_OK;
}

glow_status glow_tensor_write_pb(const char *path, const glow_tensor *t, const char *name,
                                 glow_diag *d)
{
    uint8_t *buf;
    size_t n;
    GLOW_TRY(glow_tensor_to_pb(t, name, &buf, &n, d));
    glow_status s = glow_write_file(path, buf, n, d);
    free(buf);
    return s;
}

/* --- .npy --- */

typedef struct npy_scan {
    const char *p, *end;
} npy_scan;

static void skip_ws(npy_scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static bool eat(npy_scan *s, char c)
{
    skip_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return true;
    }
    return false;
}

/* A quoted string ('...' or "..."), without escapes; copied into buf. */
static bool scan_string(npy_scan *s, char *buf, size_t cap)
{
    skip_ws(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
        return false;
    char q = *s->p++;
    size_t n = 0;
    while (s->p < s->end && *s->p != q) {
        if (n + 1 >= cap || *s->p == '\\')
            return false;
        buf[n++] = *s->p++;
    }
    if (s->p >= s->end)
        return false;
    s->p++;
    buf[n] = 0;
    return true;
}

static bool scan_word(npy_scan *s, const char *w)
{
    skip_ws(s);
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return false;
    s->p += n;
    return true;
}

/* "(2, 3)", "(3,)", "()"; NumPy may write "3L" on Python 2. */
static bool scan_shape(npy_scan *s, int *rank, int64_t *dims)
{
    if (!eat(s, '('))
        return false;
    *rank = 0;
    for (;;) {
        if (eat(s, ')'))
            return true;
        skip_ws(s);
        if (s->p >= s->end || *s->p < '0' || *s->p > '9')
            return false;
        int64_t v = 0;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return false;
            v = v * 10 + (*s->p++ - '0');
        }
        if (s->p < s->end && *s->p == 'L')
            s->p++;
        if (*rank >= GLOW_MAX_DIMS)
            return false;
        dims[(*rank)++] = v;
        if (!eat(s, ',')) {
            return eat(s, ')');
        }
    }
}

/* NumPy type strings and their glowc kinds; byte order '<', '|' or '=' (little-endian host). */
static const struct {
    const char *code;
    glow_dtype dt;
} npy_types[] = {
    { "f4", GLOW_F32 }, { "f2", GLOW_F16 }, { "f8", GLOW_F64 }, { "i1", GLOW_I8 },
    { "u1", GLOW_U8 },  { "i2", GLOW_I16 }, { "u2", GLOW_U16 }, { "i4", GLOW_I32 },
    { "u4", GLOW_U32 }, { "i8", GLOW_I64 }, { "u8", GLOW_U64 }, { "b1", GLOW_BOOL },
};

static bool npy_descr_dtype(const char *descr, glow_dtype *dt)
{
    if (strlen(descr) != 3)
        return false;
    for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++) {
        if (strcmp(descr + 1, npy_types[i].code) != 0)
            continue;
        bool one_byte = glow_dtype_size(npy_types[i].dt) == 1;
        char order = descr[0];
        if (order == '<' || order == '|' || order == '=' || (one_byte && order == '>')) {
            *dt = npy_types[i].dt;
            return true;
        }
    }
    return false;
}

glow_status glow_tensor_read_npy(const uint8_t *data, size_t size, glow_tensor *t, glow_diag *d)
{
    if (size < 10 || memcmp(data, npy_magic, 6) != 0)
        return glow_fail(d, GLOW_ERR_PARSE, "not a NumPy .npy file");
    int major = data[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)data[8] | (size_t)data[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return glow_fail(d, GLOW_ERR_PARSE, "truncated .npy header");
        hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
               (size_t)data[11] << 24;
        hstart = 12;
    } else {
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, ".npy format version %d is not supported",
                         major);
    }
    if (hlen > size - hstart)
        return glow_fail(d, GLOW_ERR_PARSE, ".npy header length %zu exceeds the file (%zu bytes)",
                         hlen, size);

    npy_scan s = { (const char *)data + hstart, (const char *)data + hstart + hlen };
    char key[32], descr[32] = "";
    int rank = -1, fortran = -1;
    int64_t dims[GLOW_MAX_DIMS];
    if (!eat(&s, '{'))
        return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: no dict");
    while (!eat(&s, '}')) {
        if (!scan_string(&s, key, sizeof(key)) || !eat(&s, ':'))
            return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: expected a key");
        if (strcmp(key, "descr") == 0) {
            if (!scan_string(&s, descr, sizeof(descr)))
                return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: bad 'descr' "
                                 "(structured dtypes are not supported)");
        } else if (strcmp(key, "fortran_order") == 0) {
            if (scan_word(&s, "False"))
                fortran = 0;
            else if (scan_word(&s, "True"))
                fortran = 1;
            else
                return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: bad fortran_order");
        } else if (strcmp(key, "shape") == 0) {
            if (!scan_shape(&s, &rank, dims))
                return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: bad shape (or "
                                 "more than %d dims)", GLOW_MAX_DIMS);
        } else {
            return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: unknown key '%s'", key);
        }
        if (!eat(&s, ',')) {
            if (!eat(&s, '}'))
                return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: expected ',' or '}'");
            break;
        }
    }
    if (!*descr || rank < 0 || fortran < 0)
        return glow_fail(d, GLOW_ERR_PARSE, "malformed .npy header: missing descr, "
                         "fortran_order or shape");
    if (fortran)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, ".npy data in Fortran order is not supported");
    glow_dtype dt;
    if (!npy_descr_dtype(descr, &dt))
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, ".npy element type '%s' is not supported",
                         descr);

    int64_t numel = 1, bytes;
    for (int i = 0; i < rank; i++)
        if (!glow_mul_overflow_i64(numel, dims[i], &numel))
            return glow_fail(d, GLOW_ERR_TOO_LARGE, ".npy shape is too large");
    if (!glow_mul_overflow_i64(numel, (int64_t)glow_dtype_size(dt), &bytes))
        return glow_fail(d, GLOW_ERR_TOO_LARGE, ".npy shape is too large");
    size_t avail = size - hstart - hlen;
    if ((uint64_t)bytes != avail)
        return glow_fail(d, GLOW_ERR_PARSE, ".npy data is %zu bytes; %s with %lld elements needs "
                         "%lld", avail, descr, (long long)numel, (long long)bytes);
    glow_type ty = glow_type_make(dt, rank, dims);
    glow_tensor src = glow_tensor_borrow(&ty, (void *)(data + hstart + hlen));
    GLOW_TRY(own_copy(&src, t, d));
    if (dt == GLOW_BOOL)
        for (size_t i = 0; i < (size_t)bytes; i++)
            ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    return GLOW_OK;
}

glow_status glow_tensor_write_npy(const char *path, const glow_tensor *t, glow_diag *d)
{
    const char *code = NULL;
    for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
        if (npy_types[i].dt == t->type.dtype)
            code = npy_types[i].code;
    if (!code)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "NumPy has no element type for %s; write a .pb "
                         "file instead", glow_dtype_name(t->type.dtype));
    char dict[256];
    int n = snprintf(dict, sizeof(dict), "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                     glow_dtype_size(t->type.dtype) == 1 ? '|' : '<', code);
    for (int i = 0; i < t->type.rank; i++)
        n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%lld", i ? ", " : "",
                      (long long)t->type.dims[i]);
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", t->type.rank == 1 ? "," : "");
    /* Magic, version, length, dict, spaces and '\n' together fill a multiple of 64 bytes so
     * that the data is aligned, as NumPy writes it. */
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    size_t hlen = total - 10;
    size_t bytes = glow_tensor_bytes(t);
    uint8_t *buf = glow_xmalloc(total + bytes);
    memcpy(buf, npy_magic, 6);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
    buf[total - 1] = '\n';
    if (bytes)
        memcpy(buf + total, t->data, bytes);
    glow_status s = glow_write_file(path, buf, total + bytes, d);
    free(buf);
    return s;
}

glow_status glow_tensor_read_file(const char *path, glow_tensor *t, char **name, glow_diag *d)
{
    uint8_t *data;
    size_t size;
    GLOW_TRY(glow_read_file(path, &data, &size, d));
    glow_status s;
    glow_diag local = { 0 };
    if (size >= 6 && memcmp(data, npy_magic, 6) == 0) {
        s = glow_tensor_read_npy(data, size, t, &local);
        if (s == GLOW_OK && name) {
            *name = glow_xmalloc(1);
            **name = 0;
        }
    } else {
        s = glow_tensor_read_pb(data, size, t, name, &local);
    }
    free(data);
    if (s != GLOW_OK)
        return glow_fail(d, s, "%s: %s", path, local.msg);
    return GLOW_OK;
}
