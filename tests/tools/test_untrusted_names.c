// test_untrusted_names.c - Names from a model are data, never terminal or file syntax: a model
// whose node, op, input and output names, doc strings and domain carry terminal escapes
// (ESC[2J clears the screen), other control characters, invalid UTF-8, quotes, comment ends
// and a 5000-character name goes through info, dump (text, DOT, IR, memory SVG), run, bench
// --json, profile, compile (bundle header) and the load errors; no output may hold a raw
// control byte or invalid UTF-8, the header must compile, and the model must still run with
// its names unchanged (an input bound by its raw name, the output file carrying its raw name).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"
#include "testlib/compare.h"
#include "testlib/onnx_build.h"
#include "testlib/spawn.h"

/* Bytes no output may carry raw: ESC (screen clear), BEL, CR, backspace, CSI (0x9b alone and
 * as U+009B), a stray continuation byte, an overlong encoding, a truncated sequence. */
#define IN_NAME "x\x1b[2J\"in'*/\xff\xfe\\"
#define MID_NAME "mid\x1b]0;title\x07\xc3\x28\r\b"
#define OUT_NAME "y\x9b" "31m\xc2\x9b" "2J\xc0\xaf<&>\xc3\xa9*/\xe2\x82"
#define OP_NODE "relu\x1b[2J\x80/*?\?/"
#define EVIL_DOMAIN "evil.\x1b[2J\xf5"
#define EVIL_OP "Bad\x1b[31m\xff"

static char long_name[5001];

/* Every byte of s is printable ASCII, a newline, or part of valid UTF-8 (no C1 controls). */
static void check_safe(const char *what, const char *s, size_t len)
{
    if (glow_text_is_safe(s, len, true))
        return;
    for (size_t i = 0; i < len; i++)
        if (!glow_text_is_safe(s + i, 1, true) && (unsigned char)s[i] < 0x80) {
            fprintf(stderr, "%s: raw control byte 0x%02x at %zu\n", what,
                    (unsigned char)s[i], i);
            break;
        }
    fprintf(stderr, "%s: unsafe text (%zu bytes)\n", what, len);
    CHECK(!"output carries raw control bytes or invalid UTF-8");
}

static void check_result(const char *what, const result *r)
{
    check_safe(what, r->out, strlen(r->out));
    check_safe(what, r->err, strlen(r->err));
}

static void check_file(const char *path)
{
    size_t len = 0;
    char *s = slurp(path, &len);
    CHECK(s != NULL);
    if (s)
        check_safe(path, s, len);
    free(s);
}

/* x -> Relu (evil name) -> mid -> Sigmoid (5000-character name) -> y, f32[2, 3]. */
static bool write_model(const char *path)
{
    mk_model *mk = mk_new(13);
    mk->model.producer_name = mk_str(mk, "producer\x1b[2J\xff");
    mk->model.doc_string = mk_str(mk, "doc\x1b[2J\xfe");
    mk->graph.doc_string = mk_str(mk, "graph doc\x07\xff");
    mk->graph.name = mk_str(mk, "graph\x1b[2J*/\xff");
    mk_input(mk, IN_NAME, MK_F32, 2, (int64_t[]){ 2, 3 });
    Onnx__NodeProto *n = mk_node(mk, "Relu", OP_NODE, 1, (const char *[]){ IN_NAME }, 1,
                                 (const char *[]){ MID_NAME });
    n->doc_string = mk_str(mk, "node doc\x1b[2J\xff");
    mk_node(mk, "Sigmoid", long_name, 1, (const char *[]){ MID_NAME }, 1,
            (const char *[]){ OUT_NAME });
    mk_output(mk, OUT_NAME, MK_F32, 2, (int64_t[]){ 2, 3 });
    bool ok = mk_write(mk, path);
    mk_free(mk);
    return ok;
}

/* One node of an unsupported op in an unknown domain, named by the long name. */
static bool write_unsupported(const char *path)
{
    mk_model *mk = mk_new(13);
    mk_opset(mk, EVIL_DOMAIN, 1);
    mk_input(mk, IN_NAME, MK_F32, 1, (int64_t[]){ 4 });
    mk_node_domain(mk, EVIL_DOMAIN, EVIL_OP, long_name, 1, (const char *[]){ IN_NAME }, 1,
                   (const char *[]){ OUT_NAME });
    mk_output(mk, OUT_NAME, MK_F32, 1, (int64_t[]){ 4 });
    bool ok = mk_write(mk, path);
    mk_free(mk);
    return ok;
}

