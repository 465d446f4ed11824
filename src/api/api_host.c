// api_host.c - The host of the public API (glowc_host_*): devices from a list or a spec
// string, networks added from files or bytes, synchronous and asynchronous runs with the
// session's binding and checks, cancellation, deadlines and statistics, over the runtime's
// host (src/runtime/host.c).
//
// A run binds and checks its values against the network's inputs before it is queued, so a
// bad input fails at once on the caller's thread and never occupies the queue; the inputs
// are copied into the request, which is what lets an asynchronous caller reuse its buffers on
// return. A synchronous run is an asynchronous one whose completion copies the outputs into
// the caller's buffers and wakes the caller.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "runtime/host.h"

#define MAX_STACK_IO 32

struct glowc_host {
    glow_host *h;
};

GLOWC_API glowc_status glowc_host_create(const glowc_device_desc *devices, int ndevices,
                                         int queue_capacity, glowc_host **out)
{
    if (!out)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_create: out is NULL");
    *out = NULL;
    if (ndevices < 1 || ndevices > 64 || !devices)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "a host wants 1 to 64 devices, %d given",
                        devices ? ndevices : 0);
    glow_device_spec specs[64];
    for (int i = 0; i < ndevices; i++) {
        if (devices[i].threads < 0 || devices[i].threads > 1024)
            return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "device %d: threads wants 1 to 1024 "
                            "(0: one per core), got %d", i, devices[i].threads);
        specs[i] = (glow_device_spec){ .backend = devices[i].backend,
                                       .capacity = devices[i].memory_bytes
                                                       ? devices[i].memory_bytes
                                                       : UINT64_MAX,
                                       .threads = devices[i].threads };
    }
    glowc_host *g = calloc(1, sizeof *g);
    glow_diag *d = calloc(1, sizeof *d);
    glowc_status st = GLOWC_OK;
    if (!g || !d)
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    else if (glow_host_create(specs, ndevices, queue_capacity, &g->h, d) != GLOW_OK)
        st = api_fail_diag(d);
    free(d);
    if (st != GLOWC_OK) {
        free(g);
        return st;
    }
    *out = g;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_host_create_from_spec(const char *spec, int queue_capacity,
                                                   glowc_host **out)
{
    if (!out)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_create_from_spec: out is NULL");
    *out = NULL;
    if (!spec)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_create_from_spec: the device "
                        "list is NULL");
    /* The ":tN" parts are the host's; the rest is the partitioner's device list syntax. */
    size_t len = strlen(spec);
    char *rest = calloc(1, len + 1);
    int threads[64] = { 0 }, k = 0;
    glow_diag *d = calloc(1, sizeof *d);
    if (!rest || !d) {
        free(rest);
        free(d);
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    size_t at = 0;
    for (const char *p = spec; *p;) {
        const char *end = p + strcspn(p, ":,");
        if (*p == 't' && end > p + 1 && strspn(p + 1, "0123456789") == (size_t)(end - p - 1) &&
            at > 0 && rest[at - 1] == ':') {
            if (k < 64)
                threads[k] = atoi(p + 1);
            at--;   /* drop the ':' before it */
        } else {
            memcpy(rest + at, p, (size_t)(end - p));
            at += (size_t)(end - p);
        }
        if (*end)
            rest[at++] = *end;
        if (*end == ',')
            k++;
        p = *end ? end + 1 : end;
    }
    rest[at] = 0;
    glow_device_spec *devs = NULL;
    int n = 0;
    glowc_status st = GLOWC_OK;
    if (glow_devices_parse(rest, &devs, &n, d) != GLOW_OK) {
        st = api_fail_diag(d);
    } else if (n > 64) {
        st = api_fail(GLOWC_ERR_INVALID_ARGUMENT, "a host wants 1 to 64 devices, %d given", n);
    } else {
        glowc_device_desc desc[64];
        for (int i = 0; i < n; i++)
            desc[i] = (glowc_device_desc){ .backend = devs[i].backend, .threads = threads[i],
                                           .memory_bytes = devs[i].capacity == UINT64_MAX
                                                               ? 0
                                                               : devs[i].capacity };
        st = glowc_host_create(desc, n, queue_capacity, out);
    }
    glow_devices_free(devs, n);
    free(rest);
    free(d);
    return st;
}

GLOWC_API void glowc_host_destroy(glowc_host *h)
{
    if (!h)
        return;
    glow_host_destroy(h->h);
    free(h);
}

GLOWC_API int glowc_host_device_count(const glowc_host *h)
{
    return h ? glow_host_device_count(h->h) : 0;
}

