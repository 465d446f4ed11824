// eval_elem.c - Reference evaluation of elementwise nodes: unary math, binary arithmetic,
// comparisons, logic, bitwise ops, Where and Cast.
//
// Float kinds compute in f64 and round once on the store (f16/bf16 via f32), which is at least
// as accurate as computing in the narrow kind. Integer kinds compute in 64 bits with unsigned
// arithmetic (wrapping, never undefined) and are truncated to their width on the store. Each
// element is computed by kernels/typed_math.h, which the CPU backend's typed kernels call too:
// this file maps a node to the op code and parameters those functions take.
#include "eval/eval_internal.h"
#include "eval/eval_string.h"

/* Attribute values of the unary activations, read once per node with ONNX's defaults. */
typedef struct {
    double alpha, beta, gamma, lambd, bias, lo, hi;
    bool gelu_tanh, pos, neg;
} un_params;

static un_params un_params_of(const glow_node *n)
{
    double alpha = 1.0;
    switch (n->kind) {
    case NK_SELU: alpha = 1.67326319217681884765625; break;
    case NK_LEAKY_RELU: alpha = 0.01; break;
    case NK_HARD_SIGMOID: alpha = 0.2; break;
    default: break;
    }
    un_params p = {
        .alpha = glow_node_float(n, GA_ALPHA, alpha),
        .beta = glow_node_float(n, GA_BETA, 0.5),
        .gamma = glow_node_float(n, GA_GAMMA, 1.05070102214813232421875),
        .lambd = glow_node_float(n, GA_LAMBD, 0.5),
        .bias = glow_node_float(n, GA_BIAS, 0.0),
        .lo = glow_node_float(n, GA_MIN, -INFINITY),
        .hi = glow_node_float(n, GA_MAX, INFINITY),
        .gelu_tanh = strcmp(glow_node_str(n, GA_APPROXIMATE, "none"), "tanh") == 0,
        .pos = glow_node_int(n, GA_DETECT_POS, 1) != 0,
        .neg = glow_node_int(n, GA_DETECT_NEG, 1) != 0,
    };
    return p;
}

int glow_ev_unary_code(const glow_node *n, double *p, double *q)
{
    un_params a = un_params_of(n);
    *p = *q = 0;
    switch (n->kind) {
    case NK_RELU: return GK_TU_RELU;
    case NK_SIGMOID: return GK_TU_SIGMOID;
    case NK_TANH: return GK_TU_TANH;
    case NK_EXP: return GK_TU_EXP;
    case NK_LOG: return GK_TU_LOG;
    case NK_SQRT: return GK_TU_SQRT;
    case NK_ABS: return GK_TU_ABS;
    case NK_NEG: return GK_TU_NEG;
    case NK_FLOOR: return GK_TU_FLOOR;
    case NK_CEIL: return GK_TU_CEIL;
    case NK_ROUND: return GK_TU_ROUND;
    case NK_RECIPROCAL: return GK_TU_RECIPROCAL;
    case NK_ERF: return GK_TU_ERF;
    case NK_SIN: return GK_TU_SIN;
    case NK_COS: return GK_TU_COS;
    case NK_TAN: return GK_TU_TAN;
    case NK_ASIN: return GK_TU_ASIN;
    case NK_ACOS: return GK_TU_ACOS;
    case NK_ATAN: return GK_TU_ATAN;
    case NK_SINH: return GK_TU_SINH;
    case NK_COSH: return GK_TU_COSH;
    case NK_ASINH: return GK_TU_ASINH;
    case NK_ACOSH: return GK_TU_ACOSH;
    case NK_ATANH: return GK_TU_ATANH;
    case NK_SIGN: return GK_TU_SIGN;
    case NK_ISNAN: return GK_TU_ISNAN;
    case NK_ISINF: *p = a.pos; *q = a.neg; return GK_TU_ISINF;
    case NK_SOFTPLUS: return GK_TU_SOFTPLUS;
    case NK_SOFTSIGN: return GK_TU_SOFTSIGN;
    case NK_ELU: *p = a.alpha; return GK_TU_ELU;
    case NK_SELU: *p = a.alpha; *q = a.gamma; return GK_TU_SELU;
    case NK_CELU: *p = a.alpha; return GK_TU_CELU;
    case NK_LEAKY_RELU: *p = a.alpha; return GK_TU_LEAKY_RELU;
    case NK_THRESHOLDED_RELU: *p = a.alpha; return GK_TU_THRESHOLDED_RELU;
    case NK_HARD_SIGMOID: *p = a.alpha; *q = a.beta; return GK_TU_HARD_SIGMOID;
    case NK_HARD_SWISH: return GK_TU_HARD_SWISH;
    case NK_GELU: return a.gelu_tanh ? GK_TU_GELU_TANH : GK_TU_GELU;
    case NK_MISH: return GK_TU_MISH;
    case NK_SHRINK: *p = a.lambd; *q = a.bias; return GK_TU_SHRINK;
    case NK_CLIP: *p = a.lo; *q = a.hi; return GK_TU_CLIP;
    case NK_BITWISE_NOT: return GK_TU_BITWISE_NOT;
    case NK_NOT: return GK_TU_NOT;
    default: return 0;
    }
}

