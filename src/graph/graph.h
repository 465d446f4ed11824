// graph.h - The high-level IR: element kinds, types, tensors, and the Module ▸ Function ▸ Node
// dataflow graph with Constants and Placeholders.
#ifndef GLOW_GRAPH_H
#define GLOW_GRAPH_H

#include <stdio.h>

#include "support/support.h"

#define GLOW_MAX_DIMS 8

/* --- dtype.c --- */

typedef enum {
#define DTYPE(id, name, bytes, cls, onnx) GLOW_##id,
#include "dtypes.def"
#undef DTYPE
    GLOW_DTYPE_COUNT
} glow_dtype;

typedef enum { DC_FLOAT, DC_SINT, DC_UINT, DC_BOOL, DC_QUANT, DC_STRING } glow_dtype_class;

const char *glow_dtype_name(glow_dtype t);
size_t glow_dtype_size(glow_dtype t);
glow_dtype_class glow_dtype_class_of(glow_dtype t);
bool glow_dtype_is_float(glow_dtype t);
bool glow_dtype_is_int(glow_dtype t);          /* signed or unsigned plain integers */
bool glow_dtype_is_quantized(glow_dtype t);
/* The integers a quantized kind holds: i8q -128..127, u8q 0..255, i16q -32768..32767, i32q
 * (and anything else) the whole int32 range. */
void glow_dtype_qrange(glow_dtype t, int32_t *lo, int32_t *hi);
/* ONNX TensorProto.DataType code; false when ONNX has no such kind or glowc lacks it. */
bool glow_dtype_from_onnx(int onnx_code, glow_dtype *out);
int glow_dtype_to_onnx(glow_dtype t);          /* 0 for quantized kinds */
bool glow_dtype_from_name(const char *name, glow_dtype *out);
/* The low-bit kinds (float8, float4, e8m0, 4- and 2-bit integers): one byte per element in
 * memory, fewer bits in files (glow_dtype_file_bits). */
bool glow_dtype_is_lowbit(glow_dtype t);
int glow_dtype_file_bits(glow_dtype t);         /* 4 or 2 for the packed kinds, else 8 * size */
/* The kernels' element code (kernels/gk_dtype.h), 0 for the quantized kinds. */
int glow_dtype_kernel_code(glow_dtype t);

/* Exact conversions (round to nearest even; NaN stays NaN; overflow gives infinity). */
float glow_f16_to_f32(uint16_t h);
uint16_t glow_f32_to_f16(float f);
float glow_bf16_to_f32(uint16_t h);
uint16_t glow_f32_to_bf16(float f);

/* Element access through f64 / i64, for printing, folding and tests (not hot paths). A string
 * element reads as the number it spells (glow_str_to_f64); stores leave it unchanged (its
 * text would need bytes someone owns: the evaluator's Cast makes those). */
double glow_load_f64(glow_dtype t, const void *base, size_t i);
void glow_store_f64(glow_dtype t, void *base, size_t i, double v);
int64_t glow_load_i64(glow_dtype t, const void *base, size_t i);
void glow_store_i64(glow_dtype t, void *base, size_t i, int64_t v);

/* --- type.c --- */

typedef struct glow_type {
    glow_dtype dtype;
    uint8_t rank;                  /* 0 for a scalar */
    int64_t dims[GLOW_MAX_DIMS];
    float scale;                   /* quantized kinds only */
    int32_t offset;
} glow_type;

glow_type glow_type_make(glow_dtype t, int rank, const int64_t *dims);
glow_type glow_type_scalar(glow_dtype t);
int64_t glow_type_numel(const glow_type *t);
size_t glow_type_bytes(const glow_type *t);
bool glow_type_equal(const glow_type *a, const glow_type *b);      /* dtype, shape, quant */
bool glow_type_same_shape(const glow_type *a, const glow_type *b);
/* Row-major strides in elements. */
void glow_type_strides(const glow_type *t, int64_t *strides);
/* Writes e.g. "f32[1, 3, 224, 224]" (with ":scale:offset" for quantized); returns buf. */
char *glow_type_str(const glow_type *t, char *buf, size_t size);
/* NumPy broadcast of two shapes; false when incompatible. */
bool glow_broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b,
                           int *rout, int64_t *out);

/* --- tensor.c --- */

/* A typed buffer. Owned storage is malloc'd and released by glow_tensor_free; borrowed
 * storage (owned == false) belongs to someone else (an arena, a caller's buffer). */
typedef struct glow_tensor {
    glow_type type;
    void *data;
    bool owned;
} glow_tensor;

