// test_host_api.c - The host of the public API (glowc_host_*): a full queue says BUSY (the
// host paused, so nothing starts: no timing), every asynchronous callback arrives exactly
// once, cancellation and deadlines of queued requests, statistics that add up, a load test
// (client threads x requests on 2 devices and 2 networks, each output checked against its own
// input's reference), fault isolation (bad inputs and a network whose run fails, beside
// healthy requests), adding and removing networks while others run, a network that fits
// nowhere (the message names the sizes), and a partitioned network's outputs.
#include <pthread.h>
#include <time.h>
#include <stdint.h>

#include "check.h"
#include "glowc/glowc.h"
#include "testlib/onnx_build.h"

#define LENET "models/lenet.onnx"
#define MLP "models/digits_mlp.onnx"
#define NIMG 8          /* distinct inputs per network, each with its reference */

#if defined(GLOWC_SANITIZE)
#define CLIENTS 4
#define PER_CLIENT 40
#else
#define CLIENTS 8
#define PER_CLIENT 1000
#endif

static const int64_t LENET_SHAPE[4] = { 1, 1, 28, 28 };
static const int64_t MLP_SHAPE[4] = { 1, 1, 8, 8 };

static float lenet_in[NIMG][784], lenet_ref[NIMG][10];
static float mlp_in[NIMG][64], mlp_ref[NIMG][10];

static void fill(float *x, int n, unsigned seed)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (int i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 16777216.0f;
    }
}

static glowc_value in_value(const char *net, int img)
{
    bool lenet = net[0] == 'l';
    return (glowc_value){ NULL, GLOWC_F32, 4, lenet ? LENET_SHAPE : MLP_SHAPE,
                          lenet ? lenet_in[img] : mlp_in[img],
                          lenet ? sizeof lenet_in[img] : sizeof mlp_in[img] };
}

static const float *ref_of(const char *net, int img)
{
    return net[0] == 'l' ? lenet_ref[img] : mlp_ref[img];
}

static bool close10(const float *a, const float *b)
{
    for (int i = 0; i < 10; i++)
        if (!(fabsf(a[i] - b[i]) <= 1e-5f))
            return false;
    return true;
}

/* The references: each input through a session on the cpu backend. */
static void make_refs(void)
{
    const char *paths[2] = { LENET, MLP };
    for (int m = 0; m < 2; m++) {
        glowc_options *o = glowc_options_create();
        glowc_options_set_threads(o, 1);
        glowc_session *s = NULL;
        CHECK_EQ(glowc_session_create(o, paths[m], &s), GLOWC_OK);
        glowc_options_destroy(o);
        for (int i = 0; s && i < NIMG; i++) {
            fill(m ? mlp_in[i] : lenet_in[i], m ? 64 : 784, (unsigned)(i + 17 * m));
            glowc_value in = in_value(m ? "mlp" : "lenet", i);
            glowc_value out = { NULL, GLOWC_F32, 0, NULL, m ? mlp_ref[i] : lenet_ref[i],
                                sizeof lenet_ref[i] };
            CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_OK);
        }
        glowc_session_destroy(s);
    }
}

static glowc_host *new_host(const char *spec, int capacity)
{
    glowc_host *h = NULL;
    glowc_status st = glowc_host_create_from_spec(spec, capacity, &h);
    if (st != GLOWC_OK)
        fprintf(stderr, "host %s: %s\n", spec, glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    return h;
}

static void add(glowc_host *h, const char *name, const char *path, int replicas)
{
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_replicas(o, replicas), GLOWC_OK);
    glowc_status st = glowc_host_add_network(h, name, o, path);
    if (st != GLOWC_OK)
        fprintf(stderr, "add %s: %s\n", name, glowc_last_error());
    CHECK_EQ(st, GLOWC_OK);
    glowc_options_destroy(o);
}

/* ---- asynchronous completions, tallied per request slot ---- */

#define MAXREQ 256

static struct tally {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int calls[MAXREQ];
    glowc_status st[MAXREQ];
    float out[MAXREQ][10];
    char msg[MAXREQ][160];
    int total;
} T = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, { 0 }, { { 0 } },
        { { 0 } }, 0 };

static void tally_reset(void)
{
    pthread_mutex_lock(&T.lock);
    memset(T.calls, 0, sizeof T.calls);
    T.total = 0;
    pthread_mutex_unlock(&T.lock);
}

