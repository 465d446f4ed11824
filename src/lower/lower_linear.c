// lower_linear.c - Lowers Gemm and FullyConnected to MatMul, Transpose and elementwise ops.
#include "lower/lower_internal.h"

/* Scalars in integer arithmetic would be truncated, and quantized results carry chosen
 * scales that the primitives could not reproduce: integers lower only when no scaling is
 * needed, quantized kinds never. */
static bool scalable(const glow_type *t, double alpha, double beta)
{
    if (lw_is_float(t))
        return true;
    return glow_dtype_is_int(t->dtype) && alpha == 1.0 && (beta == 1.0 || beta == 0.0);
}

/* GEMM(A, B, C?) = alpha * op(A) op(B) + beta * C, with op a transpose when asked. C is
 * already [M, N] (the importer broadcasts it). */
void lower_gemm(lower_cx *cx, bool *applied)
{
    glow_node *n = cx->n;
    double alpha = glow_node_float(n, GA_ALPHA, 1.0), beta = glow_node_float(n, GA_BETA, 1.0);
    if (!scalable(&n->outs[0], alpha, beta) || !scalable(lw_type(lw_in(cx, 0)), 1, 1))
        return;
    *applied = true;
    static const int64_t swap[2] = { 1, 0 };
    glow_value a = lw_in(cx, 0), b = lw_in(cx, 1);
    if (glow_node_int(n, GA_TRANS_A, 0))
        a = lw_transpose(cx, "transA", a, swap);
    if (glow_node_int(n, GA_TRANS_B, 0))
        b = lw_transpose(cx, "transB", b, swap);
    glow_value y = lw_bin(cx, NK_MATMUL, "matmul", a, b);
    if (alpha != 1.0)
        y = lw_scalar(cx, NK_MUL, "alpha", y, alpha);
    if (n->nin == 3 && beta != 0.0) {
        glow_value c = lw_in(cx, 2);
        if (beta != 1.0)
            c = lw_scalar(cx, NK_MUL, "beta", c, beta);
        y = lw_bin(cx, NK_ADD, "add", y, c);
    }
    cx->out[0] = y;
}

/* FULLY_CONNECTED(x[M, K], w[K, N], b[N]) = x w + b broadcast over rows. */
void lower_fully_connected(lower_cx *cx, bool *applied)
{
    const glow_type *y = &cx->n->outs[0];
    if (glow_dtype_is_quantized(y->dtype))
        return;
    *applied = true;
    glow_value mm = lw_bin(cx, NK_MATMUL, "matmul", lw_in(cx, 0), lw_in(cx, 1));
    glow_value b = lw_expand(cx, "bias", lw_in(cx, 2), y, 1);
    cx->out[0] = lw_bin(cx, NK_ADD, "add", mm, b);
}
