// test_api.c - The public C API (include/glowc/glowc.h) as a user sees it, through the header
// alone: versions, options and their messages, sessions from a file and from bytes on both
// backends, input/output descriptions, runs with caller-owned and library-owned outputs
// against LeNet's reference output, every binding error with its message (and no output
// written), the per-thread last error, concurrent runs on one session, and int8 through the
// quantization options.
// Built twice: against libglowc.a (test_api) and libglowc.so (test_api_shared).
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "glowc/glowc.h"

#define LENET "models/lenet.onnx"

static const int64_t IN_SHAPE[4] = { 1, 1, 28, 28 };

/* The tensor payload of a small TensorProto file: its raw_data is the last field, so the
 * floats are the file's last `count` * 4 bytes (lenet_input.pb, lenet_output.pb). */
static int read_tail_floats(const char *path, float *out, size_t count)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int ok = fseek(f, -(long)(count * sizeof(float)), SEEK_END) == 0 &&
             fread(out, sizeof(float), count, f) == count;
    fclose(f);
    return ok;
}

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static glowc_session *open_lenet(const char *backend, int threads)
{
    glowc_options *o = glowc_options_create();
    CHECK(o != NULL);
    CHECK_EQ(glowc_options_set_backend(o, backend), GLOWC_OK);
    CHECK_EQ(glowc_options_set_threads(o, threads), GLOWC_OK);
    glowc_session *s = NULL;
    glowc_status st = glowc_session_create(o, LENET, &s);
    if (st != GLOWC_OK)
        fprintf(stderr, "create on %s: %s\n", backend, glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    glowc_options_destroy(o);
    return s;
}

static void test_version(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", GLOWC_VERSION_MAJOR, GLOWC_VERSION_MINOR,
             GLOWC_VERSION_PATCH);
    CHECK_STR_EQ(glowc_version(), want);
    CHECK_EQ(glowc_version_number(), GLOWC_VERSION);
    CHECK_STR_EQ(glowc_status_name(GLOWC_ERR_BAD_INPUT), "bad input");
    CHECK_STR_EQ(glowc_dtype_name(GLOWC_F32), "f32");
    CHECK_STR_EQ(glowc_dtype_name(GLOWC_BF16), "bf16");
    CHECK_STR_EQ(glowc_dtype_name((glowc_dtype)99), "undefined");
    CHECK_EQ(glowc_dtype_size(GLOWC_I64), 8);
    CHECK_EQ(glowc_dtype_size(GLOWC_DTYPE_UNDEFINED), 0);
}

static void test_options(void)
{
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_backend(o, "gpu"), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "unknown backend 'gpu' (known: ");
    CHECK_EQ(glowc_options_set_threads(o, 2000), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "1 to 1024");
    CHECK_EQ(glowc_options_add_define(o, "N"), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_options_add_define(o, "N=0"), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_options_add_define(o, "N=4"), GLOWC_OK);
    CHECK_EQ(glowc_options_set_quant_schema(o, "sideways"), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "got 'sideways'");
    CHECK_EQ(glowc_options_set_quant_schema(o, "symmetric"), GLOWC_OK);
    CHECK_EQ(glowc_options_set_quant_calibration(o, "kl"), GLOWC_OK);
    CHECK_EQ(glowc_options_set_quant_precision(o, "int4"), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_EQ(glowc_options_set_quant_keep_float(o, "Conv,Bogus"), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "Bogus");
    CHECK_EQ(glowc_options_set_quant_keep_float(o, "Conv"), GLOWC_OK);
    CHECK_EQ(glowc_options_set_backend(NULL, "cpu"), GLOWC_ERR_INVALID_ARGUMENT);
    glowc_options_destroy(o);
    glowc_options_destroy(NULL);

    /* A profile that does not exist fails at session creation, naming the file. */
    o = glowc_options_create();
    CHECK_EQ(glowc_options_set_quantize(o, "no/such/profile.json"), GLOWC_OK);
    glowc_session *s = (glowc_session *)o; /* must be reset to NULL on failure */
    CHECK(glowc_session_create(o, LENET, &s) != GLOWC_OK);
    CHECK(s == NULL);
    CHECK_CONTAINS(glowc_last_error(), "no/such/profile.json");
    glowc_options_destroy(o);
}

static void test_bad_models(void)
{
    glowc_session *s = NULL;
    CHECK_EQ(glowc_session_create(NULL, "models/none.onnx", &s), GLOWC_ERR_IO);
    CHECK_CONTAINS(glowc_last_error(), "models/none.onnx");
    const char junk[] = "this is not a protobuf \xff\xff\xff";
    CHECK_EQ(glowc_session_create_from_bytes(NULL, junk, sizeof junk, &s), GLOWC_ERR_BAD_MODEL);
    CHECK(s == NULL);
    CHECK(glowc_last_error()[0] != 0);
    CHECK_EQ(glowc_session_create(NULL, NULL, &s), GLOWC_ERR_INVALID_ARGUMENT);
}

