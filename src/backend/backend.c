// backend.c - The table of backends the compile pipeline can target, and the glue every backend
// shares: value pointers into the three regions, the evaluator's support check, and running an
// instruction through the evaluator (the interpreter's step, the cpu backend's fallback).
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "eval/eval.h"

static const glow_backend *const backends[] = {
    &glow_interpreter_backend,
    &glow_cpu_backend,
};

const glow_backend *glow_backend_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

const char *glow_backend_names(void)
{
    /* One fixed string: the table is small and known at compile time. */
    return "interpreter, cpu";
}

glow_region glow_value_region(const ir_value *v)
{
    const ir_value *root = v->kind == IV_VIEW ? v->base : v;
    return root->kind == IV_ALLOC ? GLOW_REGION_ACT
           : root->is_mutable     ? GLOW_REGION_MUTABLE
                                  : GLOW_REGION_CONSTANT;
}

void *glow_value_ptr(const glow_regions *r, const ir_value *v)
{
    uint8_t *base[] = { [GLOW_REGION_CONSTANT] = r->constant,
                        [GLOW_REGION_MUTABLE] = r->mutable_, [GLOW_REGION_ACT] = r->act };
    return base[glow_value_region(v)] + v->addr;
}

/* Node-mirroring instructions have a few operands and results, Concat up to 64, If and Loop
 * any number: arrays of these sizes live on the stack, larger ones on the heap. */
#define SMALL_OPS 64
#define SMALL_RES 4

bool glow_backend_eval_supports(const ir_instr *in, char *why, size_t whylen)
{
    if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC || in->kind == IK_COPY)
        return true;
    const char *kind = ir_instr_kind_name(in->kind);
    if (!ir_kind_is_node(in->kind)) {
        snprintf(why, whylen, "%s", kind);
        return false;
    }
    uint32_t nin = in->nops - in->nout, nres = in->nout;
    const glow_type *ins_small[SMALL_OPS];
    glow_type outs_small[SMALL_RES];
    const glow_type **ins = nin <= SMALL_OPS ? ins_small : glow_xmalloc(sizeof *ins * nin);
    glow_type *outs = nres <= SMALL_RES ? outs_small : glow_xmalloc(sizeof *outs * nres);
    for (uint32_t i = 0; i < nres; i++)
        outs[i] = in->ops[i].v->type;
    for (uint32_t i = 0; i < nin; i++)
        ins[i] = &in->ops[nres + i].v->type;
    bool ok = glow_eval_supported_types((glow_node_kind)in->kind, ins, (int)nin, outs,
                                        (int)nres);
    /* Name the kind and the element kind the evaluator lacks, e.g. "Conv on f16". */
    if (!ok)
        snprintf(why, whylen, "%s on %s", kind,
                 glow_dtype_name(nin > 0 ? ins[0]->dtype : outs[0].dtype));
    if (ins != ins_small)
        free(ins);
    if (outs != outs_small)
        free(outs);
    return ok;
}

/* A node-mirroring instruction as a stand-in graph node over tensors borrowing region
 * memory: the evaluator reads kind, name, attributes and result types; operand types come
 * from the tensors. */
static glow_status run_node(const ir_instr *in, const glow_regions *r, glow_diag *d)
{
    uint32_t nin = in->nops - in->nout, nres = in->nout;
    glow_tensor ins_small[SMALL_OPS], outs_small[SMALL_RES];
    glow_type types_small[SMALL_RES];
    glow_tensor *ins = nin <= SMALL_OPS ? ins_small : glow_xmalloc(sizeof *ins * nin);
    glow_tensor *outs = nres <= SMALL_RES ? outs_small : glow_xmalloc(sizeof *outs * nres);
    glow_type *out_types = nres <= SMALL_RES ? types_small
                                             : glow_xmalloc(sizeof *out_types * nres);
    for (uint32_t i = 0; i < nres; i++) {
        out_types[i] = in->ops[i].v->type;
        outs[i] = glow_tensor_borrow(&out_types[i], glow_value_ptr(r, in->ops[i].v));
    }
    for (uint32_t i = 0; i < nin; i++) {
        const ir_value *v = in->ops[nres + i].v;
        ins[i] = glow_tensor_borrow(&v->type, glow_value_ptr(r, v));
    }
    glow_node node = {
        .kind = (glow_node_kind)in->kind,
        .name = in->name,
        .outs = out_types,
        .nout = nres,
        .nin = nin,
        .attrs = in->attrs,
        .nattr = in->nattr,
    };
    glow_status s = glow_eval_node_into(&node, ins, outs, d);
    if (ins != ins_small)
        free(ins);
    if (outs != outs_small) {
        free(outs);
        free(out_types);
    }
    return s;
}

glow_status glow_backend_eval_run(const ir_instr *in, const glow_regions *r, const char *who,
                                glow_diag *d)
{
    switch ((int)in->kind) {
    case IK_ALLOC:
    case IK_DEALLOC:
        return GLOW_OK;
    case IK_COPY: {
        size_t dst = glow_type_bytes(&in->ops[0].v->type);
        size_t src = glow_type_bytes(&in->ops[1].v->type);
        if (dst != src)
            return glow_fail(d, GLOW_ERR_INTERNAL, "%s: copy '%s' of %zu bytes into %zu bytes",
                             who, in->name, src, dst);
        memmove(glow_value_ptr(r, in->ops[0].v), glow_value_ptr(r, in->ops[1].v), dst);
        return GLOW_OK;
    }
    default:
        if (!ir_kind_is_node(in->kind))
            return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s: no implementation of %s '%s'", who,
                             ir_instr_kind_name(in->kind), in->name);
        return run_node(in, r, d);
    }
}
