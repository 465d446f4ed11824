// arith_identity.c - Arithmetic identities: x*1, 1*x, x+0, 0+x, x-0, x/1, x^1, --x, !!x,
// max(x,x), min(x,x), max(x,-inf), min(x,inf), x&x, x|x and relu(relu(x)) become x; x^2
// becomes x*x. Requires: verified graph. Keeps: topological order, dtypes and shapes; results
// exact except that x+0 keeps the sign of a negative zero, as Glow does. x^2 is x*x only
// for the floats narrower than f64: their square is exact in double, where pow computes.
//
// Elementwise operands have identical shapes and dtypes, so a constant operand that is all
// ones (or zeros) is exactly the neutral element of the same shape: the identity can never
// broadcast or change the result type. Quantized operands are left alone: "1" in a
// quantized tensor is not the number 1.
#include <math.h>

#include "opt/opt_internal.h"

static bool neutral(glow_value v, double value)
{
    return !glow_dtype_is_quantized(glow_value_type(v)->dtype) && opt_is_splat_of(v, value);
}

static bool same_value(glow_value a, glow_value b)
{
    return a.node == b.node && a.res == b.res;
}

/* The value n reduces to, or a null value when no identity applies. */
static glow_value simplify(const glow_node *n)
{
    glow_value none = { NULL, 0 };
    if (glow_dtype_is_quantized(n->outs[0].dtype))
        return none;
    glow_value a = n->nin > 0 ? n->ins[0] : none, b = n->nin > 1 ? n->ins[1] : none;
    switch (n->kind) {
    case NK_ADD:
        return neutral(b, 0) ? a : neutral(a, 0) ? b : none;
    case NK_SUB:
        return neutral(b, 0) ? a : none;
    case NK_MUL:
        return neutral(b, 1) ? a : neutral(a, 1) ? b : none;
    case NK_DIV:
        return neutral(b, 1) ? a : none;
    case NK_POW:
        /* The exponent may have another dtype; 1 is 1 in all of them. */
        return neutral(b, 1) && glow_type_equal(glow_value_type(a), &n->outs[0]) ? a : none;
    case NK_NEG:
    case NK_NOT:
    case NK_BITWISE_NOT:
        return a.node->kind == n->kind ? a.node->ins[0] : none;
    case NK_MAX:
    case NK_MIN:
        /* Max(x, -inf) and Min(x, +inf) (Clip bounds lowering leaves behind). */
        if (neutral(b, n->kind == NK_MAX ? -INFINITY : INFINITY))
            return a;
        return same_value(a, b) ? a : none;
    case NK_AND:
    case NK_OR:
    case NK_BITWISE_AND:
    case NK_BITWISE_OR:
        return same_value(a, b) ? a : none;
    case NK_RELU:
        return a.node->kind == NK_RELU ? a : none;
    default:
        return none;
    }
}

/* x^2 as x*x (an audio front-end's power spectrum): a multiply instead of a call to pow. */
static bool square(opt_cx *cx, glow_node *n)
{
    glow_dtype dt = n->outs[0].dtype;
    if (n->kind != NK_POW || (dt != GLOW_F32 && dt != GLOW_F16 && dt != GLOW_BF16) ||
        !neutral(n->ins[1], 2) || !glow_type_equal(glow_value_type(n->ins[0]), &n->outs[0]))
        return false;
    glow_value ins[2] = { n->ins[0], n->ins[0] };
    glow_node *m = opt_build(cx, n, n, "square", NK_MUL, ins, 2, NULL, 0, NULL);
    if (m)
        opt_replace(cx, n, glow_val(m, 0));
    return true;
}

void glow_pass_arith_identity(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (n->nout != 1 || n->nin == 0 || square(cx, n))
            continue;
        glow_value v = simplify(n);
        if (v.node && glow_type_equal(glow_value_type(v), &n->outs[0]))
            opt_replace(cx, n, v);
    }
}
