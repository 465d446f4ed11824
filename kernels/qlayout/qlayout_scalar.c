// qlayout_scalar.c - Byte tensors between NCHW and NHWC with a channel stride (the layout of
// the quantized pooling and depthwise kernels). Both walk tiles of GK_QT channels by GK_QT
// pixels, so that each side's accesses stay within a few cache lines per tile.
#include "../kernels.h"
#include "../q8.h"

#define GK_QT 32

/* Few channels (a network's input: 3 channels into 4-byte pixels): pixel by pixel, every
 * byte of the pixel written at once. With c and cs constants the channel loop unrolls and
 * the pixel loop vectorizes (byte interleaving), where the tiled walk below moved one byte
 * at a time: 4% of SqueezeNet int8. */
static void to_nhwc_few(const uint8_t *x, uint8_t *y, int64_t n, int64_t c, int64_t hw,
                        int64_t cs, int fill, int tid, int nthreads)
{
    int64_t q0, q1;
    gk_split(n * hw, 64, tid, nthreads, &q0, &q1);
    for (int64_t q = q0; q < q1;) {
        int64_t b = q / hw, p0 = q % hw;
        int64_t p1 = hw - p0 < q1 - q ? hw : p0 + (q1 - q);
        const uint8_t *xb = x + b * c * hw;
        uint8_t *yb = y + b * hw * cs;
        for (int64_t p = p0; p < p1; p++)
            for (int64_t ch = 0; ch < cs; ch++)
                yb[p * cs + ch] = ch < c ? xb[ch * hw + p] : (uint8_t)fill;
        q += p1 - p0;
    }
}

void gk_q_to_nhwc_u8_scalar(const uint8_t *x, uint8_t *y, int64_t n, int64_t c, int64_t hw,
                            int64_t cs, int fill, int tid, int nthreads)
{
    if (cs <= 8) {
        to_nhwc_few(x, y, n, c, hw, cs, fill, tid, nthreads);
        return;
    }
    int64_t tiles = (hw + GK_QT - 1) / GK_QT, u0, u1;
    gk_split(n * tiles, 1, tid, nthreads, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t b = u / tiles, p0 = u % tiles * GK_QT;
        int64_t p1 = p0 + GK_QT < hw ? p0 + GK_QT : hw;
        for (int64_t c0 = 0; c0 < c; c0 += GK_QT) {
            int64_t c1 = c0 + GK_QT < c ? c0 + GK_QT : c;
            for (int64_t p = p0; p < p1; p++)
                for (int64_t ch = c0; ch < c1; ch++)
                    y[(b * hw + p) * cs + ch] = x[(b * c + ch) * hw + p];
        }
        for (int64_t p = p0; p < p1; p++)
            for (int64_t ch = c; ch < cs; ch++)
                y[(b * hw + p) * cs + ch] = (uint8_t)fill;
    }
}

void gk_q_from_nhwc_u8_scalar(const uint8_t *x, uint8_t *y, int64_t n, int64_t c, int64_t hw,
                              int64_t cs, int tid, int nthreads)
{
    int64_t tiles = (hw + GK_QT - 1) / GK_QT, u0, u1;
    gk_split(n * tiles, 1, tid, nthreads, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t b = u / tiles, p0 = u % tiles * GK_QT;
        int64_t p1 = p0 + GK_QT < hw ? p0 + GK_QT : hw;
        for (int64_t c0 = 0; c0 < c; c0 += GK_QT) {
            int64_t c1 = c0 + GK_QT < c ? c0 + GK_QT : c;
            for (int64_t ch = c0; ch < c1; ch++)
                for (int64_t p = p0; p < p1; p++)
                    y[(b * c + ch) * hw + p] = x[(b * hw + p) * cs + ch];
        }
    }
}
