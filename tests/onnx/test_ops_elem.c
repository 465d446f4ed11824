// test_ops_elem.c - Imports node-suite models of elementwise, activation and cast ops and
// compares the graphs they become.
#include "check.h"
#include "testlib/onnx_edit.h"

/* Opset 6 form of test_add_bcast (A [3, 4, 5], B [5]) with broadcast=1, axis=2. */
static void legacy_add(Onnx__ModelProto *mp)
{
    set_opset(mp, 6);
    set_int_attr(mp->graph->node[0], "broadcast", 1);
    set_int_attr(mp->graph->node[0], "axis", 2);
}

/* Same, with an axis at which B does not fit. */
static void legacy_add_bad_axis(Onnx__ModelProto *mp)
{
    legacy_add(mp);
    set_int_attr(mp->graph->node[0], "axis", 1);
    set_node_name(mp->graph->node[0], "legacy_add");
}

/* Float Mod with fmod=0, which the spec leaves undefined. */
static void float_mod_without_fmod(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "fmod", 0);
    set_node_name(mp->graph->node[0], "bad_mod");
}

/* Opset 6 Clip with attribute bounds. */
static void legacy_clip(Onnx__ModelProto *mp)
{
    set_opset(mp, 6);
    Onnx__NodeProto *np = mp->graph->node[0];
    keep_inputs(np, 1);
    Onnx__AttributeProto *a = malloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = strdup("max");
    a->f = 0.5f;
    a->has_f = 1;
    a->type = 1;
    a->has_type = 1;
    np->attribute = realloc(np->attribute, (np->n_attribute + 1) * sizeof *np->attribute);
    np->attribute[np->n_attribute++] = a;
}

static void binary_ops(void)
{
    expect_graph("test_add_bcast", 0, NULL,
                 "function main {\n"
                 "  %Add#0/reshape0 = Reshape(%y) : f32[1, 1, 5]\n"
                 "  %Add#0/bcast1 = Broadcast(%Add#0/reshape0) : f32[3, 4, 5]\n"
                 "  %Add#0 = Add(%x, %Add#0/bcast1) : f32[3, 4, 5]\n"
                 "  Save(%Add#0, %sum)\n"
                 "}\n");
    expect_graph("test_add_bcast", 0, legacy_add,
                 "function main {\n"
                 "  %Add#0/reshape0 = Reshape(%y) : f32[1, 1, 5]\n"
                 "  %Add#0/bcast1 = Broadcast(%Add#0/reshape0) : f32[3, 4, 5]\n"
                 "  %Add#0 = Add(%x, %Add#0/bcast1) : f32[3, 4, 5]\n"
                 "  Save(%Add#0, %sum)\n"
                 "}\n");
    expect_fail("test_add_bcast", 0, legacy_add_bad_axis, GLOW_ERR_BAD_SHAPE,
                "Add 'legacy_add' (opset 6): legacy broadcast");
    expect_graph("test_mod_mixed_sign_int32", 0, NULL,
                 "function main {\n"
                 "  %Mod#0 = Mod(%x, %y) {fmod=0} : i32[6]\n"
                 "  Save(%Mod#0, %z)\n"
                 "}\n");
    expect_fail("test_mod_mixed_sign_float32", 0, float_mod_without_fmod, GLOW_ERR_BAD_ATTR,
                "Mod 'bad_mod' (opset 13): fmod=0 is not defined for f32 inputs");
    expect_graph("test_pow_types_float32_int64", 0, NULL,
                 "function main {\n"
                 "  %Pow#0 = Pow(%x, %y) : f32[3]\n"
                 "  Save(%Pow#0, %z)\n"
                 "}\n");
    expect_graph("test_bitshift_left_uint16", 0, NULL,
                 "function main {\n"
                 "  %BitShift#0 = BitShift(%x, %y) {direction=\"LEFT\"} : u16[3]\n"
                 "  Save(%BitShift#0, %z)\n"
                 "}\n");
    expect_graph("test_less_equal_bcast", 0, NULL,
                 "function main {\n"
                 "  %LessOrEqual#0/reshape0 = Reshape(%y) : f32[1, 1, 5]\n"
                 "  %LessOrEqual#0/bcast1 = Broadcast(%LessOrEqual#0/reshape0) : f32[3, 4, 5]\n"
                 "  %LessOrEqual#0 = LessOrEqual(%x, %LessOrEqual#0/bcast1) : bool[3, 4, 5]\n"
                 "  Save(%LessOrEqual#0, %less_equal)\n"
                 "}\n");
    expect_graph("test_not_2d", 0, NULL,
                 "function main {\n"
                 "  %Not#0 = Not(%x) : bool[3, 4]\n"
                 "  Save(%Not#0, %not)\n"
                 "}\n");
}

