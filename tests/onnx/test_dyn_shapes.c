// test_dyn_shapes.c - Data-dependent shapes (docs/dynamic-shapes.md) through compiled programs
// on the interpreter and the cpu backend: TopK with a k computed at run time, NonZero and
// Compress of computed values, each giving the actual extent at the output however the bound
// is sized, over two runs with different extents (so a stale count or stale data shows); and
// the one-line refusal when a bounded value reaches a node that would read its padding.
#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

static glow_program *compile(mk_model *mk, const char *backend, glow_diag *d)
{
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED };
    if (glow_onnx_load_bytes(m, bytes, size, NULL, d) != GLOW_OK)
        glow_module_destroy(m);
    else if (glow_program_create(m, &o, &p, d) != GLOW_OK)
        p = NULL;
    free(bytes);
    return p;
}

static glow_tensor tensor(glow_dtype t, int rank, const int64_t *dims, const void *vals)
{
    glow_type ty = glow_type_make(t, rank, dims);
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &ty, &d);
    memcpy(x.data, vals, glow_tensor_bytes(&x));
    return x;
}

/* y, idx = TopK(x [2, 5], k = Cast(kf)) along axis 1: k = 3, then k = 1. */
static void test_topk(const char *backend)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(2, 5));
    mk_input(mk, "kf", MK_F32, 1, D(1));
    Onnx__NodeProto *c = mk_node(mk, "Cast", "c", 1, S("kf"), 1, S("k"));
    mk_attr_int(mk, c, "to", MK_I64);
    mk_node(mk, "TopK", "top", 2, S("x", "k"), 2, S("y", "idx"));
    mk_output(mk, "y", MK_F32, 2, D(2, 5));
    mk_output(mk, "idx", MK_I64, 2, D(2, 5));
    glow_diag d = { 0 };
    glow_program *p = compile(mk, backend, &d);
    CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "%s: %s\n", backend, d.msg);
        mk_free(mk);
        return;
    }
    float xv[10] = { 3, 9, 1, 7, 5, /* */ -1, -5, 4, 0, 2 };
    for (int run = 0; run < 2; run++) {
        float kv = run == 0 ? 3 : 1;
        glow_tensor ins[2] = { tensor(GLOW_F32, 2, D(2, 5), xv), tensor(GLOW_F32, 1, D(1), &kv) };
        CHECK_EQ(glow_program_run(p, ins, 2, &d), GLOW_OK);
        glow_tensor y = glow_program_output(p, 0), ix = glow_program_output(p, 1);
        char ty[64], ti[64];
        CHECK_STR_EQ(glow_type_str(&y.type, ty, sizeof ty), run == 0 ? "f32[2, 3]" : "f32[2, 1]");
        CHECK_STR_EQ(glow_type_str(&ix.type, ti, sizeof ti), run == 0 ? "i64[2, 3]" : "i64[2, 1]");
        const float *yv = y.data;
        const int64_t *iv = ix.data;
        if (run == 0) {
            float want[6] = { 9, 7, 5, 4, 2, 0 };
            int64_t wi[6] = { 1, 3, 4, 2, 4, 3 };
            for (int i = 0; i < 6; i++) {
                CHECK_EQ(yv[i], want[i]);
                CHECK_EQ(iv[i], wi[i]);
            }
        } else {
            CHECK_EQ(yv[0], 9);
            CHECK_EQ(yv[1], 4);
            CHECK_EQ(iv[0], 1);
            CHECK_EQ(iv[1], 2);
        }
        glow_tensor_free(&ins[0]), glow_tensor_free(&ins[1]);
    }
    glow_program_destroy(p);
    mk_free(mk);
}

