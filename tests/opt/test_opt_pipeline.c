// test_opt_pipeline.c - The optimizer driver: pass names, the printed pipeline, statistics and
// dumps, the default pipeline on a small graph, and the evaluator applying fused activations.
#include "check.h"
#include "eval/eval.h"
#include "graph_parse.h"
#include "opt/opt.h"

static char *capture_begin(FILE **f, char **buf, size_t *size)
{
    *buf = NULL;
    *f = open_memstream(buf, size);
    return *buf;
}

static const char *model =
    "module {\n"
    "  %x = Placeholder input : f32[1, 2, 3, 3]\n"
    "  %w = Constant : f32[2, 2, 1, 1]\n"
    "  %scale = Constant [2, 0.5] : f32[2]\n"
    "  %bias = Constant [1, 2] : f32[2]\n"
    "  %mean = Constant [1, 0] : f32[2]\n"
    "  %var = Constant [4, 1] : f32[2]\n"
    "  %one = Constant [1] : f32[1, 2, 3, 3]\n"
    "  %out = Placeholder output : f32[1, 2, 3, 3]\n"
    "}\n"
    "function main {\n"
    "  %t = Transpose(%x) {perm=[0, 2, 3, 1]}\n"
    "  %back = Transpose(%t) {perm=[0, 3, 1, 2]}\n"
    "  %conv = Conv(%back, %w) {kernel=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], "
    "dilations=[1, 1], group=1}\n"
    "  %bn = BatchNormalization(%conv, %scale, %bias, %mean, %var) {epsilon=0}\n"
    "  %m = Mul(%bn, %one)\n"
    "  %r = Relu(%m)\n"
    "  %r2 = Relu(%m)\n"
    "  %s = Add(%r, %r2)\n"
    "  Save(%s, %out)\n"
    "}\n";

static void test_names(void)
{
    glow_pass_id id;
    CHECK(glow_pass_from_name("fold_const", &id) && id == GLOW_PASS_FOLD_CONST);
    CHECK(glow_pass_from_name("fold-batchnorm", &id) && id == GLOW_PASS_FOLD_BATCHNORM);
    CHECK(!glow_pass_from_name("nope", &id));
    for (int i = 0; i < GLOW_PASS_COUNT; i++) {
        CHECK(glow_pass_from_name(glow_pass_name((glow_pass_id)i), &id) && (int)id == i);
        CHECK(strlen(glow_pass_description((glow_pass_id)i)) > 10);
    }
    FILE *f;
    char *buf;
    size_t size;
    capture_begin(&f, &buf, &size);
    glow_print_pipeline(f);
    fclose(f);
    CHECK_CONTAINS(buf, "before lowering:");
    CHECK_CONTAINS(buf, "after lowering:");
    CHECK_CONTAINS(buf, "fold_batchnorm");
    CHECK_CONTAINS(buf, "fixpoint");
    free(buf);
}

static void test_default_pipeline(void)
{
    gp g;
    glow_module *m = gp_parse(&g, model);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "%s\n", g.err);
        return;
    }
    glow_function *f = glow_module_function(m, "main");
    FILE *stats, *dump;
    char *sbuf, *dbuf;
    size_t ssize, dsize;
    capture_begin(&stats, &sbuf, &ssize);
    capture_begin(&dump, &dbuf, &dsize);
    glow_opt_options o = { .stats = true, .stats_out = stats, .dump_after = "fold_batchnorm",
                           .dump_out = dump, .verify = true };
    glow_diag d = { 0 };
    CHECK_EQ(glow_optimize(f, &o, &d), GLOW_OK);
    fclose(stats);
    fclose(dump);
    CHECK_CONTAINS(sbuf, "sink_transpose");
    CHECK_CONTAINS(sbuf, "fold_batchnorm");
    CHECK_CONTAINS(sbuf, "total");
    CHECK_CONTAINS(dbuf, "# after fold_batchnorm (1 change)");
    /* Transposes cancel, x*1 goes, BN folds, the two Relus merge: Conv, Relu, Add, Save. */
    char *buf;
    size_t size;
    FILE *out;
    capture_begin(&out, &buf, &size);
    glow_function_print(out, f);
    fclose(out);
    CHECK_EQ(f->nodes.count, 4);
    CHECK(!strstr(buf, "Transpose") && !strstr(buf, "BatchNormalization") && !strstr(buf, "Mul"));
    CHECK_CONTAINS(buf, "%s = Add(%r, %r)");
    free(buf);
    free(sbuf);
    free(dbuf);
    glow_module_destroy(m);
}

/* A Conv with a fused Clip evaluates like the Conv followed by the Clip. */
static void test_fused_eval(void)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_type xt = glow_type_make(GLOW_F32, 4, (const int64_t[]){ 1, 1, 2, 2 });
    glow_type wt = glow_type_make(GLOW_F32, 4, (const int64_t[]){ 2, 1, 1, 1 });
    float xv[4] = { -3, -0.5f, 0.5f, 3 }, wv[2] = { 1, 2 };
    glow_node *x = glow_constant_create(m, "x", &xt, xv);
    glow_node *w = glow_constant_create(m, "w", &wt, wv);
    int64_t one[2] = { 1, 1 }, zero[4] = { 0 };
    glow_attr a[5] = { GLOW_AINTS(KERNEL, one, 2), GLOW_AINTS(STRIDES, one, 2),
                       GLOW_AINTS(PADS, zero, 4), GLOW_AINTS(DILATIONS, one, 2),
                       GLOW_AI(GROUP, 1) };
    glow_diag d = { 0 };
    glow_value ins[2] = { glow_val(x, 0), glow_val(w, 0) };
    glow_node *c = glow_build(f, NK_CONV, "c", ins, 2, a, 5, NULL, 0, &d);
    CHECK(c != NULL);
    if (!c)
        return;
    glow_node_set_str(c, GA_FUSED_ACT, "Clip");
    glow_node_set_float(c, GA_FUSED_ALPHA, -1);
    glow_node_set_float(c, GA_FUSED_BETA, 2);
    CHECK_EQ(glow_function_verify(f, &d), GLOW_OK);
    glow_tensor tin[2] = { x->payload, w->payload }, out[1];
    CHECK_EQ(glow_eval_node(c, tin, out, &d), GLOW_OK);
    const float want[8] = { -1, -0.5f, 0.5f, 2, -1, -1, 1, 2 };
    for (int i = 0; i < 8; i++)
        CHECK_NEAR(((float *)out[0].data)[i], want[i], 0);
    glow_tensor_free(&out[0]);
    glow_node_set_str(c, GA_FUSED_ACT, "Sigmoid");
    CHECK_EQ(glow_eval_node(c, tin, out, &d), GLOW_OK);
    CHECK_NEAR(((float *)out[0].data)[0], 1 / (1 + exp(3.0)), 1e-7);
    glow_tensor_free(&out[0]);
    glow_node_set_str(c, GA_FUSED_ACT, "Swish");
    CHECK(glow_eval_node(c, tin, out, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "fused activation 'Swish'");
    glow_module_destroy(m);
}

int main(void)
{
    test_names();
    test_default_pipeline();
    test_fused_eval();
    return CHECK_DONE();
}
