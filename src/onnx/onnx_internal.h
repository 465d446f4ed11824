// onnx_internal.h - What the ONNX op loaders share: the import context and its helpers.
#ifndef GLOW_ONNX_INTERNAL_H
#define GLOW_ONNX_INTERNAL_H

#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

/* One ONNX value name's binding during import. */
typedef struct onnx_binding {
    glow_value v;
    bool poisoned;   /* produced by a node that failed to import: users are skipped */
    /* A data-dependent shape (docs/dynamic-shapes.md): v has the bound type, `count` (an i64
     * scalar) is the run-time extent of axis count_axis. count.node is NULL otherwise. */
    glow_value count;
    int count_axis;
    /* The padding past the count may hold nonzero values (it went through arithmetic), so a
     * Gather by it masks it first (import_bnd.c). Results of the data-dependent ops zero it. */
    bool pad_dirty;
} onnx_binding;

typedef struct onnx_ctx {
    glow_module *m;
    glow_function *f;
    glow_arena *arena;            /* == &m->arena */
    glow_strmap values;           /* ONNX value name -> onnx_binding* */
    int opset;                    /* ai.onnx opset of the model */
    const glow_onnx_options *opt;
    /* Problems are collected, not returned at the first one, so that one message can list
     * every unsupported op of a model. */
    glow_diag problems;
    int nunsupported, nerrors;
    glow_diag *d;                 /* where the node-local failure of the moment is written */
    /* Added by onnx_load.c / onnx_util.c: */
    int node_index;               /* index of the NodeProto being imported */
    int nbuilt;                   /* helper nodes built for it so far (names them uniquely) */
    bool main_built;              /* a node named after it exists (later ones get suffixes) */
    glow_arena scratch;           /* per-node temporaries, reset after each node */
    /* Added by onnx_ops_quant.c: the integer data behind constants DequantizeLinear made
     * (onnx_quant.h), so QDQ-wrapped products can import as quantized nodes. */
    struct onnx_dq_const *dq_consts;
    /* Added by onnx_load.c for onnx_declared_type: the graph being imported. */
    const Onnx__GraphProto *graph;
    /* Added by import_bnd.c: the bounded inputs (bit k: input k) onnx_input gave the loader of
     * bnd_np, whose onnx_set_output binds the result with their count. */
    const Onnx__NodeProto *bnd_np;
    unsigned bnd_inputs;
    unsigned bnd_relaid;          /* those moved out of the compact prefix first (bnd_moved) */
    glow_value bnd_moved;
    /* Added by onnx_load.c: the model file's mapping, or NULL when it was read; large
     * raw_data of the initializers point into it (onnx_map.c) and constants borrow it. */
    glow_mapping *map;
} onnx_ctx;

/* Constants computed at import (folding, ConstantOfShape, Range) larger than this stay
 * nodes, so a model cannot make the importer allocate absurd amounts of memory. */
#define ONNX_FOLD_MAX_BYTES ((size_t)64 << 20)

/* A loader builds the graph for one NodeProto. It returns GLOW_OK after binding every output
 * with onnx_set_output, or a failure made with onnx_fail / onnx_unsupported. `kind` is the
 * node kind of the op's onnx_ops.def row (ONNX_CUSTOM for ops with their own importer). */
typedef glow_status (*onnx_loader)(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                   glow_node_kind kind);

/* The kind column of onnx_ops.def rows whose loader is the op's own. */
#define ONNX_CUSTOM NK_COUNT

/* --- onnx_depth.c --- */

/* Message nesting a model may have: protobuf's own default recursion limit. An If inside an
 * If costs three levels (GraphProto > NodeProto > AttributeProto), so 33 levels of subgraphs
 * fit, far beyond what exporters produce. */
#define ONNX_MAX_NESTING 100
/* False when the protobuf bytes of a `desc` message nest messages more than max_depth deep
 * (checked without recursion, before protobuf-c's recursive unpacking sees them). */
bool onnx_nesting_ok(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                     int max_depth);

/* --- onnx_map.c --- */

/* raw_data fields this large are left in the file mapping (smaller ones are copied). */
#define ONNX_MAP_MIN_BYTES ((size_t)64 << 10)

/* A raw_data payload cut out of a model: of initializer `index` of the top graph, at byte
 * `off` of the file, `len` bytes. */
typedef struct onnx_cut {
    size_t index, off, len;
} onnx_cut;