static void variadic_ops(void)
{
    /* Mean of three [3] inputs: two Adds, then a Div by 3 in f32. */
    expect_graph("test_mean_example", 0, NULL,
                 "function main {\n"
                 "  %Mean#0 = Add(%data_0, %data_1) : f32[3]\n"
                 "  %Mean#0/Add0 = Add(%Mean#0, %data_2) : f32[3]\n"
                 "  %Mean#0/Div3 = Div(%Mean#0/Add0, %Mean#0/bcast2) : f32[3]\n"
                 "  Save(%Mean#0/Div3, %result)\n"
                 "}\n");
    expect_graph("test_max_one_input", 0, NULL,
                 "function main {\n"
                 "  Save(%data_0, %result)\n"
                 "}\n");
    expect_graph("test_sum_two_inputs", 0, NULL,
                 "function main {\n"
                 "  %Sum#0 = Add(%data_0, %data_1) : f32[3]\n"
                 "  Save(%Sum#0, %result)\n"
                 "}\n");
}

static void prelu_where(void)
{
    expect_graph("test_prelu_broadcast", 0, NULL,
                 "function main {\n"
                 "  %PRelu#0/reshape0 = Reshape(%slope) : f32[1, 1, 5]\n"
                 "  %PRelu#0/bcast1 = Broadcast(%PRelu#0/reshape0) : f32[3, 4, 5]\n"
                 "  %PRelu#0 = PRelu(%x, %PRelu#0/bcast1) : f32[3, 4, 5]\n"
                 "  Save(%PRelu#0, %y)\n"
                 "}\n");
    expect_graph("test_where_example", 0, NULL,
                 "function main {\n"
                 "  %Where#0 = Where(%condition, %x, %y) : f32[2, 2]\n"
                 "  Save(%Where#0, %z)\n"
                 "}\n");
}

static void activations(void)
{
    expect_graph("test_selu_default", 0, NULL,
                 "function main {\n"
                 "  %Selu#0 = Selu(%x) {alpha=1.6732632, gamma=1.050701} : f32[3, 4, 5]\n"
                 "  Save(%Selu#0, %y)\n"
                 "}\n");
    expect_graph("test_leakyrelu", 0, NULL,
                 "function main {\n"
                 "  %LeakyRelu#0 = LeakyRelu(%x) {alpha=0.1} : f32[3, 4, 5]\n"
                 "  Save(%LeakyRelu#0, %y)\n"
                 "}\n");
    expect_graph("test_gelu_tanh_1", 0, NULL,
                 "function main {\n"
                 "  %Gelu#0 = Gelu(%x) {approximate=\"tanh\"} : f32[3]\n"
                 "  Save(%Gelu#0, %y)\n"
                 "}\n");
    expect_graph("test_isinf_negative", 0, NULL,
                 "function main {\n"
                 "  %IsInf#0 = IsInf(%x) {detect_positive=0, detect_negative=1} : bool[6]\n"
                 "  Save(%IsInf#0, %y)\n"
                 "}\n");
    expect_graph("test_swish", 0, NULL,
                 "function main {\n"
                 "  %Swish#0 = Sigmoid(%x) : f32[3]\n"
                 "  %Swish#0/Mul0 = Mul(%x, %Swish#0) : f32[3]\n"
                 "  Save(%Swish#0/Mul0, %y)\n"
                 "}\n");
}