static void on_done(void *user, glowc_request_id id, glowc_status st, glowc_tensor **outs,
                    int nouts)
{
    (void)id;
    int k = (int)(intptr_t)user;
    pthread_mutex_lock(&T.lock);
    T.calls[k]++;
    T.st[k] = st;
    if (st == GLOWC_OK && nouts == 1 && glowc_tensor_size_bytes(outs[0]) == sizeof T.out[k])
        memcpy(T.out[k], glowc_tensor_data(outs[0]), sizeof T.out[k]);
    snprintf(T.msg[k], sizeof T.msg[k], "%s", st == GLOWC_OK ? "" : glowc_last_error());
    T.total++;
    pthread_cond_broadcast(&T.cv);
    pthread_mutex_unlock(&T.lock);
}

static void wait_total(int n)
{
    pthread_mutex_lock(&T.lock);
    while (T.total < n)
        pthread_cond_wait(&T.cv, &T.lock);
    pthread_mutex_unlock(&T.lock);
}

static glowc_status submit(glowc_host *h, const char *net, int slot, int img, int64_t deadline,
                           glowc_request_id *id)
{
    glowc_value in = in_value(net, img);
    return glowc_host_run_async(h, net, &in, 1, deadline, on_done, (void *)(intptr_t)slot, id);
}

static void check_sums(glowc_host *h, const char *net)
{
    glowc_host_stats s;
    CHECK_EQ(glowc_host_get_stats(h, net, &s), GLOWC_OK);
    CHECK_EQ(s.queued + s.running + s.done + s.failed + s.cancelled + s.expired, s.submitted);
}

/* Paused: capacity requests queue, the next is BUSY at once; resumed, each completes once. */
static void test_busy_and_callbacks(void)
{
    glowc_host *h = new_host("cpu:t1,cpu:t1", 6);
    if (!h)
        return;
    add(h, "lenet", LENET, 0);
    tally_reset();
    CHECK_EQ(glowc_host_pause(h, 1), GLOWC_OK);
    for (int k = 0; k < 6; k++)
        CHECK_EQ(submit(h, "lenet", k, k % NIMG, 0, NULL), GLOWC_OK);
    CHECK_EQ(submit(h, "lenet", 6, 0, 0, NULL), GLOWC_BUSY);
    CHECK_CONTAINS(glowc_last_error(), "queue is full");
    float scores[10];
    glowc_value in = in_value("lenet", 0);
    glowc_value out = { NULL, GLOWC_F32, 0, NULL, scores, sizeof scores };
    CHECK_EQ(glowc_host_run(h, "lenet", &in, 1, &out, 1, 0), GLOWC_BUSY);
    glowc_host_stats s;
    CHECK_EQ(glowc_host_get_stats(h, NULL, &s), GLOWC_OK);
    CHECK_EQ(s.queued, 6);
    CHECK_EQ(s.rejected, 2);
    CHECK_EQ(s.running + s.done, 0);
    /* No device failed: none is quarantined, and there is none to restore. */
    CHECK_EQ(s.quarantined, 0);
    CHECK_EQ(glowc_host_restore_device(h, 0), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "device 0 is not quarantined");
    CHECK_EQ(T.total, 0);
    CHECK_EQ(glowc_host_pause(h, 0), GLOWC_OK);
    wait_total(6);
    for (int k = 0; k < 6; k++) {
        CHECK_EQ(T.calls[k], 1);
        CHECK_EQ(T.st[k], GLOWC_OK);
        CHECK(close10(T.out[k], lenet_ref[k % NIMG]));
    }
    CHECK_EQ(T.calls[6], 0);
    /* A synchronous run now goes through. */
    CHECK_EQ(glowc_host_run(h, "lenet", &in, 1, &out, 1, 0), GLOWC_OK);
    CHECK(close10(scores, lenet_ref[0]));
    CHECK_EQ(glowc_host_get_stats(h, "lenet", &s), GLOWC_OK);
    CHECK_EQ(s.done, 7);
    CHECK_EQ(s.submitted, 7);
    CHECK(s.latency_min_us > 0 && s.latency_min_us <= s.latency_p50_us &&
          s.latency_p50_us <= s.latency_p99_us && s.latency_p99_us <= s.latency_max_us);
    check_sums(h, "lenet");
    glowc_host_destroy(h);
}

/* Cancelling a queued request calls its callback before returning; a deadline expires a
 * queued request without running it; destroying the host cancels what is queued. */