/* NonZero(Relu(x)) and Compress(x, Greater(x, 0)) on a [2, 3] input, twice. */
static void test_nonzero_compress(const char *backend)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    float zero = 0;
    mk_initializer(mk, mk_tensor_raw(mk, "zero", MK_F32, 0, NULL, &zero, 4));
    mk_node(mk, "Relu", "r", 1, S("x"), 1, S("rx"));
    mk_node(mk, "NonZero", "nz", 1, S("rx"), 1, S("where"));
    mk_node(mk, "Greater", "g", 2, S("x", "zero"), 1, S("pos"));
    Onnx__NodeProto *f = mk_node(mk, "Flatten", "fl", 1, S("pos"), 1, S("pos2"));
    mk_attr_int(mk, f, "axis", 0);
    mk_node(mk, "Squeeze", "sq", 2, S("pos2", "ax0"), 1, S("cond"));
    int64_t ax0 = 0;
    mk_initializer(mk, mk_tensor_raw(mk, "ax0", MK_I64, 1, D(1), &ax0, 8));
    mk_node(mk, "Compress", "cp", 2, S("x", "cond"), 1, S("kept"));
    mk_output(mk, "where", MK_I64, 2, D(2, 6));
    mk_output(mk, "kept", MK_F32, 1, D(6));
    glow_diag d = { 0 };
    glow_program *p = compile(mk, backend, &d);
    CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "%s: %s\n", backend, d.msg);
        mk_free(mk);
        return;
    }
    float a[6] = { 1, -2, 0, 4, 5, -6 }, b[6] = { -1, -2, 3, -4, -5, -6 };
    for (int run = 0; run < 2; run++) {
        glow_tensor x = tensor(GLOW_F32, 2, D(2, 3), run == 0 ? a : b);
        CHECK_EQ(glow_program_run(p, &x, 1, &d), GLOW_OK);
        glow_tensor w = glow_program_output(p, 0), k = glow_program_output(p, 1);
        char tw[64], tk[64];
        glow_type_str(&w.type, tw, sizeof tw);
        glow_type_str(&k.type, tk, sizeof tk);
        const int64_t *wv = w.data;
        const float *kv = k.data;
        if (run == 0) {
            /* non-zero at (0, 0), (1, 0), (1, 1): rows then columns */
            CHECK_STR_EQ(tw, "i64[2, 3]");
            int64_t want[6] = { 0, 1, 1, 0, 0, 1 };
            for (int i = 0; i < 6; i++)
                CHECK_EQ(wv[i], want[i]);
            CHECK_STR_EQ(tk, "f32[3]");
            CHECK_EQ(kv[0], 1);
            CHECK_EQ(kv[1], 4);
            CHECK_EQ(kv[2], 5);
        } else {
            CHECK_STR_EQ(tw, "i64[2, 1]");
            CHECK_EQ(wv[0], 0);
            CHECK_EQ(wv[1], 2);
            CHECK_STR_EQ(tk, "f32[1]");
            CHECK_EQ(kv[0], 3);
        }
        glow_tensor_free(&x);
    }
    glow_program_destroy(p);
    mk_free(mk);
}

/* A bounded value reaches only graph outputs and the ops that keep its rows apart
 * (test_dyn_flow.c): its Shape, which would be data-dependent, is refused, naming both. */
static void test_refused_consumer(void)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(4));
    mk_node(mk, "NonZero", "nz", 1, S("x"), 1, S("where"));
    mk_node(mk, "Shape", "use", 1, S("where"), 1, S("y"));
    mk_output(mk, "y", MK_I64, 1, D(2));
    glow_diag d = { 0 };
    glow_program *p = compile(mk, "interpreter", &d);
    CHECK(p == NULL);
    CHECK_EQ(d.status, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "Shape 'use'");
    CHECK_CONTAINS(d.msg, "data-dependent shape (a result of NonZero 'nz')");
    glow_program_destroy(p);
    mk_free(mk);
}

int main(void)
{
    const char *backends[] = { "interpreter", "cpu" };
    for (int b = 0; b < 2; b++) {
        test_topk(backends[b]);
        test_nonzero_compress(backends[b]);
    }
    test_refused_consumer();
    return CHECK_DONE();
}
