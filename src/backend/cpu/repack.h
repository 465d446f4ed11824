// repack.h - Compile-time repacking of constant weights into the layouts of the fast CPU
// kernels (kernels/blocked.h), and the float counts of those layouts.
#ifndef GLOW_CPU_REPACK_H
#define GLOW_CPU_REPACK_H

#include <stddef.h>
#include <stdint.h>

/* Floats of a conv weight repacked for block v (the vector length) and input block cv, or 0
 * when the sizes overflow or the grouping does not fit the blocks (groups > 1 needs M/groups a
 * multiple of v and C/groups a multiple of cv). cpg = input channels per group. */
size_t glow_repack_conv_floats(int64_t m, int64_t cpg, int64_t groups, int64_t kh, int64_t kw,
                               int v, int cv);
/* ONNX weight [M][C/groups][KH][KW] -> [ceil(M/v)][ceil(cpg/cv)][KH][KW][cv][v], zero-padded. */
void glow_repack_conv(float *out, const float *w, int64_t m, int64_t cpg, int64_t groups,
                      int64_t kh, int64_t kw, int v, int cv);

/* Depthwise weight [C][1][KH][KW] -> [ceil(C/v)][KH][KW][v], zero-padded. */
size_t glow_repack_dwconv_floats(int64_t c, int64_t kh, int64_t kw, int v);
void glow_repack_dwconv(float *out, const float *w, int64_t c, int64_t kh, int64_t kw, int v);

/* Bias of m channels (NULL: zeros) -> ceil(m/v)*v floats. */
size_t glow_repack_bias_floats(int64_t m, int v);
void glow_repack_bias(float *out, const float *bias, int64_t m, int v);

/* GEMM right operand B (K x N; element (k, n) at b[k * ldb + n], or at b[n * ldb + k] when
 * trans_b) -> panels [ceil(N/nr)][K][nr], zero-padded past N. nr = 2 * vector length. */
size_t glow_repack_gemm_b_floats(int64_t k, int64_t n, int nr);
void glow_repack_gemm_b(float *out, const float *b, int64_t k, int64_t n, int64_t ldb,
                        int trans_b, int nr);
/* Rows k0 .. k1 of a B that is not transposed into the panels glow_repack_gemm_b makes
 * (out is the whole packed B): B is read front to back, so the caller may give back what is
 * read after each range. */
void glow_repack_gemm_b_rows(float *out, const float *b, int64_t k0, int64_t k1, int64_t k,
                             int64_t n, int64_t ldb, int nr);

#endif
