// test_ops_misc.c - Misc and signal loaders (crop/pad, grid, Col2Im, MaxUnpool, Det, windows,
// mel filters, DFT, STFT, GridSample): node-suite
// models (shape-like inputs specialized from the test data) evaluated node by node against
// ONNX's outputs, plus the refusals.
#include "check.h"
#include "testlib/node_eval.h"
#include "testlib/onnx_edit.h"

static const char *const passing[] = {
    "test_hannwindow",
    "test_hannwindow_symmetric",
    "test_hammingwindow",
    "test_hammingwindow_symmetric",
    "test_blackmanwindow",
    "test_blackmanwindow_symmetric",
    "test_melweightmatrix",
    "test_center_crop_pad_crop",
    "test_center_crop_pad_crop_and_pad",
    "test_center_crop_pad_crop_axes_chw",
    "test_center_crop_pad_crop_axes_hwc",
    "test_center_crop_pad_crop_negative_axes_hwc",
    "test_center_crop_pad_pad",
    "test_affine_grid_2d",
    "test_affine_grid_2d_align_corners",
    "test_affine_grid_3d",
    "test_affine_grid_3d_align_corners",
    "test_col2im",
    "test_col2im_5d",
    "test_col2im_dilations",
    "test_col2im_pads",
    "test_col2im_strides",
    "test_maxunpool_export_with_output_shape",
    "test_maxunpool_export_without_output_shape",
    "test_det_2d",
    "test_det_nd",
    "test_dft",
    "test_dft_axis",
    "test_dft_axis_opset19",
    "test_dft_inverse",
    "test_dft_inverse_opset19",
    "test_dft_irfft",
    "test_dft_irfft_opset19",
    "test_dft_opset19",
    "test_dft_rfft",
    "test_dft_rfft_opset19",
    "test_stft",
    "test_stft_with_window",
    "test_gridsample",
    "test_gridsample_aligncorners_true",
    "test_gridsample_bilinear",
    "test_gridsample_bilinear_align_corners_0_additional_1",
    "test_gridsample_bilinear_align_corners_1_additional_1",
    "test_gridsample_border_padding",
    "test_gridsample_nearest",
    "test_gridsample_nearest_align_corners_0_additional_1",
    "test_gridsample_nearest_align_corners_1_additional_1",
    "test_gridsample_volumetric_bilinear_align_corners_0",
    "test_gridsample_volumetric_bilinear_align_corners_1",
    "test_gridsample_volumetric_nearest_align_corners_0",
    "test_gridsample_volumetric_nearest_align_corners_1",
    "test_gridsample_zeros_padding",
    "test_gridsample_bicubic",
    "test_gridsample_bicubic_align_corners_0_additional_1",
    "test_gridsample_bicubic_align_corners_1_additional_1",
    "test_gridsample_reflection_padding",
};

/* Shape-like inputs must be known at compile time: without values they are refused by name. */
static void test_needs_constants(void)
{
    expect_load("test_col2im", 0, NULL, GLOW_ERR_UNSUPPORTED, "'image_shape' must be a constant");
    /* With them frozen, the window is a constant computed at import. */
    expect_load("test_hannwindow", 1, NULL, GLOW_OK, "Save(%HannWindow#0/window, %y)");
    /* MaxUnpool writes through ScatterElements; Col2Im sums with reduction add. */
    expect_load("test_maxunpool_export_without_output_shape", 0, NULL, GLOW_OK, "ScatterElements(");
    expect_load("test_col2im_pads", 6, NULL, GLOW_OK, "reduction=\"add\"");
}

static void det4(Onnx__ModelProto *mp)
{
    Onnx__TensorShapeProto *s = mp->graph->input[0]->type->tensor_type->shape;
    s->dim[0]->dim_value = 4;
    s->dim[1]->dim_value = 4;
}

static void crop_bad_axes(Onnx__ModelProto *mp)
{
    static const int64_t axes[2] = { 0, 0 };
    for (size_t i = 0; i < mp->graph->node[0]->n_attribute; i++)
        if (!strcmp(mp->graph->node[0]->attribute[i]->name, "axes"))
            memcpy(mp->graph->node[0]->attribute[i]->ints, axes, sizeof axes);
}

static void dft_last_axis(Onnx__ModelProto *mp)
{
    Onnx__TensorProto *t = mp->graph->initializer[mp->graph->n_initializer - 1];
    int64_t v = 3;
    if (t->raw_data.len == sizeof v)
        memcpy(t->raw_data.data, &v, sizeof v);
    else if (t->n_int64_data == 1)
        t->int64_data[0] = v;
}

static void grid_bad_padding(Onnx__ModelProto *mp)
{
    Onnx__NodeProto *n = mp->graph->node[0];
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, "padding_mode")) {
            free(n->attribute[i]->s.data);
            n->attribute[i]->s.data = (uint8_t *)strdup("mirror");
            n->attribute[i]->s.len = 6;
        }
}

static void test_refusals(void)
{
    expect_load("test_det_2d", 0, det4, GLOW_ERR_UNSUPPORTED, "4x4");
    /* DFT's axis may not name the trailing real/imaginary dim. */
    expect_load("test_dft_axis", 2, dft_last_axis, GLOW_ERR_BAD_ATTR, "axis is out of range");
    /* GridSample's modes and padding modes outside ONNX's lists are refused by name. */
    expect_load("test_gridsample_reflection_padding", 0, grid_bad_padding, GLOW_ERR_BAD_ATTR,
                "padding_mode 'mirror'");
    expect_load("test_center_crop_pad_crop_axes_hwc", 2, crop_bad_axes, GLOW_ERR_BAD_ATTR,
                "listed twice");
}

int main(void)
{
    int failed = 0, n = (int)(sizeof passing / sizeof passing[0]);
    int pass = node_eval_all(passing, n, &failed);
    CHECK_EQ(failed, 0);
    printf("misc node tests: %d/%d evaluate correctly\n", pass, n);
    test_needs_constants();
    test_refusals();
    return CHECK_DONE();
}
