// test_lower_pad_conv.c - Lowering of constant Pad (Splat + InsertTensor, Slice for negative
// pads) and of grouped Conv (per-group Slices, Convs and a Concat), and what stays whole.
#include "lower_check.h"

static glow_value pad(const char *name, glow_value x, const int64_t *pads, const char *mode,
                      double value)
{
    int r = glow_value_type(x)->rank;
    return build(NK_PAD, name, &x, 1,
                 ATTRS(GLOW_AINTS(PADS, pads, 2 * r), GLOW_ASTR(MODE, mode),
                       GLOW_AF(VALUE, value)), 3, NULL, 0);
}

static void test_pad_constant(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 2, DIMS(2, 3), -2, 2);
    save("out", pad("p", x, DIMS(1, 0, 2, 1), "constant", 0.5));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %p/fill = Splat() {value=0.5} : f32[5, 4]\n"
               "  %p/insert = InsertTensor(%p/fill, %in0) {starts=[1, 0]} : f32[5, 4]\n"
               "  Save(%p/insert, %out)\n"
               "}\n");
    end();

    /* Negative pads crop first; all-negative pads leave only the slice. */
    begin();
    x = rnd(GLOW_F32, 3, DIMS(3, 4, 5), -2, 2);
    save("mixed", pad("pm", x, DIMS(-1, 2, 0, 1, -2, 1), "constant", -1));
    save("crop", pad("pc", x, DIMS(0, -1, -2, -1, 0, -1), "constant", 0));
    save("zero", pad("pz", x, DIMS(0, 0, 0, 0, 0, 0), "constant", 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_PAD), 0);
    CHECK_EQ(count_kind(NK_SLICE), 2);
    CHECK_EQ(count_kind(NK_INSERT_TENSOR), 1);
    char *text = print_function();
    CHECK_CONTAINS(text, "%pm/crop = Slice(%in0) {starts=[1, 0, 0], ends=[3, 2, 5], "
                         "steps=[1, 1, 1]} : f32[2, 2, 5]\n");
    CHECK_CONTAINS(text, "%pm/insert = InsertTensor(%pm/fill, %pm/crop) {starts=[0, 2, 0]} "
                         ": f32[3, 4, 6]\n");
    CHECK_CONTAINS(text, "%pc/crop = Slice(%in0) {starts=[0, 1, 2], ends=[2, 4, 4], "
                         "steps=[1, 1, 1]} : f32[2, 3, 2]\n");
    CHECK_CONTAINS(text, "Save(%in0, %zero)");
    free(text);
    end();

    /* Integers pad too (the fill converts to the element kind). */
    begin();
    x = rnd(GLOW_I32, 1, DIMS(4), -9, 9);
    save("i32", pad("pi", x, DIMS(2, 3), "constant", 7));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_PAD), 0);
    end();
}

static void test_pad_other_modes(void)
{
    static const char *const modes[] = { "reflect", "edge", "wrap" };
    for (int i = 0; i < 3; i++) {
        begin();
        glow_value x = rnd(GLOW_F32, 2, DIMS(3, 4), -2, 2);
        save("out", pad("p", x, DIMS(1, 2, 1, 0), modes[i], 0));
        CHECK(!LOWER_AND_COMPARE(NULL));
        CHECK_EQ(count_kind(NK_PAD), 1);
        end();
    }
}

static glow_value conv(const char *name, glow_value x, glow_value w, glow_value b, int64_t group,
                       const int64_t *pads)
{
    glow_value ins[3] = { x, w, b };
    const glow_type *wt = glow_value_type(w);
    return build(NK_CONV, name, ins, b.node ? 3 : 2,
                 ATTRS(GLOW_AINTS(KERNEL, wt->dims + 2, 2), GLOW_AINTS(STRIDES, DIMS(1, 2), 2),
                       GLOW_AINTS(PADS, pads, 4), GLOW_AINTS(DILATIONS, DIMS(1, 1), 2),
                       GLOW_AI(GROUP, group)), 5, NULL, 0);
}

static bool keep_ungrouped(const glow_node *n)
{
    return n->kind == NK_CONV && glow_node_int(n, GA_GROUP, 1) == 1;
}

