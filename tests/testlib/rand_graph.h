// rand_graph.h - Test support: random shapes and values from a seed, and the small graphs the
// differential tests build from them (one module and function, graph inputs filled with
// random data, constants, nodes, one saved output). Part of the test-support library
// (tests/testlib, linked into every test program).
//
//   static void case_relu(void)                     // a case: builds M/F from rng_state
//   {
//       int64_t dims[GLOW_MAX_DIMS];
//       int r = rand_shape(4, 9, dims);
//       output(node(NK_RELU, (glow_value[]){ input("x", r, dims) }, 1, NULL, 0));
//   }
//   build(case_relu, seed);                         // M, F, inputs[] as the seed makes them
//
// The generator is the 64-bit LCG with Knuth's MMIX constants, its upper bits as output:
// what the tests used before this library, so every seed still makes the same case.
#ifndef GLOW_TEST_RAND_GRAPH_H
#define GLOW_TEST_RAND_GRAPH_H

#include <stdint.h>

#include "graph/graph.h"
#include "ir/ir.h"

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

/* --- random numbers --- */

/* Advances *state and returns 32 random bits. */
uint32_t rng_next(uint64_t *state);

/* The state rnd() and everything below draw from; build() sets it to the case's seed. */
extern uint64_t rng_state;

uint32_t rnd(void);
/* An integer in [lo, hi]. */
int64_t rint_in(int64_t lo, int64_t hi);
/* A float in [-2, 2] on a grid of 1/500 (exact in f32 and f16 products of small sums). */
float rfloat(void);

/* n random elements of type t (malloc'd): floats in [-2, 2], signed integers in [-50, 50],
 * unsigned in [0, 100], bools 0/1 (small integers, so integer arithmetic and casts stay
 * exact). */
void *rand_typed(glow_dtype t, int64_t n);
float *rand_data(int64_t n);

/* A random shape: rank r (1..max) dims in [1, hi] into dims, about a third of them 1 (the
 * broadcasting and vector-tail cases); returns r. */
int rand_shape(int max, int64_t hi, int64_t *dims);

/* r random extents in [1, hi] into dims. */
void rand_extents(int r, int64_t hi, int64_t *dims);

/* --- the case's graph --- */

#define MAX_IN 4

/* The module and function being built, the diagnostics of the last call, and the graph
 * inputs' random data (in placeholder order). */
extern glow_module *M;
extern glow_function *F;
extern glow_diag D;
extern glow_tensor inputs[MAX_IN];
extern int ninputs;

/* A graph input of type t (or f32) with random data. */
glow_value input_t(const char *name, glow_dtype t, int rank, const int64_t *dims);
glow_value input(const char *name, int rank, const int64_t *dims);

/* A constant of type t (or f32) with random data, named w0, w1, ... */
glow_value cst_t(glow_dtype t, int rank, const int64_t *dims);
glow_value cst(int rank, const int64_t *dims);

/* Node k over ins with nout declared results (0: inferred); exits on a build error (a broken
 * case, not a backend failure). */
glow_value node_n(glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                  int nattr, int nout);
/* The same with the results inferred (MaxPool declares its one). */
glow_value node(glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                int nattr);

/* Saves v as the graph output y. */
void output(glow_value v);

/* A case builds M/F from the seed; it is built once per backend and thread count, as
 * programs consume their module. */
typedef void (*case_fn)(void);

/* Frees the previous inputs, seeds rng_state, makes M and F and runs fn. */
void build(case_fn fn, uint64_t seed);

void free_inputs(void);

/* ReLU6 as Clip(0, 6). */
glow_value relu6(glow_value x);
/* Conv k x k / s in g groups, "same" padding for odd k, with a bias; act 'r' a Relu after it,
 * 'c' a ReLU6, 0 none. */
glow_value conv_g(glow_value x, int64_t m, int64_t k, int64_t s, int64_t g, char act);

/* --- compiling and running a case --- */

struct glow_program;
/* Builds fn's graph from seed, compiles it for backend with `threads` threads (plain_layout:
 * the cpu backend's layout pass off) and runs it on the case's inputs: the program, whose IR
 * the caller may read and then destroys, or NULL after printing why. */
struct glow_program *build_and_run(case_fn fn, uint64_t seed, const char *backend, int threads,
                                   bool plain_layout);
/* A malloc'd copy of the f32 output 0 of program p, its element count in *n. */
float *output_copy(const struct glow_program *p, int64_t *n);
/* What a compiled program holds: its instructions counted by kind, its planned activation
 * region. */
typedef struct prog_counts {
    int kind[IK_COUNT];
    uint64_t act_bytes;
} prog_counts;
/* build_and_run, then counts the program into *pc (zeros when it fails) and returns a
 * malloc'd copy of output 0, or NULL. */
float *run_counted(case_fn fn, uint64_t seed, const char *backend, int threads,
                   bool plain_layout, int64_t *n, prog_counts *pc);

#endif
