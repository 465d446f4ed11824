// string.c - String elements (GLOW_STRING): owned string tensors and reading a string as a
// number. The handle itself and who owns the bytes are described in graph.h.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

glow_status glow_tensor_alloc_strings(glow_tensor *t, const glow_type *ty,
                                      const char *const *strs, glow_diag *d)
{
    char buf[128];
    memset(t, 0, sizeof(*t));
    int64_t n = glow_type_numel(ty);
    if (ty->dtype != GLOW_STRING || n < 0 || (uint64_t)n > ((uint64_t)1 << 40))
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "string tensor %s: bad type or size",
                         glow_type_str(ty, buf, sizeof(buf)));
    /* One block: the handles first (aligned as the block is), then every string's bytes. */
    size_t head = (size_t)n * sizeof(glow_str), total = head;
    for (int64_t i = 0; i < n; i++) {
        size_t len = strs[i] ? strlen(strs[i]) + 1 : 0;
        if (total + len < total)
            return glow_fail(d, GLOW_ERR_TOO_LARGE, "string tensor %s: size overflows",
                             glow_type_str(ty, buf, sizeof(buf)));
        total += len;
    }
    char *block = calloc(1, total ? total : 1);
    if (!block)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "string tensor %s: cannot allocate %zu bytes",
                         glow_type_str(ty, buf, sizeof(buf)), total);
    glow_str *h = (glow_str *)(void *)block;
    char *p = block + head;
    for (int64_t i = 0; i < n; i++) {
        if (!strs[i])
            continue;   /* NULL: "" without bytes */
        size_t len = strlen(strs[i]) + 1;
        memcpy(p, strs[i], len);
        h[i] = p;
        p += len;
    }
    t->type = *ty;
    t->data = block;
    t->owned = true;
    return GLOW_OK;
}

double glow_str_to_f64(const char *s)
{
    /* strtod accepts the spellings ONNX names (inf, INF, -INF, NaN, nan) and leading blanks;
     * trailing characters make the whole string not a number, as in a strict parser. */
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return (double)NAN;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    return *end ? (double)NAN : v;
}
