// gen.h - The differential fuzzer's model generator: a seeded, reproducible builder of random
// well-typed ONNX models (10-60 nodes) from the ops glowc supports. The generator keeps its
// own small graph (values with known shapes, nodes with attributes) rather than building ONNX
// directly, so that every op computes its output shape as it is added (the model is valid by
// construction) and the reducer (reduce.c) can delete nodes and re-emit the model.
//
//   gen_graph *g = gen_generate(seed, NULL);
//   gen_write(g, dir);         // dir/model.onnx, dir/input_<i>.pb
//   gen_free(g);
#ifndef GLOW_FUZZ_GEN_H
#define GLOW_FUZZ_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GEN_MAX_RANK 5
#define GEN_MAX_VALS 320
#define GEN_MAX_NODES 96
#define GEN_MAX_NIN 5
#define GEN_MAX_ATTRS 6
#define GEN_MAX_OUTS 6
/* No tensor the generator makes holds more elements (keeps a seed's runs short). */
#define GEN_MAX_NUMEL 24576

typedef enum { GV_INPUT, GV_CONST, GV_NODE } gen_val_kind;

typedef struct gen_val {
    gen_val_kind kind;
    int elem;                     /* MK_F32 or MK_I64 (onnx_build.h) */
    int rank;
    int64_t dims[GEN_MAX_RANK];
    void *data;                   /* inputs and constants: numel elements (malloc'd) */
    int depth;                    /* ops on the longest path from an input */
} gen_val;

typedef struct gen_attr {
    const char *name;             /* a string literal */
    int type;                     /* MK_AT_INT, MK_AT_INTS, MK_AT_FLOAT, MK_AT_STRING */
    int n;                        /* MK_AT_INTS: how many of i[] */
    int64_t i[8];
    float f;
    const char *s;                /* a string literal */
} gen_attr;

typedef struct gen_node {
    const char *op;               /* ONNX op type (a string literal) */
    int in[GEN_MAX_NIN];          /* value ids; -1 is an omitted optional input ("") */
    int nin;
    int out;                      /* the value it defines */
    gen_attr attrs[GEN_MAX_ATTRS];
    int nattr;
    bool dead;                    /* removed by the reducer */
} gen_node;

typedef struct gen_graph {
    uint64_t seed;
    uint64_t rng;                 /* the generator's state while building */
    bool specials;                /* NaN and Inf among the input values on this seed */
    gen_val vals[GEN_MAX_VALS];
    int nvals;
    gen_node nodes[GEN_MAX_NODES];
    int nnodes;
    int outs[GEN_MAX_OUTS];       /* graph outputs: value ids */
    int nouts;
} gen_graph;

typedef struct gen_options {
    int min_nodes, max_nodes;     /* default 10..60 */
    int special_percent;          /* seeds with NaN/Inf inputs (default 10) */
} gen_options;

/* --- gen_graph.c: the graph, values, emitting ONNX --- */

/* A random model from seed (opts may be NULL). */
gen_graph *gen_generate(uint64_t seed, const gen_options *opts);
gen_graph *gen_clone(const gen_graph *g);
void gen_free(gen_graph *g);

/* Writes dir/model.onnx and dir/input_<i>.pb (fed inputs in model order); false with a
 * message on stderr when a file cannot be written. */
bool gen_write(const gen_graph *g, const char *dir);

/* Live nodes, and the depth of the deepest graph output (for the comparison's tolerance). */
int gen_live_nodes(const gen_graph *g);
int gen_depth(const gen_graph *g);

/* The number of graph inputs gen_write writes (live fed inputs). */
int gen_num_inputs(const gen_graph *g);

/* Recomputes the graph outputs as the live nodes' values nothing live consumes (the last
 * GEN_MAX_OUTS of them), after the generator finished or the reducer removed nodes. */
void gen_refresh_outputs(gen_graph *g);

/* One line per live node ("v12 = Conv(v3, c4, c5) kernel_shape=[3,3] ..."), for reports. */
void gen_print(const gen_graph *g, FILE *f);

/* --- used by the op generators (gen_ops_*.c) --- */

uint32_t gen_rand(gen_graph *g);
int64_t gen_int(gen_graph *g, int64_t lo, int64_t hi);  /* in [lo, hi] */
bool gen_chance(gen_graph *g, int percent);
int64_t gen_numel(const gen_val *v);
/* Elements of a shape, and whether a shape of that many elements is one to generate. */
int64_t gen_dims_numel(int rank, const int64_t *dims);
bool gen_fits(int rank, const int64_t *dims);
/* A random element of a fixed-size array (g in scope). */
#define GEN_PICK(arr) (arr)[gen_int(g, 0, (int64_t)(sizeof(arr) / sizeof((arr)[0])) - 1)]

/* A new value of element type elem and shape; inputs and constants get data (f32 filled by
 * gen_fill with magnitude scale; i64 zeroed for the caller to fill). Returns its id, or -1
 * when the table is full. */
int gen_value(gen_graph *g, gen_val_kind kind, int elem, int rank, const int64_t *dims,
              float scale);
/* An i64 constant holding n values. */
int gen_i64s(gen_graph *g, int n, const int64_t *v);
/* A one-element f32 constant of rank 0. */
int gen_scalar(gen_graph *g, float v);

/* Random f32 data of magnitude about `scale`, with the edge values mixed in: +-0,
 * denormals, large magnitudes, and NaN/Inf when g->specials. */
void gen_fill(gen_graph *g, float *p, int64_t n, float scale);

/* Appends node op(ins) defining a new f32 value of the given shape at depth 1 + the inputs'
 * deepest; returns the node index, or -1 when a table is full. */
int gen_node_add(gen_graph *g, const char *op, const int *ins, int nin, int rank,
                 const int64_t *dims);
void gen_attr_int(gen_graph *g, int node, const char *name, int64_t v);
void gen_attr_ints(gen_graph *g, int node, const char *name, const int64_t *v, int n);
void gen_attr_float(gen_graph *g, int node, const char *name, float v);
void gen_attr_str(gen_graph *g, int node, const char *name, const char *s);

/* An f32 value computed so far (graph input or node output) to feed the next op: recent
 * and unconsumed values first, so the graph grows deep as well as wide; -1 when none fits.
 * min_rank/max_rank bound its rank. */
int gen_pick(gen_graph *g, int min_rank, int max_rank);

/* --- gen_ops_tensor.c / gen_ops_nn.c: one generator per op family --- */

/* Adds one op of a random family on values picked from g; false when the family found no
 * fitting input (the caller tries another). */
typedef bool (*gen_op_fn)(gen_graph *g);
extern const gen_op_fn gen_tensor_ops[];
extern const int gen_num_tensor_ops;
extern const gen_op_fn gen_nn_ops[];
extern const int gen_num_nn_ops;

#endif
