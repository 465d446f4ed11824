// test_api_tools.c - What the public API does for the CLI's compiler commands, through the
// header: glowc_session_get_info (regions, times, fallbacks), glowc_session_create_for_inputs
// (a Reshape whose shape is an input), bundles (glowc_compile_bundle and its two halves: the
// same bytes as `glowc compile`, every failure with its status), the profiler (misuse
// refused, the same JSON as `glowc profile`, a quantized session from it), and the report
// flags. The CLI's own tests (tests/tools) show that compile, profile and bench, now clients
// of these calls, say what they said.
#include "check.h"
#include "glowc/glowc.h"
#include "testlib/spawn.h"

#define LENET "models/lenet.onnx"

static glowc_options *options(const char *backend, int threads)
{
    glowc_options *o = glowc_options_create();
    CHECK(o != NULL);
    CHECK_EQ(glowc_options_set_backend(o, backend), GLOWC_OK);
    CHECK_EQ(glowc_options_set_threads(o, threads), GLOWC_OK);
    return o;
}

static void test_session_info(void)
{
    for (int k = 0; k < 2; k++) {
        glowc_options *o = options(k ? "interpreter" : "cpu", 1);
        glowc_session *s = NULL;
        CHECK_EQ(glowc_session_create(o, LENET, &s), GLOWC_OK);
        glowc_session_info info;
        CHECK_EQ(glowc_session_get_info(s, &info), GLOWC_OK);
        CHECK_STR_EQ(info.backend, k ? "interpreter" : "cpu");
        CHECK_EQ(info.threads, 1);
        /* LeNet's weights are 0.22 MiB; its input (784 floats) and output (10) live in the
         * mutable region. */
        CHECK(info.constant_bytes > 200000 && info.constant_bytes < 300000);
        CHECK(info.mutable_bytes >= (784 + 10) * 4);
        CHECK(info.activation_bytes > 0);
        CHECK(info.load_ms > 0 && info.compile_ms > 0);
        CHECK_EQ(info.fallbacks, 0);
        CHECK_EQ(info.code_cached, 0);
        glowc_session_destroy(s);
        glowc_options_destroy(o);
    }
    glowc_session_info info;
    CHECK_EQ(glowc_session_get_info(NULL, &info), GLOWC_ERR_INVALID_ARGUMENT);
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_report(o, 8), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "GLOWC_REPORT_");
    CHECK_EQ(glowc_options_set_report(o, GLOWC_REPORT_PASS_TIMES), GLOWC_OK);
    glowc_options_destroy(o);
}

/* A model whose output shape is an input's value: only a session made for those inputs. */
static void test_create_for_inputs(void)
{
    const char *shared = getenv("GLOWC_SHARED");
    char dir[512], model[600], in0[600], in1[600], want[600];
    snprintf(dir, sizeof dir, "%s/onnx-node-tests/node/test_reshape_negative_dim",
             shared ? shared : "../shared");
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    snprintf(in0, sizeof in0, "%s/test_data_set_0/input_0.pb", dir);
    snprintf(in1, sizeof in1, "%s/test_data_set_0/input_1.pb", dir);
    snprintf(want, sizeof want, "%s/test_data_set_0/output_0.pb", dir);
    if (!exists(model)) {
        printf("skipped: %s is missing\n", model);
        return;
    }
    glowc_session *s = NULL;
    CHECK(glowc_session_create(NULL, model, &s) != GLOWC_OK);
    CHECK_CONTAINS(glowc_last_error(), "computed at run time");
    glowc_tensor *t[3] = { NULL, NULL, NULL };
    CHECK_EQ(glowc_tensor_read_file(in0, &t[0]), GLOWC_OK);
    CHECK_EQ(glowc_tensor_read_file(in1, &t[1]), GLOWC_OK);
    CHECK_EQ(glowc_tensor_read_file(want, &t[2]), GLOWC_OK);
    glowc_value in[2] = { glowc_tensor_value(t[0]), glowc_tensor_value(t[1]) };
    glowc_options *o = options("interpreter", 1);
    CHECK_EQ(glowc_session_create_for_inputs(o, model, in, 2, &s), GLOWC_OK);
    glowc_tensor *out = NULL;
    CHECK_EQ(glowc_session_run_tensors(s, in, 2, &out), GLOWC_OK);
    CHECK_EQ(glowc_tensor_size_bytes(out), glowc_tensor_size_bytes(t[2]));
    CHECK(out && !memcmp(glowc_tensor_data(out), glowc_tensor_data(t[2]),
                         glowc_tensor_size_bytes(t[2])));
    CHECK_EQ(glowc_tensor_rank(out), glowc_tensor_rank(t[2]));
    glowc_tensor_destroy(out);
    glowc_session_destroy(s);
    /* A value glowc has no type for is named. */
    glowc_value bad = in[0];
    bad.dtype = (glowc_dtype)99;
    CHECK_EQ(glowc_session_create_for_inputs(o, model, &bad, 1, &s), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "input 0");
    CHECK(s == NULL);
    glowc_options_destroy(o);
    for (int i = 0; i < 3; i++)
        glowc_tensor_destroy(t[i]);
}

