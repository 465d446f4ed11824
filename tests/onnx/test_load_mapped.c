// test_load_mapped.c - Loading a model from its file maps it and leaves large raw_data in the
// mapping (src/onnx/onnx_map.c): the constants must be the same as when the same bytes are
// loaded from memory, aligned payloads must be borrowed (not copied), typed fields, small
// tensors and external data keep their old paths, and damaged or cut files must be refused
// with the very status and message the in-memory loader gives for the same bytes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "onnx/onnx.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

/* W is 128 x 256 floats: 128 KiB, past ONNX_MAP_MIN_BYTES (64 KiB), so it is cut out. */
#define ROWS 128
#define COLS 256

static char path[64];

static float value(int i)
{
    return (float)((i * 37) % 101) * 0.25f - 12.0f;
}

/* x f32[1, ROWS] -> MatMul W (raw, named `wname`) -> y; V (float_data, 20000 values) and
 * a small raw S go straight to outputs v and s. `external` marks W as external data. */
static mk_model *build(const char *wname, bool external)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(1, ROWS));
    float *w = mk_alloc(mk, sizeof(float) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++)
        w[i] = value(i);
    Onnx__TensorProto *wt = mk_tensor_raw(mk, wname, MK_F32, 2, D(ROWS, COLS), w,
                                          sizeof(float) * ROWS * COLS);
    if (external) {
        wt->has_data_location = true;
        wt->data_location = 1;
    }
    mk_initializer(mk, wt);
    Onnx__TensorProto *vt = mk_tensor_typed(mk, "V", MK_F32, 1, D(20000));
    vt->n_float_data = 20000;
    vt->float_data = mk_alloc(mk, sizeof(float) * 20000);
    for (int i = 0; i < 20000; i++)
        vt->float_data[i] = value(i + 7);
    mk_initializer(mk, vt);
    float small[4] = { 1, 2, 3, 4 };
    mk_initializer(mk, mk_tensor_raw(mk, "S", MK_F32, 1, D(4), small, sizeof small));
    mk_node(mk, "MatMul", "mm", 2, S("x", wname), 1, S("y"));
    mk_node(mk, "Identity", "iv", 1, S("V"), 1, S("v"));
    mk_node(mk, "Identity", "is", 1, S("S"), 1, S("s"));
    mk_output(mk, "y", MK_F32, 2, D(1, COLS));
    mk_output(mk, "v", MK_F32, 1, D(20000));
    mk_output(mk, "s", MK_F32, 1, D(4));
    return mk;
}

static bool write_bytes(const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = false;
    return ok;
}

