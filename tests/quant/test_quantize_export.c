// test_quantize_export.c - `glowc quantize` end to end on models/digits.onnx: a profile made here
// from generated samples, the exported QDQ model run by glowc itself against `glowc run
// --quantize` (the same bytes), what the file holds (QuantizeLinear/DequantizeLinear, int8
// weights a quarter of the float ones), the options, and the refusals (usage, an unwritable
// destination, a node with no ONNX form) that leave no file.
#define _XOPEN_SOURCE 700
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "testlib/spawn.h"

#define MODEL "models/digits.onnx"
#define NSAMPLES 3

static char samples[NSAMPLES][512];

/* Digits' input f32[1, 1, 8, 8]: a different wave per sample, some elements negative. */
static void write_sample(const char *path, int k)
{
    int64_t dims[4] = { 1, 1, 8, 8 };
    glow_type ty = glow_type_make(GLOW_F32, 4, dims);
    glow_tensor t;
    glow_diag d = { 0 };
    CHECK(glow_tensor_alloc(&t, &ty, &d) == GLOW_OK);
    float *x = t.data;
    for (int i = 0; i < 64; i++)
        x[i] = (float)(1.5 * cos(0.29 * i * (k + 1)) + 0.4 * k);
    CHECK(glow_tensor_write_pb(path, &t, "image", &d) == GLOW_OK);
    glow_tensor_free(&t);
}

/* A model's nodes by op type and its weights (initializers of rank >= 2) by element type. */
typedef struct model_stats {
    int quantize, dequantize, nodes;
    int64_t int8_weights, float_weights, opset;
} model_stats;

static model_stats stats_of(const char *path)
{
    model_stats st = { 0 };
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    CHECK_EQ(glow_read_file(path, &data, &size, &d), GLOW_OK);
    Onnx__ModelProto *mp = data ? onnx__model_proto__unpack(NULL, size, data) : NULL;
    CHECK(mp != NULL && mp->graph != NULL);
    if (mp && mp->graph) {
        const Onnx__GraphProto *g = mp->graph;
        st.opset = mp->n_opset_import ? mp->opset_import[0]->version : 0;
        st.nodes = (int)g->n_node;
        for (size_t i = 0; i < g->n_node; i++) {
            st.quantize += !strcmp(g->node[i]->op_type, "QuantizeLinear");
            st.dequantize += !strcmp(g->node[i]->op_type, "DequantizeLinear");
        }
        for (size_t i = 0; i < g->n_initializer; i++) {
            const Onnx__TensorProto *t = g->initializer[i];
            if (t->n_dims < 2)
                continue;
            int64_t n = 1;
            for (size_t k = 0; k < t->n_dims; k++)
                n *= t->dims[k];
            if (t->data_type == 3 || t->data_type == 2)
                st.int8_weights += n;
            else if (t->data_type == 1)
                st.float_weights += 4 * n;
        }
    }
    if (mp)
        onnx__model_proto__free_unpacked(mp, NULL);
    free(data);
    return st;
}

static void check_export(const char *prof)
{
    TMP(out, "digits_q.onnx");
    result r = RUN("quantize", MODEL, "--profile", prof, "-o", out, "--per-channel");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "quantized");
    CHECK_CONTAINS(r.out, "digits_q.onnx");
    result_free(&r);

    /* glowc runs the exported model as it runs the float model quantized: QDQ pairs import
     * back into the same integer arithmetic. */
    for (int k = 0; k < NSAMPLES; k++) {
        TMP(da, "a");
        TMP(db, "b");
        TMP(oa, "a/output_0.pb");
        TMP(ob, "b/output_0.pb");
        r = RUN("run", out, samples[k], "--output-dir", da);
        CHECK_EQ(r.code, 0);
        result_free(&r);
        r = RUN("run", MODEL, samples[k], "--quantize", prof, "--per-channel", "--output-dir",
                db);
        CHECK_EQ(r.code, 0);
        result_free(&r);
        CHECK(same_file(oa, ob));
        remove(oa);
        remove(ob);
    }

    model_stats q = stats_of(out), f = stats_of(MODEL);
    printf("exported: %d nodes, %d QuantizeLinear, %d DequantizeLinear, opset %lld; weights "
           "%lld bytes int8 + %lld float (the float model: %lld bytes float)\n", q.nodes,
           q.quantize, q.dequantize, (long long)q.opset, (long long)q.int8_weights,
           (long long)q.float_weights, (long long)f.float_weights);
    CHECK_EQ(q.opset, 13);
    CHECK(q.quantize >= 3 && q.dequantize >= 3);
    CHECK_EQ(q.float_weights, 0);
    CHECK(f.float_weights > 0);
    CHECK_EQ(4 * q.int8_weights, f.float_weights);

    /* The same file for the same inputs; --keep-float leaves float weights behind. */
    TMP(again, "digits_q2.onnx");
    r = RUN("quantize", MODEL, "--quantize", prof, "--output", again, "--per-channel");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK(same_file(out, again));
    r = RUN("quantize", MODEL, "--profile", prof, "-o", again, "--keep-float", "Conv");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    model_stats kf = stats_of(again);
    CHECK(kf.float_weights > 0 && kf.int8_weights > 0);
    CHECK(4 * kf.int8_weights < f.float_weights);
}

static void check_refusals(const char *prof)
{
    TMP(out, "refused.onnx");
    TMP(nodir, "no/such/dir.onnx");
    result r = RUN("quantize", MODEL, "-o", out);
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "--profile");
    result_free(&r);
    r = RUN("quantize", MODEL, "--profile", prof);
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "-o");
    result_free(&r);
    r = RUN("quantize", MODEL, "--profile", prof, "-o", out, "--backend", "cpu");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "interpreter");
    result_free(&r);
    r = RUN("quantize", MODEL, "--profile", prof, "-o", out, "--precision", "int4");
    CHECK_EQ(r.code, 1);
    result_free(&r);
    /* int16 values have no QuantizeLinear at opset 13: refused naming the node. */
    r = RUN("quantize", MODEL, "--profile", prof, "-o", out, "--precision", "int16");
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "cannot write node");
    CHECK_CONTAINS(r.err, "i16q");
    result_free(&r);
    r = RUN("quantize", MODEL, "--profile", prof, "-o", nodir);
    CHECK_EQ(r.code, 3);
    CHECK_CONTAINS(r.err, "no/such/dir.onnx");
    result_free(&r);
    CHECK(access(out, F_OK) != 0);
    r = RUN("quantize", "--help");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "usage: glowc quantize MODEL --profile PROFILE -o OUT.onnx");
    result_free(&r);
    r = RUN("--help");
    CHECK_CONTAINS(r.out, "quantize");
    result_free(&r);
}

int main(void)
{
    if (!spawn_setup("glowc_test_quantize_export"))
        return 1;
    for (int k = 0; k < NSAMPLES; k++) {
        snprintf(samples[k], sizeof samples[k], "%s/sample_%d.pb", tmpdir, k);
        write_sample(samples[k], k);
    }
    TMP(prof, "digits.json");
    result r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", prof);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    check_export(prof);
    check_refusals(prof);
    spawn_cleanup();
    return CHECK_DONE();
}
