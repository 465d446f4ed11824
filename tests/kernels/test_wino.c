// test_wino.c - The Winograd F(4x4,3x3) kernels (AVX-512 and AVX2) with their compile-time weight
// transform (src/backend/cpu/winograd.c) against a naive NCHW convolution in double, on random
// shapes: planes not multiples of the 4x4 tile and of one pixel, pads 0 and 1 on each side
// (asymmetric), 1-6 input and output blocks with partial last blocks, batches 2-8 (tile groups
// spanning images), the small planes whose groups end in a tail of 4 or 8 tiles (2 or 4 with
// AVX2: 14x14, 7x7), bias, the fused activations and the residual (also in place); and the
// same bits for one thread, two threads splitting statically, two taking units from the
// counter, and two threads sharing one scratch slot (the second takes no units); a plan given
// to the kernel (the cpu backend's constants) is the one it runs, and the searched plan given
// explicitly gives the bits of the kernel's own search.
#include "backend/cpu/winograd.h"
#include "check.h"
#include "kernels_test.h"
#include "winograd/wino_plan.h"

typedef struct {
    int n, c, h, w, m, pt, pl, pb, pr, act, res;
} wcase;

/* Naive 3x3 stride-1 convolution with begin pads pt/pl; the output extent follows from all
 * four pads. *scale: the largest magnitude before the activation (at least 1). */
static void ref_conv(const wcase *t, int oh, int ow, const float *x, const float *w,
                     const float *b, const float *r, float *y, double *scale)
{
    *scale = 1;
    for (int n = 0; n < t->n; n++)
        for (int m = 0; m < t->m; m++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    double acc = b[m];
                    for (int c = 0; c < t->c; c++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                int iy = oy - t->pt + ky, ix = ox - t->pl + kx;
                                if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w)
                                    continue;
                                acc += (double)x[((n * t->c + c) * t->h + iy) * t->w + ix] *
                                       w[((m * t->c + c) * 3 + ky) * 3 + kx];
                            }
                    size_t yi = (((size_t)n * t->m + m) * oh + oy) * ow + ox;
                    if (r)
                        acc += r[yi];
                    *scale = fmax(*scale, fabs(acc));
                    y[yi] = ref_act((float)acc, t->act, -0.5f, 0.75f);
                }
}

/* Largest |a - b| over the layer's scale (ref_conv): the transforms' rounding scales with the
 * tile's values, not with each output (an output near zero among large ones carries the
 * error of the large ones; the direct kernel's element-wise 1e-4 does not apply). */
static double max_scaled_err(const float *a, const float *b, size_t count, double scale)
{
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (!(e <= worst))
            worst = isnan(e) ? INFINITY : e;
    }
    return worst / scale;
}

