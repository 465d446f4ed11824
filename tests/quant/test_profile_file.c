// test_profile_file.c - The profile keys of a hand-built graph (duplicate, empty and clashing
// names, several results, non-float results) and the profile reader: a round trip through the
// writer, and each way a file can be wrong, with the message naming the file and the key.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "quant/quant.h"

/* --- keys --- */

static glow_node *relu(glow_function *f, const char *name, glow_value x)
{
    glow_diag d = { 0 };
    glow_node *n = glow_build(f, NK_RELU, name, &x, 1, NULL, 0, NULL, 0, &d);
    CHECK(n != NULL);
    return n;
}

static void check_keys(void)
{
    glow_module *m = glow_module_create();
    glow_function *f = glow_function_create(m, "main");
    int64_t dims[2] = { 2, 4 };
    glow_type t = glow_type_make(GLOW_F32, 2, dims);
    glow_type ti = glow_type_make(GLOW_I64, 2, dims);
    glow_node *x = glow_placeholder_create(m, "x", &t, true);
    glow_node *idx = glow_placeholder_create(m, "ids", &ti, true); /* not float: no key */
    glow_node *a1 = relu(f, "a", glow_val(x, 0));
    glow_node *a2 = relu(f, "a", glow_val(a1, 0));
    /* Literally what a 3rd "a" would get, then what the 2nd got. */
    glow_node *lit = relu(f, "a#3", glow_val(a2, 0));
    glow_node *lit2 = relu(f, "a#2", glow_val(lit, 0));
    glow_node *a3 = relu(f, "a", glow_val(lit2, 0));
    glow_node *e1 = relu(f, "", glow_val(a3, 0));
    glow_node *e2 = relu(f, "", glow_val(e1, 0));
    glow_node *xname = relu(f, "x", glow_val(e2, 0));  /* the input's name, on a node */
    /* Three results: "ln", "ln:1", "ln:2". */
    glow_type ts = glow_type_make(GLOW_F32, 1, (int64_t[]){ 4 });
    glow_node *scale = glow_constant_create(m, "scale", &ts, NULL);
    glow_diag d = { 0 };
    glow_value lin[2] = { glow_val(xname, 0), glow_val(scale, 0) };
    glow_node *ln = glow_build(f, NK_LAYER_NORM, "ln", lin, 2,
                               (glow_attr_init[]){ GLOW_AI(AXIS, 1), GLOW_AF(EPSILON, 1e-5) },
                               2, NULL, 0, &d);
    if (!ln)
        fprintf(stderr, "%s\n", d.msg);
    CHECK(ln != NULL && ln->nout == 3);
    /* TopK: values keyed, indices (i64) not. */
    glow_node *tk = glow_build(f, NK_TOPK, "top", (glow_value[]){ glow_val(xname, 0) }, 1,
                               (glow_attr_init[]){ GLOW_AI(AXIS, 1), GLOW_AI(K, 2),
                                                   GLOW_AI(LARGEST, 1), GLOW_AI(SORTED, 1) },
                               4, NULL, 0, &d);
    if (!tk)
        fprintf(stderr, "%s\n", d.msg);
    glow_node *out = glow_placeholder_create(m, "y", &t, false);
    glow_save_create(f, "save", glow_val(xname, 0), out);

    glow_profile_keys ks;
    CHECK(glow_profile_keys_make(f, &ks, &d) == GLOW_OK);
    const char *want[] = { "x", "a", "a#2", "a#3", "a#2#2", "a#4", "Relu", "Relu#2", "x#2",
                           "ln", "ln:1", "ln:2", "top" };
    int nwant = (int)(sizeof want / sizeof want[0]);
    CHECK_EQ(ks.n, nwant);
    for (int i = 0; i < ks.n && i < nwant; i++) {
        printf("  %-8s %s\n", ks.items[i].key, ks.items[i].v.node->name);
        CHECK_STR_EQ(ks.items[i].key, want[i]);
    }
    CHECK_STR_EQ(glow_profile_key_of(&ks, glow_val(lit, 0)), "a#3");
    CHECK_STR_EQ(glow_profile_key_of(&ks, glow_val(lit2, 0)), "a#2#2");
    CHECK_STR_EQ(glow_profile_key_of(&ks, glow_val(a3, 0)), "a#4");
    CHECK_STR_EQ(glow_profile_key_of(&ks, glow_val(x, 0)), "x");
    CHECK_STR_EQ(glow_profile_key_of(&ks, glow_val(ln, 2)), "ln:2");
    CHECK(glow_profile_key_of(&ks, glow_val(idx, 0)) == NULL);
    if (tk)
        CHECK(glow_profile_key_of(&ks, glow_val(tk, 1)) == NULL);
    CHECK(glow_profile_key_of(&ks, glow_val(scale, 0)) == NULL);
    /* The quantizer's lookup: found, of another type, absent, not keyed. */
    const char *text = "{\"format\": \"glowc-profile\", \"version\": 1, \"samples\": 1, "
                       "\"bins\": 1, \"values\": ["
                       "{\"key\": \"x\", \"type\": \"f32[2, 4]\", \"min\": 0, \"max\": 1, "
                       "\"nan\": 0, \"inf\": 0, \"histogram\": [8]}, "
                       "{\"key\": \"a\", \"type\": \"f32[3]\", \"min\": 0, \"max\": 1, "
                       "\"nan\": 0, \"inf\": 0, \"histogram\": [3]}]}";
    glow_profile *pf = NULL;
    CHECK(glow_profile_parse("p.json", text, strlen(text), &pf, &d) == GLOW_OK);
    const glow_profile_entry *e = NULL;
    if (pf) {
        CHECK(glow_profile_lookup(pf, &ks, glow_val(x, 0), &e, &d) == GLOW_OK);
        CHECK(e && e->histogram[0] == 8);
        CHECK(glow_profile_lookup(pf, &ks, glow_val(a1, 0), &e, &d) == GLOW_ERR_BAD_TYPE);
        CHECK_CONTAINS(d.msg, "profile 'p.json': value 'a' was profiled as f32[3], the graph "
                       "has f32[2, 4]");
        glow_diag_clear(&d);
        CHECK(glow_profile_lookup(pf, &ks, glow_val(a2, 0), &e, &d) == GLOW_ERR_NOT_FOUND);
        CHECK_CONTAINS(d.msg, "profile 'p.json' has no value 'a#2'");
        glow_diag_clear(&d);
        CHECK(glow_profile_lookup(pf, &ks, glow_val(idx, 0), &e, &d) != GLOW_OK);
        CHECK(e == NULL);
        glow_diag_clear(&d);
    }
    glow_profile_free(pf);
    /* The same graph keys the same way. */
    glow_profile_keys again;
    CHECK(glow_profile_keys_make(f, &again, &d) == GLOW_OK);
    CHECK_EQ(again.n, ks.n);
    for (int i = 0; i < ks.n && i < again.n; i++)
        CHECK_STR_EQ(again.items[i].key, ks.items[i].key);
    glow_profile_keys_free(&again);
    glow_profile_keys_free(&ks);
    glow_module_destroy(m);
}

