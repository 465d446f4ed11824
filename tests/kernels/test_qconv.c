// test_qconv.c - The int8 convolution kernels (kernels/qconv, every ISA variant the host runs)
// against an independent reference: acc = bias + sum((x - zx) * w) over the taps inside the
// input, requantized by gk_requant. Random shapes (C = 1, 3, odd, past the 4096-byte padding
// row; M around the 8- and 16-channel blocks; kernels 1-7, strides and dilations 1-2, pads,
// batches, FC layers), u8 and i8 inputs (x_flip), u8, i8 and Relu/Clip-narrowed outputs, and
// a folded RescaleQuantized into u8 or i8, a folded residual Add (with a rescale after it, and
// in place over y);
// results must be identical bytes, at 1 and 3 threads (static shares) and 2 threads at once
// taking the units from a counter, and the channels [M, ycs) untouched.
#include "check.h"
#include "kernels_test.h"
#include "../../kernels/qconv/qpack.h"
#include "../../kernels/qconv/qres.h"
#include "../../kernels/qconv/qwpack.h"
#include "../../kernels/qmath.h"

#include <stdint.h>

typedef struct {
    int n, c, h, w, m, kh, kw, sh, sw, dh, dw, ph, pw, phe, pwe;
    int flip;    /* i8 input */
    int out;     /* 0: u8, 1: i8, 2: u8 with Relu (lo = zero), 3: i8 clipped */
    int pow2;    /* power-of-two multipliers: exact ties for round half to even */
    int xexact;  /* x's channel stride is C rounded up to 4 (else random, maybe larger): the
                  * kernel row copies of the gathered and fused-row paths need it */
    int post;    /* a folded RescaleQuantized: 1 into u8, 2 into i8 */
    int extreme; /* every input byte 255 (as read) and every weight -128: the largest sum */
    int res;     /* a folded residual Add: 1 plain, 2 with a rescale after it, 3 in place (the
                  * residual is y's own bytes) with a Relu-narrowed rescale */
} qcase;

/* The row under test is the Winograd kernel (weights packed by gk_qwino_pack), or the 7-bit
 * weights kernel (weights in [-64, 64], the avxvnni row's packing). */
static bool g_wino, g_w7;

typedef __typeof__(gk_qconv_u8_scalar) qconv_fn;

/* One kernel call's arguments, for threads calling it at once (run_threads). */
typedef struct {
    qconv_fn *fn;
    const uint8_t *x;
    const int8_t *wp;
    const int32_t *bias;
    const float *mult;
    uint8_t *y;
    const qcase *t;
    const uint8_t *res;
    int xcs, ycs, oh, ow, x_zero, y_zero, lo, hi;
    float post_mult;
    int post_zero;
    const float *rq;
    int rmode;
    unsigned *work;
} qcall;

static void qcall_run(void *arg, int tid, int nthreads)
{
    const qcall *q = arg;
    const qcase *t = q->t;
    q->fn(q->x, q->wp, q->bias, q->mult, q->y, t->n, t->h, t->w, t->c, q->xcs, t->m, q->ycs,
          t->kh, t->kw, q->oh, q->ow, t->sh, t->sw, t->dh, t->dw, t->ph, t->pw, q->x_zero,
          t->flip, q->y_zero, q->lo, q->hi, q->post_mult, q->post_zero, t->post == 2,
          t->res == 3 ? q->y : q->res, q->rq, q->rmode, q->work, tid, nthreads);
}

static int rnd_int(int lo, int hi)
{
    return lo + rand() % (hi - lo + 1);
}

