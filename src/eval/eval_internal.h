// eval_internal.h - Shared helpers of the reference evaluator: element access, shapes, iteration.
//
// The evaluator favours obviously-correct loops over speed: elements are read and written one
// at a time through the helpers below, which widen every kind to f64 (float kinds) or to a
// 64-bit integer (integer kinds and bool) and narrow it again on the way out.
#ifndef GLOW_EVAL_INTERNAL_H
#define GLOW_EVAL_INTERNAL_H

#include <math.h>
#include <string.h>

#include "eval/eval.h"
#include "typed_math.h"

typedef glow_status (*ev_fn)(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             glow_diag *d);

/* Per-family entry points (eval_elem.c, eval_move.c, eval_index.c, eval_reduce.c, eval_nn.c,
 * eval_norm.c, eval_resize.c, eval_prim.c). */
glow_status glow_ev_unary(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);
glow_status glow_ev_binary(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
glow_status glow_ev_where(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);
glow_status glow_ev_cast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d);
glow_status glow_ev_reshape(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d);
glow_status glow_ev_broadcast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d);
glow_status glow_ev_transpose(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d);
glow_status glow_ev_concat(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
glow_status glow_ev_slice(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);
glow_status glow_ev_pad(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d);
glow_status glow_ev_tile(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d);
glow_status glow_ev_depth_to_space(const glow_node *n, const glow_tensor *ins,
                                   glow_tensor *outs, glow_diag *d);
glow_status glow_ev_space_to_depth(const glow_node *n, const glow_tensor *ins,
                                   glow_tensor *outs, glow_diag *d);
glow_status glow_ev_trilu(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);
glow_status glow_ev_one_hot(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d);
glow_status glow_ev_reverse_sequence(const glow_node *n, const glow_tensor *ins,
                                     glow_tensor *outs, glow_diag *d);
glow_status glow_ev_gather(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
glow_status glow_ev_gather_elements(const glow_node *n, const glow_tensor *ins,
                                    glow_tensor *outs, glow_diag *d);
glow_status glow_ev_gather_nd(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d);
glow_status glow_ev_scatter_elements(const glow_node *n, const glow_tensor *ins,
                                     glow_tensor *outs, glow_diag *d);
glow_status glow_ev_scatter_nd(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                               glow_diag *d);
glow_status glow_ev_reduce(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
glow_status glow_ev_arg(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d);
glow_status glow_ev_topk(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d);
glow_status glow_ev_cumulative(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                               glow_diag *d);
glow_status glow_ev_softmax(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d);
glow_status glow_ev_matmul(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
/* eval_dyn.c: NonZero, Unique, Compress, NonMaxSuppression */
glow_status glow_ev_dyn(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d);
/* eval_control.c: IF, LOOP */
glow_status glow_ev_control(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d);
/* eval_prim.c */
glow_status glow_ev_splat(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);
glow_status glow_ev_insert_tensor(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                  glow_diag *d);
glow_status glow_ev_conv(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d);
glow_status glow_ev_conv_transpose(const glow_node *n, const glow_tensor *ins,
                                   glow_tensor *outs, glow_diag *d);
glow_status glow_ev_pool(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d);
glow_status glow_ev_gemm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                         glow_diag *d);
glow_status glow_ev_channel_norm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                 glow_diag *d);
glow_status glow_ev_axis_norm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d);
glow_status glow_ev_lrn(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                        glow_diag *d);
glow_status glow_ev_lp_norm(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d);
glow_status glow_ev_resize(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                           glow_diag *d);
/* eval_nn.c: y[m, nn] = a[m, k] b[k, nn] (b_trans: b is [nn, k]), plain f32 loops. */
void glow_ev_mm_f32(int64_t m, int64_t nn, int64_t k, const float *a, const float *b,
                    bool b_trans, float *y);
/* eval_fast.c: runs n with plain f32 loops when it is an f32 elementwise op or MatMul of the
 * usual shapes; false (nothing written) when the generic routine must run instead. */
bool glow_ev_fast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs);

/* eval.c: whether this process evaluates as the float64 reference (GLOWC_EVAL_REFERENCE set
 * and not "0", read once): the f32 fast paths (glow_ev_fast, f32 Conv, f32 Gemm and
 * FullyConnected) decline, so every float reduction runs in the generic routines, which
 * accumulate in f64 and round once on the store. The differential fuzzer's third opinion
 * (docs/fuzzing.md, "Telling rounding from bugs"); products never set it. */
bool glow_ev_reference(void);

/* A window op over exactly three spatial dims. */
typedef struct win3 {
    int nsp;
    int64_t n, c, m;              /* batch, input channels, output channels */
    int64_t in[3], out[3], k[3], s[3], pb[3], pe[3], dil[3];
    int64_t group;
} win3;
/* eval_conv.c: the window attributes of n for input x (rank 3..5), normalized to three
 * spatial dims; the floor-based output sizes; the [N, c, spatial...] shape of a result. */
glow_status glow_ev_read_win(const glow_node *n, const glow_type *x, win3 *w, glow_diag *d);
glow_status glow_ev_forward_out(const glow_node *n, win3 *w, glow_diag *d);
void glow_ev_nc_dims(const win3 *w, int64_t c, const int64_t *sp, int64_t *dims);
/* eval_quant.c: every quantized node (docs/quantization.md), exact integer arithmetic. */
glow_status glow_ev_quant(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d);
/* Kinds with a quantized form, and whether these operand/result types are one of them. */
bool glow_ev_quant_kind(glow_node_kind k);
bool glow_ev_quant_types(glow_node_kind k, const glow_type *const *in, int nin,
                         const glow_type *out, int nout);

