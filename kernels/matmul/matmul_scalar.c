// matmul_scalar.c - Reference batched matrix multiply y[b] = a[b] x w[b] (row-major,
// [M, K] x [K, N]) with optional bias row and fused activation. Split over all rows b*M.
//
// Each row is gk_matmul_row_f32 (scalar_math.h, shared with the evaluator): i-k-j order, the
// innermost loop streams a row of w into a row of y and vectorizes over N. A weight shared by
// every batch (w_batch_stride 0) serves fully connected layers.
#include "gk_dtype.h"
#include "kernels.h"
#include "scalar_math.h"

void gk_matmul_f32_scalar(const float *a, const float *w, const float *bias, float *y,
                          int64_t batch, int64_t m, int64_t k, int64_t n, int64_t w_batch_stride,
                          int act, double alpha, double beta, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(batch * m, 1, tid, nthreads, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        float *yr = y + r * n;
        gk_matmul_row_f32(k, n, a + r * k, w + r / m * w_batch_stride, yr);
        if (bias)
            for (int64_t j = 0; j < n; j++)
                yr[j] += bias[j];
        if (act != GK_ACT_NONE)
            for (int64_t j = 0; j < n; j++)
                yr[j] = gk_act(act, yr[j], alpha, beta);
    }
}

/* y[b] = a[b] x w[b] of any numeric kind, as the evaluator's generic MatMul: each result is the
 * q = 0..k-1 sum of products in double (float kinds, rounded once) or in wrapping 64-bit
 * arithmetic (integer kinds). Split over all rows b*M. */
void gk_matmul_any_scalar(int dt, const void *a, const void *w, void *y, int64_t batch,
                          int64_t m, int64_t k, int64_t n, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(batch * m, 1, tid, nthreads, &lo, &hi);
    bool fl = gk_dt_is_float(dt);
    for (int64_t r = lo; r < hi; r++) {
        int64_t wb = r / m * k * n;
        for (int64_t j = 0; j < n; j++) {
            double fs = 0;
            uint64_t is = 0;
            for (int64_t q = 0; q < k; q++) {
                if (fl)
                    fs += gk_ldf(dt, a, r * k + q) * gk_ldf(dt, w, wb + q * n + j);
                else
                    is += (uint64_t)gk_ldi(dt, a, r * k + q) *
                          (uint64_t)gk_ldi(dt, w, wb + q * n + j);
            }
            if (fl)
                gk_stf(dt, y, r * n + j, fs);
            else
                gk_sti(dt, y, r * n + j, (int64_t)is);
        }
    }
}
