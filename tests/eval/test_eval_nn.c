// test_eval_nn.c - The evaluator's convolution, pool, Gemm and f32 fast-path routines against
// naive references written here, on pseudo-random data.
//
// Each case runs the same node on f32 (fast paths) and f64 (generic loops) and compares both
// with a direct transcription of the ONNX definition, so a bug in either path shows.
#include "check.h"
#include "eval/eval.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;
static uint32_t seed = 12345;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static double rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return (double)((seed >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* A constant of kind t with the given f64 values. */
static glow_node *cst(glow_dtype t, int rank, const int64_t *dims, const double *v)
{
    static int count;
    char name[32];
    snprintf(name, sizeof name, "c%d", count++);
    glow_type ty = glow_type_make(t, rank, dims);
    glow_node *c = glow_constant_create(M, name, &ty, NULL);
    for (int64_t i = 0; i < glow_type_numel(&ty); i++)
        glow_store_f64(t, c->payload.data, (size_t)i, v[i]);
    return c;
}

static double *randoms(int64_t n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = rnd();
    return v;
}

/* Builds kind k over constants (of kind t) and evaluates it; result r returned as f64s. */
static double *eval(glow_node_kind k, glow_dtype t, int nin, const int *ranks,
                    const int64_t *const *dims, double *const *vals, const glow_attr *attrs,
                    int nattr, int nres, int res, int64_t *count)
{
    glow_value ins[4];
    for (int i = 0; i < nin; i++)
        ins[i] = glow_val(cst(t, ranks[i], dims[i], vals[i]), 0);
    glow_diag_clear(&D);
    glow_node *n = glow_build(F, k, "n", ins, nin, attrs, nattr, NULL, nres, &D);
    if (!n) {
        fprintf(stderr, "build: %s\n", D.msg);
        CHECK(false);
        return NULL;
    }
    glow_tensor in[4], out[3];
    for (int i = 0; i < nin; i++)
        in[i] = ins[i].node->payload;
    if (glow_eval_node(n, in, out, &D) != GLOW_OK) {
        fprintf(stderr, "eval: %s\n", D.msg);
        CHECK(false);
        return NULL;
    }
    *count = glow_type_numel(&out[res].type);
    double *r = malloc(sizeof(double) * (size_t)(*count ? *count : 1));
    for (int64_t i = 0; i < *count; i++)
        r[i] = glow_load_f64(out[res].type.dtype, out[res].data, (size_t)i);
    for (uint32_t i = 0; i < n->nout; i++)
        glow_tensor_free(&out[i]);
    return r;
}

static void compare(const char *what, const double *got, const double *want, int64_t n,
                    double tol)
{
    int bad = 0;
    for (int64_t i = 0; got && i < n; i++) {
        if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])))) {
            if (bad++ < 5)
                fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what,
                        (long long)i, got[i], want[i]);
        }
    }
    CHECK(got != NULL);
    CHECK_EQ(bad, 0);
}

/* 2-D conv reference: x [N, C, H, W], w [M, C/g, KH, KW]. */
static void conv_ref(const int64_t *xd, const double *x, const int64_t *wd, const double *w,
                     const double *b, const int64_t *s, const int64_t *p, const int64_t *dl,
                     int64_t g, const int64_t *yd, double *y)
{
    int64_t cg = xd[1] / g, mg = wd[0] / g;
    for (int64_t n = 0; n < yd[0]; n++)
        for (int64_t m = 0; m < yd[1]; m++)
            for (int64_t oh = 0; oh < yd[2]; oh++)
                for (int64_t ow = 0; ow < yd[3]; ow++) {
                    double acc = b ? b[m] : 0;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t kh = 0; kh < wd[2]; kh++)
                            for (int64_t kw = 0; kw < wd[3]; kw++) {
                                int64_t ih = oh * s[0] - p[0] + kh * dl[0];
                                int64_t iw = ow * s[1] - p[1] + kw * dl[1];
                                if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3])
                                    continue;
                                int64_t ci = (m / mg) * cg + c;
                                acc += x[((n * xd[1] + ci) * xd[2] + ih) * xd[3] + iw] *
                                       w[((m * cg + c) * wd[2] + kh) * wd[3] + kw];
                            }
                    y[((n * yd[1] + m) * yd[2] + oh) * yd[3] + ow] = acc;
                }
}

