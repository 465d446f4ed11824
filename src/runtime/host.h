// host.h - The host (Glow's HostManager and Provisioner): devices with their own workers,
// named networks placed on them (whole, as replicas, or partitioned), a bounded queue of
// requests, asynchronous runs with completion callbacks, cancellation, deadlines, statistics.
//
// docs/runtime.md ("The host") describes the design; src/api/api_host.c is its public face.
#ifndef GLOW_HOST_H
#define GLOW_HOST_H

#include "onnx/onnx.h"
#include "runtime/device.h"
#include "runtime/partition.h"

typedef struct glow_host glow_host;
typedef struct glow_host_network glow_host_network;

/* Devices (backend, threads per run, capacity; copied) and the most requests the queue holds
 * (>= 1). */
glow_status glow_host_create(const glow_device_spec *devices, int ndevices, int queue_capacity,
                             glow_host **out, glow_diag *d);
/* Cancels every queued request (their callbacks say so), waits for the running ones to
 * finish, stops the devices and frees everything, networks included. */
void glow_host_destroy(glow_host *h);
int glow_host_device_count(const glow_host *h);
glow_device *glow_host_device(glow_host *h, int i);
/* A paused host starts no request (they wait in the queue, deadlines still expire); resumed,
 * it starts them in order. */
void glow_host_pause(glow_host *h, bool paused);

/* Quarantine (docs/runtime.md, "Failing devices"): a device whose work fails as a device
 * fault (glow_device_failing) is taken out of service at once - the request that met the fault
 * fails with its message, and no other request is started on it: whole networks go on on
 * their other replicas, and a request that has no device left (a network placed only there,
 * or a partition there) fails at once, naming the device and its fault. New networks are not
 * placed on it. Bit i of the result: device i is quarantined. */
uint64_t glow_host_quarantined(glow_host *h);
/* Puts device i back in service (after its fault was cleared); false when it was not
 * quarantined or there is no device i. */
bool glow_host_restore_device(glow_host *h, int i);

/* --- networks --- */

typedef struct glow_host_net_options {
    const glow_onnx_options *load;       /* defines; NULL: none */
    const glow_compile_options *compile; /* no_optimize, ...; backend/threads are the devices' */
    int max_replicas;                    /* 0: on every device with room */
} glow_host_net_options;

/* Loads the ONNX model in bytes[0..size) and places it as `name` (not in use): whole on the
 * least loaded devices with room for it (up to max_replicas), or else partitioned over the
 * devices' free memory. Fails naming the sizes when it fits nowhere. */
glow_status glow_host_add_network(glow_host *h, const char *name, const uint8_t *bytes,
                                  size_t size, const glow_host_net_options *o, glow_diag *d);
/* Takes the name away at once (new requests do not find it; it may be added again); requests
 * already queued or running complete normally, and the network's memory is released when the
 * last of them has completed. GLOW_ERR_NOT_FOUND for an unknown name. */
glow_status glow_host_remove_network(glow_host *h, const char *name, glow_diag *d);
/* The network called name with a reference taken (NULL when there is none): its description
 * below stays valid until glow_host_network_put. */
glow_host_network *glow_host_network_get(glow_host *h, const char *name);
void glow_host_network_put(glow_host *h, glow_host_network *net);
int glow_host_network_ninputs(const glow_host_network *net);
int glow_host_network_noutputs(const glow_host_network *net);
const char *glow_host_network_input_name(const glow_host_network *net, int i);
const char *glow_host_network_output_name(const glow_host_network *net, int i);
const glow_type *glow_host_network_input_type(const glow_host_network *net, int i);
const glow_type *glow_host_network_output_type(const glow_host_network *net, int i);
/* How many partitions (1: whole) and on which devices it is placed (bit i: device i). */
int glow_host_network_partitions(const glow_host_network *net);
uint64_t glow_host_network_devices(const glow_host_network *net);

/* --- requests --- */

typedef enum glow_host_outcome {
    GLOW_HOST_DONE,       /* ran; outputs given */
    GLOW_HOST_FAILED,     /* ran and failed; the diag says why */
    GLOW_HOST_CANCELLED,  /* cancelled while queued, or the host was destroyed */
    GLOW_HOST_EXPIRED,    /* still queued at its deadline: not run */
} glow_host_outcome;

/* Called once per accepted request, on a device's worker (done, failed), the host's timer
 * thread or any thread whose call let the deadline be seen (expired), the canceller's thread
 * (cancelled). outs[0..nouts) are the network's outputs (DONE only), valid during the call. */
typedef void (*glow_host_done_fn)(void *user, uint64_t id, glow_host_outcome o,
                                  const glow_diag *d, const glow_tensor *outs, int nouts);

typedef enum glow_host_submitted {
    GLOW_HOST_QUEUED,     /* accepted: fn will be called exactly once */
    GLOW_HOST_BUSY,       /* the queue is full: not accepted, fn will not be called */
} glow_host_submitted;

/* Queues a request on net (a reference from glow_host_network_get, which the caller keeps):
 * inputs[0..ninputs) in model order with the network's types (checked by the caller), taken
 * by the request (freed by the host whatever happens). deadline_us > 0: the request expires
 * if it has not started that many microseconds from now. *id: the request's, for
 * glow_host_cancel. */
glow_host_submitted glow_host_submit(glow_host *h, glow_host_network *net, glow_tensor *inputs,
                                     int ninputs, int64_t deadline_us, glow_host_done_fn fn,
                                     void *user, uint64_t *id);
/* Cancels request id if it is still queued (true: its callback was called, here, with
 * GLOW_HOST_CANCELLED); false when it is running, finished or unknown. */
bool glow_host_cancel(glow_host *h, uint64_t id);

/* --- statistics --- */

typedef struct glow_host_stats {
    uint64_t submitted;   /* accepted requests */
    uint64_t rejected;    /* refused because the queue was full (not in submitted) */
    uint64_t queued, running;            /* now */
    uint64_t done, failed, cancelled, expired;
    /* Latency (submission to completion) of the done requests, microseconds: minimum, mean
     * and maximum of all; median and 99th percentile of the last GLOW_HOST_LAT_WINDOW. */
    double lat_min_us, lat_mean_us, lat_p50_us, lat_p99_us, lat_max_us;
    uint64_t quarantined; /* bit i: device i is quarantined (the host's; a network's: of its
                           * devices) */
} glow_host_stats;

#define GLOW_HOST_LAT_WINDOW 4096

/* The host's statistics (network NULL), or one network's (GLOW_ERR_NOT_FOUND if none). */
glow_status glow_host_get_stats(glow_host *h, const char *network, glow_host_stats *out,
                                glow_diag *d);

#endif
