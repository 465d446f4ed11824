// test_ops_shape.c - Imports node-suite models of the reshaping, data-movement, gather/scatter
// and resize ops and checks the nodes, normalized attributes and result types they become.
#include "check.h"
#include "testlib/onnx_edit.h"

/* Freeze masks: which graph inputs become initializers from the test data. */
#define ALL_BUT_0 0xfffffffeu
#define ALL 0xffffffffu

/* The printer quotes names outside a bare character set, which may grow ('#'): comparisons
 * ignore the quotes of %"name" so the goldens only pin down what the loaders decide. */
static char *unquote_names(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    while (*s) {
        if (s[0] == '%' && s[1] == '"') {
            *o++ = '%';
            for (s += 2; *s && *s != '"'; s++)
                *o++ = *s;
            if (*s)
                s++;
            continue;
        }
        *o++ = *s++;
    }
    *o = 0;
    return out;
}

/* expect_graph with the printed names unquoted. */
#define expect_unquoted(test, freeze, edit, expected) \
    CHECK(load_prints(test, freeze, edit, unquote_names, expected))

/* Replaces the int64 values of the initializer `name` (a frozen fed input). */
static void patch_ints(Onnx__ModelProto *mp, const char *name, const int64_t *v, size_t n)
{
    Onnx__GraphProto *g = mp->graph;
    for (size_t i = 0; i < g->n_initializer; i++) {
        Onnx__TensorProto *tp = g->initializer[i];
        if (strcmp(tp->name, name) != 0)
            continue;
        free(tp->raw_data.data);
        tp->raw_data.data = malloc(n * 8);
        memcpy(tp->raw_data.data, v, n * 8);
        tp->raw_data.len = n * 8;
        tp->has_raw_data = 1;
        free(tp->int64_data);
        tp->int64_data = NULL;
        tp->n_int64_data = 0;
        free(tp->dims);
        tp->dims = malloc(sizeof(int64_t));
        tp->dims[0] = (int64_t)n;
        tp->n_dims = 1;
    }
}

static void reshape_bad_shape(Onnx__ModelProto *mp)
{
    patch_ints(mp, "shape", (const int64_t[]){ 5, -1, 2 }, 3);
    set_node_name(mp->graph->node[0], "r");
}

/* Opset 4 Reshape takes its shape from an attribute. */
static void reshape_opset4(Onnx__ModelProto *mp)
{
    set_opset(mp, 4);
    keep_inputs(mp->graph->node[0], 1);
    set_ints_attr(mp->graph->node[0], "shape", (const int64_t[]){ 0, -1, 2 }, 3);
}

/* Opset 11 Squeeze takes its axes from an attribute. */
static void squeeze_opset11(Onnx__ModelProto *mp)
{
    set_opset(mp, 11);
    keep_inputs(mp->graph->node[0], 1);
    set_ints_attr(mp->graph->node[0], "axes", (const int64_t[]){ -2 }, 1);
}

static void squeeze_non_one(Onnx__ModelProto *mp)
{
    squeeze_opset11(mp);
    mp->graph->node[0]->attribute[mp->graph->node[0]->n_attribute - 1]->ints[0] = 1;
}

/* Opset 9 Slice: attributes starts/ends/axes, with INT64 extremes and negative values. */
static void slice_opset9(Onnx__ModelProto *mp)
{
    set_opset(mp, 9);
    Onnx__NodeProto *np = mp->graph->node[0];
    keep_inputs(np, 1);
    set_ints_attr(np, "starts", (const int64_t[]){ -3, INT64_MIN }, 2);
    set_ints_attr(np, "ends", (const int64_t[]){ INT64_MAX, -1 }, 2);
    set_ints_attr(np, "axes", (const int64_t[]){ -1, 0 }, 2);
}

static void transpose_bad_perm(Onnx__ModelProto *mp)
{
    set_ints_attr(mp->graph->node[0], "perm", (const int64_t[]){ 0, 0, 1 }, 3);
}

static void split_bad_sizes(Onnx__ModelProto *mp)
{
    patch_ints(mp, "split", (const int64_t[]){ 2, 3 }, 2);
}

