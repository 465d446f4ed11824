// cnn_model.h - A small CNN for test_bundle's aarch64 checks, built with the test library's ONNX
// builder: every f32 blocked-layout kernel family at shapes that do not divide into NEON's
// 4-lane blocks evenly, so the aarch64 bundle (NEON, NCHWc4) is compared with the x86-64 cpu
// backend (AVX-512 or AVX2, NCHWc16 / NCHWc8) where the two layouts differ most.
//
//   x [2,3,17,17]            3 input channels: the first conv's block holds 3 of 4 lanes
//   Conv 3x3 pad 1 + Relu    interior tiles (12 pixels of a 17-wide row) and gathered ones
//   MaxPool 3x3 s2 pad 1     -> [2,8,9,9]
//   Conv 3x3 pad 1, Add the pool's output, Relu   (a residual folded into the conv)
//   Conv depthwise 3x3 s2 pad 1 + Clip(0, 6)      -> [2,8,5,5]
//   Conv 1x1 8 -> 12 + Relu                       three output blocks: an odd pair
//   AveragePool 3x3 pad 1 (pads not counted)
//   Conv 3x3 dilation 2 pad 2, 12 -> 10           10 channels: a padded last block
//   GlobalAveragePool, Flatten, Gemm 10 -> 7 + bias, Softmax -> y [2,7]
//                                                 7 columns: a partial GEMM panel
//
// The weights are a fixed pseudo-random sequence, the input too (cnn_write_input).
#ifndef GLOW_TEST_CNN_MODEL_H
#define GLOW_TEST_CNN_MODEL_H

#include "onnx/onnx.h"
#include "testlib/onnx_build.h"

/* Values in [-scale, scale) from a 32-bit linear congruential sequence. */
static float cnn_rand(uint32_t *state, float scale)
{
    *state = *state * 1664525u + 1013904223u;
    return ((float)(*state >> 8) / (float)(1u << 24) * 2.0f - 1.0f) * scale;
}

/* An f32 initializer of the given dims, pseudo-random in [-scale, scale). */
static void cnn_weight(mk_model *mk, const char *name, int rank, const int64_t *dims,
                       float scale, uint32_t *state)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    float *w = mk_alloc(mk, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        w[i] = cnn_rand(state, scale);
    mk_initializer(mk, mk_tensor_raw(mk, name, MK_F32, rank, dims, w, n * sizeof(float)));
}

/* A Conv node x -> y with weight w (and bias b when not NULL). */
static Onnx__NodeProto *cnn_conv(mk_model *mk, const char *x, const char *w, const char *b,
                                 const char *y, int64_t pad, int64_t stride, int64_t dil,
                                 int64_t group)
{
    const char *ins[3] = { x, w, b };
    Onnx__NodeProto *n = mk_node(mk, "Conv", y, b ? 3 : 2, ins, 1, (const char *[]){ y });
    mk_attr_ints(mk, n, "pads", (int64_t[]){ pad, pad, pad, pad }, 4);
    mk_attr_ints(mk, n, "strides", (int64_t[]){ stride, stride }, 2);
    mk_attr_ints(mk, n, "dilations", (int64_t[]){ dil, dil }, 2);
    mk_attr_int(mk, n, "group", group);
    return n;
}

static void cnn_unary(mk_model *mk, const char *op, const char *x, const char *y)
{
    mk_node(mk, op, y, 1, (const char *[]){ x }, 1, (const char *[]){ y });
}

