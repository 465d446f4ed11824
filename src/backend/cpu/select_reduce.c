// select_reduce.c - Kernel selection for reductions and the along-axis ops of any numeric kind:
// Reduce* over any axes, ArgMax/ArgMin, CumSum/CumProd, TopK, Hardmax, LRN, and MatMul of the
// kinds the f32 matmul kernel does not take (kernels/reduce, kernels/scan, kernels/softmax,
// kernels/norm, kernels/matmul).
//
// The kernels compute what the evaluator computes for every element kind it runs (a gk_dtype
// code argument), so an instruction is taken whenever its operands are consistent and no
// result overlaps an operand; anything else (quantized kinds, shapes the evaluator would
// reject) stays on the evaluator, which reports the error.
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_dtype.h"
#include "gk_ops.h"

/* The kernels' code of a numeric element kind, 0 for the others (quantized, bool). */
static int dt_code(glow_dtype t)
{
    switch (t) {
    case GLOW_F32: return GK_DT_F32;
    case GLOW_F16: return GK_DT_F16;
    case GLOW_BF16: return GK_DT_BF16;
    case GLOW_F64: return GK_DT_F64;
    case GLOW_I8: return GK_DT_I8;
    case GLOW_U8: return GK_DT_U8;
    case GLOW_I16: return GK_DT_I16;
    case GLOW_U16: return GK_DT_U16;
    case GLOW_I32: return GK_DT_I32;
    case GLOW_U32: return GK_DT_U32;
    case GLOW_I64: return GK_DT_I64;
    case GLOW_U64: return GK_DT_U64;
    default: return 0;
    }
}

static int64_t attr_int(const ir_instr *in, glow_attr_id id, int64_t dflt)
{
    const glow_attr *a = cpu_attr(in, id);
    return a ? a->v.i : dflt;
}

/* x viewed as [outer, size, inner] around the attribute axis (negative counts from the end). */
static bool axis_view(const ir_instr *in, const glow_type *x, int64_t dflt, int64_t *outer,
                      int64_t *size, int64_t *inner)
{
    int64_t axis = attr_int(in, GA_AXIS, dflt);
    axis += axis < 0 ? x->rank : 0;
    if (axis < 0 || axis >= x->rank)
        return false;
    *outer = *inner = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis)
            *outer *= x->dims[i];
        else if (i > axis)
            *inner *= x->dims[i];
    }
    *size = x->dims[axis];
    return true;
}

static int reduce_code(ir_instr_kind k)
{
    switch ((int)k) {
    case IK_REDUCE_SUM: return GK_RED_SUM;
    case IK_REDUCE_MEAN: return GK_RED_MEAN;
    case IK_REDUCE_MAX: return GK_RED_MAX;
    case IK_REDUCE_MIN: return GK_RED_MIN;
    case IK_REDUCE_PROD: return GK_RED_PROD;
    case IK_REDUCE_L1: return GK_RED_L1;
    case IK_REDUCE_L2: return GK_RED_L2;
    case IK_REDUCE_LOG_SUM: return GK_RED_LOG_SUM;
    case IK_REDUCE_LOG_SUM_EXP: return GK_RED_LOG_SUM_EXP;
    default: return GK_RED_SUM_SQUARE;
    }
}

/* A reduction over any axes. x's dims are grouped into runs of kept and of reduced dims
 * (dims of extent 1 dropped, neighbours of one class merged), at most four runs of each
 * (rank 6 has at most three). A single reduced run of an f32 Sum/Mean/Max/Min is the f32
 * kernel's [outer, n, inner] view; everything else is the strided `any` kernel. */
