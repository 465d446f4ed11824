// test_cli.c - Runs the built glowc binary: help, usage errors, info, dump and exit codes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "onnx/onnx.h"
#include "testlib/onnx_build.h"
#include "testlib/spawn.h"

/* The first node-suite model whose op glowc lacks, so the checks stay meaningful as op
 * coverage grows. Returns false when every candidate has become supported. */
static bool find_unsupported(const char *shared, char *path, size_t size, char *op, size_t opsz)
{
    static const char *const candidates[][3] = {
        { "test_ai_onnx_ml_binarizer", "ai.onnx.ml", "Binarizer" },
        { "test_strnormalizer_export_monday_casesensintive_lower", "", "StringNormalizer" },
        { "test_regex_full_match_basic", "", "RegexFullMatch" },
        { "test_tfidfvectorizer_tf_only_bigrams_skip0", "", "TfIdfVectorizer" },
        { "test_col2im", "", "Col2Im" },
        { "test_dft", "", "DFT" },
    };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(path, size, "%s/onnx-node-tests/node/%s/model.onnx", shared, candidates[i][0]);
        if (access(path, R_OK) != 0 ||
            glow_onnx_op_supported(candidates[i][1], candidates[i][2], 99))
            continue;
        snprintf(op, opsz, "%s", candidates[i][2]);
        return true;
    }
    return false;
}

int main(void)
{
    const char *shared = getenv("GLOWC_SHARED");
    if (!shared) {
        fprintf(stderr, "GLOWC_SHARED must be set (CTest sets it)\n");
        return 1;
    }
    if (!spawn_setup("glowc_test_cli"))
        return 1;
    result r;

    /* Global help, version and usage errors. */
    r = RUN("--help");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "info");
    CHECK_CONTAINS(r.out, "dump");
    result_free(&r);
    r = RUN("--version");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "glowc");
    result_free(&r);
    r = RUN("frobnicate");
    CHECK_EQ(r.code, 1);
    CHECK(strncmp(r.err, "glowc: ", 7) == 0);
    CHECK_CONTAINS(r.err, "frobnicate");
    result_free(&r);
    r = RUN("--bogus");
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = run((const char *const[]){ NULL });
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = RUN("dump", "--help");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "--format");
    result_free(&r);
    r = RUN("info", "-h");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "usage: glowc info");
    result_free(&r);
    r = RUN("info");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "missing MODEL");
    result_free(&r);

    /* info on the demo model. */
    r = RUN("info", "models/lenet.onnx");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "Conv");
    CHECK_CONTAINS(r.out, "f32[1, 1, 28, 28]");
    CHECK_CONTAINS(r.out, "ai.onnx 13");
    CHECK_CONTAINS(r.out, "unsupported: none");
    result_free(&r);

    /* dump as text and dot, to stdout and to a file. */
    r = RUN("dump", "models/lenet.onnx");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "Conv");
    CHECK_CONTAINS(r.out, "f32[1, 10]");
    result_free(&r);
    r = RUN("dump", "--format", "dot", "models/lenet.onnx");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "digraph");
    result_free(&r);
    char out_file[512];
    snprintf(out_file, sizeof out_file, "%s/lenet.dot", tmpdir);
    r = RUN("dump", "models/lenet.onnx", "--format=dot", "-o", out_file);
    CHECK_EQ(r.code, 0);
    CHECK_STR_EQ(r.out, "");
    char *dot = slurp(out_file, NULL);
    CHECK_CONTAINS(dot, "digraph");
    free(dot);
    result_free(&r);
    r = RUN("dump", "--stage", "loaded", "models/lenet.onnx");
    CHECK_EQ(r.code, 0);
    result_free(&r);

    /* dump usage errors. */
    r = RUN("dump", "--stage", "ir-opt", "models/lenet.onnx");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "ir-optimized");
    result_free(&r);
    r = RUN("dump", "--format", "svg", "models/lenet.onnx");
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = RUN("dump", "--define", "N", "models/lenet.onnx");
    CHECK_EQ(r.code, 1);
    result_free(&r);

    /* Missing and malformed files: exit 2 with the path in the message. */
    r = RUN("dump", "no/such/model.onnx");
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "glowc: ");
    CHECK_CONTAINS(r.err, "no/such/model.onnx");
    result_free(&r);
    r = RUN("info", "no/such/model.onnx");
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "no/such/model.onnx");
    result_free(&r);
    char junk[512];
    snprintf(junk, sizeof junk, "%s/junk.onnx", tmpdir);
    glow_diag d = { 0 };
    CHECK(glow_write_file(junk, "\xff\xff\xff\xff garbage", 12, &d) == GLOW_OK);
    r = RUN("info", junk);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, junk);
    result_free(&r);
    r = RUN("dump", junk);
    CHECK_EQ(r.code, 2);
    result_free(&r);

    /* Symbolic dims: shown by name, fixed by --define, named when left open. */
    char sym[512];
    snprintf(sym, sizeof sym, "%s/sym.onnx", tmpdir);
    CHECK(mk_write_symbolic_relu(sym));
    r = RUN("info", sym);
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "f32[N, 3]");
    result_free(&r);
    r = RUN("dump", sym, "--define", "N=2");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "f32[2, 3]");
    result_free(&r);
    r = RUN("dump", sym);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "N");
    result_free(&r);
    /* The model options are one parser: bench and compile take --define as run does. */
    r = RUN("bench", sym, "--define", "N=2", "--backend", "cpu", "--iterations", "1", "--json",
            "--stats");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "\"batch\": 2");
    CHECK_CONTAINS(r.out, "\"fallbacks\": 0");
    CHECK_CONTAINS(r.err, "cpu backend: 0 of ");
    result_free(&r);
    r = RUN("bench", sym, "--define", "N");
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "bench: --define wants SYM=VAL");
    result_free(&r);
    char bundle_dir[512];
    snprintf(bundle_dir, sizeof bundle_dir, "%s/bundle", tmpdir);
    r = RUN("compile", sym, "--define", "N=4", "--emit-bundle", bundle_dir, "--name", "sym");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("compile", sym, "--backend", "interpreter", "--emit-bundle", bundle_dir);
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "cpu backend");
    result_free(&r);
    static const char *const bundle_files[] = { "sym.o", "sym.h", "sym.weights.bin" };
    for (size_t i = 0; i < sizeof bundle_files / sizeof bundle_files[0]; i++) {
        char f[600];
        snprintf(f, sizeof f, "%s/%s", bundle_dir, bundle_files[i]);
        remove(f);
    }
    rmdir(bundle_dir);

    /* A node-suite model with an op glowc lacks: info lists it, dump names it. */
    char model[4096], op[64];
    if (find_unsupported(shared, model, sizeof model, op, sizeof op)) {
        r = RUN("info", model);
        CHECK_EQ(r.code, 0);
        CHECK_CONTAINS(r.out, "UNSUPPORTED");
        char line[128];
        snprintf(line, sizeof line, "unsupported: ");
        CHECK_CONTAINS(r.out, line);
        const char *last = strstr(r.out, "unsupported: ");
        CHECK_CONTAINS(last, op);
        result_free(&r);
        r = RUN("dump", model);
        CHECK_EQ(r.code, 2);
        CHECK_CONTAINS(r.err, op);
        result_free(&r);
    } else {
        printf("note: every candidate op is supported now; unsupported-op checks skipped\n");
    }

    remove(out_file);
    remove(junk);
    remove(sym);
    spawn_cleanup();
    return CHECK_DONE();
}
