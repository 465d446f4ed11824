// test_conv_blocked.c - The blocked-layout conv and depthwise kernels (AVX-512 and AVX2) against a
// naive NCHW convolution, over shapes around the register tile, odd channel counts, strides,
// pads, dilations, groups and the fused bias / residual / activation; and results identical for
// 1, 2 and 3 threads.
#include "check.h"
#include "conv/conv_plan.h"
#include "kernels_test.h"

typedef struct {
    int n, c, h, w, m, kh, kw, sh, sw, ph, pw, dh, dw, groups, act;
    int res;
} conv_case;

/* Naive NCHW convolution with symmetric begin pads ph/pw (the end pad follows from oh/ow). */
static void ref_conv(const conv_case *t, int oh, int ow, const float *x, const float *w,
                     const float *b, const float *r, float *y)
{
    int cpg = t->c / t->groups, mpg = t->m / t->groups;
    for (int n = 0; n < t->n; n++)
        for (int m = 0; m < t->m; m++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    double acc = b[m];
                    int g = m / mpg;
                    for (int c = 0; c < cpg; c++)
                        for (int ky = 0; ky < t->kh; ky++)
                            for (int kx = 0; kx < t->kw; kx++) {
                                int iy = oy * t->sh - t->ph + ky * t->dh;
                                int ix = ox * t->sw - t->pw + kx * t->dw;
                                if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w)
                                    continue;
                                acc += (double)x[((n * t->c + g * cpg + c) * t->h + iy) * t->w +
                                                 ix] *
                                       w[((m * cpg + c) * t->kh + ky) * t->kw + kx];
                            }
                    size_t yi = (((size_t)n * t->m + m) * oh + oy) * ow + ox;
                    if (r)
                        acc += r[yi];
                    y[yi] = ref_act((float)acc, t->act, -0.5f, 0.75f);
                }
}

static int oh_of(const conv_case *t)
{
    return (t->h + 2 * t->ph - t->dh * (t->kh - 1) - 1) / t->sh + 1;
}

static int ow_of(const conv_case *t)
{
    return (t->w + 2 * t->pw - t->dw * (t->kw - 1) - 1) / t->sw + 1;
}