/* --- eval.c helpers --- */

/* "Kind 'name'" prefix for messages. */
const char *glow_ev_kind(const glow_node *n);
/* Fails with GLOW_ERR_BAD_SHAPE unless `t` has exactly the given rank and dims. */
glow_status glow_ev_expect_shape(const glow_node *n, const char *what, const glow_type *t,
                                 int rank, const int64_t *dims, glow_diag *d);
/* Resolves a possibly negative axis against `rank`; fails with GLOW_ERR_BAD_ATTR. */
glow_status glow_ev_axis(const glow_node *n, int64_t axis, int rank, int *out, glow_diag *d);

static inline glow_dtype_class ev_class(glow_dtype t)
{
    switch (t) {
#define DTYPE(id, name, bytes, cls, onnx) case GLOW_##id: return cls;
#include "graph/dtypes.def"
#undef DTYPE
    default: return DC_QUANT;
    }
}

static inline size_t ev_size(glow_dtype t)
{
    switch (t) {
#define DTYPE(id, name, bytes, cls, onnx) case GLOW_##id: return bytes;
#include "graph/dtypes.def"
#undef DTYPE
    default: return 1;
    }
}

static inline bool ev_is_float(glow_dtype t) { return ev_class(t) == DC_FLOAT; }
static inline bool ev_is_int(glow_dtype t)
{
    return ev_class(t) == DC_SINT || ev_class(t) == DC_UINT;
}
static inline bool ev_is_num(glow_dtype t) { return ev_is_float(t) || ev_is_int(t); }
/* Unsigned integers and bool compare as uint64_t; signed ones as int64_t. */
static inline bool ev_is_unsigned(glow_dtype t)
{
    return ev_class(t) == DC_UINT || ev_class(t) == DC_BOOL;
}

static inline int64_t ev_numel(const glow_type *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

/* Row-major strides in elements. */
static inline void ev_strides(const glow_type *t, int64_t *s)
{
    int64_t acc = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= t->dims[i];
    }
}

/* Advances a row-major multi-index (the odometer used by every N-d loop). */
static inline void ev_next(int rank, const int64_t *dims, int64_t *idx)
{
    for (int i = rank - 1; i >= 0; i--) {
        if (++idx[i] < dims[i])
            return;
        idx[i] = 0;
    }
}

/* Product of dims[lo, hi). */
static inline int64_t ev_prod(const int64_t *dims, int lo, int hi)
{
    int64_t p = 1;
    for (int i = lo; i < hi; i++)
        p *= dims[i];
    return p;
}

static inline void ev_copy(void *dst, int64_t di, const void *src, int64_t si, size_t es)
{
    memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, es);
}

/* The typed kernels' code of kind t (kernels/gk_ops.h), 0 for the quantized kinds: element
 * access and the elementwise math are kernels/typed_math.h's, shared with the CPU backend. */
static inline int ev_gk(glow_dtype t)
{
    if (t <= GLOW_BOOL)
        return (int)t + 1;
    return t >= GLOW_F8E4M3FN && t <= GLOW_I2 ? (int)(t - GLOW_F8E4M3FN) + GK_DT_F8E4M3FN : 0;
}
_Static_assert(GLOW_F32 + 1 == GK_DT_F32 && GLOW_F64 + 1 == GK_DT_F64 &&
               GLOW_I64 + 1 == GK_DT_I64 && GLOW_BOOL + 1 == GK_DT_BOOL &&
               GLOW_I2 - GLOW_F8E4M3FN == GK_DT_I2 - GK_DT_F8E4M3FN,
               "gk_dtype follows dtypes.def");

/* Reads element i of any non-quantized kind as f64 (u64 as unsigned, bool as 0/1). */
static inline double ev_ldf(glow_dtype t, const void *p, int64_t i)
{
    return gk_ldf(ev_gk(t), p, i);
}

/* Reads element i of an integer or bool kind as int64_t (u64 keeps its bit pattern). */
static inline int64_t ev_ldi(glow_dtype t, const void *p, int64_t i)
{
    return gk_ldi(ev_gk(t), p, i);
}

/* Writes an integer to an integer or bool kind: integers wrap modulo 2^bits (as C and ONNX
 * casts between integers do), bool stores v != 0. */
static inline void ev_sti(glow_dtype t, void *p, int64_t i, int64_t v)
{
    gk_sti(ev_gk(t), p, i, v);
}

/* Float to integer without undefined behaviour: truncates toward zero, NaN gives 0 and
 * out-of-range values saturate to the kind's limits (ONNX leaves these cases undefined). */
static inline int64_t ev_f2i(glow_dtype t, double v) { return gk_f2i(ev_gk(t), v); }

/* Writes an f64 to any non-quantized kind: float kinds round to nearest even (f16/bf16 via
 * f32), integer kinds go through ev_f2i, bool stores v != 0 (so NaN is true). */
static inline void ev_stf(glow_dtype t, void *p, int64_t i, double v)
{
    gk_stf(ev_gk(t), p, i, v);
}

/* Reads an index operand (i32 or i64, checked by glow_eval_supported). */
static inline int64_t ev_index(const glow_tensor *t, int64_t i)
{
    return ev_ldi(t->type.dtype, t->data, i);
}

#endif