static void run_case(const gk_row *row, const qcase *t)
{
    int oh = (t->h + t->ph + t->phe - t->dh * (t->kh - 1) - 1) / t->sh + 1;
    int ow = (t->w + t->pw + t->pwe - t->dw * (t->kw - 1) - 1) / t->sw + 1;
    CHECK(oh >= 1 && ow >= 1);
    int xcs = (t->c + 3) / 4 * 4 + (t->xexact ? 0 : 4 * rnd_int(0, 2)), ycs = t->m + rnd_int(0, 3);
    int k = t->c * t->kh * t->kw;
    size_t xs = (size_t)t->n * t->h * t->w * xcs, ys = (size_t)t->n * oh * ow * ycs;
    size_t ws = (size_t)t->m * k;
    uint8_t *x = malloc(xs), *want = malloc(ys), *y1 = malloc(ys), *y3 = malloc(ys);
    uint8_t *y2 = malloc(ys);
    int8_t *w = malloc(ws);
    int32_t *bias_in = malloc((size_t)t->m * 4), *bias = malloc((size_t)t->m * 4);
    float *mult = malloc((size_t)t->m * 4);
    for (size_t i = 0; i < xs; i++)
        x[i] = t->extreme ? (t->flip ? 0x7f : 0xff) : (uint8_t)rand(); /* [C, xcs) too */
    for (size_t i = 0; i < ws; i++)
        w[i] = g_w7 ? (int8_t)(t->extreme ? -64 : rand() % 129 - 64)
                    : t->extreme ? -128 : (int8_t)rand();
    /* The real zero point; the kernel gets it shifted by 128 for i8 inputs. */
    int zx = t->flip ? rnd_int(-128, 127) : rnd_int(0, 255);
    int x_zero = t->flip ? zx + 128 : zx;
    int lo = t->out & 1 ? -128 : 0, hi = t->out & 1 ? 127 : 255;
    int y_zero = rnd_int(lo, hi);
    if (t->out == 2)
        lo = y_zero;
    if (t->out == 3)
        lo = lo + 20, hi = hi - 30;
    /* The folded rescale: a multiplier around 1 (some results saturate), any zero point. */
    float post_mult = 0;
    int post_lo = t->post == 2 ? -128 : 0, post_hi = t->post == 2 ? 127 : 255;
    int post_zero = rnd_int(post_lo, post_hi);
    if (t->post)
        post_mult = (float)(0.4 + 1.5 * rand() / (double)RAND_MAX);
    /* The residual Add: residual bytes for every place of y (in place: y's own bytes, the
     * channels [M, ycs) too, which must stay), multipliers around 1, any zero points. */
    uint8_t *res = malloc(ys);
    for (size_t i = 0; i < ys; i++)
        res[i] = (uint8_t)rand();
    float rq[GK_QRES_N] = { 0 };
    int rmode = 0;
    if (t->res) {
        int rs = rand() & 1, a8 = rand() & 1;
        rmode = rs ? GK_QRES_R_I8 : 0;
        rq[GK_QRES_RZERO] = (float)(rs ? rnd_int(-128, 127) : rnd_int(0, 255));
        rq[GK_QRES_MA] = (float)(0.3 + 1.2 * rand() / (double)RAND_MAX);
        rq[GK_QRES_MB] = (float)(0.3 + 1.2 * rand() / (double)RAND_MAX);
        rq[GK_QRES_ALO] = a8 ? -128.0f : 0.0f;
        rq[GK_QRES_AHI] = a8 ? 127.0f : 255.0f;
        rq[GK_QRES_AZERO] = (float)rnd_int((int)rq[GK_QRES_ALO], (int)rq[GK_QRES_AHI]);
        if (t->res > 1) {
            int p8 = rand() & 1;
            rmode |= GK_QRES_POST;
            rq[GK_QRES_PMULT] = (float)(0.4 + 1.5 * rand() / (double)RAND_MAX);
            rq[GK_QRES_PLO] = p8 ? -128.0f : 0.0f;
            rq[GK_QRES_PHI] = p8 ? 127.0f : 255.0f;
            rq[GK_QRES_PZERO] = (float)rnd_int((int)rq[GK_QRES_PLO], (int)rq[GK_QRES_PHI]);
            if (t->res == 3)
                rq[GK_QRES_PLO] = rq[GK_QRES_PZERO]; /* a Relu after the Add */
        }
    }
    gk_qres rs = gk_qres_of(t->res ? res : NULL, rq, rmode);
    /* A multiplier bringing the accumulator's typical size to ~60 output steps. */
    double spread = sqrt((double)k) * 5400.0;
    for (int m = 0; m < t->m; m++) {
        bias_in[m] = rnd_int(-30000, 30000);
        mult[m] = t->pow2 ? ldexpf(1.0f, -(int)lround(log2(spread / 60.0)) - rnd_int(0, 1))
                          : (float)((0.3 + rand() / (double)RAND_MAX) * 60.0 / spread);
        /* Now and then a channel whose products pass 2^31, where cvtps2dq gives INT_MIN:
         * the reference saturates them (the AVX2 tile's two-pixel store clamps their top). */
        if (rnd_int(0, 15) == 0)
            mult[m] = ldexpf(1.0f, rnd_int(16, 24));
    }

    for (int n = 0; n < t->n; n++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                size_t yi = (((size_t)n * oh + oy) * ow + ox) * ycs;
                for (int m = 0; m < t->m; m++) {
                    int64_t acc = bias_in[m];
                    for (int c = 0; c < t->c; c++)
                        for (int ky = 0; ky < t->kh; ky++)
                            for (int kx = 0; kx < t->kw; kx++) {
                                int iy = oy * t->sh - t->ph + ky * t->dh;
                                int ix = ox * t->sw - t->pw + kx * t->dw;
                                if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w)
                                    continue;
                                uint8_t b = x[(((size_t)n * t->h + iy) * t->w + ix) * xcs + c];
                                int xv = t->flip ? (int8_t)b : b;
                                acc += (int64_t)(xv - zx) *
                                       w[(((size_t)m * t->c + c) * t->kh + ky) * t->kw + kx];
                            }
                    CHECK(acc >= INT32_MIN && acc <= INT32_MAX);
                    int32_t v = gk_requant((int32_t)acc, mult[m], y_zero, lo, hi);
                    if (t->res)
                        v = gk_qres_apply(&rs, v, y_zero, res[yi + m]);
                    else if (t->post)
                        v = gk_requant(v - y_zero, post_mult, post_zero, post_lo, post_hi);
                    want[yi + m] = (uint8_t)v;
                }
                for (int m = t->m; m < ycs; m++)
                    want[yi + m] = t->res == 3 ? res[yi + m] : 0xa5;
            }

    int8_t *wp;
    qconv_fn *qconv = ROW_FN(row, gk_qconv_u8_scalar);
    if (g_wino) {
        wp = malloc(gk_qwino_elems(t->m, t->c) * sizeof(int16_t));
        gk_qwino_pack(w, bias_in, x_zero, t->m, t->c, (int16_t *)(void *)wp, bias);
    } else {
        const char *isa = g_w7 ? "avxvnni" : row->isa;
        int vlen = gk_qconv_vlen(isa);
        CHECK(vlen > 0);
        wp = malloc(gk_qpack_bytes(vlen, t->m, t->c, t->kh, t->kw));
        gk_qpack_conv_isa(isa, w, bias_in, x_zero, t->m, t->c, t->kh, t->kw, wp, bias);
    }
    uint8_t *ys3[3] = { y1, y3, y2 };
    for (int i = 0; i < 3; i++) {
        if (t->res == 3)
            memcpy(ys3[i], res, ys);
        else
            memset(ys3[i], 0xa5, ys);
    }
    /* The residual operand: none, res, or (in place) the y written. */
