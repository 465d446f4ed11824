// test_pwdw.c - The fused pointwise-expand + depthwise kernels (AVX-512 and AVX2,
// kernels/conv/pwdw_tmpl.h) against the unfused pair they replace (gk_conv2d_nchwc 1x1, then
// gk_dwconv2d_nchwc) bit for bit, and against a naive NCHW reference in double within rounding,
// on random shapes: planes of 1-19 rows and columns (odd, even, one), stride 1 and 2 in each
// dim, begin pads 0 or 1 and end pads 0 or 1 (3x3; a few 5x5), 1-3 input blocks (fewer
// channels than a block as a network's first layer keeps them: cv = C), 1-5 expanded blocks
// with a partial last one (a pair ending in a single block), batch 1-2, every activation on
// either conv, a residual on the depthwise (also in place). Every run of one case gives the
// same bits: one thread; 2 and 3 threads splitting statically (other bands, so other halo rows
// computed twice); 3 pthreads taking units from one counter; 3 threads given 2 scratch slots.
// The scratch starts as NaNs, so a ring row read before it is written shows.
#include <pthread.h>

#include "backend/cpu/repack.h"
#include "check.h"
#include "../../kernels/conv/pwdw_plan.h"
#include "kernels_test.h"

typedef struct {
    int n, c, h, w, m, k, sh, sw, pt, pl, pb, pr, act1, act2, res;
} pcase;

typedef __typeof__(gk_pwdw_nchwc_f32_avx512) pwdw_fn;

static int out_h(const pcase *t) { return (t->h + t->pt + t->pb - t->k) / t->sh + 1; }
static int out_w(const pcase *t) { return (t->w + t->pl + t->pr - t->k) / t->sw + 1; }

/* act(x) as the kernels' act_vec / act_slow apply it, the Clip and LeakyRelu parameters the
 * test passes. */
static float act_of(float x, int act)
{
    return ref_act(x, act, act == GK_ACT_CLIP ? -0.5f : 0.1f, 0.75f);
}

/* Naive NCHW: e = act1(x * w1 + b1) rounded to float, y = act2(dw(e) + b2 + r). */
static void ref_pwdw(const pcase *t, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, const float *r, float *y)
{
    int oh = out_h(t), ow = out_w(t), hw = t->h * t->w;
    float *e = malloc(sizeof(float) * (size_t)t->n * t->m * hw);
    for (int n = 0; n < t->n; n++)
        for (int m = 0; m < t->m; m++)
            for (int p = 0; p < hw; p++) {
                double acc = b1[m];
                for (int c = 0; c < t->c; c++)
                    acc += (double)x[((size_t)n * t->c + c) * hw + p] * w1[m * t->c + c];
                e[((size_t)n * t->m + m) * hw + p] = act_of((float)acc, t->act1);
            }
    for (int n = 0; n < t->n; n++)
        for (int m = 0; m < t->m; m++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    double acc = b2[m];
                    for (int ky = 0; ky < t->k; ky++)
                        for (int kx = 0; kx < t->k; kx++) {
                            int iy = oy * t->sh - t->pt + ky, ix = ox * t->sw - t->pl + kx;
                            if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w)
                                continue;
                            acc += (double)e[((size_t)n * t->m + m) * hw + iy * t->w + ix] *
                                   w2[(m * t->k + ky) * t->k + kx];
                        }
                    size_t yi = (((size_t)n * t->m + m) * oh + oy) * ow + ox;
                    if (r)
                        acc += r[yi];
                    y[yi] = act_of((float)acc, t->act2);
                }
    free(e);
}

/* One call of the fused kernel with all its arguments but the varying ones. */
typedef struct {
    pwdw_fn *fn;
    const pcase *t;
    float *y;
    const float *x, *w1, *b1, *w2, *b2, *res;
    float *scratch;
    size_t slots, cb, cv, mb;
    unsigned *work;
    int tid, nthreads;
} call;

static void *run_call(void *arg)
{
    const call *k = arg;
    const pcase *t = k->t;
    k->fn(k->y, k->x, k->w1, k->b1, k->w2, k->b2, k->res, k->scratch, k->slots, (size_t)t->n,
          k->cb, k->cv, (size_t)t->h, (size_t)t->w, k->mb, (size_t)out_h(t), (size_t)out_w(t),
          (size_t)t->k, (size_t)t->k, (size_t)t->sh, (size_t)t->sw, (size_t)t->pt,
          (size_t)t->pl, t->act1, t->act1 == GK_ACT_CLIP ? -0.5f : 0.1f, 0.75f, t->act2,
          t->act2 == GK_ACT_CLIP ? -0.5f : 0.1f, 0.75f, k->work, k->tid, k->nthreads);
    return NULL;
}

/* The row of family `op` (f32) with the ISA of `row`: the unfused kernels beside the fused. */
static const gk_row *sibling(const gk_row *row, const char *op)
{
    for (int r = 0; r < GK_NROWS; r++)
        if (!strcmp(gk_rows[r].op, op) && !strcmp(gk_rows[r].dtype, "f32") &&
            !strcmp(gk_rows[r].isa, row->isa))
            return &gk_rows[r];
    abort();
}

