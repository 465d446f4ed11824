// select_typed.c - Picks the typed elementwise kernels (kernels/typed, the "any" rows of
// kernels.def) for the elementwise instructions of every element kind: unary math and
// activations, binary arithmetic, comparisons, logic and bitwise ops, Cast, Where and Splat.
//
// The op codes and parameters come from the evaluator (glow_ev_unary_code,
// glow_ev_binary_code), and the kernels compute each element with the evaluator's own
// functions (kernels/typed_math.h), so a kernel gives the interpreter's bits. f32 ops the
// evaluator runs with its f32 fast path (eval_fast.c: f32 arithmetic, not f64) stay with the
// f32 kernels of select.c, which compute the same way; they are never taken here.
#include "backend/cpu/cpu_internal.h"
#include "eval/eval.h"
#include "gk_ops.h"

/* The kernels' code of a kind (gk_dtype), 0 for the quantized kinds they do not run. */
static int dt(const ir_value *v)
{
    glow_dtype t = v->type.dtype;
    return t <= GLOW_BOOL ? (int)t + 1 : 0;
}

/* One result, every operand of the result's shape and of a kind the kernels run (`lowbit`:
 * the low-bit kinds too), and no operand sharing bytes with the result unless it is the
 * result's very buffer with elements of the same size (each element is then read before it
 * is written, by the same thread). */
static bool fits_kinds(const ir_instr *in, uint32_t nops, bool lowbit)
{
    if (in->nout != 1 || in->nops != nops)
        return false;
    const ir_value *y = in->ops[0].v;
    if (!dt(y) && !(lowbit && glow_dtype_is_lowbit(y->type.dtype)))
        return false;
    for (uint32_t i = 1; i < nops; i++) {
        const ir_value *v = in->ops[i].v;
        bool kind_ok = dt(v) || (lowbit && glow_dtype_is_lowbit(v->type.dtype));
        if (!kind_ok || !glow_type_same_shape(&v->type, &y->type))
            return false;
        if (cpu_overlap(y, v) && (v->addr != y->addr ||
                                  glow_dtype_size(v->type.dtype) !=
                                      glow_dtype_size(y->type.dtype)))
            return false;
    }
    return true;
}

static bool fits(const ir_instr *in, uint32_t nops) { return fits_kinds(in, nops, false); }

/* The instruction as the stand-in node the evaluator reads kind and attributes from. */
static glow_node as_node(const ir_instr *in)
{
    return (glow_node){ .kind = (glow_node_kind)in->kind, .name = in->name, .attrs = in->attrs,
                        .nattr = in->nattr };
}

static bool all_f32(const ir_instr *in)
{
    for (uint32_t i = 0; i < in->nops; i++)
        if (in->ops[i].v->type.dtype != GLOW_F32)
            return false;
    return true;
}

static bool sel_unary(const ir_instr *in, cpu_op *op)
{
    glow_node n = as_node(in);
    double p, q;
    int code = glow_ev_unary_code(&n, &p, &q);
    if (!code || !fits(in, 2))
        return false;
    /* The evaluator's f32 fast path (glow_ev_fast) computes these in f32. */
    if (all_f32(in) && (code == GK_TU_RELU || code == GK_TU_NEG || code == GK_TU_ABS ||
                        code == GK_TU_SQRT || code == GK_TU_EXP || code == GK_TU_TANH ||
                        code == GK_TU_SIGMOID || code == GK_TU_LOG))
        return false;
    const ir_value *y = in->ops[0].v, *x = in->ops[1].v;
    CPU_OP(op, CPU_K_unary_any_scalar, cpu_num(code), cpu_num(dt(x)), cpu_num(dt(y)), cpu_real(p),
           cpu_real(q), cpu_num(glow_type_numel(&y->type)), cpu_ptr(x, 0), cpu_ptr(y, 0));
    return true;
}

