// test_ops_attn.c - Attention, RotaryEmbedding, CausalConvWithState and LinearAttention: every
// node-suite test of these ops is imported and evaluated node by node against ONNX's outputs;
// the expanded (function body) variants are run too for comparison; bad head counts and modes
// fail naming the node.
#include "check.h"
#include "testlib/node_eval.h"
#include "testlib/onnx_edit.h"

static void odd_heads(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "q_num_heads", 5);
    set_node_name(mp->graph->node[0], "attn0");
}

static void bad_mode(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "qk_matmul_output_mode", 7);
}

static void odd_rotary_dim(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "rotary_embedding_dim", 3);
}

static void lin_heads(Onnx__ModelProto *mp)
{
    set_int_attr(mp->graph->node[0], "q_num_heads", 3);
    set_node_name(mp->graph->node[0], "lin0");
}

static void lin_rule(Onnx__ModelProto *mp)
{
    set_string_attr(mp->graph->node[0], "update_rule", "fancy");
}

int main(void)
{
    if (!ne_have_suite()) {
        printf("no ONNX node tests: skipped\n");
        return 0;
    }
    static const char *const attn[] = { "test_attention_", NULL };
    ne_totals t = ne_run_prefixes(attn, false);
    ne_print_totals("Attention node tests", t);
    CHECK_EQ(t.total, 64);
    CHECK_EQ(t.mismatch, 0);
    CHECK(t.pass >= 60);
    ne_totals e = ne_run_prefixes(attn, true);
    ne_print_totals("Attention node tests, expanded", e);

    static const char *const rope[] = { "test_rotary_embedding", NULL };
    t = ne_run_prefixes(rope, false);
    ne_print_totals("RotaryEmbedding node tests", t);
    CHECK_EQ(t.total, 8);
    CHECK_EQ(t.pass, 8);
    e = ne_run_prefixes(rope, true);
    ne_print_totals("RotaryEmbedding node tests, expanded", e);

    static const char *const conv[] = { "test_causal_conv_with_state", NULL };
    t = ne_run_prefixes(conv, false);
    ne_print_totals("CausalConvWithState node tests", t);
    CHECK_EQ(t.total, 13);
    CHECK_EQ(t.mismatch, 0);
    CHECK(t.pass >= 12);
    e = ne_run_prefixes(conv, true);
    ne_print_totals("CausalConvWithState node tests, expanded", e);

    static const char *const lin[] = { "test_linear_attention_", NULL };
    t = ne_run_prefixes(lin, false);
    ne_print_totals("LinearAttention node tests", t);
    CHECK_EQ(t.total, 14);
    CHECK_EQ(t.pass, 14);

    loaded r = load_node_test("test_linear_attention_gated_delta_gqa", 0, lin_heads);
    CHECK_EQ(r.st, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(r.d.msg, "LinearAttention 'lin0' (opset 27): q_num_heads 3 must be a "
                   "positive multiple of kv_num_heads");
    loaded_free(&r);
    r = load_node_test("test_linear_attention_gated", 0, lin_rule);
    CHECK_EQ(r.st, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(r.d.msg, "update_rule 'fancy' is not valid");
    loaded_free(&r);

    r = load_node_test("test_attention_3d_gqa", 0, odd_heads);
    CHECK_EQ(r.st, GLOW_ERR_BAD_SHAPE);
    CHECK_CONTAINS(r.d.msg, "Attention 'attn0'");
    CHECK_CONTAINS(r.d.msg, "not a multiple of 5 heads");
    loaded_free(&r);
    r = load_node_test("test_attention_4d_with_qk_matmul", 0, bad_mode);
    CHECK_EQ(r.st, GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(r.d.msg, "qk_matmul_output_mode = 7");
    loaded_free(&r);
    r = load_node_test("test_rotary_embedding_with_rotary_dim", 0, odd_rotary_dim);
    CHECK_EQ(r.st, GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(r.d.msg, "rotary_embedding_dim = 3");
    loaded_free(&r);
    return CHECK_DONE();
}
