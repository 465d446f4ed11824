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
    size_t tg, ngr;    /* tiles per group (a multiple of np, or all the tiles), groups */
    size_t tgp;        /* tiles a group computes, padded (gk_wino_padded): the scratch's */
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

/* Cost of a tail's tile relative to a whole register tile's: with AVX-512 the 4 x 4 and 2 x 8
 * tails keep 16 accumulators (1.2; 1.6 where the group has fewer than 4 output blocks, so that
 * the 4 x 4 tail runs 2 x 4); with AVX2's 16 registers a tail has 8, as many as the FMA latency
 * needs, and twice the loads per multiply-add (2.0: ResNet-50's 256->256 @14 took 2.0 ms with
 * 12 + 4 tiles against 1.3 ms padded to 18). */
static inline double gk_wino_tail_cost(size_t v, size_t mg)
{
    return v >= 16 ? (mg >= 4 ? 1.2 : 1.6) : 2.0;
}

/* Tiles a group of nt computes: whole register tiles, and the rest either as a tail or padded
 * to one more register tile, whichever costs less (the kernel and the plan decide alike). */
static inline size_t gk_wino_padded(size_t nt, size_t v, size_t mg)
{
    size_t np = gk_wino_np(v), nq = gk_wino_nq(v), full = nt / np * np, rem = nt - full;
    if (rem == 0)
        return nt;
    size_t tail = (rem + nq - 1) / nq * nq;
    return (double)tail * gk_wino_tail_cost(v, mg) < (double)np ? full + tail : full + np;
}

/* Bytes per cycle at which one core reads weights past its L2: from L3 (re-read, the weights
 * of one layer up to 8 MiB) and from memory (the first read of every layer's weights in a
 * network, whose weights outgrow L3 - ResNet-50's 100 MB; and re-reads past 8 MiB). Measured on
 * the 2-core Zen 5 bench VM with neighbours running: 512->512 @7, whose 37.7 MB of transformed
 * weights outgrow the 32 MiB L3 and feed only 4 tiles, takes 1.5 ms at one thread (6 B/cycle
 * at 4.2 GHz). The estimate adds the stream to the GEMM (no overlap): the prefetches hide
 * some of it, but in a network the other core streams too. */
#define GK_WINO_BW_L3 8.0
#define GK_WINO_BW_MEM 6.0

/* The FMA rate a kernel given no plan searches for (two pipes); the cpu backend searches for
 * the host's (cpu_wino_fma_rate) and passes the plan. */
#define GK_WINO_RATE_SEARCH 2.0

/* Estimated cycles of one plan on a core that issues `rate` vector FMAs of v lanes per cycle
 * (2 on two FMA pipes; 1 for AVX-512 on Zen 4, which splits a 512-bit FMA in two). */
