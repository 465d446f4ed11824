// test_cpu_kernels_spatial.c - Differential tests of the cpu backend's spatial kernels (the
// "Spatial ops" section of kernels.def): Conv and ConvTranspose over 1-3 spatial dims, the 3-D
// pools (MaxPool with its index result, AveragePool, LpPool) and Resize, on random shapes
// with odd and 1-sized dims, against the interpreter, 1 and 2 threads bit-identical, requiring
// that no instruction fell back and that the row's kernel ran. The "any" rows run the other
// element kinds and must give the interpreter's bits.
#include "cpu/cpu_diff.h"

/* Random window attributes over nsp spatial dims: kernel, strides, dilations, pads (begin and
 * end differ), and input extents the dilated kernel fits in. */
typedef struct {
    int nsp;
    int64_t k[3], s[3], dl[3], p[6], in[3];
} window;

static window rand_window(int nsp, int64_t kmax, int64_t smax, bool pads_below_kernel)
{
    window w = { .nsp = nsp };
    for (int i = 0; i < nsp; i++) {
        w.k[i] = rint_in(1, kmax);
        w.s[i] = rint_in(1, smax);
        w.dl[i] = rint_in(1, 2);
        int64_t pmax = pads_below_kernel ? w.k[i] - 1 : 2;
        w.p[i] = rint_in(0, pmax);
        w.p[nsp + i] = rint_in(0, pmax);
        /* Long rows in 1-D (some past the kernels' row chunks), small volumes in 3-D. */
        int64_t extra = nsp == 1 ? (rnd() % 3 ? 40 : 700) : nsp == 2 ? 9 : 5;
        w.in[i] = rint_in(1, extra) + (w.k[i] - 1) * w.dl[i];
    }
    return w;
}

/* The element kind of the next case's operands. */
static glow_dtype case_dt = GLOW_F32;

/* [N][C] + the window's extents. */
static glow_value window_input(const window *w, int64_t n, int64_t c)
{
    int64_t dims[5] = { n, c };
    for (int i = 0; i < w->nsp; i++)
        dims[2 + i] = w->in[i];
    return input_t("x", case_dt, 2 + w->nsp, dims);
}

/* --- Conv and ConvTranspose --- */

static int conv_nsp;     /* spatial dims of the next case: 1, 2 or 3 */
static bool transposed;

static void case_conv(void)
{
    int nsp = conv_nsp;
    window w = rand_window(nsp, nsp == 3 ? 3 : 4, 3, false);
    /* Up to 6 output channels per group: the strided form computes four at a time. */
    int64_t g = rint_in(1, 3), cg = rint_in(1, 3), mg = rint_in(1, 6);
    if (rnd() % 4 == 0)
        cg = mg = 1, g = rint_in(2, 5);   /* depthwise */
    int64_t nb = rint_in(1, 2);
    glow_value x = window_input(&w, nb, g * cg);
    int64_t wd[5] = { transposed ? g * cg : g * mg, transposed ? mg : cg };
    int64_t op[3];
    for (int i = 0; i < nsp; i++) {
        wd[2 + i] = w.k[i];
        /* output_padding below the stride or the dilation. */
        int64_t lim = w.s[i] > w.dl[i] ? w.s[i] : w.dl[i];
        op[i] = rint_in(0, lim - 1);
        if (transposed)   /* keep every result dim >= 1 */
            w.p[i] = w.p[nsp + i] = 0;
    }
    glow_value ins[3] = { x, cst_t(case_dt, 2 + nsp, wd), cst_t(case_dt, 1, DIMS(g * mg)) };
    glow_attr a[] = { GLOW_AINTS(KERNEL, w.k, nsp), GLOW_AINTS(STRIDES, w.s, nsp),
                      GLOW_AINTS(PADS, w.p, 2 * nsp), GLOW_AINTS(DILATIONS, w.dl, nsp),
                      GLOW_AI(GROUP, g), GLOW_AINTS(OUTPUT_PADDING, op, nsp) };
    if (transposed) {
        output(node(NK_CONV_TRANSPOSE, ins, rnd() % 2 ? 3 : 2, a, 6));
        return;
    }
    glow_value y = node(NK_CONV, ins, rnd() % 2 ? 3 : 2, a, 5);
    if (case_dt == GLOW_F32 && rnd() % 3 == 0)
        y = node(NK_RELU, &y, 1, NULL, 0);   /* fused into the conv */
    output(y);
}