#define NEED_HOST(h)                                                                      \
    do {                                                                                  \
        if (!(h))                                                                         \
            return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%s: the host is NULL", __func__); \
    } while (0)

GLOWC_API glowc_status glowc_host_pause(glowc_host *h, int paused)
{
    NEED_HOST(h);
    glow_host_pause(h->h, paused != 0);
    return GLOWC_OK;
}

/* ---- networks ---- */

static glowc_status add(glowc_host *h, const char *name, const glowc_options *o,
                        const char *path, const void *bytes, size_t size)
{
    NEED_HOST(h);
    if (!name)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_add_network: name is NULL");
    uint8_t *file = NULL;
    if (path) {
        FILE *f = fopen(path, "rb");
        long n = -1;
        if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
            fseek(f, 0, SEEK_SET) == 0 && (file = malloc((size_t)n + 1)) &&
            fread(file, 1, (size_t)n, f) == (size_t)n) {
            bytes = file;
            size = (size_t)n;
        } else {
            bytes = NULL;
        }
        if (f)
            fclose(f);
        if (!bytes) {
            free(file);
            return api_fail(GLOWC_ERR_IO, "%s: cannot read the model", path);
        }
    }
    glow_onnx_options lo = { 0 };
    glow_compile_options co = { .stop_after = GLOW_STAGE_COMPILED };
    glow_host_net_options no = { .load = &lo, .compile = &co };
    if (o) {
        lo.defines = (const char *const *)o->defines;
        lo.ndefines = o->ndefines;
        co.no_optimize = o->no_optimize;
        co.cache_dir = o->cache_dir;
        no.max_replicas = o->replicas;
    }
    glow_quant_options q = { 0 };
    if (o && o->profile) {
        q = (glow_quant_options){ .profile = o->profile, .schema = o->schema,
                                  .calibration = o->calibration, .per_channel = o->per_channel,
                                  .reduce_range = o->reduce_range, .keep_float = o->keep_float, .precision = o->precision };
        co.quant_hook = glow_quant_hook;
        co.quant_ctx = &q;
    }
    glow_diag *d = calloc(1, sizeof *d);
    glowc_status st = GLOWC_OK;
    if (!d)
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    else if (glow_host_add_network(h->h, name, bytes, size, &no, d) != GLOW_OK)
        st = api_fail_diag(d);
    free(d);
    free(file);
    return st;
}

GLOWC_API glowc_status glowc_host_add_network(glowc_host *h, const char *name,
                                              const glowc_options *o, const char *path)
{
    if (!path)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_add_network: path is NULL");
    return add(h, name, o, path, NULL, 0);
}

GLOWC_API glowc_status glowc_host_add_network_from_bytes(glowc_host *h, const char *name,
                                                         const glowc_options *o,
                                                         const void *bytes, size_t size)
{
    if (!bytes)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_add_network_from_bytes: bytes "
                        "is NULL");
    return add(h, name, o, NULL, bytes, size);
}

GLOWC_API glowc_status glowc_host_remove_network(glowc_host *h, const char *name)
{
    NEED_HOST(h);
    if (!name)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_remove_network: name is NULL");
    glow_diag *d = calloc(1, sizeof *d);
    if (!d)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = GLOWC_OK;
    if (glow_host_remove_network(h->h, name, d) != GLOW_OK)
        st = api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%s", d->msg);
    free(d);
    return st;
}