static void test_bundles(void)
{
    TMP(api_dir, "api_bundle");
    TMP(cli_dir, "cli_bundle");
    glowc_options *o = options("cpu", 2);
    glowc_bundle_info info;
    CHECK_EQ(glowc_compile_bundle(o, LENET, NULL, "generic", api_dir, NULL,
                                  GLOWC_WEIGHTS_C_ARRAY, &info), GLOWC_OK);
    CHECK_STR_EQ(info.name, "lenet");
    CHECK_STR_EQ(info.cpu, "generic");
    CHECK(info.instructions > 10 && info.object_bytes > 0 && info.constant_bytes > 200000);
    CHECK_EQ(info.alignment, 64);
    /* `glowc compile` with the same options writes the same bytes. */
    result r = RUN("compile", LENET, "--emit-bundle", cli_dir, "--mcpu", "generic",
                   "--threads", "2", "--weights", "c-array");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "bundle 'lenet'");
    result_free(&r);
    static const char *const files[] = { "lenet.o", "lenet.h", "lenet.weights.bin",
                                         "lenet.weights.c" };
    for (int i = 0; i < 4; i++) {
        char a[700], b[700];
        snprintf(a, sizeof a, "%s/%s", api_dir, files[i]);
        snprintf(b, sizeof b, "%s/%s", cli_dir, files[i]);
        CHECK(same_file(a, b));
    }

    /* The two halves: one compile, written twice under two names. */
    glowc_bundle *b = NULL;
    CHECK_EQ(glowc_bundle_create(o, LENET, NULL, NULL, &b), GLOWC_OK);
    CHECK_EQ(glowc_bundle_write(b, api_dir, "second", GLOWC_WEIGHTS_EMBEDDED, NULL), GLOWC_OK);
    TMP(second, "api_bundle/second.o");
    CHECK(exists(second));
    CHECK_EQ(glowc_bundle_write(b, api_dir, "9lives", GLOWC_WEIGHTS_FILE, NULL),
             GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "C identifier");
    CHECK_EQ(glowc_bundle_write(b, "/proc/no/such", "x", GLOWC_WEIGHTS_FILE, NULL),
             GLOWC_ERR_IO);
    CHECK_CONTAINS(glowc_last_error(), "/proc/no");
    glowc_bundle_destroy(b);
    CHECK(glowc_bundle_name_ok("net_1") && !glowc_bundle_name_ok("9x") &&
          !glowc_bundle_name_ok(NULL));

    /* Failures: the backend, the model file, a target LLVM does not know. */
    glowc_options *interp = options("interpreter", 0);
    CHECK_EQ(glowc_bundle_create(interp, LENET, NULL, NULL, &b), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "cpu backend");
    CHECK(b == NULL);
    glowc_options_destroy(interp);
    CHECK_EQ(glowc_bundle_create(o, "models/none.onnx", NULL, NULL, &b), GLOWC_ERR_IO);
    CHECK_CONTAINS(glowc_last_error(), "models/none.onnx");
    CHECK_EQ(glowc_compile_bundle(o, LENET, "nonsense-triple", NULL, api_dir, "t",
                                  GLOWC_WEIGHTS_FILE, NULL), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "unknown target 'nonsense-triple'");
    glowc_options_destroy(o);
}

