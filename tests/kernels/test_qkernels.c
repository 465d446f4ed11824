// test_qkernels.c - The quantized 8-bit kernels other than the dense convolution (quantize,
// dequantize, rescale, qadd, qmaxpool, qavgpool, qdwconv, q_to_nhwc, q_from_nhwc), every variant
// the host runs, against plain-C references built on qmath.h: the bytes must be equal exactly.
//
// Shapes are random (sizes 1, odd, around the vector widths, channel strides above C, windows
// with pads and dilations, some without a tap inside the input), so are scales and zero points,
// with multipliers of powers of two that make rounding ties and large ones that saturate;
// quantize also sees NaN, infinities and values beyond 2^22 steps. Inputs are u8 and i8. Every
// kernel runs with 1 thread and with 3 (called one after another; the depthwise kernel also
// with 2 threads at once taking its units from a counter), and bytes a kernel must not
// write (channels [C, cs) of an NHWC result) keep their canary.
#include "check.h"
#include "kernels_test.h"
#include "../../kernels/q8.h"
#include "../../kernels/qdwconv/qdwpack.h"

#include <stdint.h>

#if defined(GLOWC_SANITIZE)
enum { TRIALS = 150 };
#else
enum { TRIALS = 1000 };
#endif

static uint64_t rng_state = 88172645463325252ull;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* A random integer in [a, b]. */
static int rint_in(int a, int b)
{
    return a + (int)(rnd() % (uint32_t)(b - a + 1));
}

static uint8_t *rnd_bytes(size_t count)
{
    uint8_t *p = malloc(count ? count : 1);
    if (!p)
        abort();
    for (size_t i = 0; i < count; i++)
        p[i] = (uint8_t)rnd();
    return p;
}

static uint8_t *canary_bytes(size_t count)
{
    uint8_t *p = malloc(count ? count : 1);
    if (!p)
        abort();
    memset(p, 0xA5, count);
    return p;
}

/* Element counts of the elementwise tests: 1, odd, around 8, 16, 64, and larger. */
static int64_t rnd_count(void)
{
    static const int64_t fixed[] = { 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 200 };
    return rnd() % 4 ? fixed[rnd() % (sizeof fixed / sizeof fixed[0])] : rint_in(1, 3000);
}

/* The kind of a result: its range [lo, hi], sometimes narrowed as a fused Relu or Clip. */
typedef struct {
    int sgn, lo, hi, zero;
} qkind;

static qkind rnd_kind(int sgn)
{
    qkind k = { sgn, sgn ? -128 : 0, sgn ? 127 : 255, 0 };
    k.zero = rint_in(k.lo, k.hi);
    if (rnd() % 4 == 0)
        k.lo = k.zero; /* Relu */
    else if (rnd() % 4 == 0) {
        k.lo = rint_in(k.lo, k.zero);
        k.hi = rint_in(k.zero, k.hi);
    }
    return k;
}

/* A multiplier: a power of two (ties), 1/k (products a hair off an integer: with a power of
 * two for the other operand of an Add, a fused multiply-add would round their sum
 * differently), a random one, or a large one (saturation). */
static float rnd_mult(void)
{
    switch (rnd() % 5) {
    case 0: return ldexpf(1.0f, rint_in(-8, 1));
    case 4: return 1.0f / (float)rint_in(3, 13);
    case 1: return (float)rint_in(1, 400) / 64.0f;
    default: return (float)ldexp((double)rint_in(1000, 2000) / 1000.0, rint_in(-10, 2));
    }
}

static int32_t ld(const uint8_t *p, int sgn)
{
    return sgn ? (int32_t)(int8_t)*p : (int32_t)*p;
}

/* Compares a result to the reference over `count` bytes; names the kernel on a mismatch. */
static void check_bytes(const gk_row *row, const char *what, const uint8_t *got,
                        const uint8_t *want, size_t count, int threads)
{
    size_t bad = 0;
    while (bad < count && got[bad] == want[bad])
        bad++;
    CHECK(bad == count);
    if (bad != count)
        fprintf(stderr, "  %s %s (%d threads): byte %zu is %u, expected %u\n", row->name, what,
                threads, bad, got[bad], want[bad]);
}

/* --- quantize, dequantize, rescale --- */