static bool sel_binary(const ir_instr *in, cpu_op *op)
{
    glow_node n = as_node(in);
    int code = glow_ev_binary_code(&n);
    if (!code || !fits(in, 3))
        return false;
    if (all_f32(in) && (code == GK_TB_ADD || code == GK_TB_SUB || code == GK_TB_MUL ||
                        code == GK_TB_DIV || code == GK_TB_MAX || code == GK_TB_MIN ||
                        code == GK_TB_POW))
        return false;
    const ir_value *y = in->ops[0].v, *a = in->ops[1].v, *b = in->ops[2].v;
    CPU_OP(op, CPU_K_binary_any_scalar, cpu_num(code), cpu_num(dt(a)), cpu_num(dt(b)),
           cpu_num(dt(y)), cpu_num(glow_type_numel(&y->type)), cpu_ptr(a, 0), cpu_ptr(b, 0),
           cpu_ptr(y, 0));
    return true;
}

/* Cast is where the low-bit kinds enter and leave ordinary math, so it runs them all; their
 * Cast modes ride in the target code (kernels/gk_lowbit.h). */
static bool sel_cast(const ir_instr *in, cpu_op *op)
{
    if (!fits_kinds(in, 2, true))
        return false;
    const ir_value *y = in->ops[0].v, *x = in->ops[1].v;
    glow_node n = as_node(in);
    int ty = glow_dtype_kernel_code(y->type.dtype) | glow_ev_cast_mode(&n);
    CPU_OP(op, CPU_K_cast_any_scalar, cpu_num(glow_dtype_kernel_code(x->type.dtype)), cpu_num(ty),
           cpu_num(glow_type_numel(&y->type)), cpu_ptr(x, 0), cpu_ptr(y, 0));
    return true;
}

/* Where(c, a, b): c bool, a, b and the result of one kind. */
static bool sel_where(const ir_instr *in, cpu_op *op)
{
    if (!fits(in, 4))
        return false;
    const ir_value *y = in->ops[0].v, *c = in->ops[1].v, *a = in->ops[2].v, *b = in->ops[3].v;
    if (c->type.dtype != GLOW_BOOL || a->type.dtype != y->type.dtype ||
        b->type.dtype != y->type.dtype || cpu_overlap(y, c))
        return false;
    CPU_OP(op, CPU_K_where_any_scalar, cpu_num((int64_t)glow_dtype_size(y->type.dtype)),
           cpu_num(glow_type_numel(&y->type)), cpu_ptr(c, 0), cpu_ptr(a, 0), cpu_ptr(b, 0),
           cpu_ptr(y, 0));
    return true;
}

static bool sel_splat(const ir_instr *in, cpu_op *op)
{
    if (!fits(in, 1))
        return false;
    const ir_value *y = in->ops[0].v;
    glow_node n = as_node(in);
    CPU_OP(op, CPU_K_splat_any_scalar, cpu_num(dt(y)), cpu_real(glow_node_float(&n, GA_VALUE, 0.0)),
           cpu_num(glow_type_numel(&y->type)), cpu_ptr(y, 0));
    return true;
}

/* The evaluator runs the instruction with these types: the kernels compute what it
 * defines, nothing it refuses. */
static bool evaluated(const ir_instr *in)
{
    const glow_type *ins[4];
    uint32_t nin = in->nops - in->nout;
    if (in->nout != 1 || nin > 4 || !ir_kind_is_node(in->kind))
        return false;
    for (uint32_t i = 0; i < nin; i++)
        ins[i] = &in->ops[1 + i].v->type;
    return glow_eval_supported_types((glow_node_kind)in->kind, ins, (int)nin,
                                     &in->ops[0].v->type, 1);
}

bool cpu_select_typed(const ir_instr *in, cpu_op *op)
{
    if (!evaluated(in))
        return false;
    switch ((int)in->kind) {
    case IK_CAST: return sel_cast(in, op);
    case IK_WHERE: return sel_where(in, op);
    case IK_SPLAT: return sel_splat(in, op);
    default: break;
    }
    if (!(glow_node_kind_flags((glow_node_kind)in->kind) & NF_ELEMWISE))
        return false;
    return in->nops == 2 ? sel_unary(in, op) : sel_binary(in, op);
}
