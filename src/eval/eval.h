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
/* Like glow_eval_node, but writes into caller-provided result tensors (types equal to
 * n->outs; storage may be anyone's) and allocates nothing. Operand types are read from the
 * tensors, so n->ins may be NULL (the interpreter passes a stand-in node). */
glow_status glow_eval_node_into(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                glow_diag *d);
/* Whether the evaluator handles kind k with these operand and result types. */
bool glow_eval_supported_types(glow_node_kind k, const glow_type *const *ins, int nin,
                               const glow_type *outs, int nout);

#endif