static void test_quantize(const gk_row *row)
{
    __typeof__(gk_quantize_q8_scalar) *fn = ROW_FN(row, gk_quantize_q8_scalar);
    for (int trial = 0; trial < TRIALS; trial++) {
        int64_t n = rnd_count();
        qkind k = rnd_kind(rnd() % 2);
        float scale = rnd() % 2 ? ldexpf(1.0f, rint_in(-9, 0)) : rnd_mult() * 0.01f;
        float *x = malloc((size_t)n * sizeof(float));
        uint8_t *want = malloc((size_t)n), *y1 = canary_bytes((size_t)n);
        uint8_t *y3 = canary_bytes((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            switch (rnd() % 10) {
            case 0: x[i] = NAN; break;
            case 1: x[i] = rnd() % 2 ? INFINITY : -INFINITY; break;
            case 2: x[i] = scale * (float)rint_in(-8000000, 8000000); break; /* beyond 2^22 */
            case 3: x[i] = scale * ((float)rint_in(-300, 300) + 0.5f); break;  /* ties */
            case 4: x[i] = rnd() % 2 ? -0.0f : 0.0f; break;
            default: x[i] = scale * (float)rint_in(-200000, 200000) / 1000.0f; break;
            }
            want[i] = (uint8_t)gk_quantize(x[i], scale, k.zero, k.lo, k.hi);
        }
        fn(n, x, y1, scale, k.zero, k.lo, k.hi, 0, 1);
        for (int t = 0; t < 3; t++)
            fn(n, x, y3, scale, k.zero, k.lo, k.hi, t, 3);
        check_bytes(row, "quantize", y1, want, (size_t)n, 1);
        check_bytes(row, "quantize", y3, want, (size_t)n, 3);
        free(x), free(want), free(y1), free(y3);
    }
}

static void test_dequantize(const gk_row *row)
{
    __typeof__(gk_dequantize_q8_scalar) *fn = ROW_FN(row, gk_dequantize_q8_scalar);
    for (int trial = 0; trial < TRIALS; trial++) {
        int64_t n = rnd_count();
        int sgn = rnd() % 2;
        int zero = sgn ? rint_in(-128, 127) : rint_in(0, 255);
        float scale = rnd_mult() * 0.037f;
        uint8_t *x = rnd_bytes((size_t)n);
        float *want = malloc((size_t)n * sizeof(float)), *y1 = malloc((size_t)n * sizeof(float));
        float *y3 = malloc((size_t)n * sizeof(float));
        for (int64_t i = 0; i < n; i++)
            want[i] = gk_dequantize(ld(x + i, sgn), scale, zero);
        fn(n, x, y1, sgn, scale, zero, 0, 1);
        for (int t = 0; t < 3; t++)
            fn(n, x, y3, sgn, scale, zero, t, 3);
        CHECK(memcmp(y1, want, (size_t)n * sizeof(float)) == 0);
        CHECK(memcmp(y3, want, (size_t)n * sizeof(float)) == 0);
        free(x), free(want), free(y1), free(y3);
    }
}

static void test_rescale(const gk_row *row)
{
    __typeof__(gk_rescale_q8_scalar) *fn = ROW_FN(row, gk_rescale_q8_scalar);
    for (int trial = 0; trial < TRIALS; trial++) {
        int64_t n = rnd_count();
        int sx = rnd() % 2;
        int zx = sx ? rint_in(-128, 127) : rint_in(0, 255);
        qkind k = rnd_kind(rnd() % 2);
        float mult = rnd_mult();
        uint8_t *x = rnd_bytes((size_t)n), *want = malloc((size_t)n);
        uint8_t *y1 = canary_bytes((size_t)n), *y3 = canary_bytes((size_t)n);
        for (int64_t i = 0; i < n; i++)
            want[i] = (uint8_t)gk_requant(ld(x + i, sx) - zx, mult, k.zero, k.lo, k.hi);
        fn(n, x, y1, sx, zx, mult, k.zero, k.lo, k.hi, 0, 1);
        for (int t = 0; t < 3; t++)
            fn(n, x, y3, sx, zx, mult, k.zero, k.lo, k.hi, t, 3);
        check_bytes(row, "rescale", y1, want, (size_t)n, 1);
        check_bytes(row, "rescale", y3, want, (size_t)n, 3);
        /* In place: y is x. */
        fn(n, x, x, sx, zx, mult, k.zero, k.lo, k.hi, 0, 1);
        check_bytes(row, "rescale in place", x, want, (size_t)n, 1);
        free(x), free(want), free(y1), free(y3);
    }
}

/* --- qadd: Add, Sub, Mul, Max, Min --- */

static int32_t ref_qadd(int op, int32_t a, int32_t b, float ma, float mb, qkind k)
{
    int32_t qa, qb;
    switch (op) {
    case GK_BIN_ADD: return gk_qadd(a, b, ma, mb, k.zero, k.lo, k.hi);
    case GK_BIN_SUB: {
        /* Sub written out as the contract states it: a product minus a product. */
        float v = (float)a * ma - (float)b * mb;
        return gk_q_clamp(gk_q_round(v) + k.zero, k.lo, k.hi);
    }
    case GK_BIN_MUL: return gk_requant(a * b, ma, k.zero, k.lo, k.hi);
    default:
        qa = gk_requant(a, ma, k.zero, k.lo, k.hi);
        qb = gk_requant(b, mb, k.zero, k.lo, k.hi);
        return op == GK_BIN_MAX ? (qa > qb ? qa : qb) : (qa < qb ? qa : qb);
    }
}

static void test_qadd(const gk_row *row)
{
    static const int ops[] = { GK_BIN_ADD, GK_BIN_SUB, GK_BIN_MUL, GK_BIN_MAX, GK_BIN_MIN };
    __typeof__(gk_qadd_q8_scalar) *fn = ROW_FN(row, gk_qadd_q8_scalar);
    for (int trial = 0; trial < 2 * TRIALS; trial++) {
        int op = ops[trial % 5];
        int64_t n = rnd_count();
        int sa = rnd() % 2, sb = rnd() % 2;
        int za = sa ? rint_in(-128, 127) : rint_in(0, 255);
        int zb = sb ? rint_in(-128, 127) : rint_in(0, 255);
        float ma = rnd_mult(), mb = rnd_mult();
        if (op == GK_BIN_MUL)
            ma *= 1.0f / 128;
        if (trial % 3 == 0) { /* sums on ties, off them by the rounding of one product */
            ma = 1.0f / (float)rint_in(3, 7);
            mb = ldexpf(1.0f, -rint_in(1, 3));
        }
        qkind k = rnd_kind(rnd() % 2);
        /* A folded rescale (Relu: the range from its zero point) on some trials. */
        qkind pk = rnd_kind(rnd() % 2);
        float pm = trial % 4 == 1 ? rnd_mult() : 0.0f;
        int plo = rnd() % 2 ? pk.zero : pk.lo;
        uint8_t *a = rnd_bytes((size_t)n), *b = rnd_bytes((size_t)n), *want = malloc((size_t)n);
        uint8_t *y1 = canary_bytes((size_t)n), *y3 = canary_bytes((size_t)n);
        for (int64_t i = 0; i < n; i++) {
            int32_t v = ref_qadd(op, ld(a + i, sa) - za, ld(b + i, sb) - zb, ma, mb, k);
            /* The rescale kernel's reference on the stored byte. */
            if (pm != 0.0f)
                v = gk_requant(ld((uint8_t[]){ (uint8_t)v }, k.sgn) - k.zero, pm, pk.zero,
                               plo, pk.hi);
            want[i] = (uint8_t)v;
        }
        fn(op, n, a, b, y1, sa, za, ma, sb, zb, mb, k.zero, k.lo, k.hi, pm, pk.zero, plo, pk.hi,
           0, 1);
        for (int t = 0; t < 3; t++)
            fn(op, n, a, b, y3, sa, za, ma, sb, zb, mb, k.zero, k.lo, k.hi, pm, pk.zero, plo,
               pk.hi, t, 3);
        check_bytes(row, "qadd", y1, want, (size_t)n, 1);
        check_bytes(row, "qadd", y3, want, (size_t)n, 3);
        free(a), free(b), free(want), free(y1), free(y3);
    }
}

/* --- NHWC pooling and depthwise convolution --- */

typedef struct {
    int n, c, h, w, xcs, oh, ow, ycs, kh, kw, sh, sw, dh, dw, ph, pw, phe, pwe;
} qshape;

/* A random NHWC window shape; `global` makes the window the whole plane. Begin pads stay below
 * the dilated window, so most windows have taps inside (the ones of a dilated window over a
 * small input may not). */
static qshape rnd_shape(int global)
{
    static const int cs[] = { 1, 3, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 70, 129 };
    qshape s;
    s.n = rint_in(1, 2);
    s.c = cs[rnd() % (sizeof cs / sizeof cs[0])];
    s.xcs = s.c + (rnd() % 2 ? 0 : rint_in(1, 5));
    s.ycs = s.c + (rnd() % 2 ? 0 : rint_in(1, 3));
    s.h = rint_in(1, 9);
    s.w = rint_in(1, 11);
    if (global) {
        s.h = rint_in(1, 12), s.w = rint_in(1, 12);
        s.kh = s.h, s.kw = s.w, s.sh = s.sw = s.dh = s.dw = 1;
        s.ph = s.pw = s.phe = s.pwe = 0;
        s.oh = s.ow = 1;
        return s;
    }
    s.kh = rint_in(1, 4), s.kw = rint_in(1, 4);
    s.sh = rint_in(1, 3), s.sw = rint_in(1, 3);
    s.dh = rnd() % 3 ? 1 : 2, s.dw = rnd() % 3 ? 1 : 2;
    int ekh = (s.kh - 1) * s.dh + 1, ekw = (s.kw - 1) * s.dw + 1;
    s.ph = rint_in(0, ekh - 1), s.pw = rint_in(0, ekw - 1);
    s.phe = rint_in(0, ekh - 1), s.pwe = rint_in(0, ekw - 1);
    if (s.h + s.ph + s.phe < ekh)
        s.phe = ekh - s.h - s.ph;
    if (s.w + s.pw + s.pwe < ekw)
        s.pwe = ekw - s.w - s.pw;
    s.oh = (s.h + s.ph + s.phe - ekh) / s.sh + 1;
    s.ow = (s.w + s.pw + s.pwe - ekw) / s.sw + 1;
    if (rnd() % 3 == 0) { /* ceil_mode: the last windows may reach past the end pads */
        s.oh = (s.h + s.ph + s.phe - ekh + s.sh - 1) / s.sh + 1;
        s.ow = (s.w + s.pw + s.pwe - ekw + s.sw - 1) / s.sw + 1;
        s.oh -= (s.oh - 1) * s.sh >= s.h + s.ph && s.oh > 1;
        s.ow -= (s.ow - 1) * s.sw >= s.w + s.pw && s.ow > 1;
    }
    return s;
}

static size_t x_bytes(const qshape *s)
{
    return (size_t)s->n * s->h * s->w * s->xcs;
}

static size_t y_bytes(const qshape *s)
{
    return (size_t)s->n * s->oh * s->ow * s->ycs;
}

/* Input row and column of tap (ky, kx) of output (oy, ox). */
#define TAP_Y(s, oy, ky) ((oy) * (s)->sh - (s)->ph + (ky) * (s)->dh)
#define TAP_X(s, ox, kx) ((ox) * (s)->sw - (s)->pw + (kx) * (s)->dw)
#define X_AT(s, b, iy, ix, ch) ((((size_t)(b) * (s)->h + (iy)) * (s)->w + (ix)) * (s)->xcs + (ch))
#define Y_AT(s, b, oy, ox, ch) ((((size_t)(b) * (s)->oh + (oy)) * (s)->ow + (ox)) * (s)->ycs + (ch))

static void test_qmaxpool_shape(const gk_row *row, const qshape *s, int sgn)
{
    __typeof__(gk_qmaxpool_q8_scalar) *fn = ROW_FN(row, gk_qmaxpool_q8_scalar);
    uint8_t *x = rnd_bytes(x_bytes(s)), *want = canary_bytes(y_bytes(s));
    uint8_t *y1 = canary_bytes(y_bytes(s)), *y3 = canary_bytes(y_bytes(s));
    for (int b = 0; b < s->n; b++)
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++)
                for (int ch = 0; ch < s->c; ch++) {
                    int32_t m = sgn ? -128 : 0;
                    for (int ky = 0; ky < s->kh; ky++)
                        for (int kx = 0; kx < s->kw; kx++) {
                            int iy = TAP_Y(s, oy, ky), ix = TAP_X(s, ox, kx);
                            if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w) {
                                int32_t v = ld(x + X_AT(s, b, iy, ix, ch), sgn);
                                m = v > m ? v : m;
                            }
                        }
                    want[Y_AT(s, b, oy, ox, ch)] = (uint8_t)m;
                }
    fn(x, y1, sgn, s->n, s->c, s->h, s->w, s->xcs, s->oh, s->ow, s->ycs, s->kh, s->kw, s->sh,
       s->sw, s->dh, s->dw, s->ph, s->pw, 0, 1);
    for (int t = 0; t < 3; t++)
        fn(x, y3, sgn, s->n, s->c, s->h, s->w, s->xcs, s->oh, s->ow, s->ycs, s->kh, s->kw, s->sh,
           s->sw, s->dh, s->dw, s->ph, s->pw, t, 3);
    check_bytes(row, "qmaxpool", y1, want, y_bytes(s), 1);
    check_bytes(row, "qmaxpool", y3, want, y_bytes(s), 3);
    free(x), free(want), free(y1), free(y3);
}

