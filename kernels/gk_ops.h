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

/* gk_reduce_*: reductions (f32: over the middle dim of [outer, n, inner]; any: strided). */
typedef enum {
    GK_RED_SUM = 1,
    GK_RED_MEAN = 2,
    GK_RED_MAX = 3,
    GK_RED_MIN = 4,
    GK_RED_PROD = 5,       /* from here on gk_reduce_any_* only */
    GK_RED_L1 = 6,
    GK_RED_L2 = 7,
    GK_RED_LOG_SUM = 8,
    GK_RED_LOG_SUM_EXP = 9,
    GK_RED_SUM_SQUARE = 10,
} gk_reduce_op;

/* gk_chain_f32_*: a run of up to GK_CHAIN_MAX same-size elementwise steps in one loop. Step k's
 * op is > 0 a gk_unary_op, < 0 the gk_binary_op -op, GK_CHAIN_CLIP for min(max(a, p), q),
 * GK_CHAIN_LEAKY_RELU for a < 0 ? a * p : a,
 * GK_CHAIN_TYPED + a gk_typed_unary (with its p, q) or -(GK_CHAIN_TYPED + a gk_typed_binary):
 * that op of the typed kernels on f32 (computed in f64, rounded once). */
typedef enum {
    GK_CHAIN_MAX = 4,
    GK_CHAIN_CLIP = 100,
    GK_CHAIN_LEAKY_RELU = 101,
    GK_CHAIN_TYPED = 200,
} gk_chain_code;

/* gk_pad_*: Pad's modes (index_math.h maps a coordinate under each). */
typedef enum {
    GK_PAD_CONSTANT = 0,
    GK_PAD_REFLECT = 1,
    GK_PAD_EDGE = 2,
    GK_PAD_WRAP = 3,
} gk_pad_mode;

/* gk_unary_any_*: the evaluator's unary elementwise ops of every kind, with two parameters
 * (p, q) where the op has them. */
typedef enum {
    GK_TU_RELU = 1,
    GK_TU_SIGMOID = 2,
    GK_TU_TANH = 3,
    GK_TU_EXP = 4,
    GK_TU_LOG = 5,
    GK_TU_SQRT = 6,
    GK_TU_ABS = 7,
    GK_TU_NEG = 8,
    GK_TU_FLOOR = 9,
    GK_TU_CEIL = 10,
    GK_TU_ROUND = 11,
    GK_TU_RECIPROCAL = 12,
    GK_TU_ERF = 13,
    GK_TU_SIN = 14,
    GK_TU_COS = 15,
    GK_TU_TAN = 16,
    GK_TU_ASIN = 17,
    GK_TU_ACOS = 18,
    GK_TU_ATAN = 19,
    GK_TU_SINH = 20,
    GK_TU_COSH = 21,
    GK_TU_ASINH = 22,
    GK_TU_ACOSH = 23,
    GK_TU_ATANH = 24,
    GK_TU_SIGN = 25,
    GK_TU_ISNAN = 26,
    GK_TU_ISINF = 27,            /* p: detect positive, q: detect negative (0 or 1) */
    GK_TU_SOFTPLUS = 28,
    GK_TU_SOFTSIGN = 29,
    GK_TU_ELU = 30,              /* p: alpha */
    GK_TU_SELU = 31,             /* p: alpha, q: gamma */
    GK_TU_CELU = 32,             /* p: alpha */
    GK_TU_LEAKY_RELU = 33,       /* p: alpha */
    GK_TU_THRESHOLDED_RELU = 34, /* p: alpha */
    GK_TU_HARD_SIGMOID = 35,     /* p: alpha, q: beta */
    GK_TU_HARD_SWISH = 36,
    GK_TU_GELU = 37,
    GK_TU_GELU_TANH = 38,
    GK_TU_MISH = 39,
    GK_TU_SHRINK = 40,           /* p: lambd, q: bias */
    GK_TU_CLIP = 41,             /* p: min, q: max */
    GK_TU_BITWISE_NOT = 42,
    GK_TU_NOT = 43,
} gk_typed_unary;

/* gk_binary_any_*: the evaluator's binary elementwise ops of every kind. */
typedef enum {
    GK_TB_ADD = 1,
    GK_TB_SUB = 2,
    GK_TB_MUL = 3,
    GK_TB_DIV = 4,
    GK_TB_MOD = 5,               /* sign of the divisor (Mod fmod=0) */
    GK_TB_FMOD = 6,              /* sign of the dividend (Mod fmod=1) */
    GK_TB_POW = 7,
    GK_TB_MAX = 8,
    GK_TB_MIN = 9,
    GK_TB_PRELU = 10,
    GK_TB_EQUAL = 11,
    GK_TB_LESS = 12,
    GK_TB_LESS_EQUAL = 13,
    GK_TB_GREATER = 14,
    GK_TB_GREATER_EQUAL = 15,
    GK_TB_AND = 16,
    GK_TB_OR = 17,
    GK_TB_XOR = 18,
    GK_TB_BITWISE_AND = 19,
    GK_TB_BITWISE_OR = 20,
    GK_TB_BITWISE_XOR = 21,
    GK_TB_SHL = 22,              /* BitShift LEFT */
    GK_TB_SHR = 23,              /* BitShift RIGHT */
} gk_typed_binary;
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

/* The run's error record, four int64 in the activations (the program's cpu.err, zeroed at
 * the start of every run) that the kernels able to fail write: the first failure's code
 * (1 + the failing instruction's id; later failures on any thread keep the first), the bad
 * value (an index, a sequence length), its position in its tensor and the bound it broke. */
enum { GK_ERR_CODE, GK_ERR_VALUE, GK_ERR_POS, GK_ERR_BOUND, GK_ERR_WORDS };

/* gk_scatter_*_any: how an update combines with the element it lands on. */
typedef enum {
    GK_SCATTER_ADD = 1,
    GK_SCATTER_MUL = 2,
    GK_SCATTER_MAX = 3,
    GK_SCATTER_MIN = 4,
} gk_scatter_op;

#endif
