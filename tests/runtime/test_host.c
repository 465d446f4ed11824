// test_host.c - The runtime's host (src/runtime/host.c) from inside: pipelining of a
// partitioned network (with the second device paused, the first still runs the next request's
// first partition, so both requests' second partitions wait there: no timing involved), an
// injected device failure that fails the request meeting it with a message and quarantines
// the device while the other device keeps serving (until the device is restored), and device
// memory accounting returning to zero after removal.
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "runtime/host_internal.h"

static glow_diag D;

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static glow_host *host(const glow_device_spec *devs, int n, int capacity)
{
    glow_host *h = NULL;
    glow_diag_clear(&D);
    if (glow_host_create(devs, n, capacity, &h, &D) != GLOW_OK)
        fprintf(stderr, "host: %s\n", D.msg);
    CHECK(h != NULL);
    return h;
}

static bool add(glow_host *h, const char *name, const char *path, int replicas)
{
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    CHECK(bytes != NULL);
    glow_host_net_options o = { .max_replicas = replicas };
    glow_diag_clear(&D);
    glow_status st = glow_host_add_network(h, name, bytes, size, &o, &D);
    if (st != GLOW_OK)
        fprintf(stderr, "add %s: %s\n", name, D.msg);
    free(bytes);
    CHECK_EQ(st, GLOW_OK);
    return st == GLOW_OK;
}

/* Completions, by request slot. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int total;
    glow_host_outcome o[64];
    char msg[64][256];
    float first[64];
} R = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, { 0 }, { { 0 } }, { 0 } };

static void done(void *user, uint64_t id, glow_host_outcome o, const glow_diag *d,
                 const glow_tensor *outs, int nouts)
{
    (void)id;
    int k = (int)(intptr_t)user;
    pthread_mutex_lock(&R.lock);
    R.o[k] = o;
    snprintf(R.msg[k], sizeof R.msg[k], "%.200s", d->msg);
    R.first[k] = o == GLOW_HOST_DONE && nouts > 0 ? ((const float *)outs[0].data)[0] : 0;
    R.total++;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.lock);
}

static void wait_total(int n)
{
    pthread_mutex_lock(&R.lock);
    while (R.total < n)
        pthread_cond_wait(&R.cv, &R.lock);
    pthread_mutex_unlock(&R.lock);
}

static void reset(void)
{
    pthread_mutex_lock(&R.lock);
    R.total = 0;
    pthread_mutex_unlock(&R.lock);
}

/* A copy of the network's inputs filled with a constant, for the request to own. */
static glow_tensor *inputs(glow_host_network *net, float v)
{
    int n = glow_host_network_ninputs(net);
    glow_tensor *t = glow_xcalloc((size_t)n, sizeof *t);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(glow_tensor_alloc(&t[i], glow_host_network_input_type(net, i), &D), GLOW_OK);
        float *x = t[i].data;
        for (size_t j = 0; j < glow_tensor_bytes(&t[i]) / sizeof(float); j++)
            x[j] = v;
    }
    return t;
}

static void submit(glow_host *h, glow_host_network *net, int slot, float v)
{
    CHECK_EQ(glow_host_submit(h, net, inputs(net, v), glow_host_network_ninputs(net), 0, done,
                              (void *)(intptr_t)slot, NULL), GLOW_HOST_QUEUED);
}

/* Waits (without a time limit of its own: CTest's) until device dev holds n items. */
static void wait_load(glow_device *dev, int n)
{
    while (glow_device_load(dev) != n)
        usleep(1000);
}

