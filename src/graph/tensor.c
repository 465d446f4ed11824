// tensor.c - Typed buffers: checked allocation, borrowing, comparison and printing.
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

glow_status glow_tensor_alloc(glow_tensor *t, const glow_type *ty, glow_diag *d)
{
    char buf[128];
    memset(t, 0, sizeof(*t));
    t->type = *ty;
    int64_t n = glow_type_numel(ty), bytes;
    if (n < 0 || !glow_mul_overflow_i64(n, (int64_t)glow_dtype_size(ty->dtype), &bytes))
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor %s: size overflows",
                         glow_type_str(ty, buf, sizeof(buf)));
    /* Past 2^46 bytes no allocator on our targets will succeed; saying so is kinder than
     * letting malloc overcommit. */
    if ((uint64_t)bytes > ((uint64_t)1 << 46))
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor %s: %lld bytes is too large",
                         glow_type_str(ty, buf, sizeof(buf)), (long long)bytes);
    void *p = calloc(1, bytes ? (size_t)bytes : 1);
    if (!p)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor %s: cannot allocate %lld bytes",
                         glow_type_str(ty, buf, sizeof(buf)), (long long)bytes);
    t->data = p;
    t->owned = true;
    return GLOW_OK;
}

glow_tensor glow_tensor_borrow(const glow_type *ty, void *data)
{
    glow_tensor t;
    t.type = *ty;
    t.data = data;
    t.owned = false;
    return t;
}

void glow_tensor_free(glow_tensor *t)
{
    if (t->owned)
        free(t->data);
    t->data = NULL;
    t->owned = false;
}

size_t glow_tensor_bytes(const glow_tensor *t) { return glow_type_bytes(&t->type); }

bool glow_tensor_equal(const glow_tensor *a, const glow_tensor *b)
{
    if (!glow_type_equal(&a->type, &b->type))
        return false;
    size_t n = glow_tensor_bytes(a);
    if (n == SIZE_MAX)
        return false;
    if (n == 0)
        return true;
    if (!a->data || !b->data)
        return a->data == b->data;
    if (a->type.dtype == GLOW_STRING) {
        /* Strings compare by their bytes, not by where the handles point. */
        for (size_t i = 0; i < n / sizeof(glow_str); i++)
            if (strcmp(glow_str_at(a->data, i), glow_str_at(b->data, i)) != 0)
                return false;
        return true;
    }
    return memcmp(a->data, b->data, n) == 0;
}

/* Prints one element: integers exactly, floats in the shortest form that reads back. */
static void print_elem(FILE *f, glow_dtype t, const void *data, size_t i)
{
    switch (glow_dtype_class_of(t)) {
    case DC_STRING:
        fprintf(f, "\"%s\"", glow_str_at(data, i));
        return;
    case DC_BOOL:
        fputs(glow_load_i64(t, data, i) ? "true" : "false", f);
        return;
    case DC_UINT:
        if (t == GLOW_U64) {
            fprintf(f, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
            return;
        }
        /* fallthrough */
    case DC_SINT:
    case DC_QUANT:
        fprintf(f, "%lld", (long long)glow_load_i64(t, data, i));
        return;
    case DC_FLOAT:
        break;
    }
    double v = glow_load_f64(t, data, i);
    if (v != v) {
        fputs("nan", f);
        return;
    }
    /* The shortest digits that read back as the same value in the element's own kind, so an
     * f16 0.1 prints as 0.1; f64 needs up to 17 digits, everything else fits in 9. */
    int maxprec = t == GLOW_F64 ? 17 : 9;
    char num[40];
    for (int prec = 1; prec <= maxprec; prec++) {
        snprintf(num, sizeof(num), "%.*g", prec, v);
        double back = strtod(num, NULL);
        bool same;
        if (t == GLOW_F16)
            same = glow_f32_to_f16((float)back) == glow_f32_to_f16((float)v);
        else if (t == GLOW_BF16)
            same = glow_f32_to_bf16((float)back) == glow_f32_to_bf16((float)v);
        else if (t == GLOW_F32)
            same = (float)back == (float)v;
        else
            same = back == v;
        if (same)
            break;
    }
    fputs(num, f);
}

void glow_tensor_print(FILE *f, const glow_tensor *t, size_t limit)
{
    int64_t n = glow_type_numel(&t->type);
    if (n < 0 || !t->data) {
        fputs("[?]", f);
        return;
    }
    fputc('[', f);
    size_t shown = (uint64_t)n < limit ? (size_t)n : limit;
    for (size_t i = 0; i < shown; i++) {
        if (i)
            fputs(", ", f);
        print_elem(f, t->type.dtype, t->data, i);
    }
    if ((uint64_t)n > shown)
        fputs(shown ? ", ..." : "...", f);
    fputc(']', f);
}
