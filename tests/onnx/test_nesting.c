// test_nesting.c - Models whose protobuf messages nest deeper than ONNX_MAX_NESTING (If nodes
// each holding the next in its then_branch) are refused with a message by the loader and by
// `glowc info`'s summary, instead of overflowing the stack inside protobuf-c's recursive
// unpacking (3,000 levels crashed glowc); a model nesting a few subgraphs still loads as before.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"

static size_t varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            out[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

/* ModelProto { graph { node { attribute { g { node { attribute { g ... } } } } } } }, `levels`
 * Graph > Node > Attribute triples, with nothing else in them. Built from the inside out. */
static uint8_t *nested(int levels, size_t *size)
{
    size_t cap = (size_t)levels * 3 * 12 + 16, len = 0;
    uint8_t *rev = malloc(cap);   /* the prefixes, innermost first */
    size_t *at = malloc(((size_t)levels * 3 + 1) * sizeof *at);
    static const int fields[3] = { 6, 5, 1 };   /* AttributeProto.g, NodeProto.attribute,
                                                 * GraphProto.node */
    int k = 0;
    for (int l = 0; l < levels; l++) {
        for (int j = 0; j < 3; j++, k++) {
            uint8_t pre[24];
            size_t n = varint(pre, (uint64_t)fields[j] << 3 | 2);
            n += varint(pre + n, len);
            at[k] = len;
            memcpy(rev + len, pre, n);
            len += n;
        }
    }
    uint8_t pre[24];
    size_t n = varint(pre, 7 << 3 | 2);   /* ModelProto.graph */
    n += varint(pre + n, len);
    uint8_t *out = malloc(len + n);
    memcpy(out, pre, n);
    size_t o = n;
    /* Outermost prefix first: prefix k spans [at[k], at[k + 1]) in rev. */
    for (int j = k - 1; j >= 0; j--) {
        size_t end = j + 1 < k ? at[j + 1] : len;
        memcpy(out + o, rev + at[j], end - at[j]);
        o += end - at[j];
    }
    free(rev);
    free(at);
    *size = o;
    return out;
}

static void check_depth(int levels, bool refused)
{
    size_t size = 0;
    uint8_t *bytes = nested(levels, &size);
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    glow_status s = glow_onnx_load_bytes(m, bytes, size, NULL, &d);
    CHECK(s != GLOW_OK);   /* no If here has an else_branch: refused either way */
    if (refused)
        CHECK_CONTAINS(d.msg, "nest more than 100 deep");
    else
        CHECK(!strstr(d.msg, "nest more than"));
    printf("%d levels (%zu bytes): %s\n", levels, size, d.msg);
    glow_module_destroy(m);

    char path[] = "/tmp/glowc_test_nesting.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    CHECK(f && fwrite(bytes, 1, size, f) == size);
    fclose(f);
    glow_arena a = { 0 };
    glow_onnx_summary sum;
    glow_diag_clear(&d);
    s = glow_onnx_summarize(path, &a, &sum, &d);
    CHECK_EQ(s != GLOW_OK, refused);
    glow_arena_release(&a);
    remove(path);
    free(bytes);
}

int main(void)
{
    check_depth(10, false);      /* 31 levels of messages: parsed, then refused for the If */
    check_depth(33, false);      /* 100 */
    check_depth(34, true);       /* 103 */
    check_depth(3000, true);     /* overflowed the stack in protobuf-c */
    check_depth(100000, true);   /* 2.4 MB */
    return CHECK_DONE();
}
