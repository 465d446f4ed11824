// eltwise_scalar.c - Reference f32 elementwise kernels (unary, binary, fused activation,
// byte copy): plain loops over a thread's share of the math in scalar_math.h, which the
// evaluator shares.
//
// The op code is an argument rather than one function per op: the backend passes it as a
// constant, so after inlining the switch folds away and each call site is a single loop.
// Outputs may alias inputs (in-place elementwise): every element is read before it is written.
#include "kernels.h"
#include "scalar_math.h"
#include "typed_math.h"

/* Grain of the thread split: one 64-byte line of floats, so shares end on vector bounds. */
#define GRAIN 16

/* One element of each op: the op code picks the function of scalar_math.h (the evaluator's
 * f32 fast paths call the same ones). */
static inline float unary1(int op, float x)
{
    switch (op) {
    case GK_UN_RELU: return gk_relu_f32(x);
    case GK_UN_NEG: return gk_neg_f32(x);
    case GK_UN_ABS: return gk_abs_f32(x);
    case GK_UN_SQRT: return gk_sqrt_f32(x);
    case GK_UN_EXP: return gk_exp_f32(x);
    case GK_UN_TANH: return gk_tanh_f32(x);
    case GK_UN_SIGMOID: return gk_sigmoid_f32(x);
    case GK_UN_LOG: return gk_log_f32(x);
    default: return x;
    }
}

static inline float binary1(int op, float a, float b)
{
    switch (op) {
    case GK_BIN_ADD: return gk_add_f32(a, b);
    case GK_BIN_SUB: return gk_sub_f32(a, b);
    case GK_BIN_MUL: return gk_mul_f32(a, b);
    case GK_BIN_DIV: return gk_div_f32(a, b);
    case GK_BIN_MAX: return gk_max_f32(a, b);
    case GK_BIN_MIN: return gk_min_f32(a, b);
    case GK_BIN_POW: return gk_pow_f32(a, b);
    default: return a;
    }
}

/* The op switches sit inside the loops: with a constant op (the backend's calls) they fold
 * away before the loop is vectorized. */
void gk_unary_f32_scalar(int op, int64_t n, const float *x, float *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        y[i] = unary1(op, x[i]);
}

void gk_splat_f32_scalar(double value, int64_t n, float *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    float v = (float)value;
    for (int64_t i = lo; i < hi; i++)
        y[i] = v;
}

void gk_binary_f32_scalar(int op, int64_t n, const float *a, const float *b, float *y, int tid,
                          int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        y[i] = binary1(op, a[i], b[i]);
}

/* One step of a chain: op > 0 unary of a, op < 0 binary -op of (a, b), GK_CHAIN_CLIP
 * min(max(a, p), q), GK_CHAIN_LEAKY_RELU a < 0 ? a * p : a, beyond +-GK_CHAIN_TYPED a typed op as gk_unary_any/gk_binary_any
 * compute it on f32. */
static inline float step1(int op, double p, double q, const float *a, const float *b, int64_t i)
{
    if (op == GK_CHAIN_CLIP)
        return gk_act(GK_ACT_CLIP, a[i], p, q);
    if (op == GK_CHAIN_LEAKY_RELU)
        return gk_act(GK_ACT_LEAKY_RELU, a[i], p, q);
    if (op > GK_CHAIN_TYPED)
        return (float)gk_unary_f64(op - GK_CHAIN_TYPED, p, q, a[i]);
    if (op < -GK_CHAIN_TYPED)
        return (float)gk_binary_f64(-op - GK_CHAIN_TYPED, a[i], b[i]);
    return op > 0 ? unary1(op, a[i]) : binary1(-op, a[i], b[i]);
}

#define STEP(k)                                                        \
    if (nsteps > k)                                                    \
        y##k[i] = step1(op##k, p##k, q##k, a##k, b##k, i);

/* Elements of a block of the chain loop. Each step copies its operands of a block into local
 * arrays, computes there and copies the results out, in step order: a step still reads what
 * an earlier one wrote at the same index, and the JIT vectorizes the steps without proving
 * that the buffers do not overlap (with up to 12 pointers the run-time checks exceed LLVM's
 * limit, and a chain with Sigmoid or Tanh stayed scalar). */
#define CHAIN_BLOCK 16

static inline void step_block(int op, double p, double q, const float *a, const float *b,
                              float *y)
{
    float ta[CHAIN_BLOCK], tb[CHAIN_BLOCK], ty[CHAIN_BLOCK];
    memcpy(ta, a, sizeof ta);
    if (op < 0)
        memcpy(tb, b, sizeof tb);
    for (int64_t j = 0; j < CHAIN_BLOCK; j++)
        ty[j] = step1(op, p, q, ta, tb, j);
    memcpy(y, ty, sizeof ty);
}

static inline bool costly(int op) { return op == GK_UN_SIGMOID || op == GK_UN_TANH; }

#define STEP_BLOCK(k)                                                  \
    if (nsteps > k)                                                    \
        step_block(op##k, p##k, q##k, a##k + i, op##k < 0 ? b##k + i : NULL, y##k + i);

void gk_chain_f32_scalar(int64_t n, int nsteps,
                         int op0, double p0, double q0, const float *a0, const float *b0,
                         float *y0, int op1, double p1, double q1, const float *a1,
                         const float *b1, float *y1, int op2, double p2, double q2,
                         const float *a2, const float *b2, float *y2, int op3, double p3,
                         double q3, const float *a3, const float *b3, float *y3, int tid,
                         int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    /* Blocks only for chains with Sigmoid or Tanh (the LSTM's gate math), which otherwise
     * stay scalar; the copies cost more than they give on cheap steps (MobileNet v3's
     * HardSwish chains in lraspp: 14 -> 20 ms with blocks everywhere). */
    bool blocks = (nsteps > 0 && costly(op0)) || (nsteps > 1 && costly(op1)) ||
                  (nsteps > 2 && costly(op2)) || (nsteps > 3 && costly(op3));
    int64_t i = lo;
    for (; blocks && i + CHAIN_BLOCK <= hi; i += CHAIN_BLOCK) {
        STEP_BLOCK(0)
        STEP_BLOCK(1)
        STEP_BLOCK(2)
        STEP_BLOCK(3)
    }
    for (; i < hi; i++) {
        STEP(0)
        STEP(1)
        STEP(2)
        STEP(3)
    }
}

void gk_act_f32_scalar(int act, double alpha, double beta, int64_t n, const float *x, float *y,
                       int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        y[i] = gk_act(act, x[i], alpha, beta);
}

/* Rows of bytes from a strided source to a strided destination (copy, concat pieces,
 * slices of whole rows); split over rows, or over bytes when there is a single row. */
void gk_copy2d_u8_scalar(int64_t rows, int64_t row_bytes, const uint8_t *src, int64_t src_stride,
                         uint8_t *dst, int64_t dst_stride, int tid, int nthreads)
{
    int64_t lo, hi;
    if (rows == 1) {
        gk_split(row_bytes, 64, tid, nthreads, &lo, &hi);
        if (hi > lo)
            memcpy(dst + lo, src + lo, (size_t)(hi - lo));
        return;
    }
    gk_split(rows, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++)
        memcpy(dst + r * dst_stride, src + r * src_stride, (size_t)row_bytes);
}