static void clip(void)
{
    /* min is fed at run time: a Max node instead of a Clip bound. */
    expect_graph("test_clip_default_min", 0, NULL,
                 "function main {\n"
                 "  %Clip#0/reshape0 = Reshape(%min) : f32[1, 1, 1]\n"
                 "  %Clip#0/bcast1 = Broadcast(%Clip#0/reshape0) : f32[3, 4, 5]\n"
                 "  %Clip#0 = Max(%x, %Clip#0/bcast1) : f32[3, 4, 5]\n"
                 "  Save(%Clip#0, %y)\n"
                 "}\n");
    /* Frozen into a constant, it becomes the Clip's bound; max defaults to +inf. */
    expect_graph("test_clip_default_min", 1u << 1, NULL,
                 "function main {\n"
                 "  %Clip#0 = Clip(%x) {min=0, max=inf} : f32[3, 4, 5]\n"
                 "  Save(%Clip#0, %y)\n"
                 "}\n");
    expect_graph("test_clip_default_int8_min", 1u << 1, NULL,
                 "function main {\n"
                 "  %Clip#0 = Clip(%x) {min=0, max=127} : i8[3, 4, 5]\n"
                 "  Save(%Clip#0, %y)\n"
                 "}\n");
    expect_graph("test_clip_default_inbounds", 0, NULL,
                 "function main {\n"
                 "  Save(%x, %y)\n"
                 "}\n");
    expect_graph("test_clip_default_min", 0, legacy_clip,
                 "function main {\n"
                 "  %Clip#0 = Clip(%x) {min=-3.4028235e+38, max=0.5} : f32[3, 4, 5]\n"
                 "  Save(%Clip#0, %y)\n"
                 "}\n");
}

static void casts(void)
{
    expect_graph("test_cast_FLOAT_to_FLOAT16", 0, NULL,
                 "function main {\n"
                 "  %Cast#0 = Cast(%input) : f16[3, 4]\n"
                 "  Save(%Cast#0, %output)\n"
                 "}\n");
    expect_graph("test_castlike_FLOAT16_to_DOUBLE", 0, NULL,
                 "function main {\n"
                 "  %CastLike#0 = Cast(%input) : f64[3, 4]\n"
                 "  Save(%CastLike#0, %output)\n"
                 "}\n");
    /* Low-bit targets keep Cast's non-default modes as attributes; saturate=1 is the
     * default and leaves none. */
    expect_graph("test_cast_no_saturate_FLOAT_to_FLOAT8E5M2", 0, NULL,
                 "function main {\n"
                 "  %Cast#0 = Cast(%input) {saturate=0} : f8e5m2[3, 5]\n"
                 "  Save(%Cast#0, %output)\n"
                 "}\n");
    expect_graph("test_cast_FLOAT_to_FLOAT8E4M3FNUZ", 0, NULL,
                 "function main {\n"
                 "  %Cast#0 = Cast(%input) : f8e4m3fnuz[3, 5]\n"
                 "  Save(%Cast#0, %output)\n"
                 "}\n");
    /* BitCast between integer kinds is a wrapping Cast; a constant is copied bit for bit;
     * a computed float is a Reinterpret view of the same bytes. */
    expect_graph("test_bitcast_uint32_to_int32", 0, NULL,
                 "function main {\n"
                 "  %BitCast#0 = Cast(%x) : i32[3]\n"
                 "  Save(%BitCast#0, %y)\n"
                 "}\n");
    expect_graph("test_bitcast_bool_to_uint8", 0, NULL,
                 "function main {\n"
                 "  %BitCast#0 = Cast(%x) : u8[4]\n"
                 "  Save(%BitCast#0, %y)\n"
                 "}\n");
    loaded r = load_node_test("test_bitcast_scalar_float32_to_int32", 1u << 0, NULL);
    CHECK_EQ(r.st, GLOW_OK);
    /* 1.0f is 0x3F800000. */
    CHECK_CONTAINS(r.module_text ? r.module_text : r.d.msg,
                   "%BitCast#0 = Constant [1065353216] : i32[]");
    loaded_free(&r);
    expect_graph("test_bitcast_float32_to_int32", 0, NULL,
                 "function main {\n"
                 "  %BitCast#0 = Reinterpret(%x) : i32[3]\n"
                 "  Save(%BitCast#0, %y)\n"
                 "}\n");
}

int main(void)
{
    binary_ops();
    variadic_ops();
    prelu_where();
    activations();
    clip();
    casts();
    return CHECK_DONE();
}