static void test_describe(glowc_session *s)
{
    CHECK_EQ(glowc_session_input_count(s), 1);
    CHECK_EQ(glowc_session_output_count(s), 1);
    glowc_tensor_info in, out;
    CHECK_EQ(glowc_session_input_info(s, 0, &in), GLOWC_OK);
    CHECK_STR_EQ(in.name, "input");
    CHECK_EQ(in.dtype, GLOWC_F32);
    CHECK_EQ(in.rank, 4);
    for (int d = 0; d < 4; d++)
        CHECK_EQ(in.shape[d], IN_SHAPE[d]);
    CHECK_EQ(in.size_bytes, 784 * 4);
    CHECK_EQ(glowc_session_output_info(s, 0, &out), GLOWC_OK);
    CHECK_STR_EQ(out.name, "probs");
    CHECK_EQ(out.rank, 2);
    CHECK_EQ(out.shape[1], 10);
    CHECK_EQ(glowc_session_output_info(s, 1, &out), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "the model has 1 output; there is no output 1");
    CHECK_EQ(glowc_session_input_index(s, "input"), 0);
    CHECK_EQ(glowc_session_input_index(s, "probs"), -1);
    CHECK_EQ(glowc_session_output_index(s, "probs"), 0);
}

/* LeNet's reference input and output; the output within 1e-4 and the same top-1. */
static void test_reference(glowc_session *s, const float *image, const float *want)
{
    float got[10];
    memset(got, 0, sizeof got);
    glowc_value in = { "input", GLOWC_F32, 4, IN_SHAPE, (void *)image, 784 * 4 };
    glowc_value out = { NULL, GLOWC_DTYPE_UNDEFINED, 0, NULL, got, sizeof got };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_OK);
    int best = 0, wbest = 0;
    for (int i = 0; i < 10; i++) {
        CHECK_NEAR(got[i], want[i], 1e-4);
        best = got[i] > got[best] ? i : best;
        wbest = want[i] > want[wbest] ? i : wbest;
    }
    CHECK_EQ(best, wbest);

    /* Library-owned outputs: the same values, with their name, type and shape. */
    glowc_tensor *t[1] = { NULL };
    in.name = NULL; /* by position */
    CHECK_EQ(glowc_session_run_tensors(s, &in, 1, t), GLOWC_OK);
    CHECK(t[0] != NULL);
    if (t[0]) {
        CHECK_STR_EQ(glowc_tensor_name(t[0]), "probs");
        CHECK_EQ(glowc_tensor_dtype(t[0]), GLOWC_F32);
        CHECK_EQ(glowc_tensor_rank(t[0]), 2);
        CHECK_EQ(glowc_tensor_shape(t[0])[0], 1);
        CHECK_EQ(glowc_tensor_shape(t[0])[1], 10);
        CHECK_EQ(glowc_tensor_size_bytes(t[0]), 40);
        CHECK(memcmp(glowc_tensor_data(t[0]), got, sizeof got) == 0);
    }
    glowc_tensor_destroy(t[0]);
}

/* Every binding mistake fails with its own message and leaves the output buffer alone. */
static void test_bad_runs(glowc_session *s, const float *image)
{
    float got[10], untouched[10];
    for (int i = 0; i < 10; i++)
        got[i] = untouched[i] = -7.0f;
    glowc_value out = { NULL, GLOWC_DTYPE_UNDEFINED, 0, NULL, got, sizeof got };
    int64_t three[3] = { 1, 28, 28 };
    glowc_value in = { NULL, GLOWC_F32, 3, three, (void *)image, 784 * 4 };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(),
                   "input 0 'input' is f32[1, 28, 28], the model's is f32[1, 1, 28, 28]");
    in = (glowc_value){ NULL, GLOWC_I32, 4, IN_SHAPE, (void *)image, 784 * 4 };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "is i32[1, 1, 28, 28], the model's is f32[");
    in = (glowc_value){ "image", GLOWC_F32, 4, IN_SHAPE, (void *)image, 784 * 4 };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "the model has no input 'image' (its inputs: 'input')");
    CHECK_EQ(glowc_session_run(s, NULL, 0, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "missing input 0 'input' (f32[1, 1, 28, 28])");
    in = (glowc_value){ NULL, GLOWC_F32, 4, IN_SHAPE, (void *)image, 784 * 4 };
    glowc_value two[2] = { in, in };
    two[1].name = "input";
    CHECK_EQ(glowc_session_run(s, two, 2, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "the model has 1 input, 2 given");
    in.size_bytes = 100;
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "takes 3136 bytes, given 100");
    in.size_bytes = 784 * 4;
    out.size_bytes = 39;
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "output 0 'probs' (f32[1, 10]) takes 40 bytes, the "
                   "buffer holds 39");
    out.size_bytes = sizeof got;
    out.dtype = GLOWC_F64;
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "output 0 'probs' is f64[], the model's is f32[1, 10]");
    CHECK(memcmp(got, untouched, sizeof got) == 0);
    glowc_tensor *t[1] = { (glowc_tensor *)&in };
    CHECK_EQ(glowc_session_run_tensors(s, NULL, 0, t), GLOWC_ERR_BAD_INPUT);
    CHECK(t[0] == NULL);
    /* Outputs may be left out: a run for its side effects only is valid. */
    CHECK_EQ(glowc_session_run(s, &in, 1, NULL, 0), GLOWC_OK);
    CHECK_EQ(glowc_session_run(NULL, &in, 1, NULL, 0), GLOWC_ERR_INVALID_ARGUMENT);
}