static void test_qmaxpool(const gk_row *row)
{
    for (int trial = 0; trial < TRIALS; trial++) {
        qshape s = rnd_shape(trial % 8 == 7);
        test_qmaxpool_shape(row, &s, trial % 2);
    }
}

static void test_qavgpool_shape(const gk_row *row, const qshape *s, int sgn, int cip)
{
    __typeof__(gk_qavgpool_q8_scalar) *fn = ROW_FN(row, gk_qavgpool_q8_scalar);
    int zx = sgn ? rint_in(-128, 127) : rint_in(0, 255);
    qkind k = rnd_kind(rnd() % 2);
    double sy = 0.02 + (double)rint_in(0, 1000) / 10000.0;
    double sx = rnd() % 2 ? sy * ldexp(1.0, rint_in(-1, 3)) : sy * (double)rint_in(1, 3000) / 997.0;
    uint8_t *x = rnd_bytes(x_bytes(s)), *want = canary_bytes(y_bytes(s));
    uint8_t *y1 = canary_bytes(y_bytes(s)), *y3 = canary_bytes(y_bytes(s));
    for (int b = 0; b < s->n; b++)
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++)
                for (int ch = 0; ch < s->c; ch++) {
                    int32_t acc = 0;
                    int64_t inside = 0, padded = 0;
                    for (int ky = 0; ky < s->kh; ky++)
                        for (int kx = 0; kx < s->kw; kx++) {
                            int iy = TAP_Y(s, oy, ky), ix = TAP_X(s, ox, kx);
                            if (iy >= -s->ph && iy < s->h + s->phe && ix >= -s->pw &&
                                ix < s->w + s->pwe)
                                padded++;
                            if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w) {
                                acc += ld(x + X_AT(s, b, iy, ix, ch), sgn) - zx;
                                inside++;
                            }
                        }
                    float m = gk_q_avg_multiplier(sx, sy, cip ? padded : inside);
                    want[Y_AT(s, b, oy, ox, ch)] = (uint8_t)gk_requant(acc, m, k.zero, k.lo, k.hi);
                }
    fn(x, y1, sgn, zx, sx, sy, k.zero, k.lo, k.hi, s->n, s->c, s->h, s->w, s->xcs, s->oh, s->ow,
       s->ycs, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->ph, s->pw, s->phe, s->pwe, cip, 0, 1);
    for (int t = 0; t < 3; t++)
        fn(x, y3, sgn, zx, sx, sy, k.zero, k.lo, k.hi, s->n, s->c, s->h, s->w, s->xcs, s->oh,
           s->ow, s->ycs, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->ph, s->pw, s->phe, s->pwe,
           cip, t, 3);
    check_bytes(row, "qavgpool", y1, want, y_bytes(s), 1);
    check_bytes(row, "qavgpool", y3, want, y_bytes(s), 3);
    free(x), free(want), free(y1), free(y3);
}

