// test_verify.c - The verifier accepts a well-formed function and names the node at fault in
// hand-broken ones (operand order, result types, SAVE targets), without changing the graph.
#include "check.h"
#include "graph/graph.h"

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static glow_diag d;

/* x -> Conv -> Relu -> Save(out), with the weights as constants. */
typedef struct net {
    glow_module *m;
    glow_function *f;
    glow_node *x, *out, *conv, *relu, *save;
} net;

static net make_net(void)
{
    net t;
    t.m = glow_module_create();
    t.f = glow_function_create(t.m, "main");
    glow_type tx = glow_type_make(GLOW_F32, 4, DIMS(1, 3, 8, 8));
    glow_type tw = glow_type_make(GLOW_F32, 4, DIMS(4, 3, 3, 3));
    glow_type tb = glow_type_make(GLOW_F32, 1, DIMS(4));
    glow_type to = glow_type_make(GLOW_F32, 4, DIMS(1, 4, 8, 8));
    t.x = glow_placeholder_create(t.m, "x", &tx, true);
    t.out = glow_placeholder_create(t.m, "y", &to, false);
    glow_node *w = glow_constant_create(t.m, "w", &tw, NULL);
    glow_node *b = glow_constant_create(t.m, "b", &tb, NULL);
    const int64_t k[] = { 3, 3 }, one[] = { 1, 1 }, pads[] = { 1, 1, 1, 1 };
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, 2), GLOW_AINTS(STRIDES, one, 2),
                      GLOW_AINTS(PADS, pads, 4), GLOW_AINTS(DILATIONS, one, 2),
                      GLOW_AI(GROUP, 1) };
    glow_value ins[] = { glow_val(t.x, 0), glow_val(w, 0), glow_val(b, 0) };
    glow_diag_clear(&d);
    t.conv = glow_build(t.f, NK_CONV, "conv1", ins, 3, a, 5, NULL, 0, &d);
    glow_value cv = glow_val(t.conv, 0);
    t.relu = glow_build(t.f, NK_RELU, "relu1", &cv, 1, NULL, 0, NULL, 0, &d);
    t.save = glow_save_create(t.f, "save_y", glow_val(t.relu, 0), t.out);
    return t;
}

static void test_valid(void)
{
    net t = make_net();
    CHECK(t.conv && t.relu && t.save);
    glow_diag_clear(&d);
    CHECK_EQ(glow_function_verify(t.f, &d), GLOW_OK);
    CHECK_EQ(glow_module_verify(t.m, &d), GLOW_OK);
    CHECK_STR_EQ(d.msg, "");
    glow_module_destroy(t.m);
}

static void test_later_operand(void)
{
    net t = make_net();
    /* Conv now reads Relu, which comes after it. */
    t.conv->ins[0] = glow_val(t.relu, 0);
    glow_diag_clear(&d);
    CHECK(glow_function_verify(t.f, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "Conv 'conv1': operand 0 'relu1' comes after it in the node order");
    glow_module_destroy(t.m);
}

static void test_wrong_result_type(void)
{
    net t = make_net();
    t.relu->outs[0].dims[1] = 5;
    glow_type before = t.relu->outs[0];
    glow_diag_clear(&d);
    CHECK_EQ(glow_function_verify(t.f, &d), GLOW_ERR_BAD_TYPE);
    CHECK_CONTAINS(d.msg, "Relu 'relu1': result 0 is f32[1, 5, 8, 8], but its operands give "
                          "f32[1, 4, 8, 8]");
    /* The SAVE after it now stores a mismatching type too. */
    CHECK_CONTAINS(d.msg, "Save 'save_y': value f32[1, 5, 8, 8] does not match placeholder 'y'");
    /* Nothing was changed. */
    CHECK(glow_type_equal(&t.relu->outs[0], &before));
    glow_module_destroy(t.m);
}

static void test_bad_saves(void)
{
    net t = make_net();
    /* Saving into the input placeholder. */
    glow_save_create(t.f, "save_x", glow_val(t.x, 0), t.x);
    /* Saving twice into the output. */
    glow_save_create(t.f, "save_y2", glow_val(t.relu, 0), t.out);
    glow_diag_clear(&d);
    CHECK(glow_module_verify(t.m, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "Save 'save_x': operand 1 'x' must be an output placeholder");
    CHECK_CONTAINS(d.msg, "Save 'save_y2': output placeholder 'y' is saved more than once");
    glow_module_destroy(t.m);
}

static void test_foreign_and_attrs(void)
{
    net t = make_net();
    net u = make_net();
    /* An operand from another module's function. */
    t.relu->ins[0] = glow_val(u.conv, 0);
    glow_diag_clear(&d);
    CHECK(glow_function_verify(t.f, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "Relu 'relu1': operand 0 'conv1' is neither storage of this module "
                          "nor a node of function 'main'");
    glow_module_destroy(u.m);
    glow_module_destroy(t.m);

    /* A node made without glow_build, missing its required attributes. */
    t = make_net();
    glow_value cv = glow_val(t.conv, 0);
    glow_type ty = t.conv->outs[0];
    glow_node *sm = glow_node_create(t.f, NK_SOFTMAX, "sm", &cv, 1, &ty, 1);
    (void)sm;
    glow_diag_clear(&d);
    CHECK(glow_function_verify(t.f, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "Softmax 'sm': missing required attribute 'axis'");
    glow_module_destroy(t.m);
}

int main(void)
{
    test_valid();
    test_later_operand();
    test_wrong_result_type();
    test_bad_saves();
    test_foreign_and_attrs();
    return CHECK_DONE();
}