/* Allocates zeroed owned storage; fails cleanly (GLOW_ERR_TOO_LARGE) when the size
 * overflows or memory cannot be had. */
glow_status glow_tensor_alloc(glow_tensor *t, const glow_type *ty, glow_diag *d);
glow_tensor glow_tensor_borrow(const glow_type *ty, void *data);
void glow_tensor_free(glow_tensor *t);
size_t glow_tensor_bytes(const glow_tensor *t);
bool glow_tensor_equal(const glow_tensor *a, const glow_tensor *b); /* bitwise; strings by bytes */
/* Prints up to `limit` elements, e.g. "[1, 2, 3, ...]". */
void glow_tensor_print(FILE *f, const glow_tensor *t, size_t limit);

/* --- string.c: string elements (GLOW_STRING; docs/onnx-import.md, "String tensors") ---
 * An element is a handle: a pointer to NUL-terminated UTF-8 bytes, NULL reading as "" (so
 * zeroed memory holds empty strings). Whoever made a handle owns its bytes: a module's
 * constants keep theirs in the module arena, an owned tensor from glow_tensor_alloc_strings
 * in its own block, a run's results in the run's string store (runtime/program.c). Tensors
 * copy handles, never bytes. */
typedef const char *glow_str;
static inline const char *glow_str_at(const void *base, size_t i)
{
    const char *s = ((const glow_str *)base)[i];
    return s ? s : "";
}
/* Owned storage for a string tensor of type ty holding copies of strs[0..numel) (NULL
 * entries are ""): the handles and the bytes in one block, so glow_tensor_free frees both. */
glow_status glow_tensor_alloc_strings(glow_tensor *t, const glow_type *ty,
                                      const char *const *strs, glow_diag *d);
/* A string read as a number as ONNX's Cast does: decimal or scientific notation, "inf",
 * "INF", "-inf", "NaN" (any case); NaN when it is not a number. */
double glow_str_to_f64(const char *s);

/* --- graph.c --- */

typedef enum {
#define NODE(id, name, min_in, max_in, max_out, flags, attrs) NK_##id,
#include "nodes.def"
#undef NODE
    NK_COUNT
} glow_node_kind;

enum {
    NF_NONE = 0,
    NF_STORAGE = 1 << 0,      /* Constant or Placeholder, owned by the module */
    NF_SIDE_EFFECT = 1 << 1,  /* never removed or merged (Save) */
    NF_ELEMWISE = 1 << 2,     /* data-parallel over identically shaped operands */
    NF_COMMUTATIVE = 1 << 3,
    NF_CMP = 1 << 4,          /* result is bool */
    NF_LOGICAL = 1 << 5,      /* operands and result are bool */
    NF_REDUCE = 1 << 6,       /* attributes axes + keepdims */
};

typedef enum {
#define ATTR(id, name, kind) GA_##id,
#include "attrs.def"
#undef ATTR
    GA_COUNT
} glow_attr_id;

typedef enum { AK_INT, AK_FLOAT, AK_INTS, AK_FLOATS, AK_STR } glow_attr_kind;

typedef struct glow_attr {
    glow_attr_id id;
    uint32_t n;               /* number of elements for AK_INTS / AK_FLOATS */
    union {
        int64_t i;
        double f;
        const int64_t *ints;
        const float *floats;
        const char *s;
    } v;
} glow_attr;

typedef struct glow_node glow_node;
typedef struct glow_function glow_function;
typedef struct glow_module glow_module;

/* One result of a node: Glow's NodeValue. */
typedef struct glow_value {
    glow_node *node;
    uint32_t res;
} glow_value;

struct glow_node {
    glow_node_kind kind;
    uint32_t id;              /* unique in the module; printing order for storage */
    const char *name;         /* from the model where there is one; never NULL */
    glow_function *fn;        /* NULL for storage nodes */
    glow_value *ins;
    uint32_t nin;
    glow_type *outs;          /* result types */
    uint32_t nout;
    glow_attr *attrs;
    uint32_t nattr;
    glow_tensor payload;      /* NK_CONSTANT: the value (storage in the module arena) */
    bool is_input;            /* NK_PLACEHOLDER: fed by the caller (else an output) */
    glow_node *prev, *next;   /* function order (topological) or module storage list */
    uint32_t nusers;          /* filled by glow_function_count_users */
    void *aux;                /* scratch for passes; not preserved */
    /* An output NK_PLACEHOLDER of a value with a data-dependent shape
     * (docs/dynamic-shapes.md): `count` is the hidden output placeholder (i64 scalar) that
     * receives the run-time extent of axis `count_axis`; the placeholder's type is the bound.
     * `hidden` marks such a count placeholder: it is not one of the program's outputs. */
    glow_node *count;
    int count_axis;
    bool hidden;
};

