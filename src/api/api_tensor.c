// api_tensor.c - Library-owned tensors of the public API: the accessors of a run's outputs,
// and reading a tensor file (.pb TensorProto or .npy) into one, so a program that embeds
// glowc can feed it the files `glowc run` takes without a parser of its own.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "onnx/onnx.h"

glowc_tensor *api_tensor_new(const char *name, glowc_dtype dtype, int rank,
                             const int64_t *shape, size_t bytes)
{
    glowc_tensor *t = calloc(1, sizeof *t);
    /* At least one aligned line: a zero-sized tensor still has a valid data pointer. */
    size_t cap = (bytes + 63) / 64 * 64;
    if (t)
        t->data = aligned_alloc(64, cap ? cap : 64);
    if (!t || !t->data) {
        free(t);
        return NULL;
    }
    t->name = name;
    t->dtype = dtype;
    t->rank = rank;
    for (int d = 0; d < rank; d++)
        t->shape[d] = shape[d];
    t->bytes = bytes;
    return t;
}

GLOWC_API glowc_status glowc_tensor_read_file(const char *path, glowc_tensor **out)
{
    if (!path || !out)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_tensor_read_file: %s is NULL",
                        path ? "out" : "path");
    *out = NULL;
    glow_diag *d = calloc(1, sizeof *d);
    if (!d)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glow_tensor t = { 0 };
    char *name = NULL;
    glowc_status st = GLOWC_OK;
    if (glow_tensor_read_file(path, &t, &name, d) != GLOW_OK) {
        st = api_fail_diag(d);
    } else {
        glowc_dtype dt = api_dtype_public(t.type.dtype);
        size_t bytes = glow_tensor_bytes(&t);
        glowc_tensor *r = NULL;
        if (dt == GLOWC_DTYPE_UNDEFINED)
            st = api_fail(GLOWC_ERR_UNSUPPORTED, "%s: element type %s has no public type", path,
                          glow_dtype_name(t.type.dtype));
        else if (!(r = api_tensor_new(NULL, dt, t.type.rank, t.type.dims, bytes)))
            st = api_fail(GLOWC_ERR_NO_MEMORY, "%s: cannot allocate %zu bytes", path, bytes);
        if (r) {
            memcpy(r->data, t.data, bytes);
            r->own_name = name;  /* the tensor's name in the file ("" for .npy) */
            r->name = name ? name : "";
            name = NULL;
            *out = r;
        }
    }
    free(name);
    glow_tensor_free(&t);
    free(d);
    return st;
}

GLOWC_API void glowc_tensor_destroy(glowc_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    free(t->own_name);
    free(t);
}

GLOWC_API const char *glowc_tensor_name(const glowc_tensor *t) { return t ? t->name : NULL; }

GLOWC_API glowc_dtype glowc_tensor_dtype(const glowc_tensor *t)
{
    return t ? t->dtype : GLOWC_DTYPE_UNDEFINED;
}

GLOWC_API int glowc_tensor_rank(const glowc_tensor *t) { return t ? t->rank : 0; }

GLOWC_API const int64_t *glowc_tensor_shape(const glowc_tensor *t)
{
    return t ? t->shape : NULL;
}

GLOWC_API const void *glowc_tensor_data(const glowc_tensor *t) { return t ? t->data : NULL; }

GLOWC_API size_t glowc_tensor_size_bytes(const glowc_tensor *t) { return t ? t->bytes : 0; }

GLOWC_API glowc_value glowc_tensor_value(const glowc_tensor *t)
{
    if (!t)
        return (glowc_value){ 0 };
    return (glowc_value){ .name = NULL, .dtype = t->dtype, .rank = t->rank, .shape = t->shape,
                          .data = t->data, .size_bytes = t->bytes };
}
