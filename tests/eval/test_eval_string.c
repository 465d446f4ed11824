// test_eval_string.c - String tensors: owned string tensors, .pb files with string_data, the
// string ops' evaluation (Cast, StringSplit, RegexFullMatch, LabelEncoder, StringNormalizer,
// TfIdfVectorizer), folding without a string store, and a compiled program whose string
// outputs outlive the caller's inputs.
#include "check.h"
#include "eval/eval.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;
static glow_arena Store;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static glow_node *strings(const char *name, int rank, const int64_t *dims,
                          const char *const *vals)
{
    glow_type t = glow_type_make(GLOW_STRING, rank, dims);
    return glow_constant_create(M, name, &t, vals);
}

static glow_node *build(glow_node_kind k, glow_node *const *in, int nin, const glow_attr *a,
                        int na, const glow_type *decl, int ndecl)
{
    glow_value v[5];
    for (int i = 0; i < nin; i++)
        v[i] = glow_val(in[i], 0);
    glow_diag_clear(&D);
    glow_node *n = glow_build(F, k, "n", v, nin, a, na, decl, ndecl, &D);
    if (!n)
        fprintf(stderr, "build: %s\n", D.msg);
    return n;
}

/* Evaluates n on its constant operands with the test's string store bound. */
static glow_status eval(glow_node *n, glow_tensor *out)
{
    glow_tensor ins[5];
    for (uint32_t i = 0; i < n->nin; i++)
        ins[i] = n->ins[i].node->payload;
    glow_arena *old = glow_eval_bind_strings(&Store);
    glow_diag_clear(&D);
    glow_status s = glow_eval_node(n, ins, out, &D);
    glow_eval_bind_strings(old);
    return s;
}

static void test_tensors_and_files(void)
{
    const char *vals[] = { "a", NULL, "héllo" };
    glow_type t = glow_type_make(GLOW_STRING, 1, DIMS(3));
    glow_tensor a, b;
    CHECK(glow_tensor_alloc_strings(&a, &t, vals, &D) == GLOW_OK);
    CHECK_STR_EQ(glow_str_at(a.data, 1), "");
    CHECK_STR_EQ(glow_str_at(a.data, 2), "héllo");
    uint8_t *pb;
    size_t n;
    CHECK(glow_tensor_to_pb(&a, "x", &pb, &n, &D) == GLOW_OK);
    char *name = NULL;
    CHECK(glow_tensor_read_pb(pb, n, &b, &name, &D) == GLOW_OK);
    CHECK(glow_tensor_equal(&a, &b));     /* by bytes: the handles differ */
    CHECK(a.data != b.data && ((glow_str *)a.data)[0] != ((glow_str *)b.data)[0]);
    CHECK_STR_EQ(name, "x");
    ((glow_str *)b.data)[0] = "b";
    CHECK(!glow_tensor_equal(&a, &b));
    free(name);
    free(pb);
    glow_tensor_free(&a);
    glow_tensor_free(&b);
}

