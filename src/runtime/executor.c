// executor.c - Runs a partition plan: compiles each partition for its device's backend, then
// runs the partitions' DAG, passing the tensors that cross partitions from program to program.
//
// What one request writes - the crossing tensors and the model outputs - is a request state
// (glow_exec_request) of its own, and a partition runs on an execution context taken from its
// program's pool, so partitions of different requests may run at the same time: the host
// (host.c) pipelines requests this way, request 2's first partition on one device while
// request 1's second runs on another. A crossing tensor is copied out of the producing
// context into the request's buffer, so a context goes back to the pool as soon as its
// partition finishes, and every reader sees the same bytes.
//
// glow_executor_run is the one-request driver (the CLI's): it goes in waves, every partition
// whose producers have finished is ready; the ready partitions of one device run in plan order
// on that device's thread, different devices at once (a thread each, joined at the end of the
// wave), on the executor's own request state (so one glow_executor_run at a time).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/partition.h"

struct glow_exec_request {
    glow_tensor *cross;     /* owned buffers, by crossing */
    glow_tensor *outs;      /* owned buffers, model order */
};

struct glow_executor {
    glow_partition_plan *plan;
    glow_program **progs;   /* by partition */
    glow_exec_request *own; /* glow_executor_run's request state */
    const glow_tensor *inputs; /* of the current glow_executor_run */
    glow_diag *diags;       /* by partition, for the current glow_executor_run */
    glow_status *status;
};

void glow_exec_request_destroy(const glow_executor *e, glow_exec_request *r)
{
    if (!r)
        return;
    const glow_partition_plan *plan = e->plan;
    for (int k = 0; r->cross && k < plan->ncross; k++)
        glow_tensor_free(&r->cross[k]);
    for (int j = 0; r->outs && j < plan->noutputs; j++)
        glow_tensor_free(&r->outs[j]);
    free(r->cross);
    free(r->outs);
    free(r);
}

glow_status glow_exec_request_create(const glow_executor *e, glow_exec_request **out,
                                     glow_diag *d)
{
    const glow_partition_plan *plan = e->plan;
    glow_exec_request *r = glow_xcalloc(1, sizeof *r);
    r->cross = glow_xcalloc((size_t)plan->ncross + 1, sizeof *r->cross);
    r->outs = glow_xcalloc((size_t)plan->noutputs + 1, sizeof *r->outs);
    glow_status st = GLOW_OK;
    for (int k = 0; k < plan->ncross && st == GLOW_OK; k++)
        st = glow_tensor_alloc(&r->cross[k], &plan->cross[k].type, d);
    for (int j = 0; j < plan->noutputs && st == GLOW_OK; j++)
        st = glow_tensor_alloc(&r->outs[j], &plan->output_types[j], d);
    if (st != GLOW_OK) {
        glow_exec_request_destroy(e, r);
        return st;
    }
    *out = r;
    return GLOW_OK;
}

glow_tensor glow_exec_request_output(const glow_exec_request *r, int i)
{
    return glow_tensor_borrow(&r->outs[i].type, r->outs[i].data);
}

static void release(glow_executor *e)
{
    const glow_partition_plan *plan = e->plan;
    for (int i = 0; plan && e->progs && i < plan->nparts; i++)
        glow_program_destroy(e->progs[i]);
    glow_exec_request_destroy(e, e->own);
    free(e->progs);
    free(e->diags);
    free(e->status);
    glow_partition_plan_destroy(e->plan);
    free(e);
}

