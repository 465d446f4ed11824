// ir.c - Instruction kind tables and building the low-level IR (values and instructions).
//
// IR objects live in the function's own arena, so an IR function can be thrown away and
// regenerated without touching the graph module that owns the storage nodes.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct {
    const char *name;
    const char *roles;
    unsigned flags;
} instr_info;

static const instr_info ir_only_table[] = {
#define INSTR(id, name, roles, flags) { name, roles, flags },
#include "ir/instrs.def"
#undef INSTR
};

/* Roles of node-mirroring kinds: max_out 'o's then max_in 'i's, built once for all kinds
 * (pthread_once: sessions compile programs on several threads at once). Kinds with many
 * operands or results (Concat, If, Loop) end in "i*": the verifier takes the split between
 * results and operands from the instruction's nout, so the letters only bound the count. */
static char node_roles[NK_COUNT][80];
static pthread_once_t node_roles_once = PTHREAD_ONCE_INIT;

static void build_node_roles(void)
{
    for (int k = 0; k < NK_COUNT; k++) {
        char *r = node_roles[k];
        int n = 0, nout = glow_node_kind_max_out((glow_node_kind)k);
        for (int i = 0; i < nout && i < 8; i++)
            r[n++] = 'o';
        int nin = glow_node_kind_max_in((glow_node_kind)k);
        if (nin > 8 || nout > 8) { /* variadic: "i*" */
            r[n++] = 'i';
            r[n++] = '*';
        } else {
            for (int i = 0; i < nin && n < 78; i++)
                r[n++] = 'i';
        }
        r[n] = 0;
    }
}

static const char *mirror_roles(glow_node_kind k)
{
    pthread_once(&node_roles_once, build_node_roles);
    return node_roles[k];
}

bool ir_kind_is_node(ir_instr_kind k) { return (unsigned)k < NK_COUNT; }

const char *ir_instr_kind_name(ir_instr_kind k)
{
    if (ir_kind_is_node(k))
        return glow_node_kind_name((glow_node_kind)k);
    if ((unsigned)k < IK_COUNT)
        return ir_only_table[k - NK_COUNT].name;
    return "?";
}

const char *ir_instr_roles(ir_instr_kind k)
{
    if (ir_kind_is_node(k))
        return mirror_roles((glow_node_kind)k);
    return ir_only_table[k - NK_COUNT].roles;
}

unsigned ir_instr_kind_flags(ir_instr_kind k)
{
    if (ir_kind_is_node(k)) {
        unsigned nf = glow_node_kind_flags((glow_node_kind)k);
        /* Elementwise kernels read element i before writing element i. */
        return (nf & NF_ELEMWISE) ? IF_DATA_PARALLEL | IF_INPLACE_OK : IF_NONE;
    }
    return ir_only_table[k - NK_COUNT].flags;
}

ir_function *ir_function_create(glow_module *m, const char *name)
{
    ir_function *f = glow_xcalloc(1, sizeof(*f));
    f->module = m;
    f->name = glow_arena_strdup(&f->arena, name ? name : "");
    f->alignment = 64;
    return f;
}

void ir_function_destroy(ir_function *f)
{
    if (!f)
        return;
    glow_arena_release(&f->arena);
    free(f);
}

static ir_value *new_value(ir_function *f, ir_value_kind kind, const char *name,
                           const glow_type *t)
{
    ir_value *v = GLOW_NEW(&f->arena, ir_value);
    v->kind = kind;
    v->id = f->next_id++;
    v->name = glow_arena_strdup(&f->arena, name ? name : "");
    v->type = *t;
    if (f->values_last)
        f->values_last->next = v;
    else
        f->values = v;
    f->values_last = v;
    return v;
}

ir_value *ir_weight_create(ir_function *f, glow_node *storage)
{
    ir_value *v = new_value(f, IV_WEIGHT, storage->name, &storage->outs[0]);
    v->storage = storage;
    v->is_mutable = storage->kind == NK_PLACEHOLDER;
    return v;
}

ir_value *ir_alloc_create(ir_function *f, const char *name, const glow_type *t)
{
    return new_value(f, IV_ALLOC, name, t);
}

ir_value *ir_view_create(ir_function *f, const char *name, ir_value *base, const glow_type *t,
                         uint64_t byte_offset)
{
    if (base->kind == IV_VIEW) {
        byte_offset += base->view_offset;
        base = base->base;
    }
    GLOW_ASSERT(byte_offset + glow_type_bytes(t) <= glow_type_bytes(&base->type));
    ir_value *v = new_value(f, IV_VIEW, name, t);
    v->base = base;
    v->view_offset = byte_offset;
    return v;
}

ir_instr *ir_instr_append(ir_function *f, ir_instr_kind kind, const char *name,
                          const ir_operand *ops, int nops, int nout, const glow_attr *attrs,
                          int nattr)
{
    ir_instr *in = GLOW_NEW(&f->arena, ir_instr);
    in->kind = kind;
    in->id = f->next_id++;
    in->name = glow_arena_strdup(&f->arena, name ? name : "");
    in->ops = GLOW_NEW_ARRAY(&f->arena, ir_operand, nops > 0 ? nops : 1);
    memcpy(in->ops, ops, sizeof(*ops) * (size_t)nops);
    in->nops = (uint32_t)nops;
    in->nout = (uint32_t)nout;
    in->attrs = GLOW_NEW_ARRAY(&f->arena, glow_attr, nattr > 0 ? nattr : 1);
    for (int i = 0; i < nattr; i++) {
        glow_attr a = attrs[i];
        switch (glow_attr_kind_of(a.id)) {
        case AK_INTS:
            a.v.ints = glow_arena_memdup(&f->arena, a.v.ints, sizeof(int64_t) * a.n);
            break;
        case AK_FLOATS:
            a.v.floats = glow_arena_memdup(&f->arena, a.v.floats, sizeof(float) * a.n);
            break;
        case AK_STR:
            a.v.s = glow_arena_strdup(&f->arena, a.v.s ? a.v.s : "");
            break;
        default:
            break;
        }
        in->attrs[i] = a;
    }
    in->nattr = (uint32_t)nattr;
    in->prev = f->last;
    if (f->last)
        f->last->next = in;
    else
        f->first = in;
    f->last = in;
    return in;
}

void ir_instr_unlink(ir_function *f, ir_instr *in)
{
    if (in->prev)
        in->prev->next = in->next;
    else
        f->first = in->next;
    if (in->next)
        in->next->prev = in->prev;
    else
        f->last = in->prev;
    in->prev = in->next = NULL;
}

void ir_instr_insert_before(ir_function *f, ir_instr *pos, ir_instr *in)
{
    if (!pos) { /* append */
        in->prev = f->last;
        in->next = NULL;
        if (f->last)
            f->last->next = in;
        else
            f->first = in;
        f->last = in;
        return;
    }
    in->next = pos;
    in->prev = pos->prev;
    if (pos->prev)
        pos->prev->next = in;
    else
        f->first = in;
    pos->prev = in;
}