static void test_qavgpool(const gk_row *row)
{
    for (int trial = 0; trial < TRIALS; trial++) {
        qshape s = rnd_shape(trial % 6 == 5);
        test_qavgpool_shape(row, &s, trial % 2, (trial / 2) % 2);
    }
    /* A global average over a deep plane: the threads split its channels. */
    qshape g = rnd_shape(1);
    g.c = 300, g.xcs = 304, g.ycs = 300, g.h = g.kh = 7, g.w = g.kw = 7;
    test_qavgpool_shape(row, &g, 0, 0);
}

/* One depthwise call's arguments, for threads calling it at once (run_threads). */
typedef struct {
    __typeof__(gk_qdwconv_q8_scalar) *fn;
    const uint8_t *x;
    const int16_t *wp;
    const int32_t *bp;
    const float *mult;
    uint8_t *y;
    const qshape *s;
    int sgn, kzx;
    qkind k;
    unsigned *work;
} qdwcall;

static void qdwcall_run(void *arg, int tid, int nthreads)
{
    const qdwcall *q = arg;
    const qshape *s = q->s;
    q->fn(q->x, q->wp, q->bp, q->mult, q->y, q->sgn, q->kzx, q->k.zero, q->k.lo, q->k.hi, s->n,
          s->c, s->h, s->w, s->xcs, s->oh, s->ow, s->ycs, s->kh, s->kw, s->sh, s->sw, s->dh,
          s->dw, s->ph, s->pw, q->work, tid, nthreads);
}

