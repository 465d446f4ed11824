// blocked.h - The layouts the fast f32 kernels read and write: the channel-blocked layout
// (NCHWc16 / NCHWc8) and packed GEMM weights. Their rows and parameters are in kernels.def.
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
// total*(tid+1)/nthreads) of its outer work list, or with `work` takes units from a counter
// (gk_units in simd.h).
#ifndef GK_BLOCKED_H
#define GK_BLOCKED_H

#include "kernels.h"

#endif