static bool keep_all_conv(const glow_node *n) { return n->kind == NK_CONV; }

static void test_grouped_conv(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 4, DIMS(1, 4, 5, 5), -1, 1);
    glow_value w = rnd(GLOW_F32, 4, DIMS(6, 2, 3, 3), -1, 1);
    glow_value b = rnd(GLOW_F32, 1, DIMS(6), -1, 1);
    save("out", conv("c", x, w, b, 2, DIMS(1, 1, 1, 1)));
    CHECK(LOWER_AND_COMPARE(keep_ungrouped));
    CHECK_TEXT("function main {\n"
               "  %c/input_0 = Slice(%in0) {starts=[0, 0, 0, 0], ends=[1, 2, 5, 5], "
               "steps=[1, 1, 1, 1]} : f32[1, 2, 5, 5]\n"
               "  %c/weight_0 = Slice(%in1) {starts=[0, 0, 0, 0], ends=[3, 2, 3, 3], "
               "steps=[1, 1, 1, 1]} : f32[3, 2, 3, 3]\n"
               "  %c/bias_0 = Slice(%in2) {starts=[0], ends=[3], steps=[1]} : f32[3]\n"
               "  %c/conv_0 = Conv(%c/input_0, %c/weight_0, %c/bias_0) {kernel=[3, 3], "
               "strides=[1, 2], pads=[1, 1, 1, 1], dilations=[1, 1], group=1} "
               ": f32[1, 3, 5, 3]\n"
               "  %c/input_1 = Slice(%in0) {starts=[0, 2, 0, 0], ends=[1, 4, 5, 5], "
               "steps=[1, 1, 1, 1]} : f32[1, 2, 5, 5]\n"
               "  %c/weight_1 = Slice(%in1) {starts=[3, 0, 0, 0], ends=[6, 2, 3, 3], "
               "steps=[1, 1, 1, 1]} : f32[3, 2, 3, 3]\n"
               "  %c/bias_1 = Slice(%in2) {starts=[3], ends=[6], steps=[1]} : f32[3]\n"
               "  %c/conv_1 = Conv(%c/input_1, %c/weight_1, %c/bias_1) {kernel=[3, 3], "
               "strides=[1, 2], pads=[1, 1, 1, 1], dilations=[1, 1], group=1} "
               ": f32[1, 3, 5, 3]\n"
               "  %c/concat = Concat(%c/conv_0, %c/conv_1) {axis=1} : f32[1, 6, 5, 3]\n"
               "  Save(%c/concat, %out)\n"
               "}\n");
    end();

    /* Without bias, more groups, several images. */
    begin();
    x = rnd(GLOW_F32, 4, DIMS(2, 6, 4, 4), -1, 1);
    w = rnd(GLOW_F32, 4, DIMS(3, 2, 2, 2), -1, 1);
    save("out", conv("c3", x, w, no_value(), 3, DIMS(0, 1, 0, 1)));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_CONV), 3);
    CHECK_EQ(count_kind(NK_CONCAT), 1);
    end();
}

/* Depthwise and group-1 convolutions stay whole, and so does a vetoed grouped conv. */
static void test_conv_stays(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 4, DIMS(1, 4, 5, 5), -1, 1);
    glow_value dw = rnd(GLOW_F32, 4, DIMS(8, 1, 3, 3), -1, 1);
    glow_value w1 = rnd(GLOW_F32, 4, DIMS(2, 4, 1, 1), -1, 1);
    glow_value wg = rnd(GLOW_F32, 4, DIMS(4, 2, 1, 1), -1, 1);
    save("dw", conv("dw", x, dw, no_value(), 4, DIMS(1, 1, 1, 1)));
    save("g1", conv("g1", x, w1, no_value(), 1, DIMS(0, 0, 0, 0)));
    CHECK(!LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_CONV), 2);
    save("g2", conv("g2", x, wg, no_value(), 2, DIMS(0, 0, 0, 0)));
    CHECK(!LOWER_AND_COMPARE(keep_all_conv));
    CHECK_EQ(count_kind(NK_CONV), 3);
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_CONV), 4);
    end();
}

/* Lowering through the pipeline order: a padded input feeding a grouped conv and a
 * batch norm, all lowered, numerics preserved. */
