// qeltwise_scalar.c - Quantized 8-bit elementwise kernels, one element at a time through
// qmath.h: Quantize, Dequantize, RescaleQuantized (and quantized Relu / Clip), and the
// same-shape binary ops Add, Sub, Mul, Max, Min. The reference of their AVX variants.
#include "../kernels.h"
#include "../q8.h"

void gk_quantize_q8_scalar(int64_t n, const float *x, uint8_t *y, float scale, int zero, int lo,
                           int hi, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    for (int64_t i = i0; i < i1; i++)
        y[i] = (uint8_t)gk_quantize(x[i], scale, zero, lo, hi);
}

void gk_dequantize_q8_scalar(int64_t n, const uint8_t *x, float *y, int x_signed, float scale,
                             int zero, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    for (int64_t i = i0; i < i1; i++)
        y[i] = gk_dequantize(gk_q_load(x + i, x_signed), scale, zero);
}

void gk_rescale_q8_scalar(int64_t n, const uint8_t *x, uint8_t *y, int x_signed, int x_zero,
                          float mult, int y_zero, int lo, int hi, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    for (int64_t i = i0; i < i1; i++)
        y[i] = (uint8_t)gk_requant(gk_q_load(x + i, x_signed) - x_zero, mult, y_zero, lo, hi);
}

void gk_qadd_q8_scalar(int op, int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *y,
                       int a_signed, int a_zero, float a_mult, int b_signed, int b_zero,
                       float b_mult, int y_zero, int lo, int hi, float post_mult, int post_zero,
                       int post_lo, int post_hi, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    if (op == GK_BIN_SUB)
        b_mult = -b_mult;
    for (int64_t i = i0; i < i1; i++) {
        int32_t va = gk_q_load(a + i, a_signed) - a_zero, vb = gk_q_load(b + i, b_signed) - b_zero;
        int32_t q;
        switch (op) {
        case GK_BIN_MUL: q = gk_requant(va * vb, a_mult, y_zero, lo, hi); break;
        case GK_BIN_MAX:
        case GK_BIN_MIN: {
            int32_t qa = gk_requant(va, a_mult, y_zero, lo, hi);
            int32_t qb = gk_requant(vb, b_mult, y_zero, lo, hi);
            q = (op == GK_BIN_MAX) == (qa > qb) ? qa : qb;
            break;
        }
        default: q = gk_qadd(va, vb, a_mult, b_mult, y_zero, lo, hi); break;
        }
        if (post_mult != 0.0f)
            q = gk_requant(q - y_zero, post_mult, post_zero, post_lo, post_hi);
        y[i] = (uint8_t)q;
    }
}