static void test_conv(int64_t g, int64_t k, int64_t s, int64_t pad, int64_t dil)
{
    int64_t xd[4] = { 2, 4, 9, 8 }, wd[4] = { 8, 4 / g, k, k };
    int64_t st[2] = { s, s }, ps[4] = { pad, pad + 1, pad, pad }, dl[2] = { dil, dil };
    int64_t ks[2] = { k, k };
    int64_t yd[4] = { 2, 8, (9 + 2 * pad - dil * (k - 1) - 1) / s + 1,
                      (8 + 2 * pad + 1 - dil * (k - 1) - 1) / s + 1 };
    double *x = randoms(2 * 4 * 9 * 8), *w = randoms(8 * (4 / g) * k * k), *b = randoms(8);
    int64_t ny = yd[0] * yd[1] * yd[2] * yd[3];
    double *ref = malloc(sizeof(double) * (size_t)ny);
    int64_t ps2[2] = { ps[0], ps[1] };
    conv_ref(xd, x, wd, w, b, st, ps2, dl, g, yd, ref);
    glow_attr a[] = { GLOW_AINTS(KERNEL, ks, 2), GLOW_AINTS(STRIDES, st, 2),
                      GLOW_AINTS(PADS, ps, 4), GLOW_AINTS(DILATIONS, dl, 2),
                      GLOW_AI(GROUP, g) };
    int ranks[3] = { 4, 4, 1 };
    const int64_t *dims[3] = { xd, wd, DIMS(8) };
    double *vals[3] = { x, w, b };
    glow_dtype kinds[3] = { GLOW_F32, GLOW_F64, GLOW_F16 };
    for (int t = 0; t < 3; t++) {
        int64_t n = 0;
        double *got = eval(NK_CONV, kinds[t], 3, ranks, dims, vals, a, 5, 1, 0, &n);
        CHECK_EQ(n, ny);
        char what[96];
        snprintf(what, sizeof what, "conv %s g%lld k%lld s%lld p%lld d%lld",
                 glow_dtype_name(kinds[t]), (long long)g, (long long)k, (long long)s,
                 (long long)pad, (long long)dil);
        /* f16 rounds the operands: compare loosely. */
        compare(what, got, ref, ny, kinds[t] == GLOW_F16 ? 2e-2 : kinds[t] == GLOW_F32 ? 1e-5
                                                                                        : 1e-12);
        free(got);
    }
    free(x), free(w), free(b), free(ref);
}

/* ConvTranspose 1-D: y[o] += x[i] * w[k] with o = i*s - pb + k*d. */
static void test_conv_transpose(void)
{
    int64_t xd[3] = { 1, 2, 4 }, wd[3] = { 2, 3, 3 }; /* C=2, M/g=3, k=3, group 1 */
    int64_t s = 2, pb = 1, pe = 0, k = 3, d = 1;
    int64_t out = s * (4 - 1) + d * (k - 1) + 1 - pb - pe;
    double *x = randoms(8), *w = randoms(18);
    double *ref = calloc((size_t)(3 * out), sizeof(double));
    for (int64_t c = 0; c < 2; c++)
        for (int64_t i = 0; i < 4; i++)
            for (int64_t m = 0; m < 3; m++)
                for (int64_t q = 0; q < k; q++) {
                    int64_t o = i * s - pb + q * d;
                    if (o >= 0 && o < out)
                        ref[m * out + o] += x[c * 4 + i] * w[(c * 3 + m) * k + q];
                }
    int64_t ks[1] = { k }, st[1] = { s }, ps[2] = { pb, pe }, dl[1] = { d }, op[1] = { 0 };
    glow_attr a[] = { GLOW_AINTS(KERNEL, ks, 1), GLOW_AINTS(STRIDES, st, 1),
                      GLOW_AINTS(PADS, ps, 2), GLOW_AINTS(DILATIONS, dl, 1),
                      GLOW_AI(GROUP, 1), GLOW_AINTS(OUTPUT_PADDING, op, 1) };
    int ranks[2] = { 3, 3 };
    const int64_t *dims[2] = { xd, wd };
    double *vals[2] = { x, w };
    int64_t n = 0;
    double *got = eval(NK_CONV_TRANSPOSE, GLOW_F32, 2, ranks, dims, vals, a, 6, 1, 0, &n);
    CHECK_EQ(n, 3 * out);
    compare("conv_transpose", got, ref, 3 * out, 1e-5);
    free(got), free(x), free(w), free(ref);
}

