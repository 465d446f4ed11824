// test_lower_norm.c - Lowering of the normalizations: golden graphs for BatchNorm and
// LayerNorm, numerics against the original nodes for every norm kind.
#include "lower_check.h"

static void test_batch_norm(void)
{
    begin();
    glow_value ins[5] = {
        rnd(GLOW_F32, 4, DIMS(2, 3, 2, 2), -2, 2), rnd(GLOW_F32, 1, DIMS(3), 0.5, 2),
        rnd(GLOW_F32, 1, DIMS(3), -1, 1), rnd(GLOW_F32, 1, DIMS(3), -1, 1),
        rnd(GLOW_F32, 1, DIMS(3), 0.1, 2),
    };
    save("out", build(NK_BATCH_NORM, "bn", ins, 5, ATTRS(GLOW_AF(EPSILON, 1e-3)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %bn/var_eps_c = Splat() {value=0.001} : f32[3]\n"
               "  %bn/var_eps = Add(%in4, %bn/var_eps_c) : f32[3]\n"
               "  %bn/std = Sqrt(%bn/var_eps) : f32[3]\n"
               "  %bn/s = Div(%in1, %bn/std) : f32[3]\n"
               "  %bn/mean_s = Mul(%in3, %bn/s) : f32[3]\n"
               "  %bn/t = Sub(%in2, %bn/mean_s) : f32[3]\n"
               "  %bn/s_shape = Reshape(%bn/s) : f32[1, 3, 1, 1]\n"
               "  %bn/s_bcast = Broadcast(%bn/s_shape) : f32[2, 3, 2, 2]\n"
               "  %bn/mul = Mul(%in0, %bn/s_bcast) : f32[2, 3, 2, 2]\n"
               "  %bn/t_shape = Reshape(%bn/t) : f32[1, 3, 1, 1]\n"
               "  %bn/t_bcast = Broadcast(%bn/t_shape) : f32[2, 3, 2, 2]\n"
               "  %bn/add = Add(%bn/mul, %bn/t_bcast) : f32[2, 3, 2, 2]\n"
               "  Save(%bn/add, %out)\n"
               "}\n");
    end();

    /* Rank 2 (after a flatten) works the same way. */
    begin();
    glow_value ins2[5] = {
        rnd(GLOW_F32, 2, DIMS(4, 5), -2, 2), rnd(GLOW_F32, 1, DIMS(5), 0.5, 2),
        rnd(GLOW_F32, 1, DIMS(5), -1, 1), rnd(GLOW_F32, 1, DIMS(5), -1, 1),
        rnd(GLOW_F32, 1, DIMS(5), 0.1, 2),
    };
    save("out", build(NK_BATCH_NORM, "bn2", ins2, 5, ATTRS(GLOW_AF(EPSILON, 1e-5)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_BATCH_NORM), 0);
    end();
}

/* LayerNorm with all three results in use. */
static void test_layer_norm(void)
{
    begin();
    glow_value ins[3] = { rnd(GLOW_F32, 3, DIMS(2, 3, 4), -2, 2),
                          rnd(GLOW_F32, 2, DIMS(3, 4), 0.5, 2),
                          rnd(GLOW_F32, 2, DIMS(3, 4), -1, 1) };
    glow_value y = build(NK_LAYER_NORM, "ln", ins, 3,
                         ATTRS(GLOW_AI(AXIS, 1), GLOW_AF(EPSILON, 1e-5)), 2, NULL, 0);
    save("y", y);
    save("mean", glow_val(y.node, 1));
    save("inv", glow_val(y.node, 2));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %ln/mean = ReduceMean(%in0) {axes=[1, 2], keepdims=1} : f32[2, 1, 1]\n"
               "  %ln/mean_bcast = Broadcast(%ln/mean) : f32[2, 3, 4]\n"
               "  %ln/centered = Sub(%in0, %ln/mean_bcast) : f32[2, 3, 4]\n"
               "  %ln/sq = Mul(%ln/centered, %ln/centered) : f32[2, 3, 4]\n"
               "  %ln/var = ReduceMean(%ln/sq) {axes=[1, 2], keepdims=1} : f32[2, 1, 1]\n"
               "  %ln/var_eps_c = Splat() {value=1e-05} : f32[2, 1, 1]\n"
               "  %ln/var_eps = Add(%ln/var, %ln/var_eps_c) : f32[2, 1, 1]\n"
               "  %ln/std = Sqrt(%ln/var_eps) : f32[2, 1, 1]\n"
               "  %ln/one = Splat() {value=1} : f32[2, 1, 1]\n"
               "  %ln/inv_std = Div(%ln/one, %ln/std) : f32[2, 1, 1]\n"
               "  %ln/inv_std_bcast = Broadcast(%ln/inv_std) : f32[2, 3, 4]\n"
               "  %ln/norm = Mul(%ln/centered, %ln/inv_std_bcast) : f32[2, 3, 4]\n"
               "  %ln/scale_shape = Reshape(%in1) : f32[1, 3, 4]\n"
               "  %ln/scale_bcast = Broadcast(%ln/scale_shape) : f32[2, 3, 4]\n"
               "  %ln/scaled = Mul(%ln/norm, %ln/scale_bcast) : f32[2, 3, 4]\n"
               "  %ln/bias_shape = Reshape(%in2) : f32[1, 3, 4]\n"
               "  %ln/bias_bcast = Broadcast(%ln/bias_shape) : f32[2, 3, 4]\n"
               "  %ln/biased = Add(%ln/scaled, %ln/bias_bcast) : f32[2, 3, 4]\n"
               "  Save(%ln/biased, %y)\n"
               "  Save(%ln/mean, %mean)\n"
               "  Save(%ln/inv_std, %inv)\n"
               "}\n");
    end();

    /* Only the first result, no bias, last axis. */
    begin();
    glow_value ins2[2] = { rnd(GLOW_F32, 2, DIMS(3, 8), -2, 2),
                           rnd(GLOW_F32, 1, DIMS(8), 0.5, 2) };
    glow_value y2 = build(NK_LAYER_NORM, "ln2", ins2, 2,
                          ATTRS(GLOW_AI(AXIS, 1), GLOW_AF(EPSILON, 1e-5)), 2, NULL, 1);
    save("y", y2);
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_LAYER_NORM), 0);
    CHECK_EQ(count_kind(NK_ADD), 1);   /* only epsilon: no bias */
    end();
}

