// test_ops_loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: every node-suite
// test of both ops is imported and evaluated node by node against ONNX's outputs; the
// expanded (function body) variants are run too for comparison; malformed attributes fail
// naming the node.
#include "check.h"
#include "testlib/node_eval.h"
#include "testlib/onnx_edit.h"

static void bad_reduction(Onnx__ModelProto *mp)
{
    set_string_attr(mp->graph->node[0], "reduction", "median");
    set_node_name(mp->graph->node[0], "loss0");
}

static void float_ignore_index(Onnx__ModelProto *mp)
{
    Onnx__NodeProto *np = mp->graph->node[0];
    for (size_t i = 0; i < np->n_attribute; i++)
        if (strcmp(np->attribute[i]->name, "ignore_index") == 0) {
            np->attribute[i]->type = 1;
            np->attribute[i]->f = 1.0f;
            np->attribute[i]->has_f = 1;
        }
}

int main(void)
{
    static const char *const ops[] = { "test_nllloss_", "test_sce_", NULL };
    if (!ne_have_suite()) {
        printf("no ONNX node tests: skipped\n");
        return 0;
    }
    ne_totals t = ne_run_prefixes(ops, false);
    ne_print_totals("loss node tests", t);
    /* All load and match, the rank-7 (NCd1d2d3d4d5) ones too (glowc has up to 8 dims). */
    CHECK_EQ(t.total, 52);
    CHECK_EQ(t.mismatch, 0);
    CHECK_EQ(t.no_eval, 0);
    CHECK_EQ(t.pass, 52);
    ne_totals e = ne_run_prefixes(ops, true);
    ne_print_totals("loss node tests, expanded", e);
    CHECK_EQ(e.mismatch, 0);

    loaded r = load_node_test("test_nllloss_NCd1_weight", 0, bad_reduction);
    CHECK_EQ(r.st, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(r.d.msg, "NegativeLogLikelihoodLoss 'loss0'");
    CHECK_CONTAINS(r.d.msg, "reduction 'median'");
    loaded_free(&r);
    r = load_node_test("test_sce_mean_weight_ii", 0, float_ignore_index);
    CHECK_EQ(r.st, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(r.d.msg, "'ignore_index'");
    loaded_free(&r);
    return CHECK_DONE();
}
