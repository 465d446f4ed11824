// eltwise_scalar.c - Reference f32 elementwise kernels (unary, binary, fused activation,
// byte copy): plain loops over a thread's share, written exactly as the evaluator computes.
//
// The op code is an argument rather than one function per op: the backend passes it as a
// constant, so after inlining the switch folds away and each call site is a single loop.
// Outputs may alias inputs (in-place elementwise): every element is read before it is written.
#include "kernels.h"

/* Grain of the thread split: one 64-byte line of floats, so shares end on vector bounds. */
#define GRAIN 16

void gk_unary_f32_scalar(int op, int64_t n, const float *x, float *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    switch (op) {
    case GK_UN_RELU:
        for (int64_t i = lo; i < hi; i++)
            y[i] = x[i] > 0 ? x[i] : (x[i] == x[i] ? 0.0f : x[i]);
        break;
    case GK_UN_NEG: for (int64_t i = lo; i < hi; i++) y[i] = -x[i]; break;
    case GK_UN_ABS: for (int64_t i = lo; i < hi; i++) y[i] = fabsf(x[i]); break;
    case GK_UN_SQRT: for (int64_t i = lo; i < hi; i++) y[i] = sqrtf(x[i]); break;
    case GK_UN_EXP: for (int64_t i = lo; i < hi; i++) y[i] = expf(x[i]); break;
    case GK_UN_TANH: for (int64_t i = lo; i < hi; i++) y[i] = tanhf(x[i]); break;
    case GK_UN_SIGMOID:
        for (int64_t i = lo; i < hi; i++) {
            float v = x[i];
            y[i] = v >= 0 ? 1.0f / (1.0f + expf(-v)) : expf(v) / (1.0f + expf(v));
        }
        break;
    default: break;
    }
}

void gk_binary_f32_scalar(int op, int64_t n, const float *a, const float *b, float *y, int tid,
                          int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    switch (op) {
    case GK_BIN_ADD: for (int64_t i = lo; i < hi; i++) y[i] = a[i] + b[i]; break;
    case GK_BIN_SUB: for (int64_t i = lo; i < hi; i++) y[i] = a[i] - b[i]; break;
    case GK_BIN_MUL: for (int64_t i = lo; i < hi; i++) y[i] = a[i] * b[i]; break;
    case GK_BIN_DIV: for (int64_t i = lo; i < hi; i++) y[i] = a[i] / b[i]; break;
    case GK_BIN_MAX:
        for (int64_t i = lo; i < hi; i++)
            y[i] = a[i] != a[i] || b[i] != b[i] ? NAN : a[i] > b[i] ? a[i] : b[i];
        break;
    case GK_BIN_MIN:
        for (int64_t i = lo; i < hi; i++)
            y[i] = a[i] != a[i] || b[i] != b[i] ? NAN : a[i] < b[i] ? a[i] : b[i];
        break;
    default: break;
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