static void test_profiler(void)
{
    glowc_tensor *image = NULL;
    CHECK_EQ(glowc_tensor_read_file("models/lenet_input.pb", &image), GLOWC_OK);
    glowc_value in = glowc_tensor_value(image);
    glowc_options *o = options("cpu", 2);
    glowc_profiler *p = NULL;
    CHECK_EQ(glowc_profiler_create(o, LENET, &p), GLOWC_OK);
    glowc_options_destroy(o);   /* the profiler keeps a copy */
    /* Out of order: refused, nothing recorded. */
    CHECK_EQ(glowc_profiler_run(p, &in, 1), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "no pass");
    CHECK_EQ(glowc_profiler_begin_pass(p, 2), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_profiler_finish(p), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_profiler_value_count(p), 0);
    CHECK_EQ(glowc_profiler_begin_pass(p, 1), GLOWC_OK);
    glowc_value wrong = in;
    int64_t flat[2] = { 1, 784 };
    wrong.rank = 2;
    wrong.shape = flat;
    CHECK(glowc_profiler_run(p, &wrong, 1) != GLOWC_OK);   /* compiled for nothing */
    CHECK_EQ(glowc_profiler_value_count(p), 0);
    /* Named values bind by name before the model is compiled too. */
    glowc_value named = in;
    named.name = "image";
    CHECK_EQ(glowc_profiler_run(p, &named, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "no input 'image'");
    named.name = "input";
    CHECK_EQ(glowc_profiler_run(p, &named, 1), GLOWC_OK);
    CHECK_EQ(glowc_profiler_value_count(p), 18);
    CHECK_EQ(glowc_profiler_run(p, &wrong, 1), GLOWC_ERR_BAD_INPUT);  /* not the first's */
    CHECK_EQ(glowc_profiler_finish(p), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_profiler_begin_pass(p, 2), GLOWC_OK);
    CHECK_EQ(glowc_profiler_run(p, &in, 1), GLOWC_OK);
    TMP(api_json, "api.json");
    CHECK_EQ(glowc_profiler_write(p, api_json), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_profiler_finish(p), GLOWC_OK);
    CHECK_EQ(glowc_profiler_write(p, api_json), GLOWC_OK);
    CHECK_EQ(glowc_profiler_write(p, "/proc/no/such.json"), GLOWC_ERR_IO);
    glowc_profiler_destroy(p);

    TMP(cli_json, "cli.json");
    result r = RUN("profile", LENET, "models/lenet_input.pb", "-o", cli_json);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK(same_file(api_json, cli_json));

    /* The profile quantizes: LeNet's top-1 stays class 8. */
    o = options("cpu", 1);
    CHECK_EQ(glowc_options_set_quantize(o, api_json), GLOWC_OK);
    glowc_session *s = NULL;
    CHECK_EQ(glowc_session_create(o, LENET, &s), GLOWC_OK);
    float scores[10];
    glowc_value out = { NULL, GLOWC_F32, 0, NULL, scores, sizeof scores };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_OK);
    int best = 0;
    for (int i = 1; i < 10; i++)
        best = scores[i] > scores[best] ? i : best;
    CHECK_EQ(best, 8);
    glowc_session_destroy(s);
    glowc_options_destroy(o);
    glowc_tensor_destroy(image);
}

int main(void)
{
    if (!spawn_setup("glowc_test_api_tools"))
        return 1;
    test_session_info();
    test_create_for_inputs();
    test_bundles();
    test_profiler();
    spawn_cleanup();
    return CHECK_DONE();
}
