// test_gemm_pool_blocked.c - The packed-B GEMM, blocked max/avg pooling and the NCHW <-> blocked
// conversions (AVX-512 and AVX2) against naive references: M at 1, tile-1, tile, tile+1, N and K
// around the panel width, pooling with strides, pads, dilations and count_include_pad; results
// identical for 1 and 3 threads.
#include "check.h"
#include "kernels_test.h"

static void test_gemm(const gk_row *row, int m, int n, int k, int act, int with_res, int trans)
{
    __typeof__(gk_gemm_packed_f32_avx512) *gemm = ROW_FN(row, gk_gemm_packed_f32_avx512);
    int nr = 2 * row_vlen(row), lda = k + 3, ldc = n + 5;
    float *a = rnd_buf((size_t)m * lda), *b = rnd_buf((size_t)k * n), *bias = rnd_buf((size_t)n);
    float *res = with_res ? rnd_buf((size_t)m * ldc) : NULL;
    float *ref = rnd_buf((size_t)m * ldc), *c1 = rnd_buf((size_t)m * ldc);
    float *c3 = malloc((size_t)m * ldc * sizeof(float));
    memcpy(c3, c1, (size_t)m * ldc * sizeof(float)); /* same bytes between rows (untouched) */
    /* b as given to the repacker: [K][N], or [N][K] when trans. */
    float *bt = rnd_buf((size_t)k * n);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < n; j++)
            bt[(size_t)j * k + i] = b[(size_t)i * n + j];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = bias[j];
            for (int p = 0; p < k; p++)
                acc += (double)a[(size_t)i * lda + p] * b[(size_t)p * n + j];
            if (res)
                acc += res[(size_t)i * ldc + j];
            ref[(size_t)i * ldc + j] = ref_act((float)acc, act, -0.5f, 0.75f);
        }
    float *bp = rnd_buf(glow_repack_gemm_b_floats(k, n, nr));
    if (trans)
        glow_repack_gemm_b(bp, bt, k, n, k, 1, nr);
    else
        glow_repack_gemm_b(bp, b, k, n, n, 0, nr);
    gemm(c1, a, bp, bias, res, (size_t)m, (size_t)n, (size_t)k, (size_t)lda, (size_t)ldc, act,
         -0.5f, 0.75f, NULL, 0, 1);
    unsigned counter = 0;   /* the 3-thread run takes its units from a counter */
    for (int t = 0; t < 3; t++)
        gemm(c3, a, bp, bias, res, (size_t)m, (size_t)n, (size_t)k, (size_t)lda,
             (size_t)ldc, act, -0.5f, 0.75f, &counter, t, 3);
    double worst = 0;
    for (int i = 0; i < m; i++) {
        double e = max_rel_err(c1 + (size_t)i * ldc, ref + (size_t)i * ldc, (size_t)n);
        worst = e > worst ? e : worst;
    }
    CHECK(worst < 1e-4);
    if (!(worst < 1e-4))
        fprintf(stderr, "  %s m%d n%d k%d act%d res%d: max rel err %g\n", row->name, m, n, k,
                act, with_res, worst);
    CHECK(memcmp(c1, c3, (size_t)m * ldc * sizeof(float)) == 0);
    free(a), free(b), free(bias), free(res), free(ref), free(c1), free(c3), free(bt), free(bp);
}

typedef struct {
    int n, c, h, w, kh, kw, sh, sw, ph, pw, phe, pwe, dh, dw, cip;
} pool_case;