/* ---- threads ---- */

#define NTHREADS 4
#define NRUNS 10
#define NIN 5

typedef struct job {
    glowc_session *s;
    float (*in)[784];
    float (*ref)[10];
    int id, wrong, failed;
    char own_error[64];    /* glowc_last_error() of a thread that never failed */
} job;

static void *client(void *arg)
{
    job *j = arg;
    for (int r = 0; r < NRUNS; r++) {
        int k = (j->id + 2 * r) % NIN;
        float got[10];
        glowc_value in = { NULL, GLOWC_F32, 4, IN_SHAPE, j->in[k], sizeof j->in[k] };
        glowc_value out = { "probs", GLOWC_F32, 0, NULL, got, sizeof got };
        if (glowc_session_run(j->s, &in, 1, &out, 1) != GLOWC_OK)
            j->failed++;
        else if (memcmp(got, j->ref[k], sizeof got))
            j->wrong++;
    }
    snprintf(j->own_error, sizeof j->own_error, "%s", glowc_last_error());
    return NULL;
}

static void test_threads(glowc_session *s, const char *backend)
{
    static float in[NIN][784], ref[NIN][10];
    uint32_t seed = 7;
    for (int k = 0; k < NIN; k++) {
        for (int i = 0; i < 784; i++) {
            seed = seed * 1664525u + 1013904223u;
            in[k][i] = (float)(seed >> 8) / (float)(1u << 24);
        }
        glowc_value v = { NULL, GLOWC_F32, 4, IN_SHAPE, in[k], sizeof in[k] };
        glowc_value o = { NULL, GLOWC_DTYPE_UNDEFINED, 0, NULL, ref[k], sizeof ref[k] };
        CHECK_EQ(glowc_session_run(s, &v, 1, &o, 1), GLOWC_OK);
    }
    for (int k = 1; k < NIN; k++)
        CHECK(memcmp(ref[0], ref[k], sizeof ref[0]) != 0);
    /* This thread's last error is a failure of its own; the clients never see it. */
    CHECK_EQ(glowc_session_run(s, NULL, 0, NULL, 0), GLOWC_ERR_BAD_INPUT);
    job jobs[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i] = (job){ .s = s, .in = in, .ref = ref, .id = i };
        CHECK(pthread_create(&th[i], NULL, client, &jobs[i]) == 0);
    }
    int wrong = 0, failed = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        wrong += jobs[i].wrong;
        failed += jobs[i].failed;
        CHECK_STR_EQ(jobs[i].own_error, "");
    }
    CHECK_CONTAINS(glowc_last_error(), "missing input 0");
    printf("%s: %d concurrent runs, %d wrong, %d failed\n", backend, NTHREADS * NRUNS, wrong,
           failed);
    CHECK_EQ(wrong, 0);
    CHECK_EQ(failed, 0);
}

/* Quantized through the options: a profile `glowc profile` wrote (GLOWC_BIN, as CTest sets
 * it), then int8 on the cpu backend, with 8-bit or 7-bit weights (reduce); LeNet's prediction
 * survives and the scores stay near. */