#define QRES(y) (t->res == 3 ? (y) : t->res ? res : NULL)
#define QCALL(y, work, tid, nt)                                                               \
    qconv(x, wp, bias, mult, y, t->n, t->h, t->w, t->c, xcs, t->m, ycs, t->kh, t->kw, oh, ow, \
          t->sh, t->sw, t->dh, t->dw, t->ph, t->pw, x_zero, t->flip, y_zero, lo, hi, post_mult, \
          post_zero, t->post == 2, QRES(y), rq, rmode, work, tid, nt)
    QCALL(y1, NULL, 0, 1);
    for (int tid = 2; tid >= 0; tid--)
        QCALL(y3, NULL, tid, 3);
    /* Two threads at once taking the units from a counter (the cpu backend's way). */
    unsigned work = 0;
    qcall qc = { qconv, x, wp, bias, mult, y2, t, QRES(NULL), xcs, ycs, oh, ow, x_zero,
                 y_zero, lo, hi, post_mult, post_zero, rq, rmode, &work };
    run_threads(2, qcall_run, &qc);
    CHECK(work > 0);
#undef QCALL
#undef QRES
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ys; i++)
        if (y1[i] != want[i] && !bad++)
            first = i;
    if (bad)
        fprintf(stderr,
                "%s: n%d c%d %dx%d m%d k%dx%d s%d,%d d%d,%d p%d,%d,%d,%d flip%d out%d pow2 %d "
                "post %d res %d: "
                "%zu bytes differ, first at pixel %zu channel %zu: %d, want %d\n",
                row->name, t->n, t->c, t->h, t->w, t->m, t->kh, t->kw, t->sh, t->sw, t->dh,
                t->dw, t->ph, t->pw, t->phe, t->pwe, t->flip, t->out, t->pow2, t->post, t->res, bad,
                first / ycs, first % ycs, y1[first], want[first]);
    CHECK_EQ(bad, 0);
    CHECK(memcmp(y3, want, ys) == 0);
    CHECK(memcmp(y2, want, ys) == 0);
    free(x), free(want), free(y1), free(y2), free(y3), free(w), free(bias_in), free(bias), free(mult);
    free(res);
    free(wp);
}

