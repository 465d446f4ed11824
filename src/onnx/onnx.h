// onnx.h - The ONNX stage: loads .onnx models into a glow_module, reads and writes tensor files.
#ifndef GLOW_ONNX_H
#define GLOW_ONNX_H

#include "graph/graph.h"

/* --- onnx_load.c --- */

typedef struct glow_onnx_options {
    /* "NAME=VALUE" pairs fixing symbolic dims (dim_param) of graph inputs. */
    const char *const *defines;
    int ndefines;
    /* Optional types for the fed graph inputs, by position (e.g. from test data); a NULL
     * entry or a position past ninput_types keeps the model's declared type. */
    const glow_type *const *input_types;
    int ninput_types;
    /* Optional values of the fed graph inputs, by position (NULL entries: unknown). When a
     * loader needs an input to be constant (Reshape's shape, axes, pads, scales, ...) and it
     * is a graph input with a value here of the input's type, the importer uses a constant
     * holding that value; the input stays an input of the program. */
    const glow_tensor *const *input_values;
    int ninput_values;
    /* Sequence and optional graph inputs (docs/onnx-import.md, "Sequences and optionals"):
     * input_counts[i] is how many tensors fed input i holds - a sequence's length, 1 for a
     * tensor or a present optional tensor, -1 for an absent optional. When given,
     * input_types and input_values list the tensors of all fed inputs one after the other
     * (a sequence's elements in order), as the input placeholders are made. NULL: every fed
     * input is one tensor. */
    const int *input_counts;
    int ninput_counts;
    /* When not NULL, receives for graph output i (i < noutput_counts) how many output
     * placeholders it became, in the same encoding; the placeholders follow graph output
     * order, a sequence's elements in order. */
    int *output_counts;
    int noutput_counts;
} glow_onnx_options;

/* Loads the model at `path` into `m` as function "main": graph inputs become input
 * placeholders (initializers listed as inputs become constants), graph outputs become SAVEs
 * into output placeholders (in graph output order). Shape-computing subgraphs are folded so
 * every type is static. A model with unsupported ops fails with GLOW_ERR_UNSUPPORTED and a
 * message naming every one of them (op type, opset, node names). Never crashes on malformed
 * input: GLOW_ERR_PARSE. On failure `m` may hold a partial graph; destroy it. */
glow_status glow_onnx_load(glow_module *m, const char *path, const glow_onnx_options *opt,
                           glow_diag *d);
glow_status glow_onnx_load_bytes(glow_module *m, const uint8_t *data, size_t size,
                                 const glow_onnx_options *opt, glow_diag *d);

/* --- onnx_info.c --- */

/* Summary of a model without building a graph (for `glowc info`). Owned by an arena. */
typedef struct glow_onnx_io {
    const char *name;
    const char *type_str; /* e.g. "f32[N, 3, 224, 224]" or "seq(f32[...])" */
} glow_onnx_io;

typedef struct glow_onnx_op_count {
    const char *op_type;
    const char *domain;   /* "" for ai.onnx */
    int opset;            /* the model's opset for that domain */
    int count;
    bool supported;       /* glowc has a loader for it at this opset */
} glow_onnx_op_count;

typedef struct glow_onnx_summary {
    int64_t ir_version;
    const char *producer;
    int nopsets;
    const char **opset_domains;
    int64_t *opset_versions;
    int ninputs, noutputs, ninitializers;
    glow_onnx_io *inputs;     /* fed inputs only (initializers excluded) */
    glow_onnx_io *outputs;
    int nops;
    glow_onnx_op_count *ops;  /* sorted by count, then name */
    int64_t weight_bytes;
} glow_onnx_summary;

glow_status glow_onnx_summarize(const char *path, glow_arena *a, glow_onnx_summary *out,
                                glow_diag *d);
/* True when glowc has a loader for op_type (domain "" or "ai.onnx") at `opset`. */
bool glow_onnx_op_supported(const char *domain, const char *op_type, int opset);

/* --- tensor_file.c --- */

/* Reads a tensor from an ONNX TensorProto file (.pb) or a NumPy file (.npy), chosen by the
 * file's contents (NumPy magic) rather than its name. `name` (may be NULL) receives the
 * tensor's name (empty for .npy), malloc'd. The tensor is owned. */
glow_status glow_tensor_read_file(const char *path, glow_tensor *t, char **name, glow_diag *d);
glow_status glow_tensor_read_pb(const uint8_t *data, size_t size, glow_tensor *t, char **name,
                                glow_diag *d);
glow_status glow_tensor_read_npy(const uint8_t *data, size_t size, glow_tensor *t, glow_diag *d);
/* Writes atomically (temporary file + rename). */
glow_status glow_tensor_write_pb(const char *path, const glow_tensor *t, const char *name,
                                 glow_diag *d);
glow_status glow_tensor_write_npy(const char *path, const glow_tensor *t, glow_diag *d);
/* In-memory serialization of a TensorProto (malloc'd buffer). */
glow_status glow_tensor_to_pb(const glow_tensor *t, const char *name, uint8_t **data,
                              size_t *size, glow_diag *d);

/* --- seq_file.c --- */

/* What a graph input or output holds, from its glow_onnx_io.type_str. */
typedef enum { GLOW_IO_TENSOR, GLOW_IO_SEQ, GLOW_IO_OPT_TENSOR, GLOW_IO_OPT_SEQ } glow_io_kind;
glow_io_kind glow_io_kind_of(const char *type_str);

/* A sequence or optional value as the compiled program takes it: its tensors one after the
 * other (owned) and their count, -1 for an absent optional (glow_onnx_options.input_counts). */
typedef struct glow_seq_value {
    int count;
    glow_tensor *tensors;
    char *name;          /* the name stored in the file (malloc'd) */
} glow_seq_value;

/* Reads a SequenceProto (kind GLOW_IO_SEQ) or OptionalProto (the optional kinds) file. */
glow_status glow_seq_read_file(const char *path, glow_io_kind kind, glow_seq_value *v,
                               glow_diag *d);
glow_status glow_seq_read_pb(const uint8_t *data, size_t size, glow_io_kind kind,
                             glow_seq_value *v, glow_diag *d);
void glow_seq_value_free(glow_seq_value *v);
/* Serializes `count` tensors (count -1: an absent optional) as the SequenceProto or
 * OptionalProto of `kind` (malloc'd buffer). */
glow_status glow_seq_to_pb(const glow_tensor *ts, int count, glow_io_kind kind,
                           const char *name, uint8_t **data, size_t *size, glow_diag *d);

/* --- onnx_write.c --- */

/* Writes function f (its module's placeholders and constants) as an ONNX model (ir_version 8,
 * opset 13) at `path`, atomically; quantized values in QDQ form (docs/quantization.md,
 * "Export"). A node with no ONNX form fails naming it and its kind, and writes nothing. */
glow_status glow_onnx_write(const glow_function *f, const char *path, const char *producer,
                            glow_diag *d);

#endif