static void test_pipelining(void)
{
    glow_device_spec devs[2] = { { "cpu", 150 << 10, 1 }, { "cpu", 250 << 10, 1 } };
    glow_host *h = host(devs, 2, 8);
    if (!h || !add(h, "lenet", "models/lenet.onnx", 0)) {
        glow_host_destroy(h);
        return;
    }
    glow_host_network *net = glow_host_network_get(h, "lenet");
    CHECK_EQ(glow_host_network_partitions(net), 2);
    CHECK_EQ(net->part_dev[0], 0);
    CHECK_EQ(net->part_dev[1], 1);
    reset();
    glow_device_pause(glow_host_device(h, 1), true);
    submit(h, net, 0, 0.25f);
    submit(h, net, 1, 0.5f);
    /* Request 1's first partition ran on device 0 while request 0 was not finished. */
    wait_load(glow_host_device(h, 1), 2);
    wait_load(glow_host_device(h, 0), 0);
    glow_host_stats s;
    CHECK_EQ(glow_host_get_stats(h, NULL, &s, &D), GLOW_OK);
    CHECK_EQ(s.running, 2);
    CHECK_EQ(s.queued, 0);
    CHECK_EQ(R.total, 0);
    glow_device_pause(glow_host_device(h, 1), false);
    wait_total(2);
    CHECK_EQ(R.o[0], GLOW_HOST_DONE);
    CHECK_EQ(R.o[1], GLOW_HOST_DONE);
    CHECK(R.first[0] != R.first[1]);   /* each request has its own crossing tensors */
    /* Device 1 fails under partition 1: that request fails, the device is quarantined, and
     * the next request, with a partition there, fails at once without running. */
    glow_device_set_failing(glow_host_device(h, 1), true);
    reset();
    submit(h, net, 0, 0.25f);
    wait_total(1);
    CHECK_EQ(R.o[0], GLOW_HOST_FAILED);
    CHECK_CONTAINS(R.msg[0], "network 'lenet', partition 1 on device 1 (cpu): the device failed");
    submit(h, net, 1, 0.25f);
    wait_total(2);
    CHECK_EQ(R.o[1], GLOW_HOST_FAILED);
    CHECK_CONTAINS(R.msg[1], "device 1 (cpu), where a partition of it runs, is quarantined");
    glow_host_network_put(h, net);
    glow_host_destroy(h);
}

/* Device 1 fails: the request that meets the fault fails with its message and device 1 is
 * quarantined at once. Network c (on both devices) goes on on device 0 only; b (only on
 * device 1) fails at once, naming the quarantine; a (on device 0) is untouched; a network
 * added meanwhile is not placed on device 1. Device 0 is paused so that which request goes
 * where does not depend on timing. Restored, device 1 serves again. */
