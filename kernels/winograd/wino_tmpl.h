// wino_tmpl.h - Winograd F(4x4,3x3) convolution on the channel-blocked layout (3x3, stride 1,
// dilation 1, group 1), written once for any vector length V (wino_avx512.c: V = 16,
// wino_avx2.c: V = 8). The weights come transformed (src/backend/cpu/winograd.c:
// U = G g G^T per output and input channel, laid out [M/V][36][C][V]).
//
// Each 4x4 output tile reads a 6x6 input tile d; per input channel V = B^T d B (36 values),
// per output channel Y = A^T M A with M = sum over the input channels of U .* V: 36 GEMMs of
// (tiles x C) by (C x M) per tile group, in place of the direct kernel's 9 taps per output
// pixel (2.25 multiply-adds per output and input channel instead of 9). How a layer is walked
// (tile groups, output groups, chunks of input blocks, the scratch) is planned in wino_plan.h;
// the transforms are fused into the unit's loop, and the scratch holds one unit's chunk only.
//
// B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0;
//        0 4 0 -5 0 1],   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
// (interpolation points 0, 1, -1, 2, -2 and infinity).
#include <math.h>
#include <stdbool.h>

#include "../act_vec.h"

#include "wino_plan.h"

#if GK_VLEN == 16
#define WNP 12 /* 2 x 12 accumulators of 32 zmm registers (gk_wino_np) */
#define WNQ 4  /* the tail's tiles come in fours (gk_wino_nq): 4 x 4 or 2 x 8 accumulators */
#else
#define WNP 6  /* 2 x 6 accumulators of 16 ymm registers */
#define WNQ 2  /* tails of 2 (4 blocks x 2) or 4 tiles (2 x 4) */
#endif

/* t = B^T d along one line of six vectors (every value is a sum of at most four terms). */
#define WINO_IN_1D(d0, d1, d2, d3, d4, d5, t)                                         \
    do {                                                                               \
        gk_vec a_ = VFMA(VSET1(-4.0f), d2, d4), b_ = VFMA(VSET1(-4.0f), d1, d3);        \
        gk_vec c_ = VSUB(d4, d2), e_ = VMUL(VSET1(2.0f), VSUB(d3, d1));                \
        t[0] = VFMA(VSET1(4.0f), d0, VFMA(VSET1(-5.0f), d2, d4));                      \
        t[1] = VADD(a_, b_);                                                           \
        t[2] = VSUB(a_, b_);                                                           \
        t[3] = VADD(c_, e_);                                                           \
        t[4] = VSUB(c_, e_);                                                           \
        t[5] = VFMA(VSET1(4.0f), d1, VFMA(VSET1(-5.0f), d3, d5));                      \
    } while (0)

/* y = A^T m along one line: six vectors in, four out. */
#define WINO_OUT_1D(m0, m1, m2, m3, m4, m5, y)                                        \
    do {                                                                               \
        gk_vec s12_ = VADD(m1, m2), d12_ = VSUB(m1, m2);                               \
        gk_vec s34_ = VADD(m3, m4), d34_ = VSUB(m3, m4);                               \
        y[0] = VADD(VADD(m0, s12_), s34_);                                             \
        y[1] = VFMA(VSET1(2.0f), d34_, d12_);                                          \
        y[2] = VFMA(VSET1(4.0f), s34_, s12_);                                          \
        y[3] = VADD(VFMA(VSET1(8.0f), d34_, d12_), m5);                                \
    } while (0)

/* Shape of one layer, shared by the steps of a unit. */
typedef struct {
    size_t cb, ih, iw, mb, oh, ow, ph, pw, th, tw, tpi;
} wino_shape;

/* Input transform of tile r (of all images' tiles) and input block b into
 * vt[e * estride + t * V] for the 36 positions e. Rows and columns outside the input are the
 * padding's zeros. */
