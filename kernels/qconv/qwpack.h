// qwpack.h - Packs int8 3x3 convolution weights for the exact integer Winograd F(2x2,3x3)
// kernel (qwino_avx2.c) and folds the input zero point into the bias. Header-only (static
// inline): included by the CPU backend's host code, which packs constant weights at compile
// time, and by the kernel tests.
//
// F(2x2,3x3) with the kernel transform scaled by 2 so that it stays in integers:
//
//     Y = A^T [ (G2 g G2^T) . (B^T d B) ] A = 4 x (the 2x2 outputs of the 3x3 correlation)
//
//     G2 = [2 0 0; 1 1 1; 1 -1 1; 0 0 2]   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//     A^T = [1 1 1 0; 0 1 -1 -1]
//
// A transformed weight is a sum of at most 9 weights with coefficients 1, 2 or 4 (|u| <= 1152
// for s8), a transformed input a sum of 4 bytes with signs (|v| <= 1020): both int16, and
// their products summed in pairs by vpmaddwd never overflow int32. The accumulators wrap mod
// 2^32 over long reductions, but Y is exactly 4 times the direct kernel's sum S, so Y >> 2 (an
// arithmetic shift) gives S back whenever |S| < 2^29: that holds for every input when
// 9 * 255 * 128 * C < 2^29, i.e. C <= GK_QWINO_MAX_C, which the backend checks before it takes
// this kernel. Within that bound the results are the reference's integers exactly.
//
// Packed layout, for output-channel blocks of 8 and the 16 transformed positions e = 4i + j:
//
//     packed[M/8][16][CV/2][8][2]   int16, CV = C rounded up to 16, M/8 rounded up
//
// i.e. per position, per pair of input channels, the 8 outputs' two weights: the int16 pairs a
// broadcast pair of transformed inputs multiplies (vpmaddwd). Channels past C and outputs past
// M are zero. bias_out is as gk_qpack_conv's: bias_in - x_zero * sum w.
#ifndef GK_QWPACK_H
#define GK_QWPACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The most input channels for which the kernel is exact (above). */
#define GK_QWINO_MAX_C 1824

/* C rounded up to the kernel's 16-channel transform. */
static inline int64_t gk_qwino_cv(int64_t c)
{
    return (c + 15) / 16 * 16;
}

/* int16 elements of the packed weights of an M x C x 3 x 3 convolution. */
static inline size_t gk_qwino_elems(int64_t m, int64_t c)
{
    return (size_t)((m + 7) / 8 * 16 * gk_qwino_cv(c) * 8);
}

/* w is [M][C][3][3] (ONNX order) of s8 with zero offset; bias_in [M] or NULL (zeros); packed
 * has gk_qwino_elems(m, c) int16, bias_out M entries. */
static inline void gk_qwino_pack(const int8_t *w, const int32_t *bias_in, int x_zero, int64_t m,
                                 int64_t c, int16_t *packed, int32_t *bias_out)
{
    static const int g2[4][3] = { { 2, 0, 0 }, { 1, 1, 1 }, { 1, -1, 1 }, { 0, 0, 2 } };
    int64_t cv = gk_qwino_cv(c);
    memset(packed, 0, gk_qwino_elems(m, c) * sizeof(int16_t));
    for (int64_t mi = 0; mi < m; mi++) {
        int64_t sum = 0;
        for (int64_t ci = 0; ci < c; ci++) {
            const int8_t *g = w + (mi * c + ci) * 9;
            int gg[4][3]; /* G2 g */
            for (int i = 0; i < 4; i++)
                for (int s = 0; s < 3; s++)
                    gg[i][s] = g2[i][0] * g[s] + g2[i][1] * g[3 + s] + g2[i][2] * g[6 + s];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    int u = gg[i][0] * g2[j][0] + gg[i][1] * g2[j][1] + gg[i][2] * g2[j][2];
                    int64_t e = i * 4 + j;
                    packed[((((mi / 8) * 16 + e) * (cv / 2) + ci / 2) * 8 + mi % 8) * 2 +
                           ci % 2] = (int16_t)u;
                }
            for (int k = 0; k < 9; k++)
                sum += g[k];
        }
        /* Wraps like the int32 accumulator it starts, without signed overflow in C. */
        bias_out[mi] = (int32_t)(uint32_t)((bias_in ? bias_in[mi] : 0) - (int64_t)x_zero * sum);
    }
}

#endif
