// partition_internal.h - What the partitioner's analysis (partition.c) hands to the code that
// builds the partitions' modules (partition_build.c): the graph in schedule order with its
// values, and the cut.
#ifndef GLOW_PARTITION_INTERNAL_H
#define GLOW_PARTITION_INTERNAL_H

#include "runtime/partition.h"

/* One result of a compute node. */
typedef struct pt_value {
    glow_value v;
    uint64_t bytes;
    int prod;              /* position of its node */
    int last;              /* position of its last compute reader; prod when none */
    bool saved;            /* a Save (model output) reads it */
} pt_value;

/* A range [s, e) of positions on one device. */
typedef struct pt_range {
    int s, e, device;
    uint64_t weights, io, act;
} pt_range;

typedef struct pt_graph {
    glow_function *f;
    int n;                 /* compute nodes (every node but Save) */
    glow_node **node;      /* by position (schedule order) */
    int *vbase;            /* first value of position i; vbase[n] = nval */
    pt_value *val;
    int nval;
    glow_node **saves;     /* the Save nodes, function order */
    int nsaves;
    int *save_part;        /* the partition each Save goes to */
    glow_node **inputs, **outputs; /* the model's placeholders, model order */
    int ninputs, noutputs;
    uint32_t nids;         /* node ids are below this */
    pt_range *parts;
    int nparts;
} pt_graph;

/* Position of compute node n, or -1 for storage. */
static inline int pt_pos(const glow_node *n)
{
    return n->fn && n->aux ? (int)(intptr_t)n->aux - 1 : -1;
}

/* The value index of operand v (a compute node's result); -1 for storage. */
static inline int pt_value_of(const pt_graph *g, glow_value v)
{
    int p = pt_pos(v.node);
    return p < 0 ? -1 : g->vbase[p] + (int)v.res;
}

/* --- partition_build.c --- */

/* Builds one module per range of g (saves placed by g->save_part) and fills the plan's
 * partitions, crossings and model input/output tables. */
glow_status pt_build(pt_graph *g, glow_partition_plan *plan, glow_diag *d);
/* Gives `to` copies of from's attributes (arrays and strings into to's module). */
void pt_copy_attrs(glow_node *to, const glow_node *from);

/* --- partition_nodes.c --- */

/* The constant weight of n when n is a product split_nodes can split, else NULL. */
const glow_node *pt_split_weight(const glow_node *n);
/* Splits every such product whose operands and result exceed `capacity` bytes into column
 * slices of about capacity / 4 bytes of weights each; *nsplit gets how many were split. */
glow_status pt_split_large(glow_function *f, uint64_t capacity, int *nsplit, glow_diag *d);

#endif
