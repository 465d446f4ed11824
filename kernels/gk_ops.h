// gk_ops.h - The op codes the kernels take as arguments: one header for the kernels, their tests
// and the CPU backend, which passes these values as constant `int` arguments (kernels.def).
//
// The values are part of the kernels' calling convention (the backend calls them by name with
// these numbers), so existing values never change; a new op takes the next value.
#ifndef GK_OPS_H
#define GK_OPS_H

/* gk_unary_f32_*: the evaluator's f32 fast-path unary ops. */
typedef enum {
    GK_UN_RELU = 1,
    GK_UN_NEG = 2,
    GK_UN_ABS = 3,
    GK_UN_SQRT = 4,
    GK_UN_EXP = 5,
    GK_UN_TANH = 6,
    GK_UN_SIGMOID = 7,
    GK_UN_LOG = 8,
} gk_unary_op;

/* gk_binary_f32_*: same-shape binary ops (max and min propagate NaN). */
typedef enum {
    GK_BIN_ADD = 1,
    GK_BIN_SUB = 2,
    GK_BIN_MUL = 3,
    GK_BIN_DIV = 4,
    GK_BIN_MAX = 5,
    GK_BIN_MIN = 6,
    GK_BIN_POW = 7,
} gk_binary_op;

/* Fused activations: gk_act_f32_* and the epilogues of the conv, matmul and GEMM kernels (the
 * `act` argument, with `alpha` and `beta`). The backend maps the graph's fused_act attribute
 * and the activation nodes onto them. */
typedef enum {
    GK_ACT_NONE = 0,
    GK_ACT_RELU = 1,
    GK_ACT_CLIP = 2,       /* min(max(x, alpha), beta) */
    GK_ACT_LEAKY_RELU = 3, /* x < 0 ? alpha * x : x */
    GK_ACT_SIGMOID = 4,    /* from here on not vectorized in the blocked kernels' epilogues */
    GK_ACT_TANH = 5,
} gk_act_kind;

/* gk_reduce_f32_*: reductions over the middle dim of [outer, n, inner]. */
typedef enum {
    GK_RED_SUM = 1,
    GK_RED_MEAN = 2,
    GK_RED_MAX = 3,
    GK_RED_MIN = 4,
} gk_reduce_op;

/* gk_chain_f32_*: a run of up to GK_CHAIN_MAX same-size elementwise steps in one loop. Step k's
 * op is > 0 a gk_unary_op, < 0 the gk_binary_op -op, or GK_CHAIN_CLIP for
 * min(max(a, p), q). */
typedef enum {
    GK_CHAIN_MAX = 4,
    GK_CHAIN_CLIP = 100,
} gk_chain_code;

/* gk_resize_f32_*: Resize's sampling mode, coordinate transformation and nearest rounding
 * (the ONNX attribute strings; kernels/resize_math.h). */
typedef enum {
    GK_RESIZE_NEAREST = 1,
    GK_RESIZE_LINEAR = 2,
    GK_RESIZE_CUBIC = 3,
} gk_resize_mode;

typedef enum {
    GK_COORD_HALF_PIXEL = 1,
    GK_COORD_ASYMMETRIC = 2,
    GK_COORD_ALIGN_CORNERS = 3,
    GK_COORD_PYTORCH_HALF_PIXEL = 4,
    GK_COORD_TF_HALF_PIXEL_FOR_NN = 5,
    GK_COORD_HALF_PIXEL_SYMMETRIC = 6,
    GK_COORD_TF_CROP_AND_RESIZE = 7,
} gk_coord_mode;

typedef enum {
    GK_NEAREST_ROUND_PREFER_FLOOR = 1,
    GK_NEAREST_ROUND_PREFER_CEIL = 2,
    GK_NEAREST_FLOOR = 3,
    GK_NEAREST_CEIL = 4,
} gk_nearest_mode;

#endif
