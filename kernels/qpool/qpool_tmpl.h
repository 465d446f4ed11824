// qpool_tmpl.h - Quantized 8-bit max and average pooling on NHWC, written once for AVX-512
// (qpool_avx512.c) and AVX2 (qpool_avx2.c). A work unit is one output row's chunk of
// GK_Q_CHUNK channels (q8.h): the max pool takes it as byte vectors (max_epu8 / max_epi8), the
// average pool as GK_Q_CHUNK / QL int32 accumulators summed over the window's taps in one pass.
// The window's in-bounds taps are computed once per output pixel, so the tap loops carry no
// bounds checks; a global pooling (one output pixel per plane) is a single long tap loop over
// the plane per chunk, and its chunks are what the threads share.

/* The max pool of units [u0, u1), signedness sgn a constant where inlined. */
GK_INLINE void qmaxpool_units(const uint8_t *x, uint8_t *y, int sgn, int64_t chunks, int64_t u0,
                              int64_t u1, int64_t c, int64_t h, int64_t w, int64_t xcs,
                              int64_t oh, int64_t ow, int64_t ycs, int64_t kh, int64_t kw,
                              int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                              int64_t pw)
{
    qvb init = QB_SET1(sgn ? -128 : 0); /* the kind's minimum: padding never wins */
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, cn = c - c0 < GK_Q_CHUNK ? c - c0 : GK_Q_CHUNK;
        int64_t y0, y1;
        gk_q_taps(oy, sh, ph, dh, kh, h, &y0, &y1);
        /* Offsets, not pointers, until a tap is inside: the window may start before x. */
        int64_t xb = (b * h + oy * sh - ph) * w * xcs + c0;
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t x0, x1;
            gk_q_taps(ox, sw, pw, dw, kw, w, &x0, &x1);
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs + c0;
            for (int64_t cc = 0; cc < cn; cc += QB) {
                qvb m = init;
                for (int64_t ky = y0; ky < y1; ky++) {
                    int64_t p = xb + (ky * dh * w + ox * sw - pw) * xcs + cc;
                    for (int64_t kx = x0; kx < x1; kx++) {
                        qvb v = q_loadb(x + (p + kx * dw * xcs), cn - cc);
                        m = sgn ? QB_MAX_S(m, v) : QB_MAX_U(m, v);
                    }
                }
                q_storeb(yp + cc, m, cn - cc);
            }
        }
    }
}

void QFN(qmaxpool)(const uint8_t *x, uint8_t *y, int x_signed, int64_t n, int64_t c, int64_t h,
                   int64_t w, int64_t xcs, int64_t oh, int64_t ow, int64_t ycs, int64_t kh,
                   int64_t kw, int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph,
                   int64_t pw, int tid, int nthreads)
{
    int64_t u0, u1;
    int64_t chunks = gk_q_units(n, oh, c, tid, nthreads, &u0, &u1);
    if (x_signed)
        qmaxpool_units(x, y, 1, chunks, u0, u1, c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh,
                       dw, ph, pw);
    else
        qmaxpool_units(x, y, 0, chunks, u0, u1, c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh,
                       dw, ph, pw);
}

#define QPOOL_NV (GK_Q_CHUNK / QL) /* int32 vectors per chunk */

void QFN(qavgpool)(const uint8_t *x, uint8_t *y, int x_signed, int x_zero, double sx, double sy,
                   int y_zero, int lo, int hi, int64_t n, int64_t c, int64_t h, int64_t w,
                   int64_t xcs, int64_t oh, int64_t ow, int64_t ycs, int64_t kh, int64_t kw,
                   int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t ph, int64_t pw,
                   int64_t phe, int64_t pwe, int count_include_pad, int tid, int nthreads)
{
    int64_t u0, u1;
    int64_t chunks = gk_q_units(n, oh, c, tid, nthreads, &u0, &u1);
    qvi z = QI_SET1(y_zero), l = QI_SET1(lo), hv = QI_SET1(hi);
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u / chunks, b = r / oh, oy = r % oh;
        int64_t c0 = u % chunks * GK_Q_CHUNK, cn = c - c0 < GK_Q_CHUNK ? c - c0 : GK_Q_CHUNK;
        int64_t y0, y1, py0, py1;
        gk_q_taps(oy, sh, ph, dh, kh, h, &y0, &y1);
        gk_q_taps(oy, sh, 0, dh, kh, ph + h + phe, &py0, &py1); /* taps inside the pads */
        int64_t xb = (b * h + oy * sh - ph) * w * xcs + c0;
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t x0, x1, px0, px1;
            gk_q_taps(ox, sw, pw, dw, kw, w, &x0, &x1);
            gk_q_taps(ox, sw, 0, dw, kw, pw + w + pwe, &px0, &px1);
            int64_t inside = (y1 - y0) * (x1 - x0);
            int64_t count = count_include_pad ? (py1 - py0) * (px1 - px0) : inside;
            qvf m = QF_SET1(count ? gk_q_avg_multiplier(sx, sy, count) : 0.0f);
            qvi acc[QPOOL_NV];
            for (int j = 0; j < QPOOL_NV; j++)
                acc[j] = QI_SET1(0);
            for (int64_t ky = y0; ky < y1; ky++) {
                int64_t p = xb + (ky * dh * w + ox * sw - pw) * xcs;
                for (int64_t kx = x0; kx < x1; kx++) {
                    const uint8_t *t = x + (p + kx * dw * xcs);
                    for (int j = 0; j < QPOOL_NV; j++)
                        if (j * QL < cn)
                            acc[j] = QI_ADD(acc[j], q_load8(t + j * QL, cn - j * QL, x_signed));
                }
            }
            /* sum(x - x_zero) over the taps inside: the sum less inside * x_zero, exactly. */
            qvi off = QI_SET1((int32_t)inside * x_zero);
            uint8_t *yp = y + ((b * oh + oy) * ow + ox) * ycs + c0;
            for (int j = 0; j < QPOOL_NV; j++)
                if (j * QL < cn)
                    q_store8(yp + j * QL,
                             q_round_sat(QF_MUL(QF_CVT(QI_SUB(acc[j], off)), m), z, l, hv),
                             cn - j * QL);
        }
    }
}

#undef QPOOL_NV
