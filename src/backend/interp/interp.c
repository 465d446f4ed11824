// interp.c - The reference interpreter backend: walks the IR program and runs each instruction
// with the reference evaluator's routines, on buffers inside the three memory regions.
//
// The interpreter is the correctness oracle the other backends are checked against, so it
// adds no kernels of its own: a node-mirroring instruction becomes a temporary graph node
// (kind, name, attributes, result types) and its operands become tensors borrowing region
// memory, and glow_eval_node_into computes the results in place. Nothing is prepared at
// compile time; allocactivation/deallocactivation only mark lifetimes the planner already
// turned into addresses.
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "eval/eval.h"

/* Nodes the lowering stage turns into primitives for this backend. */
static bool interp_keeps_node(const glow_node *n)
{
    switch (n->kind) {
    case NK_GEMM: case NK_FULLY_CONNECTED:
    case NK_BATCH_NORM: case NK_INSTANCE_NORM: case NK_LAYER_NORM: case NK_GROUP_NORM:
    case NK_RMS_NORM: case NK_LP_NORM:
    case NK_SOFTMAX: case NK_LOG_SOFTMAX:
    case NK_CLIP: case NK_LEAKY_RELU: case NK_PRELU: case NK_HARD_SIGMOID: case NK_HARD_SWISH:
        return false;
    case NK_PAD:
        /* Only constant padding has a lowering (Splat + InsertTensor). */
        return strcmp(glow_node_str(n, GA_MODE, "constant"), "constant") != 0;
    default:
        return true;
    }
}

/* Operand and result types of a node-mirroring instruction (results come first). */
static void instr_types(const ir_instr *in, const glow_type **ins, glow_type *outs)
{
    for (uint32_t i = 0; i < in->nout; i++)
        outs[i] = in->ops[i].v->type;
    for (uint32_t i = in->nout; i < in->nops; i++)
        ins[i - in->nout] = &in->ops[i].v->type;
}

/* Node-mirroring instructions have at most 64 operands and 3 results (Concat, LayerNorm). */
#define MAX_OPS 64
#define MAX_RES 3

static bool interp_supports(const ir_instr *in, char *why, size_t whylen)
{
    if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC || in->kind == IK_COPY)
        return true;
    const char *kind = ir_instr_kind_name(in->kind);
    if (!ir_kind_is_node(in->kind) || in->nout > MAX_RES || in->nops - in->nout > MAX_OPS) {
        snprintf(why, whylen, "%s", kind);
        return false;
    }
    const glow_type *ins[MAX_OPS];
    glow_type outs[MAX_RES];
    instr_types(in, ins, outs);
    int nin = (int)(in->nops - in->nout);
    if (glow_eval_supported_types((glow_node_kind)in->kind, ins, nin, outs, (int)in->nout))
        return true;
    /* Name the kind and the element kind the evaluator lacks, e.g. "Conv on f16". */
    glow_dtype t = nin > 0 ? ins[0]->dtype : outs[0].dtype;
    snprintf(why, whylen, "%s on %s", kind, glow_dtype_name(t));
    return false;
}

typedef struct interp_state {
    ir_function *f;
} interp_state;

static glow_status interp_compile(ir_function *f, int threads, void **state, glow_diag *d)
{
    interp_state *s = glow_xcalloc(1, sizeof(*s));
    s->f = f;
    *state = s;
    return GLOW_OK;
}

typedef struct regions {
    uint8_t *constant, *mutable_, *act;
} regions;

/* Where a value's bytes are: its root's region plus the value's address (a view's address
 * already includes its offset into the base). */
static void *value_ptr(const regions *r, const ir_value *v)
{
    const ir_value *root = v->kind == IV_VIEW ? v->base : v;
    uint8_t *base = root->kind == IV_ALLOC ? r->act
                    : root->is_mutable     ? r->mutable_
                                           : r->constant;
    return base + v->addr;
}

static glow_status run_node(const ir_instr *in, const regions *r, glow_diag *d)
{
    glow_tensor ins[MAX_OPS], outs[MAX_RES];
    glow_type out_types[MAX_RES];
    uint32_t nin = in->nops - in->nout;
    if (in->nout > MAX_RES || nin > MAX_OPS)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "interpreter: %s '%s' has %u results and %u "
                         "operands", ir_instr_kind_name(in->kind), in->name, in->nout, nin);
    for (uint32_t i = 0; i < in->nout; i++) {
        out_types[i] = in->ops[i].v->type;
        outs[i] = glow_tensor_borrow(&out_types[i], value_ptr(r, in->ops[i].v));
    }
    for (uint32_t i = 0; i < nin; i++) {
        const ir_value *v = in->ops[in->nout + i].v;
        ins[i] = glow_tensor_borrow(&v->type, value_ptr(r, v));
    }
    /* A stand-in graph node: the evaluator reads kind, name, attributes and result types;
     * operand types come from the tensors. */
    glow_node node = {
        .kind = (glow_node_kind)in->kind,
        .name = in->name,
        .outs = out_types,
        .nout = in->nout,
        .nin = nin,
        .attrs = in->attrs,
        .nattr = in->nattr,
    };
    return glow_eval_node_into(&node, ins, outs, d);
}

glow_status glow_interp_run_node(const ir_instr *in, uint8_t *constant, uint8_t *mutable_,
                                 uint8_t *act, glow_diag *d)
{
    regions r = { constant, mutable_, act };
    return run_node(in, &r, d);
}

static glow_status interp_execute(void *state, uint8_t *constant, uint8_t *mutable_,
                                  uint8_t *act, glow_diag *d)
{
    interp_state *s = state;
    regions r = { constant, mutable_, act };
    for (const ir_instr *in = s->f->first; in; in = in->next) {
        switch ((int)in->kind) {
        case IK_ALLOC:
        case IK_DEALLOC:
            break;
        case IK_COPY: {
            size_t dst = glow_type_bytes(&in->ops[0].v->type);
            size_t src = glow_type_bytes(&in->ops[1].v->type);
            if (dst != src)
                return glow_fail(d, GLOW_ERR_INTERNAL, "interpreter: copy '%s' of %zu bytes "
                                 "into %zu bytes", in->name, src, dst);
            memmove(value_ptr(&r, in->ops[0].v), value_ptr(&r, in->ops[1].v), dst);
            break;
        }
        default:
            if (!ir_kind_is_node(in->kind))
                return glow_fail(d, GLOW_ERR_UNSUPPORTED, "interpreter: no implementation of "
                                 "'%s'", ir_instr_kind_name(in->kind));
            GLOW_TRY(run_node(in, &r, d));
            break;
        }
    }
    return GLOW_OK;
}

static void interp_destroy(void *state) { free(state); }

const glow_backend glow_interpreter_backend = {
    .name = "interpreter",
    .keeps_node = interp_keeps_node,
    .supports = interp_supports,
    .compile = interp_compile,
    .execute = interp_execute,
    .destroy = interp_destroy,
};