/* Writes to *out (malloc'd) the model data[0 .. size) without the raw_data fields of its
 * top graph's initializers that are min_len bytes or more, and lists them in *cuts
 * (malloc'd). False, with nothing allocated, when there is nothing to cut or the bytes are
 * not the expected shape (then the whole model is unpacked as it is). */
bool onnx_cut_raw_data(const uint8_t *data, size_t size, size_t min_len, uint8_t **out,
                       size_t *out_size, onnx_cut **cuts, size_t *ncuts);
/* Unpacks size bytes of data, a model of file_size bytes (more when its weights were cut
 * out): NULL, with the reason in d, when it nests too deep or does not parse. */
Onnx__ModelProto *onnx_unpack(const uint8_t *data, size_t size, size_t file_size, glow_diag *d);
/* Unpacks a mapped model with its large raw_data left in the mapping: the unpacked
 * TensorProtos point into it (the whole file is unpacked when the walk gives up). Free the
 * result with onnx_free_mapped. */
Onnx__ModelProto *onnx_unpack_mapped(const glow_mapping *map, glow_diag *d);
/* True when tp's raw_data lies in map (NULL: never): protobuf-c must not free it. */
bool onnx_raw_mapped(const glow_mapping *map, const Onnx__TensorProto *tp);
/* Frees a model from onnx_unpack_mapped (map NULL: from onnx_unpack), leaving the mapping's
 * bytes alone. */
void onnx_free_mapped(Onnx__ModelProto *mp, const glow_mapping *map);

/* --- onnx_ops.c (table from onnx_ops.def) --- */

/* One row of onnx_ops.def. */
typedef struct onnx_op {
    const char *op_type;
    int since;
    onnx_loader fn;
    glow_node_kind kind;
} onnx_op;

/* The row for op_type at `opset` (the one with the largest since-version <= opset). */
const onnx_op *onnx_find_op(const char *op_type, int opset);
/* Like onnx_find_op for any domain ("" and "ai.onnx" are the default one). The opset passed on
 * is the default domain's. */
const onnx_op *onnx_find_domain_op(const char *domain, const char *op_type, int opset);
/* The node kind op_type becomes at `opset`; ONNX_CUSTOM when it has its own importer or none. */
glow_node_kind onnx_op_kind(const char *op_type, int opset);
/* onnx_ops_grad.c: ai.onnx.preview.training Gradient. */
glow_status load_gradient(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind);
/* onnx_string_ml.c: ai.onnx.ml LabelEncoder. */
glow_status load_label_encoder(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                               glow_node_kind kind);
/* onnx_ops_train.c: ai.onnx.preview.training's optimizers, and BatchNormalization with
 * training_mode=1 (called by load_batch_norm). */
glow_status load_adagrad(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                         glow_node_kind kind);
glow_status load_adam(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind);
glow_status load_momentum(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind);
glow_status onnx_batch_norm_training(onnx_ctx *cx, const Onnx__NodeProto *np);
/* onnx_ops_flex.c: ai.onnx.preview FlexAttention. */
glow_status load_flex_attention(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind);
/* onnx_ops_ml.c: ai.onnx.ml ops on numbers. */
glow_status load_binarizer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                           glow_node_kind kind);
glow_status load_array_feature_extractor(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                         glow_node_kind kind);
glow_status load_tree_ensemble(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                               glow_node_kind kind);
/* onnx_ops_modes.c: MaxPool's storage_order=1 indices from the row-major ones of a pool
 * over x of type xt. */
glow_status onnx_column_major_indices(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value idx,
                                      const glow_type *xt, glow_value *out);
/* Resize with antialias=1 (linear or cubic) as one MatMul per resized axis with a constant
 * [in, out] interpolation matrix; `scales` are the effective per-dim scales load_resize
 * computes, `coord` a gk_coord_mode code (kernels/resize_math.h). */
typedef struct resize_aa {
    bool cubic, exclude;
    double cubic_a;
    int coord;
} resize_aa;
/* Einsum with "..." or a subscript repeated in one term: *eq rewritten (arena) without them,
 * v[0..nin) replaced by their diagonals where subscripts repeat; unchanged otherwise. */
glow_status onnx_einsum_prepare(onnx_ctx *cx, const Onnx__NodeProto *np, const char **eq,
                                glow_value *v, int nin);
glow_status onnx_resize_antialias(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                  const int64_t *out_dims, const double *scales,
                                  const resize_aa *aa, glow_value *out);