static void test_quantized(const float *image, const float *want, int reduce)
{
    const char *bin = getenv("GLOWC_BIN");
    if (!bin) {
        printf("quantized: skipped (GLOWC_BIN not set)\n");
        return;
    }
    char prof[64], cmd[512];
    snprintf(prof, sizeof prof, "/tmp/glowc_test_api_%d.json", (int)getpid());
    snprintf(cmd, sizeof cmd, "'%s' profile models/lenet.onnx models/lenet_input.pb -o %s "
             ">/dev/null", bin, prof);
    CHECK_EQ(system(cmd), 0);
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_quantize(o, prof), GLOWC_OK);
    CHECK_EQ(glowc_options_set_quant_per_channel(o, 1), GLOWC_OK);
    CHECK_EQ(glowc_options_set_quant_reduce_range(o, reduce), GLOWC_OK);
    CHECK_EQ(glowc_options_set_threads(o, 1), GLOWC_OK);
    glowc_session *s = NULL;
    glowc_status st = glowc_session_create(o, LENET, &s);
    if (st != GLOWC_OK)
        fprintf(stderr, "quantized: %s\n", glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    glowc_options_destroy(o);
    remove(prof);
    if (!s)
        return;
    float got[10];
    glowc_value in = { NULL, GLOWC_F32, 4, IN_SHAPE, (void *)image, 784 * 4 };
    glowc_value out = { NULL, GLOWC_F32, 0, NULL, got, sizeof got };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_OK);
    int best = 0;
    double maxdiff = 0;
    for (int i = 0; i < 10; i++) {
        CHECK_NEAR(got[i], want[i], 0.02);
        best = got[i] > got[best] ? i : best;
        maxdiff = fmax(maxdiff, fabs(got[i] - want[i]));
    }
    CHECK_EQ(best, 8);
    /* In integers indeed: the scores are not the float ones. */
    printf("quantized%s: max |int8 - float| = %.6f\n", reduce ? ", 7-bit weights" : "",
           maxdiff);
    CHECK(maxdiff > 1e-6);
    glowc_session_destroy(s);
}

/* Sessions may be created on several threads at once (each compiles with its own LLVM
 * context; the IR's tables are built once). */
typedef struct maker {
    const float *image;
    float got[10];
    glowc_status st;
} maker;

static void *make_and_run(void *arg)
{
    maker *m = arg;
    glowc_session *s = NULL;
    m->st = glowc_session_create(NULL, LENET, &s);
    if (m->st == GLOWC_OK) {
        glowc_value in = { NULL, GLOWC_F32, 4, IN_SHAPE, (void *)m->image, 784 * 4 };
        glowc_value out = { NULL, GLOWC_F32, 0, NULL, m->got, sizeof m->got };
        m->st = glowc_session_run(s, &in, 1, &out, 1);
    }
    glowc_session_destroy(s);
    return NULL;
}

static void test_concurrent_create(const float *image, const float *want)
{
    maker m[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        m[i] = (maker){ .image = image, .st = GLOWC_ERR_INTERNAL };
        CHECK(pthread_create(&th[i], NULL, make_and_run, &m[i]) == 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(m[i].st, GLOWC_OK);
        for (int k = 0; k < 10; k++)
            CHECK_NEAR(m[i].got[k], want[k], 1e-4);
    }
}

int main(void)
{
    test_version();
    test_options();
    test_bad_models();
    float image[784], want[10];
    CHECK(read_tail_floats("models/lenet_input.pb", image, 784));
    CHECK(read_tail_floats("models/lenet_output.pb", want, 10));
    /* glowc_tensor_read_file gives the same floats, with the file's type and shape. */
    glowc_tensor *ft = NULL;
    CHECK_EQ(glowc_tensor_read_file("models/lenet_input.pb", &ft), GLOWC_OK);
    if (ft) {
        CHECK_EQ(glowc_tensor_dtype(ft), GLOWC_F32);
        CHECK_EQ(glowc_tensor_rank(ft), 4);
        CHECK_EQ(glowc_tensor_shape(ft)[1], 1);
        CHECK_EQ(glowc_tensor_size_bytes(ft), sizeof image);
        CHECK(memcmp(glowc_tensor_data(ft), image, sizeof image) == 0);
        glowc_value v = glowc_tensor_value(ft);
        CHECK(v.name == NULL && v.data == glowc_tensor_data(ft) && v.rank == 4);
    }
    glowc_tensor_destroy(ft);
    CHECK_EQ(glowc_tensor_read_file("models/none.pb", &ft), GLOWC_ERR_IO);
    CHECK(ft == NULL);
    CHECK_CONTAINS(glowc_last_error(), "models/none.pb");
    const char *backends[] = { "cpu", "interpreter" };
    for (int b = 0; b < 2; b++) {
        glowc_session *s = open_lenet(backends[b], b ? 1 : 2);
        if (!s)
            continue;
        test_describe(s);
        test_reference(s, image, want);
        test_bad_runs(s, image);
        test_threads(s, backends[b]);
        glowc_session_destroy(s);
    }
    /* From bytes: the same model, the same answer. */
    size_t size = 0;
    unsigned char *bytes = read_all(LENET, &size);
    CHECK(bytes != NULL);
    glowc_session *s = NULL;
    CHECK_EQ(glowc_session_create_from_bytes(NULL, bytes, size, &s), GLOWC_OK);
    free(bytes);
    if (s)
        test_reference(s, image, want);
    glowc_session_destroy(s);
    glowc_session_destroy(NULL);
    test_concurrent_create(image, want);
    test_quantized(image, want, 0);
    test_quantized(image, want, 1);
    return CHECK_DONE();
}