static void test_qdwconv_shape(const gk_row *row, const qshape *s, int sgn)
{
    __typeof__(gk_qdwconv_q8_scalar) *fn = ROW_FN(row, gk_qdwconv_q8_scalar);
    int zx = sgn ? rint_in(-128, 127) : rint_in(0, 255);
    int w_sgn = rnd() % 4 != 0;
    qkind k = rnd_kind(rnd() % 2);
    int64_t c = s->c, taps = (int64_t)s->kh * s->kw, cp = gk_qdw_cpad(c);
    uint8_t *x = rnd_bytes(x_bytes(s)), *w = rnd_bytes((size_t)(c * taps));
    uint8_t *want = canary_bytes(y_bytes(s)), *y1 = canary_bytes(y_bytes(s));
    uint8_t *y3 = canary_bytes(y_bytes(s)), *y2 = canary_bytes(y_bytes(s));
    int32_t *wz = NULL, *bias = NULL;
    if (rnd() % 2) {
        wz = malloc((size_t)c * sizeof(int32_t));
        for (int64_t ch = 0; ch < c; ch++)
            wz[ch] = w_sgn ? rint_in(-128, 127) : rint_in(0, 255);
    }
    if (rnd() % 4) {
        bias = malloc((size_t)c * sizeof(int32_t));
        for (int64_t ch = 0; ch < c; ch++)
            bias[ch] = rint_in(-20000, 20000);
    }
    float *mult = malloc((size_t)c * sizeof(float));
    /* Now and then a channel whose products reach past 2^31, where cvtps2dq gives INT_MIN:
     * the reference clamps them to the kind's ends (the AVX2 epilogue clamps their top). */
    for (int64_t ch = 0; ch < c; ch++)
        mult[ch] = rnd() % 8 ? rnd_mult() / (rnd() % 2 ? 256.0f : 2048.0f)
                             : ldexpf(1.0f, rint_in(16, 24));
    for (int b = 0; b < s->n; b++)
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++)
                for (int ch = 0; ch < c; ch++) {
                    int32_t acc = bias ? bias[ch] : 0;
                    for (int ky = 0; ky < s->kh; ky++)
                        for (int kx = 0; kx < s->kw; kx++) {
                            int iy = TAP_Y(s, oy, ky), ix = TAP_X(s, ox, kx);
                            if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                                continue;
                            int32_t wv = ld(w + ch * taps + ky * s->kw + kx, w_sgn) -
                                         (wz ? wz[ch] : 0);
                            acc += (ld(x + X_AT(s, b, iy, ix, ch), sgn) - zx) * wv;
                        }
                    want[Y_AT(s, b, oy, ox, ch)] =
                        (uint8_t)gk_requant(acc, mult[ch], k.zero, k.lo, k.hi);
                }
    /* The kernel reads i8 inputs flipped to u8, its zero point shifted alike. */
    int kzx = sgn ? zx + 128 : zx;
    int16_t *wp = malloc((size_t)(taps * cp) * sizeof(int16_t));
    int32_t *bp = malloc((size_t)cp * sizeof(int32_t));
    gk_qdw_pack_weights(wp, w, w_sgn, wz, c, s->kh, s->kw);
    gk_qdw_pack_bias(bp, bias, wp, c, s->kh, s->kw, kzx);
    fn(x, wp, bp, mult, y1, sgn, kzx, k.zero, k.lo, k.hi, s->n, c, s->h, s->w, s->xcs, s->oh,
       s->ow, s->ycs, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->ph, s->pw, NULL, 0, 1);
    for (int t = 0; t < 3; t++)
        fn(x, wp, bp, mult, y3, sgn, kzx, k.zero, k.lo, k.hi, s->n, c, s->h, s->w, s->xcs,
           s->oh, s->ow, s->ycs, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->ph, s->pw, NULL,
           t, 3);
    /* Two threads at once taking the units (output rows) from a counter. */
    unsigned work = 0;
    qdwcall qc = { fn, x, wp, bp, mult, y2, s, sgn, kzx, k, &work };
    run_threads(2, qdwcall_run, &qc);
    CHECK(work == (unsigned)(s->n * s->oh * ((c + GK_Q_CHUNK - 1) / GK_Q_CHUNK)));
    check_bytes(row, "qdwconv", y1, want, y_bytes(s), 1);
    check_bytes(row, "qdwconv", y2, want, y_bytes(s), 2);
    check_bytes(row, "qdwconv", y3, want, y_bytes(s), 3);
    free(x), free(w), free(want), free(y1), free(y2), free(y3), free(wz), free(bias), free(mult);
    free(wp), free(bp);
}