static void run_case(const gk_row *row, const wcase *t)
{
    __typeof__(gk_wino_nchwc_f32_avx512) *wino = ROW_FN(row, gk_wino_nchwc_f32_avx512);
    int V = row_vlen(row);
    int oh = t->h + t->pt + t->pb - 2, ow = t->w + t->pl + t->pr - 2;
    size_t xs = (size_t)t->n * t->c * t->h * t->w, ys = (size_t)t->n * t->m * oh * ow;
    float *x = rnd_buf(xs), *w = rnd_buf((size_t)t->m * t->c * 9), *b = rnd_buf((size_t)t->m);
    float *r = t->res ? rnd_buf(ys) : NULL, *y = rnd_buf(ys), *got = rnd_buf(ys);
    double scale;
    ref_conv(t, oh, ow, x, w, b, r, y, &scale);

    size_t cb = (size_t)(t->c + V - 1) / V, mb = (size_t)(t->m + V - 1) / V;
    float *xb = to_blocked(x, t->n, t->c, t->h * t->w, V);
    float *rb = r ? to_blocked(r, t->n, t->m, oh * ow, V) : NULL;
    size_t bsz = (size_t)t->n * mb * V * oh * ow;
    float *bias = rnd_buf(glow_repack_bias_floats(t->m, V));
    glow_repack_bias(bias, b, t->m, V);
    size_t wf = cpu_wino_weight_floats(t->m, t->c, V);
    CHECK(wf == mb * 36 * cb * V * V);
    float *wt = rnd_buf(wf);
    cpu_wino_weights(wt, w, t->m, t->c, V);
    /* The kernel given no plan searches it for GK_WINO_RATE_SEARCH; the backend's plan can
     * differ (one FMA per cycle for 512-bit vectors on Zen 4: cpu_wino_fma_rate), and is run
     * below. */
    gk_wino_plan kp = gk_wino_plan_of((size_t)t->n, cb, mb, (size_t)oh, (size_t)ow, (size_t)V,
                                      GK_WINO_RATE_SEARCH);
    size_t slot = kp.slot;
    CHECK(slot > 0 && cpu_wino_slot_floats(t->n, t->c, t->m, oh, ow, V) > 0);
    float *scratch = rnd_buf(2 * slot);
    /* Runs: 1 thread; 2 static; 2 from the counter (residual in place); 2 with one slot. */
    float *yb[4];
    for (int k = 0; k < 4; k++) {
        yb[k] = rnd_buf(bsz);
        const float *rr = rb;
        if (rb && k == 2) {
            memcpy(yb[k], rb, bsz * sizeof(float));
            rr = yb[k];
        }
        unsigned counter = 0, *work = k >= 2 ? &counter : NULL;
        int nt = k == 0 ? 1 : 2;
        size_t slots = k == 3 ? 1 : 2;
        for (int tid = 0; tid < nt; tid++)
            wino(yb[k], xb, wt, bias, rr, scratch, slots, (size_t)t->n, cb, (size_t)t->h,
                 (size_t)t->w, mb, (size_t)oh, (size_t)ow, (size_t)t->pt, (size_t)t->pl, 0, 0,
                 0, t->act, -0.5f, 0.75f, work, tid, nt);
    }
    /* A plan given to the kernel (as the cpu backend gives it) is the one it runs: chunks of
     * one input block and groups of one output block, whose scratch is smaller than the
     * searched plan's wherever that has kc + mg > 2; the floats past it must stay untouched. */
    {
        gk_wino_plan small = gk_wino_plan_at((size_t)t->n, mb, (size_t)oh, (size_t)ow,
                                             (size_t)V, kp.tg, 1, 1);
        CHECK(small.slot <= slot);
        float *sc = rnd_buf(small.slot + 64), *yp = rnd_buf(bsz);
        for (int i = 0; i < 64; i++)
            sc[small.slot + (size_t)i] = -7.0f;
        wino(yp, xb, wt, bias, rb, sc, 1, (size_t)t->n, cb, (size_t)t->h, (size_t)t->w, mb,
             (size_t)oh, (size_t)ow, (size_t)t->pt, (size_t)t->pl, kp.tg, 1, 1, t->act, -0.5f,
             0.75f, NULL, 0, 1);
        int kept = 1;
        for (int i = 0; i < 64; i++)
            kept &= sc[small.slot + (size_t)i] == -7.0f;
        CHECK(kept);
        float *gs = rnd_buf(ys);
        from_blocked(gs, yp, t->n, t->m, oh * ow, V);
        CHECK(max_scaled_err(gs, y, ys, scale) < 3e-5);
        /* The searched plan given explicitly: the same bits as searching it in the kernel. */
        wino(yp, xb, wt, bias, rb, scratch, 1, (size_t)t->n, cb, (size_t)t->h, (size_t)t->w,
             mb, (size_t)oh, (size_t)ow, (size_t)t->pt, (size_t)t->pl, kp.tg, kp.mg, kp.kc,
             t->act, -0.5f, 0.75f, NULL, 0, 1);
        CHECK(memcmp(yp, yb[0], bsz * sizeof(float)) == 0);
        /* The backend's plan for this host (cpu_wino_plan) in exactly its scratch: the floats
         * past it untouched, the result as close to the reference. */
        size_t plan[3];
        size_t bslot = cpu_wino_plan(t->n, t->c, t->m, oh, ow, V, plan);
        float *bs = rnd_buf(bslot + 64);
        for (int i = 0; i < 64; i++)
            bs[bslot + (size_t)i] = -7.0f;
        wino(yp, xb, wt, bias, rb, bs, 1, (size_t)t->n, cb, (size_t)t->h, (size_t)t->w, mb,
             (size_t)oh, (size_t)ow, (size_t)t->pt, (size_t)t->pl, plan[0], plan[1], plan[2],
             t->act, -0.5f, 0.75f, NULL, 0, 1);
        kept = 1;
        for (int i = 0; i < 64; i++)
            kept &= bs[bslot + (size_t)i] == -7.0f;
        CHECK(kept);
        from_blocked(gs, yp, t->n, t->m, oh * ow, V);
        CHECK(max_scaled_err(gs, y, ys, scale) < 3e-5);
        free(sc), free(yp), free(gs), free(bs);
    }
    from_blocked(got, yb[0], t->n, t->m, oh * ow, V);
    double worst = max_scaled_err(got, y, ys, scale);
    CHECK(worst < 3e-5);
    if (!(worst < 3e-5) || getenv("WINO_VERBOSE"))
        fprintf(stderr, "  %s n%d c%d %dx%d m%d pads %d,%d,%d,%d act%d res%d: max err %g of "
                "the scale (element-wise %g)\n", row->name, t->n, t->c, t->h, t->w, t->m, t->pt,
                t->pl, t->pb, t->pr, t->act, t->res, worst, max_rel_err(got, y, ys));
    for (int k = 1; k < 4; k++)
        CHECK(memcmp(yb[0], yb[k], bsz * sizeof(float)) == 0);
    /* Padding channels past M stay zero (the next layer relies on it). */
    if (t->m % V && t->act != GK_ACT_SIGMOID && t->act != GK_ACT_TANH && !t->res) {
        int zero = 1;
        for (size_t i = 0; i < (size_t)t->n * mb * oh * ow * V; i++)
            zero &= (int)(i % V) < t->m % V || (i / ((size_t)oh * ow * V)) % mb != mb - 1 ||
                    yb[0][i] == 0.0f;
        CHECK(zero);
    }
    for (int k = 0; k < 4; k++)
        free(yb[k]);
    free(x), free(w), free(b), free(r), free(y), free(got), free(xb), free(rb), free(bias);
    free(wt), free(scratch);
}

