// gemm_tmpl.h - f32 GEMM over B packed in panels of NR = 2V columns, written once for any vector
// length V (gemm_avx512.c, gemm_avx2.c, gemm_neon.c). Used for FullyConnected and MatMul with
// constant B.
//
// The micro-kernel holds an MR x NR tile of C in 2*MR vector accumulators (AVX-512: 12 x 32 in
// 24 zmm): per k it loads the two B vectors of the panel row and broadcasts MR values of A.
// A single row (batch-1 fully connected layers) would be one FMA chain per vector, bound by FMA
// latency, so that case keeps four partial sums over k and adds them at the end. Work is split
// over (panel, row tile) with rows fastest, so a thread reuses one B panel from cache.
#include <math.h>

#include "../act_vec.h"

#if GK_NREGS == 32
#define MR 12 /* 24 accumulators of 32 registers (AVX-512, NEON) */
#else
#define MR 6
#endif
#define NR (2 * GK_VLEN)

/* Epilogue of one row of the tile: bias, residual, activation; `cols` < NR in the last panel
 * goes through a bounce buffer so nothing past N is read or written. */
GK_INLINE void store_row(gk_vec a0, gk_vec a1, float *c, const float *bias, const float *res,
                         size_t cols, int act, float alpha, float beta)
{
    float tmp[NR];
    if (cols == NR) {
        if (bias) {
            a0 = VADD(a0, VLOAD(bias));
            a1 = VADD(a1, VLOAD(bias + GK_VLEN));
        }
        if (res) {
            a0 = VADD(a0, VLOAD(res));
            a1 = VADD(a1, VLOAD(res + GK_VLEN));
        }
        VSTORE(c, act_vec(a0, act, alpha, beta));
        VSTORE(c + GK_VLEN, act_vec(a1, act, alpha, beta));
    } else {
        VSTORE(tmp, a0);
        VSTORE(tmp + GK_VLEN, a1);
        for (size_t j = 0; j < cols; j++) {
            float v = tmp[j] + (bias ? bias[j] : 0.0f) + (res ? res[j] : 0.0f);
            if (act == GK_ACT_RELU)
                v = v < 0 ? 0 : v;
            else if (act == GK_ACT_CLIP)
                v = v < alpha ? alpha : v > beta ? beta : v;
            else if (act == GK_ACT_LEAKY_RELU)
                v = v < 0 ? v * alpha : v;
            c[j] = v;
        }
    }
    if (act >= GK_ACT_SIGMOID)
        act_slow(c, cols, act);
}

/* Rows are named registers c0_<i> / c1_<i> (the two vectors of the panel) guarded by
 * `i < R`, so the tile stays in registers once R is a constant (GK_REP12). */
GK_INLINE void gemm_tile(int R, const float *a, size_t lda, const float *bp, size_t k, float *c,
                         size_t ldc, const float *bias, const float *res, size_t cols, int act,
                         float alpha, float beta)
{
#define G_DECL(i) gk_vec c0_##i = VZERO(), c1_##i = VZERO(); const float *a##i = a + i * lda;
    GK_REP12(G_DECL)
#undef G_DECL
    size_t kk = 0;
    if (R == 1) {
        gk_vec p00 = VZERO(), p01 = VZERO(), p10 = VZERO(), p11 = VZERO();
        gk_vec p20 = VZERO(), p21 = VZERO();
        for (; kk + 4 <= k; kk += 4) {
            const float *b = bp + kk * NR;
            gk_vec x0 = VBCAST(a0 + kk), x1 = VBCAST(a0 + kk + 1);
            gk_vec x2 = VBCAST(a0 + kk + 2), x3 = VBCAST(a0 + kk + 3);
            c0_0 = VFMA(x0, VLOAD(b), c0_0);
            c1_0 = VFMA(x0, VLOAD(b + GK_VLEN), c1_0);
            p00 = VFMA(x1, VLOAD(b + NR), p00);
            p01 = VFMA(x1, VLOAD(b + NR + GK_VLEN), p01);
            p10 = VFMA(x2, VLOAD(b + 2 * NR), p10);
            p11 = VFMA(x2, VLOAD(b + 2 * NR + GK_VLEN), p11);
            p20 = VFMA(x3, VLOAD(b + 3 * NR), p20);
            p21 = VFMA(x3, VLOAD(b + 3 * NR + GK_VLEN), p21);
        }
        c0_0 = VADD(VADD(c0_0, p00), VADD(p10, p20));
        c1_0 = VADD(VADD(c1_0, p01), VADD(p11, p21));
    }
    /* Never unrolled: clang-14 unrolls it by 4 for znver3 and hoists the next iterations'
     * broadcasts, which spills accumulators (40% of peak instead of 85+%). */
    _Pragma("GCC unroll 1")
    for (; kk < k; kk++) {
        gk_vec b0 = VLOAD(bp + kk * NR), b1 = VLOAD(bp + kk * NR + GK_VLEN);
#define G_FMA(i)                                \
    if (i < R) {                                \
        gk_vec x_ = VBCAST(a##i + kk);          \
        c0_##i = VFMA(x_, b0, c0_##i);          \
        c1_##i = VFMA(x_, b1, c1_##i);          \
    }
        GK_REP12(G_FMA)
#undef G_FMA
    }
    gk_vec acc[2 * MR];
#define G_SAVE(i) if (i < R && i < MR) { acc[2 * i] = c0_##i; acc[2 * i + 1] = c1_##i; }
    GK_REP12(G_SAVE)
#undef G_SAVE
    for (int i = 0; i < R; i++)
        store_row(acc[2 * i], acc[2 * i + 1], c + i * ldc, bias, res ? res + i * ldc : NULL, cols, act,
                  alpha, beta);
}

void GK_FN(gemm_packed)(float *c, const float *a, const float *bp, const float *bias,
                        const float *res, size_t m, size_t n, size_t k, size_t lda, size_t ldc,
                        int act, float alpha, float beta, unsigned *work, int tid,
                        int nthreads)
{
    /* Row tiles of equal height (8 rows = 4 + 4, not 6 + 2: a 2-row tile has 4 FMA chains,
     * too few to cover the FMA latency). */
    size_t panels = (n + NR - 1) / NR, mt = (m + MR - 1) / MR, mr = (m + mt - 1) / mt;
    size_t total = panels * mt;
    gk_units units = gk_units_of(total, work, tid, nthreads);
    for (size_t u; gk_units_next(&units, &u);) {
        size_t p = u / mt, i0 = (u % mt) * mr;
        size_t rows = m - i0 < mr ? m - i0 : mr, n0 = p * NR;
        size_t cols = n - n0 < NR ? n - n0 : NR;
        const float *ap = a + i0 * lda, *bpp = bp + p * k * NR;
        float *cp = c + i0 * ldc + n0;
        const float *bb = bias ? bias + n0 : NULL, *rr = res ? res + i0 * ldc + n0 : NULL;
        switch (rows) {
#define ROWS(r)                                                                     \
    case r:                                                                         \
        gemm_tile(r, ap, lda, bpp, k, cp, ldc, bb, rr, cols, act, alpha, beta);     \
        break;
            ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6)
#if MR > 6
            ROWS(7) ROWS(8) ROWS(9) ROWS(10) ROWS(11) ROWS(12)
#endif
#undef ROWS
        default: break;
        }
    }
}
