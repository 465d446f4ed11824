// type.c - Tensor types: construction, element counts, comparison, printing and broadcasting.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

glow_type glow_type_make(glow_dtype t, int rank, const int64_t *dims)
{
    glow_type ty;
    memset(&ty, 0, sizeof(ty));   /* unused dims are zero so memcmp-style checks stay sane */
    ty.dtype = t;
    if (rank < 0)
        rank = 0;
    if (rank > GLOW_MAX_DIMS)
        GLOW_UNREACHABLE();   /* callers check model ranks before making types */
    ty.rank = (uint8_t)rank;
    for (int i = 0; i < rank; i++)
        ty.dims[i] = dims[i];
    ty.scale = glow_dtype_is_quantized(t) ? 1.0f : 0.0f;
    return ty;
}

glow_type glow_type_scalar(glow_dtype t) { return glow_type_make(t, 0, NULL); }

/* Element count, or -1 when a dim is negative or the product overflows int64. */
int64_t glow_type_numel(const glow_type *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0 || !glow_mul_overflow_i64(n, t->dims[i], &n))
            return -1;
    }
    return n;
}

/* Byte size, or SIZE_MAX when it cannot be represented (callers must check). */
size_t glow_type_bytes(const glow_type *t)
{
    int64_t n = glow_type_numel(t), bytes;
    if (n < 0 || !glow_mul_overflow_i64(n, (int64_t)glow_dtype_size(t->dtype), &bytes))
        return SIZE_MAX;
    return (size_t)bytes;
}

bool glow_type_same_shape(const glow_type *a, const glow_type *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++) {
        if (a->dims[i] != b->dims[i])
            return false;
    }
    return true;
}

bool glow_type_equal(const glow_type *a, const glow_type *b)
{
    if (a->dtype != b->dtype || !glow_type_same_shape(a, b))
        return false;
    if (glow_dtype_is_quantized(a->dtype))
        return a->scale == b->scale && a->offset == b->offset;
    return true;
}

void glow_type_strides(const glow_type *t, int64_t *strides)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= t->dims[i] > 0 ? t->dims[i] : 1;
    }
}

char *glow_type_str(const glow_type *t, char *buf, size_t size)
{
    if (!size)
        return buf;
    size_t len = 0;
    buf[0] = '\0';
#define PUT(...)                                                         \
    do {                                                                 \
        if (len < size) {                                                \
            int n_ = snprintf(buf + len, size - len, __VA_ARGS__);       \
            len += n_ > 0 ? (size_t)n_ : 0;                              \
        }                                                                \
    } while (0)
    PUT("%s[", glow_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++)
        PUT(i ? ", %lld" : "%lld", (long long)t->dims[i]);
    PUT("]");
    if (glow_dtype_is_quantized(t->dtype)) {
        /* Shortest form that reads back as the same float: 0.1 rather than 0.100000001. */
        char num[32];
        for (int prec = 1; prec <= 9; prec++) {
            snprintf(num, sizeof(num), "%.*g", prec, (double)t->scale);
            if ((float)strtod(num, NULL) == t->scale)
                break;
        }
        PUT(":%s:%d", num, (int)t->offset);
    }
#undef PUT
    return buf;
}

bool glow_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b,
                           int *rout, int64_t *out)
{
    int r = ra > rb ? ra : rb;
    if (r > GLOW_MAX_DIMS || ra < 0 || rb < 0)
        return false;
    int64_t res[GLOW_MAX_DIMS];
    /* Right-aligned: missing leading dims count as 1; a dim of 1 stretches to the other. */
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da == db || db == 1)
            res[i] = da;
        else if (da == 1)
            res[i] = db;
        else
            return false;
    }
    *rout = r;
    for (int i = 0; i < r; i++)
        out[i] = res[i];
    return true;
}
