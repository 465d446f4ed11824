// host_internal.h - What host.c (queue, dispatch, requests, statistics) and host_net.c
// (placing and removing networks) share: the host, network and request objects.
#ifndef GLOW_HOST_INTERNAL_H
#define GLOW_HOST_INTERNAL_H

#include "runtime/host.h"

/* Counters and a latency window; guarded by the host's lock. */
typedef struct host_stats {
    glow_host_stats s;      /* counters, min/max (percentiles computed when asked) */
    double lat_sum;
    double *window;         /* GLOW_HOST_LAT_WINDOW latencies, a ring */
    int nwindow, at;
} host_stats;

struct glow_host_network {
    char *name;
    int ninputs, noutputs;
    char **in_names, **out_names;
    glow_type *in_types, *out_types;
    /* Whole: dev_prog[i] is the program serving device i's replica (NULL: no replica); one
     * program serves every device of the same backend and threads, from its context pool.
     * progs[0..nprogs) are the distinct programs, owned. */
    glow_program **dev_prog;
    glow_program **progs;
    int nprogs;
    /* Partitioned (exec != NULL): part_dev[p] is partition p's host device. */
    glow_executor *exec;
    int *part_dev;
    int nparts;
    uint64_t *reserved;     /* bytes reserved on each device */
    uint64_t devices;       /* bit i: placed on device i */
    int refs;               /* lookups and requests holding it (host lock) */
    bool removed;           /* out of the host's list: freed when refs drops to 0 */
    host_stats stats;
    glow_host_network *next;
};

typedef struct host_request {
    glow_host *host;
    uint64_t id;
    glow_host_network *net;
    glow_tensor *inputs;
    int ninputs;
    double t_submit, deadline;   /* monotonic microseconds; deadline 0: none */
    glow_host_done_fn fn;
    void *user;
    struct host_request *prev, *next;   /* in the host's queue */
    /* A partitioned request: its crossing tensors and outputs, and its progress. */
    glow_exec_request *xr;
    int *waiting;                /* per partition: dependencies not finished yet */
    int parts_left, parts_running;
    bool failed;
    glow_diag *diag;             /* why it failed */
    glow_host_outcome outcome;   /* of one completed without running (finish_list) */
} host_request;

struct glow_host {
    glow_device **devs;
    int ndevs;
    int capacity;
    pthread_mutex_t lock;
    pthread_cond_t changed;      /* a request completed, or the timer has work */
    host_request *head, *tail;   /* the queue, FIFO */
    int nqueued;
    int *dev_items;              /* work items given to each device, not finished */
    /* Quarantine: bit i set when device i failed; no request is started on it (nor is a
     * network placed on it) until glow_host_restore_device. why[i] is its failure. */
    uint64_t quarantined;
    char (*why)[256];
    int active;                  /* accepted requests not completed and freed */
    uint64_t next_id;
    bool paused, stopping;
    glow_host_network *nets;
    host_stats stats;
    pthread_t timer;
    bool timer_started;
};

/* --- host.c --- */

double host_now_us(void);
void host_stats_init(host_stats *s);
void host_stats_free(host_stats *s);
/* Frees a network nobody refers to any more (outside the lock): its programs, its executor
 * and its memory on the devices. */
void host_network_free(glow_host *h, glow_host_network *net);

#endif