/* Max and average pools on a 3x3 window, stride 2, pads 1 (f32 and f64 agree with the
 * reference; indices are flattened NCHW). */
static void test_pools(void)
{
    int64_t xd[4] = { 1, 2, 5, 5 };
    double *x = randoms(50);
    int64_t ks[2] = { 3, 3 }, st[2] = { 2, 2 }, ps[4] = { 1, 1, 1, 1 }, dl[2] = { 1, 1 };
    int64_t oh = 3, ny = 2 * oh * oh;
    double rmax[18], ridx[18], ravg[18], ravg_cip[18];
    for (int64_t c = 0; c < 2; c++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < oh; j++) {
                double mx = -INFINITY, sum = 0;
                int64_t arg = 0, cnt = 0;
                for (int64_t a = 0; a < 3; a++)
                    for (int64_t b = 0; b < 3; b++) {
                        int64_t h = i * 2 - 1 + a, w = j * 2 - 1 + b;
                        if (h < 0 || h >= 5 || w < 0 || w >= 5)
                            continue;
                        int64_t at = (c * 5 + h) * 5 + w;
                        if (x[at] > mx)
                            mx = x[at], arg = at;
                        sum += x[at], cnt++;
                    }
                int64_t o = (c * oh + i) * oh + j;
                rmax[o] = mx, ridx[o] = (double)arg, ravg[o] = sum / (double)cnt;
                ravg_cip[o] = sum / 9;
            }
    glow_attr a[] = { GLOW_AINTS(KERNEL, ks, 2), GLOW_AINTS(STRIDES, st, 2),
                      GLOW_AINTS(PADS, ps, 4), GLOW_AINTS(DILATIONS, dl, 2),
                      GLOW_AI(COUNT_INCLUDE_PAD, 0) };
    int ranks[1] = { 4 };
    const int64_t *dims[1] = { xd };
    double *vals[1] = { x };
    glow_dtype kinds[2] = { GLOW_F32, GLOW_F64 };
    for (int t = 0; t < 2; t++) {
        int64_t n = 0;
        double *got = eval(NK_MAX_POOL, kinds[t], 1, ranks, dims, vals, a, 4, 2, 0, &n);
        compare("maxpool", got, rmax, ny, 1e-6);
        free(got);
        got = eval(NK_MAX_POOL, kinds[t], 1, ranks, dims, vals, a, 4, 2, 1, &n);
        compare("maxpool indices", got, ridx, ny, 0);
        free(got);
        got = eval(NK_AVG_POOL, kinds[t], 1, ranks, dims, vals, a, 5, 1, 0, &n);
        compare("avgpool", got, ravg, ny, 1e-6);
        free(got);
        a[4] = GLOW_AI(COUNT_INCLUDE_PAD, 1);
        got = eval(NK_AVG_POOL, kinds[t], 1, ranks, dims, vals, a, 5, 1, 0, &n);
        compare("avgpool count_include_pad", got, ravg_cip, ny, 1e-6);
        free(got);
        a[4] = GLOW_AI(COUNT_INCLUDE_PAD, 0);
    }
    free(x);
}

