// qres.h - A residual Add (and the rescale after it) folded into an int8 convolution's store
// (the qconv contract, kernels.def): ResNet's block ends, where the last 1x1 convolution's
// result is added to the block's input and a Relu follows. The backend (qprepare.c) hands the
// kernel the residual bytes `res` (the layout of y: the same pixels and channel stride), the
// GK_QRES_N floats of `rq` and the GK_QRES_* bits of `rmode`; each result byte is then computed
// as the two instructions computed it: the convolution's byte v = gk_requant(acc, ...) as
// without a residual, then
//     t = gk_qadd(v - y_zero, r - r_zero, ma, mb, a_zero, a_lo, a_hi)
// with r the residual byte (i8 with GK_QRES_R_I8), and with GK_QRES_POST (a Relu or rescale
// after the Add) gk_requant(t - a_zero, p_mult, p_zero, p_lo, p_hi). rmode is a constant in
// the JIT's code (the cpu backend passes it so), which folds the branches on it away. So the
// kernels give the evaluator's integers, and the sum's pass over three tensors and its
// barrier go.
#ifndef GK_QRES_H
#define GK_QRES_H

#include <stdbool.h>
#include <stdint.h>

#include "../qmath.h"

/* Rounding to an integer, to nearest even (roundps, roundscale with no scale), in the SIMD
 * stores. */
#define GK_QNEAR (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* The floats of rq, in this order. */
enum {
    GK_QRES_RZERO, GK_QRES_MA, GK_QRES_MB, GK_QRES_AZERO, GK_QRES_ALO,
    GK_QRES_AHI, GK_QRES_PMULT, GK_QRES_PZERO, GK_QRES_PLO, GK_QRES_PHI, GK_QRES_N
};

/* The bits of rmode: the residual is i8 (else u8); a rescale follows the Add. */
enum { GK_QRES_R_I8 = 1, GK_QRES_POST = 2 };

/* rq and rmode unpacked; res NULL: no residual. o_zero, o_lo and o_hi are those of the byte
 * stored: the rescale's when there is one, else the Add's. */
typedef struct {
    const uint8_t *res;
    bool r_signed, post;
    int r_zero, a_zero, a_lo, a_hi, p_zero, p_lo, p_hi, o_zero, o_lo, o_hi;
    float ma, mb, p_mult;
} gk_qres;

static inline gk_qres gk_qres_of(const uint8_t *res, const float *rq, int rmode)
{
    gk_qres q = { 0 };
    if (!res || !rq)
        return q;
    q.res = res;
    q.r_signed = rmode & GK_QRES_R_I8;
    q.post = rmode & GK_QRES_POST;
    q.r_zero = (int)rq[GK_QRES_RZERO];
    q.ma = rq[GK_QRES_MA];
    q.mb = rq[GK_QRES_MB];
    q.a_zero = (int)rq[GK_QRES_AZERO];
    q.a_lo = (int)rq[GK_QRES_ALO];
    q.a_hi = (int)rq[GK_QRES_AHI];
    q.p_mult = rq[GK_QRES_PMULT];
    q.p_zero = (int)rq[GK_QRES_PZERO];
    q.p_lo = (int)rq[GK_QRES_PLO];
    q.p_hi = (int)rq[GK_QRES_PHI];
    q.o_zero = q.post ? q.p_zero : q.a_zero;
    q.o_lo = q.post ? q.p_lo : q.a_lo;
    q.o_hi = q.post ? q.p_hi : q.a_hi;
    return q;
}

/* The byte stored for the convolution's byte v (zero point y_zero) and the residual byte rb:
 * the reference of the SIMD stores. */
static inline int32_t gk_qres_apply(const gk_qres *q, int32_t v, int32_t y_zero, uint8_t rb)
{
    int32_t r = q->r_signed ? (int32_t)(int8_t)rb : (int32_t)rb;
    int32_t t = gk_qadd(v - y_zero, r - q->r_zero, q->ma, q->mb, q->a_zero, q->a_lo, q->a_hi);
    if (q->post)
        t = gk_requant(t - q->a_zero, q->p_mult, q->p_zero, q->p_lo, q->p_hi);
    return t;
}

#endif
