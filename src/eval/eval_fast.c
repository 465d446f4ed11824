// eval_fast.c - f32 fast paths of the reference evaluator for the elementwise ops and MatMul
// that whole networks spend their time in.
//
// The generic routines widen every element to f64 through a switch on the kind, which is
// exact but several times slower than a plain float loop. These paths apply only when every
// operand and the result are f32 with identical shapes (MatMul: its usual shapes); otherwise
// they decline and the generic routine runs (and reports any malformed shape). Results stay
// within float rounding of the generic ones: f32 arithmetic is what the model asked for.
// Each element is computed by the function of kernels/scalar_math.h that the CPU backend's
// scalar kernels call too, so both backends agree to the bit.
// Under GLOWC_EVAL_REFERENCE (glow_ev_reference) these paths are not taken.
#include "eval/eval_internal.h"

#if defined(__GNUC__) && !defined(__clang__)
/* Loop vectorization, which -O2 barely does in GCC 12. */
#pragma GCC optimize("O3")
#endif

/* After the pragma, so that its inline functions are optimized like the loops they sit in. */
#include "scalar_math.h"

static bool same_f32(const glow_type *a, const glow_type *b)
{
    return a->dtype == GLOW_F32 && b->dtype == GLOW_F32 && glow_type_same_shape(a, b);
}

/* One loop per op, each calling its inline function directly, so every loop vectorizes on
 * its own (a function pointer would hide the op from the compiler). */
#define MAP1(fn) for (int64_t i = 0; i < count; i++) y[i] = fn(x[i])
#define MAP2(fn) for (int64_t i = 0; i < count; i++) y[i] = fn(a[i], b[i])

static bool binary_f32(glow_node_kind k, int64_t count, const float *a,
                       const float *b, float *y)
{
    /* y may alias a or b (in-place elementwise): every element is read before it is
     * written, so the loops stay correct (hence no restrict). */
    switch (k) {
    case NK_ADD: MAP2(gk_add_f32); break;
    case NK_SUB: MAP2(gk_sub_f32); break;
    case NK_MUL: MAP2(gk_mul_f32); break;
    case NK_DIV: MAP2(gk_div_f32); break;
    case NK_MAX: MAP2(gk_max_f32); break;
    case NK_MIN: MAP2(gk_min_f32); break;
    case NK_POW: MAP2(gk_pow_f32); break;
    default: return false;
    }
    return true;
}

static bool unary_f32(glow_node_kind k, int64_t count, const float *x, float *y)
{
    switch (k) {
    case NK_RELU: MAP1(gk_relu_f32); break;
    case NK_NEG: MAP1(gk_neg_f32); break;
    case NK_ABS: MAP1(gk_abs_f32); break;
    case NK_SQRT: MAP1(gk_sqrt_f32); break;
    case NK_EXP: MAP1(gk_exp_f32); break;
    case NK_TANH: MAP1(gk_tanh_f32); break;
    case NK_SIGMOID: MAP1(gk_sigmoid_f32); break;
    case NK_LOG: MAP1(gk_log_f32); break;
    default: return false;
    }
    return true;
}

/* Batched MatMul [..., M, K] x [..., K, N] on f32. */
static bool matmul_f32(const glow_tensor *ins, glow_tensor *y)
{
    const glow_type *a = &ins[0].type, *b = &ins[1].type, *t = &y->type;
    int r = a->rank;
    if (r < 2 || b->rank != r || t->rank != r || a->dtype != GLOW_F32 ||
        b->dtype != GLOW_F32 || t->dtype != GLOW_F32)
        return false;
    for (int i = 0; i < r - 2; i++)
        if (b->dims[i] != a->dims[i] || t->dims[i] != a->dims[i])
            return false;
    int64_t m = a->dims[r - 2], k = a->dims[r - 1], nn = b->dims[r - 1];
    if (b->dims[r - 2] != k || t->dims[r - 2] != m || t->dims[r - 1] != nn)
        return false;
    int64_t batches = ev_prod(a->dims, 0, r - 2);
    for (int64_t bt = 0; bt < batches; bt++)
        glow_ev_mm_f32(m, nn, k, (const float *)ins[0].data + bt * m * k,
                       (const float *)ins[1].data + bt * k * nn, false,
                       (float *)y->data + bt * m * nn);
    return true;
}

bool glow_ev_fast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs)
{
    if (n->nout != 1)
        return false;
    glow_tensor *y = &outs[0];
    if (n->kind == NK_MATMUL)
        return n->nin == 2 && matmul_f32(ins, y);
    unsigned flags = glow_node_kind_flags(n->kind);
    if (!(flags & NF_ELEMWISE) || (flags & (NF_CMP | NF_LOGICAL)))
        return false;
    if (n->nin == 2 && same_f32(&ins[0].type, &y->type) && same_f32(&ins[1].type, &y->type))
        return binary_f32(n->kind, ev_numel(&y->type), ins[0].data, ins[1].data, y->data);
    if (n->nin == 1 && same_f32(&ins[0].type, &y->type))
        return unary_f32(n->kind, ev_numel(&y->type), ins[0].data, y->data);
    return false;
}
