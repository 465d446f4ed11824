// test_lower_linear.c - Lowering of Gemm and FullyConnected: golden graphs, numerics against
// the original nodes, and the cases that must stay whole.
#include "lower_check.h"

static bool keep_gemm(const glow_node *n) { return n->kind == NK_GEMM; }

/* Gemm(A^T, B^T) * alpha + C * beta, with one golden graph. */
static void test_gemm_full(void)
{
    begin();
    glow_value a = rnd(GLOW_F32, 2, DIMS(4, 3), -2, 2);
    glow_value b = rnd(GLOW_F32, 2, DIMS(5, 4), -2, 2);
    glow_value c = rnd(GLOW_F32, 2, DIMS(3, 5), -2, 2);
    glow_value ins[3] = { a, b, c };
    glow_value y = build(NK_GEMM, "fc1", ins, 3,
                         ATTRS(GLOW_AF(ALPHA, 0.5), GLOW_AF(BETA, 2.0), GLOW_AI(TRANS_A, 1),
                               GLOW_AI(TRANS_B, 1)), 4, NULL, 0);
    save("out", y);
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %fc1/transA = Transpose(%in0) {perm=[1, 0]} : f32[3, 4]\n"
               "  %fc1/transB = Transpose(%in1) {perm=[1, 0]} : f32[4, 5]\n"
               "  %fc1/matmul = MatMul(%fc1/transA, %fc1/transB) : f32[3, 5]\n"
               "  %fc1/alpha_c = Splat() {value=0.5} : f32[3, 5]\n"
               "  %fc1/alpha = Mul(%fc1/matmul, %fc1/alpha_c) : f32[3, 5]\n"
               "  %fc1/beta_c = Splat() {value=2} : f32[3, 5]\n"
               "  %fc1/beta = Mul(%in2, %fc1/beta_c) : f32[3, 5]\n"
               "  %fc1/add = Add(%fc1/alpha, %fc1/beta) : f32[3, 5]\n"
               "  Save(%fc1/add, %out)\n"
               "}\n");
    end();
}

/* Defaults: no transposes, alpha 1 and beta 1 add C directly; no C gives a bare MatMul;
 * beta 0 drops C. */