typedef struct glow_node_list {
    glow_node *first, *last;
    uint32_t count;
} glow_node_list;

struct glow_function {
    glow_module *module;
    const char *name;
    glow_node_list nodes;     /* topological order */
    glow_function *next;
};

struct glow_module {
    glow_arena arena;
    glow_node_list constants;
    glow_node_list placeholders; /* inputs first in model order, then outputs */
    glow_function *functions;
    uint32_t next_id;
};

const char *glow_node_kind_name(glow_node_kind k);
unsigned glow_node_kind_flags(glow_node_kind k);
int glow_node_kind_min_in(glow_node_kind k);
int glow_node_kind_max_in(glow_node_kind k);
int glow_node_kind_max_out(glow_node_kind k);
const char *glow_node_kind_required_attrs(glow_node_kind k); /* space-separated names */
const char *glow_attr_name(glow_attr_id a);
glow_attr_kind glow_attr_kind_of(glow_attr_id a);
bool glow_attr_from_name(const char *name, glow_attr_id *out);

glow_module *glow_module_create(void);
void glow_module_destroy(glow_module *m);
glow_function *glow_function_create(glow_module *m, const char *name);
glow_function *glow_module_function(glow_module *m, const char *name); /* NULL if absent */

/* Storage. The constant's payload is copied into the module arena (NULL data gives zeros);
 * returns NULL only when memory for a model-declared size cannot be had. */
glow_node *glow_constant_create(glow_module *m, const char *name, const glow_type *t,
                                const void *data);
/* A constant whose payload borrows `data` from the file mapping `map` (not copied): the
 * module keeps a reference to the mapping while the constant's payload lives. The bytes are
 * read-only: passes that change a constant's value make a new one (folding, repacking). Not
 * for strings. NULL when out of memory. */
glow_node *glow_constant_borrow(glow_module *m, const char *name, const glow_type *t,
                                glow_mapping *map, const void *data);
glow_node *glow_placeholder_create(glow_module *m, const char *name, const glow_type *t,
                                   bool is_input);
glow_node *glow_module_find_placeholder(glow_module *m, const char *name);

/* Creates a node with the given operands and result types (attributes added after with
 * glow_node_set_*). Most code uses glow_build (infer.c), which also infers the types. */
glow_node *glow_node_create(glow_function *f, glow_node_kind kind, const char *name,
                            const glow_value *ins, int nin, const glow_type *outs, int nout);
/* Adds `SAVE(v, placeholder)` at the end of f. */
glow_node *glow_save_create(glow_function *f, const char *name, glow_value v, glow_node *ph);
void glow_node_erase(glow_node *n);                 /* unlinks from the function */
/* Moves function node n to just before `pos` (NULL: to the end) in n's function; passes that
 * build replacement nodes (appended by glow_build) use it to put them where they belong. */
void glow_node_move_before(glow_node *n, glow_node *pos);
/* Replaces every use of `from` in f (and in SAVE operands) by `to`. */
void glow_replace_all_uses(glow_function *f, glow_value from, glow_value to);
void glow_function_count_users(glow_function *f);  /* sets nusers on every node */

static inline glow_value glow_val(glow_node *n, uint32_t res)
{
    glow_value v = { n, res };
    return v;
}
static inline const glow_type *glow_value_type(glow_value v) { return &v.node->outs[v.res]; }
static inline bool glow_value_is_constant(glow_value v) { return v.node->kind == NK_CONSTANT; }