static float *nan_buf(size_t count)
{
    float *p = malloc((count ? count : 1) * sizeof(float));
    for (size_t i = 0; i < count; i++)
        p[i] = NAN;
    return p;
}

static void run_case(const gk_row *row, const pcase *t)
{
    __typeof__(gk_conv2d_nchwc_f32_avx512) *conv =
        ROW_FN(sibling(row, "conv2d_nchwc"), gk_conv2d_nchwc_f32_avx512);
    __typeof__(gk_dwconv2d_nchwc_f32_avx512) *dwconv =
        ROW_FN(sibling(row, "dwconv2d_nchwc"), gk_dwconv2d_nchwc_f32_avx512);
    pwdw_fn *pwdw = ROW_FN(row, gk_pwdw_nchwc_f32_avx512);
    int V = row_vlen(row), oh = out_h(t), ow = out_w(t), hw = t->h * t->w;
    int cv = t->c < V ? t->c : V;
    size_t cb = (size_t)(t->c + cv - 1) / cv, mb = (size_t)(t->m + V - 1) / V;
    size_t xs = (size_t)t->n * t->c * hw, ys = (size_t)t->n * t->m * oh * ow;
    float *x = rnd_buf(xs), *w1 = rnd_buf((size_t)t->m * t->c), *b1 = rnd_buf((size_t)t->m);
    float *w2 = rnd_buf((size_t)t->m * t->k * t->k), *b2 = rnd_buf((size_t)t->m);
    float *r = t->res ? rnd_buf(ys) : NULL, *y = rnd_buf(ys), *got = rnd_buf(ys);
    ref_pwdw(t, x, w1, b1, w2, b2, r, y);

    float *xb = to_blocked(x, t->n, t->c, hw, cv);
    float *rb = r ? to_blocked(r, t->n, t->m, oh * ow, V) : NULL;
    float *w1p = rnd_buf(glow_repack_conv_floats(t->m, t->c, 1, 1, 1, V, cv));
    glow_repack_conv(w1p, w1, t->m, t->c, 1, 1, 1, V, cv);
    float *w2p = rnd_buf(glow_repack_dwconv_floats(t->m, t->k, t->k, V));
    glow_repack_dwconv(w2p, w2, t->m, t->k, t->k, V);
    float *b1p = rnd_buf(glow_repack_bias_floats(t->m, V));
    float *b2p = rnd_buf(glow_repack_bias_floats(t->m, V));
    glow_repack_bias(b1p, b1, t->m, V);
    glow_repack_bias(b2p, b2, t->m, V);
    size_t bsz = (size_t)t->n * mb * V * oh * ow;

    /* The unfused pair: the expanded tensor whole, then the depthwise over it. */
    float *tb = rnd_buf((size_t)t->n * mb * V * hw), *want = rnd_buf(bsz);
    float a1 = t->act1 == GK_ACT_CLIP ? -0.5f : 0.1f, a2 = t->act2 == GK_ACT_CLIP ? -0.5f : 0.1f;
    conv(tb, xb, w1p, b1p, NULL, (size_t)t->n, 1, cb, (size_t)cv, (size_t)t->h, (size_t)t->w, mb,
         (size_t)t->h, (size_t)t->w, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, t->act1, a1, 0.75f, NULL,
         0, 1);
    dwconv(want, tb, w2p, b2p, rb, (size_t)t->n, mb, (size_t)t->h, (size_t)t->w, (size_t)oh,
           (size_t)ow, (size_t)t->k, (size_t)t->k, (size_t)t->sh, (size_t)t->sw, (size_t)t->pt,
           (size_t)t->pl, 1, 1, t->act2, a2, 0.75f, NULL, 0, 1);

    size_t slot = gk_pwdw_slot_floats((size_t)t->h, (size_t)t->w, (size_t)t->k, (size_t)V);
    CHECK(slot >= 2 * (size_t)t->k * t->w * V);
    /* Runs: {threads, static or counter, slots, pthreads, residual in place}. */
    static const struct { int nt, counter, slots, threaded, inplace; } runs[] = {
        { 1, 0, 1, 0, 0 }, { 2, 0, 2, 0, 0 }, { 3, 0, 3, 0, 1 }, { 3, 1, 3, 1, 0 },
        { 3, 1, 2, 1, 1 }, { 3, 0, 2, 0, 0 },
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        float *yb = rnd_buf(bsz), *scratch = nan_buf(slot * (size_t)runs[k].slots);
        const float *rr = rb;
        if (rb && runs[k].inplace) {
            memcpy(yb, rb, bsz * sizeof(float));
            rr = yb;
        }
        unsigned counter = 0;
        call calls[3];
        pthread_t th[3];
        for (int tid = 0; tid < runs[k].nt; tid++) {
            calls[tid] = (call){ pwdw, t, yb, xb, w1p, b1p, w2p, b2p, rr, scratch,
                                 (size_t)runs[k].slots, cb, (size_t)cv, mb,
                                 runs[k].counter ? &counter : NULL, tid, runs[k].nt };
            if (runs[k].threaded)
                CHECK(pthread_create(&th[tid], NULL, run_call, &calls[tid]) == 0);
            else
                run_call(&calls[tid]);
        }
        for (int tid = 0; runs[k].threaded && tid < runs[k].nt; tid++)
            pthread_join(th[tid], NULL);
        bool same = memcmp(yb, want, bsz * sizeof(float)) == 0;
        for (size_t i = 0; !same && getenv("PWDW_DEBUG") && i < bsz; i++)
            if (memcmp(&yb[i], &want[i], 4)) {
                fprintf(stderr, "first diff at %zu: %g vs %g\n", i, yb[i], want[i]);
                break;
            }
        CHECK(same);
        if (!same)
            fprintf(stderr, "  %s n%d c%d %dx%d m%d k%d s%d,%d pads %d,%d,%d,%d act%d,%d res%d: "
                    "run %zu differs from the unfused pair\n", row->name, t->n, t->c, t->h,
                    t->w, t->m, t->k, t->sh, t->sw, t->pt, t->pl, t->pb, t->pr, t->act1,
                    t->act2, t->res, k);
        if (k == 0) {
            from_blocked(got, yb, t->n, t->m, oh * ow, V);
            double worst = max_rel_err(got, y, ys);
            CHECK(worst < 1e-4);
            if (!(worst < 1e-4))
                fprintf(stderr, "  %s n%d c%d %dx%d m%d k%d s%d,%d: max rel err %g against "
                        "the reference\n", row->name, t->n, t->c, t->h, t->w, t->m, t->k, t->sh,
                        t->sw, worst);
        }
        free(yb);
        free(scratch);
    }
    free(x), free(w1), free(b1), free(w2), free(b2), free(r), free(y), free(got), free(xb);
    free(rb), free(w1p), free(w2p), free(b1p), free(b2p), free(tb), free(want);
}

