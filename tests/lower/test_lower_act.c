// test_lower_act.c - Lowering of Softmax, LogSoftmax, Clip and the piecewise-linear
// activations: golden graphs, numerics against the original nodes, and what must not fire.
#include "lower_check.h"

static void test_softmax(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 2, DIMS(3, 5), -4, 4);
    save("out", build(NK_SOFTMAX, "sm", &x, 1, ATTRS(GLOW_AI(AXIS, 1)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %sm/max = ReduceMax(%in0) {axes=[1], keepdims=1} : f32[3, 1]\n"
               "  %sm/max_bcast = Broadcast(%sm/max) : f32[3, 5]\n"
               "  %sm/shifted = Sub(%in0, %sm/max_bcast) : f32[3, 5]\n"
               "  %sm/exp = Exp(%sm/shifted) : f32[3, 5]\n"
               "  %sm/sum = ReduceSum(%sm/exp) {axes=[1], keepdims=1} : f32[3, 1]\n"
               "  %sm/sum_bcast = Broadcast(%sm/sum) : f32[3, 5]\n"
               "  %sm/div = Div(%sm/exp, %sm/sum_bcast) : f32[3, 5]\n"
               "  Save(%sm/div, %out)\n"
               "}\n");
    end();

    begin();
    x = rnd(GLOW_F32, 3, DIMS(2, 4, 3), -30, 30);
    save("out", build(NK_LOG_SOFTMAX, "ls", &x, 1, ATTRS(GLOW_AI(AXIS, 1)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %ls/max = ReduceMax(%in0) {axes=[1], keepdims=1} : f32[2, 1, 3]\n"
               "  %ls/max_bcast = Broadcast(%ls/max) : f32[2, 4, 3]\n"
               "  %ls/shifted = Sub(%in0, %ls/max_bcast) : f32[2, 4, 3]\n"
               "  %ls/exp = Exp(%ls/shifted) : f32[2, 4, 3]\n"
               "  %ls/sum = ReduceSum(%ls/exp) {axes=[1], keepdims=1} : f32[2, 1, 3]\n"
               "  %ls/log_sum = Log(%ls/sum) : f32[2, 1, 3]\n"
               "  %ls/log_sum_bcast = Broadcast(%ls/log_sum) : f32[2, 4, 3]\n"
               "  %ls/sub = Sub(%ls/shifted, %ls/log_sum_bcast) : f32[2, 4, 3]\n"
               "  Save(%ls/sub, %out)\n"
               "}\n");
    end();

    /* Softmax over the first axis of a rank-1 tensor. */
    begin();
    x = rnd(GLOW_F32, 1, DIMS(7), -4, 4);
    save("out", build(NK_SOFTMAX, "sm1", &x, 1, ATTRS(GLOW_AI(AXIS, 0)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    end();
}

static glow_value clip(const char *name, glow_value x, double lo, double hi)
{
    return build(NK_CLIP, name, &x, 1, ATTRS(GLOW_AF(MIN, lo), GLOW_AF(MAX, hi)), 2, NULL, 0);
}

static void test_clip(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 2, DIMS(4, 4), -3, 3);
    save("both", clip("c", x, -1, 1.5));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %c/min_c = Splat() {value=-1} : f32[4, 4]\n"
               "  %c/min = Max(%in0, %c/min_c) : f32[4, 4]\n"
               "  %c/max_c = Splat() {value=1.5} : f32[4, 4]\n"
               "  %c/max = Min(%c/min, %c/max_c) : f32[4, 4]\n"
               "  Save(%c/max, %both)\n"
               "}\n");
    end();

    begin();
    x = rnd(GLOW_F32, 1, DIMS(16), -3, 3);
    save("relu6", clip("r6", x, 0, 6));
    save("low", clip("lo", x, -1, INFINITY));
    save("high", clip("hi", x, -INFINITY, 0.5));
    save("none", clip("none", x, -INFINITY, INFINITY));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_CLIP), 0);
    CHECK_EQ(count_kind(NK_MAX), 2);
    CHECK_EQ(count_kind(NK_MIN), 2);
    end();

    /* min > max gives max everywhere (NumPy's clip, which ONNX follows). The reference
     * evaluator's Clip gives min there, so this is checked against the expected values. */
    begin();
    x = rnd(GLOW_F32, 1, DIMS(16), -3, 3);
    save("crossed", clip("x", x, 2, 1));
    CHECK(glow_lower(F, NULL, &D) == GLOW_OK);
    glow_tensor out[1];
    CHECK_EQ(eval_function(out, 1), 1);
    for (int i = 0; i < 16; i++)
        CHECK_EQ(((float *)out[0].data)[i], 1.0f);
    glow_tensor_free(&out[0]);
    end();

    /* Integers: a bound at the kind's limit clips nothing and is left out. */
    begin();
    x = rnd(GLOW_I8, 1, DIMS(16), -100, 100);
    save("i8", clip("ci", x, -128, 20));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_MAX), 0);
    CHECK_EQ(count_kind(NK_MIN), 1);
    end();

    /* A NaN bound stays whole. */
    begin();
    x = rnd(GLOW_F32, 1, DIMS(4), -3, 3);
    save("nan", clip("cn", x, NAN, 1));
    CHECK(!LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_CLIP), 1);
    end();
}

