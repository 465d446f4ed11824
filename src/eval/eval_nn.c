// eval_nn.c - Reference evaluation of Gemm and FullyConnected, with the f32 matrix kernel that
// the MatMul fast path shares.
//
// Other float kinds accumulate in f64 through the element helpers and round once; f32 uses
// plain float loops (row accumulation, or eight partial sums for dot products) that the
// compiler vectorizes, because whole CNNs end in these products.
#include <stdlib.h>

#include "eval/eval_internal.h"

#define KIND_NAME(n) glow_ev_kind(n), (n)->name

#if defined(__GNUC__) && !defined(__clang__)
/* The f32 matrix kernel relies on loop vectorization, which -O2 barely does in GCC 12. */
#pragma GCC optimize("O3")
#endif

/* After the pragma, so that its inline functions are optimized like the loops they sit in. */
#include "scalar_math.h"

static inline double ld(const glow_tensor *t, int64_t i) { return ev_ldf(t->type.dtype, t->data, i); }
static inline void st(glow_tensor *t, int64_t i, double v) { ev_stf(t->type.dtype, t->data, i, v); }

/* --- matrix products --- */

void glow_ev_mm_f32(int64_t m, int64_t nn, int64_t k, const float *a, const float *b,
                    bool b_trans, float *y)
{
    if (!b_trans) {
        /* Row i of y accumulates a[i][q] * (row q of b), as the scalar matmul kernel does
         * (the row routine is theirs, kernels/scalar_math.h). */
        for (int64_t i = 0; i < m; i++)
            gk_matmul_row_f32(k, nn, a + i * k, b, y + i * nn);
        return;
    }
    /* b is [nn, k]: dot products, with eight partial sums so the loop vectorizes. */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nn; j++) {
            const float *ar = a + i * k, *br = b + j * k;
            float acc[8] = { 0 };
            int64_t q = 0;
            for (; q + 8 <= k; q += 8)
                for (int l = 0; l < 8; l++)
                    acc[l] += ar[q + l] * br[q + l];
            float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                      ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            for (; q < k; q++)
                s += ar[q] * br[q];
            y[i * nn + j] = s;
        }
}

/* Gemm: alpha * op(A) op(B) + beta * C (C already [M, N] or absent). FullyConnected:
 * x[M, K] w[K, N] + b[N]. */
glow_status glow_ev_gemm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    const glow_type *a = &ins[0].type, *b = &ins[1].type;
    bool gemm = n->kind == NK_GEMM;
    bool ta = gemm && glow_node_int(n, GA_TRANS_A, 0), tb = gemm && glow_node_int(n, GA_TRANS_B, 0);
    if (a->rank != 2 || b->rank != 2)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': operands must be matrices",
                         KIND_NAME(n));
    int64_t m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1], nn = b->dims[tb ? 0 : 1];
    int64_t bd[2] = { tb ? nn : k, tb ? k : nn }, yd[2] = { m, nn };
    GLOW_TRY(glow_ev_expect_shape(n, "operand 1", b, 2, bd, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, 2, yd, d));
    if (n->nin > 2) {
        if (gemm)
            GLOW_TRY(glow_ev_expect_shape(n, "operand C", &ins[2].type, 2, yd, d));
        else
            GLOW_TRY(glow_ev_expect_shape(n, "bias", &ins[2].type, 1, &nn, d));
    }
    double alpha = gemm ? glow_node_float(n, GA_ALPHA, 1.0) : 1.0;
    double beta = gemm ? glow_node_float(n, GA_BETA, 1.0) : 1.0;
    glow_tensor *y = &outs[0];
    bool f32 = a->dtype == GLOW_F32 && b->dtype == GLOW_F32 && y->type.dtype == GLOW_F32 &&
               (n->nin < 3 || ins[2].type.dtype == GLOW_F32);
    if (f32 && !ta && !glow_ev_reference()) {
        float *yf = y->data;
        glow_ev_mm_f32(m, nn, k, ins[0].data, ins[1].data, tb, yf);
        const float *c = n->nin > 2 ? ins[2].data : NULL;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                float v = (float)alpha * yf[i * nn + j];
                if (c)
                    v += (float)beta * c[gemm ? i * nn + j : j];
                yf[i * nn + j] = v;
            }
        return GLOW_OK;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nn; j++) {
            double s = 0;
            for (int64_t q = 0; q < k; q++)
                s += ld(&ins[0], ta ? q * m + i : i * k + q) *
                     ld(&ins[1], tb ? j * k + q : q * nn + j);
            s *= alpha;
            if (n->nin > 2)
                s += beta * ld(&ins[2], gemm ? i * nn + j : j);
            st(y, i * nn + j, s);
        }
    return GLOW_OK;
}