static void test_pool(const gk_row *row, const pool_case *t, int is_max)
{
    __typeof__(gk_maxpool_nchwc_f32_avx512) *maxpool = ROW_FN(row, gk_maxpool_nchwc_f32_avx512);
    __typeof__(gk_avgpool_nchwc_f32_avx512) *avgpool = ROW_FN(row, gk_avgpool_nchwc_f32_avx512);
    int V = row_vlen(row);
    int oh = (t->h + t->ph + t->phe - t->dh * (t->kh - 1) - 1) / t->sh + 1;
    int ow = (t->w + t->pw + t->pwe - t->dw * (t->kw - 1) - 1) / t->sw + 1;
    size_t xs = (size_t)t->n * t->c * t->h * t->w, ys = (size_t)t->n * t->c * oh * ow;
    float *x = rnd_buf(xs), *ref = rnd_buf(ys), *got = rnd_buf(ys);
    for (int nc = 0; nc < t->n * t->c; nc++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                double acc = is_max ? -INFINITY : 0;
                int cnt = 0, padded = 0;
                for (int ky = 0; ky < t->kh; ky++)
                    for (int kx = 0; kx < t->kw; kx++) {
                        int iy = oy * t->sh - t->ph + ky * t->dh;
                        int ix = ox * t->sw - t->pw + kx * t->dw;
                        padded += iy >= -t->ph && iy < t->h + t->phe && ix >= -t->pw &&
                                  ix < t->w + t->pwe;
                        if (iy < 0 || iy >= t->h || ix < 0 || ix >= t->w)
                            continue;
                        double v = x[((size_t)nc * t->h + iy) * t->w + ix];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                        cnt++;
                    }
                if (!is_max)
                    acc /= t->cip ? padded : cnt;
                ref[((size_t)nc * oh + oy) * ow + ox] = (float)acc;
            }
    int cb = (t->c + V - 1) / V;
    float *xb = to_blocked(x, t->n, t->c, t->h * t->w, V);
    size_t bs = (size_t)t->n * cb * V * oh * ow;
    float *y1 = rnd_buf(bs), *y3 = rnd_buf(bs);
    for (int nt = 1; nt <= 3; nt += 2)
        for (int tid = 0; tid < nt; tid++) {
            float *y = nt == 1 ? y1 : y3;
            if (is_max)
                maxpool(y, xb, (size_t)t->n, (size_t)cb, (size_t)t->h, (size_t)t->w,
                        (size_t)oh, (size_t)ow, (size_t)t->kh, (size_t)t->kw, (size_t)t->sh,
                        (size_t)t->sw, (size_t)t->ph, (size_t)t->pw, (size_t)t->dh,
                        (size_t)t->dw, tid, nt);
            else
                avgpool(y, xb, (size_t)t->n, (size_t)cb, (size_t)t->h, (size_t)t->w,
                        (size_t)oh, (size_t)ow, (size_t)t->kh, (size_t)t->kw, (size_t)t->sh,
                        (size_t)t->sw, (size_t)t->ph, (size_t)t->pw, (size_t)t->phe,
                        (size_t)t->pwe, t->cip, tid, nt);
        }
    from_blocked(got, y1, t->n, t->c, oh * ow, V);
    double worst = max_rel_err(got, ref, ys);
    CHECK(worst < 1e-5);
    if (!(worst < 1e-5))
        fprintf(stderr, "  %s c%d %dx%d k%dx%d s%d p%d,%d,%d,%d d%d cip%d: err %g\n",
                row->name, t->c, t->h, t->w, t->kh, t->kw, t->sh, t->ph,
                t->pw, t->phe, t->pwe, t->dh, t->cip, worst);
    CHECK(memcmp(y1, y3, bs * sizeof(float)) == 0);
    free(x), free(ref), free(got), free(xb), free(y1), free(y3);
}

/* NCHW -> blocked against the independent conversion of kernels_test.h, 3 threads. */
static void test_to(const gk_row *row, int n, int c, int hw, int cv)
{
    size_t xs = (size_t)n * c * hw, bs = (size_t)n * ((c + cv - 1) / cv) * cv * hw;
    float *x = rnd_buf(xs), *want = to_blocked(x, n, c, hw, cv), *got = rnd_buf(bs);
    for (int t = 0; t < 3; t++)
        ROW_FN(row, gk_to_nchwc_f32_avx512)(got, x, (size_t)n, (size_t)c, (size_t)hw,
                                             (size_t)cv, t, 3);
    CHECK(memcmp(got, want, bs * sizeof(float)) == 0);
    free(x), free(want), free(got);
}

/* Blocked -> NCHW gives back the tensor, 3 threads. */
static void test_from(const gk_row *row, int n, int c, int hw)
{
    size_t xs = (size_t)n * c * hw;
    float *x = rnd_buf(xs), *blocked = to_blocked(x, n, c, hw, row_vlen(row)), *back = rnd_buf(xs);
    for (int t = 0; t < 3; t++)
        ROW_FN(row, gk_from_nchwc_f32_avx512)(back, blocked, (size_t)n, (size_t)c, (size_t)hw, t,
                                               3);
    CHECK(memcmp(back, x, xs * sizeof(float)) == 0);
    free(x), free(blocked), free(back);
}