static void test_cancel_deadline(void)
{
    glowc_host *h = new_host("cpu:t1", 8);
    if (!h)
        return;
    add(h, "lenet", LENET, 0);
    tally_reset();
    glowc_host_pause(h, 1);
    glowc_request_id ids[3];
    for (int k = 0; k < 3; k++)
        CHECK_EQ(submit(h, "lenet", k, k, 0, &ids[k]), GLOWC_OK);
    CHECK(ids[0] != ids[1] && ids[1] != ids[2]);
    CHECK_EQ(glowc_host_cancel(h, ids[1]), GLOWC_OK);
    CHECK_EQ(T.calls[1], 1);
    CHECK_EQ(T.st[1], GLOWC_CANCELLED);
    CHECK_CONTAINS(T.msg[1], "cancelled");
    CHECK_EQ(glowc_host_cancel(h, ids[1]), GLOWC_ERR_INVALID_ARGUMENT);
    /* Expires while the host is paused: the timer completes it, nothing else has to happen. */
    CHECK_EQ(submit(h, "lenet", 3, 3, 2000, NULL), GLOWC_OK);
    wait_total(2);
    CHECK_EQ(T.calls[3], 1);
    CHECK_EQ(T.st[3], GLOWC_DEADLINE);
    CHECK_CONTAINS(T.msg[3], "deadline");
    glowc_host_stats s;
    CHECK_EQ(glowc_host_get_stats(h, NULL, &s), GLOWC_OK);
    CHECK_EQ(s.cancelled, 1);
    CHECK_EQ(s.expired, 1);
    CHECK_EQ(s.queued, 2);
    glowc_host_pause(h, 0);
    wait_total(4);
    CHECK_EQ(T.st[0], GLOWC_OK);
    CHECK_EQ(T.st[2], GLOWC_OK);
    CHECK_EQ(glowc_host_cancel(h, ids[0]), GLOWC_ERR_INVALID_ARGUMENT);  /* finished */
    CHECK_EQ(glowc_host_get_stats(h, NULL, &s), GLOWC_OK);
    CHECK_EQ(s.done, 2);
    check_sums(h, NULL);
    /* Queued at destruction: cancelled, with its callback. */
    glowc_host_pause(h, 1);
    CHECK_EQ(submit(h, "lenet", 4, 4, 0, NULL), GLOWC_OK);
    glowc_host_destroy(h);
    CHECK_EQ(T.calls[4], 1);
    CHECK_EQ(T.st[4], GLOWC_CANCELLED);
}

/* ---- the load test ---- */

typedef struct client {
    glowc_host *h;
    int id;
    int wrong, failed;
    struct {
        pthread_mutex_t lock;
        pthread_cond_t cv;
        bool done;
        glowc_status st;
        float out[10];
    } a;
} client;

static void client_done(void *user, glowc_request_id id, glowc_status st, glowc_tensor **outs,
                        int nouts)
{
    (void)id;
    client *c = user;
    pthread_mutex_lock(&c->a.lock);
    c->a.st = st;
    if (st == GLOWC_OK && nouts == 1)
        memcpy(c->a.out, glowc_tensor_data(outs[0]), sizeof c->a.out);
    c->a.done = true;
    pthread_cond_signal(&c->a.cv);
    pthread_mutex_unlock(&c->a.lock);
}

/* Odd clients run synchronously, even ones asynchronously (one request in flight each), on
 * both networks in turn, each input chosen by the client and the request number. */
static void *client_main(void *arg)
{
    client *c = arg;
    for (int r = 0; r < PER_CLIENT; r++) {
        const char *net = (r + c->id) % 2 ? "lenet" : "mlp";
        int img = (r * 7 + c->id) % NIMG;
        glowc_value in = in_value(net, img);
        float got[10];
        glowc_status st;
        if (c->id % 2) {
            glowc_value out = { NULL, GLOWC_F32, 0, NULL, got, sizeof got };
            st = glowc_host_run(c->h, net, &in, 1, &out, 1, 0);
        } else {
            c->a.done = false;
            st = glowc_host_run_async(c->h, net, &in, 1, 0, client_done, c, NULL);
            if (st == GLOWC_OK) {
                pthread_mutex_lock(&c->a.lock);
                while (!c->a.done)
                    pthread_cond_wait(&c->a.cv, &c->a.lock);
                pthread_mutex_unlock(&c->a.lock);
                st = c->a.st;
                memcpy(got, c->a.out, sizeof got);
            }
        }
        if (st != GLOWC_OK)
            c->failed++;
        else if (!close10(got, ref_of(net, img)))
            c->wrong++;
    }
    return NULL;
}

