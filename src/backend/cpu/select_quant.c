// select_quant.c - Kernel operations for the quantized instructions: the int8 convolution,
// depthwise convolution and pools on NHWC activations (qprepare.c made them), the layout
// conversions around them, and the quantized elementwise ops, Quantize and Dequantize in
// either layout (elementwise code reads the bytes in whatever order they are).
//
// Every multiplier and range is computed here the way src/eval/eval_quant.c computes it, from
// kernels/qmath.h, so the kernels give the evaluator's integers.
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_ops.h"
#include "qconv/qres.h"
#include "qmath.h"

static bool is_q8(glow_dtype t) { return t == GLOW_U8Q || t == GLOW_I8Q; }

/* The byte range of a quantized result, narrowed by a fused Relu or Clip (act, with Clip's
 * bounds a and b) through qmath.h, as the evaluator narrows it. */
static void q_range(const glow_type *y, const char *act, double a, double b, int *lo, int *hi)
{
    int32_t l, h;
    glow_dtype_qrange(y->dtype, &l, &h);
    int code = !act ? GK_QACT_NONE : !strcmp(act, "Relu") ? GK_QACT_RELU
             : !strcmp(act, "Clip") ? GK_QACT_CLIP : GK_QACT_NONE;
    gk_q_act_range(code, a, b, y->scale, y->offset, &l, &h);
    *lo = l;
    *hi = h;
}

/* The fused activation of a quantized conv; false for one the requantization cannot apply. */
static bool fused_range(const ir_instr *in, const glow_type *y, int *lo, int *hi)
{
    const glow_attr *act = cpu_attr(in, GA_FUSED_ACT);
    const glow_attr *a = cpu_attr(in, GA_FUSED_ALPHA), *b = cpu_attr(in, GA_FUSED_BETA);
    const char *name = act ? act->v.s : NULL;
    if (name && strcmp(name, "Relu") && strcmp(name, "Clip"))
        return false;
    q_range(y, name, a ? a->v.f : 0, b ? b->v.f : 0, lo, hi);
    return true;
}

static int64_t attr_at(const ir_instr *in, glow_attr_id id, int i, int64_t dflt)
{
    const glow_attr *a = cpu_attr(in, id);
    return a && (int)a->n > i ? a->v.ints[i] : dflt;
}

/* The int8 convolution's kernel on isa (the packing in qprepare.c follows the same choice). */
static cpu_kernel qconv_kernel(const cpu_isa *isa)
{
    return isa->avx512vnni ? CPU_K_qconv_u8_avx512vnni
           : isa->avxvnni  ? CPU_K_qconv_u8_avxvnni
           : isa->avx2     ? CPU_K_qconv_u8_avx2
                           : CPU_K_qconv_u8_scalar;
}