static inline double gk_wino_cost(size_t n_tiles, size_t cb, size_t mb, size_t v, size_t tg,
                                  size_t mg, size_t kc, size_t np, double rate)
{
    size_t ngr = (n_tiles + tg - 1) / tg, nmg = (mb + mg - 1) / mg, nck = (cb + kc - 1) / kc;
    /* Tiles computed (gk_wino_padded), those in tails counted at their cost. */
    size_t last = n_tiles - (ngr - 1) * tg, lastp = gk_wino_padded(last, v, mg);
    size_t tgp = gk_wino_padded(tg, v, mg);
    double done = (double)((ngr - 1) * tgp + lastp);
    double tail = (double)((ngr - 1) * (tgp % np) + lastp % np);
    double fma = (done + (gk_wino_tail_cost(v, mg) - 1.0) * tail) * 36.0 * (double)(cb * v) *
                 (double)mb;
    /* At 75% of the FMA peak (the direct kernel reaches 80-97%: shorter reductions here, and
     * the broadcasts' loads); a group of one output block runs one-block register tiles, bound
     * by loads, not FMAs. */
    double gemm = fma / rate / 0.75 * (mg == 1 ? 1.6 : 1.0);
    /* Partial sums loaded and stored once per chunk. */
    double partial = done * 36.0 * (double)mb * (double)nck;
    /* Input transform (~80 cycles per tile and input block), once per output group; output
     * transform once. */
    double itf = (double)nmg * done * (double)cb * 80.0, otf = (double)n_tiles * mb * 60.0;
    /* Transformed weights: the first read from memory; read again by every further tile group,
     * from L2 while they fit half of it, from L3 up to 8 MiB, else from memory. */
    double wbytes = 36.0 * (double)(cb * v) * (double)(mb * v) * 4.0;
    double wfirst = wbytes / GK_WINO_BW_MEM, wcost = 0.0;
    if (wbytes > (double)GK_WINO_L2)
        wcost = (double)(ngr - 1) * wbytes /
                (wbytes > 8.0 * 1048576.0 ? GK_WINO_BW_MEM : GK_WINO_BW_L3);
    double c = gemm + partial + itf + otf + wcost;
    /* Fewer than 8 units leave threads idle at the end (the same rule as the direct conv);
     * not the first read of the weights, which the direct estimate has unpenalized. */
    size_t units = ngr * nmg;
    if (units < 8)
        c *= 1.0 + 0.1 * (double)(8 - units);
    return c + wfirst;
}

/* The plan of tile groups of tg tiles, output groups of mg blocks and chunks of kc input blocks
 * (what gk_wino_plan_of chose), without its estimate. The cpu backend searches once per layer
 * at compile time and gives the kernel tg, mg and kc as constants: the JIT then folds the plan
 * and keeps only the register tiles and tails the layer uses, where the search inside every
 * specialized kernel left them all to run time (and to the optimizer: GoogLeNet's five
 * Winograd layers cost about 0.5 s of its compile). */
static inline gk_wino_plan gk_wino_plan_at(size_t n, size_t mb, size_t oh, size_t ow, size_t v,
                                           size_t tg, size_t mg, size_t kc)
{
    gk_wino_plan p = { 0 };
    p.np = gk_wino_np(v);
    p.tiles = n * ((oh + 3) / 4) * ((ow + 3) / 4);
    p.tg = tg, p.mg = mg, p.kc = kc;
    p.ngr = (p.tiles + tg - 1) / tg;
    p.nmg = (mb + mg - 1) / mg;
    p.tgp = gk_wino_padded(tg, v, mg);
    p.slot = 36 * p.tgp * v * (kc + mg);
    return p;
}

static inline gk_wino_plan gk_wino_plan_of(size_t n, size_t cb, size_t mb, size_t oh,
                                           size_t ow, size_t v, double rate)
{
    gk_wino_plan p = { 0 };
    size_t np = gk_wino_np(v);
    p.np = np;
    p.tiles = n * ((oh + 3) / 4) * ((ow + 3) / 4);
    double best = -1.0;
    /* Groups of whole register tiles, or one group of all the tiles (whole register tiles and
     * a tail: a 14x14 plane's 16 tiles as 12 + 4). The kernel plans at every call, so the
     * search stays short. */
    size_t maxk = (p.tiles + np - 1) / np;
    for (size_t k = 1; k <= maxk; k++) {
        size_t tg = k * np < p.tiles ? k * np : p.tiles;
        for (size_t mg = 1;; mg = mg * 2 < mb ? mg * 2 : mb) {
            for (size_t kc = 1;; kc = kc * 2 < cb ? kc * 2 : cb) {
                size_t floats = 36 * gk_wino_padded(tg, v, mg) * v * (kc + mg);
                if (floats * sizeof(float) <= GK_WINO_L2 || (k == 1 && mg == 1 && kc == 1)) {
                    double c = gk_wino_cost(p.tiles, cb, mb, v, tg, mg, kc, np, rate);
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
    gk_wino_plan q = gk_wino_plan_at(n, mb, oh, ow, v, p.tg, p.mg, p.kc);
    q.cycles = best;
    return q;
}

#endif
