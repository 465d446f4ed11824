// host.c - The host's requests: a bounded FIFO queue, dispatch to idle devices (a whole
// network to an idle replica, a partitioned one partition by partition as its dependencies
// finish, which pipelines requests across devices), cancellation, deadlines, completion
// callbacks and statistics. Networks are placed by host_net.c.
//
// One lock guards the queue, the networks, the per-device item counts and the statistics; it
// is never held while a network runs or a callback is called. Dispatch runs under it whenever
// something changes (a request arrives, a work item finishes, the host is resumed, the timer
// fires): it walks the queue in order and starts every request that has an idle device, so a
// request of a network whose devices are busy does not hold up one whose device is free.
// Requests whose deadline passed are taken out there too and completed after the lock is
// dropped; a timer thread sleeps until the earliest deadline so that they expire even when
// nothing else happens.
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/host_internal.h"

double host_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- statistics ---- */

void host_stats_init(host_stats *s)
{
    memset(s, 0, sizeof *s);
    s->window = glow_xcalloc(GLOW_HOST_LAT_WINDOW, sizeof *s->window);
}

void host_stats_free(host_stats *s) { free(s->window); }

static void stats_latency(host_stats *s, double us)
{
    if (s->s.done == 1 || us < s->s.lat_min_us)
        s->s.lat_min_us = us;
    if (us > s->s.lat_max_us)
        s->s.lat_max_us = us;
    s->lat_sum += us;
    s->window[s->at] = us;
    s->at = (s->at + 1) % GLOW_HOST_LAT_WINDOW;
    if (s->nwindow < GLOW_HOST_LAT_WINDOW)
        s->nwindow++;
}