#define ONNX_OP(name, since, fn, nk)                                                       \
    glow_status fn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind);
#include "onnx_ops.def"
#undef ONNX_OP

/* --- onnx_util.c --- */

/* The node's name for messages: its name, or "<op_type>#<index>" when unnamed. */
const char *onnx_node_name(const Onnx__NodeProto *np);

/* Failures that name the node, op type and opset: "Conv 'conv1' (opset 11): ...". */
glow_status onnx_fail(onnx_ctx *cx, const Onnx__NodeProto *np, glow_status s, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));
/* An op, attribute value or dtype glowc does not support (GLOW_ERR_UNSUPPORTED). */
glow_status onnx_unsupported(onnx_ctx *cx, const Onnx__NodeProto *np, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Inputs. Optional inputs may be absent (index past the end or an empty name). */
int onnx_num_inputs(const Onnx__NodeProto *np);     /* index of the last present input + 1 */
bool onnx_has_input(const Onnx__NodeProto *np, int i);
/* The value bound to input i; fails (naming the input) when missing. */
glow_status onnx_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value *v);
/* Input i must be a constant after import-time folding (e.g. Reshape's shape). */
glow_status onnx_input_const(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                             const glow_tensor **t);
/* A constant integer input read as i64 values (arena copy). */
glow_status onnx_input_ints(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int64_t **vals,
                            int *count);
/* A constant float input read as f64 values (arena copy). */
glow_status onnx_input_floats(onnx_ctx *cx, const Onnx__NodeProto *np, int i, double **vals,
                              int *count);

/* Attributes (absent -> default). Wrong attribute types fail through onnx_attr_check. */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *np, const char *name);
int64_t onnx_attr_int(const Onnx__NodeProto *np, const char *name, int64_t dflt);
float onnx_attr_float(const Onnx__NodeProto *np, const char *name, float dflt);
/* Returns the count, or -1 when absent; *vals points into the proto. */
int onnx_attr_ints(const Onnx__NodeProto *np, const char *name, const int64_t **vals);
int onnx_attr_floats(const Onnx__NodeProto *np, const char *name, const float **vals);
/* String attribute as a NUL-terminated arena copy (dflt when absent). */
const char *onnx_attr_str(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                          const char *dflt);
/* Fails (GLOW_ERR_BAD_ATTR, naming np and the attribute) when attribute `name` is present
 * with an AttributeProto type other than `type` (1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 6 FLOATS,
 * 7 INTS, ...). */
glow_status onnx_attr_check(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                            int type);

/* Outputs. Binding output i (if the node has it and its name is not empty). */
int onnx_num_outputs(const Onnx__NodeProto *np);
bool onnx_has_output(const Onnx__NodeProto *np, int i);
glow_status onnx_set_output(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value v);

/* Builds a node named after np (suffixes added for helper nodes: "name/bcast0"), infers its
 * types, and folds it to a constant when every operand is constant and glow_eval_node
 * supports it. On failure *out is untouched and the failure names np. */
glow_status onnx_build(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                       const glow_value *ins, int nin, const glow_attr *attrs, int nattr,
                       const glow_type *declared, int ndeclared, glow_value *out);
/* Convenience wrappers around onnx_build. */
glow_status onnx_reshape(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int rank,
                         const int64_t *dims, glow_value *out);
glow_status onnx_cast(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, glow_dtype to,
                      glow_value *out);
/* onnx_cast with Cast's `saturate` (float8 targets) and `round_mode` (e8m0; NULL: "up"). */
glow_status onnx_cast_mode(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, glow_dtype to,
                           bool saturate, const char *round_mode, glow_value *out);
/* Broadcasts v to the shape (rank, dims) with NumPy rules (a RESHAPE adds leading 1s, then a
 * BROADCAST; nothing when the shape already matches). */
glow_status onnx_broadcast_to(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int rank,
                              const int64_t *dims, glow_value *out);
/* Broadcasts all operands to their common shape, then builds `kind` (elementwise). */
glow_status onnx_build_elemwise(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                                const glow_value *ins, int nin, const glow_attr *attrs,
                                int nattr, glow_value *out);