static void test_mixed(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 4, DIMS(1, 4, 3, 3), -1, 1);
    glow_value p = pad("pad", x, DIMS(0, 0, 1, 1, 0, 0, 1, 1), "constant", 0);
    glow_value w = rnd(GLOW_F32, 4, DIMS(4, 2, 3, 3), -1, 1);
    glow_value c = conv("conv", p, w, no_value(), 2, DIMS(0, 0, 0, 0));
    glow_value bn[5] = { c, rnd(GLOW_F32, 1, DIMS(4), 0.5, 2), rnd(GLOW_F32, 1, DIMS(4), -1, 1),
                         rnd(GLOW_F32, 1, DIMS(4), -1, 1), rnd(GLOW_F32, 1, DIMS(4), 0.1, 1) };
    glow_value y = build(NK_BATCH_NORM, "bn", bn, 5, ATTRS(GLOW_AF(EPSILON, 1e-5)), 1, NULL, 0);
    save("out", build(NK_CLIP, "relu6", &y, 1, ATTRS(GLOW_AF(MIN, 0), GLOW_AF(MAX, 6)), 2,
                      NULL, 0));
    CHECK(LOWER_AND_COMPARE(keep_ungrouped));
    CHECK_EQ(count_kind(NK_PAD) + count_kind(NK_BATCH_NORM) + count_kind(NK_CLIP), 0);
    CHECK_EQ(count_kind(NK_CONV), 2);
    end();
}

static bool keep_2d_conv(const glow_node *n)
{
    return n->kind == NK_CONV && glow_value_type(n->ins[0])->rank == 4;
}

/* Convolutions and pools over one spatial dim run as their 2-D forms over [N, C, 1, W],
 * with exactly the same results (indices of a MaxPool included). */
static void test_spatial_1d(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 3, DIMS(2, 4, 11), -1, 1);
    glow_value w = rnd(GLOW_F32, 3, DIMS(6, 2, 3), -1, 1);
    glow_value b = rnd(GLOW_F32, 1, DIMS(6), -1, 1);
    glow_value cin[3] = { x, w, b };
    save("conv", build(NK_CONV, "c", cin, 3,
                       ATTRS(GLOW_AINTS(KERNEL, DIMS(3), 1), GLOW_AINTS(STRIDES, DIMS(2), 1),
                             GLOW_AINTS(PADS, DIMS(2, 1), 2), GLOW_AINTS(DILATIONS, DIMS(2), 1),
                             GLOW_AI(GROUP, 2)), 5, NULL, 0));
    CHECK(lower_and_compare(keep_2d_conv, 0, __LINE__));
    CHECK_TEXT("function main {\n"
               "  %c/input_2d = Reshape(%in0) : f32[2, 4, 1, 11]\n"
               "  %c/weight_2d = Reshape(%in1) : f32[6, 2, 1, 3]\n"
               "  %c/2d = Conv(%c/input_2d, %c/weight_2d, %in2) {kernel=[1, 3], "
               "strides=[1, 2], pads=[0, 2, 0, 1], dilations=[1, 2], group=2} "
               ": f32[2, 6, 1, 5]\n"
               "  %c/result_1d = Reshape(%c/2d) : f32[2, 6, 5]\n"
               "  Save(%c/result_1d, %conv)\n"
               "}\n");
    end();

    begin();
    x = rnd(GLOW_F32, 3, DIMS(1, 3, 10), -1, 1);
    glow_attr pool[] = { GLOW_AINTS(KERNEL, DIMS(3), 1), GLOW_AINTS(STRIDES, DIMS(2), 1),
                         GLOW_AINTS(PADS, DIMS(1, 1), 2), GLOW_AINTS(DILATIONS, DIMS(1), 1),
                         GLOW_AI(COUNT_INCLUDE_PAD, 1) };
    glow_type mp[2] = { glow_type_make(GLOW_F32, 3, DIMS(1, 3, 5)),
                        glow_type_make(GLOW_I64, 3, DIMS(1, 3, 5)) };
    glow_value m = build(NK_MAX_POOL, "mp", &x, 1, pool, 4, mp, 2);
    save("max", m);
    save("idx", glow_val(m.node, 1));
    save("avg", build(NK_AVG_POOL, "ap", &x, 1, pool, 5, NULL, 0));
    glow_attr lp[] = { pool[0], pool[1], pool[2], pool[3], GLOW_AI(P, 2) };
    save("lp", build(NK_LP_POOL, "lp", &x, 1, lp, 5, NULL, 0));
    glow_value dw = rnd(GLOW_F32, 3, DIMS(3, 2, 4), -1, 1);
    glow_value din[2] = { x, dw };
    glow_type dt = glow_type_make(GLOW_F32, 3, DIMS(1, 2, 22));
    save("deconv", build(NK_CONV_TRANSPOSE, "dc", din, 2,
                         ATTRS(GLOW_AINTS(KERNEL, DIMS(4), 1), GLOW_AINTS(STRIDES, DIMS(2), 1),
                               GLOW_AINTS(PADS, DIMS(0, 0), 2),
                               GLOW_AINTS(DILATIONS, DIMS(1), 1), GLOW_AI(GROUP, 1),
                               GLOW_AINTS(OUTPUT_PADDING, DIMS(0), 1)), 6, &dt, 1));
    CHECK(lower_and_compare(NULL, 0, __LINE__));
    CHECK_EQ(count_kind(NK_MAX_POOL) + count_kind(NK_AVG_POOL) + count_kind(NK_LP_POOL) +
                 count_kind(NK_CONV_TRANSPOSE), 4);
    for (glow_node *n = F->nodes.first; n; n = n->next)
        if (n->kind != NK_RESHAPE && n->kind != NK_SAVE)
            CHECK_EQ(glow_value_type(n->ins[0])->rank, 4);
    end();
}

