// blocked.h - Prototypes of the fast f32 kernels on the channel-blocked layout (NCHWc16 / NCHWc8)
// and on packed GEMM weights, with the layouts they read and write.
//
// V is the block = vector length: 16 for the _avx512 kernels, 8 for the _avx2 kernels.
// Activations:  [N][ceil(C/cv)][H][W][cv], cv = V except for a network's first convolution
//               whose few input channels (e.g. 3) form one block of cv = C (no zero padding of
//               3 channels to 16, which would multiply that layer's work by 5). Channels past C
//               in the last block are zero; every kernel here keeps them zero (conv weights and
//               bias past M are zero, relu/clip/leaky map 0 to 0 when clip's range holds 0);
//               sigmoid makes them 0.5, harmless: the next conv's weights there are 0.
// Conv weights: [M/V][C/cv per group][KH][KW][cv][V] (src/backend/cpu/repack.c builds them).
// Depthwise:    [C/V][KH][KW][V].
// GEMM B:       [ceil(N/(2V))][K][2V] panels, zero-padded past N.
// Bias:         M floats (or NULL), padded with zeros to a multiple of V for the blocked kernels.
// res:          NULL or a tensor shaped like out, added before the activation (residual add);
//               it may alias out.
// Every kernel takes (tid, nthreads) and computes the part [total*tid/nthreads,
// total*(tid+1)/nthreads) of its outer work list; each output element is computed by the same
// code whatever the split, so results are identical for every thread count. The conv, depthwise
// and GEMM kernels also take `work`: NULL for that static split, or a counter (zero before
// the call) from which the threads take the units one by one (gk_units in simd.h). Kernels
// never allocate.
#ifndef GK_BLOCKED_H
#define GK_BLOCKED_H

#include <stddef.h>

/* `act` is the fused activation, coded as GK_ACT_* in gk.h: 0 none, 1 relu, 2 clip
 * (min(max(x, alpha), beta)), 3 leaky relu (x < 0 ? alpha * x : x), 4 sigmoid, 5 tanh. */

#define GK_BLOCKED_KERNELS(isa)                                                                   \
    /* Direct convolution. cb = input blocks per group, mb = output blocks (all groups). */       \
    void gk_conv2d_nchwc_f32_##isa(float *out, const float *in, const float *wt,                 \
        const float *bias, const float *res, size_t n, size_t groups, size_t cb, size_t cv,       \
        size_t ih, size_t iw, size_t mb, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh,   \
        size_t sw, size_t ph, size_t pw, size_t dh, size_t dw, int act, float alpha, float beta,  \
        unsigned *work, int tid, int nthreads);                                                   \
    /* Depthwise convolution (group = C, one filter per channel); cb = channel blocks. */         \
    void gk_dwconv2d_nchwc_f32_##isa(float *out, const float *in, const float *wt,               \
        const float *bias, const float *res, size_t n, size_t cb, size_t ih, size_t iw,           \
        size_t oh, size_t ow, size_t kh, size_t kw, size_t sh, size_t sw, size_t ph, size_t pw,   \
        size_t dh, size_t dw, int act, float alpha, float beta, unsigned *work, int tid,          \
        int nthreads);                                                                            \
    /* Max pooling; padded taps are ignored (a window with no valid tap gives -inf). */          \
    void gk_maxpool_nchwc_f32_##isa(float *out, const float *in, size_t n, size_t cb,            \
        size_t ih, size_t iw, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh, size_t sw,   \
        size_t ph, size_t pw, size_t dh, size_t dw, int tid, int nthreads);                 \
    /* Average pooling; divides by the taps inside the input, or with count_include_pad by the  \
     * taps inside the input plus pads (begin ph/pw, end phe/pwe). */                            \
    void gk_avgpool_nchwc_f32_##isa(float *out, const float *in, size_t n, size_t cb,            \
        size_t ih, size_t iw, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh, size_t sw,   \
        size_t ph, size_t pw, size_t phe, size_t pwe, int count_include_pad, int tid,             \
        int nthreads);                                                                            \
    /* C[m][n] = act(A[m][:] . B[:][n] + bias[n] + res[m][n]), B packed; lda/ldc in floats. */  \
    void gk_gemm_packed_f32_##isa(float *c, const float *a, const float *bp, const float *bias,  \
        const float *res, size_t m, size_t n, size_t k, size_t lda, size_t ldc, int act,          \
        float alpha, float beta, unsigned *work, int tid, int nthreads);                          \
    /* NCHW [N][C][HW] -> blocked [N][ceil(C/cv)][HW][cv] (zero-filled past C), cv <= V. */      \
    void gk_to_nchwc_f32_##isa(float *out, const float *in, size_t n, size_t c, size_t hw,       \
        size_t cv, int tid, int nthreads);                                                  \
    /* Blocked [N][ceil(C/V)][HW][V] -> NCHW [N][C][HW]. */                                      \
    void gk_from_nchwc_f32_##isa(float *out, const float *in, size_t n, size_t c, size_t hw,     \
        int tid, int nthreads);

GK_BLOCKED_KERNELS(avx512)
GK_BLOCKED_KERNELS(avx2)

#endif
