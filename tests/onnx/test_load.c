// test_load.c - The ONNX importer on tiny in-memory models: initializers in raw and typed form,
// constant and shape ops, one message for every unsupported op, symbolic dims, absurd sizes and
// malformed bytes.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

/* Loads mk into a fresh module; the caller destroys it. */
static glow_status load(mk_model *mk, const glow_onnx_options *opt, glow_module **m,
                        glow_diag *d)
{
    size_t n;
    uint8_t *bytes = mk_pack(mk, &n);
    *m = glow_module_create();
    glow_status s = glow_onnx_load_bytes(*m, bytes, n, opt, d);
    free(bytes);
    return s;
}

/* The value saved into output placeholder `name`. */
static glow_node *saved(glow_module *m, const char *name)
{
    glow_function *f = glow_module_function(m, "main");
    if (!f)
        return NULL;
    GLOW_FOR_EACH_NODE(f, n) {
        if (n->kind == NK_SAVE && strcmp(n->ins[1].node->name, name) == 0)
            return n->ins[0].node;
    }
    return NULL;
}

static int count_list(const glow_node_list *l)
{
    int k = 0;
    for (glow_node *n = l->first; n; n = n->next)
        k++;
    return k;
}

static void test_basic(void)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    float w[6] = { 1, 2, 3, 4, 5, 6 };
    mk_initializer(mk, mk_tensor_raw(mk, "w_raw", MK_F32, 2, D(2, 3), w, sizeof(w)));
    Onnx__TensorProto *typed = mk_initializer(mk, mk_tensor_typed(mk, "w_typed", MK_I64, 1,
                                                                  D(3)));
    int64_t iv[3] = { -7, 0, 1LL << 40 };
    typed->n_int64_data = 3, typed->int64_data = iv;
    /* An initializer also listed as a graph input (older exporters) stays a constant. */
    mk_input(mk, "w_raw", MK_F32, 2, D(2, 3));
    Onnx__NodeProto *c = mk_node(mk, "Constant", "c0", 0, NULL, 1, S("c"));
    mk_attr_ints(mk, c, "value_ints", D(4, 5), 2);
    Onnx__NodeProto *cf = mk_node(mk, "Constant", NULL, 0, NULL, 1, S("cf"));
    mk_attr_float(mk, cf, "value_float", 2.5f);
    mk_node(mk, "Identity", "id0", 1, S("x"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 2, D(2, 3));
    mk_output(mk, "w_raw", MK_F32, 2, D(2, 3));   /* an initializer as a graph output */
    mk_output(mk, "w_typed", MK_I64, 1, D(3));
    mk_output(mk, "c", MK_I64, 1, D(2));
    mk_output(mk, "cf", MK_F32, 0, NULL);
    mk_output(mk, "x", MK_F32, 2, D(2, 3));        /* a graph input as a graph output */

    glow_module *m;
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_OK);
    if (d.status)
        fprintf(stderr, "%s\n", d.msg);
    /* 1 input + 6 outputs. */
    CHECK_EQ(count_list(&m->placeholders), 7);
    glow_node *px = glow_module_find_placeholder(m, "x");
    CHECK(px && px->is_input);
    glow_node *y = saved(m, "y");
    CHECK(y && y->kind == NK_PLACEHOLDER && y->is_input);

    glow_node *wr = saved(m, "w_raw");
    CHECK(wr && wr->kind == NK_CONSTANT);
    if (wr && wr->kind == NK_CONSTANT) {
        CHECK_EQ(wr->outs[0].rank, 2);
        CHECK_NEAR(((float *)wr->payload.data)[5], 6, 0);
    }
    glow_node *wt = saved(m, "w_typed");
    CHECK(wt && wt->kind == NK_CONSTANT);
    if (wt && wt->kind == NK_CONSTANT) {
        CHECK_EQ(wt->outs[0].dtype, GLOW_I64);
        CHECK_EQ(((int64_t *)wt->payload.data)[0], -7);
        CHECK_EQ(((int64_t *)wt->payload.data)[2], 1LL << 40);
    }
    glow_node *cc = saved(m, "c");
    CHECK(cc && cc->kind == NK_CONSTANT);
    if (cc && cc->kind == NK_CONSTANT) {
        CHECK_EQ(cc->outs[0].dims[0], 2);
        CHECK_EQ(((int64_t *)cc->payload.data)[1], 5);
    }
    glow_node *ccf = saved(m, "cf");
    CHECK(ccf && ccf->kind == NK_CONSTANT && ccf->outs[0].rank == 0);
    if (ccf && ccf->kind == NK_CONSTANT)
        CHECK_NEAR(((float *)ccf->payload.data)[0], 2.5, 0);
    CHECK(saved(m, "x") == px);
    glow_module_destroy(m);
    mk_free(mk);
}

