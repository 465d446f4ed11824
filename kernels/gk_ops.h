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
 * op is > 0 a gk_unary_op, < 0 the gk_binary_op -op, or GK_CHAIN_CLIP for
 * min(max(a, p), q). */
typedef enum {
    GK_CHAIN_MAX = 4,
    GK_CHAIN_CLIP = 100,
} gk_chain_code;

#endif