static void test_qdwconv(const gk_row *row)
{
    for (int trial = 0; trial < TRIALS; trial++) {
        qshape s = rnd_shape(0);
        if (trial % 3 == 0) { /* the common MobileNet forms: 3x3 or 5x5, stride 1 or 2 */
            s.kh = s.kw = trial % 2 ? 3 : 5;
            s.sh = s.sw = rint_in(1, 2);
            s.dh = s.dw = 1;
            s.ph = s.pw = s.phe = s.pwe = s.kh / 2;
            s.h = rint_in(s.kh, 12), s.w = rint_in(s.kw, 12);
            s.oh = (s.h + 2 * s.ph - s.kh) / s.sh + 1;
            s.ow = (s.w + 2 * s.pw - s.kw) / s.sw + 1;
        }
        test_qdwconv_shape(row, &s, trial % 2);
    }
    /* Rows wider than one strip of the avx2 variant's row-pair buffer (128 columns for 3x3,
     * 85 for 5x5), stride 1 and 2, padded, channels with a tail. */
    for (int t = 0; t < 4; t++) {
        qshape wide = rnd_shape(0);
        wide.c = t < 2 ? 20 : 33, wide.xcs = wide.c + t % 2 * 4, wide.ycs = wide.c;
        wide.kh = wide.kw = t < 2 ? 3 : 5, wide.sh = wide.sw = 1 + t % 2;
        wide.dh = wide.dw = 1;
        wide.ph = wide.pw = wide.phe = wide.pwe = wide.kh / 2;
        wide.n = 1, wide.h = 4, wide.w = 600;
        wide.oh = (wide.h + 2 * wide.ph - wide.kh) / wide.sh + 1;
        wide.ow = (wide.w + 2 * wide.pw - wide.kw) / wide.sw + 1;
        test_qdwconv_shape(row, &wide, t % 2);
    }
    /* More than 64 taps (9x9): the avx2 variant interleaves the weights in batches of pairs. */
    for (int sgn = 0; sgn < 2; sgn++) {
        qshape big = rnd_shape(0);
        big.kh = big.kw = 9, big.sh = big.sw = big.dh = big.dw = 1;
        big.ph = big.pw = big.phe = big.pwe = 4;
        big.h = big.oh = 10, big.w = big.ow = 11;
        test_qdwconv_shape(row, &big, sgn);
    }
}