glow_status glow_executor_create(glow_partition_plan *plan, const glow_compile_options *opt,
                                 glow_executor **out, glow_diag *d)
{
    *out = NULL;
    if (opt && opt->quant_hook) {
        glow_partition_plan_destroy(plan);
        return glow_fail(d, GLOW_ERR_INTERNAL, "the executor takes no quantization hook: "
                         "quantize the whole module before partitioning it "
                         "(glow_module_quantize; the profile names nodes of the whole graph)");
    }
    glow_executor *e = glow_xcalloc(1, sizeof *e);
    e->plan = plan;
    e->progs = glow_xcalloc((size_t)plan->nparts + 1, sizeof *e->progs);
    e->diags = glow_xcalloc((size_t)plan->nparts + 1, sizeof *e->diags);
    e->status = glow_xcalloc((size_t)plan->nparts + 1, sizeof *e->status);
    glow_status st = glow_exec_request_create(e, &e->own, d);
    for (int i = 0; i < plan->nparts && st == GLOW_OK; i++) {
        glow_partition *pt = &plan->parts[i];
        glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
        if (opt)
            copt = *opt;
        copt.backend = plan->devices[pt->device].backend;
        if (plan->devices[pt->device].threads > 0)
            copt.threads = plan->devices[pt->device].threads;
        copt.stop_after = GLOW_STAGE_COMPILED;
        glow_diag pd = { 0 };
        glow_module *m = pt->m;
        pt->m = NULL; /* the program owns it now, also on failure */
        st = glow_program_create(m, &copt, &e->progs[i], &pd);
        if (st != GLOW_OK) {
            glow_fail(d, st, "partition %d (device %d, %s): %s", i, pt->device, copt.backend,
                      pd.msg);
        } else if (e->progs[i]->ninputs != pt->ninputs ||
                   e->progs[i]->noutputs != pt->noutputs) {
            st = glow_fail(d, GLOW_ERR_INTERNAL, "partition %d: its program has %d inputs "
                           "and %d outputs, the plan says %d and %d", i,
                           e->progs[i]->ninputs, e->progs[i]->noutputs, pt->ninputs,
                           pt->noutputs);
        }
    }
    if (st != GLOW_OK) {
        release(e);
        return st;
    }
    *out = e;
    return GLOW_OK;
}

glow_status glow_executor_run_partition(glow_executor *e, glow_exec_request *r,
                                        const glow_tensor *inputs, int i, glow_diag *d)
{
    const glow_partition *pt = &e->plan->parts[i];
    glow_program *p = e->progs[i];
    glow_exec *x = NULL;
    GLOW_TRY(glow_program_acquire(p, &x, d));
    glow_tensor small[16];
    glow_tensor *ins = pt->ninputs <= 16 ? small : glow_xcalloc((size_t)pt->ninputs,
                                                                 sizeof *ins);
    for (int k = 0; k < pt->ninputs; k++) {
        int s = pt->in_src[k];
        ins[k] = s >= 0 ? inputs[s] : r->cross[GLOW_XFER(s)];
    }
    glow_status st = glow_exec_run(x, ins, pt->ninputs, d);
    if (ins != small)
        free(ins);
    for (int k = 0; k < pt->noutputs && st == GLOW_OK; k++) {
        int s = pt->out_dst[k];
        glow_tensor *dst = s >= 0 ? &r->outs[s] : &r->cross[GLOW_XFER(s)];
        glow_tensor t = glow_exec_output(x, k);
        memcpy(dst->data, t.data, glow_type_bytes(&t.type));
    }
    glow_program_release(p, x);
    return st;
}

/* Runs partition i of the executor's own request. */
static void run_partition(glow_executor *e, int i)
{
    e->status[i] = glow_executor_run_partition(e, e->own, e->inputs, i, &e->diags[i]);
}

/* One device's share of a wave. */
typedef struct device_job {
    glow_executor *e;
    const int *parts;
    int nparts;
    pthread_t thread;
    bool started;
} device_job;

static void *device_main(void *arg)
{
    device_job *j = arg;
    for (int k = 0; k < j->nparts; k++)
        run_partition(j->e, j->parts[k]);
    return NULL;
}

