// test_ops_reduce.c - Imports node-suite models of reductions, ArgMax/ArgMin, TopK and
// CumSum and compares the graphs they become, including their normalized attributes.
#include "check.h"
#include "testlib/onnx_edit.h"

/* Opset 11 ReduceSum: axes as an attribute, here with a duplicate. */
static void legacy_duplicate_axes(Onnx__ModelProto *mp)
{
    set_opset(mp, 11);
    Onnx__NodeProto *np = mp->graph->node[0];
    keep_inputs(np, 1);
    const int64_t axes[] = { -1, 2 };
    set_ints_attr(np, "axes", axes, 2);
    set_node_name(np, "sum_dup");
}

/* Opset 11 ReduceSum with axes [-1, 0] as an attribute. */
static void legacy_axes(Onnx__ModelProto *mp)
{
    legacy_duplicate_axes(mp);
    mp->graph->node[0]->attribute[mp->graph->node[0]->n_attribute - 1]->ints[1] = 0;
}

/* Opset 1 TopK: k as an attribute. */
static void legacy_topk(Onnx__ModelProto *mp)
{
    set_opset(mp, 1);
    Onnx__NodeProto *np = mp->graph->node[0];
    keep_inputs(np, 1);
    set_int_attr(np, "k", 2);
}

static void reductions(void)
{
    /* axes fed at run time: the shape is unknown, so the import must fail naming the node. */
    expect_fail("test_reduce_sum_keepdims_example", 0, NULL, GLOW_ERR_UNSUPPORTED,
                "ReduceSum 'ReduceSum#0' (opset 13): input 1 'axes' must be a constant");
    expect_graph("test_reduce_sum_keepdims_example", 1u << 1, NULL,
                 "function main {\n"
                 "  %ReduceSum#0 = ReduceSum(%data) {axes=[1], keepdims=1} : f32[3, 1, 2]\n"
                 "  Save(%ReduceSum#0, %reduced)\n"
                 "}\n");
    expect_graph("test_reduce_sum_default_axes_keepdims_example", 1u << 1, NULL,
                 "function main {\n"
                 "  %ReduceSum#0 = ReduceSum(%data) {axes=[0, 1, 2], keepdims=1} : "
                 "f32[1, 1, 1]\n"
                 "  Save(%ReduceSum#0, %reduced)\n"
                 "}\n");
    expect_graph("test_reduce_sum_empty_axes_input_noop_example", 1u << 1, NULL,
                 "function main {\n"
                 "  Save(%data, %reduced)\n"
                 "}\n");
    expect_graph("test_reduce_mean_negative_axes_keepdims_example", 1u << 1, NULL,
                 "function main {\n"
                 "  %ReduceMean#0 = ReduceMean(%data) {axes=[1], keepdims=1} : "
                 "f32[3, 1, 2]\n"
                 "  Save(%ReduceMean#0, %reduced)\n"
                 "}\n");
    expect_graph("test_reduce_log_sum_exp_do_not_keepdims_example", 1u << 1, NULL,
                 "function main {\n"
                 "  %ReduceLogSumExp#0 = ReduceLogSumExp(%data) {axes=[1], keepdims=0} : "
                 "f64[3, 2]\n"
                 "  Save(%ReduceLogSumExp#0, %reduced)\n"
                 "}\n");
    expect_graph("test_reduce_sum_keepdims_example", 0, legacy_axes,
                 "function main {\n"
                 "  %sum_dup = ReduceSum(%data) {axes=[0, 2], keepdims=1} : f32[1, 2, 1]\n"
                 "  Save(%sum_dup, %reduced)\n"
                 "}\n");
    expect_fail("test_reduce_sum_keepdims_example", 0, legacy_duplicate_axes, GLOW_ERR_BAD_ATTR,
                "ReduceSum 'sum_dup' (opset 11): axis 2 is listed twice");
    /* Opset 20 bool ReduceMax/ReduceMin reduce 0/1 as u8. */
    expect_graph("test_reduce_max_bool_inputs", 1u << 1, NULL,
                 "function main {\n"
                 "  %ReduceMax#0/cast0 = Cast(%data) : u8[4, 2]\n"
                 "  %ReduceMax#0 = ReduceMax(%ReduceMax#0/cast0) {axes=[1], keepdims=1} : "
                 "u8[4, 1]\n"
                 "  %ReduceMax#0/cast1 = Cast(%ReduceMax#0) : bool[4, 1]\n"
                 "  Save(%ReduceMax#0/cast1, %reduced)\n"
                 "}\n");
    expect_graph("test_reduce_min_bool_inputs", 1u << 1, NULL,
                 "function main {\n"
                 "  %ReduceMin#0/cast0 = Cast(%data) : u8[4, 2]\n"
                 "  %ReduceMin#0 = ReduceMin(%ReduceMin#0/cast0) {axes=[1], keepdims=1} : "
                 "u8[4, 1]\n"
                 "  %ReduceMin#0/cast1 = Cast(%ReduceMin#0) : bool[4, 1]\n"
                 "  Save(%ReduceMin#0/cast1, %reduced)\n"
                 "}\n");
}

static void arg_topk_cum(void)
{
    expect_graph("test_argmax_negative_axis_keepdims_example", 0, NULL,
                 "function main {\n"
                 "  %ArgMax#0 = ArgMax(%data) {axis=1, keepdims=1, select_last_index=0} : "
                 "i64[2, 1]\n"
                 "  Save(%ArgMax#0, %result)\n"
                 "}\n");
    expect_graph("test_argmin_no_keepdims_example_select_last_index", 0, NULL,
                 "function main {\n"
                 "  %ArgMin#0 = ArgMin(%data) {axis=1, keepdims=0, select_last_index=1} : "
                 "i64[2]\n"
                 "  Save(%ArgMin#0, %result)\n"
                 "}\n");
    expect_graph("test_top_k", 1u << 1, NULL,
                 "function main {\n"
                 "  %TopK#0 = TopK(%x) {axis=1, k=3, largest=1, sorted=1} : f32[3, 3], "
                 "i64[3, 3]\n"
                 "  Save(%TopK#0, %values)\n"
                 "  Save(%TopK#0.1, %indices)\n"
                 "}\n");
    expect_graph("test_top_k", 0, legacy_topk,
                 "function main {\n"
                 "  %TopK#0 = TopK(%x) {axis=1, k=2, largest=1, sorted=1} : f32[3, 2], "
                 "i64[3, 2]\n"
                 "  Save(%TopK#0, %values)\n"
                 "  Save(%TopK#0.1, %indices)\n"
                 "}\n");
    expect_graph("test_cumsum_1d_exclusive", 1u << 1, NULL,
                 "function main {\n"
                 "  %CumSum#0 = CumSum(%x) {axis=0, exclusive=1, reverse=0} : f64[5]\n"
                 "  Save(%CumSum#0, %y)\n"
                 "}\n");
    expect_fail("test_cumsum_1d_exclusive", 0, NULL, GLOW_ERR_UNSUPPORTED,
                "CumSum 'CumSum#0' (opset 14): input 1 'axis' must be a constant");
}

int main(void)
{
    reductions();
    arg_topk_cum();
    return CHECK_DONE();
}