static void run_case(const gk_row *row, const conv_case *t)
{
    __typeof__(gk_conv2d_nchwc_f32_avx512) *conv = ROW_FN(row, gk_conv2d_nchwc_f32_avx512);
    __typeof__(gk_dwconv2d_nchwc_f32_avx512) *dwconv = ROW_FN(row, gk_dwconv2d_nchwc_f32_avx512);
    int oh = oh_of(t), ow = ow_of(t), V = row_vlen(row);
    int depthwise = t->groups > 1 && t->groups == t->c && t->m == t->c;
    int cpg = t->c / t->groups;
    /* A first layer with fewer channels than a block keeps them unpadded (cv = C). */
    int cv = t->groups == 1 && t->c < V ? t->c : V;
    size_t xs = (size_t)t->n * t->c * t->h * t->w, ys = (size_t)t->n * t->m * oh * ow;
    size_t ws = (size_t)t->m * cpg * t->kh * t->kw;
    float *x = rnd_buf(xs), *w = rnd_buf(ws), *b = rnd_buf((size_t)t->m);
    float *r = t->res ? rnd_buf(ys) : NULL, *y = rnd_buf(ys), *got = rnd_buf(ys);
    ref_conv(t, oh, ow, x, w, b, r, y);

    size_t cbt = (size_t)(t->c + cv - 1) / cv, mb = (size_t)(t->m + V - 1) / V;
    float *xb = to_blocked(x, t->n, t->c, t->h * t->w, cv);
    float *rb = r ? to_blocked(r, t->n, t->m, oh * ow, V) : NULL;
    size_t bsz = (size_t)t->n * mb * V * oh * ow;
    float *yb1 = rnd_buf(bsz), *yb3 = rnd_buf(bsz);
    float *bias = rnd_buf(glow_repack_bias_floats(t->m, V));
    glow_repack_bias(bias, b, t->m, V);
    float *wt;
    if (depthwise) {
        wt = rnd_buf(glow_repack_dwconv_floats(t->c, t->kh, t->kw, V));
        glow_repack_dwconv(wt, w, t->c, t->kh, t->kw, V);
    } else {
        size_t wf = glow_repack_conv_floats(t->m, cpg, t->groups, t->kh, t->kw, V, cv);
        CHECK(wf > 0);
        wt = rnd_buf(wf);
        glow_repack_conv(wt, w, t->m, cpg, t->groups, t->kh, t->kw, V, cv);
    }
    for (int nt = 1; nt <= 3; nt += 2) {
        float *yb = nt == 1 ? yb1 : yb3;
        /* The 3-thread run adds the residual in place (res aliasing out, as the backend's
         * fused residual Add may): the reduction in chunks keeps partial sums in out. */
        const float *rr = rb;
        if (rb && nt == 3) {
            memcpy(yb, rb, bsz * sizeof(float));
            rr = yb;
        }
        /* The 3-thread run takes its units from a counter (the backend's dynamic split): run
         * one after the other, thread 0 takes them all, and every unit must still be right. */
        unsigned counter = 0, *work = nt == 3 ? &counter : NULL;
        /* The 1-thread run derives the form and tile width from the shape; the 3-thread run is
         * given them, as the cpu backend does (conv_plan.h): the same tiles, the same bits. */
        gk_conv_tiling tl = { 0, 0, 0 };
        if (nt == 3)
            tl = gk_conv_tiling_of((size_t)t->h, (size_t)t->w, (size_t)oh, (size_t)ow,
                                   (size_t)t->kh, (size_t)t->kw, (size_t)t->sh, (size_t)t->sw,
                                   (size_t)t->ph, (size_t)t->pw, (size_t)V);
        for (int tid = 0; tid < nt; tid++) {
            if (depthwise)
                dwconv(yb, xb, wt, bias, rr, (size_t)t->n, cbt, (size_t)t->h, (size_t)t->w,
                       (size_t)oh, (size_t)ow, (size_t)t->kh, (size_t)t->kw, (size_t)t->sh,
                       (size_t)t->sw, (size_t)t->ph, (size_t)t->pw, (size_t)t->dh,
                       (size_t)t->dw, t->act, -0.5f, 0.75f, work, (size_t)tid, (size_t)nt);
            else
                conv(yb, xb, wt, bias, rr, (size_t)t->n, (size_t)t->groups,
                     (size_t)((cpg + cv - 1) / cv), (size_t)cv, (size_t)t->h, (size_t)t->w,
                     mb, (size_t)oh, (size_t)ow, (size_t)t->kh, (size_t)t->kw,
                     (size_t)t->sh, (size_t)t->sw, (size_t)t->ph, (size_t)t->pw,
                     (size_t)t->dh, (size_t)t->dw, tl.form, tl.npw, tl.tail, t->act, -0.5f, 0.75f,
                     work, (size_t)tid, (size_t)nt);
        }
    }
    from_blocked(got, yb1, t->n, t->m, oh * ow, V);
    double worst = max_rel_err(got, y, ys);
    CHECK(worst < 1e-4);
    if (!(worst < 1e-4))
        fprintf(stderr, "  %s conv n%d c%d %dx%d m%d k%dx%d s%d,%d p%d,%d d%d,%d g%d act%d res%d: "
                "max rel err %g\n", row->name, t->n, t->c, t->h, t->w, t->m, t->kh, t->kw, t->sh,
                t->sw, t->ph, t->pw, t->dh, t->dw, t->groups, t->act, t->res, worst);
    CHECK(memcmp(yb1, yb3, bsz * sizeof(float)) == 0);
    /* Padding channels past M stay zero (the next layer relies on it). */
    if (t->m % V && t->act != GK_ACT_SIGMOID && t->act != GK_ACT_TANH && !t->res) {
        int zero = 1;
        for (size_t i = 0; i < (size_t)oh * ow * V; i++)
            zero &= (size_t)(i % V) < (size_t)(t->m % V) ||
                    yb1[(mb - 1) * (size_t)oh * ow * V + i] == 0.0f;
        CHECK(zero);
    }
    free(x), free(w), free(b), free(r), free(y), free(got), free(xb), free(rb), free(yb1);
    free(yb3), free(bias), free(wt);
}