#define GLOW_FOR_EACH_NODE(f, n) \
    for (glow_node *n = (f)->nodes.first, *n##_next_ = n ? n->next : NULL; n; \
         n = n##_next_, n##_next_ = n ? n->next : NULL)

/* --- subgraph.c: bodies of lazy control-flow nodes (IF, LOOP) --- */

/* Runs a body: *m is its module until the runner compiles it (then the runner owns it and
 * keeps its compiled form in *prog). ins are the body's inputs in order; outs are buffers
 * (type and data given) the body's outputs are copied into. */
typedef glow_status (*glow_subgraph_runner)(glow_module **m, void **prog, const glow_tensor *ins,
                                            int nin, glow_tensor *outs, int nout, glow_diag *d);
/* Installed by the runtime; `release` frees a compiled form (and the module it owns). */
void glow_subgraph_set_runner(glow_subgraph_runner run, void (*release)(void *prog));
/* Registers body module m (owned from now on, released with `owner`); returns its id >= 1. */
int64_t glow_subgraph_add(const glow_module *owner, glow_module *m);
/* The body's module while it is not compiled yet (NULL after, or for an unknown id). */
glow_module *glow_subgraph_module(int64_t id);
glow_status glow_subgraph_run(int64_t id, const glow_tensor *ins, int nin, glow_tensor *outs,
                              int nout, glow_diag *d);
void glow_subgraph_release(const glow_module *owner);

/* --- attr.c --- */

void glow_node_set_int(glow_node *n, glow_attr_id a, int64_t v);
void glow_node_set_float(glow_node *n, glow_attr_id a, double v);
void glow_node_set_ints(glow_node *n, glow_attr_id a, const int64_t *v, int count);
void glow_node_set_floats(glow_node *n, glow_attr_id a, const float *v, int count);
void glow_node_set_str(glow_node *n, glow_attr_id a, const char *s);
const glow_attr *glow_node_attr(const glow_node *n, glow_attr_id a); /* NULL if absent */
/* Getters with defaults, for code that knows the attribute's kind. */
int64_t glow_node_int(const glow_node *n, glow_attr_id a, int64_t dflt);
double glow_node_float(const glow_node *n, glow_attr_id a, double dflt);
const int64_t *glow_node_ints(const glow_node *n, glow_attr_id a, int *count);
const char *glow_node_str(const glow_node *n, glow_attr_id a, const char *dflt);
bool glow_attrs_equal(const glow_node *a, const glow_node *b);

/* --- infer.c --- */

/* An attribute list for glow_build, e.g.
 *   glow_build(f, NK_CONV, "c1", ins, 3, (glow_attr_init[]){
 *       GLOW_AI(GROUP, 1), GLOW_AINTS(STRIDES, s, 2), ...}, n, NULL, d) */
typedef glow_attr glow_attr_init;
#define GLOW_AI(aid_, val) ((glow_attr){ .id = GA_##aid_, .v.i = (val) })
#define GLOW_AF(aid_, val) ((glow_attr){ .id = GA_##aid_, .v.f = (val) })
#define GLOW_AINTS(aid_, p, cnt) ((glow_attr){ .id = GA_##aid_, .n = (uint32_t)(cnt), .v.ints = (p) })
#define GLOW_AFLOATS(aid_, p, cnt) ((glow_attr){ .id = GA_##aid_, .n = (uint32_t)(cnt), .v.floats = (p) })
#define GLOW_ASTR(aid_, str) ((glow_attr){ .id = GA_##aid_, .v.s = (str) })

/* Computes the result types of `n` from its operands and attributes. For kinds whose result
 * shape is not derivable (RESHAPE, BROADCAST, CAST, RESIZE, CONV_TRANSPOSE), checks the
 * declared result types instead. Fails naming the node, its kind and the operand at fault. */
glow_status glow_infer_types(glow_node *n, glow_diag *d);

/* Creates a node, copies the attributes (and their arrays) into the arena, and infers its result types (`declared` supplies result
 * types for the kinds listed above and may be NULL otherwise). On failure the node is erased
 * and NULL returned with the reason in d.
 * Result count: ndeclared when > 0 (declared may be NULL: then it only asks for fewer results,
 * e.g. MAX_POOL without its index result), else the kind's max_out. For inferred kinds the
 * declared types only contribute quantization parameters (scale, offset) of quantized results;
 * CONV_TRANSPOSE and RESIZE without declared types get the attribute-derived shape. */
glow_node *glow_build(glow_function *f, glow_node_kind kind, const char *name,
                      const glow_value *ins, int nin, const glow_attr *attrs, int nattr,
                      const glow_type *declared, int ndeclared, glow_diag *d);

/* --- verify.c --- */

/* Checks operand counts, required attributes, operand/result types (by re-running type
 * inference), topological order and that every node belongs to its function. */
glow_status glow_function_verify(const glow_function *f, glow_diag *d);
glow_status glow_module_verify(const glow_module *m, glow_diag *d);

/* --- print.c --- */

/* Text form: one line per node, e.g.
 *   %conv1 = Conv(%data, %w, %b) {kernel=[3, 3], strides=[1, 1], ...} : f32[1, 64, 112, 112]
 * Storage is listed first. The output is deterministic (golden tests compare it). */
void glow_module_print(FILE *out, const glow_module *m);
void glow_function_print(FILE *out, const glow_function *f);
/* One attribute as printed in node lines, e.g. "strides=[2, 2]" (the IR printer shares it). */
void glow_attr_print(FILE *out, const glow_attr *a);
/* Graphviz DOT: one box per node with kind, name and result types. */
void glow_function_dump_dot(FILE *out, const glow_function *f);

#endif
