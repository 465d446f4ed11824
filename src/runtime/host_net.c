// host_net.c - Placing networks on a host's devices (Glow's Provisioner): compile the network
// once per kind of device (backend and threads), put it whole on the least loaded devices with
// room for it - one replica each, all served by the one compiled program of their kind - or,
// when no device has room, partition it over the devices' free memory; and removing networks.
//
// A device's memory holds, for each network placed on it, the compiled program's constants
// and one execution context's regions (mutable and activations): a device runs one request at
// a time, so one context per device is what a replica needs. Replicas of one kind share the
// constants in host memory, but each device is charged for them as a real device would be.
// Compiling happens without the host's lock (it takes seconds); the placement decision and
// the reservations are made under it, so two networks added at once cannot both take the
// same free bytes.
#include <stdlib.h>
#include <string.h>

#include "runtime/host_internal.h"

static uint64_t program_bytes(const glow_program *p)
{
    return p->ir->constant_bytes + p->ir->mutable_bytes + p->ir->activation_bytes;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *c = glow_xcalloc(1, n);
    memcpy(c, s ? s : "", n - 1);
    return c;
}

/* One kind of device: the network compiled for it. */
typedef struct kind {
    const char *backend;
    int threads;
    glow_program *p;       /* NULL when it did not compile */
    glow_diag *why;        /* then why */
    uint64_t bytes;
    bool used;
} kind;

static glow_status load(const uint8_t *bytes, size_t size, const glow_host_net_options *o,
                        glow_module **out, glow_diag *d)
{
    glow_module *m = glow_module_create();
    glow_status st = glow_onnx_load_bytes(m, bytes, size, o ? o->load : NULL, d);
    if (st != GLOW_OK) {
        glow_module_destroy(m);
        return st;
    }
    *out = m;
    return GLOW_OK;
}

static glow_compile_options compile_options(const glow_host_net_options *o, const char *backend,
                                            int threads)
{
    glow_compile_options c = { .stop_after = GLOW_STAGE_COMPILED };
    if (o && o->compile)
        c = *o->compile;
    c.backend = backend;
    c.threads = threads;
    c.stop_after = GLOW_STAGE_COMPILED;
    return c;
}

static glow_host_network *find_locked(glow_host *h, const char *name)
{
    glow_host_network *net = h->nets;
    while (net && strcmp(net->name, name))
        net = net->next;
    return net;
}

static void describe_io(glow_host_network *net, int nin, int nout)
{
    net->ninputs = nin;
    net->noutputs = nout;
    net->in_names = glow_xcalloc((size_t)nin + 1, sizeof *net->in_names);
    net->out_names = glow_xcalloc((size_t)nout + 1, sizeof *net->out_names);
    net->in_types = glow_xcalloc((size_t)nin + 1, sizeof *net->in_types);
    net->out_types = glow_xcalloc((size_t)nout + 1, sizeof *net->out_types);
}

void host_network_free(glow_host *h, glow_host_network *net)
{
    for (int i = 0; net->reserved && i < h->ndevs; i++)
        glow_device_unreserve(h->devs[i], net->reserved[i]);
    for (int k = 0; k < net->nprogs; k++)
        glow_program_destroy(net->progs[k]);
    glow_executor_destroy(net->exec);
    for (int i = 0; i < net->ninputs; i++)
        free(net->in_names[i]);
    for (int i = 0; i < net->noutputs; i++)
        free(net->out_names[i]);
    free(net->in_names);
    free(net->out_names);
    free(net->in_types);
    free(net->out_types);
    free(net->dev_prog);
    free(net->progs);
    free(net->part_dev);
    free(net->reserved);
    host_stats_free(&net->stats);
    free(net->name);
    free(net);
}

static glow_host_network *new_network(glow_host *h, const char *name)
{
    glow_host_network *net = glow_xcalloc(1, sizeof *net);
    net->name = dup_str(name);
    net->dev_prog = glow_xcalloc((size_t)h->ndevs, sizeof *net->dev_prog);
    net->reserved = glow_xcalloc((size_t)h->ndevs, sizeof *net->reserved);
    net->progs = glow_xcalloc((size_t)h->ndevs + 1, sizeof *net->progs);
    host_stats_init(&net->stats);
    return net;
}

