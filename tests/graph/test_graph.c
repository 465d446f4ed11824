// test_graph.c - Types, tensors, graph construction and editing, attributes, text and DOT output.
#include <stdint.h>

#include "check.h"
#include "graph/graph.h"

/* Runs `print` into a memory stream; the caller frees the text. */
#define CAPTURE(text, call)                                   \
    do {                                                      \
        size_t cap_len_;                                      \
        FILE *cap_f_ = open_memstream(&(text), &cap_len_);    \
        call;                                                 \
        fclose(cap_f_);                                       \
    } while (0)
#define OUT cap_f_

static void test_types(void)
{
    char buf[96];
    int64_t d4[] = { 1, 3, 224, 224 };
    glow_type t = glow_type_make(GLOW_F32, 4, d4);
    CHECK_STR_EQ(glow_type_str(&t, buf, sizeof(buf)), "f32[1, 3, 224, 224]");
    CHECK_EQ(glow_type_numel(&t), 3 * 224 * 224);
    CHECK_EQ(glow_type_bytes(&t), 4 * 3 * 224 * 224);
    int64_t strides[4];
    glow_type_strides(&t, strides);
    CHECK(strides[0] == 150528 && strides[1] == 50176 && strides[2] == 224 && strides[3] == 1);
    glow_type s = glow_type_scalar(GLOW_F32);
    CHECK_STR_EQ(glow_type_str(&s, buf, sizeof(buf)), "f32[]");
    CHECK_EQ(glow_type_numel(&s), 1);
    int64_t d2[] = { 2, 3 };
    glow_type q = glow_type_make(GLOW_I8Q, 2, d2);
    q.scale = 0.5f;
    q.offset = -3;
    CHECK_STR_EQ(glow_type_str(&q, buf, sizeof(buf)), "i8q[2, 3]:0.5:-3");
    glow_type q2 = q;
    CHECK(glow_type_equal(&q, &q2));
    q2.scale = 0.25f;
    CHECK(!glow_type_equal(&q, &q2));
    CHECK(glow_type_same_shape(&q, &q2));
    q2.scale = 0.1f;
    CHECK_STR_EQ(glow_type_str(&q2, buf, sizeof(buf)), "i8q[2, 3]:0.1:-3");
    glow_type e = glow_type_make(GLOW_F32, 2, d2);
    CHECK(!glow_type_equal(&e, &q));
    CHECK(!glow_type_equal(&e, &t));
    /* A tiny buffer truncates and stays terminated. */
    char small[6];
    CHECK_STR_EQ(glow_type_str(&t, small, sizeof(small)), "f32[1");
    /* Overflowing products are reported, not wrapped. */
    int64_t huge[] = { INT64_MAX / 2, 4 };
    glow_type h = glow_type_make(GLOW_F32, 2, huge);
    CHECK_EQ(glow_type_numel(&h), -1);
    CHECK(glow_type_bytes(&h) == SIZE_MAX);

    int64_t a[] = { 8, 1, 6, 1 }, b[] = { 7, 1, 5 }, out[GLOW_MAX_DIMS];
    int r = 0;
    CHECK(glow_broadcast_shapes(4, a, 3, b, &r, out));
    CHECK(r == 4 && out[0] == 8 && out[1] == 7 && out[2] == 6 && out[3] == 5);
    int64_t c[] = { 3 }, dd[] = { 4 };
    CHECK(!glow_broadcast_shapes(1, c, 1, dd, &r, out));
    CHECK(glow_broadcast_shapes(0, NULL, 2, d2, &r, out));
    CHECK(r == 2 && out[0] == 2 && out[1] == 3);
    int64_t z[] = { 0, 1 }, z2[] = { 1, 5 };
    CHECK(glow_broadcast_shapes(2, z, 2, z2, &r, out));
    CHECK(out[0] == 0 && out[1] == 5);
}

