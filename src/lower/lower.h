// lower.h - Lowering: complex graph nodes become a few linear-algebra primitives, unless the
// backend keeps them whole.
#ifndef GLOW_LOWER_H
#define GLOW_LOWER_H

#include "graph/graph.h"

/* Decides, per node, whether lowering leaves it whole (NULL: lower everything lowerable). */
typedef bool (*glow_keep_fn)(const glow_node *n);

/* Lowers every node of f that has a lowering and that `keep` does not veto, repeating until
 * nothing changes (a lowering may produce nodes that lower further). Results stay within
 * float rounding of the original; the function still verifies. */
glow_status glow_lower(glow_function *f, glow_keep_fn keep, glow_diag *d);
/* Lowering as a backend gets it: lowering's own rules (everything lowerable except the
 * rules that run only on request, the per-group split of a grouped Conv), minus the nodes
 * the backend's `keeps` (NULL: none) runs whole beyond those rules, as Glow's shouldLower. */
glow_status glow_lower_for_backend(glow_function *f, glow_keep_fn keeps, glow_diag *d);
/* Replaces every lazy IF of f by both branches inline and a WHERE per result (for bundles,
 * which cannot run a body; inline_control.c). */
glow_status glow_inline_if(glow_function *f, glow_diag *d);
/* True when the kind has a lowering in this stage (for tests and --help). */
bool glow_lower_has_rule(glow_node_kind k);

#endif