static void test_load(void)
{
    glowc_host *h = new_host("cpu:t1,cpu:t1", CLIENTS);
    if (!h)
        return;
    add(h, "lenet", LENET, 0);
    add(h, "mlp", MLP, 0);
    glowc_network_info info;
    CHECK_EQ(glowc_host_network_info(h, "lenet", &info), GLOWC_OK);
    CHECK_EQ(info.partitions, 1);
    CHECK_EQ(info.devices, 3);     /* a replica on each device */
    client cs[CLIENTS];
    pthread_t th[CLIENTS];
    struct timespec t0, t1;   /* for the printed figure only: nothing is asserted on time */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < CLIENTS; i++) {
        memset(&cs[i], 0, sizeof cs[i]);
        cs[i].h = h;
        cs[i].id = i;
        pthread_mutex_init(&cs[i].a.lock, NULL);
        pthread_cond_init(&cs[i].a.cv, NULL);
        CHECK_EQ(pthread_create(&th[i], NULL, client_main, &cs[i]), 0);
    }
    int wrong = 0, failed = 0;
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(th[i], NULL);
        wrong += cs[i].wrong;
        failed += cs[i].failed;
        pthread_mutex_destroy(&cs[i].a.lock);
        pthread_cond_destroy(&cs[i].a.cv);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK_EQ(wrong, 0);
    CHECK_EQ(failed, 0);
    glowc_host_stats s, a, b;
    CHECK_EQ(glowc_host_get_stats(h, NULL, &s), GLOWC_OK);
    CHECK_EQ(glowc_host_get_stats(h, "lenet", &a), GLOWC_OK);
    CHECK_EQ(glowc_host_get_stats(h, "mlp", &b), GLOWC_OK);
    CHECK_EQ(s.submitted, CLIENTS * PER_CLIENT);
    CHECK_EQ(s.done, CLIENTS * PER_CLIENT);
    CHECK_EQ(a.done + b.done, s.done);
    CHECK_EQ(s.rejected + s.failed + s.cancelled + s.expired + s.queued + s.running, 0);
    printf("load: %d clients x %d requests, 2 networks on 2 devices: %llu submitted, %llu "
           "done (lenet %llu, mlp %llu), %d wrong, %llu failed, %llu rejected, %llu "
           "cancelled, %llu expired; latency p50 %.1f us, p99 %.1f us, max %.1f us; %.0f "
           "requests/s\n", CLIENTS, PER_CLIENT, (unsigned long long)s.submitted,
           (unsigned long long)s.done, (unsigned long long)a.done, (unsigned long long)b.done,
           wrong, (unsigned long long)s.failed, (unsigned long long)s.rejected,
           (unsigned long long)s.cancelled, (unsigned long long)s.expired, s.latency_p50_us,
           s.latency_p99_us, s.latency_max_us, (double)s.done / secs);
    glowc_host_destroy(h);
}

/* ---- fault isolation ---- */

/* y = Gather(data[4], idx): an index past 3 fails the run (the cpu backend checks it). */
static uint8_t *gather_model(size_t *size)
{
    mk_model *mk = mk_new(13);
    float data[4] = { 10, 20, 30, 40 };
    mk_initializer(mk, mk_tensor_raw(mk, "data", MK_F32, 1, (int64_t[]){ 4 }, data,
                                     sizeof data));
    mk_input(mk, "idx", MK_I64, 1, (int64_t[]){ 1 });
    mk_node(mk, "Gather", "g", 2, (const char *[]){ "data", "idx" }, 1, (const char *[]){ "y" });
    mk_output(mk, "y", MK_F32, 1, (int64_t[]){ 1 });
    uint8_t *bytes = mk_pack(mk, size);
    mk_free(mk);
    return bytes;
}