static void test_device_failure(void)
{
    glow_device_spec devs[2] = { { "cpu", UINT64_MAX, 1 }, { "cpu", UINT64_MAX, 1 } };
    glow_host *h = host(devs, 2, 32);
    if (!h || !add(h, "a", "models/lenet.onnx", 1) || !add(h, "b", "models/digits_mlp.onnx", 1) ||
        !add(h, "c", "models/lenet.onnx", 0)) {
        glow_host_destroy(h);
        return;
    }
    glow_host_network *a = glow_host_network_get(h, "a"), *b = glow_host_network_get(h, "b");
    glow_host_network *c = glow_host_network_get(h, "c");
    CHECK_EQ(glow_host_network_devices(a), 1);
    CHECK_EQ(glow_host_network_devices(b), 2);
    CHECK_EQ(glow_host_network_devices(c), 3);
    CHECK(glow_device_used(glow_host_device(h, 0)) > 0);
    glow_device_pause(glow_host_device(h, 0), true);
    glow_device_set_failing(glow_host_device(h, 1), true);
    reset();
    submit(h, c, 0, 0.0f);           /* device 0, held there by the pause */
    submit(h, c, 1, 0.1f);           /* device 1: meets the fault */
    wait_total(1);
    CHECK_EQ(R.o[1], GLOW_HOST_FAILED);
    CHECK_CONTAINS(R.msg[1], "network 'c' on device 1 (cpu): the device failed");
    CHECK_EQ(glow_host_quarantined(h), 2);
    for (int k = 2; k < 10; k++)     /* wait for device 0, never go to device 1 */
        submit(h, c, k, (float)k / 20);
    submit(h, b, 10, 0.5f);          /* no device left: fails at once */
    wait_total(2);
    CHECK_EQ(R.o[10], GLOW_HOST_FAILED);
    CHECK_CONTAINS(R.msg[10], "network 'b': not run: device 1 (cpu), the only device it is "
                   "placed on, is quarantined since it failed (the device failed)");
    submit(h, a, 11, 0.5f);
    glow_host_stats s;
    CHECK_EQ(glow_host_get_stats(h, NULL, &s, &D), GLOW_OK);
    CHECK_EQ(s.quarantined, 2);
    CHECK_EQ(s.failed, 2);
    CHECK_EQ(s.running, 1);
    CHECK_EQ(s.queued, 9);
    CHECK_EQ(glow_host_get_stats(h, "a", &s, &D), GLOW_OK);
    CHECK_EQ(s.quarantined, 0);
    CHECK_EQ(glow_host_get_stats(h, "c", &s, &D), GLOW_OK);
    CHECK_EQ(s.quarantined, 2);
    CHECK_EQ(s.failed, 1);
    /* A network added now goes on device 0 only. */
    if (add(h, "d", "models/lenet.onnx", 0)) {
        glow_host_network *dn = glow_host_network_get(h, "d");
        CHECK_EQ(glow_host_network_devices(dn), 1);
        glow_host_network_put(h, dn);
        CHECK_EQ(glow_host_remove_network(h, "d", &D), GLOW_OK);
    }
    glow_device_pause(glow_host_device(h, 0), false);
    wait_total(12);
    for (int k = 0; k < 12; k++)
        if (k != 1 && k != 10)
            CHECK_EQ(R.o[k], GLOW_HOST_DONE);
    CHECK_EQ(glow_host_get_stats(h, NULL, &s, &D), GLOW_OK);
    CHECK_EQ(s.done, 10);
    CHECK_EQ(s.failed, 2);
    /* Restored once its fault is gone, device 1 serves b again. */
    glow_device_set_failing(glow_host_device(h, 1), false);
    CHECK(glow_host_restore_device(h, 1));
    CHECK(!glow_host_restore_device(h, 1));
    CHECK(!glow_host_restore_device(h, 2));
    CHECK_EQ(glow_host_quarantined(h), 0);
    reset();
    submit(h, b, 0, 0.5f);
    wait_total(1);
    CHECK_EQ(R.o[0], GLOW_HOST_DONE);
    /* Both devices fail: c's requests meet the fault on device 0, then on device 1, and the
     * third is refused, both its devices being out. */
    glow_device_set_failing(glow_host_device(h, 0), true);
    glow_device_set_failing(glow_host_device(h, 1), true);
    reset();
    for (int k = 0; k < 3; k++) {
        submit(h, c, k, 0.5f);
        wait_total(k + 1);
        CHECK_EQ(R.o[k], GLOW_HOST_FAILED);
    }
    CHECK_CONTAINS(R.msg[0], "network 'c' on device 0 (cpu): the device failed");
    CHECK_CONTAINS(R.msg[1], "network 'c' on device 1 (cpu): the device failed");
    CHECK_CONTAINS(R.msg[2], "network 'c': not run: every device it is placed on is "
                   "quarantined (device 0 (cpu) since it failed: the device failed)");
    CHECK_EQ(glow_host_quarantined(h), 3);
    for (int i = 0; i < 2; i++) {
        glow_device_set_failing(glow_host_device(h, i), false);
        CHECK(glow_host_restore_device(h, i));
    }
    glow_host_network_put(h, a);
    glow_host_network_put(h, b);
    glow_host_network_put(h, c);
    /* Removing them gives the devices' memory back - once the last request has let go of
     * its network (its callback has returned by now, its release may still be under way:
     * removal is deferred, so this waits for it rather than expecting it at once). */
    CHECK_EQ(glow_host_remove_network(h, "a", &D), GLOW_OK);
    CHECK_EQ(glow_host_remove_network(h, "b", &D), GLOW_OK);
    CHECK_EQ(glow_host_remove_network(h, "c", &D), GLOW_OK);
    CHECK_EQ(glow_host_remove_network(h, "b", &D), GLOW_ERR_NOT_FOUND);
    CHECK(glow_host_network_get(h, "a") == NULL);
    while (glow_device_used(glow_host_device(h, 0)) || glow_device_used(glow_host_device(h, 1)))
        usleep(1000);
    CHECK_EQ(glow_device_used(glow_host_device(h, 0)), 0);
    CHECK_EQ(glow_device_used(glow_host_device(h, 1)), 0);
    glow_host_destroy(h);
}

int main(void)
{
    test_pipelining();
    test_device_failure();
    return CHECK_DONE();
}