/* Resize at opset 10: inputs (X, scales). */
static void resize_opset10(Onnx__ModelProto *mp)
{
    set_opset(mp, 10);
    Onnx__NodeProto *np = mp->graph->node[0];
    free(np->input[1]);
    np->input[1] = np->input[2];
    np->n_input = 2;
}

static void reshape_family(void)
{
    expect_unquoted("test_reshape_negative_dim", 2, NULL,
                    "function main {\n"
                    "  %Reshape#0 = Reshape(%data) : f32[2, 6, 2]\n"
                    "  Save(%Reshape#0, %reshaped)\n"
                    "}\n");
    expect_unquoted("test_reshape_negative_dim", 0, reshape_opset4,
                    "function main {\n"
                    "  %Reshape#0 = Reshape(%data) : f32[2, 6, 2]\n"
                    "  Save(%Reshape#0, %reshaped)\n"
                    "}\n");
    /* allowzero=1: the 0 is a real zero-sized dim, not a copy. */
    expect_unquoted("test_reshape_allowzero_reordered", 2, NULL,
                    "function main {\n"
                    "  %Reshape#0 = Reshape(%data) : f32[3, 4, 0]\n"
                    "  Save(%Reshape#0, %reshaped)\n"
                    "}\n");
    expect_fail("test_reshape_negative_dim", 0, NULL, GLOW_ERR_UNSUPPORTED,
                "Reshape 'Reshape#0' (opset 25): input 1 'shape' is computed at run time; "
                "glowc needs static shapes");
    expect_fail("test_reshape_negative_dim", 2, reshape_bad_shape, GLOW_ERR_BAD_SHAPE,
                "Reshape 'r' (opset 25): cannot reshape [2, 3, 4] (24 elements) to [5, -1, 2]");
    expect_unquoted("test_flatten_negative_axis1", 0, NULL,
                    "function main {\n"
                    "  %Flatten#0 = Reshape(%a) : f32[24, 5]\n"
                    "  Save(%Flatten#0, %b)\n"
                    "}\n");
    expect_unquoted("test_squeeze_negative_axes", 2, NULL,
                    "function main {\n"
                    "  %Squeeze#0 = Reshape(%x) : f32[1, 3, 5]\n"
                    "  Save(%Squeeze#0, %y)\n"
                    "}\n");
    expect_unquoted("test_squeeze_negative_axes", 0, squeeze_opset11,
                    "function main {\n"
                    "  %Squeeze#0 = Reshape(%x) : f32[1, 3, 5]\n"
                    "  Save(%Squeeze#0, %y)\n"
                    "}\n");
    expect_fail("test_squeeze_negative_axes", 0, squeeze_non_one, GLOW_ERR_BAD_SHAPE,
                "Squeeze 'Squeeze#0' (opset 11): cannot squeeze dim 1 of [1, 3, 1, 5]: its size "
                "is 3, not 1");
    expect_unquoted("test_unsqueeze_unsorted_axes", 2, NULL,
                    "function main {\n"
                    "  %Unsqueeze#0 = Reshape(%x) : f32[3, 4, 1, 5, 1, 1]\n"
                    "  Save(%Unsqueeze#0, %y)\n"
                    "}\n");
}

