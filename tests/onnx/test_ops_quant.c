// test_ops_quant.c - Quantization loaders: node-suite models imported and evaluated node by node
// against ONNX's outputs (integers exactly), the graph they become, and the refusals.
#include "check.h"
#include "testlib/node_eval.h"
#include "testlib/onnx_edit.h"

static const char *const passing[] = {
    "test_dequantizelinear",
    "test_dequantizelinear_axis",
    "test_dequantizelinear_blocked",
    "test_dequantizelinear_int16",
    "test_dequantizelinear_uint16",
    "test_quantizelinear",
    "test_quantizelinear_axis",
    "test_quantizelinear_blocked_asymmetric",
    "test_quantizelinear_blocked_symmetric",
    "test_quantizelinear_int16",
    "test_quantizelinear_uint16",
    "test_dynamicquantizelinear",
    "test_dynamicquantizelinear_max_adjusted",
    "test_dynamicquantizelinear_min_adjusted",
    "test_dynamicquantizelinear_expanded",
    "test_dynamicquantizelinear_max_adjusted_expanded",
    "test_dynamicquantizelinear_min_adjusted_expanded",
    "test_matmulinteger",
    "test_convinteger_with_padding",
    "test_convinteger_without_padding",
    "test_qlinearconv",
    "test_qlinearmatmul_2D_int8_float16",
    "test_qlinearmatmul_2D_int8_float32",
    "test_qlinearmatmul_2D_uint8_float16",
    "test_qlinearmatmul_2D_uint8_float32",
    "test_qlinearmatmul_3D_int8_float16",
    "test_qlinearmatmul_3D_int8_float32",
    "test_qlinearmatmul_3D_uint8_float16",
    "test_qlinearmatmul_3D_uint8_float32",
    "test_dequantizelinear_e4m3fn",
    "test_dequantizelinear_e4m3fn_float16",
    "test_dequantizelinear_e4m3fn_zero_point",
    "test_dequantizelinear_e5m2",
    "test_dequantizelinear_float4e2m1",
    "test_dequantizelinear_int2",
    "test_dequantizelinear_int4",
    "test_dequantizelinear_uint2",
    "test_dequantizelinear_uint4",
    "test_quantizelinear_e4m3fn",
    "test_quantizelinear_e5m2",
    "test_quantizelinear_float4e2m1",
    "test_quantizelinear_int2",
    "test_quantizelinear_int4",
    "test_quantizelinear_uint2",
    "test_quantizelinear_uint4",
};

static void int4_output(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "output_dtype", 22);
}

static void e8m0_output(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "output_dtype", 24);
}

static void string_output(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "output_dtype", 8);
}

static void f32_output(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "output_dtype", 1);
}

static void bad_block(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "block_size", 1);
}

/* output_dtype picks the result kind (int4 blocked here); a kind glowc lacks, or one that
 * is not quantized, is refused by name. */
static void test_output_dtype(void)
{
    loaded r = load_node_test("test_quantizelinear_blocked_symmetric", 0, int4_output);
    CHECK_EQ(r.st, GLOW_OK);
    CHECK_CONTAINS(loaded_text(&r), "{min=-8, max=7}");
    CHECK_CONTAINS(loaded_text(&r), ": i4[");
    loaded_free(&r);
    r = load_node_test("test_quantizelinear_blocked_symmetric", 0, string_output);
    CHECK_EQ(r.st, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(loaded_text(&r), "string");
    CHECK_CONTAINS(loaded_text(&r), "QuantizeLinear");
    loaded_free(&r);
    expect_load("test_quantizelinear_blocked_symmetric", 0, e8m0_output, GLOW_ERR_UNSUPPORTED,
                "f8e8m0");
    expect_load("test_quantizelinear_blocked_symmetric", 0, f32_output, GLOW_ERR_UNSUPPORTED,
                "f32");
    /* A blocked scale that does not match the input's blocks is a shape error. */
    expect_load("test_quantizelinear_blocked_asymmetric", 0, bad_block, GLOW_ERR_BAD_SHAPE,
                "blocks of 1");
}

/* The ops become ordinary kinds: rounding, saturation and a cast; integer conv through f64. */
static void test_graph_form(void)
{
    loaded r = load_node_test("test_quantizelinear", 0, NULL);
    CHECK_EQ(r.st, GLOW_OK);
    CHECK_CONTAINS(loaded_text(&r), "= Div(");
    CHECK_CONTAINS(loaded_text(&r), "= Round(");
    CHECK_CONTAINS(loaded_text(&r), "min=0, max=255");
    CHECK_CONTAINS(loaded_text(&r), ": u8[6]");
    loaded_free(&r);
    r = load_node_test("test_convinteger_with_padding", 0, NULL);
    CHECK_EQ(r.st, GLOW_OK);
    CHECK_CONTAINS(loaded_text(&r), "= Conv(");
    CHECK_CONTAINS(loaded_text(&r), ": f64[1, 2, 4, 4]");
    CHECK_CONTAINS(loaded_text(&r), ": i32[1, 2, 4, 4]");
    loaded_free(&r);
    /* With every input constant, the whole computation folds at import. */
    r = load_node_test("test_qlinearmatmul_2D_uint8_float32", 0xff, NULL);
    CHECK_EQ(r.st, GLOW_OK);
    CHECK(!strstr(loaded_text(&r), "MatMul("));
    loaded_free(&r);
}

int main(void)
{
    int failed = 0, n = (int)(sizeof passing / sizeof passing[0]);
    int pass = node_eval_all(passing, n, &failed);
    CHECK_EQ(failed, 0);
    printf("quantization node tests: %d/%d evaluate correctly\n", pass, n);
    test_output_dtype();
    test_graph_form();
    return CHECK_DONE();
}