/* Moves a request's counts in both the host's and its network's statistics. */
#define BOTH(h, net, field, delta)          \
    do {                                    \
        (h)->stats.s.field += (delta);      \
        (net)->stats.s.field += (delta);    \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void stats_snapshot(const host_stats *s, glow_host_stats *out)
{
    *out = s->s;
    out->lat_mean_us = s->s.done ? s->lat_sum / (double)s->s.done : 0;
    out->lat_p50_us = out->lat_p99_us = 0;
    if (!s->nwindow)
        return;
    double *v = glow_xcalloc((size_t)s->nwindow, sizeof *v);
    memcpy(v, s->window, (size_t)s->nwindow * sizeof *v);
    qsort(v, (size_t)s->nwindow, sizeof *v, cmp_double);
    out->lat_p50_us = v[(s->nwindow - 1) / 2];
    out->lat_p99_us = v[(int)((s->nwindow - 1) * 0.99 + 0.5)];
    free(v);
}

glow_status glow_host_get_stats(glow_host *h, const char *network, glow_host_stats *out,
                                glow_diag *d)
{
    pthread_mutex_lock(&h->lock);
    const glow_host_network *net = NULL;
    if (network) {
        net = h->nets;
        while (net && strcmp(net->name, network))
            net = net->next;
        if (!net) {
            pthread_mutex_unlock(&h->lock);
            return glow_fail(d, GLOW_ERR_NOT_FOUND, "the host has no network '%s'", network);
        }
    }
    stats_snapshot(net ? &net->stats : &h->stats, out);
    out->quarantined = h->quarantined & (net ? net->devices : ~0ull);
    pthread_mutex_unlock(&h->lock);
    return GLOW_OK;
}

/* ---- quarantine ---- */

/* Takes device di out of service after a device fault (lock held). */
static void quarantine_locked(glow_host *h, int di, const char *msg)
{
    if (h->quarantined >> di & 1)
        return;
    h->quarantined |= 1ull << di;
    snprintf(h->why[di], sizeof h->why[di], "%.200s", msg);
}

uint64_t glow_host_quarantined(glow_host *h)
{
    pthread_mutex_lock(&h->lock);
    uint64_t q = h->quarantined;
    pthread_mutex_unlock(&h->lock);
    return q;
}

static host_request *dispatch(glow_host *h);
static void finish_list(glow_host *h, host_request *list);

bool glow_host_restore_device(glow_host *h, int i)
{
    if (i < 0 || i >= h->ndevs)
        return false;
    pthread_mutex_lock(&h->lock);
    bool was = h->quarantined >> i & 1;
    h->quarantined &= ~(1ull << i);
    h->why[i][0] = 0;
    host_request *expired = dispatch(h);
    pthread_mutex_unlock(&h->lock);
    finish_list(h, expired);
    return was;
}

/* ---- requests ---- */

static void request_free(host_request *r)
{
    for (int i = 0; i < r->ninputs; i++)
        glow_tensor_free(&r->inputs[i]);
    free(r->inputs);
    if (r->xr)
        glow_exec_request_destroy(r->net->exec, r->xr);
    free(r->waiting);
    free(r->diag);
    free(r);
}

static void unlink_queued(glow_host *h, host_request *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        h->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        h->tail = r->prev;
    r->prev = r->next = NULL;
    h->nqueued--;
}

/* Drops the request's reference to its network (host lock held); true when the network is
 * to be freed by the caller, outside the lock. */
static bool put_locked(glow_host_network *net)
{
    return --net->refs == 0 && net->removed;
}

/* Calls a request's callback. Without the lock. */
static void callback(host_request *r, glow_host_outcome o, const glow_tensor *outs)
{
    static const glow_diag none;
    r->fn(r->user, r->id, o, r->diag ? r->diag : &none, outs,
          o == GLOW_HOST_DONE ? r->net->noutputs : 0);
}

/* Frees a completed request and drops its hold on its network and on the host. */
static void retire(glow_host *h, host_request *r)
{
    glow_host_network *net = r->net;
    request_free(r);
    pthread_mutex_lock(&h->lock);
    bool free_net = put_locked(net);
    h->active--;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
    if (free_net)
        host_network_free(h, net);
}

/* Completes requests taken out of the queue (linked by next) that did not run, each with its
 * r->outcome (expired, cancelled, or failed for want of a device). */
static void finish_list(glow_host *h, host_request *list)
{
    while (list) {
        host_request *r = list;
        list = r->next;
        r->next = NULL;
        callback(r, r->outcome, NULL);
        retire(h, r);
    }
}

static void fail_request(host_request *r, glow_status st, int part, int dev,
                         const char *backend, const char *msg)
{
    if (r->failed)
        return;   /* the first failure is the one reported */
    r->failed = true;
    r->diag = glow_xcalloc(1, sizeof *r->diag);
    if (part < 0)
        glow_fail(r->diag, st, "network '%s' on device %d (%s): %s", r->net->name, dev,
                  backend, msg);
    else
        glow_fail(r->diag, st, "network '%s', partition %d on device %d (%s): %s",
                  r->net->name, part, dev, backend, msg);
}

static void run_whole(glow_device *dev, void *arg);
static void run_part(glow_device *dev, void *arg);

/* A partition of a request, as a device's work item. */
typedef struct part_item {
    host_request *r;
    int part;
} part_item;

/* Gives partition p of a started request to its device (lock held). */
static void submit_part(glow_host *h, host_request *r, int p)
{
    part_item *it = glow_xcalloc(1, sizeof *it);
    it->r = r;
    it->part = p;
    int dev = r->net->part_dev[p];
    h->dev_items[dev]++;
    r->parts_running++;
    glow_device_submit(h->devs[dev], run_part, it);
}

/* Starts a queued request on its network's devices if they are idle; false when it must
 * wait (lock held). */
static bool try_start(glow_host *h, host_request *r)
{
    glow_host_network *net = r->net;
    if (!net->exec) {
        /* An idle replica (nothing given to it and not finished), lowest index first. */
        for (int i = 0; i < h->ndevs; i++) {
            if (!net->dev_prog[i] || h->dev_items[i] || (h->quarantined >> i & 1))
                continue;
            h->dev_items[i]++;
            glow_device_submit(h->devs[i], run_whole, r);
            return true;
        }
        return false;
    }
    /* A partitioned request starts when the device of its first partition is idle; its later
     * partitions queue on their devices behind at most the partitions of earlier requests,
     * so the partitions of two requests run on two devices at once (pipelining). */
    if (h->dev_items[net->part_dev[0]])
        return false;
    glow_diag d = { 0 };
    if (glow_exec_request_create(net->exec, &r->xr, &d) != GLOW_OK)
        return false;  /* out of memory: it waits (and may expire) */
    const glow_partition_plan *plan = glow_executor_plan(net->exec);
    r->waiting = glow_xcalloc((size_t)net->nparts, sizeof *r->waiting);
    r->parts_left = net->nparts;
    for (int p = 0; p < net->nparts; p++)
        r->waiting[p] = plan->parts[p].ndeps;
    for (int p = 0; p < net->nparts; p++)
        if (!r->waiting[p])
            submit_part(h, r, p);
    return true;
}

/* The quarantined device that leaves request r no device to run on: -1 when it has one - a
 * whole network's replica that is not quarantined, or every partition's device in service.
 * Lock held. */
static int no_device(const glow_host *h, const host_request *r)
{
    const glow_host_network *net = r->net;
    if (!(net->devices & h->quarantined))
        return -1;
    if (!net->exec)
        return net->devices & ~h->quarantined ? -1 : __builtin_ctzll(net->devices);
    for (int p = 0; p < net->nparts; p++)
        if (h->quarantined >> net->part_dev[p] & 1)
            return net->part_dev[p];
    return -1;
}

/* Starts what can start, in queue order, and takes out what expired or has no device left
 * (returned, linked by next, with their outcome, for finish_list once the lock is dropped).
 * Lock held. */
static host_request *dispatch(glow_host *h)
{
    host_request *expired = NULL, **tail = &expired;
    double now = host_now_us();
    for (host_request *r = h->head, *next; r; r = next) {
        next = r->next;
        if (r->deadline > 0 && now >= r->deadline) {
            unlink_queued(h, r);
            BOTH(h, r->net, queued, -1);
            BOTH(h, r->net, expired, 1);
            r->outcome = GLOW_HOST_EXPIRED;
            *tail = r;
            tail = &r->next;
            continue;
        }
        int dead = no_device(h, r);
        if (dead >= 0) {
            unlink_queued(h, r);
            BOTH(h, r->net, queued, -1);
            BOTH(h, r->net, failed, 1);
            r->outcome = GLOW_HOST_FAILED;
            r->failed = true;
            r->diag = glow_xcalloc(1, sizeof *r->diag);
            const char *name = r->net->name, *b = glow_device_backend(h->devs[dead]);
            if (r->net->exec || __builtin_popcountll(r->net->devices) == 1)
                glow_fail(r->diag, GLOW_ERR_RUNTIME, "network '%s': not run: device %d (%s), "
                          "%s, is quarantined since it failed (%s)", name, dead, b,
                          r->net->exec ? "where a partition of it runs"
                                       : "the only device it is placed on", h->why[dead]);
            else
                glow_fail(r->diag, GLOW_ERR_RUNTIME, "network '%s': not run: every device it "
                          "is placed on is quarantined (device %d (%s) since it failed: %s)",
                          name, dead, b, h->why[dead]);
            *tail = r;
            tail = &r->next;
            continue;
        }
        if (h->paused || h->stopping)
            continue;
        if (try_start(h, r)) {
            unlink_queued(h, r);
            BOTH(h, r->net, queued, -1);
            BOTH(h, r->net, running, 1);
        }
    }
    return expired;
}

/* A request's run ended (lock held): statistics, then dispatch; returns what expired. */
static host_request *ended_locked(glow_host *h, host_request *r, bool ok)
{
    BOTH(h, r->net, running, -1);
    if (ok) {
        BOTH(h, r->net, done, 1);
        double us = host_now_us() - r->t_submit;
        stats_latency(&h->stats, us);
        stats_latency(&r->net->stats, us);
    } else {
        BOTH(h, r->net, failed, 1);
    }
    return dispatch(h);
}

/* A whole network's request on one of its replicas. */
static void run_whole(glow_device *dev, void *arg)
{
    host_request *r = arg;
    glow_host *h = r->host;
    int di = glow_device_index(dev);
    glow_program *p = r->net->dev_prog[di];
    glow_exec *x = NULL;
    glow_diag *d = glow_xcalloc(1, sizeof *d);
    glow_status st;
    bool fault = glow_device_failing(dev);
    if (fault)
        st = glow_fail(d, GLOW_ERR_RUNTIME, "the device failed");
    else if ((st = glow_program_acquire(p, &x, d)) == GLOW_OK)
        st = glow_exec_run(x, r->inputs, r->ninputs, d);
    if (st != GLOW_OK)
        fail_request(r, st, -1, di, glow_device_backend(dev), d->msg);
    int n = r->net->noutputs;
    glow_tensor small[16];
    glow_tensor *outs = n <= 16 ? small : glow_xcalloc((size_t)n, sizeof *outs);
    for (int k = 0; st == GLOW_OK && k < n; k++)
        outs[k] = glow_exec_output(x, k);

    pthread_mutex_lock(&h->lock);
    h->dev_items[di]--;
    if (fault)
        quarantine_locked(h, di, d->msg);
    host_request *expired = ended_locked(h, r, st == GLOW_OK);
    pthread_mutex_unlock(&h->lock);
    free(d);
    /* The outputs live in the context: it goes back to the pool after the callback, and
     * before the request lets go of the network that owns the program. */
    callback(r, st == GLOW_OK ? GLOW_HOST_DONE : GLOW_HOST_FAILED, outs);
    if (x)
        glow_program_release(p, x);
    if (outs != small)
        free(outs);
    retire(h, r);
    finish_list(h, expired);
}

/* One partition of a partitioned network's request. */
static void run_part(glow_device *dev, void *arg)
{
    part_item *it = arg;
    host_request *r = it->r;
    int p = it->part;
    free(it);
    glow_host *h = r->host;
    glow_host_network *net = r->net;
    int di = glow_device_index(dev);
    glow_diag *d = glow_xcalloc(1, sizeof *d);
    glow_status st;
    bool fault = glow_device_failing(dev);
    if (fault)
        st = glow_fail(d, GLOW_ERR_RUNTIME, "the device failed");
    else
        st = glow_executor_run_partition(net->exec, r->xr, r->inputs, p, d);

    pthread_mutex_lock(&h->lock);
    h->dev_items[di]--;
    if (fault)
        quarantine_locked(h, di, d->msg);
    r->parts_running--;
    r->parts_left--;
    if (st != GLOW_OK) {
        fail_request(r, st, p, di, glow_device_backend(dev), d->msg);
    } else if (!r->failed) {
        const glow_partition_plan *plan = glow_executor_plan(net->exec);
        for (int q = p + 1; q < net->nparts; q++)
            for (int k = 0; k < plan->parts[q].ndeps; k++)
                if (plan->parts[q].deps[k] == p && --r->waiting[q] == 0)
                    submit_part(h, r, q);
    }
    bool complete = r->parts_running == 0 && (r->failed || r->parts_left == 0);
    bool ok = complete && !r->failed;
    host_request *expired = complete ? ended_locked(h, r, ok) : dispatch(h);
    pthread_mutex_unlock(&h->lock);
    free(d);
    if (complete) {
        int n = net->noutputs;
        glow_tensor small[16];
        glow_tensor *outs = n <= 16 ? small : glow_xcalloc((size_t)n, sizeof *outs);
        for (int k = 0; ok && k < n; k++)
            outs[k] = glow_exec_request_output(r->xr, k);
        callback(r, ok ? GLOW_HOST_DONE : GLOW_HOST_FAILED, outs);
        if (outs != small)
            free(outs);
        retire(h, r);
    }
    finish_list(h, expired);
}

glow_host_submitted glow_host_submit(glow_host *h, glow_host_network *net, glow_tensor *inputs,
                                     int ninputs, int64_t deadline_us, glow_host_done_fn fn,
                                     void *user, uint64_t *id)
{
    host_request *r = glow_xcalloc(1, sizeof *r);
    r->host = h;
    r->net = net;
    r->inputs = inputs;
    r->ninputs = ninputs;
    r->fn = fn;
    r->user = user;
    r->t_submit = host_now_us();
    r->deadline = deadline_us > 0 ? r->t_submit + (double)deadline_us : 0;
    pthread_mutex_lock(&h->lock);
    if (h->stopping || h->nqueued >= h->capacity) {
        h->stats.s.rejected++;
        net->stats.s.rejected++;
        pthread_mutex_unlock(&h->lock);
        request_free(r);
        return GLOW_HOST_BUSY;
    }
    r->id = ++h->next_id;
    if (id)
        *id = r->id;
    net->refs++;
    h->active++;
    r->prev = h->tail;
    if (h->tail)
        h->tail->next = r;
    else
        h->head = r;
    h->tail = r;
    h->nqueued++;
    BOTH(h, net, submitted, 1);
    BOTH(h, net, queued, 1);
    host_request *expired = dispatch(h);
    if (r->deadline > 0)
        pthread_cond_broadcast(&h->changed);   /* the timer may have to wake earlier */
    pthread_mutex_unlock(&h->lock);
    finish_list(h, expired);
    return GLOW_HOST_QUEUED;
}

bool glow_host_cancel(glow_host *h, uint64_t id)
{
    pthread_mutex_lock(&h->lock);
    host_request *r = h->head;
    while (r && r->id != id)
        r = r->next;
    if (r) {
        unlink_queued(h, r);
        BOTH(h, r->net, queued, -1);
        BOTH(h, r->net, cancelled, 1);
    }
    pthread_mutex_unlock(&h->lock);
    if (!r)
        return false;
    callback(r, GLOW_HOST_CANCELLED, NULL);
    retire(h, r);
    return true;
}

void glow_host_pause(glow_host *h, bool paused)
{
    pthread_mutex_lock(&h->lock);
    h->paused = paused;
    host_request *expired = dispatch(h);
    pthread_mutex_unlock(&h->lock);
    finish_list(h, expired);
}

/* Sleeps until the earliest deadline in the queue (or until something changes) and lets
 * dispatch expire what is due. */
static void *timer_main(void *arg)
{
    glow_host *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        double earliest = 0;
        for (const host_request *r = h->head; r; r = r->next)
            if (r->deadline > 0 && (earliest == 0 || r->deadline < earliest))
                earliest = r->deadline;
        if (earliest == 0) {
            pthread_cond_wait(&h->changed, &h->lock);
        } else {
            struct timespec ts;
            double at = earliest + 1;  /* just past it, so it is due when we wake */
            ts.tv_sec = (time_t)(at / 1e6);
            ts.tv_nsec = (long)((at - (double)ts.tv_sec * 1e6) * 1e3);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&h->changed, &h->lock, &ts);
        }
        if (h->stopping)
            break;
        host_request *expired = dispatch(h);
        if (expired) {
            pthread_mutex_unlock(&h->lock);
            finish_list(h, expired);
            pthread_mutex_lock(&h->lock);
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

glow_status glow_host_create(const glow_device_spec *devices, int ndevices, int queue_capacity,
                             glow_host **out, glow_diag *d)
{
    *out = NULL;
    if (ndevices < 1 || ndevices > 64)
        return glow_fail(d, GLOW_ERR_USAGE, "a host wants 1 to 64 devices, %d given", ndevices);
    if (queue_capacity < 1)
        return glow_fail(d, GLOW_ERR_USAGE, "the request queue must hold at least one request "
                         "(capacity %d given)", queue_capacity);
    glow_host *h = glow_xcalloc(1, sizeof *h);
    h->capacity = queue_capacity;
    h->devs = glow_xcalloc((size_t)ndevices, sizeof *h->devs);
    h->dev_items = glow_xcalloc((size_t)ndevices, sizeof *h->dev_items);
    h->why = glow_xcalloc((size_t)ndevices, sizeof *h->why);
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->changed, &ca);
    pthread_condattr_destroy(&ca);
    host_stats_init(&h->stats);
    glow_status st = GLOW_OK;
    for (int i = 0; i < ndevices && st == GLOW_OK; i++) {
        st = glow_device_create(devices[i].backend, devices[i].threads, devices[i].capacity, i,
                                &h->devs[i], d);
        if (st == GLOW_OK)
            h->ndevs++;
    }
    if (st == GLOW_OK) {
        h->timer_started = pthread_create(&h->timer, NULL, timer_main, h) == 0;
        if (!h->timer_started)
            st = glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot start the host's timer thread");
    }
    if (st != GLOW_OK) {
        glow_host_destroy(h);
        return st;
    }
    *out = h;
    return GLOW_OK;
}

void glow_host_destroy(glow_host *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    host_request *list = h->head;
    for (host_request *r = h->head; r; r = r->next) {
        BOTH(h, r->net, queued, -1);
        BOTH(h, r->net, cancelled, 1);
    }
    h->head = h->tail = NULL;
    h->nqueued = 0;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
    for (host_request *r = list; r; r = r->next)
        r->outcome = GLOW_HOST_CANCELLED;
    finish_list(h, list);
    pthread_mutex_lock(&h->lock);
    while (h->active > 0)
        pthread_cond_wait(&h->changed, &h->lock);
    pthread_mutex_unlock(&h->lock);
    if (h->timer_started)
        pthread_join(h->timer, NULL);
    /* Networks first: freeing one gives its bytes back to its devices. */
    while (h->nets) {
        glow_host_network *net = h->nets;
        h->nets = net->next;
        host_network_free(h, net);
    }
    for (int i = 0; i < h->ndevs; i++)
        glow_device_destroy(h->devs[i]);
    pthread_cond_destroy(&h->changed);
    pthread_mutex_destroy(&h->lock);
    host_stats_free(&h->stats);
    free(h->dev_items);
    free(h->why);
    free(h->devs);
    free(h);
}

int glow_host_device_count(const glow_host *h) { return h->ndevs; }

glow_device *glow_host_device(glow_host *h, int i) { return h->devs[i]; }

glow_host_network *glow_host_network_get(glow_host *h, const char *name)
{
    pthread_mutex_lock(&h->lock);
    glow_host_network *net = h->nets;
    while (net && strcmp(net->name, name))
        net = net->next;
    if (net)
        net->refs++;
    pthread_mutex_unlock(&h->lock);
    return net;
}

void glow_host_network_put(glow_host *h, glow_host_network *net)
{
    pthread_mutex_lock(&h->lock);
    bool free_net = put_locked(net);
    pthread_mutex_unlock(&h->lock);
    if (free_net)
        host_network_free(h, net);
}
