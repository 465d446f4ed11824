// eval_elem.c - Reference evaluation of elementwise nodes: unary math, binary arithmetic,
// comparisons, logic, bitwise ops, Where and Cast.
//
// Float kinds compute in f64 and round once on the store (f16/bf16 via f32), which is at least
// as accurate as computing in the narrow kind. Integer kinds compute in 64 bits with unsigned
// arithmetic (wrapping, never undefined) and are truncated to their width on the store.
#include "eval/eval_internal.h"

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

/* Round half to even, independent of the current rounding mode. */
static double round_half_even(double x)
{
    double f = floor(x), diff = x - f;
    if (diff > 0.5)
        return f + 1;
    if (diff < 0.5)
        return f;
    return fmod(f, 2.0) == 0 ? f : f + 1;
}

/* log(1 + exp(x)) without overflow for large x. */
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double un_f(glow_node_kind k, const un_params *p, double x)
{
    switch (k) {
    case NK_RELU: return x > 0 ? x : (x == x ? 0 : x);
    case NK_SIGMOID: return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
    case NK_TANH: return tanh(x);
    case NK_EXP: return exp(x);
    case NK_LOG: return log(x);
    case NK_SQRT: return sqrt(x);
    case NK_ABS: return fabs(x);
    case NK_NEG: return -x;
    case NK_FLOOR: return floor(x);
    case NK_CEIL: return ceil(x);
    case NK_ROUND: return isfinite(x) ? round_half_even(x) : x;
    case NK_RECIPROCAL: return 1 / x;
    case NK_ERF: return erf(x);
    case NK_SIN: return sin(x);
    case NK_COS: return cos(x);
    case NK_TAN: return tan(x);
    case NK_ASIN: return asin(x);
    case NK_ACOS: return acos(x);
    case NK_ATAN: return atan(x);
    case NK_SINH: return sinh(x);
    case NK_COSH: return cosh(x);
    case NK_ASINH: return asinh(x);
    case NK_ACOSH: return acosh(x);
    case NK_ATANH: return atanh(x);
    case NK_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x; /* keeps NaN and signed zero */
    case NK_ISNAN: return isnan(x);
    case NK_ISINF: return isinf(x) && ((x > 0 && p->pos) || (x < 0 && p->neg));
    case NK_SOFTPLUS: return softplus(x);
    case NK_SOFTSIGN: return x / (1 + fabs(x));
    case NK_ELU: return x < 0 ? p->alpha * (exp(x) - 1) : x;
    case NK_SELU: return x <= 0 ? p->gamma * (p->alpha * exp(x) - p->alpha) : p->gamma * x;
    case NK_CELU: return fmax(0, x) + fmin(0, p->alpha * (exp(x / p->alpha) - 1));
    case NK_LEAKY_RELU: return x < 0 ? p->alpha * x : x;
    case NK_THRESHOLDED_RELU: return x > p->alpha ? x : 0;
    case NK_HARD_SIGMOID: return fmax(0, fmin(1, p->alpha * x + p->beta));
    case NK_HARD_SWISH: return x * fmax(0, fmin(1, x / 6 + 0.5));
    case NK_GELU:
        if (p->gelu_tanh)
            return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case NK_MISH: return x * tanh(softplus(x));
    case NK_SHRINK: return x < -p->lambd ? x + p->bias : x > p->lambd ? x - p->bias : 0;
    case NK_CLIP: {
        /* min(max(x, lo), hi) as ONNX defines it: with lo > hi every element becomes hi. */
        double y = x < p->lo ? p->lo : x;
        return y > p->hi ? p->hi : y;
    }
    default: GLOW_UNREACHABLE();
    }
}

/* Integer unary ops (EP_UN_NUM / EP_UN_INT kinds). Clip bounds saturate to the kind's range
 * so that i64 values near 2^63 compare exactly. */