/* Runs the ready partitions (ready[0..n), plan order) a thread per device. */
static void run_wave(glow_executor *e, const int *ready, int n, int *scratch)
{
    int ndev = e->plan->ndevices, active = 0;
    device_job *jobs = glow_xcalloc((size_t)ndev, sizeof *jobs);
    /* Group by device, keeping plan order within each device. */
    int at = 0;
    for (int dev = 0; dev < ndev; dev++) {
        jobs[dev] = (device_job){ .e = e, .parts = scratch + at };
        for (int k = 0; k < n; k++)
            if (e->plan->parts[ready[k]].device == dev)
                scratch[at + jobs[dev].nparts++] = ready[k];
        at += jobs[dev].nparts;
        active += jobs[dev].nparts > 0;
    }
    for (int dev = 0; dev < ndev && active > 1; dev++)
        if (jobs[dev].nparts)
            jobs[dev].started = pthread_create(&jobs[dev].thread, NULL, device_main,
                                               &jobs[dev]) == 0;
    /* Where a thread could not start (or one device is enough), this thread does the work. */
    for (int dev = 0; dev < ndev; dev++)
        if (jobs[dev].nparts && !jobs[dev].started)
            device_main(&jobs[dev]);
    for (int dev = 0; dev < ndev; dev++)
        if (jobs[dev].started)
            pthread_join(jobs[dev].thread, NULL);
    free(jobs);
}

glow_status glow_executor_check_inputs(const glow_executor *e, const glow_tensor *inputs,
                                       int ninputs, glow_diag *d)
{
    const glow_partition_plan *plan = e->plan;
    if (ninputs != plan->ninputs)
        return glow_fail(d, GLOW_ERR_USAGE, "the model has %d input%s, %d given",
                         plan->ninputs, plan->ninputs == 1 ? "" : "s", ninputs);
    for (int i = 0; i < ninputs; i++) {
        if (glow_type_equal(&inputs[i].type, &plan->input_types[i]))
            continue;
        char a[128], b[128];
        return glow_fail(d, GLOW_ERR_BAD_TYPE, "input %d '%s' is %s, the model expects %s", i,
                         plan->input_names[i], glow_type_str(&inputs[i].type, a, sizeof a),
                         glow_type_str(&plan->input_types[i], b, sizeof b));
    }
    return GLOW_OK;
}

glow_status glow_executor_run(glow_executor *e, const glow_tensor *inputs, int ninputs,
                              glow_diag *d)
{
    const glow_partition_plan *plan = e->plan;
    GLOW_TRY(glow_executor_check_inputs(e, inputs, ninputs, d));
    e->inputs = inputs;
    int n = plan->nparts;
    bool *done = glow_xcalloc((size_t)n + 1, sizeof *done);
    int *ready = glow_xcalloc((size_t)n + 1, sizeof *ready);
    int *scratch = glow_xcalloc((size_t)n + 1, sizeof *scratch);
    glow_status st = GLOW_OK;
    for (int finished = 0; finished < n && st == GLOW_OK;) {
        int nready = 0;
        for (int i = 0; i < n; i++) {
            bool ok = !done[i];
            for (int k = 0; ok && k < plan->parts[i].ndeps; k++)
                ok = done[plan->parts[i].deps[k]];
            if (ok)
                ready[nready++] = i;
        }
        /* The plan's order is a topological order, so the first unfinished partition is
         * always ready: every wave makes progress. */
        GLOW_ASSERT(nready > 0);
        for (int k = 0; k < nready; k++)
            glow_diag_clear(&e->diags[ready[k]]);
        run_wave(e, ready, nready, scratch);
        for (int k = 0; k < nready && st == GLOW_OK; k++) {
            int i = ready[k];
            done[i] = true;
            finished++;
            if (e->status[i] != GLOW_OK)
                st = glow_fail(d, e->status[i], "partition %d (device %d, %s): %s", i,
                               plan->parts[i].device,
                               plan->devices[plan->parts[i].device].backend, e->diags[i].msg);
        }
    }
    e->inputs = NULL;
    free(done);
    free(ready);
    free(scratch);
    return st;
}

const glow_partition_plan *glow_executor_plan(const glow_executor *e) { return e->plan; }

const glow_program *glow_executor_program(const glow_executor *e, int i)
{
    return e->progs[i];
}

int glow_executor_noutputs(const glow_executor *e) { return e->plan->noutputs; }

glow_tensor glow_executor_output(const glow_executor *e, int i)
{
    return glow_exec_request_output(e->own, i);
}

void glow_executor_destroy(glow_executor *e)
{
    if (e)
        release(e);
}
