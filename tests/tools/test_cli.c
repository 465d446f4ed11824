// test_cli.c - Runs the built glowc binary: help, usage errors, info, dump and exit codes.
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

extern char **environ;

typedef struct result {
    int code;     /* exit status, or 128 + signal */
    char *out;    /* captured stdout (malloc'd) */
    char *err;    /* captured stderr (malloc'd) */
} result;

static const char *glowc_bin;
static char tmpdir[256];

static char *slurp(const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &size, &d) != GLOW_OK)
        return strdup("");
    return (char *)data; /* glow_read_file NUL-terminates */
}

/* Runs glowc with the NULL-terminated arguments, capturing both streams in files. */
static result run(const char *const *args)
{
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/stdout", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/stderr", tmpdir);
    const char *argv[32];
    int n = 0;
    argv[n++] = glowc_bin;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    result r = { -1, NULL, NULL };
    if (posix_spawn(&pid, glowc_bin, &fa, NULL, (char *const *)argv, environ) != 0) {
        fprintf(stderr, "cannot run %s\n", glowc_bin);
    } else {
        int st = 0;
        waitpid(pid, &st, 0);
        r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    posix_spawn_file_actions_destroy(&fa);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    printf("$ glowc");
    for (int i = 1; argv[i]; i++)
        printf(" %s", argv[i]);
    printf("  -> %d\n", r.code);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

#define RUN(...) run((const char *const[]){ __VA_ARGS__, NULL })

/* A one-node model (Relu) whose input has the symbolic dim N: x f32[N, 3] -> y. */
static void write_symbolic_model(const char *path)
{
    Onnx__TensorShapeProto__Dimension dn = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    Onnx__TensorShapeProto__Dimension d3 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    dn.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    dn.dim_param = "N";
    d3.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d3.dim_value = 3;
    Onnx__TensorShapeProto__Dimension *dims[] = { &dn, &d3 };
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 2;
    shape.dim = dims;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = 1;
    tt.elem_type = 1;
    tt.shape = &shape;
    Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
    type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type.tensor_type = &tt;
    Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = ONNX__VALUE_INFO_PROTO__INIT;
    x.name = "x";
    x.type = &type;
    y.name = "y";
    y.type = &type;
    Onnx__ValueInfoProto *ins[] = { &x }, *outs[] = { &y };

    char *node_in[] = { "x" }, *node_out[] = { "y" };
    Onnx__NodeProto relu = ONNX__NODE_PROTO__INIT;
    relu.op_type = "Relu";
    relu.name = "relu0";
    relu.n_input = 1;
    relu.input = node_in;
    relu.n_output = 1;
    relu.output = node_out;
    Onnx__NodeProto *nodes[] = { &relu };

    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "sym";
    g.n_node = 1;
    g.node = nodes;
    g.n_input = 1;
    g.input = ins;
    g.n_output = 1;
    g.output = outs;
    Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    os.domain = "";
    os.has_version = 1;
    os.version = 13;
    Onnx__OperatorSetIdProto *opsets[] = { &os };
    Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
    mp.has_ir_version = 1;
    mp.ir_version = 7;
    mp.graph = &g;
    mp.n_opset_import = 1;
    mp.opset_import = opsets;

    size_t size = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = malloc(size);
    onnx__model_proto__pack(&mp, buf);
    glow_diag d = { 0 };
    CHECK(glow_write_file(path, buf, size, &d) == GLOW_OK);
    free(buf);
}

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
    glowc_bin = getenv("GLOWC_BIN");
    const char *shared = getenv("GLOWC_SHARED");
    if (!glowc_bin || !shared) {
        fprintf(stderr, "GLOWC_BIN and GLOWC_SHARED must be set (CTest sets them)\n");
        return 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/glowc_test_cli.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
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
    char *dot = slurp(out_file);
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
    write_symbolic_model(sym);
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
    char p[512];
    snprintf(p, sizeof p, "%s/stdout", tmpdir);
    remove(p);
    snprintf(p, sizeof p, "%s/stderr", tmpdir);
    remove(p);
    rmdir(tmpdir);
    return CHECK_DONE();
}