/* A random case around the given kernel size and channels; the other parameters random. */
static qcase random_case(int c, int m, int k)
{
    qcase t = { 0 };
    t.n = rnd_int(1, 2);
    t.c = c;
    t.m = m;
    t.kh = k;
    t.kw = rand() % 4 ? k : (k > 1 ? k - 2 : 3);
    t.sh = rnd_int(1, 2);
    t.sw = rand() % 3 ? t.sh : 3 - t.sh;
    t.dh = rand() % 4 ? 1 : 2;
    t.dw = rand() % 4 ? t.dh : 3 - t.dh;
    t.ph = rnd_int(0, (t.kh - 1) * t.dh / 2 + (rand() % 4 == 0));
    t.pw = rnd_int(0, (t.kw - 1) * t.dw / 2 + (rand() % 4 == 0));
    t.phe = rnd_int(0, t.ph);
    t.pwe = rnd_int(0, t.pw + 1 < (t.kw - 1) * t.dw ? t.pw + 1 : t.pw);
    /* Inputs at least as large as the dilated kernel minus the pads. */
    int eh = (t.kh - 1) * t.dh + 1 - t.ph - t.phe, ew = (t.kw - 1) * t.dw + 1 - t.pw - t.pwe;
    t.h = (eh > 1 ? eh : 1) + rnd_int(0, 9);
    t.w = (ew > 1 ? ew : 1) + rnd_int(0, 13);
    t.flip = rand() & 1;
    t.out = rand() % 4;
    t.pow2 = rand() % 3 == 0;
    t.post = rand() % 4 == 0 ? rnd_int(1, 2) : 0;
    t.res = t.post || rand() % 3 ? 0 : rnd_int(1, 3);
    return t;
}