static glow_value deconv(const char *name, glow_value x, glow_value w, glow_value b,
                         int64_t s, int64_t pad)
{
    glow_value ins[3] = { x, w, b };
    const glow_type *xt = glow_value_type(x), *wt = glow_value_type(w);
    int64_t k = wt->dims[2];
    glow_type y = glow_type_make(GLOW_F32, 4,
                                 DIMS(xt->dims[0], wt->dims[1], s * (xt->dims[2] - 1) + k - 2 * pad,
                                      s * (xt->dims[3] - 1) + k - 2 * pad));
    return build(NK_CONV_TRANSPOSE, name, ins, b.node ? 3 : 2,
                 ATTRS(GLOW_AINTS(KERNEL, wt->dims + 2, 2), GLOW_AINTS(STRIDES, DIMS(s, s), 2),
                       GLOW_AINTS(PADS, DIMS(pad, pad, pad, pad), 4),
                       GLOW_AINTS(DILATIONS, DIMS(1, 1), 2), GLOW_AI(GROUP, 1),
                       GLOW_AINTS(OUTPUT_PADDING, DIMS(0, 0), 2)), 6, &y, 1);
}

/* A ConvTranspose whose kernel is its stride becomes a 1x1 Conv and a DepthToSpace; one with
 * overlapping taps or pads stays. */
static void test_deconv_as_conv(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 4, DIMS(2, 5, 3, 4), -1, 1);
    save("up2", deconv("up2", x, rnd(GLOW_F32, 4, DIMS(5, 3, 2, 2), -1, 1),
                       rnd(GLOW_F32, 1, DIMS(3), -1, 1), 2, 0));
    save("up3", deconv("up3", x, rnd(GLOW_F32, 4, DIMS(5, 2, 3, 3), -1, 1), no_value(), 3, 0));
    save("over", deconv("over", x, rnd(GLOW_F32, 4, DIMS(5, 2, 3, 3), -1, 1), no_value(), 2, 0));
    save("pad", deconv("pad", x, rnd(GLOW_F32, 4, DIMS(5, 2, 2, 2), -1, 1), no_value(), 2, 1));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_DEPTH_TO_SPACE), 2);
    CHECK_EQ(count_kind(NK_CONV), 2);
    CHECK_EQ(count_kind(NK_CONV_TRANSPOSE), 2);
    end();
}

int main(void)
{
    test_pad_constant();
    test_pad_other_modes();
    test_grouped_conv();
    test_conv_stays();
    test_mixed();
    test_spatial_1d();
    test_deconv_as_conv();
    return CHECK_DONE();
}
