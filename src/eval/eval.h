// eval.h - The reference evaluator: computes one graph node on tensors with plain loops.
//
// Import-time and optimizer folding evaluate nodes on constants; the interpreter backend runs
// whole programs through glow_eval_node_into. The evaluator sits above the graph layer (it
// reads nodes, types and attributes) and below everything that folds or executes.
#ifndef GLOW_EVAL_H
#define GLOW_EVAL_H

#include "graph/graph.h"

/* --- eval.c --- */

/* Evaluates node `n` on constant operand tensors, writing freshly allocated owned result
 * tensors to outs[0..n->nout). GLOW_ERR_UNSUPPORTED when the kind or dtype has no
 * evaluator (the caller then keeps the node). Used by import-time and optimizer folding. */
glow_status glow_eval_node(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
bool glow_eval_supported(const glow_node *n);
/* Whether folding (at import or in the optimizer) may evaluate n ahead of a run: supported,
 * and sure to end - a LOOP is not (a while-true body with constant operands never would). */
bool glow_eval_foldable(const glow_node *n);
/* Like glow_eval_node, but writes into caller-provided result tensors (types equal to
 * n->outs; storage may be anyone's) and allocates nothing. Operand types are read from the
 * tensors, so n->ins may be NULL (the interpreter passes a stand-in node). */
glow_status glow_eval_node_into(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                glow_diag *d);
/* Whether the evaluator handles kind k with these operand and result types. */
bool glow_eval_supported_types(glow_node_kind k, const glow_type *const *ins, int nin,
                               const glow_type *outs, int nout);

/* --- eval_elem.c: the op codes of the typed kernels (kernels/gk_ops.h), shared with them --- */

/* The gk_typed_unary code of unary elementwise node n with its parameters p and q (ONNX's
 * defaults where an attribute is absent); 0 when n is not one. */
int glow_ev_unary_code(const glow_node *n, double *p, double *q);
/* The gk_typed_binary code of binary elementwise node n; 0 when n is not one. */
int glow_ev_binary_code(const glow_node *n);
/* CAST's modes (saturate, round_mode) as the GK_CAST_* bits kernels/gk_lowbit.h ORs into
 * the target kind's code. */
int glow_ev_cast_mode(const glow_node *n);

/* --- eval_string.c: where string results go (docs/onnx-import.md, "String tensors") --- */

/* Binds the arena that string results computed on this thread are written to, and returns
 * the one bound before (NULL: none; then a node that makes new strings fails with
 * GLOW_ERR_UNSUPPORTED, so import-time and optimizer folding keep it as a node). The runtime
 * binds a run's own store around each execution (runtime/program.c): both backends evaluate
 * on the calling thread (the cpu backend's fallbacks run on thread 0, the caller). */
glow_arena *glow_eval_bind_strings(glow_arena *a);
/* A NUL-terminated copy of s[0..len) in the bound arena; NULL when none is bound. */
const char *glow_eval_new_string(const char *s, size_t len);

/* --- eval_dyn.c: Unique's grouping, shared with the importer's folding of a constant --- */

/* x viewed as `len` slices along an axis, each `outer` x `inner` elements. */
typedef struct glow_slices {
    const glow_tensor *x;
    int64_t outer, len, inner;
} glow_slices;

/* Groups equal slices: first[g], count[g] per group in output order (sorted by value, or by
 * first occurrence), inv[i] the group of slice i. ord and tmp are scratch; every array holds
 * at least max(len, 1) entries. Returns the number of groups, -1 when out of memory. */
int64_t glow_unique_groups(const glow_slices *s, bool sorted, int64_t *ord, int64_t *tmp,
                           int64_t *first, int64_t *count, int64_t *inv);

#endif