static void test_gemm_and_matmul(void)
{
    /* Gemm with transB, alpha, beta and C; K = 19 exercises the 8-lane tail. */
    int64_t m = 3, k = 19, nn = 5;
    double *a = randoms(m * k), *b = randoms(nn * k), *c = randoms(m * nn);
    double ref[15];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nn; j++) {
            double s = 0;
            for (int64_t q = 0; q < k; q++)
                s += a[i * k + q] * b[j * k + q];
            ref[i * nn + j] = 0.5 * s + 2.0 * c[i * nn + j];
        }
    glow_attr at[] = { GLOW_AF(ALPHA, 0.5), GLOW_AF(BETA, 2.0), GLOW_AI(TRANS_A, 0),
                       GLOW_AI(TRANS_B, 1) };
    int ranks[3] = { 2, 2, 2 };
    const int64_t *dims[3] = { DIMS(3, 19), DIMS(5, 19), DIMS(3, 5) };
    double *vals[3] = { a, b, c };
    glow_dtype kinds[2] = { GLOW_F32, GLOW_F64 };
    for (int t = 0; t < 2; t++) {
        int64_t n = 0;
        double *got = eval(NK_GEMM, kinds[t], 3, ranks, dims, vals, at, 4, 1, 0, &n);
        compare("gemm", got, ref, m * nn, 1e-5);
        free(got);
    }
    /* Batched MatMul [2, 3, 19] x [2, 19, 5] (f32 fast path vs reference). */
    double *x = randoms(2 * m * k), *y = randoms(2 * k * nn), mref[30];
    for (int64_t bt = 0; bt < 2; bt++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++)
                    s += x[(bt * m + i) * k + q] * y[(bt * k + q) * nn + j];
                mref[(bt * m + i) * nn + j] = s;
            }
    int mranks[2] = { 3, 3 };
    const int64_t *mdims[2] = { DIMS(2, 3, 19), DIMS(2, 19, 5) };
    double *mvals[2] = { x, y };
    for (int t = 0; t < 2; t++) {
        int64_t n = 0;
        double *got = eval(NK_MATMUL, kinds[t], 2, mranks, mdims, mvals, NULL, 0, 1, 0, &n);
        compare("matmul", got, mref, 2 * m * nn, 1e-5);
        free(got);
    }
    free(a), free(b), free(c), free(x), free(y);
}

/* The f32 elementwise fast paths agree with the f64 generic loops. */
static void test_elementwise_fast(void)
{
    static const glow_node_kind bin[] = { NK_ADD, NK_SUB, NK_MUL, NK_DIV, NK_MAX, NK_MIN };
    static const glow_node_kind un[] = { NK_RELU, NK_NEG, NK_ABS, NK_EXP, NK_TANH, NK_SIGMOID };
    double *a = randoms(37), *b = randoms(37);
    int ranks[2] = { 1, 1 };
    const int64_t *dims[2] = { DIMS(37), DIMS(37) };
    double *vals[2] = { a, b };
    for (size_t i = 0; i < sizeof bin / sizeof bin[0] + sizeof un / sizeof un[0]; i++) {
        bool is_bin = i < sizeof bin / sizeof bin[0];
        glow_node_kind k = is_bin ? bin[i] : un[i - sizeof bin / sizeof bin[0]];
        int64_t n1 = 0, n2 = 0;
        double *f = eval(k, GLOW_F32, is_bin ? 2 : 1, ranks, dims, vals, NULL, 0, 1, 0, &n1);
        double *g = eval(k, GLOW_F64, is_bin ? 2 : 1, ranks, dims, vals, NULL, 0, 1, 0, &n2);
        CHECK_EQ(n1, 37);
        if (g)
            compare(glow_node_kind_name(k), f, g, 37, 1e-5);
        free(f), free(g);
    }
    free(a), free(b);
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_conv(1, 3, 1, 1, 1);
    test_conv(2, 3, 2, 1, 1);
    test_conv(1, 2, 1, 0, 2);
    test_conv(4, 1, 1, 0, 1);   /* depthwise-style 1x1 grouped */
    test_conv(1, 1, 1, 0, 1);   /* 1x1: reads the input as the column buffer */
    test_conv(1, 3, 3, 2, 1);
    test_conv_transpose();
    test_pools();
    test_gemm_and_matmul();
    test_elementwise_fast();
    glow_module_destroy(M);
    return CHECK_DONE();
}