static void test_conv3d(const gk_row *row)
{
    transposed = false;
    for (int t = 0; t < 2 * trials; t++) {
        conv_nsp = t % 2 ? 3 : 1;
        diff(conv_nsp == 1 ? "Conv 1-D" : "Conv 3-D", case_conv, 100 + (uint64_t)t, 1e-5, true);
    }
    check_called(row);
}

static void test_deconv3d(const gk_row *row)
{
    transposed = true;
    for (int t = 0; t < 3 * trials; t++) {
        conv_nsp = 1 + t % 3;
        diff("ConvTranspose", case_conv, 200 + (uint64_t)t, 1e-5, true);
    }
    transposed = false;
    check_called(row);
}

/* The float kinds of the any rows (f32 has its own), and the integer kinds MaxPool takes. */
static const glow_dtype float_dts[] = { GLOW_F16, GLOW_BF16, GLOW_F64 };
static const glow_dtype int_dts[] = { GLOW_U8, GLOW_I8, GLOW_I16, GLOW_U32, GLOW_I64 };

/* Conv or ConvTranspose of every other float kind over 1-3 dims (2-D too: only f32 has a 2-D
 * kernel), bit for bit. */
static void conv_any(const gk_row *row, bool tr)
{
    transposed = tr;
    for (int k = 0; k < 3; k++)
        for (int t = 0; t < trials; t++) {
            case_dt = float_dts[k];
            conv_nsp = 1 + (k + t) % 3;
            diff(glow_dtype_name(case_dt), case_conv, 700 + (uint64_t)(k * 50 + t), 0, true);
        }
    case_dt = GLOW_F32;
    transposed = false;
    check_called(row);
}

static void test_conv3d_any(const gk_row *row) { conv_any(row, false); }
static void test_deconv3d_any(const gk_row *row) { conv_any(row, true); }

/* --- pools --- */

static glow_node_kind pool_kind;
static int pool_nsp;

static void case_pool(void)
{
    int nsp = pool_nsp;
    window w = rand_window(nsp, 3, 3, true);
    glow_value x = window_input(&w, rint_in(1, 2), rint_in(1, 4));
    glow_attr a[8] = { GLOW_AINTS(KERNEL, w.k, nsp), GLOW_AINTS(STRIDES, w.s, nsp),
                       GLOW_AINTS(PADS, w.p, 2 * nsp), GLOW_AINTS(DILATIONS, w.dl, nsp) };
    int na = 4;
    /* ceil_mode as the importer folds it: part of the end pad is not the model's. */
    int64_t cx[3];
    for (int i = 0; i < nsp; i++)
        cx[i] = rint_in(0, w.p[nsp + i]);
    if (pool_kind == NK_MAX_POOL) {
        glow_value y = node_n(NK_MAX_POOL, &x, 1, a, na, 2);
        /* Output 1 (the indices) when 2-D, where output 0 has the 2-D kernel. */
        output(nsp == 2 || rnd() % 2 ? glow_val(y.node, 1) : y);
        return;
    }
    if (pool_kind == NK_LP_POOL) {
        a[na++] = GLOW_AI(P, rint_in(1, 3));
    } else {
        a[na++] = GLOW_AI(COUNT_INCLUDE_PAD, rnd() % 2);
        if (rnd() % 2)
            a[na++] = GLOW_AINTS(CEIL_EXTRA, cx, nsp);
    }
    output(node(pool_kind, &x, 1, a, na));
}

static void pool_trials(const gk_row *row, glow_node_kind kind, int first_nsp)
{
    pool_kind = kind;
    /* At least one trial per rank: 1-D pools are 2-D ones after lowering, so only 3-D ones
     * are sure to reach the N-D kernel. */
    for (int t = 0; t < 2 * trials || t < 3; t++) {
        pool_nsp = 1 + (first_nsp - 1 + t) % 3;
        diff(glow_node_kind_name(kind), case_pool, 300 + kind * 10 + (uint64_t)t, 1e-6, true);
    }
    check_called(row);
}

/* A pool kind over the element kinds dts (1-3 dims each), bit for bit. */
static void pool_any(glow_node_kind kind, const glow_dtype *dts, int ndt)
{
    pool_kind = kind;
    for (int k = 0; k < ndt; k++)
        for (int t = 0; t < trials; t++) {
            case_dt = dts[k];
            pool_nsp = 1 + (k + t) % 3;
            diff(glow_dtype_name(case_dt), case_pool, 800 + kind * 10 + (uint64_t)(k * 50 + t),
                 0, true);
        }
    case_dt = GLOW_F32;
}

