// kernels.h - The kernel library's op codes and prototypes (kernels/<family>/<family>_<isa>.c).
//
// Every kernel takes explicit sizes, strides and offsets, and (tid, nthreads) last: it does
// thread tid's disjoint share of its outer loop, so the CPU backend can call it from every
// thread of the pool. The backend (src/backend/cpu/select.c) picks a kernel per instruction
// and calls it by name; kernels.def lists which variants exist.
#ifndef GK_KERNELS_H
#define GK_KERNELS_H

#include "gk.h"

/* gk_unary_f32_*: the evaluator's f32 fast-path unary ops. */
enum { GK_UN_RELU = 1, GK_UN_NEG, GK_UN_ABS, GK_UN_SQRT, GK_UN_EXP, GK_UN_TANH, GK_UN_SIGMOID };
/* gk_binary_f32_*: same-shape binary ops (max/min propagate NaN). */
enum { GK_BIN_ADD = 1, GK_BIN_SUB, GK_BIN_MUL, GK_BIN_DIV, GK_BIN_MAX, GK_BIN_MIN };

/* --- eltwise/ --- */
void gk_unary_f32_scalar(int op, int64_t n, const float *x, float *y, int tid, int nthreads);
void gk_binary_f32_scalar(int op, int64_t n, const float *a, const float *b, float *y, int tid,
                          int nthreads);
void gk_act_f32_scalar(int act, double alpha, double beta, int64_t n, const float *x, float *y,
                       int tid, int nthreads);
/* A run of up to GK_CHAIN_MAX same-size elementwise instructions in one loop: for each
 * element i of the thread's share, step k = 0..nsteps-1 computes yk[i] from ak[i] (and bk[i])
 * with op k: > 0 a GK_UN_* op, < 0 the GK_BIN_* op -op, GK_CHAIN_CLIP min(max(a, p), q).
 * A step may read what an earlier one wrote at the same index (the same address), never at
 * another: the backend only chains operands that are the same buffer or disjoint. */
enum { GK_CHAIN_MAX = 4, GK_CHAIN_CLIP = 100 };
void gk_chain_f32_scalar(int64_t n, int nsteps,
                         int op0, double p0, double q0, const float *a0, const float *b0,
                         float *y0, int op1, double p1, double q1, const float *a1,
                         const float *b1, float *y1, int op2, double p2, double q2,
                         const float *a2, const float *b2, float *y2, int op3, double p3,
                         double q3, const float *a3, const float *b3, float *y3, int tid,
                         int nthreads);
void gk_copy2d_u8_scalar(int64_t rows, int64_t row_bytes, const uint8_t *src, int64_t src_stride,
                         uint8_t *dst, int64_t dst_stride, int tid, int nthreads);

/* --- conv/ --- */
void gk_conv2d_f32_scalar(const float *x, const float *w, const float *bias, float *y,
                          int64_t n, int64_t c, int64_t h, int64_t wd, int64_t m, int64_t kh,
                          int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                          int64_t dw, int64_t ph, int64_t pw, int64_t group, int act,
                          double alpha, double beta, int tid, int nthreads);

/* --- matmul/ --- */
void gk_matmul_f32_scalar(const float *a, const float *w, const float *bias, float *y,
                          int64_t batch, int64_t m, int64_t k, int64_t n, int64_t w_batch_stride,
                          int act, double alpha, double beta, int tid, int nthreads);

/* --- pool/ --- */
void gk_maxpool2d_f32_scalar(const float *x, float *y, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                             int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                             int tid, int nthreads);
void gk_avgpool2d_f32_scalar(const float *x, float *y, int64_t planes, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                             int64_t sw, int64_t dh, int64_t dw, int64_t ph0, int64_t pw0,
                             int64_t ph1, int64_t pw1, int count_include_pad, int tid,
                             int nthreads);

/* --- softmax/ --- */
void gk_softmax_f32_scalar(const float *x, float *y, int64_t outer, int64_t axis, int64_t inner,
                           int tid, int nthreads);

/* --- reduce/ --- */
/* gk_reduce_f32_*: reductions over the middle dim of [outer, n, inner]. */
enum { GK_RED_SUM = 1, GK_RED_MEAN, GK_RED_MAX, GK_RED_MIN };
void gk_reduce_f32_scalar(int op, int64_t outer, int64_t n, int64_t inner, const float *x,
                          float *y, int tid, int nthreads);

/* --- move/ --- */
void gk_transpose_b32_scalar(const uint32_t *x, uint32_t *y, int64_t d0, int64_t d1, int64_t d2,
                             int64_t d3, int64_t d4, int64_t d5, int64_t s0, int64_t s1,
                             int64_t s2, int64_t s3, int64_t s4, int64_t s5, int tid,
                             int nthreads);

#endif
