// select.c - Picks the kernel operations for one IR instruction: which kernel of the library
// (a kernels.def row, as a cpu_kernel), with which constant shapes, strides and buffer
// offsets; instructions no kernel covers fall back to the evaluator.
//
// Only exact cases are taken (f32 operands of the shapes the kernel expects, no aliasing a
// kernel cannot tolerate); everything else returns false and runs through the evaluator, so
// adding a kernel never changes what the backend can run, only how fast. The backend's own
// instructions (prepare.c) always have a kernel on the ISA they were prepared for.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/repack.h"
#include "conv/conv_plan.h"
#include "gk_ops.h"

const char *cpu_kernel_name(cpu_kernel k)
{
    static const char *const names[] = {
#define KERNEL(op, dtype, isa, ...) "gk_" #op "_" #dtype "_" #isa,
#include "kernels.def"
#undef KERNEL
    };
    return (unsigned)k < CPU_K_COUNT ? names[k] : "?";
}

/* The AVX-512, AVX2 or NEON variant of a blocked-layout kernel, by the target's ISA. */
#define FAST(isa, op)                                                                         \
    ((isa)->avx512 ? CPU_K_##op##_f32_avx512                                                  \
     : (isa)->neon ? CPU_K_##op##_f32_neon : CPU_K_##op##_f32_avx2)

/* Same-shape elementwise ops (in either layout: every operand has the same type). */
static bool sel_elementwise(const ir_instr *in, cpu_op *op)
{
    const ir_value *y = in->ops[0].v;
    int64_t n = glow_type_numel(&y->type);
    int code = cpu_eltwise_op(in);
    if (!code)
        return false;
    /* In place is fine only when the output is exactly an input. */
    for (uint32_t i = 1; i < in->nops; i++)
        if (cpu_overlap(y, in->ops[i].v) && in->ops[i].v->addr != y->addr)
            return false;
    if (code == GK_CHAIN_CLIP) {
        const glow_attr *lo = cpu_attr(in, GA_MIN), *hi = cpu_attr(in, GA_MAX);
        CPU_OP(op, CPU_K_act_f32_scalar, cpu_num(GK_ACT_CLIP), cpu_real(lo ? lo->v.f : -INFINITY),
               cpu_real(hi ? hi->v.f : INFINITY), cpu_elements(n), cpu_ptr(in->ops[1].v, 0),
               cpu_ptr(y, 0));
    } else if (code == GK_CHAIN_LEAKY_RELU) {
        const glow_attr *al = cpu_attr(in, GA_ALPHA);
        CPU_OP(op, CPU_K_act_f32_scalar, cpu_num(GK_ACT_LEAKY_RELU),
               cpu_real(al ? al->v.f : 0.01), cpu_real(0), cpu_elements(n),
               cpu_ptr(in->ops[1].v, 0), cpu_ptr(y, 0));
    } else if (code > 0) {
        CPU_OP(op, CPU_K_unary_f32_scalar, cpu_num(code), cpu_elements(n),
               cpu_ptr(in->ops[1].v, 0), cpu_ptr(y, 0));
    } else {
        CPU_OP(op, CPU_K_binary_f32_scalar, cpu_num(-code), cpu_elements(n),
               cpu_ptr(in->ops[1].v, 0), cpu_ptr(in->ops[2].v, 0), cpu_ptr(y, 0));
    }
    return true;
}

void cpu_tail_operands(const ir_instr *in, uint32_t from, const ir_value **bias,
                       const ir_value **res)
{
    *bias = *res = NULL;
    for (uint32_t i = from; i < in->nops; i++) {
        const ir_value *v = in->ops[i].v;
        if (v->type.rank == 1)
            *bias = v;
        else
            *res = v;
    }
}

/* cpu.conv_nchwc / cpu.dwconv_nchwc: input, output (and residual) in the blocked layout of
 * the target's vector length, weights repacked for it. */
static bool sel_conv_nchwc(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    int v = cpu_isa_vlen(isa);
    cpu_conv cp;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *bias, *res;
    cpu_tail_operands(in, 4, &bias, &res);
    const glow_type *y = &yv->type, *x = &xv->type;
    if (!v || !cpu_conv_attrs(in, &cp) || !cpu_nchwc_bytes(y, v) ||
        (res && !glow_type_equal(&res->type, y)))
        return false;
    for (uint32_t i = 1; i < in->nops; i++)
        if (cpu_overlap(yv, in->ops[i].v) && !(in->ops[i].v == res && res->addr == yv->addr))
            return false;
    int64_t n, mb, oh, ow, xn, xblocks, ih, iw;
    cpu_nchwc_dims(y, v, &n, &mb, &oh, &ow);
    cpu_nchwc_dims(x, v, &xn, &xblocks, &ih, &iw);
    /* A first conv's input block holds its cv < v channels whole. */
    int64_t cv = x->rank == 5 ? x->dims[4] : v;
    cpu_arg act = cpu_num(cp.act), alpha = cpu_real(cp.alpha), beta = cpu_real(cp.beta);
    /* Sizes at run time for a long reduction (a direct convolution's output blocks are a loop
     * of units around it) or many depthwise blocks. The depthwise kernel's plane stays
     * constant. */
    bool deep = xblocks / cp.g >= CPU_DEEP_BLOCKS;
    if (in->kind == IK_CPU_DWCONV_NCHWC) {
        CPU_OP(op, FAST(isa, dwconv2d_nchwc), cpu_ptr(yv, 0), cpu_ptr(xv, 0),
               cpu_ptr(in->ops[2].v, 0), cpu_opt_ptr(bias), cpu_opt_ptr(res),
               cpu_size(deep, n), cpu_size(deep, xblocks), cpu_num(ih), cpu_num(iw), cpu_num(oh),
               cpu_num(ow), cpu_num(cp.k[0]), cpu_num(cp.k[1]), cpu_num(cp.s[0]),
               cpu_num(cp.s[1]), cpu_num(cp.p[0]), cpu_num(cp.p[1]), cpu_num(cp.dl[0]),
               cpu_num(cp.dl[1]), act, alpha, beta, cpu_ptr(in->ops[3].v, 0));
        return true;
    }
    /* A direct convolution's form, tile width and last tile (conv_plan.h) stay constant, so
     * that its kernel keeps the one register tile it needs (with them varying, every width
     * was compiled in: ONNX's ResNet-50 took 13 s instead of 5.4). */
    gk_conv_tiling tl = gk_conv_tiling_of((size_t)ih, (size_t)iw, (size_t)oh, (size_t)ow,
                                          (size_t)cp.k[0], (size_t)cp.k[1], (size_t)cp.s[0],
                                          (size_t)cp.s[1], (size_t)cp.p[0], (size_t)cp.p[1],
                                          (size_t)v);
    CPU_OP(op, FAST(isa, conv2d_nchwc), cpu_ptr(yv, 0), cpu_ptr(xv, 0), cpu_ptr(in->ops[2].v, 0),
           cpu_opt_ptr(bias), cpu_opt_ptr(res), cpu_size(deep, n), cpu_num(cp.g),
           cpu_size(deep, xblocks / cp.g), cpu_num(cv), cpu_size(deep, ih), cpu_size(deep, iw),
           cpu_size(deep, mb), cpu_size(deep, oh), cpu_size(deep, ow), cpu_num(cp.k[0]),
           cpu_num(cp.k[1]), cpu_num(cp.s[0]), cpu_num(cp.s[1]), cpu_num(cp.p[0]),
           cpu_num(cp.p[1]), cpu_num(cp.dl[0]), cpu_num(cp.dl[1]), cpu_num(tl.form),
           cpu_num((int64_t)tl.npw), cpu_num((int64_t)tl.tail), act, alpha, beta,
           cpu_ptr(in->ops[3].v, 0));
    return true;
}

/* cpu.to_nchwc / cpu.from_nchwc: NCHW [N][C][HW] <-> blocked [N][ceil(C/cv)][HW][cv]. */
static bool sel_convert(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    bool to = in->kind == IK_CPU_TO_NCHWC;
    const ir_value *plain = in->ops[to ? 1 : 0].v, *blk = in->ops[to ? 0 : 1].v;
    const glow_type *p = &plain->type, *b = &blk->type;
    if (!cpu_isa_vlen(isa) || p->rank != 4 || b->rank != 5 || cpu_overlap(plain, blk))
        return false;
    int64_t hw = p->dims[2] * p->dims[3];
    bool big = glow_type_numel(p) >= CPU_VARY_ELEMENTS;
    if (to)
        CPU_OP(op, FAST(isa, to_nchwc), cpu_ptr(blk, 0), cpu_ptr(plain, 0),
               cpu_size(big, p->dims[0]), cpu_size(big, p->dims[1]), cpu_size(big, hw),
               cpu_num(b->dims[4]));
    else
        CPU_OP(op, FAST(isa, from_nchwc), cpu_ptr(plain, 0), cpu_ptr(blk, 0),
               cpu_size(big, p->dims[0]), cpu_size(big, p->dims[1]), cpu_size(big, hw));
    return true;
}

/* MatMul / FullyConnected, plain or (cpu.gemm_packed) with B in panels: [y, a, b, ...]. */
static bool sel_matmul(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    bool packed = in->kind == IK_CPU_GEMM_PACKED;
    const glow_type *y = &in->ops[0].v->type, *a = &in->ops[1].v->type,
                    *b = &in->ops[2].v->type;
    const ir_value *bias = NULL, *res = NULL;
    int r = a->rank;
    /* Every operand is f32 but the work counter (cpu.gemm_packed's operand 3). */
    for (uint32_t i = 0; i < in->nops; i++)
        if (in->ops[i].v->type.dtype != GLOW_F32 && !(packed && i == 3))
            return false;
    if (in->nout != 1 || r < 2 || y->rank != r || !cpu_no_alias(in))
        return false;
    int act;
    double alpha, beta;
    if (!cpu_fused_act(in, &act, &alpha, &beta))
        return false;
    int64_t m = a->dims[r - 2], k = a->dims[r - 1], n = y->dims[r - 1];
    if (y->dims[r - 2] != m)
        return false;
    if (packed) {
        int v = cpu_isa_vlen(isa);
        cpu_tail_operands(in, 4, &bias, &res);
        if (!v || r != 2 || res || glow_type_numel(b) < (int64_t)glow_repack_gemm_b_floats(
                                                                k, n, 2 * v) ||
            (bias && glow_type_numel(&bias->type) != n))
            return false;
        CPU_OP(op, FAST(isa, gemm_packed), cpu_ptr(in->ops[0].v, 0), cpu_ptr(in->ops[1].v, 0),
               cpu_ptr(in->ops[2].v, 0), cpu_opt_ptr(bias), cpu_null(), cpu_num(m), cpu_num(n),
               cpu_num(k), cpu_num(k), cpu_num(n), cpu_num(act), cpu_real(alpha), cpu_real(beta),
               cpu_ptr(in->ops[3].v, 0));
        return true;
    }
    if (b->rank != r || b->dims[r - 2] != k || b->dims[r - 1] != n)
        return false;
    for (int i = 0; i < r - 2; i++)
        if (b->dims[i] != a->dims[i] || y->dims[i] != a->dims[i])
            return false;
    if (in->kind == IK_FULLY_CONNECTED) {
        if (r != 2 || in->nops != 4 || glow_type_numel(&in->ops[3].v->type) != n)
            return false;
        bias = in->ops[3].v;
    } else if (in->nops != 3) {
        return false;
    }
    int64_t batch = glow_type_numel(y) / (m * n > 0 ? m * n : 1);
    CPU_OP(op, CPU_K_matmul_f32_scalar, cpu_ptr(in->ops[1].v, 0), cpu_ptr(in->ops[2].v, 0),
           cpu_opt_ptr(bias), cpu_ptr(in->ops[0].v, 0), cpu_num(batch), cpu_num(m), cpu_num(k),
           cpu_num(n), cpu_num(k * n), cpu_num(act), cpu_real(alpha), cpu_real(beta));
    return true;
}

/* cpu.maxpool_nchwc / cpu.avgpool_nchwc: blocked input and output; AvgPool undilated. */
static bool sel_pool_nchwc(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    int v = cpu_isa_vlen(isa);
    cpu_pool pp;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    if (!v || !cpu_pool_attrs(in, &pp) || !cpu_nchwc_bytes(&xv->type, v) ||
        !cpu_nchwc_bytes(&yv->type, v) || !cpu_no_alias(in))
        return false;
    int64_t n, cb, h, w, yn, yb, oh, ow;
    cpu_nchwc_dims(&xv->type, v, &n, &cb, &h, &w);
    cpu_nchwc_dims(&yv->type, v, &yn, &yb, &oh, &ow);
    bool deep = cb >= CPU_DEEP_BLOCKS;
    if (in->kind == IK_CPU_MAXPOOL_NCHWC) {
        CPU_OP(op, FAST(isa, maxpool_nchwc), cpu_ptr(yv, 0), cpu_ptr(xv, 0),
               cpu_size(deep, n), cpu_size(deep, cb), cpu_num(h), cpu_num(w), cpu_num(oh),
               cpu_num(ow), cpu_num(pp.k[0]), cpu_num(pp.k[1]), cpu_num(pp.s[0]),
               cpu_num(pp.s[1]), cpu_num(pp.p[0]), cpu_num(pp.p[1]), cpu_num(pp.dl[0]),
               cpu_num(pp.dl[1]));
        return true;
    }
    if (pp.dl[0] != 1 || pp.dl[1] != 1)
        return false;
    CPU_OP(op, FAST(isa, avgpool_nchwc), cpu_ptr(yv, 0), cpu_ptr(xv, 0), cpu_size(deep, n),
           cpu_size(deep, cb), cpu_num(h), cpu_num(w), cpu_num(oh), cpu_num(ow), cpu_num(pp.k[0]),
           cpu_num(pp.k[1]), cpu_num(pp.s[0]), cpu_num(pp.s[1]), cpu_num(pp.p[0]), cpu_num(pp.p[1]),
           cpu_num(pp.pe[0]), cpu_num(pp.pe[1]), cpu_num(pp.cip));
    return true;
}

/* The 6-D transpose kernel over 4-byte elements: d[i] extents, st[i] source strides. */
static void transpose_op(const ir_instr *in, const int64_t *d, const int64_t *st, cpu_op *op)
{
    CPU_OP(op, CPU_K_transpose_b32_scalar, cpu_ptr(in->ops[1].v, 0), cpu_ptr(in->ops[0].v, 0),
           cpu_num(d[0]), cpu_num(d[1]), cpu_num(d[2]), cpu_num(d[3]), cpu_num(d[4]), cpu_num(d[5]),
           cpu_num(st[0]), cpu_num(st[1]), cpu_num(st[2]), cpu_num(st[3]), cpu_num(st[4]),
           cpu_num(st[5]));
}

static bool sel_transpose(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *perm = cpu_attr(in, GA_PERM);
    int r = x->rank;
    if (in->nout != 1 || in->nops != 2 || glow_dtype_size(x->dtype) != 4 ||
        y->dtype != x->dtype || r < 1 || r > 6 || !perm || perm->n != (uint32_t)r ||
        !cpu_no_alias(in))
        return false;
    int64_t stride[6], d[6], st[6];
    stride[r - 1] = 1;
    for (int i = r - 2; i >= 0; i--)
        stride[i] = stride[i + 1] * x->dims[i + 1];
    for (int i = 0; i < 6; i++)
        d[i] = 1, st[i] = 0;
    for (int i = 0; i < r; i++) {
        int64_t pi = perm->v.ints[i];
        if (pi < 0 || pi >= r || y->dims[i] != x->dims[pi])
            return false;
        d[6 - r + i] = x->dims[pi];
        st[6 - r + i] = stride[pi];
    }
    transpose_op(in, d, st, op);
    return true;
}

/* Broadcast of 4-byte elements: the transpose kernel with stride 0 on the broadcast dims
 * (the operand is right-aligned against the result, NumPy style). */
static bool sel_broadcast(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    int r = y->rank;
    if (in->nout != 1 || in->nops != 2 || glow_dtype_size(x->dtype) != 4 ||
        y->dtype != x->dtype || r < 1 || r > 6 || x->rank > r || !cpu_no_alias(in))
        return false;
    int64_t xs[GLOW_MAX_DIMS], d[6], st[6], stride = 1;
    for (int j = x->rank - 1; j >= 0; j--) {
        xs[j] = stride;
        stride *= x->dims[j];
    }
    for (int i = 0; i < 6; i++)
        d[i] = 1, st[i] = 0;
    for (int i = 0; i < r; i++) {
        int j = i - (r - x->rank);
        if (j >= 0 && x->dims[j] != 1 && x->dims[j] != y->dims[i])
            return false;
        d[6 - r + i] = y->dims[i];
        st[6 - r + i] = j >= 0 && x->dims[j] != 1 ? xs[j] : 0;
    }
    transpose_op(in, d, st, op);
    return true;
}

/* Concat along `axis`: one strided row copy per input into its slot of the output. */
static bool sel_concat(const ir_instr *in, cpu_op *ops, int *nops)
{
    const glow_type *y = &in->ops[0].v->type;
    const glow_attr *ax = cpu_attr(in, GA_AXIS);
    int64_t axis = ax ? ax->v.i : -1;
    int nin = (int)(in->nops - in->nout);
    if (in->nout != 1 || nin < 1 || nin > CPU_MAX_CALLS || axis < 0 || axis >= y->rank ||
        !cpu_no_alias(in))
        return false;
    int64_t esize = (int64_t)glow_dtype_size(y->dtype), rows = 1, out_row = esize;
    for (int i = 0; i < axis; i++)
        rows *= y->dims[i];
    for (int i = (int)axis; i < y->rank; i++)
        out_row *= y->dims[i];
    int64_t at = 0;
    for (int i = 0; i < nin; i++) {
        const ir_value *v = in->ops[1 + i].v;
        if (v->type.dtype != y->dtype || v->type.rank != y->rank)
            return false;
        int64_t row = glow_type_bytes(&v->type) / (rows > 0 ? rows : 1);
        CPU_OP(&ops[i], CPU_K_copy2d_u8_scalar, cpu_num(rows), cpu_num(row), cpu_ptr(v, 0),
               cpu_num(row), cpu_ptr(in->ops[0].v, (uint64_t)at), cpu_num(out_row));
        at += row;
    }
    if (at != out_row)
        return false;
    *nops = nin;
    return true;
}

static bool sel_copy(const ir_instr *in, cpu_op *op)
{
    const ir_value *dst = in->ops[0].v, *src = in->ops[1].v;
    size_t bytes = glow_type_bytes(&dst->type);
    /* Overlapping copies need memmove's order, which a split over threads cannot keep. */
    if (bytes != glow_type_bytes(&src->type) || cpu_overlap(dst, src))
        return false;
    CPU_OP(op, CPU_K_copy2d_u8_scalar, cpu_num(1), cpu_num((int64_t)bytes), cpu_ptr(src, 0),
           cpu_num(0), cpu_ptr(dst, 0), cpu_num(0));
    return true;
}

/* Splat of an f32 value over the whole result. */
static bool sel_splat(const ir_instr *in, cpu_op *op)
{
    const ir_value *y = in->ops[0].v;
    const glow_attr *value = cpu_attr(in, GA_VALUE);
    if (in->nops != 1 || y->type.dtype != GLOW_F32)
        return false;
    CPU_OP(op, CPU_K_splat_f32_scalar, cpu_real(value ? value->v.f : 0),
           cpu_num(glow_type_numel(&y->type)), cpu_ptr(y, 0));
    return true;
}

bool cpu_select(const ir_instr *in, const cpu_isa *isa, cpu_op *ops, int *nops)
{
    *nops = 1;
    switch ((int)in->kind) {
    case IK_COPY: case IK_RESHAPE:
        return sel_copy(in, ops);
    case IK_CONV: case IK_CONV_TRANSPOSE: case IK_MAX_POOL: case IK_AVG_POOL: case IK_LP_POOL:
    case IK_RESIZE:
        return cpu_select_spatial(in, ops);
    case IK_CPU_CONV_NCHWC: case IK_CPU_DWCONV_NCHWC:
        return sel_conv_nchwc(in, isa, ops);
    case IK_CPU_WINO_NCHWC:
        return cpu_select_wino(in, isa, ops);
    case IK_CPU_PWDW_NCHWC:
        return cpu_select_pwdw(in, isa, ops);
    case IK_CPU_TO_NCHWC: case IK_CPU_FROM_NCHWC:
        return sel_convert(in, isa, ops);
    case IK_MATMUL:
        return sel_matmul(in, isa, ops) || cpu_select_reduce(in, ops, nops);
    case IK_FULLY_CONNECTED: case IK_CPU_GEMM_PACKED:
        return sel_matmul(in, isa, ops);
    case IK_CPU_MAXPOOL_NCHWC: case IK_CPU_AVGPOOL_NCHWC:
        return sel_pool_nchwc(in, isa, ops);
    case IK_TRANSPOSE:
        return sel_transpose(in, ops) || cpu_select_move(in, ops, nops);
    case IK_CONCAT:
        return sel_concat(in, ops, nops);
    case IK_BROADCAST:
        return sel_broadcast(in, ops) || cpu_select_move(in, ops, nops);
    case IK_SLICE: case IK_TILE: case IK_DEPTH_TO_SPACE: case IK_SPACE_TO_DEPTH:
    case IK_INSERT_TENSOR: case IK_PAD: case IK_TRILU:
        return cpu_select_move(in, ops, nops);
    case IK_GATHER: case IK_GATHER_ELEMENTS: case IK_GATHER_ND: case IK_SCATTER_ELEMENTS:
    case IK_SCATTER_ND: case IK_ONE_HOT: case IK_REVERSE_SEQUENCE:
        return cpu_select_index(in, ops, nops);
    case IK_SPLAT:
        return sel_splat(in, ops) || cpu_select_typed(in, ops);
    case IK_CAST: case IK_WHERE:
        return cpu_select_typed(in, ops);
    case IK_REDUCE_SUM: case IK_REDUCE_MEAN: case IK_REDUCE_MAX: case IK_REDUCE_MIN:
    case IK_REDUCE_PROD: case IK_REDUCE_L1: case IK_REDUCE_L2: case IK_REDUCE_LOG_SUM:
    case IK_REDUCE_LOG_SUM_EXP: case IK_REDUCE_SUM_SQUARE: case IK_ARG_MAX: case IK_ARG_MIN:
    case IK_CUMSUM: case IK_CUMPROD: case IK_TOPK: case IK_HARDMAX: case IK_LRN:
        return cpu_select_reduce(in, ops, nops);
    case IK_CPU_QCONV_NHWC: case IK_CPU_QDWCONV_NHWC: case IK_CPU_QMAXPOOL_NHWC:
    case IK_CPU_QAVGPOOL_NHWC: case IK_CPU_Q_TO_NHWC: case IK_CPU_Q_FROM_NHWC: case IK_QUANTIZE:
    case IK_DEQUANTIZE: case IK_RESCALE_QUANTIZED: case IK_CPU_QCONCAT_NHWC:
    case IK_CPU_QBINARY_POST:
        return cpu_select_quant(in, isa, ops, nops);
    default:
        return sel_elementwise(in, ops) || cpu_select_typed(in, ops) ||
               cpu_select_quant(in, isa, ops, nops);
    }
}

int cpu_fallbacks(const ir_function *f, const cpu_isa *isa, const ir_instr ***out,
                  int *nnative)
{
    cpu_op *ops = glow_xcalloc(CPU_MAX_CALLS, sizeof(*ops));
    const ir_instr **list = NULL;
    int n = 0, cap = 0, native = 0;
    for (const ir_instr *in = f->first; in; in = in->next) {
        if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC || in->kind == IK_CPU_ZERO)
            continue;
        int nops = 0;
        if (cpu_select(in, isa, ops, &nops)) {
            native++;
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            list = glow_xrealloc(list, (size_t)cap * sizeof(*list));
        }
        list[n++] = in;
    }
    free(ops);
    if (nnative)
        *nnative = native;
    if (out)
        *out = list;
    else
        free(list);
    return n;
}