static void test_maxpool3d_any(const gk_row *row)
{
    pool_any(NK_MAX_POOL, float_dts, 3);
    pool_any(NK_MAX_POOL, int_dts, 5);
    check_called(row);
}

static void test_avgpool3d_any(const gk_row *row)
{
    pool_any(NK_AVG_POOL, float_dts, 3);
    pool_any(NK_LP_POOL, float_dts, 3);
    check_called(row);
}

static void test_maxpool3d(const gk_row *row) { pool_trials(row, NK_MAX_POOL, 1); }

static void test_avgpool3d(const gk_row *row)
{
    pool_trials(row, NK_AVG_POOL, 1);
    for (int i = 0; i < GK_NROWS; i++)
        called[i] = false;
    pool_trials(row, NK_LP_POOL, 1);
}

/* --- Resize --- */

static const char *const modes[] = { "nearest", "linear", "cubic" };
static const char *const coords[] = { "half_pixel", "asymmetric", "align_corners",
                                      "pytorch_half_pixel", "tf_half_pixel_for_nn",
                                      "half_pixel_symmetric", "tf_crop_and_resize" };
static const char *const nearests[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
                                        "ceil" };
static int resize_mode;

static void case_resize(void)
{
    int r = (int)rint_in(1, 4);
    static float scales[4], roi[8];
    static const float pick[] = { 0.5f, 0.6f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 0.75f };
    int64_t dims[4];
    for (int i = 0; i < r; i++) {
        /* Scale the last two dims (images); earlier ones mostly stay. */
        dims[i] = rint_in(1, i == r - 1 && rnd() % 3 == 0 ? 90 : i >= r - 2 ? 9 : 3);
        scales[i] = i >= r - 2 || rnd() % 4 == 0 ? pick[rnd() % 8] : 1.0f;
        if (floor((double)dims[i] * scales[i]) < 1)
            scales[i] = 1.0f;
        roi[i] = (float)rint_in(0, 3) / 10.0f;
        roi[r + i] = 1.0f - (float)rint_in(0, 3) / 10.0f;
    }
    glow_value x = input_t("x", case_dt, r, dims);
    glow_attr a[] = {
        GLOW_AFLOATS(SCALES, scales, r), GLOW_ASTR(MODE, modes[resize_mode]),
        GLOW_ASTR(COORD_MODE, coords[rnd() % 7]), GLOW_ASTR(NEAREST_MODE, nearests[rnd() % 4]),
        GLOW_AF(CUBIC_COEFF_A, rnd() % 2 ? -0.75 : -0.5), GLOW_AI(EXCLUDE_OUTSIDE, rnd() % 2),
        GLOW_AF(EXTRAPOLATION_VALUE, rnd() % 2 ? 0.0 : 10.0), GLOW_AFLOATS(ROI, roi, 2 * r),
    };
    output(node(NK_RESIZE, &x, 1, a, 8));
}

static void test_resize(const gk_row *row)
{
    for (int m = 0; m < 3; m++) {
        resize_mode = m;
        for (int t = 0; t < 2 * trials; t++)
            diff(modes[m], case_resize, 600 + (uint64_t)(m * 50 + t), 0, true);
    }
    check_called(row);
}

/* Every mode on the other float kinds and on integer kinds (sums truncated), bit for bit. */
static void test_resize_any(const gk_row *row)
{
    for (int k = 0; k < 8; k++)
        for (int m = 0; m < 3; m++) {
            case_dt = k < 3 ? float_dts[k] : int_dts[k - 3];
            resize_mode = m;
            diff(glow_dtype_name(case_dt), case_resize, 900 + (uint64_t)(k * 10 + m), 0, true);
        }
    case_dt = GLOW_F32;
    check_called(row);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "conv3d_f32", test_conv3d },       { "deconv3d_f32", test_deconv3d },
        { "maxpool3d_f32", test_maxpool3d }, { "avgpool3d_f32", test_avgpool3d },
        { "resize_f32", test_resize },       { "conv3d_any", test_conv3d_any },
        { "deconv3d_any", test_deconv3d_any }, { "maxpool3d_any", test_maxpool3d_any },
        { "avgpool3d_any", test_avgpool3d_any }, { "resize_any", test_resize_any },
    };
    set_trials();
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    free_inputs();
    return CHECK_DONE();
}