static void test_tensors(void)
{
    glow_diag d;
    glow_diag_clear(&d);
    int64_t dims[] = { 5 };
    glow_type t = glow_type_make(GLOW_F32, 1, dims);
    glow_tensor x;
    CHECK_EQ(glow_tensor_alloc(&x, &t, &d), GLOW_OK);
    CHECK(x.owned && x.data);
    CHECK_EQ(glow_tensor_bytes(&x), 20);
    float *p = x.data;
    CHECK(p[0] == 0 && p[4] == 0);
    p[0] = 1;
    p[1] = 2.5f;
    p[2] = 3;
    p[3] = 0.1f;
    p[4] = -1e-7f;
    char *text = NULL;
    CAPTURE(text, glow_tensor_print(OUT, &x, 3));
    CHECK_STR_EQ(text, "[1, 2.5, 3, ...]");
    free(text);
    CAPTURE(text, glow_tensor_print(OUT, &x, 10));
    CHECK_STR_EQ(text, "[1, 2.5, 3, 0.1, -1e-07]");
    free(text);

    float other[5] = { 1, 2.5f, 3, 0.1f, -1e-7f };
    glow_tensor y = glow_tensor_borrow(&t, other);
    CHECK(!y.owned);
    CHECK(glow_tensor_equal(&x, &y));
    other[4] = 0;
    CHECK(!glow_tensor_equal(&x, &y));
    glow_tensor_free(&y);   /* borrowed: must not free `other` */
    glow_tensor_free(&x);
    CHECK(x.data == NULL);

    glow_type b = glow_type_make(GLOW_BOOL, 1, dims);
    uint8_t bools[5] = { 1, 0, 1, 0, 0 };
    glow_tensor bt = glow_tensor_borrow(&b, bools);
    CAPTURE(text, glow_tensor_print(OUT, &bt, 2));
    CHECK_STR_EQ(text, "[true, false, ...]");
    free(text);

    /* Absurd sizes fail with TOO_LARGE and a message, never abort. */
    int64_t huge[] = { INT64_MAX / 8, 16 };
    glow_type h = glow_type_make(GLOW_F32, 2, huge);
    CHECK_EQ(glow_tensor_alloc(&x, &h, &d), GLOW_ERR_TOO_LARGE);
    CHECK(x.data == NULL);
    CHECK_CONTAINS(d.msg, "f32[");
    glow_diag_clear(&d);
    int64_t big[] = { (int64_t)1 << 40, (int64_t)1 << 10 };
    h = glow_type_make(GLOW_F64, 2, big);
    CHECK_EQ(glow_tensor_alloc(&x, &h, &d), GLOW_ERR_TOO_LARGE);
    glow_diag_clear(&d);
    int64_t neg[] = { -1 };
    h = glow_type_make(GLOW_F32, 1, neg);
    CHECK_EQ(glow_tensor_alloc(&x, &h, &d), GLOW_ERR_TOO_LARGE);
}

static void test_tables(void)
{
    CHECK_STR_EQ(glow_node_kind_name(NK_CONV), "Conv");
    CHECK_EQ(glow_node_kind_min_in(NK_CONV), 2);
    CHECK_EQ(glow_node_kind_max_in(NK_CONV), 3);
    CHECK_EQ(glow_node_kind_max_out(NK_TOPK), 2);
    CHECK(glow_node_kind_flags(NK_ADD) & NF_COMMUTATIVE);
    CHECK(glow_node_kind_flags(NK_CONSTANT) & NF_STORAGE);
    CHECK_STR_EQ(glow_node_kind_required_attrs(NK_GEMM), "alpha beta transA transB");
    CHECK_STR_EQ(glow_attr_name(GA_DILATIONS), "dilations");
    CHECK_EQ(glow_attr_kind_of(GA_SCALES), AK_FLOATS);
    glow_attr_id a;
    CHECK(glow_attr_from_name("transB", &a) && a == GA_TRANS_B);
    CHECK(!glow_attr_from_name("nope", &a));
}

static const char expected_module[] =
    "module {\n"
    "  %w = Constant : f32[4, 3, 3, 3]\n"
    "  %b = Constant [0.5, -1, 2, 0.1] : f32[4]\n"
    "  %shape = Constant [1, 2] : i64[2]\n"
    "  %data = Placeholder input : f32[1, 3, 8, 8]\n"
    "  %out = Placeholder output : f32[1, 4, 8, 8]\n"
    "  %idx = Placeholder output : i64[1, 4, 8, 2]\n"
    "}\n"
    "function main {\n"
    "  %conv1 = Conv(%data, %w, %b) {kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], "
    "dilations=[1, 1], group=1} : f32[1, 4, 8, 8]\n"
    "  %relu = Relu(%conv1) : f32[1, 4, 8, 8]\n"
    "  %topk = TopK(%relu) {axis=3, k=2, largest=1, sorted=1} : f32[1, 4, 8, 2], i64[1, 4, 8, 2]\n"
    "  %\"odd name\" = LeakyRelu(%relu) {alpha=0.1} : f32[1, 4, 8, 8]\n"
    "  %10 = Pad(%\"odd name\") {pads=[0, 0, 0, 0, 0, 0, 0, 0], mode=\"constant\", value=0} : "
    "f32[1, 4, 8, 8]\n"
    "  Save(%10, %out)\n"
    "  Save(%topk.1, %idx)\n"
    "}\n";

