// lower_internal.h - What the lowering driver (lower.c) and the rule families (lower_*.c) share.
#ifndef GLOW_LOWER_INTERNAL_H
#define GLOW_LOWER_INTERNAL_H

#include "lower/lower.h"

#define LOWER_MAX_OUT 4

/* One application of a rule to node `n`. Rules build replacement nodes with the lw_*
 * helpers below (which append to the function; the driver then moves them before `n`) and
 * set out[i] for every result of n. Errors are sticky: once a helper fails, every later
 * helper returns a null value and does nothing, so rules need not check each step. */
typedef struct lower_cx {
    glow_function *f;
    glow_node *n;
    glow_diag *d;
    glow_status status;
    glow_value out[LOWER_MAX_OUT];
} lower_cx;

/* A rule sets *applied = false (building nothing) when the node's attributes or dtypes
 * leave nothing to lower, e.g. a depthwise conv or a reflect pad. */
typedef void (*lower_rule)(lower_cx *cx, bool *applied);

/* Rule families. */
void lower_gemm(lower_cx *cx, bool *applied);            /* lower_linear.c */
void lower_fully_connected(lower_cx *cx, bool *applied);
void lower_batch_norm(lower_cx *cx, bool *applied);      /* lower_norm.c */
void lower_instance_norm(lower_cx *cx, bool *applied);
void lower_layer_norm(lower_cx *cx, bool *applied);
void lower_group_norm(lower_cx *cx, bool *applied);
void lower_rms_norm(lower_cx *cx, bool *applied);
void lower_lp_norm(lower_cx *cx, bool *applied);
void lower_softmax(lower_cx *cx, bool *applied);         /* lower_act.c */
void lower_clip(lower_cx *cx, bool *applied);
void lower_leaky_relu(lower_cx *cx, bool *applied);
void lower_prelu(lower_cx *cx, bool *applied);
void lower_hard_sigmoid(lower_cx *cx, bool *applied);
void lower_hard_swish(lower_cx *cx, bool *applied);
void lower_pad(lower_cx *cx, bool *applied);             /* lower_pad.c */
void lower_conv(lower_cx *cx, bool *applied);            /* lower_conv.c */
void lower_spatial_1d(lower_cx *cx, bool *applied);
void lower_conv_transpose(lower_cx *cx, bool *applied);

/* --- lower.c: builders. `what` names the new node "<n's name>/<what>". --- */

static inline bool lw_ok(const lower_cx *cx) { return cx->status == GLOW_OK; }
static inline glow_value lw_none(void) { return (glow_value){ NULL, 0 }; }
static inline glow_value lw_in(const lower_cx *cx, int i) { return cx->n->ins[i]; }
static inline const glow_type *lw_type(glow_value v) { return glow_value_type(v); }

/* The general builder: glow_build with the sticky error. */
glow_value lw_build(lower_cx *cx, glow_node_kind k, const char *what, const glow_value *ins,
                    int nin, const glow_attr *attrs, int nattr, const glow_type *declared);
/* The same with ndeclared result types (the node gets that many results). */
glow_value lw_build_n(lower_cx *cx, glow_node_kind k, const char *what, const glow_value *ins,
                      int nin, const glow_attr *attrs, int nattr, const glow_type *declared,
                      int ndeclared);
glow_value lw_un(lower_cx *cx, glow_node_kind k, const char *what, glow_value x);
glow_value lw_bin(lower_cx *cx, glow_node_kind k, const char *what, glow_value a, glow_value b);
/* SPLAT of type t (or of v's type) filled with `value`. */
glow_value lw_splat(lower_cx *cx, const char *what, const glow_type *t, double value);
glow_value lw_splat_like(lower_cx *cx, const char *what, glow_value v, double value);
/* Binary op of x with a scalar: x <k> SPLAT(value). */
glow_value lw_scalar(lower_cx *cx, glow_node_kind k, const char *what, glow_value x,
                     double value);
glow_value lw_reshape(lower_cx *cx, const char *what, glow_value x, int rank,
                      const int64_t *dims);
/* BROADCAST of x to t's shape (x itself when the shapes already agree). */
glow_value lw_broadcast(lower_cx *cx, const char *what, glow_value x, const glow_type *t);
/* REDUCE_* over `axes` with keepdims, broadcast back to x's shape when `back`. */
glow_value lw_reduce(lower_cx *cx, glow_node_kind k, const char *what, glow_value x,
                     const int64_t *axes, int naxes, bool back);
/* v holds dims [axis, axis + v.rank) of t: reshapes it to t's rank with 1 elsewhere and
 * broadcasts it to t's shape (the per-channel parameters of norms). */
glow_value lw_expand(lower_cx *cx, const char *what, glow_value v, const glow_type *t,
                     int axis);
glow_value lw_transpose(lower_cx *cx, const char *what, glow_value x, const int64_t *perm);
/* SLICE with step 1 of [starts, ends) per dim. */
glow_value lw_slice(lower_cx *cx, const char *what, glow_value x, const int64_t *starts,
                    const int64_t *ends);

/* True for the plain float kinds (f16, bf16, f32, f64) whose arithmetic lowering keeps. */
static inline bool lw_is_float(const glow_type *t) { return glow_dtype_is_float(t->dtype); }

#endif
