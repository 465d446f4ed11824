// partition.h - Splitting a model across devices (by memory capacity, backend support and the
// user's assignment) into a DAG of partitions, each its own module, and running that DAG.
//
// The partitioner works on the graph after the graph optimizer and before lowering
// (docs/partitioning.md says why); every partition then goes through the normal pipeline
// (glow_program_create) for its device's backend, and the executor passes the tensors that
// cross partitions from one program to the next.
#ifndef GLOW_PARTITION_H
#define GLOW_PARTITION_H

#include <stdio.h>

#include "runtime/runtime.h"

/* --- partition_text.c: device lists, reports and pictures --- */

typedef struct glow_device_spec {
    const char *backend;   /* "cpu" or "interpreter" (a backend name) */
    uint64_t capacity;     /* bytes a device holds: weights, inputs/outputs, activations */
    int threads;           /* worker threads of each run; 0: the compile options' */
} glow_device_spec;

/* Parses "cpu:256MiB,interpreter:1GiB,cpu" (capacity in bytes, or with B, KiB, MiB, GiB,
 * TiB, KB, MB, GB, TB; without one the device is unlimited). The strings of *out point into
 * a copy owned by the array: free the array with glow_devices_free. */
glow_status glow_devices_parse(const char *spec, glow_device_spec **out, int *n,
                               glow_diag *d);
void glow_devices_free(glow_device_spec *devs, int n);
/* "256 MiB", "1.5 GiB", "123 B": for messages and reports. */
char *glow_bytes_str(uint64_t bytes, char *buf, size_t size);

/* --- partition.c: the partitioner --- */

/* Says whether backend `backend` can run graph node n (ctx as given). */
typedef bool (*glow_partition_support_fn)(const glow_node *n, const char *backend, void *ctx);

typedef struct glow_partition_options {
    const glow_device_spec *devices;
    int ndevices;
    /* User assignment, "NODE=DEVICE" (a graph node name of the optimized graph, as
     * `glowc dump --stage optimized` prints it, and a device index): overrides everything. */
    const char *const *assign;
    int nassign;
    /* NULL: glow_partition_backend_supports when the devices have more than one backend
     * (with one, there is nothing to choose: what it cannot run fails to compile). */
    glow_partition_support_fn supports;
    void *supports_ctx;
    bool no_optimize;      /* partition the graph as loaded */
    /* Split a float Gemm/FullyConnected/MatMul with a constant weight that no device holds
     * into products over column slices (partition_nodes.c) instead of failing. */
    bool split_nodes;
} glow_partition_options;

/* A tensor passed from one partition to others. */
typedef struct glow_crossing {
    const char *name;
    glow_type type;
    int from;              /* producing partition */
    int nto;               /* how many partitions read it */
} glow_crossing;

/* Where a partition's input comes from / its output goes: >= 0 a model input (output) by
 * position, < 0 the crossing -1 - k. */
#define GLOW_XFER(k) (-1 - (k))

typedef struct glow_partition {
    int device;            /* index into the plan's devices */
    glow_module *m;        /* its function "main"; NULL once handed to a program */
    int nnodes;
    const char *first, *last; /* names of its first and last node (plan arena) */
    uint64_t weight_bytes; /* constants its nodes read */
    uint64_t io_bytes;     /* its input and output tensors (model and crossing) */
    uint64_t act_bytes;    /* estimated peak of its intermediate results */
    int ninputs, noutputs; /* its module's input / output placeholders, module order */
    int *in_src, *out_dst; /* see GLOW_XFER */
    int ndeps;
    int *deps;             /* partitions whose crossings it reads, ascending */
} glow_partition;

typedef struct glow_partition_plan {
    glow_arena arena;      /* names */
    glow_device_spec *devices; /* copied */
    int ndevices;
    glow_partition *parts; /* in dependency order: a partition only reads earlier ones */
    int nparts;
    glow_crossing *cross;
    int ncross;
    int ninputs, noutputs; /* the model's, in model order */
    const char **input_names, **output_names;
    glow_type *input_types, *output_types;
} glow_partition_plan;

