// test_mapped_cli.c - glowc on model files whose weights the loader leaves in the file mapping
// (src/onnx/onnx_map.c): an intact model runs on both backends with the right result, a cut one
// is refused with the message glowc always gave, and `glowc bench` reports the cpu backend's
// machine code beside its regions.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"
#include "testlib/onnx_build.h"
#include "testlib/spawn.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

/* y = x * W: x f32[1, 64], W f32[64, 512] raw (128 KiB, left in the mapping). */
static uint8_t *model_bytes(size_t *n)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(1, 64));
    float *w = mk_alloc(mk, sizeof(float) * 64 * 512);
    for (int i = 0; i < 64 * 512; i++)
        w[i] = (float)((i * 13) % 29) * 0.125f - 1.5f;
    mk_initializer(mk, mk_tensor_raw(mk, "W", MK_F32, 2, D(64, 512), w, sizeof(float) * 64 * 512));
    mk_node(mk, "MatMul", "mm", 2, S("x", "W"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 2, D(1, 512));
    uint8_t *b = mk_pack(mk, n);
    mk_free(mk);
    return b;
}

static bool write_file(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(b, 1, n, f) == n;
    return f && fclose(f) == 0 && ok;
}

/* The 512 floats of the TensorProto file `path`, false when it holds no such. */
static bool read_output(const char *path, float *y)
{
    glow_tensor t;
    glow_diag d = { 0 };
    if (glow_tensor_read_file(path, &t, NULL, &d) != GLOW_OK)
        return false;
    bool ok = t.type.dtype == GLOW_F32 && glow_type_numel(&t.type) == 512;
    if (ok)
        memcpy(y, t.data, 512 * sizeof(float));
    glow_tensor_free(&t);
    return ok;
}

int main(void)
{
    if (!spawn_setup("glowc_test_mapped_cli"))
        return 1;
    size_t n;
    uint8_t *bytes = model_bytes(&n);
    TMP(model, "mapped.onnx");
    TMP(cut, "cut.onnx");
    CHECK(write_file(model, bytes, n));

    /* The intact model: the interpreter and the cpu backend agree. */
    float x[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(i % 7) - 3.0f;
    mk_model *mk = mk_new(13);
    Onnx__TensorProto *xt = mk_tensor_raw(mk, "x", MK_F32, 2, D(1, 64), x, sizeof x);
    size_t xn = onnx__tensor_proto__get_packed_size(xt);
    uint8_t *xb = malloc(xn);
    onnx__tensor_proto__pack(xt, xb);
    TMP(input, "x.pb");
    CHECK(write_file(input, xb, xn));
    free(xb);
    mk_free(mk);
    TMP(dir_i, "out_interp");
    TMP(dir_c, "out_cpu");
    result r = RUN("run", model, input, "--backend", "interpreter", "--output-dir", dir_i);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("run", model, input, "--backend", "cpu", "--output-dir", dir_c);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    float yi[512], yc[512];
    char pi[1024], pc[1024];
    snprintf(pi, sizeof pi, "%s/output_0.pb", dir_i);
    snprintf(pc, sizeof pc, "%s/output_0.pb", dir_c);
    CHECK(read_output(pi, yi) && read_output(pc, yc));
    for (int i = 0; i < 512; i++) {
        double want = 0;
        for (int k = 0; k < 64; k++)
            want += (double)x[k] * ((float)(((k * 512 + i) * 13) % 29) * 0.125f - 1.5f);
        CHECK_NEAR(yi[i], want, 1e-3);
        CHECK_NEAR(yc[i], want, 1e-3);
    }

    /* The summary unpacks the mapped model without W's raw_data and still counts its bytes
     * (64 x 512 f32 and the bias). */
    r = RUN("info", model);
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "initializers, 128.");
    result_free(&r);

    /* Cut inside W's bytes and inside the header: refused. */
    size_t cuts[] = { n / 2, 20 };
    for (int i = 0; i < 2; i++) {
        CHECK(write_file(cut, bytes, cuts[i]));
        r = RUN("info", cut);
        CHECK_EQ(r.code, 2);
        /* The CLI reads the model's summary first (onnx_info.c, through the same mapped
         * unpacking as the loader), which names the file. */
        char want[800];
        snprintf(want, sizeof want, "glowc: %s: not a valid ONNX model (the protobuf does "
                 "not parse; %zu bytes)", cut, cuts[i]);
        CHECK_CONTAINS(r.err, want);
        result_free(&r);
        r = RUN("run", cut, "--backend", "cpu");
        CHECK_EQ(r.code, 2);
        CHECK_CONTAINS(r.err, want);
        result_free(&r);
    }

    /* bench: the JIT's own memory beside the regions. */
    r = RUN("bench", model, "--backend", "cpu", "--iterations", "1", "--json");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "\"jit\": {\"code_bytes\": ");
    const char *p = r.out ? strstr(r.out, "\"code_bytes\": ") : NULL;
    CHECK(p && strtod(p + strlen("\"code_bytes\": "), NULL) > 0);
    CHECK_CONTAINS(r.out, "\"codegen_anon_bytes\"");
    CHECK_CONTAINS(r.out, "\"codegen_file_bytes\"");
    result_free(&r);
    r = RUN("bench", model, "--backend", "cpu", "--iterations", "1");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "jit         code ");
    result_free(&r);

    free(bytes);
    spawn_cleanup();
    return CHECK_DONE();
}
