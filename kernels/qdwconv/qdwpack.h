// qdwpack.h - Packs the weights and bias of a quantized depthwise convolution for the qdwconv
// kernels (kernels.def), at compile time: header-only and static inline so that the compiler's
// host code and the kernel tests include the same code.
//
// ONNX weights [C][1][KH][KW] of 8-bit integers w with per-channel zero points z_w become
// int16 (w - z_w[c]) in [KH][KW][CP], CP = C rounded up to GK_QDW_CBLOCK with zeros past C: a
// tap's weights for a vector of channels are one contiguous load, and int16 holds every
// w - z_w of u8 or i8 weights exactly. The bias absorbs the input zero point: the kernels
// compute sum(x * w) over every tap, the taps in the pads reading x_zero, so
//     bias_out[c] = bias[c] - x_zero * sum_taps(w[c])
// makes acc = bias[c] + sum((x - x_zero) * w), the pads adding nothing (docs/quantization.md).
// x_zero is the zero point the kernel is given (already shifted by 128 for x_flip).
#ifndef GK_QDWPACK_H
#define GK_QDWPACK_H

#include <stdint.h>

/* Channels are padded to a multiple of 16: one AVX-512 vector of int32, two of AVX2. */
#define GK_QDW_CBLOCK 16

/* CP, the packed channel count. */
static inline int64_t gk_qdw_cpad(int64_t c)
{
    return (c + GK_QDW_CBLOCK - 1) / GK_QDW_CBLOCK * GK_QDW_CBLOCK;
}

/* wp [kh][kw][cp] int16 (kh * kw * gk_qdw_cpad(c) elements) from w [c][1][kh][kw] bytes, read
 * as i8 when w_signed (u8 otherwise), minus w_zero[c] (w_zero may be NULL: zero). */
static inline void gk_qdw_pack_weights(int16_t *wp, const uint8_t *w, int w_signed,
                                       const int32_t *w_zero, int64_t c, int64_t kh, int64_t kw)
{
    int64_t cp = gk_qdw_cpad(c);
    for (int64_t t = 0; t < kh * kw; t++)
        for (int64_t ch = 0; ch < cp; ch++) {
            int32_t v = 0;
            if (ch < c) {
                uint8_t b = w[ch * kh * kw + t];
                v = (w_signed ? (int32_t)(int8_t)b : (int32_t)b) - (w_zero ? w_zero[ch] : 0);
            }
            wp[t * cp + ch] = (int16_t)v;
        }
}

/* bias_out [cp] int32 from bias [c] (may be NULL: zero) and the packed weights, for inputs of
 * zero point x_zero as the kernel reads them; zeros past c. */
static inline void gk_qdw_pack_bias(int32_t *bias_out, const int32_t *bias, const int16_t *wp,
                                    int64_t c, int64_t kh, int64_t kw, int32_t x_zero)
{
    int64_t cp = gk_qdw_cpad(c);
    for (int64_t ch = 0; ch < cp; ch++) {
        int64_t sum = 0;
        for (int64_t t = 0; t < kh * kw; t++)
            sum += wp[t * cp + ch];
        int64_t b = ch < c && bias ? bias[ch] : 0;
        bias_out[ch] = (int32_t)(b - (int64_t)x_zero * sum);
    }
}

#endif