static void test_cast(void)
{
    float f[] = { 0.1f, -3.0f, INFINITY, NAN, 1e-5f };
    glow_type ft = glow_type_make(GLOW_F32, 1, DIMS(5));
    glow_node *x = glow_constant_create(M, "f", &ft, f);
    glow_type st = glow_type_make(GLOW_STRING, 1, DIMS(5));
    glow_node *c = build(NK_CAST, &x, 1, NULL, 0, &st, 1);
    CHECK(c && glow_eval_supported(c));
    glow_tensor out;
    /* Folding has no string store: the node is kept. */
    glow_tensor in = x->payload;
    CHECK(glow_eval_node(c, &in, &out, &D) == GLOW_ERR_UNSUPPORTED);
    CHECK(eval(c, &out) == GLOW_OK);
    const char *want[] = { "0.1", "-3", "INF", "NaN", "1e-05" };
    for (int i = 0; i < 5; i++)
        CHECK_STR_EQ(glow_str_at(out.data, (size_t)i), want[i]);
    glow_tensor_free(&out);

    const char *sv[] = { "100.5", "-7", "+INF", "1E3", "nan" };
    glow_node *s = strings("s", 1, DIMS(5), sv);
    glow_type it = glow_type_make(GLOW_I32, 1, DIMS(5));
    glow_node *ci = build(NK_CAST, &s, 1, NULL, 0, &it, 1);
    CHECK(ci && eval(ci, &out) == GLOW_OK);
    CHECK_EQ(((int32_t *)out.data)[0], 100);
    CHECK_EQ(((int32_t *)out.data)[1], -7);
    CHECK_EQ(((int32_t *)out.data)[3], 1000);
    glow_tensor_free(&out);
    glow_node *cf = build(NK_CAST, &s, 1, NULL, 0, &ft, 1);
    CHECK(cf && eval(cf, &out) == GLOW_OK);
    CHECK(isinf(((float *)out.data)[2]) && isnan(((float *)out.data)[4]));
    glow_tensor_free(&out);
    const char *bad[] = { "12abc" };
    glow_node *b = strings("bad", 1, DIMS(1), bad);
    glow_type one = glow_type_make(GLOW_F32, 1, DIMS(1));
    glow_node *cb = build(NK_CAST, &b, 1, NULL, 0, &one, 1);
    CHECK(cb && eval(cb, &out) == GLOW_ERR_RUNTIME);
    CHECK_CONTAINS(D.msg, "12abc");
}

static void test_split(void)
{
    const char *v[] = { "a,,b", "  x  y z ", "" };
    glow_node *x = strings("sx", 1, DIMS(3), v);
    glow_type decl[2] = { glow_type_make(GLOW_STRING, 2, DIMS(3, 3)),
                          glow_type_make(GLOW_I64, 1, DIMS(3)) };
    glow_attr a[] = { GLOW_ASTR(DELIMITER, ","), GLOW_AI(MAXSPLIT, -1) };
    glow_node *n = build(NK_STRING_SPLIT, &x, 1, a, 2, decl, 2);
    glow_tensor out[2];
    CHECK(n && eval(n, out) == GLOW_OK);
    CHECK_STR_EQ(glow_str_at(out[0].data, 1), "");   /* consecutive delimiters */
    CHECK_STR_EQ(glow_str_at(out[0].data, 2), "b");
    CHECK_STR_EQ(glow_str_at(out[0].data, 3), "  x  y z ");
    CHECK_EQ(((int64_t *)out[1].data)[0], 3);
    CHECK_EQ(((int64_t *)out[1].data)[2], 1);        /* "".split(",") == [""] */
    glow_tensor_free(&out[0]);
    glow_tensor_free(&out[1]);
    /* Whitespace runs, maxsplit 1: the rest stays whole, trailing blanks dropped. */
    glow_attr w[] = { GLOW_AI(MAXSPLIT, 1) };
    glow_type d2[2] = { glow_type_make(GLOW_STRING, 2, DIMS(3, 2)), decl[1] };
    n = build(NK_STRING_SPLIT, &x, 1, w, 1, d2, 2);
    CHECK(n && eval(n, out) == GLOW_OK);
    CHECK_STR_EQ(glow_str_at(out[0].data, 0), "a,,b");
    CHECK_STR_EQ(glow_str_at(out[0].data, 2), "x");
    CHECK_STR_EQ(glow_str_at(out[0].data, 3), "y z");
    CHECK_EQ(((int64_t *)out[1].data)[2], 0);
    glow_tensor_free(&out[0]);
    glow_tensor_free(&out[1]);
    /* A declared width that is not the longest split fails the run. */
    glow_type d4 = glow_type_make(GLOW_STRING, 2, DIMS(3, 4));
    n = build(NK_STRING_SPLIT, &x, 1, a, 2, &d4, 1);   /* the counts left out */
    CHECK(n && n->nout == 1 && eval(n, out) == GLOW_ERR_RUNTIME);
    CHECK_CONTAINS(D.msg, "declares 4");
}