static void movement(void)
{
    expect_unquoted("test_transpose_default", 0, NULL,
                    "function main {\n"
                    "  %Transpose#0 = Transpose(%data) {perm=[2, 1, 0]} : f32[4, 3, 2]\n"
                    "  Save(%Transpose#0, %transposed)\n"
                    "}\n");
    expect_fail("test_transpose_default", 0, transpose_bad_perm, GLOW_ERR_BAD_ATTR,
                "Transpose 'Transpose#0' (opset 25): 'perm' is not a permutation of 0..2");
    expect_unquoted("test_split_variable_parts_2d_opset18", 2, NULL,
                    "function main {\n"
                    "  %Split#0 = Slice(%input) {starts=[0, 0], ends=[2, 2], steps=[1, 1]} "
                    ": f32[2, 2]\n"
                    "  %Split#0/Slice0 = Slice(%input) {starts=[0, 2], ends=[2, 6], "
                    "steps=[1, 1]} : f32[2, 4]\n"
                    "  Save(%Split#0, %output_1)\n"
                    "  Save(%Split#0/Slice0, %output_2)\n"
                    "}\n");
    expect_fail("test_split_variable_parts_2d_opset18", 2, split_bad_sizes, GLOW_ERR_BAD_ATTR,
                "'split' sums to 5 but axis 1 has size 6");
    /* num_outputs=4 over 7: chunks of 2 and a last one of 1. */
    expect_unquoted("test_split_1d_uneven_split_opset18", 0, NULL,
                    "function main {\n"
                    "  %Split#0 = Slice(%input) {starts=[0], ends=[2], steps=[1]} : f32[2]\n"
                    "  %Split#0/Slice0 = Slice(%input) {starts=[2], ends=[4], steps=[1]} : f32[2]\n"
                    "  %Split#0/Slice1 = Slice(%input) {starts=[4], ends=[6], steps=[1]} : f32[2]\n"
                    "  %Split#0/Slice2 = Slice(%input) {starts=[6], ends=[7], steps=[1]} : f32[1]\n"
                    "  Save(%Split#0, %output_1)\n"
                    "  Save(%Split#0/Slice0, %output_2)\n"
                    "  Save(%Split#0/Slice1, %output_3)\n"
                    "  Save(%Split#0/Slice2, %output_4)\n"
                    "}\n");
    /* x[20:0:-1, 10:0:-3, 4:1:-2] on [20, 10, 5]: starts clamp to dim-1. */
    expect_unquoted("test_slice_neg_steps", ALL_BUT_0, NULL,
                    "function main {\n"
                    "  %Slice#0 = Slice(%x) {starts=[19, 9, 4], ends=[0, 0, 1], "
                    "steps=[-1, -3, -2]} : f32[19, 3, 2]\n"
                    "  Save(%Slice#0, %y)\n"
                    "}\n");
    expect_unquoted("test_slice_default_axes", ALL_BUT_0, NULL,
                    "function main {\n"
                    "  %Slice#0 = Slice(%x) {starts=[0, 0, 3], ends=[20, 10, 4], "
                    "steps=[1, 1, 1]} : f32[20, 10, 1]\n"
                    "  Save(%Slice#0, %y)\n"
                    "}\n");
    expect_unquoted("test_slice_default_axes", 0, slice_opset9,
                    "function main {\n"
                    "  %Slice#0 = Slice(%x) {starts=[0, 0, 2], ends=[19, 10, 5], "
                    "steps=[1, 1, 1]} : f32[19, 10, 3]\n"
                    "  Save(%Slice#0, %y)\n"
                    "}\n");
    expect_unquoted("test_edge_pad", 2, NULL,
                    "function main {\n"
                    "  %Pad#0 = Pad(%x) {pads=[0, 0, 1, 1, 0, 0, 1, 1], mode=\"edge\", "
                    "value=0} : i32[1, 3, 6, 7]\n"
                    "  Save(%Pad#0, %y)\n"
                    "}\n");
    expect_unquoted("test_reflect_pad", 2, NULL,
                    "function main {\n"
                    "  %Pad#0 = Pad(%x) {pads=[0, 0, 1, 1, 0, 0, 1, 1], mode=\"reflect\", "
                    "value=0} : i32[1, 3, 6, 7]\n"
                    "  Save(%Pad#0, %y)\n"
                    "}\n");
    expect_unquoted("test_expand_dim_changed", 2, NULL,
                    "function main {\n"
                    "  %Expand#0/reshape0 = Reshape(%data) : f32[1, 3, 1]\n"
                    "  %Expand#0 = Broadcast(%Expand#0/reshape0) : f32[2, 3, 6]\n"
                    "  Save(%Expand#0, %expanded)\n"
                    "}\n");
    expect_unquoted("test_tile", 2, NULL,
                    "function main {\n"
                    "  %Tile#0 = Tile(%x) {repeats=[7, 6, 4, 2]} : f32[14, 18, 16, 10]\n"
                    "  Save(%Tile#0, %z)\n"
                    "}\n");
    expect_unquoted("test_depthtospace_crd_mode_example", 0, NULL,
                    "function main {\n"
                    "  %DepthToSpace#0 = DepthToSpace(%x) {mode=\"CRD\", blocksize=2} "
                    ": f32[1, 2, 4, 6]\n"
                    "  Save(%DepthToSpace#0, %y)\n"
                    "}\n");
}