/* Shape, Size, Range, ConstantOfShape, EyeLike and Dropout all become constants. */
static void test_shape_ops(void)
{
    mk_model *mk = mk_new(15);
    mk_input(mk, "x", MK_F32, 3, D(2, 3, 4));
    mk_node(mk, "Shape", "shape", 1, S("x"), 1, S("s"));
    Onnx__NodeProto *sh = mk_node(mk, "Shape", "shape_tail", 1, S("x"), 1, S("s2"));
    mk_attr_int(mk, sh, "start", -2);
    mk_node(mk, "Size", "size", 1, S("x"), 1, S("n"));
    int32_t r[3] = { 1, 10, 3 };
    mk_initializer(mk, mk_tensor_raw(mk, "r0", MK_I32, 0, NULL, &r[0], 4));
    mk_initializer(mk, mk_tensor_raw(mk, "r1", MK_I32, 0, NULL, &r[1], 4));
    mk_initializer(mk, mk_tensor_raw(mk, "r2", MK_I32, 0, NULL, &r[2], 4));
    mk_node(mk, "Range", "range", 3, S("r0", "r1", "r2"), 1, S("rg"));
    Onnx__NodeProto *cs = mk_node(mk, "ConstantOfShape", "cos", 1, S("s2"), 1, S("filled"));
    int32_t seven = 7;
    mk_attr_tensor(mk, cs, "value", mk_tensor_raw(mk, "v", MK_I32, 1, D(1), &seven, 4));
    mk_node(mk, "ConstantOfShape", "cos0", 1, S("s2"), 1, S("zeros"));
    mk_input(mk, "sq", MK_F32, 2, D(3, 4));
    Onnx__NodeProto *ey = mk_node(mk, "EyeLike", "eye", 1, S("sq"), 1, S("eye"));
    mk_attr_int(mk, ey, "k", 1);
    mk_node(mk, "Dropout", "drop", 1, S("x"), 2, S("dx", "mask"));
    static const char *outs[] = { "s", "s2", "n", "rg", "filled", "zeros", "eye", "dx", "mask" };
    for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
        mk_output(mk, outs[i], MK_F32, -1, NULL);

    glow_module *m;
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_OK);
    if (d.status) {
        fprintf(stderr, "%s\n", d.msg);
        glow_module_destroy(m);
        mk_free(mk);
        return;
    }
    glow_node *s = saved(m, "s");
    CHECK(s && s->kind == NK_CONSTANT && s->outs[0].dims[0] == 3);
    CHECK_EQ(((int64_t *)s->payload.data)[2], 4);
    glow_node *s2 = saved(m, "s2");
    CHECK(s2 && s2->kind == NK_CONSTANT && s2->outs[0].dims[0] == 2);
    CHECK_EQ(((int64_t *)s2->payload.data)[0], 3);
    glow_node *n = saved(m, "n");
    CHECK(n && n->kind == NK_CONSTANT && n->outs[0].rank == 0);
    CHECK_EQ(((int64_t *)n->payload.data)[0], 24);
    glow_node *rg = saved(m, "rg");
    CHECK(rg && rg->kind == NK_CONSTANT && rg->outs[0].dtype == GLOW_I32);
    CHECK_EQ(rg->outs[0].dims[0], 3);
    CHECK_EQ(((int32_t *)rg->payload.data)[2], 7);
    glow_node *f = saved(m, "filled");
    CHECK(f && f->kind == NK_CONSTANT && f->outs[0].dtype == GLOW_I32);
    CHECK_EQ(f->outs[0].rank, 2);
    CHECK_EQ(f->outs[0].dims[1], 4);
    CHECK_EQ(((int32_t *)f->payload.data)[11], 7);
    glow_node *z = saved(m, "zeros");
    CHECK(z && z->kind == NK_CONSTANT && z->outs[0].dtype == GLOW_F32);
    glow_node *e = saved(m, "eye");
    CHECK(e && e->kind == NK_CONSTANT && e->outs[0].dims[0] == 3 && e->outs[0].dims[1] == 4);
    CHECK_NEAR(((float *)e->payload.data)[1], 1, 0);    /* row 0, col 1 */
    CHECK_NEAR(((float *)e->payload.data)[0], 0, 0);
    CHECK_NEAR(((float *)e->payload.data)[11], 1, 0);   /* row 2, col 3 */
    CHECK(saved(m, "dx") == glow_module_find_placeholder(m, "x"));
    glow_node *mask = saved(m, "mask");
    CHECK(mask && mask->kind == NK_CONSTANT && mask->outs[0].dtype == GLOW_BOOL);
    CHECK_EQ(((uint8_t *)mask->payload.data)[23], 1);
    glow_module_destroy(m);
    mk_free(mk);

    /* Dropout in training mode is refused. */
    mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(4));
    uint8_t yes = 1;
    mk_initializer(mk, mk_tensor_raw(mk, "train", MK_BOOL, 0, NULL, &yes, 1));
    mk_node(mk, "Dropout", "drop", 3, S("x", "", "train"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 1, D(4));
    glow_diag_clear(&d);
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "Dropout 'drop' (opset 13)");
    CHECK_CONTAINS(d.msg, "training");
    glow_module_destroy(m);
    mk_free(mk);
}