static void test_regex(void)
{
    const char *v[] = { "ab", "abab", "a", "é" };
    glow_node *x = strings("rx", 1, DIMS(4), v);
    glow_attr a = GLOW_ASTR(PATTERN, "(ab)+");
    glow_node *n = build(NK_REGEX_FULL_MATCH, &x, 1, &a, 1, NULL, 0);
    glow_tensor out;
    CHECK(n && eval(n, &out) == GLOW_OK);
    CHECK_EQ(((uint8_t *)out.data)[0], 1);
    CHECK_EQ(((uint8_t *)out.data)[1], 1);
    CHECK_EQ(((uint8_t *)out.data)[2], 0);   /* a prefix is not a full match */
    glow_tensor_free(&out);
    glow_attr u = GLOW_ASTR(PATTERN, ".");
    n = build(NK_REGEX_FULL_MATCH, &x, 1, &u, 1, NULL, 0);
    CHECK(n && eval(n, &out) == GLOW_OK);
    CHECK_EQ(((uint8_t *)out.data)[3], 1);   /* one UTF-8 character */
    glow_tensor_free(&out);
    glow_attr bad = GLOW_ASTR(PATTERN, "(a");
    n = build(NK_REGEX_FULL_MATCH, &x, 1, &bad, 1, NULL, 0);
    CHECK(n && eval(n, &out) == GLOW_ERR_BAD_ATTR);
    CHECK_CONTAINS(D.msg, "(a");
}

static void test_label_encoder_and_normalizer(void)
{
    const char *x[] = { "b", "zz", "a" }, *keys[] = { "a", "b", "a" }, *dflt[] = { "?" };
    int64_t vals[] = { 1, 2, 3 }, dv = -1;
    glow_node *in[4] = { strings("lx", 1, DIMS(3), x), strings("lk", 1, DIMS(3), keys) };
    glow_type vt = glow_type_make(GLOW_I64, 1, DIMS(3)), dt = glow_type_make(GLOW_I64, 1, DIMS(1));
    in[2] = glow_constant_create(M, "lv", &vt, vals);
    in[3] = glow_constant_create(M, "ld", &dt, &dv);
    glow_node *n = build(NK_LABEL_ENCODER, in, 4, NULL, 0, NULL, 0);
    glow_tensor out;
    CHECK(n && eval(n, &out) == GLOW_OK);
    CHECK_EQ(((int64_t *)out.data)[0], 2);
    CHECK_EQ(((int64_t *)out.data)[1], -1);
    CHECK_EQ(((int64_t *)out.data)[2], 1);   /* the first of equal keys */
    glow_tensor_free(&out);
    in[3] = strings("lds", 1, DIMS(1), dflt);
    CHECK(!build(NK_LABEL_ENCODER, in, 4, NULL, 0, NULL, 0));   /* default of another kind */

    const char *w[] = { "Monday", "tuesday", "MONDAY", "x" }, *stop[] = { "monday" };
    glow_node *ns[2] = { strings("nw", 1, DIMS(4), w), strings("ns", 1, DIMS(1), stop) };
    glow_attr a[] = { GLOW_ASTR(MODE, "UPPER"), GLOW_AI(CASE_SENSITIVE, 0) };
    glow_type decl = glow_type_make(GLOW_STRING, 1, DIMS(2));
    n = build(NK_STRING_NORMALIZER, ns, 2, a, 2, &decl, 1);
    CHECK(n && eval(n, &out) == GLOW_OK);
    CHECK_STR_EQ(glow_str_at(out.data, 0), "TUESDAY");
    CHECK_STR_EQ(glow_str_at(out.data, 1), "X");
    glow_tensor_free(&out);
}

