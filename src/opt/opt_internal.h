// opt_internal.h - What the pass driver (pipeline.c), the helpers (opt_util.c) and the passes
// (one file each) share.
#ifndef GLOW_OPT_INTERNAL_H
#define GLOW_OPT_INTERNAL_H

#include "opt/opt.h"

/* One run of one pass. Passes report rewrites in `changes` and failures (bugs or memory) in
 * `status` with the message in d. nusers is counted before the pass runs and the helpers
 * below keep it up to date, so "the only user" checks stay right within a pass. */
typedef struct opt_cx {
    glow_function *f;
    glow_module *m;
    const glow_opt_options *o;
    glow_diag *d;
    glow_status status;
    int changes;
} opt_cx;

#define PASS(id, name, desc) void glow_pass_##name(opt_cx *cx);
#include "passes.def"
#undef PASS

/* --- opt_util.c --- */

static inline bool opt_ok(const opt_cx *cx) { return cx->status == GLOW_OK; }

/* glow_build placed just before `before` (NULL: at the end), counting the new uses of its
 * operands. NULL (status set) when the node cannot be built. The name is
 * "<base's name>/<what>", or base's own name when what is NULL. */
glow_node *opt_build(opt_cx *cx, glow_node *before, const glow_node *base, const char *what,
                     glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                     int nattr, const glow_type *declared);
/* Rewires every use of n's result 0 to `to` and erases n (single-result nodes); counts a
 * change. */
void opt_replace(opt_cx *cx, glow_node *n, glow_value to);
/* Unlinks n, dropping its operands' user counts. */
void opt_erase(glow_node *n);
/* A new module constant named after `base` ("<base>/<what>"); NULL with status set when the
 * payload cannot be had. data NULL gives zeros. */
glow_node *opt_constant(opt_cx *cx, const glow_node *base, const char *what,
                        const glow_type *t, const void *data);
/* True when v is a constant (or a Splat) whose elements are all equal; *value gets it. */
bool opt_splat_value(glow_value v, double *value);
/* True when v is a constant or splat of all `value` (exactly). */
bool opt_is_splat_of(glow_value v, double value);
/* True for the elementwise unary kinds that commute with data movement (no dims involved). */
bool opt_is_unary_elem(glow_node_kind k);
/* Whether v's node is used only once (by one operand of one node). */
bool opt_single_use(glow_value v);
/* Points operand i of n at v, keeping user counts; erases the old operand's node when that
 * was its last use (and it is a function node). */
void opt_set_operand(glow_node *n, uint32_t i, glow_value v);

/* --- affine.c --- */

/* Whether `p` is a Conv, FullyConnected or Gemm with constant float weights (and bias) whose
 * output channel c (dim 1) can absorb y*s[c] + t[c]; *channels gets the channel count. */
bool opt_affine_foldable(const glow_node *p, int64_t *channels);
/* Replaces node `user` (whose value is p's result times s plus t per channel) by a copy of p
 * with new weights and bias. s, t have *channels entries. */
void opt_affine_fold(opt_cx *cx, glow_node *p, glow_node *user, const double *s,
                     const double *t);
/* Per-channel values of constant v broadcast along `shape` over dim 1: true with vals[c]
 * when v is a splat, a full constant equal over every dim but 1 (the importer materializes
 * [1, C, 1, 1] operands), or a Broadcast of a [1, C, 1, 1] / [C, 1, 1] constant. */
bool opt_per_channel(glow_value v, const glow_type *shape, double *vals);

#endif