static glow_node *find_constant(glow_module *m, const char *name)
{
    for (glow_node *c = m->constants.first; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* Every constant of `from_file` has a twin of the same name, type and bytes in `from_bytes`. */
static void check_same_constants(glow_module *from_file, glow_module *from_bytes)
{
    int n = 0;
    for (glow_node *c = from_file->constants.first; c; c = c->next, n++) {
        glow_node *t = find_constant(from_bytes, c->name);
        CHECK(t != NULL);
        if (!t)
            continue;
        size_t bytes = glow_type_bytes(&c->outs[0]);
        CHECK_EQ(bytes, glow_type_bytes(&t->outs[0]));
        CHECK(c->payload.data && t->payload.data &&
              memcmp(c->payload.data, t->payload.data, bytes) == 0);
    }
    CHECK_EQ(n, (int)from_bytes->constants.count);
}

/* Loads the model from its file and from its bytes; W's payload is borrowed from the mapping
 * exactly when it is aligned for its floats. Returns 1 when borrowed, 0 when copied. */
static int check_loads(const char *wname, int pad)
{
    mk_model *mk = build(wname, false);
    mk->graph.name = mk_str(mk, "graph" + 5 - pad);   /* 0 to 4 characters before W's bytes */
    size_t n;
    uint8_t *bytes = mk_pack(mk, &n);
    CHECK(write_bytes(bytes, n));
    glow_diag d = { 0 }, d2 = { 0 };
    glow_module *a = glow_module_create(), *b = glow_module_create();
    CHECK_EQ(glow_onnx_load(a, path, NULL, &d), GLOW_OK);
    CHECK_EQ(glow_onnx_load_bytes(b, bytes, n, NULL, &d2), GLOW_OK);
    check_same_constants(a, b);
    int borrowed = -1;
    glow_node *w = find_constant(a, wname), *v = find_constant(a, "V"), *s = find_constant(a, "S");
    CHECK(w && v && s);
    if (w && v && s) {
        /* Where W's floats sit in the file (the mapping starts on a page). */
        size_t off = 0, len = sizeof(float) * ROWS * COLS;
        while (off + len <= n && memcmp(bytes + off, w->payload.data, len) != 0)
            off++;
        CHECK(off + len <= n);
        bool aligned = off % sizeof(float) == 0;
        borrowed = glow_arena_borrowed_from(&a->arena, w->payload.data) != NULL;
        CHECK_EQ(borrowed, aligned);
        CHECK(((const float *)w->payload.data)[ROWS * COLS - 1] == value(ROWS * COLS - 1));
        /* Typed fields and small raw_data are copied into the module as before. */
        CHECK(glow_arena_borrowed_from(&a->arena, v->payload.data) == NULL);
        CHECK(glow_arena_borrowed_from(&a->arena, s->payload.data) == NULL);
        /* A borrowed payload is freed like an owned one (DCE, the compile's releases). */
        void *ptr = w->payload.data;
        CHECK_EQ(glow_arena_free_alone(&a->arena, &ptr, 1), (size_t)1);
        CHECK(ptr == NULL);
        w->payload.data = NULL;
    }
    glow_module_destroy(a);
    glow_module_destroy(b);
    free(bytes);
    mk_free(mk);
    return borrowed;
}

/* Status and message of loading data[0 .. n) from a file and from memory must agree. */
static void check_same_failure(const uint8_t *data, size_t n, const char *what, size_t where,
                               bool *any_failed)
{
    if (!write_bytes(data, n)) {
        CHECK(false);
        return;
    }
    glow_diag d1 = { 0 }, d2 = { 0 };
    glow_module *a = glow_module_create(), *b = glow_module_create();
    glow_status s1 = glow_onnx_load(a, path, NULL, &d1);
    glow_status s2 = glow_onnx_load_bytes(b, data, n, NULL, &d2);
    if (s1 != s2 || (s1 != GLOW_OK && strcmp(d1.msg, d2.msg) != 0))
        fprintf(stderr, "  %s at %zu: file %d '%s', bytes %d '%s'\n", what, where, (int)s1,
                d1.msg, (int)s2, d2.msg);
    CHECK_EQ(s1, s2);
    if (s1 != GLOW_OK) {
        CHECK_STR_EQ(d1.msg, d2.msg);
        *any_failed = true;
    } else {
        check_same_constants(a, b);
    }
    glow_module_destroy(a);
    glow_module_destroy(b);
}

static void check_damaged(void)
{
    mk_model *mk = build("W", false);
    size_t n;
    uint8_t *bytes = mk_pack(mk, &n);
    bool failed = false;
    /* Cut inside the header, the graph, W's raw_data, V's float_data and the last byte. */
    size_t cuts[] = { 3, 40, n / 4, n / 2, (3 * n) / 4, n - 60, n - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        check_same_failure(bytes, cuts[i], "cut", cuts[i], &failed);
    CHECK(failed);
    /* Flipped bytes, spread over the file (fixed positions: the test repeats exactly). */
    uint8_t *copy = malloc(n);
    for (size_t k = 0; k < 64; k++) {
        size_t at = k < 32 ? k * 3 : (k * 2654435761u) % n;
        memcpy(copy, bytes, n);
        copy[at] ^= 0xa5;
        check_same_failure(copy, n, "flip", at, &failed);
    }
    free(copy);
    free(bytes);
    mk_free(mk);
}

static void check_external(void)
{
    /* W's raw_data is cut out and put back, and still the tensor says its data is external:
     * refused with the message the loader always gave. */
    mk_model *mk = build("W", true);
    CHECK(mk_write(mk, path));
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    CHECK_EQ(glow_onnx_load(m, path, NULL, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "tensor 'W' keeps its data in an external file, which glowc does "
                          "not support");
    glow_module_destroy(m);
    mk_free(mk);
}

static void check_tiny(void)
{
    /* Nothing large enough to cut: the mapped file is unpacked as it is. */
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(4));
    float k[4] = { 1, -2, 3, -4 };
    mk_initializer(mk, mk_tensor_raw(mk, "k", MK_F32, 1, D(4), k, sizeof k));
    mk_node(mk, "Add", "add", 2, S("x", "k"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 1, D(4));
    CHECK(mk_write(mk, path));
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    CHECK_EQ(glow_onnx_load(m, path, NULL, &d), GLOW_OK);
    glow_node *c = find_constant(m, "k");
    CHECK(c && memcmp(c->payload.data, k, sizeof k) == 0);
    CHECK(c && glow_arena_borrowed_from(&m->arena, c->payload.data) == NULL);
    glow_module_destroy(m);
    mk_free(mk);
    /* An empty file is not mapped; it is read and refused as before. */
    CHECK(write_bytes((const uint8_t *)"", 0));
    m = glow_module_create();
    glow_diag d2 = { 0 };
    CHECK(glow_onnx_load(m, path, NULL, &d2) != GLOW_OK);
    glow_module_destroy(m);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/glowc_mapped_%d.onnx", (int)getpid());
    /* The graph's name moves W's raw_data in the file a byte at a time: over four lengths
     * its payload lands on a float boundary (borrowed) and off it (copied). */
    int borrowed = 0, copied = 0;
    const char *names[] = { "W", "Wa", "Wab", "Wabc" };
    for (int i = 0; i < 4; i++) {
        int b = check_loads(names[i], i);
        borrowed += b == 1;
        copied += b == 0;
    }
    CHECK(borrowed >= 1);
    CHECK(copied >= 1);
    check_damaged();
    check_external();
    check_tiny();
    unlink(path);
    return CHECK_DONE();
}