static void test_graph(void)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    CHECK(glow_module_function(m, "main") == f);
    CHECK(glow_module_function(m, "other") == NULL);

    int64_t wd[] = { 4, 3, 3, 3 }, bd[] = { 4 }, sd[] = { 2 }, xd[] = { 1, 3, 8, 8 },
            yd[] = { 1, 4, 8, 8 }, kd[] = { 1, 4, 8, 2 };
    glow_type wt = glow_type_make(GLOW_F32, 4, wd), bt = glow_type_make(GLOW_F32, 1, bd),
              st = glow_type_make(GLOW_I64, 1, sd), xt = glow_type_make(GLOW_F32, 4, xd),
              yt = glow_type_make(GLOW_F32, 4, yd), kt = glow_type_make(GLOW_F32, 4, kd),
              it = glow_type_make(GLOW_I64, 4, kd);
    glow_node *w = glow_constant_create(m, "w", &wt, NULL);
    float bias[] = { 0.5f, -1, 2, 0.1f };
    glow_node *b = glow_constant_create(m, "b", &bt, bias);
    int64_t shape[] = { 1, 2 };
    glow_node *sh = glow_constant_create(m, "shape", &st, shape);
    CHECK(w && b && sh);
    CHECK(((float *)w->payload.data)[107] == 0);
    CHECK(b->payload.data != bias && ((float *)b->payload.data)[1] == -1);
    /* Outputs created before an input still print after it. */
    glow_node *out = glow_placeholder_create(m, "out", &yt, false);
    glow_node *data = glow_placeholder_create(m, "data", &xt, true);
    glow_node *idx = glow_placeholder_create(m, "idx", &it, false);
    CHECK(glow_module_find_placeholder(m, "data") == data);
    CHECK(glow_module_find_placeholder(m, "nope") == NULL);
    CHECK(m->placeholders.first == data && m->placeholders.count == 3);
    CHECK(w->fn == NULL && w->id == 0 && b->id == 1);

    /* An absurd constant is refused with NULL, not an abort. */
    int64_t hd[] = { INT64_MAX / 4, 2 };
    glow_type ht = glow_type_make(GLOW_F32, 2, hd);
    CHECK(glow_constant_create(m, "huge", &ht, NULL) == NULL);
    int64_t hd2[] = { (int64_t)1 << 40, 1 << 20 };
    ht = glow_type_make(GLOW_U8, 2, hd2);
    CHECK(glow_constant_create(m, "huge2", &ht, NULL) == NULL);
    CHECK_EQ(m->constants.count, 3);

    glow_value cin[] = { glow_val(data, 0), glow_val(w, 0), glow_val(b, 0) };
    glow_node *conv = glow_node_create(f, NK_CONV, "conv1", cin, 3, &yt, 1);
    int64_t k[] = { 3, 3 }, one[] = { 1, 1 }, pads[] = { 1, 1, 1, 1 };
    /* Set out of attrs.def order: printing sorts them. */
    glow_node_set_int(conv, GA_GROUP, 1);
    glow_node_set_ints(conv, GA_DILATIONS, one, 2);
    glow_node_set_ints(conv, GA_PADS, pads, 4);
    glow_node_set_ints(conv, GA_KERNEL, k, 2);
    glow_node_set_ints(conv, GA_STRIDES, one, 2);
    glow_node *relu = glow_node_create(f, NK_RELU, "relu", (glow_value[]){ glow_val(conv, 0) },
                                       1, &yt, 1);
    glow_type topk_types[] = { kt, it };
    glow_node *topk = glow_node_create(f, NK_TOPK, "topk", (glow_value[]){ glow_val(relu, 0) },
                                       1, topk_types, 2);
    glow_node_set_int(topk, GA_AXIS, 3);
    glow_node_set_int(topk, GA_K, 2);
    glow_node_set_int(topk, GA_LARGEST, 1);
    glow_node_set_int(topk, GA_SORTED, 1);
    glow_node *leaky = glow_node_create(f, NK_LEAKY_RELU, "odd name",
                                        (glow_value[]){ glow_val(relu, 0) }, 1, &yt, 1);
    glow_node_set_float(leaky, GA_ALPHA, 0.1f);
    glow_node *pad = glow_node_create(f, NK_PAD, NULL, (glow_value[]){ glow_val(leaky, 0) }, 1,
                                      &yt, 1);
    CHECK(pad->name && pad->name[0] == '\0');
    int64_t zeros[8] = { 0 };
    glow_node_set_ints(pad, GA_PADS, pads, 4);
    glow_node_set_ints(pad, GA_PADS, zeros, 8);   /* replaces, does not add */
    glow_node_set_str(pad, GA_MODE, "reflect");
    glow_node_set_str(pad, GA_MODE, "constant");
    glow_node_set_float(pad, GA_VALUE, 0);
    CHECK_EQ(pad->nattr, 3);
    /* A temporary node, to be bypassed and erased. */
    glow_node *tmp = glow_node_create(f, NK_RELU, "tmp", (glow_value[]){ glow_val(pad, 0) }, 1,
                                      &yt, 1);
    glow_node *save = glow_save_create(f, "", glow_val(tmp, 0), out);
    glow_save_create(f, NULL, glow_val(topk, 1), idx);
    CHECK_EQ(save->nout, 0);
    CHECK_EQ(f->nodes.count, 8);

    glow_function_count_users(f);
    CHECK_EQ(relu->nusers, 2);
    CHECK_EQ(tmp->nusers, 1);
    CHECK_EQ(pad->nusers, 1);
    CHECK_EQ(w->nusers, 1);
    CHECK_EQ(sh->nusers, 0);

    glow_replace_all_uses(f, glow_val(tmp, 0), glow_val(pad, 0));
    CHECK(save->ins[0].node == pad);
    CHECK(save->ins[1].node == out);
    glow_function_count_users(f);
    CHECK_EQ(tmp->nusers, 0);
    CHECK_EQ(pad->nusers, 2);   /* the save, and tmp until it is erased */
    glow_node_erase(tmp);
    CHECK_EQ(f->nodes.count, 7);
    glow_node_erase(tmp);   /* erasing twice is harmless */
    CHECK_EQ(f->nodes.count, 7);
    int n = 0;
    GLOW_FOR_EACH_NODE(f, it2) {
        CHECK(it2 != tmp);
        n++;
    }
    CHECK_EQ(n, 7);
    CHECK(conv->id < relu->id && pad->id == 10);

    /* Attribute getters and comparison. */
    int cnt = 0;
    const int64_t *pp = glow_node_ints(pad, GA_PADS, &cnt);
    CHECK(cnt == 8 && pp && pp[7] == 0 && pp != zeros);
    CHECK_STR_EQ(glow_node_str(pad, GA_MODE, NULL), "constant");
    CHECK_STR_EQ(glow_node_str(pad, GA_DIRECTION, "dflt"), "dflt");
    CHECK_EQ(glow_node_int(topk, GA_K, -1), 2);
    CHECK_EQ(glow_node_int(topk, GA_BLOCKSIZE, -1), -1);
    CHECK_NEAR(glow_node_float(leaky, GA_ALPHA, 0), 0.1f, 0);
    CHECK(glow_node_attr(conv, GA_AXIS) == NULL);
    CHECK(glow_node_ints(conv, GA_AXES, &cnt) == NULL && cnt == 0);
    glow_node *conv2 = glow_node_create(f, NK_CONV, "conv2", cin, 3, &yt, 1);
    glow_node_set_ints(conv2, GA_KERNEL, k, 2);
    glow_node_set_ints(conv2, GA_STRIDES, one, 2);
    glow_node_set_ints(conv2, GA_PADS, pads, 4);
    glow_node_set_ints(conv2, GA_DILATIONS, one, 2);
    CHECK(!glow_attrs_equal(conv, conv2));
    glow_node_set_int(conv2, GA_GROUP, 1);
    CHECK(glow_attrs_equal(conv, conv2));   /* same set, different order */
    glow_node_set_int(conv2, GA_GROUP, 2);
    CHECK(!glow_attrs_equal(conv, conv2));
    glow_node_erase(conv2);

    char *text = NULL;
    CAPTURE(text, glow_module_print(OUT, m));
    CHECK_STR_EQ(text, expected_module);
    free(text);

    /* Names that would be ambiguous are quoted; a bare result index is appended. */
    glow_node *dotted = glow_node_create(f, NK_TOPK, "x.1", (glow_value[]){ glow_val(relu, 0) },
                                         1, topk_types, 2);
    glow_node *user = glow_node_create(f, NK_NEG, "conv1.weight/q:0",
                                       (glow_value[]){ glow_val(dotted, 1) }, 1, &it, 1);
    glow_node *digits = glow_node_create(f, NK_NEG, "42", (glow_value[]){ glow_val(user, 0) },
                                         1, &it, 1);
    CAPTURE(text, glow_function_print(OUT, f));
    CHECK_CONTAINS(text, "  %conv1.weight/q:0 = Neg(%\"x.1\".1) : i64[1, 4, 8, 2]\n");
    CHECK_CONTAINS(text, "  %\"42\" = Neg(%conv1.weight/q:0)");
    CHECK(strncmp(text, "function main {\n", 16) == 0);
    free(text);
    glow_node_erase(digits);
    glow_node_erase(user);
    glow_node_erase(dotted);

    CAPTURE(text, glow_function_dump_dot(OUT, f));
    CHECK(strncmp(text, "digraph \"main\" {\n", 17) == 0);
    CHECK_CONTAINS(text, "shape=ellipse, label=\"Constant\\nw\\nf32[4, 3, 3, 3]\"");
    CHECK_CONTAINS(text, "shape=ellipse, label=\"Placeholder input\\ndata\\n");
    CHECK_CONTAINS(text, "shape=box, label=\"Conv\\nconv1\\nf32[1, 4, 8, 8]\"");
    CHECK_CONTAINS(text, "label=\"TopK\\ntopk\\nf32[1, 4, 8, 2]\\ni64[1, 4, 8, 2]\"");
    char edge[64];
    snprintf(edge, sizeof(edge), "n%u -> n%u;", w->id, conv->id);
    CHECK_CONTAINS(text, edge);
    CHECK_CONTAINS(text, "[label=\"1\"];");
    CHECK(strstr(text, "shape=ellipse, label=\"Constant\\nshape") == NULL); /* unused */
    /* Well formed: balanced braces and quotes, ends with the closing brace. */
    int depth = 0, quotes = 0;
    for (const char *c = text; *c; c++) {
        if (*c == '\\' && c[1]) {
            c++;
            continue;
        }
        if (*c == '"')
            quotes++;
        else if (!(quotes & 1) && *c == '{')
            depth++;
        else if (!(quotes & 1) && *c == '}')
            depth--;
        CHECK(depth >= 0);
    }
    CHECK_EQ(depth, 0);
    CHECK_EQ(quotes & 1, 0);
    size_t len = strlen(text);
    CHECK(len > 2 && strcmp(text + len - 2, "}\n") == 0);
    free(text);

    /* A name with a quote is escaped in DOT. */
    glow_function *g = glow_function_create(m, "say \"hi\"");
    glow_node_create(g, NK_RELU, "a\"b", (glow_value[]){ glow_val(data, 0) }, 1, &xt, 1);
    CAPTURE(text, glow_function_dump_dot(OUT, g));
    CHECK_CONTAINS(text, "digraph \"say \\\"hi\\\"\" {");
    CHECK_CONTAINS(text, "Relu\\na\\\"b\\n");
    free(text);
    CAPTURE(text, glow_function_print(OUT, g));
    CHECK_CONTAINS(text, "function \"say \\\"hi\\\"\" {\n  %\"a\\\"b\" = Relu(%data)");
    free(text);
    CHECK(m->functions == f && f->next == g);

    glow_module_destroy(m);
}

int main(void)
{
    test_types();
    test_tensors();
    test_tables();
    test_graph();
    return CHECK_DONE();
}