static const conv_case cases[] = {
    /* n  c   h   w   m  kh kw sh sw ph pw dh dw g  act res */
    { 1, 16, 5, 5, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
    { 1, 32, 9, 30, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { 2, 20, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 1, 3, 23, 23, 24, 7, 7, 2, 2, 3, 3, 1, 1, 1, 1, 0 },
    { 1, 64, 14, 14, 48, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1 },
    { 1, 33, 13, 11, 17, 1, 1, 1, 1, 0, 0, 1, 1, 1, 2, 0 },
    { 1, 32, 15, 15, 64, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, 0 },
    { 1, 16, 11, 12, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 }, /* 132 px: tile multiples */
    { 1, 16, 1, 11, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },  /* tile - 1 */
    { 1, 16, 1, 13, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },  /* tile + 1 */
    { 1, 16, 1, 1, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },   /* one pixel */
    /* Tile widths chosen per plane (conv_width), with 16 lanes: 15 px in tiles of 8 (8 lanes:
     * of 5); 1x13 above 7 + 6, 5x5 9, 7x7 10, 1x11 and 14x14 1x1 11, 13x11 1x1 11 (13 x 11). */
    { 1, 16, 3, 5, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { 1, 24, 17, 29, 16, 5, 5, 1, 1, 2, 2, 1, 1, 1, 3, 0 },
    { 1, 16, 20, 40, 32, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1, 0 }, /* dilation 2 */
    { 1, 16, 19, 31, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 4, 0 },
    { 1, 16, 12, 26, 16, 3, 5, 1, 2, 0, 2, 2, 1, 1, 5, 1 },
    { 1, 32, 10, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, 0 }, /* groups of 16 */
    { 1, 64, 8, 30, 64, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0, 1 },  /* groups of 16 */
    { 1, 48, 9, 9, 48, 3, 3, 1, 1, 1, 1, 1, 1, 48, 2, 0 },  /* depthwise */
    { 2, 20, 14, 31, 20, 3, 3, 2, 2, 1, 1, 1, 1, 20, 1, 1 },/* depthwise, odd C */
    { 1, 16, 16, 33, 16, 5, 5, 1, 1, 2, 2, 1, 1, 16, 0, 0 },
    { 1, 16, 20, 20, 16, 3, 3, 1, 1, 2, 2, 2, 2, 16, 3, 0 },
    { 1, 8, 3, 3, 8, 3, 3, 1, 1, 0, 0, 1, 1, 1, 0, 0 },     /* window = input */
    { 1, 16, 30, 60, 16, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1, 0 }, /* no padding, wide rows */
    /* Many input blocks: the reduction runs in chunks (partial sums in out). */
    { 1, 600, 7, 7, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1 },
    { 1, 520, 9, 9, 24, 1, 1, 2, 2, 0, 0, 1, 1, 1, 4, 1 },
    { 2, 72, 10, 13, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 1, 96, 9, 9, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 2, 0 },
    { 1, 64, 12, 12, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2, 0, 1 }, /* groups of 32, chunked */
    { 1, 32, 8, 9, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0 },   /* 1x1, end pad 0 */
    /* Large weights, input over tile groups spanning both images: units of several pairs
     * (an odd number of output blocks, so the last pair is a single block). */
    { 2, 384, 14, 14, 392, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1 },
    /* ResNet-50's 1x1 512->256 at 28x28: units of several pairs over smaller chunks of
     * input blocks (AVX2). */
    { 1, 512, 28, 28, 256, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1 },
};

/* The cases of one kind (depthwise or not) through the row's kernel. */
static void run_cases(const gk_row *row, bool depthwise)
{
    srand(7);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        conv_case t = cases[k];
        if ((t.groups > 1 && t.groups == t.c && t.m == t.c) != depthwise)
            continue;
        /* Grouped cases need whole blocks per group: 16 channels fit AVX2's 8 too. */
        if (t.groups > 1 && t.groups != t.c && ((t.c / t.groups) % row_vlen(row)))
            continue;
        run_case(row, &t);
    }
}

static void test_conv(const gk_row *row)
{
    run_cases(row, false);
}

static void test_dwconv(const gk_row *row)
{
    run_cases(row, true);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "conv2d_nchwc_f32", test_conv },
        { "dwconv2d_nchwc_f32", test_dwconv },
    };
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    return CHECK_DONE();
}
