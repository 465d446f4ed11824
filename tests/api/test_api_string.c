// test_api_string.c - String tensors through the public API (glowc.h, "Element types"):
// GLOWC_DTYPE_STRING's number, name and size; a model built here (StringConcat, Equal and
// Identity of two string inputs) run on both backends with inputs whose strings the caller
// frees and overwrites after the call; library-owned outputs that outlive the next run; the
// refusal of caller buffers for string outputs; concurrent runs each seeing its own strings;
// the host's asynchronous run, which must copy the strings before it returns; and a string
// node test read from its .pb files.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "glowc/glowc.h"
#include "testlib/onnx_build.h"

#define N 4

/* a, b: string[N] -> cat = a + b, eq = (a == b), same = Identity(a). */
static uint8_t *string_model(size_t *size)
{
    mk_model *mk = mk_new(20);
    int64_t shape[] = { N };
    mk_input(mk, "a", MK_STRING, 1, shape);
    mk_input(mk, "b", MK_STRING, 1, shape);
    mk_node(mk, "StringConcat", "cat0", 2, (const char *[]){ "a", "b" }, 1,
            (const char *[]){ "cat" });
    mk_node(mk, "Equal", "eq0", 2, (const char *[]){ "a", "b" }, 1, (const char *[]){ "eq" });
    mk_node(mk, "Identity", "id0", 1, (const char *[]){ "a" }, 1, (const char *[]){ "same" });
    mk_output(mk, "cat", MK_STRING, 1, shape);
    mk_output(mk, "eq", MK_BOOL, 1, shape);
    mk_output(mk, "same", MK_STRING, 1, shape);
    uint8_t *bytes = mk_pack(mk, size);
    mk_free(mk);
    return bytes;
}

static glowc_session *open_session(const uint8_t *model, size_t size, const char *backend)
{
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_backend(o, backend), GLOWC_OK);
    CHECK_EQ(glowc_options_set_threads(o, 1), GLOWC_OK);
    glowc_session *s = NULL;
    glowc_status st = glowc_session_create_from_bytes(o, model, size, &s);
    glowc_options_destroy(o);
    if (st != GLOWC_OK)
        fprintf(stderr, "%s: %s\n", backend, glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    return s;
}

static const int64_t shape_n[] = { N };

/* Heap copies of the strings (NULL stays NULL), so the test can free them after a run. */
static char **heap_strings(const char *const *src)
{
    char **h = calloc(N, sizeof *h);
    for (int i = 0; i < N; i++)
        h[i] = src[i] ? strdup(src[i]) : NULL;
    return h;
}

/* Overwrites and frees the strings: a library that kept a pointer to them would read
 * garbage (and ASan would name the use after free). */
static void scrub_strings(char **h)
{
    for (int i = 0; i < N; i++) {
        if (h[i])
            memset(h[i], 'X', strlen(h[i]));
        free(h[i]);
    }
    free(h);
}

static const char *const A[N] = { "ab", "", NULL, "h\xc3\xa9llo" };
static const char *const B[N] = { "cd", "", "", "h\xc3\xa9llo" };
static const char *const CAT[N] = { "abcd", "", "", "h\xc3\xa9lloh\xc3\xa9llo" };
static const char *const SAME[N] = { "ab", "", "", "h\xc3\xa9llo" };
static const uint8_t EQ[N] = { 0, 1, 1, 1 };

static void check_strings(const glowc_tensor *t, const char *const *want)
{
    CHECK_EQ(glowc_tensor_dtype(t), GLOWC_DTYPE_STRING);
    CHECK_EQ(glowc_tensor_rank(t), 1);
    CHECK_EQ(glowc_tensor_shape(t)[0], N);
    CHECK_EQ(glowc_tensor_size_bytes(t), N * sizeof(const char *));
    const char *const *got = glowc_tensor_data(t);
    for (int i = 0; i < N; i++) {
        CHECK(got[i] != NULL);   /* never NULL, "" for empty */
        CHECK_STR_EQ(got[i] ? got[i] : "(null)", want[i]);
    }
}