/* "device 0 (cpu) 64.00 MiB, device 1 ..." : what each device has free. */
static void free_list(glow_host *h, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < h->ndevs && len < size; i++) {
        char b[32];
        len += (size_t)snprintf(buf + len, size - len, "%sdevice %d (%s) %s", i ? ", " : "", i,
                                glow_device_backend(h->devs[i]),
                                glow_bytes_str(glow_device_free_bytes(h->devs[i]), b, sizeof b));
    }
}

/* Places the network whole on up to max devices with room (least used first); the number
 * placed (lock held). */
static int place_whole(glow_host *h, glow_host_network *net, kind *kinds, const int *kind_of,
                       int max)
{
    int *order = glow_xcalloc((size_t)h->ndevs, sizeof *order);
    int n = 0;
    for (int i = 0; i < h->ndevs; i++) {
        const kind *k = &kinds[kind_of[i]];
        uint64_t fr = glow_device_free_bytes(h->devs[i]);
        if (!k->p || fr < k->bytes || (h->quarantined >> i & 1))
            continue;
        /* Insertion by bytes in use; ties keep device order. */
        int at = n++;
        while (at > 0 && glow_device_used(h->devs[order[at - 1]]) > glow_device_used(h->devs[i])) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = i;
    }
    int placed = 0;
    for (int j = 0; j < n && (max <= 0 || placed < max); j++) {
        int i = order[j];
        kind *k = &kinds[kind_of[i]];
        if (!glow_device_reserve(h->devs[i], k->bytes))
            continue;
        net->reserved[i] = k->bytes;
        net->dev_prog[i] = k->p;
        net->devices |= 1ull << i;
        if (!k->used)
            net->progs[net->nprogs++] = k->p;
        k->used = true;
        placed++;
    }
    free(order);
    return placed;
}

/* No device holds it whole: partition over what the devices have free. */
static glow_status place_partitioned(glow_host *h, glow_host_network *net, const uint8_t *bytes,
                                     size_t size, const glow_host_net_options *o,
                                     uint64_t need, const char *need_kind, glow_diag *d)
{
    char frees[512], nb[32];
    free_list(h, frees, sizeof frees);
    glow_device_spec *specs = glow_xcalloc((size_t)h->ndevs, sizeof *specs);
    uint64_t quarantined = glow_host_quarantined(h);
    for (int i = 0; i < h->ndevs; i++)   /* a quarantined device takes no partition */
        specs[i] = (glow_device_spec){ .backend = glow_device_backend(h->devs[i]),
                                       .capacity = quarantined >> i & 1
                                                       ? 0 : glow_device_free_bytes(h->devs[i]),
                                       .threads = glow_device_threads(h->devs[i]) };
    glow_module *m = NULL;
    glow_diag *pd = glow_xcalloc(1, sizeof *pd);
    glow_partition_plan *plan = NULL;
    glow_compile_options copt = compile_options(o, NULL, 0);
    glow_partition_options po = { .devices = specs, .ndevices = h->ndevs,
                                  .no_optimize = copt.no_optimize };
    glow_status st = load(bytes, size, o, &m, d);
    /* A profile names nodes of the whole graph: quantize it whole, then cut it; the parts
     * compile without the hook. */
    if (st == GLOW_OK && copt.quant_hook) {
        st = glow_module_quantize(&m, &copt, pd);
        copt.quant_hook = NULL;
        if (st != GLOW_OK) {
            free(specs);
            glow_fail(d, st, "network '%s': %s", net->name, pd->msg);
            free(pd);
            return st;
        }
    }
    if (st == GLOW_OK && (st = glow_partition_module(m, &po, &plan, pd)) == GLOW_OK)
        st = glow_executor_create(plan, &copt, &net->exec, pd);
    free(specs);
    if (st != GLOW_OK) {
        if (need)
            glow_fail(d, st, "network '%s' fits no device: it needs %s on one device (%s) and "
                      "the devices have free: %s; split over them: %s", net->name,
                      glow_bytes_str(need, nb, sizeof nb), need_kind, frees, pd->msg);
        else
            glow_fail(d, st, "network '%s': %s", net->name, pd->msg);
        free(pd);
        return st;
    }
    free(pd);
    plan = (glow_partition_plan *)glow_executor_plan(net->exec);
    net->nparts = plan->nparts;
    net->part_dev = glow_xcalloc((size_t)plan->nparts, sizeof *net->part_dev);
    uint64_t *want = glow_xcalloc((size_t)h->ndevs, sizeof *want);
    for (int p = 0; p < plan->nparts; p++) {
        net->part_dev[p] = plan->parts[p].device;
        want[plan->parts[p].device] += program_bytes(glow_executor_program(net->exec, p));
        net->devices |= 1ull << plan->parts[p].device;
    }
    describe_io(net, plan->ninputs, plan->noutputs);
    for (int i = 0; i < plan->ninputs; i++) {
        net->in_names[i] = dup_str(plan->input_names[i]);
        net->in_types[i] = plan->input_types[i];
    }
    for (int i = 0; i < plan->noutputs; i++) {
        net->out_names[i] = dup_str(plan->output_names[i]);
        net->out_types[i] = plan->output_types[i];
    }
    /* The compiled partitions can need more than the partitioner estimated. */
    pthread_mutex_lock(&h->lock);
    for (int i = 0; i < h->ndevs && st == GLOW_OK; i++) {
        if (!want[i])
            continue;
        if (glow_device_reserve(h->devs[i], want[i])) {
            net->reserved[i] = want[i];
            continue;
        }
        char a[32], b[32];
        st = glow_fail(d, GLOW_ERR_TOO_LARGE, "network '%s': its partitions on device %d need "
                       "%s once compiled, the device has %s free", net->name, i,
                       glow_bytes_str(want[i], a, sizeof a),
                       glow_bytes_str(glow_device_free_bytes(h->devs[i]), b, sizeof b));
    }
    pthread_mutex_unlock(&h->lock);
    free(want);
    return st;
}