static void test_instance_norm(void)
{
    begin();
    glow_value ins[3] = { rnd(GLOW_F32, 4, DIMS(2, 3, 3, 4), -2, 2),
                          rnd(GLOW_F32, 1, DIMS(3), 0.5, 2), rnd(GLOW_F32, 1, DIMS(3), -1, 1) };
    save("out", build(NK_INSTANCE_NORM, "in", ins, 3, ATTRS(GLOW_AF(EPSILON, 1e-5)), 1, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_INSTANCE_NORM), 0);
    CHECK_EQ(count_kind(NK_REDUCE_MEAN), 2);
    end();
}

static bool keep_ref(const glow_node *n) { return strcmp(n->name, "ref") == 0; }

/* Per-channel scale (opset 21) against the original; per-group scale (opset 18) against a
 * per-channel GroupNorm on repeated parameters, both evaluated directly and lowered. */
static void test_group_norm(void)
{
    begin();
    glow_value ins[3] = { rnd(GLOW_F32, 4, DIMS(2, 6, 2, 3), -2, 2),
                          rnd(GLOW_F32, 1, DIMS(6), 0.5, 2), rnd(GLOW_F32, 1, DIMS(6), -1, 1) };
    glow_attr ga[2] = { GLOW_AF(EPSILON, 1e-5), GLOW_AI(NUM_GROUPS, 2) };
    save("out", build(NK_GROUP_NORM, "gn", ins, 3, ga, 2, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_GROUP_NORM), 0);
    char *text = print_function();
    CHECK_CONTAINS(text, "%gn/grouped = Reshape(%in0) : f32[2, 2, 18]");
    CHECK_CONTAINS(text, "%gn/ungrouped = Reshape(%gn/norm) : f32[2, 6, 2, 3]");
    free(text);

    /* Same input; scale and bias per group, repeated by hand for the reference. */
    glow_value sg = rnd(GLOW_F32, 1, DIMS(2), 0.5, 2), bg = rnd(GLOW_F32, 1, DIMS(2), -1, 1);
    glow_value sc = rnd(GLOW_F32, 1, DIMS(6), 0, 1), bc = rnd(GLOW_F32, 1, DIMS(6), 0, 1);
    for (int c = 0; c < 6; c++) {
        ((float *)sc.node->payload.data)[c] = ((float *)sg.node->payload.data)[c / 3];
        ((float *)bc.node->payload.data)[c] = ((float *)bg.node->payload.data)[c / 3];
    }
    glow_value gi[3] = { ins[0], sg, bg }, ri[3] = { ins[0], sc, bc };
    save("group", build(NK_GROUP_NORM, "gng", gi, 3, ga, 2, NULL, 0));
    save("ref", build(NK_GROUP_NORM, "ref", ri, 3, ga, 2, NULL, 0));
    /* The evaluator takes per-group [G] parameters as inference does. */
    glow_tensor direct[3];
    int got = eval_function(direct, 3);
    CHECK_EQ(got, 3);
    for (int i = 0; got == 3 && i < 72; i++) {
        float a = ((float *)direct[1].data)[i], b = ((float *)direct[2].data)[i];
        CHECK_NEAR(a, b, 1e-6 * (fabsf(b) > 1 ? fabsf(b) : 1));
    }
    for (int i = 0; i < got; i++)
        glow_tensor_free(&direct[i]);
    CHECK(glow_lower(F, keep_ref, &D) == GLOW_OK);
    CHECK(glow_function_verify(F, &D) == GLOW_OK);
    CHECK_EQ(count_kind(NK_GROUP_NORM), 1);
    text = print_function();
    CHECK_CONTAINS(text, "%gng/scale_group = Reshape(%in3) : f32[2, 1]");
    CHECK_CONTAINS(text, "%gng/scale_repeat = Broadcast(%gng/scale_group) : f32[2, 3]");
    CHECK_CONTAINS(text, "%gng/scale_channel = Reshape(%gng/scale_repeat) : f32[6]");
    free(text);
    glow_tensor outs[3];
    CHECK_EQ(eval_function(outs, 3), 3);
    for (int i = 0; i < 72; i++) {
        float a = ((float *)outs[1].data)[i], b = ((float *)outs[2].data)[i];
        CHECK_NEAR(a, b, 1e-5 * (fabsf(b) > 1 ? fabsf(b) : 1));
    }
    for (int i = 0; i < 3; i++)
        glow_tensor_free(&outs[i]);
    end();
}