/* --- the reader --- */

#define PATH "dir/p.json"

/* Parses text as the file PATH; returns the message of a failure ("" on success). */
static const char *parse(const char *text, glow_profile **out)
{
    static glow_diag d;
    glow_diag_clear(&d);
    glow_profile *pf = NULL;
    glow_status s = glow_profile_parse(PATH, text, strlen(text), &pf, &d);
    if (out)
        *out = pf;
    else
        glow_profile_free(pf);
    if (s == GLOW_OK)
        return "";
    CHECK(pf == NULL);
    CHECK_CONTAINS(d.msg, "'" PATH "'");
    return d.msg;
}

#define HEAD "{\"format\": \"glowc-profile\", \"version\": 1, \"model\": \"m.onnx\", "
#define GOOD_VALUE "{\"key\": \"k\", \"type\": \"f32[2]\", \"min\": -1.5, \"max\": 2, " \
                   "\"nan\": 1, \"inf\": 0, \"histogram\": [1, 0, 0, 3]}"

static void check_good(void)
{
    glow_profile *pf = NULL;
    const char *text = HEAD "\"samples\": 2, \"bins\": 4, \"future\": {\"a\": [1, true, null]},"
                       " \"values\": [" GOOD_VALUE ", {\"key\": \"q\\\"\\\\\\u00e9\\ud83d\\ude00\","
                       " \"type\": \"f16[1]\", \"min\": 0, \"max\": 0, \"nan\": 0, \"inf\": 2,"
                       " \"histogram\": [0, 0, 0, 0]}]}";
    CHECK_STR_EQ(parse(text, &pf), "");
    if (!pf)
        return;
    CHECK_EQ(pf->n, 2);
    CHECK_EQ(pf->bins, 4);
    CHECK_EQ(pf->samples, 2);
    CHECK_STR_EQ(pf->model, "m.onnx");
    const glow_profile_entry *e = glow_profile_find(pf, "k");
    CHECK(e && e->min == -1.5f && e->max == 2.0f && e->nan == 1 && e->histogram[3] == 3);
    CHECK(glow_profile_find(pf, "q\"\\\xc3\xa9\xf0\x9f\x98\x80") != NULL);
    CHECK(glow_profile_find(pf, "nothing") == NULL);
    /* Written and read again: the same profile, and the writer's bytes are stable. */
    size_t len = 0, len2 = 0;
    char *json = glow_profile_to_json(pf, &len);
    glow_profile *back = NULL;
    CHECK_STR_EQ(parse(json, &back), "");
    char *json2 = back ? glow_profile_to_json(back, &len2) : NULL;
    CHECK(json2 && len == len2 && !memcmp(json, json2, len));
    printf("%s", json);
    free(json);
    free(json2);
    glow_profile_free(back);
    glow_profile_free(pf);
    /* Floats written with %.9g come back as the same f32. */
    glow_profile p2 = { .model = "m", .bins = 1, .n = 1 };
    uint64_t h = 5;
    glow_profile_entry pe = { .key = "v", .type = "f32[5]", .min = -0.0f, .max = 3.14159274f,
                              .histogram = &h };
    pe.min = 1.17549435e-38f;
    pe.max = 3.40282347e+38f;
    p2.entries = &pe;
    json = glow_profile_to_json(&p2, &len);
    CHECK_STR_EQ(parse(json, &back), "");
    e = back ? glow_profile_find(back, "v") : NULL;
    CHECK(e && e->min == pe.min && e->max == pe.max);
    free(json);
    glow_profile_free(back);
}