static void test_leaky_prelu(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 2, DIMS(3, 6), -3, 3);
    save("small", build(NK_LEAKY_RELU, "lr", &x, 1, ATTRS(GLOW_AF(ALPHA, 0.1)), 1, NULL, 0));
    save("big", build(NK_LEAKY_RELU, "lr2", &x, 1, ATTRS(GLOW_AF(ALPHA, 2.5)), 1, NULL, 0));
    save("neg", build(NK_LEAKY_RELU, "lr3", &x, 1, ATTRS(GLOW_AF(ALPHA, -0.5)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_LEAKY_RELU), 0);
    CHECK_EQ(count_kind(NK_MAX), 2);
    CHECK_EQ(count_kind(NK_MIN), 1);
    char *text = print_function();
    CHECK_CONTAINS(text, "  %lr/alpha_c = Splat() {value=0.1} : f32[3, 6]\n"
                         "  %lr/alpha = Mul(%in0, %lr/alpha_c) : f32[3, 6]\n"
                         "  %lr/select = Max(%in0, %lr/alpha) : f32[3, 6]\n");
    free(text);
    end();

    begin();
    x = rnd(GLOW_F32, 2, DIMS(3, 6), -3, 3);
    glow_value ins[2] = { x, rnd(GLOW_F32, 2, DIMS(3, 6), -1, 1) };
    save("out", build(NK_PRELU, "pr", ins, 2, NULL, 0, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %pr/zero = Splat() {value=0} : f32[3, 6]\n"
               "  %pr/pos = Max(%in0, %pr/zero) : f32[3, 6]\n"
               "  %pr/neg = Min(%in0, %pr/zero) : f32[3, 6]\n"
               "  %pr/slope_neg = Mul(%in1, %pr/neg) : f32[3, 6]\n"
               "  %pr/add = Add(%pr/pos, %pr/slope_neg) : f32[3, 6]\n"
               "  Save(%pr/add, %out)\n"
               "}\n");
    end();
}

static bool keep_hard_sigmoid(const glow_node *n) { return n->kind == NK_HARD_SIGMOID; }

static void test_hard(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 1, DIMS(12), -6, 6);
    save("out", build(NK_HARD_SIGMOID, "hs", &x, 1,
                      ATTRS(GLOW_AF(ALPHA, 0.25), GLOW_AF(BETA, 0.5)), 2, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %hs/alpha_c = Splat() {value=0.25} : f32[12]\n"
               "  %hs/alpha = Mul(%in0, %hs/alpha_c) : f32[12]\n"
               "  %hs/beta_c = Splat() {value=0.5} : f32[12]\n"
               "  %hs/beta = Add(%hs/alpha, %hs/beta_c) : f32[12]\n"
               "  %hs/low_c = Splat() {value=0} : f32[12]\n"
               "  %hs/low = Max(%hs/beta, %hs/low_c) : f32[12]\n"
               "  %hs/high_c = Splat() {value=1} : f32[12]\n"
               "  %hs/high = Min(%hs/low, %hs/high_c) : f32[12]\n"
               "  Save(%hs/high, %out)\n"
               "}\n");
    end();

    /* HardSwish lowers in two passes: to x * HardSigmoid(x), then the HardSigmoid. */
    begin();
    x = rnd(GLOW_F32, 2, DIMS(4, 5), -5, 5);
    save("out", build(NK_HARD_SWISH, "hw", &x, 1, NULL, 0, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_HARD_SWISH), 0);
    CHECK_EQ(count_kind(NK_HARD_SIGMOID), 0);
    CHECK_EQ(count_kind(NK_MUL), 2);
    end();

    /* A backend that runs HardSigmoid keeps the inner node. */
    begin();
    x = rnd(GLOW_F32, 2, DIMS(4, 5), -5, 5);
    save("out", build(NK_HARD_SWISH, "hw", &x, 1, NULL, 0, NULL, 0));
    CHECK(LOWER_AND_COMPARE(keep_hard_sigmoid));
    CHECK_TEXT("function main {\n"
               "  %hw/hard_sigmoid = HardSigmoid(%in0) {alpha=0.16666666666666666, beta=0.5} "
               ": f32[4, 5]\n"
               "  %hw/mul = Mul(%in0, %hw/hard_sigmoid) : f32[4, 5]\n"
               "  Save(%hw/mul, %out)\n"
               "}\n");
    end();
}

/* Lowered activations chain: each replacement lands where its node was. */
static void test_chain(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 2, DIMS(2, 8), -4, 4);
    glow_value a = clip("c", x, -2, 2);
    glow_value b = build(NK_LEAKY_RELU, "lr", &a, 1, ATTRS(GLOW_AF(ALPHA, 0.2)), 1, NULL, 0);
    glow_value c = build(NK_LOG_SOFTMAX, "ls", &b, 1, ATTRS(GLOW_AI(AXIS, 1)), 1, NULL, 0);
    glow_value e = build(NK_HARD_SWISH, "hw", &c, 1, NULL, 0, NULL, 0);
    save("out", e);
    save("mid", b);
    CHECK(LOWER_AND_COMPARE(NULL));
    for (glow_node *n = F->nodes.first; n; n = n->next)
        CHECK(!glow_lower_has_rule(n->kind));
    end();
}

int main(void)
{
    test_softmax();
    test_clip();
    test_leaky_prelu();
    test_hard();
    test_chain();
    return CHECK_DONE();
}