static void check_outputs(glowc_tensor **outs)
{
    check_strings(outs[0], CAT);
    CHECK_EQ(glowc_tensor_dtype(outs[1]), GLOWC_BOOL);
    CHECK(memcmp(glowc_tensor_data(outs[1]), EQ, N) == 0);
    check_strings(outs[2], SAME);
}

static void test_dtype(void)
{
    CHECK_EQ(GLOWC_DTYPE_STRING, 8);   /* ONNX's TensorProto.STRING */
    CHECK_STR_EQ(glowc_dtype_name(GLOWC_DTYPE_STRING), "string");
    CHECK_EQ(glowc_dtype_size(GLOWC_DTYPE_STRING), sizeof(const char *));
}

static void test_session(const uint8_t *model, size_t size, const char *backend)
{
    glowc_session *s = open_session(model, size, backend);
    if (!s)
        return;
    glowc_tensor_info info;
    CHECK_EQ(glowc_session_input_info(s, 0, &info), GLOWC_OK);
    CHECK_EQ(info.dtype, GLOWC_DTYPE_STRING);
    CHECK_EQ(info.size_bytes, N * sizeof(const char *));
    CHECK_EQ(glowc_session_output_info(s, 0, &info), GLOWC_OK);
    CHECK_EQ(info.dtype, GLOWC_DTYPE_STRING);

    /* Outputs of the first run, checked after the caller's strings are gone and after a
     * second run with other strings. */
    char **a = heap_strings(A), **b = heap_strings(B);
    glowc_value in[2] = {
        { "a", GLOWC_DTYPE_STRING, 1, shape_n, a, N * sizeof(char *) },
        { "b", GLOWC_DTYPE_STRING, 1, shape_n, b, N * sizeof(char *) },
    };
    glowc_tensor *first[3] = { 0 }, *second[3] = { 0 };
    glowc_status st = glowc_session_run_tensors(s, in, 2, first);
    if (st != GLOWC_OK)
        fprintf(stderr, "%s: %s\n", backend, glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    scrub_strings(a);
    scrub_strings(b);
    const char *other[N] = { "x", "y", "z", "w" };
    glowc_value in2[2] = {
        { NULL, GLOWC_DTYPE_STRING, 1, shape_n, (void *)other, sizeof other },
        { NULL, GLOWC_DTYPE_STRING, 1, shape_n, (void *)other, sizeof other },
    };
    CHECK_EQ(glowc_session_run_tensors(s, in2, 2, second), GLOWC_OK);
    if (first[0] && second[0]) {
        check_outputs(first);
        const char *const xx[N] = { "xx", "yy", "zz", "ww" };
        check_strings(second[0], xx);
        check_strings(second[2], other);
    }
    for (int k = 0; k < 3; k++) {
        glowc_tensor_destroy(first[k]);
        glowc_tensor_destroy(second[k]);
    }

    /* A caller's buffer for a string output is refused before anything runs; the bool output
     * alone, named, is fine. */
    uint8_t eq[N] = { 9, 9, 9, 9 };
    const char *cat[N] = { 0 };
    glowc_value outs[2] = { { "eq", GLOWC_BOOL, 0, NULL, eq, sizeof eq },
                            { "cat", GLOWC_DTYPE_UNDEFINED, 0, NULL, (void *)cat, sizeof cat } };
    CHECK_EQ(glowc_session_run(s, in2, 2, outs, 2), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "output 0 'cat' is string[4]");
    CHECK_CONTAINS(glowc_last_error(), "glowc_session_run_tensors");
    CHECK_EQ(eq[0], 9);
    CHECK_EQ(glowc_session_run(s, in2, 2, outs, 1), GLOWC_OK);
    CHECK_EQ(eq[0] + eq[1] + eq[2] + eq[3], 4);

    /* Numbers for a string input: the message names both types. */
    float f[N] = { 0 };
    glowc_value bad[2] = { { "a", GLOWC_F32, 1, shape_n, f, sizeof f }, in2[1] };
    CHECK_EQ(glowc_session_run(s, bad, 2, outs, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "input 0 'a' is f32[4], the model's is string[4]");
    /* The right type with the bytes of another size. */
    glowc_value small[2] = { { "a", GLOWC_DTYPE_STRING, 1, shape_n, (void *)other, 8 },
                             in2[1] };
    CHECK_EQ(glowc_session_run(s, small, 2, outs, 1), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "takes 32 bytes, given 8");
    glowc_session_destroy(s);
}

/* Concurrent runs: each client's outputs are made of its own strings. */
typedef struct client {
    glowc_session *s;
    int id, bad;
} client;

static void *client_main(void *arg)
{
    client *c = arg;
    for (int r = 0; r < 20; r++) {
        char buf[N][32], want[N][64];
        const char *a[N], *w[N];
        for (int i = 0; i < N; i++) {
            snprintf(buf[i], sizeof buf[i], "c%d-r%d-%d", c->id, r, i);
            snprintf(want[i], sizeof want[i], "%s%s", buf[i], buf[i]);
            a[i] = buf[i];
            w[i] = want[i];
        }
        glowc_value in[2] = { { NULL, GLOWC_DTYPE_STRING, 1, shape_n, (void *)a, sizeof a },
                              { NULL, GLOWC_DTYPE_STRING, 1, shape_n, (void *)a, sizeof a } };
        glowc_tensor *o[3] = { 0 };
        if (glowc_session_run_tensors(c->s, in, 2, o) != GLOWC_OK) {
            c->bad++;
            continue;
        }
        const char *const *got = glowc_tensor_data(o[0]);
        for (int i = 0; i < N; i++)
            c->bad += strcmp(got[i], w[i]) != 0;
        for (int k = 0; k < 3; k++)
            glowc_tensor_destroy(o[k]);
    }
    return NULL;
}

static void test_concurrent(const uint8_t *model, size_t size, const char *backend)
{
    glowc_session *s = open_session(model, size, backend);
    if (!s)
        return;
    pthread_t th[4];
    client c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (client){ s, i, 0 };
        pthread_create(&th[i], NULL, client_main, &c[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(c[i].bad, 0);
    }
    glowc_session_destroy(s);
}

typedef struct async_result {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int done;
    glowc_status st;
    glowc_tensor *outs[3];
} async_result;

static void on_done(void *user, glowc_request_id id, glowc_status st, glowc_tensor **outs,
                    int n)
{
    (void)id;
    async_result *r = user;
    pthread_mutex_lock(&r->lock);
    r->st = st;
    for (int k = 0; k < n && k < 3; k++) {
        r->outs[k] = outs[k];   /* kept: the test reads them after the callback */
        outs[k] = NULL;
    }
    r->done = 1;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->lock);
}

static void test_host(const uint8_t *model, size_t size)
{
    glowc_host *h = NULL;
    CHECK_EQ(glowc_host_create_from_spec("interpreter,cpu:t1", 8, &h), GLOWC_OK);
    if (!h)
        return;
    glowc_status st = glowc_host_add_network_from_bytes(h, "str", NULL, model, size);
    if (st != GLOWC_OK)
        fprintf(stderr, "host: %s\n", glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    /* Paused, the request waits in the queue while the caller's strings are freed. */
    CHECK_EQ(glowc_host_pause(h, 1), GLOWC_OK);
    char **a = heap_strings(A), **b = heap_strings(B);
    glowc_value in[2] = { { "a", GLOWC_DTYPE_STRING, 1, shape_n, a, N * sizeof(char *) },
                          { "b", GLOWC_DTYPE_STRING, 1, shape_n, b, N * sizeof(char *) } };
    async_result r = { .lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
    CHECK_EQ(glowc_host_run_async(h, "str", in, 2, 0, on_done, &r, NULL), GLOWC_OK);
    scrub_strings(a);
    scrub_strings(b);
    CHECK_EQ(glowc_host_pause(h, 0), GLOWC_OK);
    pthread_mutex_lock(&r.lock);
    while (!r.done)
        pthread_cond_wait(&r.cv, &r.lock);
    pthread_mutex_unlock(&r.lock);
    CHECK_EQ(r.st, GLOWC_OK);
    if (r.st == GLOWC_OK && r.outs[0])
        check_outputs(r.outs);
    for (int k = 0; k < 3; k++)
        glowc_tensor_destroy(r.outs[k]);

    /* The synchronous run: the bool output into a buffer; a string output's buffer refused. */
    uint8_t eq[N] = { 0 };
    const char *same[N] = { 0 };
    glowc_value ok[1] = { { "eq", GLOWC_BOOL, 0, NULL, eq, sizeof eq } };
    glowc_value in2[2] = { { "a", GLOWC_DTYPE_STRING, 1, shape_n, (void *)A, sizeof A },
                           { "b", GLOWC_DTYPE_STRING, 1, shape_n, (void *)B, sizeof B } };
    CHECK_EQ(glowc_host_run(h, "str", in2, 2, ok, 1, 0), GLOWC_OK);
    CHECK(memcmp(eq, EQ, N) == 0);
    glowc_value no[1] = { { "same", GLOWC_DTYPE_UNDEFINED, 0, NULL, (void *)same, sizeof same } };
    CHECK_EQ(glowc_host_run(h, "str", in2, 2, no, 1, 0), GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "output 2 'same' is string[4]");
    glowc_host_destroy(h);
}

/* test_equal_string from its files: a string .pb read into a tensor whose strings it owns. */
static void test_node_files(const char *shared)
{
    char model[1024], path[3][1024];
    const char *dir = "onnx-node-tests/node/test_equal_string";
    snprintf(model, sizeof model, "%s/%s/model.onnx", shared, dir);
    for (int i = 0; i < 3; i++)
        snprintf(path[i], sizeof path[i], "%s/%s/test_data_set_0/%s_%d.pb", shared, dir,
                 i < 2 ? "input" : "output", i < 2 ? i : 0);
    glowc_tensor *x[2] = { 0 }, *want = NULL, *got = NULL;
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(glowc_tensor_read_file(path[i], &x[i]), GLOWC_OK);
        CHECK_EQ(glowc_tensor_dtype(x[i]), GLOWC_DTYPE_STRING);
    }
    CHECK_EQ(glowc_tensor_read_file(path[2], &want), GLOWC_OK);
    glowc_session *s = NULL;
    CHECK_EQ(glowc_session_create(NULL, model, &s), GLOWC_OK);
    if (s && x[0] && x[1] && want) {
        glowc_value in[2] = { glowc_tensor_value(x[0]), glowc_tensor_value(x[1]) };
        CHECK_EQ(glowc_session_run_tensors(s, in, 2, &got), GLOWC_OK);
        CHECK_EQ(glowc_tensor_size_bytes(got), glowc_tensor_size_bytes(want));
        if (got && glowc_tensor_size_bytes(got) == glowc_tensor_size_bytes(want))
            CHECK(memcmp(glowc_tensor_data(got), glowc_tensor_data(want),
                         glowc_tensor_size_bytes(want)) == 0);
    }
    glowc_tensor_destroy(got);
    glowc_tensor_destroy(want);
    glowc_tensor_destroy(x[0]);
    glowc_tensor_destroy(x[1]);
    glowc_session_destroy(s);
}

int main(void)
{
    test_dtype();
    size_t size = 0;
    uint8_t *model = string_model(&size);
    CHECK(model != NULL);
    test_session(model, size, "interpreter");
    test_session(model, size, "cpu");
    test_concurrent(model, size, "interpreter");
    test_concurrent(model, size, "cpu");
    test_host(model, size);
    const char *shared = getenv("GLOWC_SHARED");
    if (shared)
        test_node_files(shared);
    else
        fprintf(stderr, "GLOWC_SHARED is not set: the node test's files are not read\n");
    free(model);
    return CHECK_DONE();
}