static int64_t un_i(glow_node_kind k, glow_dtype t, const un_params *p, int64_t x)
{
    bool u = ev_is_unsigned(t);
    switch (k) {
    case NK_RELU: return !u && x < 0 ? 0 : x;
    case NK_ABS: return !u && x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case NK_NEG: return (int64_t)(0 - (uint64_t)x);
    case NK_SIGN: return u ? x != 0 : (x > 0) - (x < 0);
    case NK_BITWISE_NOT: return ~x;
    case NK_SHRINK: return ev_f2i(t, un_f(k, p, (double)x));
    case NK_CLIP: {
        int64_t lo = ev_f2i(t, ceil(p->lo)), hi = ev_f2i(t, floor(p->hi));
        /* Lower bound first, then the upper one, so that lo > hi gives hi (ONNX). */
        if (u) {
            uint64_t uy = (uint64_t)x < (uint64_t)lo ? (uint64_t)lo : (uint64_t)x;
            return uy > (uint64_t)hi ? hi : (int64_t)uy;
        }
        int64_t y = x < lo ? lo : x;
        return y > hi ? hi : y;
    }
    default: GLOW_UNREACHABLE();
    }
}

glow_status glow_ev_unary(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_tensor *x = &ins[0];
    glow_tensor *y = &outs[0];
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, x->type.rank, x->type.dims, d));
    un_params p = un_params_of(n);
    glow_dtype t = x->type.dtype, ty = y->type.dtype;
    int64_t count = ev_numel(&x->type);
    if (n->kind == NK_NOT) {
        for (int64_t i = 0; i < count; i++)
            ev_sti(ty, y->data, i, !ev_ldi(t, x->data, i));
    } else if (ev_is_float(t)) {
        for (int64_t i = 0; i < count; i++)
            ev_stf(ty, y->data, i, un_f(n->kind, &p, ev_ldf(t, x->data, i)));
    } else {
        for (int64_t i = 0; i < count; i++)
            ev_sti(ty, y->data, i, un_i(n->kind, t, &p, ev_ldi(t, x->data, i)));
    }
    return GLOW_OK;
}

static double bin_f(glow_node_kind k, bool fmod_mode, double a, double b)
{
    switch (k) {
    case NK_ADD: return a + b;
    case NK_SUB: return a - b;
    case NK_MUL: return a * b;
    case NK_DIV: return a / b;
    case NK_MOD: {
        /* fmod=1 is C fmod (sign of the dividend); fmod=0 follows the divisor's sign. */
        double r = fmod(a, b);
        if (!fmod_mode && r != 0 && ((r < 0) != (b < 0)))
            r += b;
        return r;
    }
    case NK_POW: return pow(a, b);
    case NK_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case NK_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case NK_PRELU: return a < 0 ? a * b : a;
    case NK_EQUAL: return a == b;
    case NK_LESS: return a < b;
    case NK_LESS_EQUAL: return a <= b;
    case NK_GREATER: return a > b;
    case NK_GREATER_EQUAL: return a >= b;
    default: GLOW_UNREACHABLE();
    }
}

/* Integer power by squaring, wrapping modulo 2^64 (a negative exponent gives the truncated
 * reciprocal: 1 for base 1, +-1 for base -1, else 0). */
static int64_t ipow(int64_t a, int64_t e, bool e_unsigned)
{
    if (!e_unsigned && e < 0)
        return a == 1 ? 1 : a == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, base = (uint64_t)a, ue = (uint64_t)e;
    while (ue) {
        if (ue & 1)
            r *= base;
        base *= base;
        ue >>= 1;
    }
    return (int64_t)r;
}

/* Integer binary ops. Division and Mod by zero give 0 (numpy's result; ONNX leaves it
 * undefined) and INT64_MIN / -1 wraps, so no input traps. Div truncates toward zero as C
 * and ONNX do; Mod with fmod=0 takes the sign of the divisor (Python), fmod=1 of the
 * dividend (C). BitShift works on the kind's bit pattern; shifting by the width or more
 * gives 0. */