/* Optimizes m (unless o->no_optimize) and splits it over o's devices. Takes ownership of m,
 * also on failure. Fails (GLOW_ERR_TOO_LARGE) naming the node and the sizes when a node does
 * not fit any device it may run on, or when the devices together are too small. */
glow_status glow_partition_module(glow_module *m, const glow_partition_options *o,
                                  glow_partition_plan **out, glow_diag *d);
void glow_partition_plan_destroy(glow_partition_plan *plan);

/* --- partition_nodes.c --- */

/* The backend's own answer: node n alone (operands as placeholders) compiled for the backend
 * up to its prepared IR, and every instruction passed through its supports hook, as
 * glow_program_create checks a whole program. ctx is unused. */
bool glow_partition_backend_supports(const glow_node *n, const char *backend, void *ctx);

/* --- partition_text.c (continued) --- */

/* The partitions: device, node count, weight and activation bytes, crossing tensors. */
void glow_partition_plan_print(FILE *out, const glow_partition_plan *plan);
/* Graphviz DOT: a box per partition (device and sizes), an ellipse per model input and
 * output, edges labelled with the tensors they carry and their sizes. */
void glow_partition_plan_dot(FILE *out, const glow_partition_plan *plan);

/* --- executor.c --- */

typedef struct glow_executor glow_executor;

/* Compiles every partition of plan for its device's backend (opt gives the rest of the
 * compile options; its backend is ignored; no quant_hook: a quantized model is quantized whole
 * before it is partitioned, glow_module_quantize) and takes ownership of the
 * plan, also on failure. */
glow_status glow_executor_create(glow_partition_plan *plan, const glow_compile_options *opt,
                                 glow_executor **out, glow_diag *d);
/* Runs the partitions in dependency order (those of different devices whose inputs are
 * ready at once, a thread per device) on the model's inputs in model order, on the
 * executor's own request state: one such run at a time per executor. */
glow_status glow_executor_run(glow_executor *e, const glow_tensor *inputs, int ninputs,
                              glow_diag *d);
/* The model inputs' count and types (messages as glow_program_run's). */
glow_status glow_executor_check_inputs(const glow_executor *e, const glow_tensor *inputs,
                                       int ninputs, glow_diag *d);

/* One request's state (its crossing tensors and model outputs), for callers that run the
 * partitions themselves: partitions of different requests may run at the same time, each
 * partition on a context from its program's pool (pipelining, host.c). A partition may run
 * once its dependencies (glow_partition.deps) of the same request have finished. */
typedef struct glow_exec_request glow_exec_request;
glow_status glow_exec_request_create(const glow_executor *e, glow_exec_request **out,
                                     glow_diag *d);
void glow_exec_request_destroy(const glow_executor *e, glow_exec_request *r);
/* Runs partition i of request r on the model inputs (checked by the caller, model order).
 * Thread-safe across requests, and across partitions of one request that do not depend on
 * each other. */
glow_status glow_executor_run_partition(glow_executor *e, glow_exec_request *r,
                                        const glow_tensor *inputs, int i, glow_diag *d);
/* Model output i of request r (after its partitions ran), borrowing r's memory. */
glow_tensor glow_exec_request_output(const glow_exec_request *r, int i);
const glow_partition_plan *glow_executor_plan(const glow_executor *e);
/* Partition i's compiled program (for its region sizes and fallbacks). */
const glow_program *glow_executor_program(const glow_executor *e, int i);
int glow_executor_noutputs(const glow_executor *e);
/* Output i (model order) as a tensor borrowing the executor's memory, valid until the next
 * run; its name is glow_executor_plan(e)->output_names[i]. */
glow_tensor glow_executor_output(const glow_executor *e, int i);
void glow_executor_destroy(glow_executor *e);

#endif
