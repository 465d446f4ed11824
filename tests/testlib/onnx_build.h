// onnx_build.h - Test support: builds small ONNX models in memory with protobuf-c and writes
// them out - graph inputs with static or symbolic dims, nodes with attributes, initializers.
// Part of the test-support library (tests/testlib, linked into every test program).
//
//   mk_model *mk = mk_new(13);
//   mk_input(mk, "x", MK_F32, 2, (int64_t[]){ 2, 3 });
//   mk_node(mk, "Identity", "id0", 1, (const char *[]){ "x" }, 1, (const char *[]){ "y" });
//   mk_output(mk, "y", MK_F32, 2, (int64_t[]){ 2, 3 });
//   size_t n; uint8_t *bytes = mk_pack(mk, &n); ... free(bytes);   (or mk_write(mk, path))
//   mk_free(mk);
//
// Every allocation is tracked by the model and released by mk_free.
#ifndef GLOW_TEST_ONNX_BUILD_H
#define GLOW_TEST_ONNX_BUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "support/support.h"

/* TensorProto.DataType codes. */
enum {
    MK_F32 = 1, MK_U8 = 2, MK_I8 = 3, MK_U16 = 4, MK_I16 = 5, MK_I32 = 6, MK_I64 = 7,
    MK_STRING = 8, MK_BOOL = 9, MK_F16 = 10, MK_F64 = 11, MK_U32 = 12, MK_U64 = 13, MK_BF16 = 16
};
/* AttributeProto.AttributeType codes. */
enum { MK_AT_FLOAT = 1, MK_AT_INT = 2, MK_AT_STRING = 3, MK_AT_TENSOR = 4, MK_AT_FLOATS = 6,
       MK_AT_INTS = 7 };

typedef struct mk_model {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    void **allocs;
    size_t nallocs, cap;
} mk_model;

/* Memory owned by the model: p itself, a zeroed block, a copy of a string or of bytes. */
void *mk_track(mk_model *mk, void *p);
void *mk_alloc(mk_model *mk, size_t size);
char *mk_str(mk_model *mk, const char *s);
void *mk_dup(mk_model *mk, const void *p, size_t size);

/* Appends p to a pointer array owned by the model, built by mk_push alone (it grows
 * geometrically: appending n elements costs O(n) time and memory). */
void mk_push(mk_model *mk, void ***arr, size_t *n, void *p);

/* A model importing the default domain at opset (none when opset <= 0). */
mk_model *mk_new(int opset);
void mk_opset(mk_model *mk, const char *domain, int version);

/* A tensor ValueInfoProto; syms (may be NULL) gives dim_param names where non-NULL; rank < 0
 * leaves the shape out. */
Onnx__ValueInfoProto *mk_value_info(mk_model *mk, const char *name, int elem, int rank,
                                    const int64_t *dims, const char *const *syms);

/* Graph inputs and outputs (appended in call order). */
Onnx__ValueInfoProto *mk_input_sym(mk_model *mk, const char *name, int elem, int rank,
                                   const int64_t *dims, const char *const *syms);
Onnx__ValueInfoProto *mk_input(mk_model *mk, const char *name, int elem, int rank,
                               const int64_t *dims);
Onnx__ValueInfoProto *mk_output_sym(mk_model *mk, const char *name, int elem, int rank,
                                    const int64_t *dims, const char *const *syms);
Onnx__ValueInfoProto *mk_output(mk_model *mk, const char *name, int elem, int rank,
                                const int64_t *dims);

/* A TensorProto with raw_data (little-endian bytes), not yet attached to anything. */
Onnx__TensorProto *mk_tensor_raw(mk_model *mk, const char *name, int elem, int rank,
                                 const int64_t *dims, const void *data, size_t bytes);

/* A TensorProto without data: fill a typed field (float_data, int32_data, ...) afterwards. */
Onnx__TensorProto *mk_tensor_typed(mk_model *mk, const char *name, int elem, int rank,
                                   const int64_t *dims);

/* Adds t to the graph's initializers. */
Onnx__TensorProto *mk_initializer(mk_model *mk, Onnx__TensorProto *t);

/* Appends a node (domain and name may be NULL). */
Onnx__NodeProto *mk_node_domain(mk_model *mk, const char *domain, const char *op,
                                const char *name, int nin, const char *const *ins, int nout,
                                const char *const *outs);
Onnx__NodeProto *mk_node(mk_model *mk, const char *op, const char *name, int nin,
                         const char *const *ins, int nout, const char *const *outs);

/* Attributes on a node. */
Onnx__AttributeProto *mk_attr(mk_model *mk, Onnx__NodeProto *n, const char *name, int type);
void mk_attr_int(mk_model *mk, Onnx__NodeProto *n, const char *name, int64_t v);
void mk_attr_float(mk_model *mk, Onnx__NodeProto *n, const char *name, float v);
void mk_attr_ints(mk_model *mk, Onnx__NodeProto *n, const char *name, const int64_t *v,
                  int count);
void mk_attr_floats(mk_model *mk, Onnx__NodeProto *n, const char *name, const float *v,
                    int count);
void mk_attr_str(mk_model *mk, Onnx__NodeProto *n, const char *name, const char *s);
void mk_attr_tensor(mk_model *mk, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t);

/* Serializes the model into a malloc'd buffer. */
uint8_t *mk_pack(mk_model *mk, size_t *size);

/* Imports the model into a new module; NULL (the message in d) when the import fails. */
struct glow_module *mk_load(mk_model *mk, glow_diag *d);

/* Serializes the model into the file at path; false (with a message) when it cannot. */
bool mk_write(mk_model *mk, const char *path);

void mk_free(mk_model *mk);

/* Writes the one-node model x f32[N, 3] -> Relu -> y f32[N, 3] (N symbolic, opset 13) that the
 * command-line tests use for --define; false when the file cannot be written. */
bool mk_write_symbolic_relu(const char *path);

#endif