static void check_errors(void)
{
    const char *m;
    m = parse("hello", NULL);
    CHECK_CONTAINS(m, "not valid JSON: line 1, column 1");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [" GOOD_VALUE "]", NULL);
    CHECK_CONTAINS(m, "the text ends");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": []} x", NULL);
    CHECK_CONTAINS(m, "text after the end");
    m = parse("{\"format\": \"onnx\", \"version\": 1}", NULL);
    CHECK_CONTAINS(m, "not a glowc profile ('format' is 'onnx'");
    m = parse("{\"version\": 1}", NULL);
    CHECK_CONTAINS(m, "not a glowc profile (no 'format')");
    m = parse("{\"format\": \"glowc-profile\", \"version\": 2}", NULL);
    CHECK_CONTAINS(m, "version 2; this glowc reads version 1");
    m = parse(HEAD "\"samples\": 2, \"values\": []}", NULL);
    CHECK_CONTAINS(m, "no 'bins'");
    m = parse(HEAD "\"samples\": 2, \"bins\": 0, \"values\": []}", NULL);
    CHECK_CONTAINS(m, "'bins' is 0");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"type\": \"f32[1]\"}]}", NULL);
    CHECK_CONTAINS(m, "values[0] has no 'key'");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"c1\", \"type\": "
              "\"f32[1]\", \"min\": 0, \"nan\": 0, \"inf\": 0, \"histogram\": [0,0,0,0]}]}", NULL);
    CHECK_CONTAINS(m, "value 'c1' has no 'max'");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"c1\", \"type\": "
              "\"f32[1]\", \"min\": NaN, \"max\": 1, \"nan\": 0, \"inf\": 0, \"histogram\": "
              "[0,0,0,0]}]}", NULL);
    CHECK_CONTAINS(m, "value 'c1': the range [nan, 1] is not finite");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"c1\", \"type\": "
              "\"f32[1]\", \"min\": 0, \"max\": 1e39, \"nan\": 0, \"inf\": 0, \"histogram\": "
              "[0,0,0,0]}]}", NULL);
    CHECK_CONTAINS(m, "value 'c1': the range [0, inf] is not finite");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"c1\", \"type\": "
              "\"f32[1]\", \"min\": 2, \"max\": 1, \"nan\": 0, \"inf\": 0, \"histogram\": "
              "[0,0,0,0]}]}", NULL);
    CHECK_CONTAINS(m, "value 'c1': min 2 is above max 1");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"c1\", \"type\": "
              "\"f32[1]\", \"min\": 0, \"max\": 1, \"nan\": 0, \"inf\": 0, \"histogram\": "
              "[0,0,0]}]}", NULL);
    CHECK_CONTAINS(m, "value 'c1': the histogram has 3 counts, 'bins' is 4");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"c1\", \"type\": "
              "\"f32[1]\", \"min\": 0, \"max\": 1, \"nan\": 0, \"inf\": 0, \"histogram\": "
              "[0,-1,0,0]}]}", NULL);
    CHECK_CONTAINS(m, "values[0].histogram is -1, not a count");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [" GOOD_VALUE ", " GOOD_VALUE
              "]}", NULL);
    CHECK_CONTAINS(m, "value 'k' appears twice");
    m = parse(HEAD "\"samples\": 2, \"bins\": 4, \"values\": [{\"key\": \"a\nb\"}]}", NULL);
    CHECK_CONTAINS(m, "control character");
    m = parse(HEAD "\"samples\": 01}", NULL);
    CHECK_CONTAINS(m, "leading zero");
    /* Deep nesting in an unknown field is refused, not a stack overflow. */
    char deep[400] = "{\"x\": ";
    for (int i = 0; i < 100; i++)
        strcat(deep, "[");
    m = parse(deep, NULL);
    CHECK_CONTAINS(m, "nested more than");
    /* A file that is not there, and one that is binary. */
    glow_profile *pf = NULL;
    glow_diag d = { 0 };
    CHECK(glow_profile_load("/nonexistent/p.json", &pf, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "/nonexistent/p.json");
    CHECK(pf == NULL);
    m = parse("\x01\x02", NULL);
    CHECK_CONTAINS(m, "found the byte 0x01");
}

int main(void)
{
    check_keys();
    check_good();
    check_errors();
    return CHECK_DONE();
}