static void test_rms_norm(void)
{
    begin();
    glow_value ins[2] = { rnd(GLOW_F32, 3, DIMS(2, 3, 5), -2, 2),
                          rnd(GLOW_F32, 1, DIMS(5), 0.5, 2) };
    save("out", build(NK_RMS_NORM, "rms", ins, 2,
                      ATTRS(GLOW_AI(AXIS, 2), GLOW_AF(EPSILON, 1e-6)), 2, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_RMS_NORM), 0);
    end();
}

static void test_lp_norm(void)
{
    for (int p = 1; p <= 2; p++) {
        begin();
        glow_value x = rnd(GLOW_F32, 3, DIMS(2, 4, 3), -2, 2);
        /* One all-zero line along axis 1: it stays zero instead of 0/0 = NaN. */
        for (int k = 0; k < 4; k++)
            ((float *)x.node->payload.data)[k * 3 + 1] = 0;
        save("out", build(NK_LP_NORM, "lp", &x, 1, ATTRS(GLOW_AI(AXIS, 1), GLOW_AI(P, p)), 2,
                          NULL, 0));
        CHECK(LOWER_AND_COMPARE(NULL));
        CHECK_EQ(count_kind(NK_LP_NORM), 0);
        CHECK_EQ(count_kind(NK_REDUCE_SUM), 1);
        CHECK_EQ(count_kind(NK_ABS), p == 1);
        CHECK_EQ(count_kind(NK_SQRT), p == 2);
        glow_tensor out[1];
        int got = eval_function(out, 1);
        CHECK_EQ(got, 1);
        for (int k = 0; got == 1 && k < 4; k++)
            CHECK_EQ(((float *)out[0].data)[k * 3 + 1], 0.0f);
        if (got == 1)
            glow_tensor_free(&out[0]);
        end();
    }
}

/* f64 and f16 lower too (f16 compared with a tolerance of its precision). */
static void test_other_floats(void)
{
    begin();
    glow_value ins[3] = { rnd(GLOW_F64, 2, DIMS(3, 8), -2, 2),
                          rnd(GLOW_F64, 1, DIMS(8), 0.5, 2), rnd(GLOW_F64, 1, DIMS(8), -1, 1) };
    save("y", build(NK_LAYER_NORM, "ln", ins, 3, ATTRS(GLOW_AI(AXIS, 1), GLOW_AF(EPSILON, 1e-5)),
                    2, NULL, 1));
    CHECK(LOWER_AND_COMPARE(NULL));
    end();

    begin();
    glow_value h[5] = {
        rnd(GLOW_F16, 4, DIMS(1, 2, 2, 2), -2, 2), rnd(GLOW_F16, 1, DIMS(2), 0.5, 2),
        rnd(GLOW_F16, 1, DIMS(2), -1, 1), rnd(GLOW_F16, 1, DIMS(2), -1, 1),
        rnd(GLOW_F16, 1, DIMS(2), 0.5, 2),
    };
    save("out", build(NK_BATCH_NORM, "bn", h, 5, ATTRS(GLOW_AF(EPSILON, 1e-5)), 1, NULL, 0));
    CHECK(lower_and_compare(NULL, 1e-2, __LINE__));
    end();
}

int main(void)
{
    test_batch_norm();
    test_layer_norm();
    test_instance_norm();
    test_group_norm();
    test_rms_norm();
    test_lp_norm();
    test_other_floats();
    return CHECK_DONE();
}