static bool sel_reduce(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *x = &xv->type;
    const glow_attr *axes = cpu_attr(in, GA_AXES);
    int dt = dt_code(x->dtype);
    if (!dt || yv->type.dtype != x->dtype || in->nout != 1 || in->nops != 2 ||
        !cpu_no_alias(in))
        return false;
    bool red[GLOW_MAX_DIMS] = { false };
    for (uint32_t i = 0; axes && i < axes->n; i++) {
        int64_t a = axes->v.ints[i];
        if (a < 0 || a >= x->rank || red[a])
            return false;
        red[a] = true;
    }
    /* Runs: extent and stride (of the run's innermost dim), kept [0] and reduced [1]. */
    int64_t ext[2][4], str[2][4], stride = 1, kept = 1;
    int nrun[2] = { 0, 0 }, prev = -1;
    for (int i = x->rank - 1; i >= 0; stride *= x->dims[i--]) {
        if (x->dims[i] == 1)
            continue;
        int c = red[i];
        if (c == prev) {
            ext[c][nrun[c] - 1] *= x->dims[i];
        } else {
            if (nrun[c] == 4)
                return false;
            ext[c][nrun[c]] = x->dims[i];
            str[c][nrun[c]++] = stride;
        }
        prev = c;
        kept *= c ? 1 : x->dims[i];
    }
    if (kept != glow_type_numel(&yv->type))
        return false;
    /* Runs were found innermost first; the kernel takes them outermost first, padded in
     * front with runs of extent 1. */
    int64_t e[2][4], s[2][4];
    for (int c = 0; c < 2; c++)
        for (int j = 0; j < 4; j++) {
            int from = 3 - j;
            e[c][j] = from < nrun[c] ? ext[c][from] : 1;
            s[c][j] = from < nrun[c] ? str[c][from] : 0;
        }
    int code = reduce_code(in->kind);
    int64_t inner = nrun[1] ? s[1][3] : 1; /* 0 only when x is empty */
    if (dt == GK_DT_F32 && code <= GK_RED_MIN && nrun[1] <= 1 && inner > 0) {
        int64_t n = e[1][3];
        CPU_OP(op, CPU_K_reduce_f32_scalar, cpu_num(code), cpu_num(kept / inner), cpu_num(n),
               cpu_num(inner), cpu_ptr(xv, 0), cpu_ptr(yv, 0));
        return true;
    }
    CPU_OP(op, CPU_K_reduce_any_scalar, cpu_num(code), cpu_num(dt), cpu_num(e[0][0]),
           cpu_num(e[0][1]), cpu_num(e[0][2]), cpu_num(e[0][3]), cpu_num(s[0][0]), cpu_num(s[0][1]),
           cpu_num(s[0][2]), cpu_num(s[0][3]), cpu_num(e[1][0]), cpu_num(e[1][1]), cpu_num(e[1][2]),
           cpu_num(e[1][3]), cpu_num(s[1][0]), cpu_num(s[1][1]), cpu_num(s[1][2]), cpu_num(s[1][3]),
           cpu_ptr(xv, 0), cpu_ptr(yv, 0));
    return true;
}

/* ArgMax / ArgMin: i64 result with the axis removed or kept as 1 (same layout). */
static bool sel_arg(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    int dt = dt_code(xv->type.dtype);
    int64_t outer, size, inner;
    if (!dt || yv->type.dtype != GLOW_I64 || in->nout != 1 || in->nops != 2 ||
        !cpu_no_alias(in) || !axis_view(in, &xv->type, 0, &outer, &size, &inner) ||
        glow_type_numel(&yv->type) != outer * inner || (size == 0 && outer * inner > 0))
        return false;
    CPU_OP(op, CPU_K_arg_any_scalar, cpu_num(in->kind == IK_ARG_MAX ? 1 : -1),
           cpu_num(attr_int(in, GA_SELECT_LAST, 0) != 0), cpu_num(dt), cpu_num(outer),
           cpu_num(size), cpu_num(inner), cpu_ptr(xv, 0), cpu_ptr(yv, 0));
    return true;
}

static bool sel_cumulative(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    int dt = dt_code(xv->type.dtype);
    int64_t outer, size, inner;
    if (!dt || !glow_type_equal(&yv->type, &xv->type) || in->nout != 1 || in->nops != 2 ||
        !cpu_no_alias(in) || !axis_view(in, &xv->type, 0, &outer, &size, &inner))
        return false;
    CPU_OP(op, CPU_K_cumulative_any_scalar, cpu_num(in->kind == IK_CUMPROD),
           cpu_num(attr_int(in, GA_EXCLUSIVE, 0) != 0), cpu_num(attr_int(in, GA_REVERSE, 0) != 0),
           cpu_num(dt), cpu_num(outer), cpu_num(size), cpu_num(inner), cpu_ptr(xv, 0),
           cpu_ptr(yv, 0));
    return true;
}

/* TopK with its values (x's kind) and, when asked for, i64 indices: [values, indices?, x]. */
static bool sel_topk(const ir_instr *in, cpu_op *op)
{
    if (in->nout < 1 || in->nout > 2 || in->nops != in->nout + 1)
        return false;
    const ir_value *vv = in->ops[0].v, *iv = in->nout == 2 ? in->ops[1].v : NULL;
    const ir_value *xv = in->ops[in->nout].v;
    int dt = dt_code(xv->type.dtype);
    int64_t outer, size, inner, k = attr_int(in, GA_K, -1);
    if (!dt || vv->type.dtype != xv->type.dtype || (iv && iv->type.dtype != GLOW_I64) ||
        !cpu_no_alias(in) || !axis_view(in, &xv->type, -1, &outer, &size, &inner) || k < 0 ||
        k > size || glow_type_numel(&vv->type) != outer * k * inner ||
        (iv && (glow_type_numel(&iv->type) != outer * k * inner || cpu_overlap(vv, iv))))
        return false;
    CPU_OP(op, CPU_K_topk_any_scalar, cpu_num(attr_int(in, GA_LARGEST, 1) != 0), cpu_num(dt),
           cpu_num(outer), cpu_num(size), cpu_num(inner), cpu_num(k), cpu_ptr(xv, 0),
           cpu_ptr(vv, 0), iv ? cpu_ptr(iv, 0) : (cpu_arg){ .kind = CA_NULL });
    return true;
}