static const wcase fixed[] = {
    /* n  c    h   w   m  pt pl pb pr act res */
    { 1, 16, 1, 1, 16, 1, 1, 1, 1, 0, 0 },    /* one pixel */
    { 1, 16, 3, 3, 16, 0, 0, 0, 0, 1, 0 },    /* window = input: one output */
    { 1, 32, 8, 8, 32, 1, 1, 1, 1, 1, 1 },    /* whole tiles */
    { 2, 64, 30, 29, 80, 1, 1, 1, 1, 1, 1 },  /* many tile groups over two images */
    { 1, 256, 14, 14, 256, 1, 1, 1, 1, 1, 0 },/* many input blocks: chunks, partial sums */
    { 1, 24, 9, 13, 40, 0, 1, 1, 0, 3, 1 },   /* asymmetric pads */
    /* Small planes: the tails past the whole register tiles (wino_gemm_tail). */
    { 1, 64, 7, 7, 64, 1, 1, 1, 1, 1, 1 },    /* 7x7: 4 tiles, a tail only (4 blocks) */
    { 1, 96, 14, 14, 80, 1, 1, 1, 1, 2, 1 },  /* 14x14: 16 tiles as 12 + 4; 5 blocks */
    { 2, 48, 7, 7, 40, 1, 1, 1, 1, 1, 0 },    /* 7x7 batch 2: 8 tiles over two images */
    { 3, 32, 14, 14, 24, 1, 1, 1, 1, 1, 1 },  /* 14x14 batch 3: 48 tiles */
    { 8, 32, 7, 7, 48, 1, 1, 1, 1, 3, 0 },    /* 7x7 batch 8 (ResNet-50 b8's 7x7): 32 tiles */
    { 1, 40, 10, 9, 56, 1, 1, 1, 1, 1, 0 },   /* 9 tiles: 6 + 3 with AVX2, a tail of 12 */
};

/* The padding of a tile group (gk_wino_padded), which the plan's scratch and the kernel's
 * loops share: at least the group, less than one register tile more, whole register tiles
 * then a tail of one or two nq; and every group of a plan fits its scratch stride. */
static void test_padding(void)
{
    for (size_t v = 8; v <= 16; v += 8) {
        size_t np = gk_wino_np(v), nq = gk_wino_nq(v);
        for (size_t mg = 1; mg <= 4; mg *= 2)
            for (size_t nt = 1; nt <= 60; nt++) {
                size_t p = gk_wino_padded(nt, v, mg), rest = p % np;
                CHECK(p >= nt && p < nt + np);
                CHECK(rest % nq == 0 && rest / nq < np / nq);
            }
        for (size_t n = 1; n <= 8; n *= 2)
            for (size_t h = 3; h <= 30; h += 3) {
                gk_wino_plan pl = gk_wino_plan_of(n, 4, 6, h, h + 1, v, GK_WINO_RATE_SEARCH);
                size_t last = pl.tiles - (pl.ngr - 1) * pl.tg;
                CHECK(pl.tgp >= gk_wino_padded(pl.tg, v, pl.mg));
                CHECK(pl.tgp >= gk_wino_padded(last, v, pl.mg));
                CHECK(pl.tg % np == 0 || pl.ngr == 1);
                CHECK(pl.slot == 36 * pl.tgp * v * (pl.kc + pl.mg));
            }
    }
}

/* A random case: 1-4 blocks of channels (the last partial or whole), planes of 1-19. */
static wcase random_case(int V)
{
    wcase t;
    t.n = 1 + rand() % 2;
    t.c = (rand() % 4) * V + 1 + rand() % V;
    t.m = (rand() % 4) * V + 1 + rand() % V;
    do {
        t.h = 1 + rand() % 19;
        t.w = 1 + rand() % 19;
        t.pt = rand() % 2, t.pl = rand() % 2, t.pb = rand() % 2, t.pr = rand() % 2;
    } while (t.h + t.pt + t.pb < 3 || t.w + t.pl + t.pr < 3);
    static const int acts[] = { GK_ACT_NONE, GK_ACT_RELU, GK_ACT_CLIP, GK_ACT_LEAKY_RELU,
                                GK_ACT_SIGMOID };
    t.act = acts[rand() % 5];
    t.res = rand() % 2;
    return t;
}

static void test_wino(const gk_row *row)
{
    test_padding();
    srand(19);
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        run_case(row, &fixed[k]);
    for (int k = 0; k < 40; k++) {
        wcase t = random_case(row_vlen(row));
        run_case(row, &t);
    }
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "wino_nchwc_f32", test_wino },
    };
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    return CHECK_DONE();
}