static void indexing(void)
{
    expect_unquoted("test_gather_negative_indices", 2, NULL,
                    "function main {\n"
                    "  %Gather#0 = Gather(%data, %indices) {axis=0} : f32[3]\n"
                    "  Save(%Gather#0, %y)\n"
                    "}\n");
    expect_unquoted("test_onehot_with_negative_axis", 6, NULL,
                    "function main {\n"
                    "  %OneHot#0 = OneHot(%indices, %depth, %values) {axis=1, depth=10} "
                    ": f32[2, 10, 2]\n"
                    "  Save(%OneHot#0, %y)\n"
                    "}\n");
    expect_unquoted("test_scatternd_max", 6, NULL,
                    "function main {\n"
                    "  %ScatterND#0 = ScatterND(%data, %indices, %updates) {reduction=\"max\"} "
                    ": f32[4, 4, 4]\n"
                    "  Save(%ScatterND#0, %y)\n"
                    "}\n");
    /* TensorScatter: one ScatterElements at write_indices[b] + s along the sequence axis. */
    expect_unquoted("test_tensorscatter", 0, NULL,
                    "function main {\n"
                    "  %TensorScatter#0/reshape0 = Reshape(%write_indices) : i64[2, 1, 1, 1]\n"
                    "  %TensorScatter#0 = Add(%TensorScatter#0/reshape0, %TensorScatter#0/bcast1) "
                    ": i64[2, 1, 1, 1]\n"
                    "  %TensorScatter#0/bcast2 = Broadcast(%TensorScatter#0) : i64[2, 1, 1, 5]\n"
                    "  %TensorScatter#0/ScatterElements3 = ScatterElements(%past_cache, "
                    "%TensorScatter#0/bcast2, %update) {axis=2, reduction=\"none\"} : "
                    "f32[2, 1, 4, 5]\n"
                    "  Save(%TensorScatter#0/ScatterElements3, %present_cache)\n"
                    "}\n");
    /* A constant condition turns Compress into a Gather of constant positions. */
    expect_unquoted("test_compress_default_axis", 2, NULL,
                    "function main {\n"
                    "  %Compress#0/reshape0 = Reshape(%input) : f32[6]\n"
                    "  %Compress#0 = Gather(%Compress#0/reshape0, %Compress#0/indices) "
                    "{axis=0} : f32[2]\n"
                    "  Save(%Compress#0, %output)\n"
                    "}\n");
    /* Fed at run time: one node bounded by the element count, with its count saved into a
     * hidden output (docs/dynamic-shapes.md). */
    expect_unquoted("test_nonzero_example", 0, NULL,
                    "function main {\n"
                    "  %NonZero#0 = NonZero(%condition) : i64[2, 4], i64[]\n"
                    "  Save(%NonZero#0, %result)\n"
                    "  Save(%NonZero#0.1, %result/count)\n"
                    "}\n");
    expect_unquoted("test_unique_not_sorted_without_axis", ALL, NULL,
                    "function main {\n"
                    "  Save(%Unique#0, %Y)\n"
                    "  Save(%Unique#0/indices, %indices)\n"
                    "  Save(%Unique#0/inverse_indices, %inverse_indices)\n"
                    "  Save(%Unique#0/counts, %counts)\n"
                    "}\n");
}

