// ir.h - The low-level IR: Glow's address-only instruction list over weights and activations.
//
// An IR function has a declare section (weights: one per Constant and Placeholder the graph
// uses) and a program (instructions in execution order). Instructions read and write
// buffers through typed operands with roles @in / @out / @inout; activations are created by
// allocactivation and end at deallocactivation. A view gives a second type to (a part of)
// another buffer, so Reshape and friends cost no copy. The memory planner assigns every
// activation an offset in one region; weights live in the constant region (Constants) or
// the mutable region (Placeholders).
#ifndef GLOW_IR_H
#define GLOW_IR_H

#include "graph/graph.h"

enum { IF_NONE = 0, IF_DATA_PARALLEL = 1 << 0, IF_INPLACE_OK = 1 << 1 };

typedef enum {
#define NODE(id, name, min_in, max_in, max_out, flags, attrs) IK_##id,
#include "graph/nodes.def"
#undef NODE
#define INSTR(id, name, roles, flags) IK_##id,
#include "ir/instrs.def"
#undef INSTR
    IK_COUNT
} ir_instr_kind;

typedef enum { IV_WEIGHT, IV_ALLOC, IV_VIEW } ir_value_kind;

typedef struct ir_value ir_value;
struct ir_value {
    ir_value_kind kind;
    uint32_t id;
    const char *name;
    glow_type type;
    glow_node *storage;       /* IV_WEIGHT: the Constant or Placeholder */
    bool is_mutable;          /* IV_WEIGHT: placeholders (mutable region) */
    bool readonly;            /* IV_WEIGHT: nothing writes it (IR optimizer's const_weights) */
    ir_value *base;           /* IV_VIEW: the viewed weight or alloc (never another view) */
    uint64_t view_offset;     /* IV_VIEW: byte offset into base */
    uint64_t addr;            /* byte offset in the value's region (planner; views: base's) */
    bool unused;              /* IV_WEIGHT constants: no instruction reads them (a backend's
                               * repacked copy replaced them), so the planner gives them no
                               * memory (set by the planner) */
    ir_value *next;           /* in the function's value list */
};

typedef struct ir_operand {
    ir_value *v;
    char role;                /* 'o', 'i' or 'x' */
} ir_operand;

typedef struct ir_instr ir_instr;
struct ir_instr {
    ir_instr_kind kind;
    uint32_t id;
    const char *name;
    ir_operand *ops;
    uint32_t nops;
    uint32_t nout;            /* for node-mirroring kinds: results come first */
    glow_attr *attrs;
    uint32_t nattr;
    ir_instr *prev, *next;
};

typedef struct ir_function {
    glow_module *module;      /* owns the storage nodes; IR objects live in `arena` */
    glow_arena arena;
    const char *name;
    ir_value *values;         /* weights, allocs and views in creation order */
    ir_value *values_last;
    ir_instr *first, *last;
    uint32_t next_id;
    /* Memory plan (ir_plan_memory_best_fit in src/iropt). */
    uint64_t constant_bytes, mutable_bytes, activation_bytes;
    uint64_t alignment;
} ir_function;

/* --- ir.c --- */

const char *ir_instr_kind_name(ir_instr_kind k);
/* Operand roles of a kind ("ooi", ...); node-mirroring kinds give results then operands. */
const char *ir_instr_roles(ir_instr_kind k);
unsigned ir_instr_kind_flags(ir_instr_kind k);
bool ir_kind_is_node(ir_instr_kind k);

ir_function *ir_function_create(glow_module *m, const char *name);
void ir_function_destroy(ir_function *f);
ir_value *ir_weight_create(ir_function *f, glow_node *storage);
ir_value *ir_alloc_create(ir_function *f, const char *name, const glow_type *t);
/* A view of `base` (weights/allocs; a view of a view is re-based) at a byte offset. */
ir_value *ir_view_create(ir_function *f, const char *name, ir_value *base, const glow_type *t,
                         uint64_t byte_offset);
/* Appends an instruction; operands are copied, attributes are copied into the arena. */
ir_instr *ir_instr_append(ir_function *f, ir_instr_kind kind, const char *name,
                          const ir_operand *ops, int nops, int nout, const glow_attr *attrs,
                          int nattr);
void ir_instr_insert_before(ir_function *f, ir_instr *pos, ir_instr *in);
void ir_instr_unlink(ir_function *f, ir_instr *in);
/* The underlying buffer of a value (itself, or a view's base). */
static inline ir_value *ir_root(ir_value *v) { return v->kind == IV_VIEW ? v->base : v; }

/* --- verify.c --- */

/* Operand roles match the kind; every activation is allocated before use and deallocated
 * once after its last use; @in operands were written before; types of node-mirroring
 * instructions agree with graph type inference. */
glow_status ir_function_verify(const ir_function *f, glow_diag *d);

/* --- print.c --- */

void ir_function_print(FILE *out, const ir_function *f);

/* --- schedule.c --- */

/* Orders f's nodes to keep peak live activation memory low (Glow's child-memory-size
 * heuristic: operands whose subtrees need the most memory are scheduled first), with ties
 * broken by original order, so the result is deterministic. Rewrites f's node list. */
void glow_schedule(glow_function *f);

/* --- irgen.c --- */

/* Generates the IR of a scheduled, lowered graph function. */
glow_status ir_generate(glow_function *g, ir_function **out, glow_diag *d);

#endif