/* A new constant in the module (arena copy of data). */
glow_value onnx_constant(onnx_ctx *cx, const char *name, const glow_type *t, const void *data);
/* A scalar constant of dtype t holding v, broadcast to nothing (rank 0). */
glow_value onnx_scalar(onnx_ctx *cx, const char *name, glow_dtype t, double v);
/* Normalizes a possibly negative axis for `rank`; fails naming np when out of range. */
glow_status onnx_axis(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t axis, int rank,
                      int *out);

/* A helper value's name: "<node>/<what>". */
const char *onnx_sub_name(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what);
/* Training-mode Dropout with a `seed` attribute: the reference's mask, drawn at import
 * (onnx_dropout.c); outputs bound. */
glow_status onnx_dropout_seeded(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                double ratio, int opset);
/* Fails as unsupported, naming input i as `what`, unless it is a constant at import (it
 * decides a shape). */
glow_status onnx_input_static(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const char *what);
/* onnx_scalar named onnx_sub_name(np, what). */
glow_value onnx_sub_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                           glow_dtype t, double v);
/* Fails unless the node has between min and max inputs (absent trailing ones not counted). */
glow_status onnx_check_inputs(onnx_ctx *cx, const Onnx__NodeProto *np, int min, int max);
/* The dtype's range as exact f64 values (floats: -inf..inf); false for 64-bit integers, whose
 * limits f64 cannot hold exactly. */
bool onnx_dtype_range(glow_dtype t, double *lo, double *hi);
/* The dtype of a TensorProto.DataType code (an attribute's int64); false for codes glowc lacks
 * or outside int range. */
bool onnx_dtype_of_code(int64_t code, glow_dtype *out);

/* --- import_dyn.c: data-dependent shapes (docs/dynamic-shapes.md) --- */

/* Binds output i to the bounded value v whose axis `axis` has the run-time extent `count`. */
glow_status onnx_set_output_bounded(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                                    glow_value v, glow_value count, int axis);
/* Whether input i is a constant at import, directly or through the known input values
 * (onnx_input_const would succeed); true also when it is missing (the caller reports it). */
bool onnx_input_known(onnx_ctx *cx, const Onnx__NodeProto *np, int i);
/* TopK with a K computed at run time. */
glow_status load_topk_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind);
/* Whether input i is computed at run time (not a constant at import). */
bool onnx_input_is_computed(onnx_ctx *cx, const Onnx__NodeProto *np, int i);
/* The run-time forms of NonZero, Unique and Compress (their loaders fold constants). */
glow_status load_nonzero_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind);
glow_status load_unique_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                            glow_node_kind kind);
glow_status load_compress_dyn(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind);

/* --- import_bnd.c: bounded values consumed by other ops (docs/dynamic-shapes.md) --- */

/* Input i of np is the bounded value b: fails with the one-line refusal unless np's op keeps
 * the compact layout when it reads b at input i; sets *v (b's value, or for Gather indices
 * with a dirty padding, a masked copy) and notes the input for onnx_bounded_output. */
glow_status onnx_bounded_input(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                               const onnx_binding *b, glow_value *v);
/* Binds output i to v with the count of the bounded inputs noted for np, after checking
 * with the real types that v holds its actual elements compactly; refuses otherwise. */
glow_status onnx_bounded_output(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value v);

/* --- import_lazy.c: lazy control flow (docs/dynamic-shapes.md) --- */

/* A Scan's parts: N states, M scan inputs, K scan outputs, the axis of each scan input
 * (normalized) and output (may be negative: counted on the stacked rank) and their
 * directions (1: from the end). */
typedef struct onnx_scan_spec {
    int N, M, K;
    const int64_t *in_axes, *in_rev;
    const int64_t *out_axes, *out_rev;
} onnx_scan_spec;

/* An If whose condition is known only at run time as one IF node (any number of outputs):
 * only the taken branch runs. Both branches must give the same types. */
glow_status onnx_lazy_if(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value cond,
                         const Onnx__GraphProto *then_g, const Onnx__GraphProto *else_g,
                         int nout);
/* A Loop as one LOOP node running body g: trips (i64 []) and cond (bool []) computed or
 * constant, n carried values, nsout scan outputs of `len` slices (the trip count, known).
 * Unless the body provably runs all `len` iterations (cond is the constant true and the body's
 * condition output is true or its condition input), the scan outputs are bounded values whose
 * count is the number of iterations run (a last result of the LOOP); or, with `declined`, the
 * caller would rather unroll such a Loop (its condition may fold): *declined is set and
 * nothing is built. */