static void test_gemm_variants(void)
{
    begin();
    glow_value a = rnd(GLOW_F32, 2, DIMS(2, 3), -2, 2);
    glow_value b = rnd(GLOW_F32, 2, DIMS(3, 4), -2, 2);
    glow_value c = rnd(GLOW_F32, 2, DIMS(2, 4), -2, 2);
    glow_value ins[3] = { a, b, c };
    save("plain", build(NK_GEMM, "g1", ins, 3,
                        ATTRS(GLOW_AF(ALPHA, 1.0), GLOW_AF(BETA, 1.0), GLOW_AI(TRANS_A, 0),
                              GLOW_AI(TRANS_B, 0)), 4, NULL, 0));
    save("noc", build(NK_GEMM, "g2", ins, 2,
                      ATTRS(GLOW_AF(ALPHA, -1.5), GLOW_AF(BETA, 1.0), GLOW_AI(TRANS_A, 0),
                            GLOW_AI(TRANS_B, 0)), 4, NULL, 0));
    save("beta0", build(NK_GEMM, "g3", ins, 3,
                        ATTRS(GLOW_AF(ALPHA, 1.0), GLOW_AF(BETA, 0.0), GLOW_AI(TRANS_A, 0),
                              GLOW_AI(TRANS_B, 0)), 4, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_EQ(count_kind(NK_GEMM), 0);
    CHECK_EQ(count_kind(NK_MATMUL), 3);
    CHECK_EQ(count_kind(NK_TRANSPOSE), 0);
    CHECK_EQ(count_kind(NK_ADD), 1);
    CHECK_EQ(count_kind(NK_MUL), 1);
    end();
}

/* Integer Gemm lowers only when no scaling is involved. */
static void test_gemm_int(void)
{
    begin();
    glow_value a = rnd(GLOW_I32, 2, DIMS(2, 3), -5, 5);
    glow_value b = rnd(GLOW_I32, 2, DIMS(3, 4), -5, 5);
    glow_value c = rnd(GLOW_I32, 2, DIMS(2, 4), -5, 5);
    glow_value ins[3] = { a, b, c };
    save("unit", build(NK_GEMM, "gi", ins, 3,
                       ATTRS(GLOW_AF(ALPHA, 1.0), GLOW_AF(BETA, 1.0), GLOW_AI(TRANS_A, 0),
                             GLOW_AI(TRANS_B, 0)), 4, NULL, 0));
    save("scaled", build(NK_GEMM, "gs", ins, 3,
                         ATTRS(GLOW_AF(ALPHA, 2.0), GLOW_AF(BETA, 1.0), GLOW_AI(TRANS_A, 0),
                               GLOW_AI(TRANS_B, 0)), 4, NULL, 0));
    glow_diag_clear(&D);
    CHECK(glow_lower(F, NULL, &D) == GLOW_OK);
    CHECK_EQ(count_kind(NK_GEMM), 1);
    CHECK_EQ(count_kind(NK_MATMUL), 1);
    CHECK(glow_function_verify(F, &D) == GLOW_OK);
    end();
}

static void test_fully_connected(void)
{
    begin();
    glow_value x = rnd(GLOW_F32, 2, DIMS(3, 6), -2, 2);
    glow_value w = rnd(GLOW_F32, 2, DIMS(6, 4), -2, 2);
    glow_value b = rnd(GLOW_F32, 1, DIMS(4), -2, 2);
    glow_value ins[3] = { x, w, b };
    save("out", build(NK_FULLY_CONNECTED, "fc", ins, 3, NULL, 0, NULL, 0));
    CHECK(LOWER_AND_COMPARE(NULL));
    CHECK_TEXT("function main {\n"
               "  %fc/matmul = MatMul(%in0, %in1) : f32[3, 4]\n"
               "  %fc/bias_shape = Reshape(%in2) : f32[1, 4]\n"
               "  %fc/bias_bcast = Broadcast(%fc/bias_shape) : f32[3, 4]\n"
               "  %fc/add = Add(%fc/matmul, %fc/bias_bcast) : f32[3, 4]\n"
               "  Save(%fc/add, %out)\n"
               "}\n");
    end();
}

/* A node the keep function vetoes stays, and its neighbours still lower; the lowered nodes
 * come before their users, in place of the original. */
static void test_keep_and_order(void)
{
    begin();
    glow_value a = rnd(GLOW_F32, 2, DIMS(2, 3), -2, 2);
    glow_value b = rnd(GLOW_F32, 2, DIMS(3, 3), -2, 2);
    glow_value ins[2] = { a, b };
    glow_attr ga[4] = { GLOW_AF(ALPHA, 2.0), GLOW_AF(BETA, 1.0), GLOW_AI(TRANS_A, 0),
                        GLOW_AI(TRANS_B, 0) };
    glow_value g = build(NK_GEMM, "g", ins, 2, ga, 4, NULL, 0);
    glow_value sm = build(NK_SOFTMAX, "sm", &g, 1, ATTRS(GLOW_AI(AXIS, 1)), 1, NULL, 0);
    glow_value r = build(NK_RELU, "r", &sm, 1, NULL, 0, NULL, 0);
    save("out", r);
    CHECK(LOWER_AND_COMPARE(keep_gemm));
    CHECK_EQ(count_kind(NK_GEMM), 1);
    CHECK_EQ(count_kind(NK_SOFTMAX), 0);
    CHECK(F->nodes.first->kind == NK_GEMM);
    CHECK(F->nodes.last->kind == NK_SAVE && F->nodes.last->prev->kind == NK_RELU);

    /* Lowering twice changes nothing more. */
    char *t0 = print_function();
    CHECK(glow_lower(F, keep_gemm, &D) == GLOW_OK);
    char *t1 = print_function();
    CHECK_STR_EQ(t1, t0);
    free(t0);
    free(t1);
    end();
}

static void test_has_rule(void)
{
    static const glow_node_kind yes[] = {
        NK_GEMM, NK_FULLY_CONNECTED, NK_BATCH_NORM, NK_INSTANCE_NORM, NK_LAYER_NORM,
        NK_GROUP_NORM, NK_RMS_NORM, NK_LP_NORM, NK_SOFTMAX, NK_LOG_SOFTMAX, NK_PAD, NK_CLIP,
        NK_LEAKY_RELU, NK_PRELU, NK_HARD_SIGMOID, NK_HARD_SWISH, NK_CONV,
        NK_CONV_TRANSPOSE, NK_MAX_POOL, NK_AVG_POOL, NK_LP_POOL,
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        CHECK(glow_lower_has_rule(yes[i]));
    CHECK(!glow_lower_has_rule(NK_MATMUL));
    CHECK(!glow_lower_has_rule(NK_ADD));
    CHECK(!glow_lower_has_rule(NK_SPLAT));
    CHECK(!glow_lower_has_rule(NK_RESIZE));
    CHECK(!glow_lower_has_rule((glow_node_kind)NK_COUNT));
}

int main(void)
{
    test_gemm_full();
    test_gemm_variants();
    test_gemm_int();
    test_fully_connected();
    test_keep_and_order();
    test_has_rule();
    return CHECK_DONE();
}