static const pcase fixed[] = {
    /* n  c    h    w    m   k sh sw pt pl pb pr act1 act2 res */
    { 1, 16, 1, 1, 16, 3, 1, 1, 1, 1, 1, 1, 2, 2, 0 },       /* one pixel */
    { 1, 16, 112, 112, 96, 3, 2, 2, 1, 1, 1, 1, 2, 2, 0 },   /* MobileNet v2 features.2 */
    { 1, 24, 56, 56, 144, 3, 1, 1, 1, 1, 1, 1, 2, 2, 0 },    /* features.3 (24: 2 blocks) */
    { 1, 32, 28, 28, 192, 3, 2, 2, 1, 1, 1, 1, 2, 2, 0 },    /* features.7 */
    { 1, 64, 14, 14, 384, 3, 1, 1, 1, 1, 1, 1, 2, 2, 1 },    /* features.8-10 */
    { 1, 160, 7, 7, 960, 3, 1, 1, 1, 1, 1, 1, 2, 2, 0 },     /* features.15-16 */
    { 2, 8, 9, 30, 40, 3, 1, 2, 1, 1, 1, 0, 1, 3, 1 },       /* batch 2, mixed strides */
    { 1, 3, 13, 11, 24, 5, 1, 1, 2, 2, 2, 2, 4, 5, 0 },      /* 5x5, cv = 3 */
    { 1, 16, 2, 40, 48, 3, 2, 1, 0, 1, 1, 1, 1, 1, 1 },      /* two rows */
};

static pcase random_case(int V)
{
    pcase t;
    static const int acts[] = { GK_ACT_NONE, GK_ACT_RELU, GK_ACT_CLIP, GK_ACT_LEAKY_RELU,
                                GK_ACT_SIGMOID, GK_ACT_TANH };
    t.n = 1 + rand() % 2;
    t.c = rand() % 3 == 0 ? 1 + rand() % V : (1 + rand() % 3) * V - rand() % 2 * (rand() % V);
    t.m = (rand() % 5) * V + 1 + rand() % V;
    t.k = rand() % 8 == 0 ? 5 : 3;
    do {
        t.h = 1 + rand() % 19;
        t.w = 1 + rand() % 19;
        t.sh = 1 + rand() % 2, t.sw = 1 + rand() % 2;
        t.pt = rand() % 2, t.pl = rand() % 2, t.pb = rand() % 2, t.pr = rand() % 2;
        if (t.k == 5)
            t.pt++, t.pl++, t.pb++, t.pr++;
    } while (t.h + t.pt + t.pb < t.k || t.w + t.pl + t.pr < t.k);
    t.act1 = acts[rand() % 6];
    t.act2 = acts[rand() % 6];
    t.res = rand() % 2;
    return t;
}

static void test_pwdw(const gk_row *row)
{
    srand(2);
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        run_case(row, &fixed[k]);
    for (int k = 0; k < 60; k++) {
        pcase t = random_case(row_vlen(row));
        run_case(row, &t);
    }
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "pwdw_nchwc_f32", test_pwdw },
    };
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    return CHECK_DONE();
}
