// wino_plan.h - How the Winograd F(4x4,3x3) convolution (wino_tmpl.h) walks a layer: tile groups,
// output-block groups, chunks of input blocks, and the scratch they need. Plain C shared by the
// kernel and the cpu backend (src/backend/cpu/winograd.c), which sizes the kernel's scratch
// operand and chooses between Winograd and the direct kernel with the same estimate.
//
// A work unit is (tile group, output group): it transforms its tiles' input one chunk of input
// blocks at a time into Vt [36][kc][tg][V] (the 36 positions of each 6x6 input tile), runs the
// 36 per-position GEMMs of that chunk into Mt [36][mg][tg][V] (partial sums over the chunks),
// and then transforms Mt into its 4x4 output tiles. Vt and Mt are one thread's scratch; they
// are sized to stay in L2 (GK_WINO_L2), so nothing the size of the whole transformed input or
// output exists. Every tile group reads all the transformed weights (4x the direct kernel's)
// again, and every output group transforms its tiles' input again: the plan trades the two
// against the L2 budget by an estimate of cycles, from the shape alone (so every thread count
// sums alike).
#ifndef GK_WINO_PLAN_H
#define GK_WINO_PLAN_H

#include <stddef.h>

/* Scratch of one thread (Vt + Mt), bytes: half of a 1 MiB L2 (Zen 4/5), the other half for
 * the weights streaming through and the input tiles. */
#ifndef GK_WINO_L2
#define GK_WINO_L2 ((size_t)512 << 10)
#endif

typedef struct gk_wino_plan {
    size_t tiles;      /* 4x4 output tiles of all images (a group may span images) */
    size_t tg, ngr;    /* tiles per group (a multiple of nq), groups */
    size_t mg, nmg;    /* output blocks per output group, output groups */
    size_t kc;         /* input blocks per chunk */
    size_t np;         /* tiles of the GEMM register tile (its tails: gk_wino_nq) */
    size_t slot;       /* scratch floats per thread: Vt then Mt */
    double cycles;     /* the estimate (one thread) */
} gk_wino_plan;

/* The GEMM register tile: 2 output blocks x np tiles of accumulators (AVX-512 12, AVX2 6). */
static inline size_t gk_wino_np(size_t v)
{
    return v >= 16 ? 12 : 6;
}

/* A group's tiles past its whole register tiles run in tails of nq tiles (4 x nq or 2 x 2nq
 * accumulators): a group is padded to a multiple of nq, not of np. */
static inline size_t gk_wino_nq(size_t v)
{
    return v >= 16 ? 4 : 2;
}

/* Estimated cycles of one plan (AVX-512/AVX2 core, 2 FMA pipes). */
static inline double gk_wino_cost(size_t n_tiles, size_t cb, size_t mb, size_t v, size_t tg,
                                  size_t mg, size_t kc, size_t np, size_t nq)
{
    size_t ngr = (n_tiles + tg - 1) / tg, nmg = (mb + mg - 1) / mg, nck = (cb + kc - 1) / kc;
    /* Tiles computed, each group's padded to the tail's nq; of them, those in tails (fewer
     * accumulators, more loads per multiply-add: counted 10% slower). */
    size_t last = n_tiles - (ngr - 1) * tg, lastp = (last + nq - 1) / nq * nq;
    double done = (double)((ngr - 1) * tg + lastp);
    double tail = (double)((ngr - 1) * (tg % np) + lastp % np);
    double fma = (done + 0.1 * tail) * 36.0 * (double)(cb * v) * (double)mb;
    /* At 75% of the FMA peak (the direct kernel reaches 80-97%: shorter reductions here, and
     * the broadcasts' loads); a group of one output block runs one-block register tiles, bound
     * by loads, not FMAs. */
    double gemm = fma / 2.0 / 0.75 * (mg == 1 ? 1.6 : 1.0);
    /* Partial sums loaded and stored once per chunk. */
    double partial = done * 36.0 * (double)mb * (double)nck;
    /* Input transform (~80 cycles per tile and input block), once per output group; output
     * transform once. */
    double itf = (double)nmg * done * (double)cb * 80.0, otf = (double)n_tiles * mb * 60.0;
    /* Transformed weights, read again by every tile group: from L3 (about 8 B/cycle) when
     * they outgrow L2, from memory past 8 MiB (2.5 B/cycle, about 10 GB/s: what one core of
     * the shared 2-core bench machine sustains while its neighbours run). */
    double wbytes = 36.0 * (double)(cb * v) * (double)(mb * v) * 4.0;
    double wcost = wbytes <= (double)GK_WINO_L2 ? 0.0
                   : (double)ngr * wbytes / (wbytes > 8.0 * 1048576.0 ? 2.5 : 8.0);
    double c = gemm + partial + itf + otf + wcost;
    /* Fewer than 8 units leave threads idle at the end (the same rule as the direct conv). */
    size_t units = ngr * nmg;
    if (units < 8)
        c *= 1.0 + 0.1 * (double)(8 - units);
    return c;
}

static inline gk_wino_plan gk_wino_plan_of(size_t n, size_t cb, size_t mb, size_t oh,
                                           size_t ow, size_t v)
{
    gk_wino_plan p = { 0 };
    size_t np = gk_wino_np(v), nq = gk_wino_nq(v);
    p.np = np;
    p.tiles = n * ((oh + 3) / 4) * ((ow + 3) / 4);
    double best = -1.0;
    /* Groups of whole register tiles, or one group of all the tiles (whole register tiles and
     * a tail: a 14x14 plane's 16 tiles as 12 + 4). The kernel plans at every call, so the
     * search stays short. */
    size_t all = (p.tiles + nq - 1) / nq * nq, maxk = (p.tiles + np - 1) / np;
    for (size_t k = 1; k <= maxk; k++) {
        size_t tg = k * np < all ? k * np : all;
        for (size_t mg = 1;; mg = mg * 2 < mb ? mg * 2 : mb) {
            for (size_t kc = 1;; kc = kc * 2 < cb ? kc * 2 : cb) {
                size_t floats = 36 * tg * v * (kc + mg);
                if (floats * sizeof(float) <= GK_WINO_L2 || (k == 1 && mg == 1 && kc == 1)) {
                    double c = gk_wino_cost(p.tiles, cb, mb, v, tg, mg, kc, np, nq);
                    if (best < 0 || c < best) {
                        best = c;
                        p.tg = tg, p.mg = mg, p.kc = kc;
                    }
                }
                if (kc >= cb)
                    break;
            }
            if (mg >= mb)
                break;
        }
        if (36 * tg * v * 2 * sizeof(float) > GK_WINO_L2)
            break; /* even one block each no longer fits */
    }
    p.cycles = best;
    p.ngr = (p.tiles + p.tg - 1) / p.tg;
    p.nmg = (mb + p.mg - 1) / p.mg;
    p.slot = 36 * p.tg * v * (p.kc + p.mg);
    return p;
}

#endif