glow_status glow_host_add_network(glow_host *h, const char *name, const uint8_t *bytes,
                                  size_t size, const glow_host_net_options *o, glow_diag *d)
{
    if (!name || !name[0])
        return glow_fail(d, GLOW_ERR_USAGE, "a network needs a name");
    pthread_mutex_lock(&h->lock);
    bool taken = find_locked(h, name) != NULL;
    pthread_mutex_unlock(&h->lock);
    if (taken)
        return glow_fail(d, GLOW_ERR_USAGE, "the host already has a network '%s'", name);

    /* Compile once per kind of device. */
    kind *kinds = glow_xcalloc((size_t)h->ndevs, sizeof *kinds);
    int *kind_of = glow_xcalloc((size_t)h->ndevs, sizeof *kind_of);
    int nkinds = 0;
    glow_status st = GLOW_OK;
    for (int i = 0; i < h->ndevs; i++) {
        const char *b = glow_device_backend(h->devs[i]);
        int t = glow_device_threads(h->devs[i]);
        int k = 0;
        while (k < nkinds && (strcmp(kinds[k].backend, b) || kinds[k].threads != t))
            k++;
        kind_of[i] = k;
        if (k < nkinds)
            continue;
        nkinds++;
        kinds[k].backend = b;
        kinds[k].threads = t;
        glow_module *m = NULL;
        if ((st = load(bytes, size, o, &m, d)) != GLOW_OK)
            break;   /* the model itself is bad: every kind would say so */
        kinds[k].why = glow_xcalloc(1, sizeof *kinds[k].why);
        glow_compile_options c = compile_options(o, b, t);
        if (glow_program_create(m, &c, &kinds[k].p, kinds[k].why) == GLOW_OK) {
            kinds[k].bytes = program_bytes(kinds[k].p);
            glow_program_pool_own_context(kinds[k].p);   /* replicas acquire contexts */
        }
        else
            kinds[k].p = NULL;
    }

    glow_host_network *net = NULL;
    if (st == GLOW_OK) {
        net = new_network(h, name);
        int max = o ? o->max_replicas : 0;
        pthread_mutex_lock(&h->lock);
        int placed = find_locked(h, name) ? -1 : place_whole(h, net, kinds, kind_of, max);
        pthread_mutex_unlock(&h->lock);
        if (placed < 0) {
            st = glow_fail(d, GLOW_ERR_USAGE, "the host already has a network '%s'", name);
        } else if (placed > 0) {
            const glow_program *p = net->progs[0];
            describe_io(net, p->ninputs, p->noutputs);
            for (int i = 0; i < p->ninputs; i++) {
                net->in_names[i] = dup_str(p->inputs[i]->name);
                net->in_types[i] = p->inputs[i]->outs[0];
            }
            for (int i = 0; i < p->noutputs; i++) {
                net->out_names[i] = dup_str(p->outputs[i]->name);
                net->out_types[i] = p->outputs[i]->outs[0];
            }
        } else if (nkinds == 1 && !kinds[0].p) {
            /* One kind of device and it cannot compile the network: splitting cannot help. */
            st = glow_fail(d, kinds[0].why->status, "network '%s': %s", name, kinds[0].why->msg);
        } else {
            /* The smallest whole size, for the message. */
            uint64_t need = 0;
            char need_kind[64] = "";
            for (int k = 0; k < nkinds; k++) {
                if (kinds[k].p && (!need || kinds[k].bytes < need)) {
                    need = kinds[k].bytes;
                    if (kinds[k].threads)
                        snprintf(need_kind, sizeof need_kind, "%s, %d thread%s",
                                 kinds[k].backend, kinds[k].threads,
                                 kinds[k].threads == 1 ? "" : "s");
                    else
                        snprintf(need_kind, sizeof need_kind, "%s", kinds[k].backend);
                }
            }
            st = place_partitioned(h, net, bytes, size, o, need, need_kind, d);
        }
    }
    for (int k = 0; k < nkinds; k++) {
        if (!kinds[k].used)
            glow_program_destroy(kinds[k].p);
        free(kinds[k].why);
    }
    free(kinds);
    free(kind_of);
    if (st != GLOW_OK) {
        if (net)
            host_network_free(h, net);
        return st;
    }
    pthread_mutex_lock(&h->lock);
    if (find_locked(h, name)) {
        pthread_mutex_unlock(&h->lock);
        host_network_free(h, net);
        return glow_fail(d, GLOW_ERR_USAGE, "the host already has a network '%s'", name);
    }
    net->next = h->nets;
    h->nets = net;
    pthread_mutex_unlock(&h->lock);
    return GLOW_OK;
}