/* A q8 family's variant: avx512, avx2 or scalar. */
#define Q8(isa, op) \
    ((isa)->avx512 ? CPU_K_##op##_q8_avx512 : (isa)->avx2 ? CPU_K_##op##_q8_avx2 \
                                                         : CPU_K_##op##_q8_scalar)

/* cpu.qconv_nhwc [y, x, w, bias, mult, work] / cpu.qdwconv_nhwc [y, x, w, bias, mult]: 4-D
 * NHWC, or FullyConnected's [M][K] -> [M][N] as the 1x1 case; work is the units' counter
 * (qprepare.c says why the depthwise kernel has none). */
static bool sel_qconv(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *y = &yv->type, *x = &xv->type;
    bool dwc = in->kind == IK_CPU_QDWCONV_NHWC;
    bool res = !dwc && in->nops == 8;
    if ((in->nops != (dwc ? 5u : 6u) && !res) || cpu_overlap(yv, xv))
        return false;
    /* The real channel counts: the packed bias has M entries, the multipliers too, and 3
     * more with a folded RescaleQuantized (qprepare.c): the quantization `mid` of the
     * convolution's own result, which the rescale takes to y's. */
    int64_t mreal = glow_type_numel(&in->ops[dwc ? 4 : 3].v->type);
    int64_t nmult = glow_type_numel(&in->ops[4].v->type);
    glow_type mid = *y;
    float post_mult = 0.0f;
    if (!dwc && nmult == mreal + 3) {
        const float *mv = cpu_const_data(in->ops[4].v, GLOW_F32);
        if (!mv)
            return false;
        cpu_qtype_get(mv + mreal, &mid);
        post_mult = gk_q_multiplier(mid.scale, y->scale);
    } else if (nmult != mreal) {
        return false;
    }
    /* A folded residual Add [.., residual, qres] (qprepare.c fold_residual): qres holds the
     * convolution's own result's quantization, the kernel's rmode (a constant in the code: its
     * branches fold) and its parameters (qconv/qres.h). The residual is y's bytes or none of
     * them; x and y do not overlap (above). */
    const ir_value *rv = res ? in->ops[6].v : NULL, *qv = res ? in->ops[7].v : NULL;
    int rmode = 0;
    if (res) {
        const float *q = cpu_const_data(qv, GLOW_F32);
        if (!q || glow_type_numel(&qv->type) != 4 + GK_QRES_N || post_mult != 0.0f ||
            glow_type_numel(&rv->type) != glow_type_numel(y) ||
            (cpu_overlap(yv, rv) && rv->addr != yv->addr))
            return false;
        cpu_qtype_get(q, &mid);
        rmode = (int)q[3];
    }
    int lo, hi;
    if (!fused_range(in, &mid, &lo, &hi))
        return false;
    int64_t n, h, w, c, m, oh, ow;
    if (x->rank == 2) {
        n = x->dims[0], h = w = oh = ow = 1, c = x->dims[1], m = y->dims[1];
    } else {
        n = x->dims[0], h = x->dims[1], w = x->dims[2], c = x->dims[3];
        oh = y->dims[1], ow = y->dims[2], m = y->dims[3];
    }
    int64_t kh = attr_at(in, GA_KERNEL, 0, 1), kw = attr_at(in, GA_KERNEL, 1, 1);
    int64_t sh = attr_at(in, GA_STRIDES, 0, 1), sw = attr_at(in, GA_STRIDES, 1, 1);
    int64_t dh = attr_at(in, GA_DILATIONS, 0, 1), dw = attr_at(in, GA_DILATIONS, 1, 1);
    int64_t ph = attr_at(in, GA_PADS, 0, 0), pw = attr_at(in, GA_PADS, 1, 0);
    bool flip = x->dtype == GLOW_I8Q;
    int xz = x->offset + (flip ? 128 : 0);
    cpu_arg xp = cpu_ptr(xv, 0), wp = cpu_ptr(in->ops[2].v, 0), bp = cpu_ptr(in->ops[3].v, 0),
            mp = cpu_ptr(in->ops[4].v, 0), yp = cpu_ptr(yv, 0);
    /* Zero points and the clamp are passed at run time (cpu_size(true, ...)): every layer has
     * its own, and as constants they kept layers of one shape from sharing a compiled function
     * (docs/quantization.md, "Compile time"). */
    if (in->kind == IK_CPU_QDWCONV_NHWC) {
        /* Where 512-bit operations are split in two (Zen 4), the AVX2 kernel's taps in pairs
         * (one widening per input byte and pair) beat the AVX-512 template's widening per tap:
         * MobileNet v2 int8 0.946x the time (docs/quantization.md). Same packing, same bytes. */
        cpu_kernel k = isa->split512 ? CPU_K_qdwconv_q8_avx2 : Q8(isa, qdwconv);
        CPU_OP(op, k, xp, wp, bp, mp, yp, cpu_num(flip), cpu_size(true, xz),
               cpu_size(true, y->offset), cpu_size(true, lo), cpu_size(true, hi), cpu_num(n),
               cpu_num(mreal), cpu_num(h), cpu_num(w), cpu_num(c), cpu_num(oh), cpu_num(ow),
               cpu_num(m), cpu_num(kh), cpu_num(kw), cpu_num(sh), cpu_num(sw), cpu_num(dh),
               cpu_num(dw), cpu_num(ph), cpu_num(pw), cpu_null());
        return true;
    }
    /* c is the padded channel stride: the packing rounds C up to 4 all the same, and the
     * weights of the padding channels are zero. */
    /* The kernel the weights were packed for (qprepare.c): the isa's direct one, or as its
     * qkernel attribute says. */
    const glow_attr *ka = cpu_attr(in, GA_QKERNEL);
    bool wino = ka && !strcmp(ka->v.s, "winograd"), w7 = ka && !strcmp(ka->v.s, "7-bit");
    if (wino && (kh != 3 || kw != 3 || sh != 1 || sw != 1 || dh != 1 || dw != 1 ||
                 in->ops[2].v->type.dtype != GLOW_I16))
        return false;
    cpu_kernel kern = wino ? CPU_K_qwino_u8_avx2 : w7 ? CPU_K_qconv7_u8_avx2 : qconv_kernel(isa);
    CPU_OP(op, kern, xp, wp, bp, mp, yp, cpu_num(n), cpu_num(h), cpu_num(w),
           cpu_num(c), cpu_num(c), cpu_num(mreal), cpu_num(m), cpu_num(kh), cpu_num(kw),
           cpu_num(oh), cpu_num(ow), cpu_num(sh), cpu_num(sw), cpu_num(dh), cpu_num(dw),
           cpu_num(ph), cpu_num(pw), cpu_size(true, xz), cpu_num(flip),
           cpu_size(true, mid.offset), cpu_size(true, lo), cpu_size(true, hi),
           cpu_real(post_mult), cpu_size(true, y->offset), cpu_num(y->dtype == GLOW_I8Q),
           res ? cpu_ptr(rv, 0) : cpu_null(), res ? cpu_ptr(qv, 4 * sizeof(float)) : cpu_null(),
           cpu_num(rmode), cpu_ptr(in->ops[5].v, 0));
    return true;
}

/* cpu.qmaxpool_nhwc / cpu.qavgpool_nhwc [y, x] with the pool's attributes. */
static bool sel_qpool(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *y = &yv->type, *x = &xv->type;
    if (x->rank != 4 || y->rank != 4 || cpu_overlap(yv, xv))
        return false;
    int64_t n = x->dims[0], h = x->dims[1], w = x->dims[2], cs = x->dims[3];
    int64_t oh = y->dims[1], ow = y->dims[2], ycs = y->dims[3];
    int64_t kh = attr_at(in, GA_KERNEL, 0, 1), kw = attr_at(in, GA_KERNEL, 1, 1);
    int64_t sh = attr_at(in, GA_STRIDES, 0, 1), sw = attr_at(in, GA_STRIDES, 1, 1);
    int64_t dh = attr_at(in, GA_DILATIONS, 0, 1), dw = attr_at(in, GA_DILATIONS, 1, 1);
    int64_t ph = attr_at(in, GA_PADS, 0, 0), pw = attr_at(in, GA_PADS, 1, 0);
    /* Channels: the NHWC types carry the padded count; the pools run over all of them. */
    int64_t c = cs < ycs ? cs : ycs;
    int sgn = x->dtype == GLOW_I8Q;
    if (in->kind == IK_CPU_QMAXPOOL_NHWC) {
        CPU_OP(op, Q8(isa, qmaxpool), cpu_ptr(xv, 0), cpu_ptr(yv, 0), cpu_num(sgn), cpu_num(n),
               cpu_num(c), cpu_num(h), cpu_num(w), cpu_num(cs), cpu_num(oh), cpu_num(ow),
               cpu_num(ycs), cpu_num(kh), cpu_num(kw), cpu_num(sh), cpu_num(sw), cpu_num(dh),
               cpu_num(dw), cpu_num(ph), cpu_num(pw));
        return true;
    }
    /* count_include_pad counts the model's own end pads (without ceil_mode's extra). */
    int64_t phe = attr_at(in, GA_PADS, 2, 0) - attr_at(in, GA_CEIL_EXTRA, 0, 0);
    int64_t pwe = attr_at(in, GA_PADS, 3, 0) - attr_at(in, GA_CEIL_EXTRA, 1, 0);
    const glow_attr *cip = cpu_attr(in, GA_COUNT_INCLUDE_PAD);
    int lo, hi;
    q_range(y, NULL, 0, 0, &lo, &hi);
    CPU_OP(op, Q8(isa, qavgpool), cpu_ptr(xv, 0), cpu_ptr(yv, 0), cpu_num(sgn),
           cpu_num(x->offset), cpu_real(x->scale), cpu_real(y->scale), cpu_num(y->offset),
           cpu_num(lo), cpu_num(hi), cpu_num(n), cpu_num(c), cpu_num(h), cpu_num(w), cpu_num(cs),
           cpu_num(oh), cpu_num(ow), cpu_num(ycs), cpu_num(kh), cpu_num(kw), cpu_num(sh),
           cpu_num(sw), cpu_num(dh), cpu_num(dw), cpu_num(ph), cpu_num(pw), cpu_num(phe),
           cpu_num(pwe), cpu_num(cip && cip->v.i));
    return true;
}

/* cpu.q_to_nhwc / cpu.q_from_nhwc: [N][C][H][W] <-> [N][H][W][cs]. */
static bool sel_qlayout(const ir_instr *in, cpu_op *op)
{
    bool to = in->kind == IK_CPU_Q_TO_NHWC;
    const ir_value *plain = in->ops[to ? 1 : 0].v, *nhwc = in->ops[to ? 0 : 1].v;
    const glow_type *p = &plain->type, *t = &nhwc->type;
    if (p->rank != 4 || t->rank != 4 || cpu_overlap(plain, nhwc))
        return false;
    int64_t hw = p->dims[2] * p->dims[3];
    if (to)
        CPU_OP(op, CPU_K_q_to_nhwc_u8_scalar, cpu_ptr(plain, 0), cpu_ptr(nhwc, 0),
               cpu_num(p->dims[0]), cpu_num(p->dims[1]), cpu_num(hw), cpu_num(t->dims[3]),
               cpu_num(t->offset));
    else
        CPU_OP(op, CPU_K_q_from_nhwc_u8_scalar, cpu_ptr(nhwc, 0), cpu_ptr(plain, 0),
               cpu_num(p->dims[0]), cpu_num(p->dims[1]), cpu_num(hw), cpu_num(t->dims[3]));
    return true;
}

/* The qadd kernel for binary op `code` of in's operands a (x) and b into the quantization
 * mid, then (post_mult != 0) rescaled into y's offset within [post_lo, post_hi]. */
static void sel_qbinary(const ir_instr *in, const cpu_isa *isa, int code, int64_t n,
                        const glow_type *mid, float post_mult, int32_t y_offset, int post_lo,
                        int post_hi, cpu_op *op)
{
    const glow_type *x = &in->ops[1].v->type, *b = &in->ops[2].v->type;
    float ma = code == GK_BIN_MUL ? gk_q_multiplier((double)x->scale * b->scale, mid->scale)
                                  : gk_q_multiplier(x->scale, mid->scale);
    int lo, hi;
    q_range(mid, NULL, 0, 0, &lo, &hi);
    CPU_OP(op, Q8(isa, qadd), cpu_num(code), cpu_num(n), cpu_ptr(in->ops[1].v, 0),
           cpu_ptr(in->ops[2].v, 0), cpu_ptr(in->ops[0].v, 0), cpu_num(x->dtype == GLOW_I8Q),
           cpu_num(x->offset), cpu_real(ma), cpu_num(b->dtype == GLOW_I8Q), cpu_num(b->offset),
           cpu_real(gk_q_multiplier(b->scale, mid->scale)), cpu_num(mid->offset), cpu_num(lo),
           cpu_num(hi), cpu_real(post_mult), cpu_num(y_offset), cpu_num(post_lo),
           cpu_num(post_hi));
}

/* Same-shape quantized elementwise ops, Quantize and Dequantize: one flat pass. */
static bool sel_qelem(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v;
    const glow_type *y = &yv->type;
    int64_t n = glow_type_numel(y);
    if (in->nout != 1 || in->nops < 2)
        return false;
    /* The elementwise operands (cpu.qbinary_post's constant is not one). */
    uint32_t nel = in->kind == IK_CPU_QBINARY_POST ? 3 : in->nops;
    for (uint32_t i = 1; i < nel; i++)
        if (glow_type_numel(&in->ops[i].v->type) != n ||
            (cpu_overlap(yv, in->ops[i].v) && in->ops[i].v->addr != yv->addr))
            return false;
    const glow_type *x = &in->ops[1].v->type;
    int lo, hi;
    switch ((int)in->kind) {
    case IK_QUANTIZE:
        if (x->dtype != GLOW_F32 || !is_q8(y->dtype))
            return false;
        q_range(y, NULL, 0, 0, &lo, &hi);
        CPU_OP(op, Q8(isa, quantize), cpu_num(n), cpu_ptr(in->ops[1].v, 0), cpu_ptr(yv, 0),
               cpu_real(y->scale), cpu_num(y->offset), cpu_num(lo), cpu_num(hi));
        return true;
    case IK_DEQUANTIZE:
        if (!is_q8(x->dtype) || y->dtype != GLOW_F32)
            return false;
        CPU_OP(op, Q8(isa, dequantize), cpu_num(n), cpu_ptr(in->ops[1].v, 0), cpu_ptr(yv, 0),
               cpu_num(x->dtype == GLOW_I8Q), cpu_real(x->scale), cpu_num(x->offset));
        return true;
    default:
        break;
    }
    /* cpu.qbinary_post: the binary op into its own result's quantization `mid`, then the
     * folded rescale into y's (qprepare.c), as the two instructions computed them. */
    if (in->kind == IK_CPU_QBINARY_POST) {
        const float *post = in->nops == 4 ? cpu_const_data(in->ops[3].v, GLOW_F32) : NULL;
        if (!post || glow_type_numel(&in->ops[3].v->type) != 6)
            return false;
        glow_type mid = *y;
        cpu_qtype_get(post + 1, &mid);
        float post_mult = gk_q_multiplier(mid.scale, y->scale);
        if (post_mult == 0.0f)
            return false;
        sel_qbinary(in, isa, (int)post[0], n, &mid, post_mult, y->offset, (int)post[4],
                    (int)post[5], op);
        return true;
    }
    for (uint32_t i = 0; i < in->nops; i++)
        if (!is_q8(in->ops[i].v->type.dtype))
            return false;
    float ma = gk_q_multiplier(x->scale, y->scale);
    switch ((int)in->kind) {
    case IK_RELU: case IK_CLIP: case IK_RESCALE_QUANTIZED: {
        const glow_attr *a = cpu_attr(in, GA_MIN), *b = cpu_attr(in, GA_MAX);
        const char *act = in->kind == IK_RELU ? "Relu" : in->kind == IK_CLIP ? "Clip" : NULL;
        q_range(y, act, a ? a->v.f : 0, b ? b->v.f : 0, &lo, &hi);
        CPU_OP(op, Q8(isa, rescale), cpu_num(n), cpu_ptr(in->ops[1].v, 0), cpu_ptr(yv, 0),
               cpu_num(x->dtype == GLOW_I8Q), cpu_num(x->offset), cpu_real(ma),
               cpu_num(y->offset), cpu_num(lo), cpu_num(hi));
        return true;
    }
    case IK_ADD: case IK_SUB: case IK_MUL: case IK_MAX: case IK_MIN: {
        if (in->nops != 3)
            return false;
        sel_qbinary(in, isa, cpu_bin_code(in->kind), n, y, 0.0f, 0, 0, 0, op);
        return true;
    }
    default:
        return false;
    }
}

/* cpu.qconcat_nhwc: each operand's pixels copied into their channels of the result's. */
static bool sel_qconcat(const ir_instr *in, cpu_op *ops, int *nops)
{
    const ir_value *yv = in->ops[0].v;
    const glow_type *y = &yv->type;
    int nin = (int)in->nops - 1;
    if (y->rank != 4 || nin < 1 || nin > CPU_MAX_CALLS || !cpu_no_alias(in))
        return false;
    int64_t pixels = y->dims[0] * y->dims[1] * y->dims[2], cs = y->dims[3], at = 0;
    for (int i = 0; i < nin; i++) {
        const ir_value *v = in->ops[1 + i].v;
        const glow_type *t = &v->type;
        if (t->rank != 4 || t->dims[0] * t->dims[1] * t->dims[2] != pixels)
            return false;
        CPU_OP(&ops[i], CPU_K_copy2d_u8_scalar, cpu_num(pixels), cpu_num(t->dims[3]),
               cpu_ptr(v, 0), cpu_num(t->dims[3]), cpu_ptr(yv, (uint64_t)at), cpu_num(cs));
        at += t->dims[3];
    }
    if (at != cs)
        return false;
    *nops = nin;
    return true;
}

bool cpu_select_quant(const ir_instr *in, const cpu_isa *isa, cpu_op *op, int *nops)
{
    *nops = 1;
    switch ((int)in->kind) {
    case IK_CPU_QCONCAT_NHWC:
        return sel_qconcat(in, op, nops);
    case IK_CPU_QCONV_NHWC: case IK_CPU_QDWCONV_NHWC:
        return sel_qconv(in, isa, op);
    case IK_CPU_QMAXPOOL_NHWC: case IK_CPU_QAVGPOOL_NHWC:
        return sel_qpool(in, isa, op);
    case IK_CPU_Q_TO_NHWC: case IK_CPU_Q_FROM_NHWC:
        return sel_qlayout(in, op);
    default:
        return sel_qelem(in, isa, op);
    }
}