glow_status onnx_lazy_loop(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *g,
                           glow_value trips, glow_value cond, const glow_value *carried, int n,
                           int nsout, int64_t len, bool *declined);
/* A Scan (opset 9 on) of `len` iterations as one LOOP node with scan inputs and outputs. */
glow_status onnx_lazy_scan(onnx_ctx *cx, const Onnx__NodeProto *np, const Onnx__GraphProto *g,
                           const onnx_scan_spec *sp, const glow_value *states,
                           const glow_value *scans, int64_t len);

/* --- onnx_ops_const.c: computed constants --- */

/* Zeroed scratch (cx->scratch) for a computed constant of `count` values of `size` bytes,
 * bounded like folding (ONNX_FOLD_MAX_BYTES). */
glow_status onnx_const_buffer(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t count,
                              size_t size, void **out);
/* A constant of dtype t and shape (rank, dims) named "<node>/<what>" from f64 values, converted
 * through buf (numel values of t, e.g. from onnx_const_buffer). */
glow_value onnx_f64_constant(onnx_ctx *cx, const Onnx__NodeProto *np, const char *what,
                             glow_dtype t, int rank, const int64_t *dims, const double *vals,
                             void *buf);

/* --- onnx_tensor.c --- */

/* Converts a TensorProto (raw_data or typed fields) into a tensor whose storage is allocated
 * from `a`. Checks dims, sizes and data lengths; fails with GLOW_ERR_TOO_LARGE for
 * declared sizes that cannot be held, GLOW_ERR_UNSUPPORTED for strings, external data and
 * element kinds glowc lacks. `what` names the tensor in messages. */
glow_status onnx_tensor_from_proto(const Onnx__TensorProto *tp, glow_arena *a, glow_tensor *t,
                                   const char *what, glow_diag *d);
/* True when tp's raw_data holds its elements exactly as a payload holds them (no unpacking,
 * no normalizing, the sizes agree, no external data): *ty is then the tensor's type. */
bool onnx_tensor_raw_plain(const Onnx__TensorProto *tp, glow_type *ty);
/* Fills a TensorProto with t's dims, data_type and raw_data pointing into t (no copy), or,
 * for the packed 4- and 2-bit kinds, into a packed copy it returns for the caller to free
 * (NULL otherwise). */
void *onnx_tensor_to_proto(const glow_tensor *t, const char *name, Onnx__TensorProto *tp,
                           int64_t *dims_storage);
/* t's elements packed as files hold them (*len bytes, malloc'ed), or NULL with *len the
 * plain byte size when t's kind is not packed. */
void *onnx_pack_lowbit(const glow_tensor *t, size_t *len);
/* onnx_string.c: string tensors in TensorProto.string_data. The handles and the bytes are
 * allocated from `a` (bytes with an embedded NUL are refused: handles end at the first). */
glow_status onnx_strings_from_proto(const Onnx__TensorProto *tp, glow_arena *a, glow_tensor *t,
                                    int64_t numel, const char *what, glow_diag *d);
/* Points tp's string_data at t's strings; returns the array it allocated (caller frees). */
void *onnx_strings_to_proto(const glow_tensor *t, Onnx__TensorProto *tp);
/* The type the model declares for value `name` (graph outputs, then value_info), read as
 * onnx_value_info_type does; false when it declares none that glowc can read. */
bool onnx_declared_type(onnx_ctx *cx, const char *name, glow_type *t);
/* The type of a ValueInfoProto holding a tensor; symbolic dims resolved through the
 * options' defines (unresolved ones fail naming the input and the symbol). */
glow_status onnx_value_info_type(const Onnx__ValueInfoProto *vi, const glow_onnx_options *opt,
                                 glow_type *t, glow_diag *d);

/* --- onnx_ops_control.c: subgraphs (If branches, Loop and Scan bodies) and shared helpers --- */

/* Imports subgraph g inline into cx->f on behalf of node `owner`: g's inputs are bound to
 * ins[0..nin), its initializers become constants, its nodes are loaded with the outer scope's
 * names visible, and outs[0..nout) receive the values of its outputs. Names g defines are
 * unbound again afterwards (they shadow outer names only inside). `scope` prefixes the names
 * of the nodes built. Any failure inside fails the whole import (message names the inner
 * node). */
glow_status onnx_import_graph(onnx_ctx *cx, const Onnx__NodeProto *owner, const char *scope,
                              const Onnx__GraphProto *g, const glow_value *ins, int nin,
                              glow_value *outs, int nout);