/* --- layout conversions --- */

static void test_q_to_nhwc(const gk_row *row)
{
    __typeof__(gk_q_to_nhwc_u8_scalar) *fn = ROW_FN(row, gk_q_to_nhwc_u8_scalar);
    for (int trial = 0; trial < TRIALS; trial++) {
        /* Every other trial has few channels (a network's input), the pixel-by-pixel path,
         * with images longer than a thread's 64-pixel grain. */
        int n = rint_in(1, 3), c = trial % 2 ? rint_in(1, 70) : rint_in(1, 6);
        int hw = trial % 2 ? rint_in(1, 100) : rint_in(1, 300);
        int cs = c + (rnd() % 2 ? 0 : rint_in(1, 9)), fill = rint_in(0, 255);
        size_t ny = (size_t)n * hw * cs;
        uint8_t *x = rnd_bytes((size_t)n * c * hw), *want = malloc(ny);
        uint8_t *y1 = canary_bytes(ny), *y3 = canary_bytes(ny);
        for (int b = 0; b < n; b++)
            for (int p = 0; p < hw; p++)
                for (int ch = 0; ch < cs; ch++)
                    want[((size_t)b * hw + p) * cs + ch] =
                        ch < c ? x[((size_t)b * c + ch) * hw + p] : (uint8_t)fill;
        fn(x, y1, n, c, hw, cs, fill, 0, 1);
        for (int t = 0; t < 3; t++)
            fn(x, y3, n, c, hw, cs, fill, t, 3);
        check_bytes(row, "q_to_nhwc", y1, want, ny, 1);
        check_bytes(row, "q_to_nhwc", y3, want, ny, 3);
        free(x), free(want), free(y1), free(y3);
    }
}

