// typed_scalar.c - Elementwise kernels of every element kind (unary, binary, comparisons,
// logic, Cast, Where, Splat): plain loops over a thread's share of the element functions of
// typed_math.h, which the evaluator calls for the same ops.
//
// Kind and op codes are arguments: the backend passes them as constants, so after inlining
// every switch folds away and each call site is one loop over the kinds it names. Outputs may
// alias an input of the same kind (in-place elementwise): every element is read before it is
// written.
#include "kernels.h"
#include "typed_math.h"

/* Grain of the thread split: 64 elements, a whole number of 64-byte lines for every kind. */
#define GRAIN 64

void gk_unary_any_scalar(int op, int tx, int ty, double p, double q, int64_t n, const void *x,
                         void *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        gk_unary_elem(op, tx, ty, p, q, x, y, i);
}

void gk_binary_any_scalar(int op, int ta, int tb, int ty, int64_t n, const void *a,
                          const void *b, void *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        gk_binary_elem(op, ta, tb, ty, a, b, y, i);
}

void gk_cast_any_scalar(int tx, int ty, int64_t n, const void *x, void *y, int tid,
                        int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        gk_cast_elem(tx, ty, x, y, i);
}

/* Elements move as integers of their size: the bits are copied, never converted. Both
 * operands are read and blended through a mask (not `c ? a : b`, which LLVM turns into a
 * load through a selected pointer and leaves scalar), so the loop vectorizes. */
#define WHERE_LOOP(T)                                                                        \
    for (int64_t i = lo; i < hi; i++) {                                                      \
        T m = (T)((T)0 - (T)(c[i] != 0));                                                    \
        ((T *)y)[i] = (T)((((const T *)a)[i] & m) | (((const T *)b)[i] & (T)~m));           \
    }

void gk_where_any_scalar(int esize, int64_t n, const uint8_t *c, const void *a, const void *b,
                         void *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    switch (esize) {
    case 1: WHERE_LOOP(uint8_t) break;
    case 2: WHERE_LOOP(uint16_t) break;
    case 4: WHERE_LOOP(uint32_t) break;
    default: WHERE_LOOP(uint64_t) break;
    }
}

#define SPLAT_LOOP(T)                                                                        \
    {                                                                                        \
        T v;                                                                                 \
        memcpy(&v, &fill, sizeof v);                                                         \
        for (int64_t i = lo; i < hi; i++)                                                    \
            ((T *)y)[i] = v;                                                                 \
    }

/* The value is converted once to kind ty, as the evaluator's Splat does, then copied. */
void gk_splat_any_scalar(int ty, double value, int64_t n, void *y, int tid, int nthreads)
{
    int64_t lo, hi;
    gk_split(n, GRAIN, tid, nthreads, &lo, &hi);
    uint64_t fill = 0;
    gk_stf(ty, &fill, 0, value);
    switch (gk_dt_size(ty)) {
    case 1: SPLAT_LOOP(uint8_t) break;
    case 2: SPLAT_LOOP(uint16_t) break;
    case 4: SPLAT_LOOP(uint32_t) break;
    default: SPLAT_LOOP(uint64_t) break;
    }
}