/* Add broadcasts explicitly (RESHAPE then BROADCAST, named after the node) and folds when
 * every operand is constant. */
static void test_broadcast_and_fold(void)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    float b[3] = { 10, 20, 30 }, k[1] = { 1 };
    mk_initializer(mk, mk_tensor_raw(mk, "b", MK_F32, 1, D(3), b, sizeof(b)));
    mk_initializer(mk, mk_tensor_raw(mk, "k", MK_F32, 0, NULL, k, sizeof(k)));
    mk_input(mk, "v", MK_F32, 1, D(3));
    mk_node(mk, "Add", "add0", 2, S("x", "v"), 1, S("y"));
    mk_node(mk, "Add", "addc", 2, S("b", "k"), 1, S("bk"));
    mk_output(mk, "y", MK_F32, 2, D(2, 3));
    mk_output(mk, "bk", MK_F32, 1, D(3));
    Onnx__NodeProto *cast = mk_node(mk, "Cast", "cast0", 1, S("x"), 1, S("xi"));
    mk_attr_int(mk, cast, "to", MK_I32);
    mk_output(mk, "xi", MK_I32, 2, D(2, 3));
    glow_module *m;
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_OK);
    if (d.status)
        fprintf(stderr, "%s\n", d.msg);
    glow_node *y = saved(m, "y");
    CHECK(y && y->kind == NK_ADD);
    if (y && y->kind == NK_ADD) {
        CHECK_STR_EQ(y->name, "add0");
        glow_node *bc = y->ins[1].node;
        CHECK_EQ(bc->kind, NK_BROADCAST);
        CHECK_EQ(bc->outs[0].rank, 2);
        CHECK_CONTAINS(bc->name, "add0/");
        CHECK_EQ(bc->ins[0].node->kind, NK_RESHAPE);   /* [3] -> [1, 3] first */
        CHECK_EQ(bc->ins[0].node->outs[0].rank, 2);
    }
    /* A node built through a helper alone still carries the model's node name. */
    glow_node *xi = saved(m, "xi");
    CHECK(xi && xi->kind == NK_CAST);
    if (xi)
        CHECK_STR_EQ(xi->name, "cast0");
    glow_node *bk = saved(m, "bk");
    if (bk && bk->kind == NK_CONSTANT) {
        CHECK_NEAR(((float *)bk->payload.data)[2], 31, 0);
    } else {
        fprintf(stderr, "note: Add of constants was not folded (no evaluator yet?)\n");
    }
    glow_module_destroy(m);
    mk_free(mk);
}