/* Concatenates n values on `axis`, in chunks when n exceeds CONCAT's operand limit. */
glow_status onnx_concat_many(onnx_ctx *cx, const Onnx__NodeProto *np, const glow_value *vs,
                             int n, int axis, glow_value *out);
/* v[..., start:end, ...] along one axis (0 <= start <= end <= dim); v itself when whole. */
glow_status onnx_slice_axis(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, int axis,
                            int64_t start, int64_t end, glow_value *out);

/* --- onnx_ops_nn.c / onnx_ops_norm.c: shared with the quantized loaders --- */

#define ONNX_CONV_MAX_ATTRS 5
/* Conv's attributes for input x and weights w (kernel, strides, pads, dilations, group: auto_pad
 * resolved), as Conv and ChannelwiseQuantizedConv take them; attrs has room for
 * ONNX_CONV_MAX_ATTRS, their arrays live in cx->scratch. */
glow_status onnx_conv_attrs(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, glow_value w,
                            glow_attr *attrs, int *na);
/* numpy.matmul of a and b (rank-1 operands promoted, batch dims broadcast) as a MATMUL node;
 * `declared` (may be NULL) gives a quantized or i32 result's kind and parameters. */
glow_status onnx_matmul(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value a, glow_value b,
                        const glow_type *declared, glow_value *out);

/* --- onnx_seq.c: sequences and optionals, resolved at import --- */

/* A sequence (a list of tensor values) or an optional (a list of 0 or 1 values, present or
 * absent as known at import; its element may be a sequence). Never modified once bound: ops
 * build new lists. */
typedef struct onnx_seq {
    bool optional;
    glow_dtype dtype;     /* the tensors' element kind; GLOW_DTYPE_COUNT when unknown */
    int n;
    glow_value *elems;
} onnx_seq;

/* Longest sequence glowc builds (graph inputs, splits, inserts). */
#define ONNX_SEQ_MAX 65536
/* A count of glow_onnx_options.input_counts that is not known (no entry given). */
#define ONNX_SEQ_UNKNOWN (-2)

onnx_seq *onnx_seq_new(onnx_ctx *cx, bool optional, glow_dtype dtype, int n);
/* The value standing for s: a detached handle node (not in the module) that onnx_seq_of maps
 * back; onnx_input refuses it, so only the sequence loaders and control flow see it. */
glow_value onnx_seq_value(onnx_ctx *cx, onnx_seq *s);
/* The list behind v, or NULL when v is a tensor. */
onnx_seq *onnx_seq_of(glow_value v);
/* "a tensor", "a sequence" or "an optional", for messages. */
const char *onnx_seq_kind_str(glow_value v);
/* True when graph input/output vi is declared a sequence or an optional. */
bool onnx_seq_is_container(const Onnx__ValueInfoProto *vi);
/* Graph input vi (a sequence or optional) holding `count` tensors of types[0..count) (-1: an
 * absent optional; ONNX_SEQ_UNKNOWN fails, naming the input): makes the input placeholders
 * "<name>[k]" ("<name>" for an optional tensor) and returns the handle bound to the name. */
glow_status onnx_seq_graph_input(onnx_ctx *cx, const Onnx__ValueInfoProto *vi, int count,
                                 const glow_type *const *types, glow_value *out, glow_diag *d);
/* Saves graph output `name` bound to v into output placeholders by the same naming rule and
 * sets *count as glow_onnx_options.output_counts reports it (a tensor: 1). */
glow_status onnx_seq_graph_output(onnx_ctx *cx, const char *name, glow_value v, int *count,
                                  glow_diag *d);
/* If output `out` of a run-time condition when a or b is a sequence or optional: elementwise
 * WHERE when both have the same structure and types; otherwise the branch the condition's
 * known input value picks (onnx_input_const), or unsupported. */
glow_status onnx_seq_select(onnx_ctx *cx, const Onnx__NodeProto *np, int out, glow_value cond,
                            glow_value a, glow_value b, glow_value *res);
/* For a Loop carrying a sequence (which only unrolling can build): the value of its input i
 * (trip count or condition) when the caller's input values decide it; false otherwise. */
bool onnx_seq_loop_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int64_t *out);
/* onnx_input that also accepts sequences and optionals (Identity, control flow). */
glow_status onnx_input_any(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value *v);

#endif