static void test_faults(void)
{
    glowc_host *h = new_host("cpu:t1,cpu:t1", 64);
    if (!h)
        return;
    add(h, "lenet", LENET, 0);
    size_t size = 0;
    uint8_t *g = gather_model(&size);
    CHECK_EQ(glowc_host_add_network_from_bytes(h, "gather", NULL, g, size), GLOWC_OK);
    free(g);
    /* A bad input fails at once, alone, naming the input; nothing is queued. */
    float small[10] = { 0 };
    int64_t bad_shape[4] = { 1, 1, 2, 5 };
    glowc_value bad = { NULL, GLOWC_F32, 4, bad_shape, small, sizeof small };
    CHECK_EQ(glowc_host_run_async(h, "lenet", &bad, 1, 0, on_done, (void *)0, NULL),
             GLOWC_ERR_BAD_INPUT);
    CHECK_CONTAINS(glowc_last_error(), "input 0");
    CHECK_EQ(glowc_host_run_async(h, "nosuch", &bad, 1, 0, on_done, (void *)0, NULL),
             GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "no network 'nosuch'");
    /* Runs that fail (an index out of range) among runs that succeed, on both networks. */
    tally_reset();
    int64_t idx_shape[1] = { 1 };
    int64_t idx[40];
    for (int k = 0; k < 40; k++) {
        idx[k] = k % 3 == 0 ? 9 : k % 4;
        if (k % 2) {
            glowc_value in = { NULL, GLOWC_I64, 1, idx_shape, &idx[k], sizeof idx[k] };
            CHECK_EQ(glowc_host_run_async(h, "gather", &in, 1, 0, on_done, (void *)(intptr_t)k,
                                          NULL), GLOWC_OK);
        } else {
            CHECK_EQ(submit(h, "lenet", k, k % NIMG, 0, NULL), GLOWC_OK);
        }
    }
    wait_total(40);
    int bad_runs = 0;
    for (int k = 0; k < 40; k++) {
        CHECK_EQ(T.calls[k], 1);
        if (k % 2 == 0) {
            CHECK_EQ(T.st[k], GLOWC_OK);
            CHECK(close10(T.out[k], lenet_ref[k % NIMG]));
        } else if (idx[k] == 9) {
            bad_runs++;
            CHECK_EQ(T.st[k], GLOWC_ERR_RUNTIME);
            CHECK_CONTAINS(T.msg[k], "network 'gather'");
            CHECK_CONTAINS(T.msg[k], "out of range");
        } else {
            CHECK_EQ(T.st[k], GLOWC_OK);
        }
    }
    glowc_host_stats s;
    CHECK_EQ(glowc_host_get_stats(h, "gather", &s), GLOWC_OK);
    CHECK_EQ(s.failed, bad_runs);
    CHECK_EQ(s.done, 20 - bad_runs);
    CHECK_EQ(glowc_host_get_stats(h, "lenet", &s), GLOWC_OK);
    CHECK_EQ(s.failed, 0);
    CHECK_EQ(s.done, 20);
    check_sums(h, NULL);
    glowc_host_destroy(h);
}

/* ---- adding and removing networks while others run ---- */

typedef struct runner {
    glowc_host *h;
    volatile int stop;
    int runs, wrong, failed;
} runner;

static void *runner_main(void *arg)
{
    runner *r = arg;
    while (!r->stop) {
        int img = r->runs % NIMG;
        glowc_value in = in_value("lenet", img);
        float got[10];
        glowc_value out = { NULL, GLOWC_F32, 0, NULL, got, sizeof got };
        if (glowc_host_run(r->h, "lenet", &in, 1, &out, 1, 0) != GLOWC_OK)
            r->failed++;
        else if (!close10(got, lenet_ref[img]))
            r->wrong++;
        r->runs++;
    }
    return NULL;
}

static void test_add_remove(void)
{
    glowc_host *h = new_host("cpu:t1,cpu:t1", 16);
    if (!h)
        return;
    add(h, "lenet", LENET, 1);
    runner r = { .h = h };
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, runner_main, &r), 0);
    for (int round = 0; round < 6; round++) {
        add(h, "mlp", MLP, 0);
        CHECK_EQ(glowc_host_add_network(h, "mlp", NULL, MLP), GLOWC_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(glowc_last_error(), "already has a network 'mlp'");
        int img = round % NIMG;
        glowc_value in = in_value("mlp", img);
        float got[10];
        glowc_value out = { NULL, GLOWC_F32, 0, NULL, got, sizeof got };
        CHECK_EQ(glowc_host_run(h, "mlp", &in, 1, &out, 1, 0), GLOWC_OK);
        CHECK(close10(got, mlp_ref[img]));
        /* Removal is deferred: a request accepted before it still completes. */
        tally_reset();
        glowc_host_pause(h, 1);
        CHECK_EQ(submit(h, "mlp", 0, img, 0, NULL), GLOWC_OK);
        CHECK_EQ(glowc_host_remove_network(h, "mlp"), GLOWC_OK);
        CHECK_EQ(glowc_host_run(h, "mlp", &in, 1, &out, 1, 0), GLOWC_ERR_INVALID_ARGUMENT);
        glowc_host_pause(h, 0);
        wait_total(1);
        CHECK_EQ(T.st[0], GLOWC_OK);
        CHECK(close10(T.out[0], mlp_ref[img]));
    }
    CHECK_EQ(glowc_host_remove_network(h, "mlp"), GLOWC_ERR_INVALID_ARGUMENT);
    r.stop = 1;
    pthread_join(th, NULL);
    CHECK(r.runs > 0);
    CHECK_EQ(r.wrong, 0);
    CHECK_EQ(r.failed, 0);
    glowc_host_destroy(h);
}