/* The network with a reference taken, or a failure naming it. */
static glowc_status get(glowc_host *h, const char *network, glow_host_network **out)
{
    NEED_HOST(h);
    if (!network)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the network name is NULL");
    if (!(*out = glow_host_network_get(h->h, network)))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the host has no network '%s'", network);
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_host_network_info(glowc_host *h, const char *network,
                                               glowc_network_info *info)
{
    glow_host_network *net;
    GLOWC_TRY_API(get(h, network, &net));
    if (info)
        *info = (glowc_network_info){ .ninputs = glow_host_network_ninputs(net),
                                      .noutputs = glow_host_network_noutputs(net),
                                      .partitions = glow_host_network_partitions(net),
                                      .devices = glow_host_network_devices(net) };
    glow_host_network_put(h->h, net);
    return info ? GLOWC_OK : api_fail(GLOWC_ERR_INVALID_ARGUMENT, "info is NULL");
}

/* Row i of a network's inputs (or outputs) as the session's binding reads it; the name is
 * borrowed from the network. */
static void fill_io(const glow_host_network *net, bool output, int i, api_io *io)
{
    const glow_type *t = output ? glow_host_network_output_type(net, i)
                                : glow_host_network_input_type(net, i);
    io->name = (char *)(output ? glow_host_network_output_name(net, i)
                               : glow_host_network_input_name(net, i));
    api_io_set_type(io, t);
}

static glowc_status io_info(glowc_host *h, const char *network, int i, bool output,
                            glowc_tensor_info *info)
{
    glow_host_network *net;
    GLOWC_TRY_API(get(h, network, &net));
    int n = output ? glow_host_network_noutputs(net) : glow_host_network_ninputs(net);
    const char *what = output ? "output" : "input";
    glowc_status st = GLOWC_OK;
    if (!info) {
        st = api_fail(GLOWC_ERR_INVALID_ARGUMENT, "info is NULL");
    } else if (i < 0 || i >= n) {
        st = api_fail(GLOWC_ERR_INVALID_ARGUMENT, "network '%s' has %d %s%s; there is no %s %d",
                      network, n, what, n == 1 ? "" : "s", what, i);
    } else {
        const glow_type *t = output ? glow_host_network_output_type(net, i)
                                    : glow_host_network_input_type(net, i);
        *info = (glowc_tensor_info){ .name = output ? glow_host_network_output_name(net, i)
                                                    : glow_host_network_input_name(net, i),
                                     .dtype = api_dtype_public(t->dtype), .rank = t->rank,
                                     .shape = t->dims, .size_bytes = glow_type_bytes(t) };
    }
    glow_host_network_put(h->h, net);
    return st;
}

GLOWC_API glowc_status glowc_host_network_input_info(glowc_host *h, const char *network, int i,
                                                     glowc_tensor_info *info)
{
    return io_info(h, network, i, false, info);
}

GLOWC_API glowc_status glowc_host_network_output_info(glowc_host *h, const char *network, int i,
                                                      glowc_tensor_info *info)
{
    return io_info(h, network, i, true, info);
}

/* ---- runs ---- */

/* Binds and checks inputs (and outputs when given) against net, and copies the inputs into
 * new tensors in model order (*copies, for the request to own). out_slot (may be NULL) gets
 * the output values by row. */
static glowc_status prepare(const glow_host_network *net, const glowc_value *inputs,
                            int ninputs, glowc_value *outputs, int noutputs,
                            const glowc_value **out_slot, glow_tensor **copies)
{
    int nin = glow_host_network_ninputs(net), nout = glow_host_network_noutputs(net);
    api_io *io = calloc((size_t)(nin > nout ? nin : nout) + 1, sizeof *io);
    const glowc_value **slot = calloc((size_t)nin + 1, sizeof *slot);
    glowc_status st = GLOWC_OK;
    if (!io || !slot) {
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int k = 0; k < nin; k++)
        fill_io(net, false, k, &io[k]);
    if ((st = api_bind(io, nin, inputs, ninputs, "input", true, slot)) != GLOWC_OK)
        goto done;
    for (int k = 0; k < nin && st == GLOWC_OK; k++)
        st = api_check_value(slot[k], &io[k], k, true);
    if (st != GLOWC_OK)
        goto done;
    if (out_slot) {
        for (int k = 0; k < nout; k++)
            fill_io(net, true, k, &io[k]);
        st = api_bind(io, nout, outputs, noutputs, "output", false, out_slot);
        for (int k = 0; k < nout && st == GLOWC_OK; k++)
            if (out_slot[k])
                st = api_check_value(out_slot[k], &io[k], k, false);
        if (st != GLOWC_OK)
            goto done;
        for (int k = 0; k < nin; k++)
            fill_io(net, false, k, &io[k]);
    }
    glow_tensor *t = calloc((size_t)nin + 1, sizeof *t);
    if (!t) {
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    glow_diag d = { 0 };
    for (int k = 0; k < nin; k++) {
        /* Strings are copied with their bytes: an asynchronous request outlives the
         * caller's strings. */
        bool str = io[k].type.dtype == GLOW_STRING;
        glow_status as = str ? glow_tensor_alloc_strings(&t[k], &io[k].type,
                                                         (const char *const *)slot[k]->data, &d)
                             : glow_tensor_alloc(&t[k], &io[k].type, &d);
        if (as != GLOW_OK) {
            for (int j = 0; j < k; j++)
                glow_tensor_free(&t[j]);
            free(t);
            st = api_fail(GLOWC_ERR_NO_MEMORY, "cannot copy input %d '%s' (%zu bytes)", k,
                          io[k].name, io[k].bytes);
            goto done;
        }
        if (!str)
            memcpy(t[k].data, slot[k]->data, io[k].bytes);
    }
    *copies = t;
done:
    free(io);
    free(slot);
    return st;
}

/* Makes a completion's outcome the calling thread's status and message. */
static glowc_status outcome_status(glow_host_outcome o, const glow_diag *d, uint64_t id,
                                   const char *network)
{
    switch (o) {
    case GLOW_HOST_DONE: return GLOWC_OK;
    case GLOW_HOST_FAILED: return api_fail_diag(d);
    case GLOW_HOST_CANCELLED:
        return api_fail(GLOWC_CANCELLED, "request %llu on network '%s' was cancelled before it "
                        "started", (unsigned long long)id, network);
    case GLOW_HOST_EXPIRED:
        return api_fail(GLOWC_DEADLINE, "request %llu on network '%s' was still queued at its "
                        "deadline", (unsigned long long)id, network);
    }
    return api_fail(GLOWC_ERR_INTERNAL, "request %llu: unknown outcome",
                    (unsigned long long)id);
}

typedef struct async_req {
    glowc_host_callback cb;
    void *user;
    char *network;
    const glow_host_network *net;  /* held by the request until the callback returns */
} async_req;

static void async_done(void *user, uint64_t id, glow_host_outcome o, const glow_diag *d,
                       const glow_tensor *outs, int nouts)
{
    async_req *a = user;
    glowc_status st = outcome_status(o, d, id, a->network);
    glowc_tensor *small[MAX_STACK_IO];
    glowc_tensor **t = nouts <= MAX_STACK_IO ? small : calloc((size_t)nouts, sizeof *t);
    int n = st == GLOWC_OK && t ? nouts : 0;
    if (st == GLOWC_OK && !t)
        st = api_fail(GLOWC_ERR_NO_MEMORY, "request %llu: cannot allocate its outputs",
                      (unsigned long long)id);
    for (int k = 0; k < n; k++) {
        api_io io;
        fill_io(a->net, true, k, &io);
        /* A data-dependent output comes back under its actual extent (outs[k]'s type), as
         * from glowc_session_run_tensors. */
        t[k] = api_tensor_copy(NULL, io.dtype, &outs[k]);
        char *name = t[k] ? malloc(strlen(io.name) + 1) : NULL;
        if (!name) {
            glowc_tensor_destroy(t[k]);
            for (int j = 0; j < k; j++)
                glowc_tensor_destroy(t[j]);
            st = api_fail(GLOWC_ERR_NO_MEMORY, "request %llu: cannot allocate its outputs",
                          (unsigned long long)id);
            n = 0;
            break;
        }
        strcpy(name, io.name);
        t[k]->own_name = name;   /* the tensor may outlive the network */
        t[k]->name = name;
    }
    a->cb(a->user, id, st, n ? t : NULL, n);
    for (int k = 0; k < n; k++)
        glowc_tensor_destroy(t[k]);
    if (t != small)
        free(t);
    free(a->network);
    free(a);
}

/* Queues prepared inputs (taken) on net; maps BUSY to the public status with a message. */
static glowc_status submit(glowc_host *h, glow_host_network *net, const char *network,
                           glow_tensor *copies, int64_t deadline_us, glow_host_done_fn fn,
                           void *user, uint64_t *id)
{
    int nin = glow_host_network_ninputs(net);
    if (glow_host_submit(h->h, net, copies, nin, deadline_us, fn, user, id) == GLOW_HOST_BUSY)
        return api_fail(GLOWC_BUSY, "the host's request queue is full (network '%s'): try "
                        "again later", network);
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_host_run_async(glowc_host *h, const char *network,
                                            const glowc_value *inputs, int ninputs,
                                            int64_t deadline_us, glowc_host_callback callback,
                                            void *user, glowc_request_id *id)
{
    if (!callback)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_run_async: callback is NULL");
    glow_host_network *net;
    GLOWC_TRY_API(get(h, network, &net));
    glow_tensor *copies = NULL;
    glowc_status st = prepare(net, inputs, ninputs, NULL, 0, NULL, &copies);
    async_req *a = st == GLOWC_OK ? calloc(1, sizeof *a) : NULL;
    if (st == GLOWC_OK && (!a || !(a->network = malloc(strlen(network) + 1)))) {
        for (int k = 0; k < glow_host_network_ninputs(net); k++)
            glow_tensor_free(&copies[k]);
        free(copies);
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    if (st == GLOWC_OK) {
        strcpy(a->network, network);
        a->cb = callback;
        a->user = user;
        a->net = net;
        uint64_t rid = 0;
        st = submit(h, net, network, copies, deadline_us, async_done, a, &rid);
        if (st == GLOWC_OK && id)
            *id = rid;
        a = st == GLOWC_OK ? NULL : a;
    }
    if (a) {
        free(a->network);
        free(a);
    }
    glow_host_network_put(h->h, net);
    return st;
}

typedef struct sync_req {
    pthread_mutex_t lock;
    pthread_cond_t done_cv;
    bool done;
    glowc_status st;
    char msg[1024];
    const glowc_value **out_slot;
    const char *network;
} sync_req;

static void sync_done(void *user, uint64_t id, glow_host_outcome o, const glow_diag *d,
                      const glow_tensor *outs, int nouts)
{
    sync_req *s = user;
    glowc_status st = outcome_status(o, d, id, s->network);
    for (int k = 0; st == GLOWC_OK && k < nouts; k++)
        if (s->out_slot[k])
            memcpy(s->out_slot[k]->data, outs[k].data, glow_type_bytes(&outs[k].type));
    pthread_mutex_lock(&s->lock);
    s->st = st;
    if (st != GLOWC_OK)
        snprintf(s->msg, sizeof s->msg, "%s", glowc_last_error());
    s->done = true;
    pthread_cond_signal(&s->done_cv);
    pthread_mutex_unlock(&s->lock);
}

GLOWC_API glowc_status glowc_host_run(glowc_host *h, const char *network,
                                      const glowc_value *inputs, int ninputs,
                                      glowc_value *outputs, int noutputs, int64_t deadline_us)
{
    glow_host_network *net;
    GLOWC_TRY_API(get(h, network, &net));
    int nout = glow_host_network_noutputs(net);
    const glowc_value **out_slot = calloc((size_t)nout + 1, sizeof *out_slot);
    sync_req *s = calloc(1, sizeof *s);
    glow_tensor *copies = NULL;
    glowc_status st = !out_slot || !s ? api_fail(GLOWC_ERR_NO_MEMORY, "out of memory")
                                      : prepare(net, inputs, ninputs, outputs, noutputs,
                                                out_slot, &copies);
    if (st == GLOWC_OK) {
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->done_cv, NULL);
        s->out_slot = out_slot;
        s->network = network;
        st = submit(h, net, network, copies, deadline_us, sync_done, s, NULL);
        if (st == GLOWC_OK) {
            pthread_mutex_lock(&s->lock);
            while (!s->done)
                pthread_cond_wait(&s->done_cv, &s->lock);
            pthread_mutex_unlock(&s->lock);
            st = s->st;
            if (st != GLOWC_OK)
                api_fail(st, "%s", s->msg);   /* the message, on the caller's thread */
        }
        pthread_cond_destroy(&s->done_cv);
        pthread_mutex_destroy(&s->lock);
    }
    free(s);
    free(out_slot);
    glow_host_network_put(h->h, net);
    return st;
}

GLOWC_API glowc_status glowc_host_cancel(glowc_host *h, glowc_request_id id)
{
    NEED_HOST(h);
    if (!glow_host_cancel(h->h, id))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "request %llu is not queued (it is running, "
                        "finished, or unknown)", (unsigned long long)id);
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_host_get_stats(glowc_host *h, const char *network,
                                            glowc_host_stats *out)
{
    NEED_HOST(h);
    if (!out)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_host_get_stats: out is NULL");
    glow_host_stats s;
    glow_diag *d = calloc(1, sizeof *d);
    if (!d)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = GLOWC_OK;
    if (glow_host_get_stats(h->h, network, &s, d) != GLOW_OK) {
        st = api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%s", d->msg);
    } else {
        *out = (glowc_host_stats){ .submitted = s.submitted, .rejected = s.rejected,
                                   .queued = s.queued, .running = s.running, .done = s.done,
                                   .failed = s.failed, .cancelled = s.cancelled,
                                   .expired = s.expired, .latency_min_us = s.lat_min_us,
                                   .latency_mean_us = s.lat_mean_us,
                                   .latency_p50_us = s.lat_p50_us,
                                   .latency_p99_us = s.lat_p99_us,
                                   .latency_max_us = s.lat_max_us,
                                   .quarantined = s.quarantined };
    }
    free(d);
    return st;
}

GLOWC_API glowc_status glowc_host_restore_device(glowc_host *h, int device)
{
    NEED_HOST(h);
    if (!glow_host_restore_device(h->h, device))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "device %d is not quarantined (the host "
                        "has %d device%s)", device, glow_host_device_count(h->h),
                        glow_host_device_count(h->h) == 1 ? "" : "s");
    return GLOWC_OK;
}