static void test_missing_input(void)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(4));
    mk_node(mk, "Identity", "id0", 1, S("nope"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 1, D(4));
    glow_module *m;
    glow_diag d = { 0 };
    CHECK(load(mk, NULL, &m, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "'nope'");
    CHECK_CONTAINS(d.msg, "Identity 'id0' (opset 13)");
    glow_module_destroy(m);
    mk_free(mk);

    /* A graph output nothing produces. */
    mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(4));
    mk_output(mk, "ghost", MK_F32, 1, D(4));
    glow_diag_clear(&d);
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_ERR_NOT_FOUND);
    CHECK_CONTAINS(d.msg, "ghost");
    glow_module_destroy(m);
    mk_free(mk);
}

static void test_unsupported_listing(void)
{
    mk_model *mk = mk_new(13);
    mk_opset(mk, "ai.onnx.ml", 1);
    mk_input(mk, "x", MK_F32, 1, D(4));
    /* Random ops have no loader (If and Loop, used here before, now import). */
    mk_node(mk, "Bernoulli", "bern0", 1, S("x"), 1, S("a"));
    mk_node(mk, "RandomUniformLike", "r0", 1, S("x"), 1, S("b"));
    /* Uses a poisoned value: skipped without a report of its own. */
    mk_node(mk, "Identity", "after_bern", 1, S("a"), 1, S("a2"));
    mk_node(mk, "RandomUniformLike", "r1", 1, S("b"), 1, S("c"));
    mk_node_domain(mk, "ai.onnx.ml", "Imputer", "le", 1, S("x"), 1, S("e"));
    mk_node(mk, "Identity", "fine", 1, S("x"), 1, S("f"));
    mk_output(mk, "a2", MK_F32, 1, D(4));
    mk_output(mk, "c", MK_F32, 1, D(4));
    mk_output(mk, "e", MK_F32, 1, D(4));
    mk_output(mk, "f", MK_F32, 1, D(4));
    glow_module *m;
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "model uses 3 unsupported ops: ");
    CHECK_CONTAINS(d.msg, "Bernoulli (opset 13; node 'bern0')");
    CHECK_CONTAINS(d.msg, "RandomUniformLike (opset 13; nodes 'r0', 'r1')");
    CHECK_CONTAINS(d.msg, "ai.onnx.ml.Imputer (opset 1; node 'le')");
    CHECK(!strstr(d.msg, "after_bern"));
    glow_module_destroy(m);
    mk_free(mk);

    /* Unnamed nodes are named by op type and index; an op newer than the model's opset
     * (Range is from opset 11) is unsupported too. */
    mk = mk_new(9);
    mk_input(mk, "x", MK_F32, 1, D(4));
    mk_node(mk, "FancyOp", NULL, 1, S("x"), 1, S("y"));
    mk_node(mk, "Range", NULL, 3, S("x", "x", "x"), 1, S("z"));
    mk_output(mk, "y", MK_F32, 1, D(4));
    glow_diag_clear(&d);
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "model uses 2 unsupported ops");
    CHECK_CONTAINS(d.msg, "FancyOp (opset 9; node 'FancyOp#0')");
    CHECK_CONTAINS(d.msg, "Range (opset 9; node 'Range#1')");
    glow_module_destroy(m);
    mk_free(mk);

    CHECK(glow_onnx_op_supported("", "Identity", 1));
    CHECK(glow_onnx_op_supported("ai.onnx", "Range", 11));
    CHECK(!glow_onnx_op_supported("", "Range", 10));
    CHECK(!glow_onnx_op_supported("ai.onnx.ml", "Identity", 13));
    CHECK(!glow_onnx_op_supported("", "NoSuchOp", 20));
}

static void test_huge_initializer(void)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(4));
    Onnx__TensorProto *t = mk_initializer(mk, mk_tensor_typed(mk, "enormous", MK_F32, 2,
                                                              D(1LL << 40, 1LL << 40)));
    (void)t;
    mk_node(mk, "Identity", "id0", 1, S("enormous"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 1, D(4));
    glow_module *m;
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, NULL, &m, &d), GLOW_ERR_TOO_LARGE);
    CHECK_CONTAINS(d.msg, "enormous");
    CHECK(!strstr(d.msg, "id0"));   /* its user is skipped, not reported */
    glow_module_destroy(m);
    mk_free(mk);
}