/* Writes the model to path; false when it cannot. */
static bool cnn_write_model(const char *path)
{
    mk_model *mk = mk_new(13);
    uint32_t st = 12345;
    mk_input(mk, "x", MK_F32, 4, (int64_t[]){ 2, 3, 17, 17 });
    cnn_weight(mk, "w1", 4, (int64_t[]){ 8, 3, 3, 3 }, 0.4f, &st);
    cnn_weight(mk, "b1", 1, (int64_t[]){ 8 }, 0.1f, &st);
    cnn_conv(mk, "x", "w1", "b1", "c1", 1, 1, 1, 1);
    cnn_unary(mk, "Relu", "c1", "r1");
    Onnx__NodeProto *n = mk_node(mk, "MaxPool", "p1", 1, (const char *[]){ "r1" }, 1,
                                 (const char *[]){ "p1" });
    mk_attr_ints(mk, n, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
    mk_attr_ints(mk, n, "strides", (int64_t[]){ 2, 2 }, 2);
    mk_attr_ints(mk, n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
    cnn_weight(mk, "w2", 4, (int64_t[]){ 8, 8, 3, 3 }, 0.2f, &st);
    cnn_weight(mk, "b2", 1, (int64_t[]){ 8 }, 0.1f, &st);
    cnn_conv(mk, "p1", "w2", "b2", "c2", 1, 1, 1, 1);
    mk_node(mk, "Add", "a2", 2, (const char *[]){ "c2", "p1" }, 1, (const char *[]){ "a2" });
    cnn_unary(mk, "Relu", "a2", "r2");
    cnn_weight(mk, "w3", 4, (int64_t[]){ 8, 1, 3, 3 }, 0.5f, &st);
    cnn_conv(mk, "r2", "w3", NULL, "c3", 1, 2, 1, 8);
    float lo = 0.0f, hi = 6.0f;
    mk_initializer(mk, mk_tensor_raw(mk, "lo", MK_F32, 0, NULL, &lo, sizeof lo));
    mk_initializer(mk, mk_tensor_raw(mk, "hi", MK_F32, 0, NULL, &hi, sizeof hi));
    mk_node(mk, "Clip", "k3", 3, (const char *[]){ "c3", "lo", "hi" }, 1,
            (const char *[]){ "k3" });
    cnn_weight(mk, "w4", 4, (int64_t[]){ 12, 8, 1, 1 }, 0.4f, &st);
    cnn_weight(mk, "b4", 1, (int64_t[]){ 12 }, 0.1f, &st);
    cnn_conv(mk, "k3", "w4", "b4", "c4", 0, 1, 1, 1);
    cnn_unary(mk, "Relu", "c4", "l4");
    n = mk_node(mk, "AveragePool", "v4", 1, (const char *[]){ "l4" }, 1,
                (const char *[]){ "v4" });
    mk_attr_ints(mk, n, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
    mk_attr_ints(mk, n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
    cnn_weight(mk, "w5", 4, (int64_t[]){ 10, 12, 3, 3 }, 0.2f, &st);
    cnn_weight(mk, "b5", 1, (int64_t[]){ 10 }, 0.1f, &st);
    cnn_conv(mk, "v4", "w5", "b5", "c5", 2, 1, 2, 1);
    cnn_unary(mk, "GlobalAveragePool", "c5", "g5");
    cnn_unary(mk, "Flatten", "g5", "f5");
    cnn_weight(mk, "w6", 2, (int64_t[]){ 10, 7 }, 1.0f, &st);
    cnn_weight(mk, "b6", 1, (int64_t[]){ 7 }, 0.2f, &st);
    mk_node(mk, "Gemm", "m6", 3, (const char *[]){ "f5", "w6", "b6" }, 1,
            (const char *[]){ "m6" });
    n = mk_node(mk, "Softmax", "y", 1, (const char *[]){ "m6" }, 1, (const char *[]){ "y" });
    mk_attr_int(mk, n, "axis", 1);
    mk_output(mk, "y", MK_F32, 2, (int64_t[]){ 2, 7 });
    bool ok = mk_write(mk, path);
    mk_free(mk);
    return ok;
}

/* A second model for Winograd (3x3 stride-1 convs on whole channel blocks, which the first
 * model's 8 channels are not under AVX-512): x [2,16,13,15], Conv 16 -> 32 + Relu, Conv
 * 32 -> 32 + the first's output (a residual folded into the Winograd conv) + Relu, Conv
 * 32 -> 16: planes of 13 x 15 leave partial 4 x 4 tiles at both edges. */
static bool cnn_write_wino_model(const char *path)
{
    mk_model *mk = mk_new(13);
    uint32_t st = 4242;
    mk_input(mk, "x", MK_F32, 4, (int64_t[]){ 2, 16, 13, 15 });
    static const int64_t chans[4] = { 16, 32, 32, 16 };
    static const char *w[3] = { "w1", "w2", "w3" }, *b[3] = { "b1", "b2", "b3" };
    static const char *in[3] = { "x", "r1", "r2" }, *c[3] = { "c1", "c2", "c3" };
    for (int i = 0; i < 3; i++) {
        cnn_weight(mk, w[i], 4, (int64_t[]){ chans[i + 1], chans[i], 3, 3 }, 0.15f, &st);
        cnn_weight(mk, b[i], 1, (int64_t[]){ chans[i + 1] }, 0.1f, &st);
        cnn_conv(mk, in[i], w[i], b[i], c[i], 1, 1, 1, 1);
        if (i == 0)
            cnn_unary(mk, "Relu", "c1", "r1");
        if (i == 1) {
            mk_node(mk, "Add", "a2", 2, (const char *[]){ "c2", "r1" }, 1,
                    (const char *[]){ "a2" });
            cnn_unary(mk, "Relu", "a2", "r2");
        }
    }
    mk_output(mk, "c3", MK_F32, 4, (int64_t[]){ 2, 16, 13, 15 });
    bool ok = mk_write(mk, path);
    mk_free(mk);
    return ok;
}

/* Writes a pseudo-random input x of the given 4-D shape as a TensorProto file; false when it
 * cannot. */
static bool cnn_write_input_dims(const char *path, const int64_t dims[4])
{
    size_t n = (size_t)(dims[0] * dims[1] * dims[2] * dims[3]);
    float *x = malloc(n * sizeof(float));
    if (!x)
        return false;
    uint32_t st = 777;
    for (size_t i = 0; i < n; i++)
        x[i] = cnn_rand(&st, 1.0f);
    glow_type t = { .dtype = GLOW_F32, .rank = 4, .dims = { dims[0], dims[1], dims[2], dims[3] } };
    glow_tensor tx = glow_tensor_borrow(&t, x);
    uint8_t *pb = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    bool ok = glow_tensor_to_pb(&tx, "x", &pb, &size, &d) == GLOW_OK &&
              glow_write_file(path, pb, size, &d) == GLOW_OK;
    free(pb);
    free(x);
    return ok;
}

/* The first model's input x [2,3,17,17]. */
static bool cnn_write_input(const char *path)
{
    return cnn_write_input_dims(path, (const int64_t[]){ 2, 3, 17, 17 });
}

#endif