static const pool_case pools[] = {
    /* n  c  h   w  kh kw sh sw ph pw phe pwe dh dw cip */
    { 1, 16, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 0 },
    { 2, 20, 15, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
    { 1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0 },
    { 1, 24, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 },
    { 1, 8, 10, 10, 3, 2, 2, 1, 1, 0, 2, 1, 1, 1, 1 }, /* asymmetric end pads */
    { 1, 16, 12, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 0 }, /* dilation (max only) */
    { 1, 40, 7, 7, 7, 7, 1, 1, 0, 0, 0, 0, 1, 1, 0 },  /* global */
    { 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0 },
    /* rows wider than the max pool's column buffer (several segments, odd end pad) */
    { 2, 8, 5, 300, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 0 },
    { 1, 8, 5, 301, 3, 5, 2, 3, 1, 2, 0, 2, 1, 1, 0 },
    /* a window wider than the column buffer: the generic path */
    { 1, 8, 3, 150, 1, 3, 1, 1, 0, 0, 0, 0, 1, 70, 0 },
};

/* M at 1, tile-1, tile, tile+1 and more; N around the panel width; every activation. */
static void gemm_cases(const gk_row *row)
{
    int mr = row_vlen(row) == 16 ? 12 : 6, nr = 2 * row_vlen(row);
    int ms[] = { 1, 2, mr - 1, mr, mr + 1, 2 * mr + 3 };
    int ns[] = { 1, nr - 1, nr, nr + 1, 3 * nr + 5 };
    for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
            test_gemm(row, ms[a], ns[b], 37, (int)((a + b) % 6), (int)(b % 2), (int)(a % 2));
    test_gemm(row, 1, 100, 1, GK_ACT_RELU, 0, 0);
    test_gemm(row, 3, 64, 257, GK_ACT_NONE, 1, 1);
    test_gemm(row, 1, 1000, 512, GK_ACT_NONE, 0, 0);
}

static void maxpool_cases(const gk_row *row)
{
    for (size_t p = 0; p < sizeof pools / sizeof pools[0]; p++)
        test_pool(row, &pools[p], 1);
}

/* The average pooling kernel takes no dilations: the dilated windows are max pooling's only. */
static void avgpool_cases(const gk_row *row)
{
    for (size_t p = 0; p < sizeof pools / sizeof pools[0]; p++)
        if (pools[p].dh == 1 && pools[p].dw == 1)
            test_pool(row, &pools[p], 0);
}

static void to_cases(const gk_row *row)
{
    test_to(row, 1, 3, 50, 3);
    test_to(row, 2, 21, 17, row_vlen(row));
    test_to(row, 1, 64, 9, row_vlen(row));
    test_to(row, 1, 5, 4, row_vlen(row));
    /* whole tiles, a pixel tail and a partial last block; a first conv's block of 3 */
    test_to(row, 1, 6, 100, row_vlen(row));
    test_to(row, 2, 37, 67, row_vlen(row));
    test_to(row, 1, 32, 64, row_vlen(row));
    test_to(row, 1, 3, 100, 3);
    /* first-conv blocks narrower than a tile: whole tiles with a tail, all tail, 1 channel,
     * and a width past the tile that it does not divide */
    test_to(row, 2, 3, 67, 3);
    test_to(row, 1, 3, 15, 3);
    test_to(row, 1, 1, 64, 1);
    test_to(row, 1, 7, 33, 7);
    test_to(row, 1, 12, 40, 12);
}

static void from_cases(const gk_row *row)
{
    test_from(row, 2, 21, 17);
    test_from(row, 1, 64, 9);
    test_from(row, 1, 5, 4);
    test_from(row, 1, 6, 100);
    test_from(row, 2, 37, 67);
    test_from(row, 1, 32, 64);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "gemm_packed_f32", gemm_cases },     { "maxpool_nchwc_f32", maxpool_cases },
        { "avgpool_nchwc_f32", avgpool_cases }, { "to_nchwc_f32", to_cases },
        { "from_nchwc_f32", from_cases },
    };
    srand(11);
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    return CHECK_DONE();
}
