// qpack.h - Packs int8 convolution weights for the qconv kernels (kernels/qconv) and folds the
// input zero point into the bias. Header-only (static inline): included by the CPU backend's
// host code, which packs constant weights at compile time, and by the kernel tests.
//
// Packed layout for an output-channel block of `vlen` channels (gk_qconv_vlen of the row):
//
//     packed[M/vlen][KH][KW][C4][vlen][4]   int8, C4 = ceil(C / 4), M/vlen rounded up
//
// i.e. for one block and one tap, the 4 consecutive input channels 4c..4c+3 of each of the
// vlen output channels are 4 adjacent bytes: exactly the 32-bit lane a VNNI vpdpbusd
// multiplies with 4 broadcast input bytes (vlen = 16: one zmm per 4 input channels, vlen = 8:
// one ymm). Channels past C and output channels past M are zero, so the kernels may read the
// input bytes [C, 4 * C4) of a pixel (xcs >= 4 * C4 since xcs % 4 == 0) and compute whole
// blocks without ever seeing those bytes in the result. The scalar row uses vlen = 1, which is
// [M][KH][KW][4 * C4]: each output channel's taps in the input's channel order.
//
// bias_out has M entries (not padded): bias_in[m] - x_zero * sum over all KH*KW*C taps of
// w[m], so that the kernel's sum of (input byte or x_zero in the padding) * w over every tap,
// added to it, equals bias_in[m] + sum((x - x_zero) * w) with padding contributing nothing.
#ifndef GK_QPACK_H
#define GK_QPACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The output-channel block of each qconv row of kernels.def, by its isa column. */
#define GK_QCONV_VLEN_scalar 1
#define GK_QCONV_VLEN_avx2 8
#define GK_QCONV_VLEN_avxvnni 8
#define GK_QCONV_VLEN_avx512vnni 16

/* The same by isa name ("scalar", "avx2", "avxvnni", "avx512vnni"); 0 for no qconv row. */
static inline int gk_qconv_vlen(const char *isa)
{
    if (!strcmp(isa, "avx512vnni"))
        return GK_QCONV_VLEN_avx512vnni;
    if (!strcmp(isa, "avxvnni"))
        return GK_QCONV_VLEN_avxvnni;
    if (!strcmp(isa, "avx2"))
        return GK_QCONV_VLEN_avx2;
    return !strcmp(isa, "scalar") ? GK_QCONV_VLEN_scalar : 0;
}

/* Bytes of the packed weights of an M x C x KH x KW convolution for blocks of vlen. */
static inline size_t gk_qpack_bytes(int vlen, int64_t m, int64_t c, int64_t kh, int64_t kw)
{
    int64_t mb = (m + vlen - 1) / vlen, c4 = (c + 3) / 4;
    return (size_t)(mb * kh * kw * c4 * vlen * 4);
}

/* w is [M][C][KH][KW] (ONNX order) of s8 with zero offset; bias_in [M] or NULL (zeros);
 * packed has gk_qpack_bytes(vlen, ...) bytes, bias_out M entries (layouts above). */
static inline void gk_qpack_conv(int vlen, const int8_t *w, const int32_t *bias_in, int x_zero,
                                 int64_t m, int64_t c, int64_t kh, int64_t kw, int8_t *packed,
                                 int32_t *bias_out)
{
    int64_t c4 = (c + 3) / 4;
    memset(packed, 0, gk_qpack_bytes(vlen, m, c, kh, kw));
    for (int64_t mi = 0; mi < m; mi++) {
        int64_t sum = 0;
        for (int64_t ci = 0; ci < c; ci++)
            for (int64_t ky = 0; ky < kh; ky++)
                for (int64_t kx = 0; kx < kw; kx++) {
                    int8_t v = w[((mi * c + ci) * kh + ky) * kw + kx];
                    int64_t tap = ((mi / vlen) * kh + ky) * kw + kx;
                    packed[((tap * c4 + ci / 4) * vlen + mi % vlen) * 4 + ci % 4] = v;
                    sum += v;
                }
        /* Wraps like the int32 accumulator it starts, without signed overflow in C. */
        bias_out[mi] = (int32_t)(uint32_t)((bias_in ? bias_in[mi] : 0) - (int64_t)x_zero * sum);
    }
}

/* The packing of the qconv row of `isa` (a gk_qconv_vlen name): gk_qpack_conv with the row's
 * vlen, then, for avx2 (vpmaddwd, no VNNI), each 32-byte group of 8 outputs x 4 channels
 * reordered as [2][8][2]: channels 4c, 4c+1 of the 8 outputs, then 4c+2, 4c+3, so that one
 * sign-extension gives the 8 outputs' int16 pairs that a broadcast pair of inputs multiplies.
 * The same bytes (gk_qpack_bytes) in another order. */
static inline void gk_qpack_conv_isa(const char *isa, const int8_t *w, const int32_t *bias_in,
                                     int x_zero, int64_t m, int64_t c, int64_t kh, int64_t kw,
                                     int8_t *packed, int32_t *bias_out)
{
    int vlen = gk_qconv_vlen(isa);
    gk_qpack_conv(vlen, w, bias_in, x_zero, m, c, kh, kw, packed, bias_out);
    if (strcmp(isa, "avx2"))
        return;
    size_t bytes = gk_qpack_bytes(vlen, m, c, kh, kw);
    for (size_t g = 0; g < bytes; g += 32) {
        int8_t t[32];
        for (int o = 0; o < 8; o++)
            for (int j = 0; j < 4; j++)
                t[(j / 2) * 16 + o * 2 + j % 2] = packed[g + (size_t)(o * 4 + j)];
        memcpy(packed + g, t, 32);
    }
}

#endif