GK_INLINE void wino_input_tile(const wino_shape *s, const float *in, size_t r, size_t b,
                               float *vt, size_t estride)
{
    const size_t V = GK_VLEN;
    size_t img = r / s->tpi, q = r % s->tpi;
    ptrdiff_t iy0 = (ptrdiff_t)(q / s->tw * 4) - (ptrdiff_t)s->ph;
    ptrdiff_t ix0 = (ptrdiff_t)(q % s->tw * 4) - (ptrdiff_t)s->pw;
    const float *plane = in + (img * s->cb + b) * s->ih * s->iw * V;
    bool inside = iy0 >= 0 && ix0 >= 0 && iy0 + 6 <= (ptrdiff_t)s->ih &&
                  ix0 + 6 <= (ptrdiff_t)s->iw;
    gk_vec tmp[6][6];
    for (int y = 0; y < 6; y++) {
        ptrdiff_t iy = iy0 + y;
        gk_vec d[6];
        if (inside) {
            const float *p = plane + ((size_t)iy * s->iw + (size_t)ix0) * V;
            for (int x = 0; x < 6; x++)
                d[x] = VLOAD(p + (size_t)x * V);
        } else {
            for (int x = 0; x < 6; x++) {
                ptrdiff_t ix = ix0 + x;
                d[x] = iy >= 0 && iy < (ptrdiff_t)s->ih && ix >= 0 && ix < (ptrdiff_t)s->iw
                           ? VLOAD(plane + ((size_t)iy * s->iw + (size_t)ix) * V)
                           : VZERO();
            }
        }
        WINO_IN_1D(d[0], d[1], d[2], d[3], d[4], d[5], tmp[y]);
    }
    for (int x = 0; x < 6; x++) {
        gk_vec t[6];
        WINO_IN_1D(tmp[0][x], tmp[1][x], tmp[2][x], tmp[3][x], tmp[4][x], tmp[5][x], t);
        for (int i = 0; i < 6; i++)
            VSTORE(vt + (size_t)(i * 6 + x) * estride, t[i]);
    }
}

/* The nx x ny corner of a transformed tile (A^T along the rows of tmp), plus bias b and the
 * residual, activated, into out at off (rows ow pixels apart). */
GK_INLINE void wino_store_tile(gk_vec tmp[6][4], gk_vec b, float *out, const float *res,
                               size_t off, size_t ow, size_t nx, size_t ny, int act, float alpha,
                               float beta)
{
    const size_t V = GK_VLEN;
    for (size_t x = 0; x < nx; x++) {
        gk_vec y[4];
        WINO_OUT_1D(tmp[0][x], tmp[1][x], tmp[2][x], tmp[3][x], tmp[4][x], tmp[5][x], y);
        for (size_t a = 0; a < ny; a++) {
            size_t o = off + (a * ow + x) * V;
            gk_vec v = VADD(y[a], b);
            if (res)
                v = VADD(v, VLOAD(res + o));
            VSTORE(out + o, act_vec(v, act, alpha, beta));
            if (act >= GK_ACT_SIGMOID)
                act_slow(out + o, V, act);
        }
    }
}
/* Output transform of tile r for output block m from mt[e * estride] (36 positions), plus
 * bias and residual, activation, stored where the tile lies inside the output. */
GK_INLINE void wino_output_tile(const wino_shape *s, float *out, const float *res, size_t r,
                                size_t m, const float *mt, size_t estride, const float *bias,
                                int act, float alpha, float beta)
{
    const size_t V = GK_VLEN;
    size_t img = r / s->tpi, q = r % s->tpi, oy0 = q / s->tw * 4, ox0 = q % s->tw * 4;
    size_t off = ((img * s->mb + m) * s->oh + oy0) * s->ow * V + ox0 * V;
    gk_vec tmp[6][4];
    for (int i = 0; i < 6; i++) {
        const float *p = mt + (size_t)i * 6 * estride;
        WINO_OUT_1D(VLOAD(p), VLOAD(p + estride), VLOAD(p + 2 * estride),
                    VLOAD(p + 3 * estride), VLOAD(p + 4 * estride), VLOAD(p + 5 * estride),
                    tmp[i]);
    }
    gk_vec b = bias ? VLOAD(bias + m * V) : VZERO();
    size_t ny = s->oh - oy0 < 4 ? s->oh - oy0 : 4, nx = s->ow - ox0 < 4 ? s->ow - ox0 : 4;
    /* A whole tile with constant bounds: the loops unroll and tmp stays in registers even
     * when the shape is a run-time value (cpu_arg.varies); only an edge tile indexes it. */
    if (nx == 4 && ny == 4)
        wino_store_tile(tmp, b, out, res, off, s->ow, 4, 4, act, alpha, beta);
    else
        wino_store_tile(tmp, b, out, res, off, s->ow, nx, ny, act, alpha, beta);
}

/* One position's GEMM for NP tiles and NM (1-4) output blocks over nk input blocks:
 * c[t] (+)= sum over the chunk's channels j of a[j][t] * w[j], with the accumulators in named
 * registers (as the direct kernel's tile, for the same reason). a: Vt at (position, first block
 * of the chunk, first tile), blocks astride apart; w: U at (block m, position, first channel of
 * the chunk), the next blocks wstride further; c: Mt at (position, block, first tile), the next
 * blocks cstride further. NM x NP stays within the accumulators the ISA has room for (2 x 12,
 * or 4 x 4 for a tail, on AVX-512). */