static int64_t bin_i(glow_node_kind k, glow_dtype t, const glow_node *n, int64_t a, int64_t b)
{
    bool u = ev_is_unsigned(t);
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (k) {
    case NK_ADD: return (int64_t)(ua + ub);
    case NK_SUB: return (int64_t)(ua - ub);
    case NK_MUL: return (int64_t)(ua * ub);
    case NK_DIV:
        if (b == 0)
            return 0;
        if (u)
            return (int64_t)(ua / ub);
        return b == -1 ? (int64_t)(0 - ua) : a / b;
    case NK_MOD: {
        if (b == 0)
            return 0;
        if (u)
            return (int64_t)(ua % ub);
        if (b == -1)
            return 0;
        int64_t r = a % b;
        if (glow_node_int(n, GA_FMOD, 0) == 0 && r != 0 && ((r < 0) != (b < 0)))
            r += b;
        return r;
    }
    case NK_MAX: return u ? (ua > ub ? a : b) : (a > b ? a : b);
    case NK_MIN: return u ? (ua < ub ? a : b) : (a < b ? a : b);
    case NK_PRELU: return !u && a < 0 ? (int64_t)(ua * ub) : a;
    case NK_BITWISE_AND: case NK_AND: return a & b;
    case NK_BITWISE_OR: case NK_OR: return a | b;
    case NK_BITWISE_XOR: case NK_XOR: return a ^ b;
    case NK_BITSHIFT: {
        unsigned bits = (unsigned)ev_size(t) * 8;
        uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        if ((ub & mask) >= bits)
            return 0;
        bool left = strcmp(glow_node_str(n, GA_DIRECTION, "LEFT"), "LEFT") == 0;
        return (int64_t)(left ? ua << (ub & mask) : (ua & mask) >> (ub & mask));
    }
    case NK_EQUAL: return a == b;
    case NK_LESS: return u ? ua < ub : a < b;
    case NK_LESS_EQUAL: return u ? ua <= ub : a <= b;
    case NK_GREATER: return u ? ua > ub : a > b;
    case NK_GREATER_EQUAL: return u ? ua >= ub : a >= b;
    default: GLOW_UNREACHABLE();
    }
}

glow_status glow_ev_binary(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d)
{
    const glow_tensor *a = &ins[0], *b = &ins[1];
    glow_tensor *y = &outs[0];
    GLOW_TRY(glow_ev_expect_shape(n, "operand 1", &b->type, a->type.rank, a->type.dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, a->type.rank, a->type.dims, d));
    glow_dtype ta = a->type.dtype, tb = b->type.dtype, ty = y->type.dtype;
    int64_t count = ev_numel(&a->type);
    bool fmod_mode = glow_node_int(n, GA_FMOD, 0) != 0;
    for (int64_t i = 0; i < count; i++) {
        if (ev_is_float(ta)) {
            ev_stf(ty, y->data, i, bin_f(n->kind, fmod_mode, ev_ldf(ta, a->data, i),
                                          ev_ldf(tb, b->data, i)));
        } else if (n->kind == NK_POW && ev_is_float(tb)) {
            /* Integer base, float exponent: compute in f64, saturate back. */
            ev_sti(ty, y->data, i, ev_f2i(ty, pow(ev_ldf(ta, a->data, i),
                                                   ev_ldf(tb, b->data, i))));
        } else if (n->kind == NK_POW) {
            ev_sti(ty, y->data, i, ipow(ev_ldi(ta, a->data, i), ev_ldi(tb, b->data, i),
                                        ev_is_unsigned(tb)));
        } else {
            ev_sti(ty, y->data, i, bin_i(n->kind, ta, n, ev_ldi(ta, a->data, i),
                                         ev_ldi(tb, b->data, i)));
        }
    }
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

/* Cast between any two non-quantized kinds:
 * - float -> float rounds to nearest even (f64 -> f16/bf16 goes through f32);
 * - float -> integer truncates toward zero, NaN gives 0, out-of-range values saturate
 *   (ONNX leaves this undefined; saturating keeps it free of C undefined behaviour);
 * - integer -> integer wraps modulo 2^bits; integer -> float rounds to nearest;
 * - anything -> bool is v != 0 (NaN is true); bool -> anything is 0 or 1. */
glow_status glow_ev_cast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d)
{
    const glow_tensor *x = &ins[0];
    glow_tensor *y = &outs[0];
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, x->type.rank, x->type.dims, d));
    glow_dtype tx = x->type.dtype, ty = y->type.dtype;
    int64_t count = ev_numel(&x->type);
    for (int64_t i = 0; i < count; i++) {
        if (ev_is_float(tx)) {
            ev_stf(ty, y->data, i, ev_ldf(tx, x->data, i));
        } else if (ev_is_float(ty)) {
            int64_t v = ev_ldi(tx, x->data, i);
            /* Integers convert straight to f32 (one rounding) when the target is 32-bit
             * or narrower. */
            float f = ev_is_unsigned(tx) ? (float)(uint64_t)v : (float)v;
            double g = ev_is_unsigned(tx) ? (double)(uint64_t)v : (double)v;
            ev_stf(ty, y->data, i, ty == GLOW_F64 ? g : (double)f);
        } else {
            ev_sti(ty, y->data, i, ev_ldi(tx, x->data, i));
        }
    }
    return GLOW_OK;
}