static void test_tfidf(void)
{
    /* Pool: unigrams {1, 2}, bigram {1, 3}; columns 0, 1, 2. */
    int64_t x[] = { 1, 2, 3, 1, 3 }, pool[] = { 1, 2, 1, 3 }, counts[] = { 0, 2 };
    int64_t idx[] = { 0, 1, 2 };
    glow_type xt = glow_type_make(GLOW_I64, 1, DIMS(5)), pt = glow_type_make(GLOW_I64, 1, DIMS(4));
    glow_type ct = glow_type_make(GLOW_I64, 1, DIMS(2)), it = glow_type_make(GLOW_I64, 1, DIMS(3));
    glow_type wt = glow_type_make(GLOW_F32, 1, DIMS(0));
    glow_node *in[5] = { glow_constant_create(M, "tx", &xt, x),
                         glow_constant_create(M, "tp", &pt, pool),
                         glow_constant_create(M, "tc", &ct, counts),
                         glow_constant_create(M, "ti", &it, idx),
                         glow_constant_create(M, "tw", &wt, NULL) };
    glow_type decl = glow_type_make(GLOW_F32, 1, DIMS(3));
    glow_attr a[] = { GLOW_ASTR(MODE, "TF"), GLOW_AI(MIN_GRAM, 1), GLOW_AI(MAX_GRAM, 2),
                      GLOW_AI(MAX_SKIP, 1) };
    glow_node *n = build(NK_TFIDF, in, 5, a, 4, &decl, 1);
    glow_tensor out;
    CHECK(n && eval(n, &out) == GLOW_OK);
    CHECK_EQ(((float *)out.data)[0], 2);   /* unigram 1, counted once per position */
    CHECK_EQ(((float *)out.data)[1], 1);
    /* Bigram (1, 3): adjacent at 3-4, and with one skip at 0-2. */
    CHECK_EQ(((float *)out.data)[2], 2);
    glow_tensor_free(&out);
}

/* A module: string input x -> StringConcat(x, x) and Reshape(x) as outputs y and z. */
static glow_module *concat_module(void)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    glow_type t = glow_type_make(GLOW_STRING, 1, DIMS(2));
    glow_node *x = glow_placeholder_create(m, "x", &t, true);
    glow_value xv[2] = { glow_val(x, 0), glow_val(x, 0) };
    glow_node *c = glow_build(f, NK_STRING_CONCAT, "c", xv, 2, NULL, 0, NULL, 0, &D);
    glow_type t2 = glow_type_make(GLOW_STRING, 2, DIMS(1, 2));
    glow_node *r = glow_build(f, NK_RESHAPE, "r", xv, 1, NULL, 0, &t2, 1, &D);
    CHECK(c && r);
    glow_save_create(f, "s0", glow_val(c, 0), glow_placeholder_create(m, "y", &t, false));
    glow_save_create(f, "s1", glow_val(r, 0), glow_placeholder_create(m, "z", &t2, false));
    return m;
}

/* Both backends run it twice; the outputs stay readable after the caller frees its input,
 * and the second run's strings replace the first's. */
static void test_program(void)
{
    const char *backends[] = { "interpreter", "cpu" };
    glow_type t = glow_type_make(GLOW_STRING, 1, DIMS(2));
    for (int b = 0; b < 2; b++) {
        glow_compile_options o = { .backend = backends[b], .stop_after = GLOW_STAGE_COMPILED };
        glow_program *p = NULL;
        glow_diag_clear(&D);
        CHECK(glow_program_create(concat_module(), &o, &p, &D) == GLOW_OK);
        if (!p) {
            fprintf(stderr, "%s: %s\n", backends[b], D.msg);
            continue;
        }
        for (int run = 0; run < 2; run++) {
            const char *vals[] = { run ? "x" : "ab", "" };
            glow_tensor in;
            CHECK(glow_tensor_alloc_strings(&in, &t, vals, &D) == GLOW_OK);
            CHECK(glow_program_run(p, &in, 1, &D) == GLOW_OK);
            glow_tensor_free(&in);
            glow_tensor y = glow_program_output(p, 0), z = glow_program_output(p, 1);
            CHECK_STR_EQ(glow_str_at(y.data, 0), run ? "xx" : "abab");
            CHECK_STR_EQ(glow_str_at(y.data, 1), "");
            CHECK_STR_EQ(glow_str_at(z.data, 0), run ? "x" : "ab");
        }
        glow_program_destroy(p);
    }
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_tensors_and_files();
    test_cast();
    test_split();
    test_regex();
    test_label_encoder_and_normalizer();
    test_tfidf();
    test_program();
    glow_arena_release(&Store);
    glow_module_destroy(M);
    return CHECK_DONE();
}