static void check_tools(const char *model, const char *input)
{
    result r = RUN("info", model);
    CHECK_EQ(r.code, 0);
    check_result("info", &r);
    CHECK_CONTAINS(r.out, "\\x1b[2J");   /* the escape shows as text */
    result_free(&r);

    static const char *const stages[] = { "loaded", "optimized", "lowered", "ir",
                                          "ir-optimized" };
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
        r = RUN("dump", model, "--stage", stages[i]);
        CHECK_EQ(r.code, 0);
        check_result(stages[i], &r);
        result_free(&r);
        if (i >= 3)
            continue;   /* DOT is for the graph stages */
        r = RUN("dump", model, "--stage", stages[i], "--format", "dot");
        CHECK_EQ(r.code, 0);
        check_result(stages[i], &r);
        result_free(&r);
    }
    TMP(svg, "memory.svg");
    r = RUN("dump", model, "--stage", "ir-optimized", "--memory-svg", svg);
    CHECK_EQ(r.code, 0);
    check_result("memory-svg", &r);
    result_free(&r);
    check_file(svg);

    /* Runs, with the input bound by its raw name; the output keeps its raw name. */
    TMP(dir, "out");
    char bind[1300];
    snprintf(bind, sizeof bind, "%s=%s", IN_NAME, input);
    r = RUN("run", model, "--input", bind, "--output-dir", dir);
    CHECK_EQ(r.code, 0);
    check_result("run", &r);
    result_free(&r);
    TMP(out0, "out/output_0.pb");
    char *name = NULL;
    double diff = tensor_file_diff(out0, out0, &name);
    CHECK(diff == 0);
    CHECK(name && !strcmp(name, OUT_NAME));
    free(name);
    r = RUN("run", model, input);
    CHECK_EQ(r.code, 0);
    check_result("run stdout", &r);
    result_free(&r);

    r = RUN("bench", model, "--iterations", "2", "--warmup", "0", "--json");
    CHECK_EQ(r.code, 0);
    check_result("bench --json", &r);
    result_free(&r);

    TMP(profile, "profile.json");
    r = RUN("profile", model, input, "-o", profile);
    CHECK_EQ(r.code, 0);
    check_result("profile", &r);
    result_free(&r);
    check_file(profile);

    /* The header's comment table must neither break the comment nor the compiler. */
    TMP(bdir, "bundle");
    r = RUN("compile", model, "--emit-bundle", bdir, "--name", "evil");
    CHECK_EQ(r.code, 0);
    check_result("compile", &r);
    result_free(&r);
    TMP(header, "bundle/evil.h");
    check_file(header);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c %s", header);
    CHECK_EQ(system(cmd), 0);
}

static void check_errors(const char *bad, const char *model)
{
    result r = RUN("dump", bad);
    CHECK_EQ(r.code, 2);
    check_result("unsupported", &r);
    CHECK_CONTAINS(r.err, "Bad\\x1b[31m\\xff");
    CHECK_CONTAINS(r.err, "...");   /* the 5000-character name is cut short */
    CHECK(strlen(r.err) < 2000);
    result_free(&r);

    r = RUN("info", bad);
    check_result("info unsupported", &r);
    result_free(&r);

    /* An input name that is not the model's, quoting both back. */
    r = RUN("run", model, "--input", "no\x1b[2Jsuch\xff=/nonexistent.pb");
    CHECK(r.code != 0);
    check_result("bad --input", &r);
    result_free(&r);
}

int main(void)
{
    memset(long_name, 'L', sizeof long_name - 1);
    long_name[100] = '\x1b';
    long_name[4000] = '\xff';
    if (!spawn_setup("glowc_test_untrusted"))
        return 1;
    TMP(model, "evil.onnx");
    TMP(bad, "unsupported.onnx");
    TMP(input, "x.pb");
    CHECK(write_model(model));
    CHECK(write_unsupported(bad));
    CHECK(write_ramp_tensor(input, GLOW_F32, 2, (const int64_t[]){ 2, 3 }, 0.5));

    /* The escaping itself: kept, escaped, capped. */
    char buf[64];
    glow_escape(buf, sizeof buf, "a\x1b[2J\xc3\xa9\xff", GLOW_ESC_PLAIN, 0, 0);
    CHECK_STR_EQ(buf, "a\\x1b[2J\xc3\xa9\\xff");
    glow_escape(buf, sizeof buf, "q\"\\\n", GLOW_ESC_JSON, 0, 0);
    CHECK_STR_EQ(buf, "q\\\"\\\\\\u000a");
    glow_escape(buf, sizeof buf, "a*/b/*c", GLOW_ESC_COMMENT, 0, 0);
    CHECK(!strstr(buf, "*/") && !strstr(buf, "/*"));
    glow_escape(buf, sizeof buf, "abcdef", GLOW_ESC_PLAIN, 0, 3);
    CHECK_STR_EQ(buf, "abc...");
    CHECK_EQ(glow_escape(buf, 4, "\xc3\xa9\xc3\xa9", GLOW_ESC_PLAIN, 0, 0), (size_t)4);
    CHECK_STR_EQ(buf, "\xc3\xa9");   /* truncation never splits a character */

    check_tools(model, input);
    check_errors(bad, model);
    spawn_cleanup();
    return CHECK_DONE();
}