static bool sel_hardmax(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    int dt = dt_code(xv->type.dtype);
    int64_t outer, size, inner;
    if (!dt || !gk_dt_is_float(dt) || !glow_type_equal(&yv->type, &xv->type) ||
        in->nout != 1 || in->nops != 2 || !cpu_no_alias(in) ||
        !axis_view(in, &xv->type, -1, &outer, &size, &inner))
        return false;
    CPU_OP(op, CPU_K_hardmax_any_scalar, cpu_num(dt), cpu_num(outer), cpu_num(size), cpu_num(inner),
           cpu_ptr(xv, 0), cpu_ptr(yv, 0));
    return true;
}

/* MatMul [..., M, K] x [..., K, N] with identical batch dims, of a kind other than f32 (whose
 * kernel in select.c also fuses activations); the evaluator's generic routine. */
static bool sel_matmul_any(const ir_instr *in, cpu_op *op)
{
    if (in->nout != 1 || in->nops != 3 || cpu_attr(in, GA_FUSED_ACT))
        return false;
    const ir_value *yv = in->ops[0].v, *av = in->ops[1].v, *bv = in->ops[2].v;
    const glow_type *y = &yv->type, *a = &av->type, *b = &bv->type;
    int r = a->rank, dt = dt_code(a->dtype);
    if (!dt || b->dtype != a->dtype || y->dtype != a->dtype || r < 2 || b->rank != r ||
        y->rank != r || !cpu_no_alias(in))
        return false;
    int64_t m = a->dims[r - 2], k = a->dims[r - 1], n = b->dims[r - 1], batch = 1;
    if (b->dims[r - 2] != k || y->dims[r - 2] != m || y->dims[r - 1] != n)
        return false;
    for (int i = 0; i < r - 2; i++) {
        if (b->dims[i] != a->dims[i] || y->dims[i] != a->dims[i])
            return false;
        batch *= a->dims[i];
    }
    CPU_OP(op, CPU_K_matmul_any_scalar, cpu_num(dt), cpu_ptr(av, 0), cpu_ptr(bv, 0), cpu_ptr(yv, 0),
           cpu_num(batch), cpu_num(m), cpu_num(k), cpu_num(n));
    return true;
}

/* LRN over dim 1 of [N, C, spatial...], float kinds. */
static bool sel_lrn(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *x = &xv->type;
    int dt = dt_code(x->dtype);
    int64_t size = attr_int(in, GA_SIZE, 1), s = 1;
    if (!dt || !gk_dt_is_float(dt) || !glow_type_equal(&yv->type, x) || in->nout != 1 ||
        in->nops != 2 || x->rank < 2 || size < 1 || !cpu_no_alias(in))
        return false;
    for (int i = 2; i < x->rank; i++)
        s *= x->dims[i];
    const glow_attr *alpha = cpu_attr(in, GA_ALPHA), *beta = cpu_attr(in, GA_BETA),
                    *bias = cpu_attr(in, GA_BIAS);
    CPU_OP(op, CPU_K_lrn_any_scalar, cpu_num(dt), cpu_real(alpha ? alpha->v.f : 1e-4),
           cpu_real(beta ? beta->v.f : 0.75), cpu_real(bias ? bias->v.f : 1.0), cpu_num(size),
           cpu_num(x->dims[0]), cpu_num(x->dims[1]), cpu_num(s), cpu_ptr(xv, 0), cpu_ptr(yv, 0));
    return true;
}

bool cpu_select_reduce(const ir_instr *in, cpu_op *ops, int *nops)
{
    *nops = 1;
    switch ((int)in->kind) {
    case IK_ARG_MAX: case IK_ARG_MIN:
        return sel_arg(in, ops);
    case IK_CUMSUM: case IK_CUMPROD:
        return sel_cumulative(in, ops);
    case IK_TOPK:
        return sel_topk(in, ops);
    case IK_HARDMAX:
        return sel_hardmax(in, ops);
    case IK_MATMUL:
        return sel_matmul_any(in, ops);
    case IK_LRN:
        return sel_lrn(in, ops);
    default:
        return sel_reduce(in, ops);
    }
}