#define WDECL(p) gk_vec a0_##p = VZERO(), a1_##p = VZERO(), a2_##p = VZERO(), a3_##p = VZERO();
#define WLOAD(p)                                                                       \
    if (p < NP) {                                                                       \
        a0_##p = VLOAD(c + p * GK_VLEN);                                                \
        if (NM > 1)                                                                     \
            a1_##p = VLOAD(c + cstride + p * GK_VLEN);                                  \
        if (NM > 2)                                                                     \
            a2_##p = VLOAD(c + 2 * cstride + p * GK_VLEN);                              \
        if (NM > 3)                                                                     \
            a3_##p = VLOAD(c + 3 * cstride + p * GK_VLEN);                              \
    }
#define WFMA(p)                                                                        \
    if (p < NP) {                                                                       \
        gk_vec v_ = VBCAST(ap + p * GK_VLEN + j);                                       \
        a0_##p = VFMA(w0, v_, a0_##p);                                                  \
        if (NM > 1)                                                                     \
            a1_##p = VFMA(w1, v_, a1_##p);                                              \
        if (NM > 2)                                                                     \
            a2_##p = VFMA(w2, v_, a2_##p);                                              \
        if (NM > 3)                                                                     \
            a3_##p = VFMA(w3, v_, a3_##p);                                              \
    }
