// test_ops_grad.c - The training-preview Gradient op: reverse-mode differentiation at import.
#include "check.h"
#include "testlib/onnx_edit.h"

static void add_to_max(Onnx__ModelProto *mp)
{
    free(mp->graph->node[0]->op_type);
    mp->graph->node[0]->op_type = strdup("Max");
}

static void unknown_y(Onnx__ModelProto *mp) { set_string_attr(mp->graph->node[1], "y", "zz"); }

int main(void)
{
    const char *add = "../simple/test_gradient_of_add";
    const char *add_mul = "../simple/test_gradient_of_add_and_mul";

    /* c = a + b: dc/da = dc/db = 1, folded to constants. */
    expect_load(add, 0, NULL, GLOW_OK, "Save(");

    /* d = (a + b) * a: dd/da = 2a + b, dd/db = a - built from the graph's own values. */
    expect_load(add_mul, 0, NULL, GLOW_OK, "Mul(");

    /* Only elementwise arithmetic is differentiated; others are named. */
    loaded r = load_node_test(add, 0, add_to_max);
    CHECK_EQ(r.st, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(r.d.msg, "cannot differentiate through Max");
    CHECK_CONTAINS(r.d.msg, "my_gradient");
    loaded_free(&r);

    r = load_node_test(add, 0, unknown_y);
    CHECK(r.st != GLOW_OK);
    CHECK_CONTAINS(r.d.msg, "'y' names unknown value 'zz'");
    loaded_free(&r);
    return CHECK_DONE();
}