glow_status glow_ev_unary(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_tensor *x = &ins[0];
    glow_tensor *y = &outs[0];
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, x->type.rank, x->type.dims, d));
    double p, q;
    int op = glow_ev_unary_code(n, &p, &q);
    if (!op)
        GLOW_UNREACHABLE();
    int tx = ev_gk(x->type.dtype), ty = ev_gk(y->type.dtype);
    int64_t count = ev_numel(&x->type);
    for (int64_t i = 0; i < count; i++)
        gk_unary_elem(op, tx, ty, p, q, x->data, y->data, i);
    return GLOW_OK;
}

int glow_ev_binary_code(const glow_node *n)
{
    switch (n->kind) {
    case NK_ADD: return GK_TB_ADD;
    case NK_SUB: return GK_TB_SUB;
    case NK_MUL: return GK_TB_MUL;
    case NK_DIV: return GK_TB_DIV;
    case NK_MOD: return glow_node_int(n, GA_FMOD, 0) != 0 ? GK_TB_FMOD : GK_TB_MOD;
    case NK_POW: return GK_TB_POW;
    case NK_MAX: return GK_TB_MAX;
    case NK_MIN: return GK_TB_MIN;
    case NK_PRELU: return GK_TB_PRELU;
    case NK_EQUAL: return GK_TB_EQUAL;
    case NK_LESS: return GK_TB_LESS;
    case NK_LESS_EQUAL: return GK_TB_LESS_EQUAL;
    case NK_GREATER: return GK_TB_GREATER;
    case NK_GREATER_EQUAL: return GK_TB_GREATER_EQUAL;
    case NK_AND: return GK_TB_AND;
    case NK_OR: return GK_TB_OR;
    case NK_XOR: return GK_TB_XOR;
    case NK_BITWISE_AND: return GK_TB_BITWISE_AND;
    case NK_BITWISE_OR: return GK_TB_BITWISE_OR;
    case NK_BITWISE_XOR: return GK_TB_BITWISE_XOR;
    case NK_BITSHIFT:
        return strcmp(glow_node_str(n, GA_DIRECTION, "LEFT"), "LEFT") == 0 ? GK_TB_SHL
                                                                           : GK_TB_SHR;
    default: return 0;
    }
}

glow_status glow_ev_binary(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_tensor *a = &ins[0], *b = &ins[1];
    glow_tensor *y = &outs[0];
    if (a->type.dtype == GLOW_STRING)
        return glow_ev_str_compare(n, ins, outs, d);
    GLOW_TRY(glow_ev_expect_shape(n, "operand 1", &b->type, a->type.rank, a->type.dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, a->type.rank, a->type.dims, d));
    int op = glow_ev_binary_code(n);
    if (!op)
        GLOW_UNREACHABLE();
    int ta = ev_gk(a->type.dtype), tb = ev_gk(b->type.dtype), ty = ev_gk(y->type.dtype);
    int64_t count = ev_numel(&a->type);
    for (int64_t i = 0; i < count; i++)
        gk_binary_elem(op, ta, tb, ty, a->data, b->data, y->data, i);
    return GLOW_OK;
}

glow_status glow_ev_where(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_type *c = &ins[0].type;
    for (int i = 1; i < 3; i++)
        GLOW_TRY(glow_ev_expect_shape(n, i == 1 ? "operand 1" : "operand 2", &ins[i].type,
                                      c->rank, c->dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, c->rank, c->dims, d));
    size_t es = ev_size(outs[0].type.dtype);
    int64_t count = ev_numel(c);
    for (int64_t i = 0; i < count; i++) {
        const glow_tensor *src = ((const uint8_t *)ins[0].data)[i] ? &ins[1] : &ins[2];
        ev_copy(outs[0].data, i, src->data, i, es);
    }
    return GLOW_OK;
}

/* Cast between any two non-quantized kinds, by the rules of gk_cast_elem. */
glow_status glow_ev_cast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    const glow_tensor *x = &ins[0];
    glow_tensor *y = &outs[0];
    if (x->type.dtype == GLOW_STRING || y->type.dtype == GLOW_STRING)
        return glow_ev_str_cast(n, ins, outs, d);
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, x->type.rank, x->type.dims, d));
    int tx = ev_gk(x->type.dtype), ty = ev_gk(y->type.dtype) | glow_ev_cast_mode(n);
    int64_t count = ev_numel(&x->type);
    for (int64_t i = 0; i < count; i++)
        gk_cast_elem(tx, ty, x->data, y->data, i);
    return GLOW_OK;
}

int glow_ev_cast_mode(const glow_node *n)
{
    int mode = glow_node_int(n, GA_SATURATE, 1) ? 0 : GK_CAST_NO_SATURATE;
    const char *round = glow_node_str(n, GA_ROUND_MODE, "up");
    if (!strcmp(round, "down"))
        mode |= GK_CAST_ROUND_DOWN;
    else if (!strcmp(round, "nearest"))
        mode |= GK_CAST_ROUND_NEAREST;
    return mode;
}