static void test_symbolic_dims(void)
{
    mk_model *mk = mk_new(13);
    mk_input_sym(mk, "data", MK_F32, 2, D(0, 3), S("batch", NULL));
    mk_node(mk, "Identity", "id0", 1, S("data"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 2, D(1, 3));
    glow_module *m;
    glow_diag d = { 0 };
    CHECK(load(mk, NULL, &m, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "'data'");
    CHECK_CONTAINS(d.msg, "'batch'");
    CHECK_CONTAINS(d.msg, "--define batch=");
    glow_module_destroy(m);

    const char *defs[] = { "other=2", "batch=5" };
    glow_onnx_options opt = { .defines = defs, .ndefines = 2 };
    glow_diag_clear(&d);
    CHECK_EQ(load(mk, &opt, &m, &d), GLOW_OK);
    glow_node *ph = glow_module_find_placeholder(m, "data");
    CHECK(ph && ph->outs[0].dims[0] == 5 && ph->outs[0].dims[1] == 3);
    glow_module_destroy(m);

    /* A type given by the caller wins over the declared one. */
    glow_type given = glow_type_make(GLOW_F32, 2, D(7, 3));
    const glow_type *types[] = { &given };
    glow_onnx_options opt2 = { .input_types = types, .ninput_types = 1 };
    glow_diag_clear(&d);
    CHECK_EQ(load(mk, &opt2, &m, &d), GLOW_OK);
    ph = glow_module_find_placeholder(m, "data");
    CHECK(ph && ph->outs[0].dims[0] == 7);
    glow_module_destroy(m);
    mk_free(mk);
}

static void test_malformed(void)
{
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    static const uint8_t garbage[] = "this is not an onnx model at all \xff\xff\xff\xff";
    CHECK_EQ(glow_onnx_load_bytes(m, garbage, sizeof(garbage), NULL, &d), GLOW_ERR_PARSE);
    CHECK_CONTAINS(d.msg, "not a valid ONNX model");
    glow_module_destroy(m);

    /* Every truncation and some bit flips of a small valid model load or fail cleanly. */
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    float w[6] = { 1, 2, 3, 4, 5, 6 };
    mk_initializer(mk, mk_tensor_raw(mk, "w", MK_F32, 2, D(2, 3), w, sizeof(w)));
    mk_node(mk, "Shape", "sh", 1, S("w"), 1, S("s"));
    mk_node(mk, "ConstantOfShape", "cs", 1, S("s"), 1, S("z"));
    mk_node(mk, "Identity", "id", 1, S("x"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 2, D(2, 3));
    mk_output(mk, "z", MK_F32, 2, D(2, 3));
    size_t n;
    uint8_t *bytes = mk_pack(mk, &n);
    for (size_t len = 0; len < n; len++) {
        uint8_t *copy = malloc(len + 1);
        memcpy(copy, bytes, len);
        m = glow_module_create();
        glow_diag_clear(&d);
        glow_status s = glow_onnx_load_bytes(m, copy, len, NULL, &d);
        CHECK(s == GLOW_OK || d.msg[0]);
        glow_module_destroy(m);
        free(copy);
    }
    uint8_t *copy = malloc(n);
    for (size_t bit = 0; bit < n * 8; bit += 3) {
        memcpy(copy, bytes, n);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        m = glow_module_create();
        glow_diag_clear(&d);
        glow_status s = glow_onnx_load_bytes(m, copy, n, NULL, &d);
        CHECK(s == GLOW_OK || d.msg[0]);
        glow_module_destroy(m);
    }
    free(copy);
    free(bytes);
    mk_free(mk);

    m = glow_module_create();
    glow_diag_clear(&d);
    CHECK(glow_onnx_load(m, "/nonexistent/model.onnx", NULL, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "/nonexistent/model.onnx");
    glow_module_destroy(m);
}

int main(void)
{
    test_basic();
    test_shape_ops();
    test_broadcast_and_fold();
    test_missing_input();
    test_unsupported_listing();
    test_huge_initializer();
    test_symbolic_dims();
    test_malformed();
    return CHECK_DONE();
}