static void resize(void)
{
    expect_unquoted("test_resize_upsample_scales_nearest", 6, NULL,
                    "function main {\n"
                    "  %Resize#0 = Resize(%X) {mode=\"nearest\", scales=[1, 1, 2, 3], "
                    "coordinate_transformation_mode=\"half_pixel\", "
                    "nearest_mode=\"round_prefer_floor\", cubic_coeff_a=-0.75, exclude_outside=0, "
                    "extrapolation_value=0} : f32[1, 1, 4, 6]\n"
                    "  Save(%Resize#0, %Y)\n"
                    "}\n");
    expect_unquoted("test_resize_upsample_scales_nearest", 6, resize_opset10,
                    "function main {\n"
                    "  %Resize#0 = Resize(%X) {mode=\"nearest\", scales=[1, 1, 2, 3], "
                    "coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"floor\", "
                    "cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0} "
                    ": f32[1, 1, 4, 6]\n"
                    "  Save(%Resize#0, %Y)\n"
                    "}\n");
    /* sizes [3, 1] from [4, 4]: the effective scales are out / in. */
    expect_unquoted("test_resize_downsample_sizes_linear_pytorch_half_pixel", ALL_BUT_0, NULL,
                    "function main {\n"
                    "  %Resize#0 = Resize(%X) {mode=\"linear\", scales=[1, 1, 0.75, 0.25], "
                    "coordinate_transformation_mode=\"pytorch_half_pixel\", "
                    "nearest_mode=\"round_prefer_floor\", cubic_coeff_a=-0.75, exclude_outside=0, "
                    "extrapolation_value=0} : f32[1, 1, 3, 1]\n"
                    "  Save(%Resize#0, %Y)\n"
                    "}\n");
    /* not_larger: one scale min(7/2, 8/2) for both axes. */
    expect_unquoted("test_resize_upsample_sizes_nearest_not_larger", ALL_BUT_0, NULL,
                    "function main {\n"
                    "  %Resize#0 = Resize(%X) {mode=\"nearest\", scales=[1, 1, 3.5, 3.5], "
                    "coordinate_transformation_mode=\"half_pixel\", "
                    "nearest_mode=\"round_prefer_floor\", cubic_coeff_a=-0.75, exclude_outside=0, "
                    "extrapolation_value=0} : f32[1, 1, 7, 7]\n"
                    "  Save(%Resize#0, %Y)\n"
                    "}\n");
    /* axes [3, 2]: roi entries land on their dims. */
    expect_unquoted("test_resize_tf_crop_and_resize_axes_3_2", ALL_BUT_0, NULL,
                    "function main {\n"
                    "  %Resize#0 = Resize(%X) {mode=\"linear\", scales=[1, 1, 0.75, 0.75], "
                    "coordinate_transformation_mode=\"tf_crop_and_resize\", "
                    "nearest_mode=\"round_prefer_floor\", cubic_coeff_a=-0.75, exclude_outside=0, "
                    "extrapolation_value=0, roi=[0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8]} "
                    ": f32[1, 1, 3, 3]\n"
                    "  Save(%Resize#0, %Y)\n"
                    "}\n");
    expect_unquoted("test_upsample_nearest", 2, NULL,
                    "function main {\n"
                    "  %Upsample#0 = Resize(%X) {mode=\"nearest\", scales=[1, 1, 2, 3], "
                    "coordinate_transformation_mode=\"asymmetric\", nearest_mode=\"floor\", "
                    "cubic_coeff_a=-0.75, exclude_outside=0, extrapolation_value=0} "
                    ": f32[1, 1, 4, 6]\n"
                    "  Save(%Upsample#0, %Y)\n"
                    "}\n");
    /* Antialias: one MatMul per resized axis with a constant interpolation matrix. */
    expect_load("test_resize_downsample_scales_linear_antialias", ALL_BUT_0, NULL, GLOW_OK,
                "MatMul(%Resize#0/reshape4, %Resize#0/antialias) : f32[2, 2]");
}

/* An expanded function body (CenterCropPad): Shape, arithmetic and Concat fold at import, so
 * Pad (opset 18, with axes) and Slice get static attributes. */
static void folded_shape_subgraph(void)
{
    expect_unquoted("test_center_crop_pad_crop_and_pad_expanded", 2, NULL,
                    "function main {\n"
                    "  %Pad#7 = Pad(%x) {pads=[0, 1, 0, 0, 1, 0], mode=\"constant\", value=0} "
                    ": f32[20, 10, 3]\n"
                    "  %Slice#12 = Slice(%Pad#7) {starts=[5, 0, 0], ends=[15, 10, 3], "
                    "steps=[1, 1, 1]} : f32[10, 10, 3]\n"
                    "  Save(%Slice#12, %y)\n"
                    "}\n");
}

int main(void)
{
    reshape_family();
    movement();
    indexing();
    resize();
    folded_shape_subgraph();
    return CHECK_DONE();
}