glow_status glow_host_remove_network(glow_host *h, const char *name, glow_diag *d)
{
    pthread_mutex_lock(&h->lock);
    glow_host_network **link = &h->nets;
    while (*link && strcmp((*link)->name, name))
        link = &(*link)->next;
    glow_host_network *net = *link;
    if (!net) {
        pthread_mutex_unlock(&h->lock);
        return glow_fail(d, GLOW_ERR_NOT_FOUND, "the host has no network '%s'", name);
    }
    *link = net->next;
    net->next = NULL;
    net->removed = true;
    bool now = net->refs == 0;
    pthread_mutex_unlock(&h->lock);
    if (now)
        host_network_free(h, net);
    return GLOW_OK;
}

int glow_host_network_ninputs(const glow_host_network *net) { return net->ninputs; }
int glow_host_network_noutputs(const glow_host_network *net) { return net->noutputs; }

const char *glow_host_network_input_name(const glow_host_network *net, int i)
{
    return net->in_names[i];
}

const char *glow_host_network_output_name(const glow_host_network *net, int i)
{
    return net->out_names[i];
}

const glow_type *glow_host_network_input_type(const glow_host_network *net, int i)
{
    return &net->in_types[i];
}

const glow_type *glow_host_network_output_type(const glow_host_network *net, int i)
{
    return &net->out_types[i];
}

int glow_host_network_partitions(const glow_host_network *net)
{
    return net->exec ? net->nparts : 1;
}

uint64_t glow_host_network_devices(const glow_host_network *net) { return net->devices; }