#define WSTORE(p)                                                                      \
    if (p < NP) {                                                                       \
        VSTORE(c + p * GK_VLEN, a0_##p);                                                \
        if (NM > 1)                                                                     \
            VSTORE(c + cstride + p * GK_VLEN, a1_##p);                                  \
        if (NM > 2)                                                                     \
            VSTORE(c + 2 * cstride + p * GK_VLEN, a2_##p);                              \
        if (NM > 3)                                                                     \
            VSTORE(c + 3 * cstride + p * GK_VLEN, a3_##p);                              \
    }
GK_INLINE void wino_gemm(int NM, int NP, const float *a, size_t astride, size_t nk,
                         const float *w, size_t wstride, float *c, size_t cstride, bool first)
{
    GK_REP12(WDECL)
    if (!first) {
        GK_REP12(WLOAD)
    }
    for (size_t kb = 0; kb < nk; kb++) {
        const float *ap = a + kb * astride, *wp = w + kb * GK_VLEN * GK_VLEN;
        for (size_t j = 0; j < GK_VLEN; j++) {
            gk_vec w0 = VLOAD(wp + j * GK_VLEN);
            gk_vec w1 = NM > 1 ? VLOAD(wp + wstride + j * GK_VLEN) : w0;
            gk_vec w2 = NM > 2 ? VLOAD(wp + 2 * wstride + j * GK_VLEN) : w0;
            gk_vec w3 = NM > 3 ? VLOAD(wp + 3 * wstride + j * GK_VLEN) : w0;
            GK_REP12(WFMA)
        }
    }
    GK_REP12(WSTORE)
}
#undef WDECL
#undef WLOAD
#undef WFMA
#undef WSTORE

/* The tail of a tile group past its whole register tiles: nq * WNQ tiles (nq < WNP / WNQ), in
 * register tiles of more output blocks (4 x WNQ, or 2 x 2 WNQ), so that a 14x14 plane's 16
 * tiles run as 12 + 4, not 24, and a 7x7 plane's 4 as 4. The arguments are wino_gemm's, for
 * output blocks mi.. of the unit (nm in all). */
GK_INLINE void wino_gemm_tail(size_t nq, const float *a, size_t astride, size_t nk,
                              const float *w, size_t wstride, float *c, size_t cstride,
                              size_t nm, bool first)
{
#define WTAIL(NPT, NMT)                                                                \
    for (size_t mi = 0; mi < nm; mi += NMT) {                                          \
        const float *w_ = w + mi * wstride;                                            \
        float *c_ = c + mi * cstride;                                                  \
        switch (nm - mi < NMT ? nm - mi : NMT) {                                       \
        case 1: wino_gemm(1, NPT, a, astride, nk, w_, wstride, c_, cstride, first); break; \
        case 2: wino_gemm(2, NPT, a, astride, nk, w_, wstride, c_, cstride, first); break; \
        case 3: wino_gemm(3, NPT, a, astride, nk, w_, wstride, c_, cstride, first); break; \
        default: wino_gemm(4, NPT, a, astride, nk, w_, wstride, c_, cstride, first); break; \
        }                                                                              \
    }
    if (nq == 1) {
        WTAIL(WNQ, 4)
    } else {
        WTAIL(2 * WNQ, 2)
    }
#undef WTAIL
}

void GK_FN(wino_nchwc)(float *out, const float *in, const float *wt, const float *bias,
                       const float *res, float *scratch, size_t slots, size_t n, size_t cb,
                       size_t ih, size_t iw, size_t mb, size_t oh, size_t ow, size_t ph,
                       size_t pw, size_t plan_tg, size_t plan_mg, size_t plan_kc, int act,
                       float alpha, float beta, unsigned *work, int tid, int nthreads)
{
    const size_t V = GK_VLEN;
    /* One scratch slot per thread: threads past the slots take no units (the others take
     * theirs from the counter, or share the static split among themselves). */
    int nth = (size_t)nthreads < slots ? nthreads : (int)slots;
    if (tid >= nth)
        return;
    /* The plan the cpu backend chose (constants, folded by the JIT), or 0, 0, 0: search it
     * (kernels_bench, the kernel tests). */
    gk_wino_plan pl = plan_tg && plan_mg && plan_kc
                          ? gk_wino_plan_at(n, mb, oh, ow, V, plan_tg, plan_mg, plan_kc)
                          : gk_wino_plan_of(n, cb, mb, oh, ow, V, GK_WINO_RATE_SEARCH);
    wino_shape s = { cb, ih, iw, mb, oh, ow, ph, pw, (oh + 3) / 4, (ow + 3) / 4, 0 };
    s.tpi = s.th * s.tw;
    /* A group of tg tiles computes ts of them (gk_wino_padded): the scratch's tile stride. */
    const size_t tg = pl.tg, ts = pl.tgp, kc = pl.kc, mg = pl.mg;
    float *vt = scratch + (size_t)tid * pl.slot, *mt = vt + 36 * kc * ts * V;
    /* Vt [36][kc][ts][V], Mt [36][mg][ts][V]. */
    const size_t vt_e = kc * ts * V, mt_e = mg * ts * V, cpad = cb * V;
    const size_t w_m = 36 * cpad * V; /* floats between output blocks' weights */
    gk_units units = gk_units_of(pl.ngr * pl.nmg, work, tid, nth);
    for (size_t u; gk_units_next(&units, &u);) {
        size_t grp = u / pl.nmg, mgi = u % pl.nmg;
        size_t r0 = grp * tg, nt = pl.tiles - r0 < tg ? pl.tiles - r0 : tg;
        size_t ntp = gk_wino_padded(nt, V, mg), nfull = ntp / WNP * WNP;
        size_t m0 = mgi * mg, nm = mb - m0 < mg ? mb - m0 : mg;
        for (size_t k0 = 0; k0 < cb; k0 += kc) {
            size_t nk = cb - k0 < kc ? cb - k0 : kc;
            for (size_t kb = 0; kb < nk; kb++) {
                for (size_t t = 0; t < nt; t++)
                    wino_input_tile(&s, in, r0 + t, k0 + kb, vt + (kb * ts + t) * V, vt_e);
                /* The register tile's dead tiles read zeros (their sums are never stored). */
                for (size_t e = 0; e < 36; e++)
                    for (size_t t = nt; t < ntp; t++)
                        VSTORE(vt + e * vt_e + (kb * ts + t) * V, VZERO());
            }
            for (size_t e = 0; e < 36; e++) {
                const float *ae = vt + e * vt_e;
                for (size_t mi = 0; mi < nm; mi += 2) {
                    const float *w = wt + (m0 + mi) * w_m + (e * cpad + k0 * V) * V;
                    float *c = mt + e * mt_e + mi * ts * V;
                    /* The next position's weights of this pair into L2: a unit reads its
                     * weights once, in runs of nk * V * V floats per block and position,
                     * too short for the hardware prefetchers when they come from memory. */
                    if (e + 1 < 36)
                        for (size_t b = 0; b < 2 && mi + b < nm; b++)
                            for (size_t i = 0; i < nk * V * V; i += 16)
                                _mm_prefetch((const char *)(w + b * w_m + cpad * V + i),
                                             _MM_HINT_T1);
                    for (size_t t = 0; t < nfull; t += WNP) {
                        if (mi + 1 < nm)
                            wino_gemm(2, WNP, ae + t * V, ts * V, nk, w, w_m, c + t * V,
                                      ts * V, k0 == 0);
                        else
                            wino_gemm(1, WNP, ae + t * V, ts * V, nk, w, w_m, c + t * V,
                                      ts * V, k0 == 0);
                    }
                }
                /* The tail after all the pairs: their weights of this position are in L1/L2
                 * now. */
                if (ntp > nfull)
                    wino_gemm_tail((ntp - nfull) / WNQ, ae + nfull * V, ts * V, nk,
                                   wt + m0 * w_m + (e * cpad + k0 * V) * V, w_m,
                                   mt + e * mt_e + nfull * V, ts * V, nm, k0 == 0);
            }
        }
        for (size_t mi = 0; mi < nm; mi++)
            for (size_t t = 0; t < nt; t++)
                wino_output_tile(&s, out, res, r0 + t, m0 + mi, mt + (mi * ts + t) * V, mt_e,
                                 bias, act, alpha, beta);
    }
}
