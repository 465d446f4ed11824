// act_vec.h - The activations fused into the blocked-layout templates' stores (conv_tmpl.h,
// wino_tmpl.h), on simd.h's vectors: include it after simd.h and blocked.h (GK_ACT_* kinds).
//
// Relu, Clip and LeakyRelu run on the registers before the store; Sigmoid and Tanh run after it
// on the stored floats, with libm, as the evaluator computes them. max/min keep their second
// operand on NaN (simd.h), so relu(NaN) is NaN as in the evaluator.
#ifndef GK_ACT_VEC_H
#define GK_ACT_VEC_H

#include <math.h>
#include <stddef.h>

/* act(v) for the cheap activations; sigmoid and tanh are applied after the store. */
GK_INLINE gk_vec act_vec(gk_vec v, int act, float alpha, float beta)
{
    switch (act) {
    case GK_ACT_RELU: return VMAX(VZERO(), v); /* max keeps its 2nd operand on NaN: v */
    case GK_ACT_CLIP: return VMIN(VSET1(beta), VMAX(VSET1(alpha), v));
    case GK_ACT_LEAKY_RELU: return VSEL_NEG(v, VMUL(v, VSET1(alpha)));
    default: return v;
    }
}

/* Sigmoid or tanh over count stored floats. */
static void act_slow(float *p, size_t count, int act)
{
    for (size_t i = 0; i < count; i++)
        p[i] = act == GK_ACT_SIGMOID ? 1.0f / (1.0f + expf(-p[i])) : tanhf(p[i]);
}

#endif
