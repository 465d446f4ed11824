// units.h - How the threads of one kernel call share its work units: a static share, or
// guided runs taken from a counter the backend zeroes before the call (gk_units). Shared by
// the blocked f32 kernels (simd.h includes it) and the int8 kernels (kernels/q*), which need
// it without simd.h's vector vocabulary.
#ifndef GK_UNITS_H
#define GK_UNITS_H

#include <stddef.h>

#ifndef GK_INLINE
#define GK_INLINE static inline __attribute__((always_inline))
#endif

/* Thread tid's share [lo, hi) of `total` work units: contiguous, disjoint, depending only on
 * (total, nthreads); each unit is computed the same way whoever computes it. */
GK_INLINE void gk_share(size_t total, int tid, int nthreads, size_t *lo, size_t *hi)
{
    *lo = total * (size_t)tid / (size_t)nthreads;
    *hi = total * (size_t)(tid + 1) / (size_t)nthreads;
}

/* The work units [0, total) of one kernel call, as a thread sees them. Without a counter
 * (work == NULL) they are thread tid's static share; with one, threads take runs of units from
 * the shared counter *work (zero before the call; the backend clears its counters at the start
 * of every run), so a thread that falls behind (its core busy with something else) takes
 * fewer. A run is a 1 / (2 * nthreads) share of the units left ("guided" scheduling): long
 * runs while much is left, few atomics for small units (a depthwise row), and single units at
 * the end, so the threads reach the barrier close together even when units are large (a
 * deep convolution has a few dozen). A unit computes the same outputs whichever thread runs
 * it: results are identical either way and for every thread count. */
typedef struct gk_units {
    size_t next, hi, total, share;
    unsigned *work;
} gk_units;

GK_INLINE gk_units gk_units_of(size_t total, unsigned *work, int tid, int nthreads)
{
    gk_units it = { 0, 0, total, 2 * (size_t)nthreads, total < (1u << 31) ? work : NULL };
    if (!it.work)
        gk_share(total, tid, nthreads, &it.next, &it.hi);
    return it;
}

GK_INLINE int gk_units_next(gk_units *it, size_t *u)
{
    if (it->next >= it->hi) {
        if (!it->work)
            return 0;
        unsigned base = __atomic_load_n(it->work, __ATOMIC_RELAXED), run;
        do {
            if (base >= it->total)
                return 0;
            run = (unsigned)((it->total - base) / it->share);
            run = run ? run : 1;
        } while (!__atomic_compare_exchange_n(it->work, &base, base + run, 1, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));
        it->next = base;
        it->hi = (size_t)base + run;
    }
    *u = it->next++;
    return 1;
}

#endif