static void test_q_from_nhwc(const gk_row *row)
{
    __typeof__(gk_q_from_nhwc_u8_scalar) *fn = ROW_FN(row, gk_q_from_nhwc_u8_scalar);
    for (int trial = 0; trial < TRIALS; trial++) {
        int n = rint_in(1, 3), c = rint_in(1, 70), hw = rint_in(1, 100);
        int cs = c + (rnd() % 2 ? 0 : rint_in(1, 9));
        size_t ny = (size_t)n * c * hw;
        uint8_t *x = rnd_bytes((size_t)n * hw * cs), *want = malloc(ny);
        uint8_t *y1 = canary_bytes(ny), *y3 = canary_bytes(ny);
        for (int b = 0; b < n; b++)
            for (int ch = 0; ch < c; ch++)
                for (int p = 0; p < hw; p++)
                    want[((size_t)b * c + ch) * hw + p] = x[((size_t)b * hw + p) * cs + ch];
        fn(x, y1, n, c, hw, cs, 0, 1);
        for (int t = 0; t < 3; t++)
            fn(x, y3, n, c, hw, cs, t, 3);
        check_bytes(row, "q_from_nhwc", y1, want, ny, 1);
        check_bytes(row, "q_from_nhwc", y3, want, ny, 3);
        free(x), free(want), free(y1), free(y3);
    }
}

/* The packer alone: weights minus their zero points, zeros past C, the bias corrected. */
static void test_qdwpack(void)
{
    const uint8_t w[2 * 4] = { 1, 2, 3, 4, 0xff, 0x80, 0x7f, 0 }; /* [2][1][2][2] */
    const int32_t wz[2] = { 1, -1 }, bias[2] = { 100, -100 };
    int16_t wp[4 * 16];
    int32_t bp[16];
    gk_qdw_pack_weights(wp, w, 1, wz, 2, 2, 2);
    gk_qdw_pack_bias(bp, bias, wp, 2, 2, 2, 3);
    CHECK_EQ(gk_qdw_cpad(2), 16);
    CHECK_EQ(wp[0 * 16 + 0], 0);
    CHECK_EQ(wp[3 * 16 + 0], 3);
    CHECK_EQ(wp[0 * 16 + 1], 0);    /* -1 - -1 */
    CHECK_EQ(wp[1 * 16 + 1], -127); /* -128 - -1 */
    CHECK_EQ(wp[2 * 16 + 1], 128);  /* 127 - -1 */
    CHECK_EQ(wp[2 * 16 + 5], 0);
    CHECK_EQ(bp[0], 100 - 3 * (0 + 1 + 2 + 3));
    CHECK_EQ(bp[1], -100 - 3 * (0 - 127 + 128 + 1));
    CHECK_EQ(bp[7], 0);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "quantize_q8", test_quantize },   { "dequantize_q8", test_dequantize },
        { "rescale_q8", test_rescale },     { "qadd_q8", test_qadd },
        { "qmaxpool_q8", test_qmaxpool },   { "qavgpool_q8", test_qavgpool },
        { "qdwconv_q8", test_qdwconv },     { "q_to_nhwc_u8", test_q_to_nhwc },
        { "q_from_nhwc_u8", test_q_from_nhwc },
    };
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    test_qdwpack();
    return CHECK_DONE();
}