static void test_qconv(const gk_row *row)
{
    static const int cs[] = { 1, 3, 4, 5, 7, 8, 13, 16, 19, 32, 64 };
    static const int ms[] = { 1, 5, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 64 };
    static const int ks[] = { 1, 3, 5, 7 };
    int ncases = 0;
    srand(17); /* every variant sees the same cases */
    for (int i = 0; i < 120; i++) {
        int c = cs[rand() % 11], m = ms[rand() % 13], k = ks[i % 4];
        if (k == 7 && c > 16)
            c = 16; /* keeps the reference cheap under the sanitizers */
        qcase t = random_case(c, m, k);
        run_case(row, &t);
        ncases++;
    }
    /* 1x1 stride 1 unpadded (a GEMM over pixels), and fully connected layers with a batch. */
    for (int i = 0; i < 16; i++) {
        qcase t = { rnd_int(1, 3), cs[rand() % 11] * 3, rnd_int(1, 7), rnd_int(1, 20),
                    ms[rand() % 13], 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, i & 1, i % 4, i == 2,
                    0, i % 3 == 0 ? 1 + (i & 1) : 0 };
        if (!t.post)
            t.res = i % 4; /* ResNet's block ends: a 1x1 conv plus the block's input */
        run_case(row, &t);
        qcase fc = { rnd_int(1, 15), rnd_int(1, 300), 1, 1, ms[rand() % 13] * 2, 1, 1, 1, 1,
                     1, 1, 0, 0, 0, 0, (i + 1) & 1, (i + 1) % 4, i == 3 };
        run_case(row, &fc);
        ncases += 2;
    }
    /* Channels past the 4096-byte padding row: the chunked channel loop with padded taps. */
    qcase big = { 1, 4101, 3, 4, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0 };
    run_case(row, &big);
    /* Dense channels (xcs = C rounded to 4), so whole kernel rows are copied: the gathered
     * path (kh * kw * C4 <= 1024 bytes) with borders, dilation and strides, and past it the
     * fused-row path. SqueezeNet's first layer and 3x3 layers in small among them. */
    static const qcase dense[] = {
        { 1, 3, 17, 23, 64, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1 },
        { 1, 16, 9, 13, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 1, 1 },
        { 2, 48, 5, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0, 1, 2 },
        { 1, 19, 11, 12, 17, 3, 3, 1, 2, 2, 2, 2, 2, 1, 2, 1, 1, 1, 1 },
        { 1, 64, 8, 14, 40, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 0, 2, 0, 1, 1 },
        { 1, 112, 6, 9, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1 },
        { 1, 116, 6, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1 },
    };
    for (size_t i = 0; i < sizeof dense / sizeof dense[0]; i++)
        run_case(row, &dense[i]);
    ncases += (int)(sizeof dense / sizeof dense[0]);
    /* The first layer of ResNet-50 in small: 7x7 stride 2, 3 channels, pads 3. */
    qcase first = { 1, 3, 17, 19, 64, 7, 7, 2, 2, 1, 1, 3, 3, 2, 3, 0, 2, 0 };
    run_case(row, &first);
    /* The avx2 variant's chunks of the reduction (4096 widened elements per pixel) and groups
     * of 8 output blocks: a reduction of exactly one chunk, one just past it (a chunk of 4),
     * chunks starting inside a tap (3x3 x 460 channels, padded), output channels past one
     * group with a partial last block, and pixel tails of every tile width. */
    static const qcase edges[] = {
        { 1, 4096, 2, 3, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0 },
        { 2, 4100, 1, 2, 17, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0 },
        { 1, 460, 4, 5, 13, 3, 3, 1, 2, 1, 1, 1, 1, 1, 0, 1, 2, 0 },
        { 1, 12, 5, 7, 75, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 3, 0 },
        { 3, 20, 1, 1, 130, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1 },
        { 1, 8, 1, 5, 72, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 0, 2, 0 },
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        run_case(row, &edges[i]);
    printf("%s: %d cases\n", row->name, ncases + 2 + (int)(sizeof edges / sizeof edges[0]));
}

/* The Winograd kernel (qwino_avx2.c): 3x3 stride 1 dilation 1 of any pads (up to 2, past
 * the kernel's reach too), odd and even output sizes (partial 2x2 tiles), C across its
 * 16-channel transform and its 128-channel chunks, up to GK_QWINO_MAX_C with the largest sum
 * the bound allows, and batches: the same bytes as the reference. */
static void test_qwino(const gk_row *row)
{
    static const int cs[] = { 1, 3, 4, 8, 13, 16, 17, 31, 32, 64, 100, 130, 260 };
    static const int ms[] = { 1, 5, 8, 9, 16, 17, 24, 31, 32, 33, 40, 64 };
    int ncases = 0;
    g_wino = true;
    srand(23);
    for (int i = 0; i < 60; i++) {
        qcase t = random_case(cs[rand() % 13], ms[rand() % 12], 3);
        t.kw = 3, t.sh = t.sw = t.dh = t.dw = 1;
        t.ph = rnd_int(0, 2), t.pw = rnd_int(0, 2), t.phe = rnd_int(0, 2), t.pwe = rnd_int(0, 2);
        t.h = 3 - t.ph - t.phe > 1 ? 3 - t.ph - t.phe : 1;
        t.w = 3 - t.pw - t.pwe > 1 ? 3 - t.pw - t.pwe : 1;
        t.h += rnd_int(0, 9), t.w += rnd_int(0, 13);
        t.xexact = rand() & 1;
        run_case(row, &t);
        ncases++;
    }
    static const qcase fixed[] = {
        /* The bound: C = GK_QWINO_MAX_C, all bytes 255 and weights -128, u8 and i8 in. */
        { 1, GK_QWINO_MAX_C, 2, 3, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1 },
        { 1, GK_QWINO_MAX_C, 3, 2, 8, 3, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1 },
        /* ResNet-50 and GoogLeNet shapes in small, tiles of every register width. */
        { 1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 1, 0 },
        { 2, 96, 7, 9, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 2 },
        { 1, 192, 5, 5, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 3, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        run_case(row, &fixed[i]);
    g_wino = false;
    printf("%s: %d cases\n", row->name, ncases + (int)(sizeof fixed / sizeof fixed[0]));
}

/* The 7-bit weights kernel (qconv7_avx2.c): the qconv cases with weights in [-64, 64], the
 * extremes among them (every byte 255 against -64, where a pair reaches 32640 of int16's
 * 32767). */
static void test_qconv7(const gk_row *row)
{
    g_w7 = true;
    test_qconv(row);
    qcase ext[] = {
        { 1, 64, 5, 6, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1 },
        { 2, 300, 3, 4, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1 },
    };
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        run_case(row, &ext[i]);
    g_w7 = false;
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "qconv_u8", test_qconv },
        { "qwino_u8", test_qwino },
        { "qconv7_u8", test_qconv7 },
    };
    srand(17);
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    return CHECK_DONE();
}
