// test_resize_math.c - Resize's sampling math (kernels/resize_math.h, shared by the evaluator
// and the cpu kernel) where a nearest coordinate lands exactly on a source element: the
// Resize nodes ONNX Runtime and glowc's fuzzer models disagreed on (docs/fuzzing.md, seeds
// 703, 920, 1086, 1436, 1679).
#include <math.h>

#include "check.h"

#include "../../kernels/resize_math.h"

/* The source element nearest sampling picks for result element o of a dim resized from `in`
 * to `out` elements, with the node's float scale. */
static int64_t pick(int coord, int nearest, float scale, int64_t o, int64_t out, int64_t in)
{
    bool outside = false;
    double x = gk_resize_coord(coord, (double)o, scale, out, in, 0, 1, &outside);
    gk_taps t;
    gk_resize_taps(GK_RESIZE_NEAREST, nearest, -0.75, false, x, in, &t);
    CHECK_EQ(t.n, 2);
    CHECK(t.w[0] + t.w[1] == 1);
    return t.w[1] == 1 ? t.idx[1] : t.idx[0];
}

/* Sizes reach the kernels as the float scale out/in. Its rounding must not move a coordinate
 * that is exactly a source position: 3 -> 1 with half_pixel maps 0 to (0 + 0.5) * 3 - 0.5 = 1,
 * which floor keeps at 1 (the float 1/3 alone gives 1 - 6e-8, floor 0). */
static void test_sizes_ratio(void)
{
    CHECK_EQ(pick(GK_COORD_HALF_PIXEL, GK_NEAREST_FLOOR, 1.0f / 3, 0, 1, 3), 1);
    /* 9 -> 13, half_pixel: 6 maps to 6.5 * 9 / 13 - 0.5 = 4; ceil keeps 4 */
    CHECK_EQ(pick(GK_COORD_HALF_PIXEL, GK_NEAREST_CEIL, 13.0f / 9, 6, 13, 9), 4);
    /* 5 -> 10, pytorch_half_pixel (scale 2, exact): 1 maps to 1.5 / 2 - 0.5 = 0.25 */
    CHECK_EQ(pick(GK_COORD_PYTORCH_HALF_PIXEL, GK_NEAREST_CEIL, 2.0f, 1, 10, 5), 1);
    /* 3 -> 4, asymmetric: 2 maps to 2 * 3 / 4 = 1.5, a tie round_prefer_ceil takes up (2) and
     * round_prefer_floor down (1) */
    CHECK_EQ(pick(GK_COORD_ASYMMETRIC, GK_NEAREST_ROUND_PREFER_CEIL, 4.0f / 3, 2, 4, 3), 2);
    CHECK_EQ(pick(GK_COORD_ASYMMETRIC, GK_NEAREST_ROUND_PREFER_FLOOR, 4.0f / 3, 2, 4, 3), 1);
}

/* A given scale that is not out/in stays the scale the coordinate divides by: 0.6 on 4
 * elements gives 2 results, and asymmetric maps 1 to 1 / 0.6 = 1.67 (not 1 / 0.5 = 2). */
static void test_given_scale(void)
{
    CHECK_EQ(pick(GK_COORD_ASYMMETRIC, GK_NEAREST_FLOOR, 0.6f, 1, 2, 4), 1);
    bool outside = false;
    double x = gk_resize_coord(GK_COORD_ASYMMETRIC, 1, 0.6f, 2, 4, 0, 1, &outside);
    CHECK(x > 1.66 && x < 1.67);
    /* align_corners over the fractional length scale * in (ONNX's reference) is kept too */
    x = gk_resize_coord(GK_COORD_ALIGN_CORNERS, 1, 1.7f, 6, 4, 0, 1, &outside);
    CHECK(fabs(x - 3.0 / (1.7f * 4.0 - 1)) < 1e-12);
}

int main(void)
{
    test_sizes_ratio();
    test_given_scale();
    return CHECK_DONE();
}