/* ---- placement ---- */

static void test_placement(void)
{
    /* Fits nowhere: the message names what it needs and what the devices have. */
    glowc_host *h = new_host("cpu:4KiB:t1,interpreter:4KiB", 4);
    if (h) {
        CHECK(glowc_host_add_network(h, "lenet", NULL, LENET) != GLOWC_OK);
        CHECK_CONTAINS(glowc_last_error(), "fits no device");
        CHECK_CONTAINS(glowc_last_error(), "device 1 (interpreter) 4.00 KiB");
        glowc_host_destroy(h);
    }
    /* Two networks with one replica each go to the least loaded devices: one each. */
    h = new_host("cpu:t1,cpu:t1", 4);
    if (h) {
        add(h, "lenet", LENET, 1);
        add(h, "mlp", MLP, 1);
        glowc_network_info a, b;
        CHECK_EQ(glowc_host_network_info(h, "lenet", &a), GLOWC_OK);
        CHECK_EQ(glowc_host_network_info(h, "mlp", &b), GLOWC_OK);
        CHECK_EQ(a.devices, 1);
        CHECK_EQ(b.devices, 2);
        glowc_tensor_info ti;
        CHECK_EQ(glowc_host_network_input_info(h, "lenet", 0, &ti), GLOWC_OK);
        CHECK_EQ(ti.rank, 4);
        CHECK_EQ(ti.shape[2], 28);
        CHECK_EQ(glowc_host_network_output_info(h, "mlp", 1, &ti), GLOWC_ERR_INVALID_ARGUMENT);
        glowc_host_destroy(h);
    }
    /* Too big for either device whole: partitioned, and the outputs are the whole graph's. */
    h = new_host("cpu:150KiB:t1,cpu:250KiB:t1", 16);
    if (h) {
        add(h, "lenet", LENET, 0);
        glowc_network_info a;
        CHECK_EQ(glowc_host_network_info(h, "lenet", &a), GLOWC_OK);
        CHECK(a.partitions >= 2);
        CHECK_EQ(a.devices, 3);
        tally_reset();
        for (int k = 0; k < 16; k++)
            CHECK_EQ(submit(h, "lenet", k, k % NIMG, 0, NULL), GLOWC_OK);
        wait_total(16);
        for (int k = 0; k < 16; k++) {
            CHECK_EQ(T.calls[k], 1);
            CHECK_EQ(T.st[k], GLOWC_OK);
            CHECK(close10(T.out[k], lenet_ref[k % NIMG]));
        }
        check_sums(h, NULL);
        glowc_host_destroy(h);
    }
}

static void test_args(void)
{
    glowc_host *h = NULL;
    CHECK_EQ(glowc_host_create_from_spec("cpu", 0, &h), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "at least one request");
    CHECK_EQ(glowc_host_create_from_spec("gpu:t2", 4, &h), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(glowc_last_error(), "unknown backend 'gpu'");
    CHECK(h == NULL);
    glowc_device_desc d[1] = { { "interpreter", 1, 0 } };
    CHECK_EQ(glowc_host_create(d, 1, 2, &h), GLOWC_OK);
    CHECK_EQ(glowc_host_device_count(h), 1);
    CHECK_EQ(glowc_host_add_network(h, "x", NULL, "no/such.onnx"), GLOWC_ERR_IO);
    glowc_host_stats s;
    CHECK_EQ(glowc_host_get_stats(h, "x", &s), GLOWC_ERR_INVALID_ARGUMENT);
    CHECK_STR_EQ(glowc_status_name(GLOWC_BUSY), "busy");
    glowc_host_destroy(h);
    glowc_host_destroy(NULL);
}

int main(void)
{
    make_refs();
    test_args();
    test_busy_and_callbacks();
    test_cancel_deadline();
    test_faults();
    test_add_remove();
    test_placement();
    test_load();
    return CHECK_DONE();
}
