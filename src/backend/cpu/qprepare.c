// qprepare.c - The int8 part of the prepare step (docs/quantization.md, "CPU backend"): the
// quantized convolutions, FullyConnected layers and pools the int8 kernels run become the
// backend's own instructions on NHWC activations, with weights packed and biases corrected
// for the input's zero point at compile time.
//
// Layout: an 8-bit quantized 4-D activation stays NHWC ([N][H][W][cs], cs = C rounded up to 4)
// when every instruction touching it runs on NHWC bytes: the int8 convolutions and pools, and
// the quantized elementwise ops (Add, Relu, RescaleQuantized, ...) when all their operands are
// NHWC (elementwise code does not care about the order, only that it is the same). Anything
// else reading or writing it (a view, a Dequantize, a copy to an output) keeps it NCHW, and the
// int8 instructions convert around them (cpu.q_to_nhwc / cpu.q_from_nhwc into scratch buffers
// live just around them), so conversions appear only at the edges of int8 regions.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_ops.h"
#include "backend/cpu/winograd.h"
#include "qconv/qpack.h"
#include "qconv/qres.h"
#include "qconv/qwpack.h"
#include "qdwconv/qdwpack.h"
#include "qmath.h"

typedef enum { QP_NONE, QP_NHWC, QP_ELEM } qp_kind;

/* What the int8 step decided for one instruction. */
typedef struct qprep {
    qp_kind kind;               /* runs on NHWC (conv, fc, pool), or elementwise either way */
    ir_instr_kind own;          /* the backend's instruction it becomes (QP_NHWC) */
    ir_value *w, *bias, *mult;  /* packed weights, corrected bias, multipliers (convs) */
    ir_value *resq;             /* a folded residual Add's parameters (fold_residual) */
    const char *qkernel;        /* the qkernel attribute of a conv (NULL: none) */
} qprep;

/* A RescaleQuantized folded into the int8 convolution before it writes its result: the
 * multipliers constant carries QPOST more floats after the M multipliers, the quantization
 * of the convolution's own result (i8 or not, scale, offset), which sel_qconv reads. */
#define QPOST 3

static bool is_q8(glow_dtype t) { return t == GLOW_U8Q || t == GLOW_I8Q; }

const char *cpu_qconv_isa(const cpu_isa *isa)
{
    return isa->avx512vnni ? "avx512vnni" : isa->avxvnni ? "avxvnni" : isa->avx2 ? "avx2"
                                                                                  : "scalar";
}

/* Whether an int8 convolution of weights w (n bytes) runs the 7-bit weights kernel
 * (kernels/qconv/qconv7_avx2.c): AVX2 without VNNI and every weight in [-64, 64]
 * (`--reduce-range` makes them so). Whatever the reduction's length: on the short ones too (1x1
 * 16->96, 24->144, 32->192, the 3x3 3->32 first layer) it beats the int16 kernel by 6-28 % in
 * the JIT's code (MobileNet v2 int8 5 % faster end to end, SqueezeNet 4.5 %; Zen 3). */
static bool qconv7_fits(const cpu_isa *isa, const int8_t *w, size_t n)
{
    if (strcmp(cpu_qconv_isa(isa), "avx2"))
        return false;
    for (size_t i = 0; i < n; i++)
        if (w[i] < -64 || w[i] > 64)
            return false;
    return true;
}

/* The packing of the weights w8 (n of them): the 7-bit kernel's (the avxvnni row's bytes) where
 * qconv7_fits, else the isa's qconv row's. */
static const char *pack_isa(const cpu_isa *isa, const int8_t *w8, size_t n)
{
    return qconv7_fits(isa, w8, n) ? "avxvnni" : cpu_qconv_isa(isa);
}

/* The s8 weights with their offsets subtracted, when every value fits (u8 weights, or an
 * imported nonzero offset); NULL otherwise. w holds m groups of `per` values. */
static int8_t *signed_weights(const void *w, bool u8, const int32_t *off, int32_t off1,
                              int64_t m, int64_t per)
{
    int8_t *out = glow_xmalloc((size_t)(m * per) + 1);
    for (int64_t i = 0; i < m * per; i++) {
        int32_t v = u8 ? ((const uint8_t *)w)[i] : ((const int8_t *)w)[i];
        v -= off ? off[i / per] : off1;
        if (v < -128 || v > 127) {
            free(out);
            return NULL;
        }
        out[i] = (int8_t)v;
    }
    return out;
}

/* The x zero point as the kernels read the bytes: i8 inputs flip to u8 (+128). */
static int x_zero_read(const glow_type *x)
{
    return x->dtype == GLOW_I8Q ? x->offset + 128 : x->offset;
}

/* Whether the int8 Winograd kernel applies to the group-1 convolution `in` of a kh x kw kernel
 * on isa: AVX2 without VNNI (with VNNI the direct kernel's u8 x s8 products run 4x faster and
 * the int16 transform would give that up), 3x3, strides and dilations 1. */
static bool qwino_fits(const ir_instr *in, const cpu_isa *isa, int64_t kh, int64_t kw)
{
    if (strcmp(cpu_qconv_isa(isa), "avx2") || kh != 3 || kw != 3)
        return false;
    glow_attr_id ones[] = { GA_STRIDES, GA_DILATIONS };
    for (int k = 0; k < 2; k++) {
        const glow_attr *a = cpu_attr(in, ones[k]);
        for (uint32_t i = 0; a && i < a->n; i++)
            if (a->v.ints[i] != 1)
                return false;
    }
    return true;
}

/* ChannelwiseQuantizedConv [y, x, w, bias, scales, offsets] of group 1 or depthwise, 2-D. */
static glow_status prep_qconv(ir_function *f, ir_instr *in, const cpu_isa *isa, qprep *q,
                              glow_diag *d)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type,
                    *wt = &in->ops[2].v->type;
    bool u8 = wt->dtype == GLOW_U8;
    const void *w = cpu_const_data(in->ops[2].v, wt->dtype);
    const int32_t *bias = cpu_const_data(in->ops[3].v, GLOW_I32);
    const float *scales = cpu_const_data(in->ops[4].v, GLOW_F32);
    const int32_t *off = cpu_const_data(in->ops[5].v, GLOW_I32);
    const glow_attr *ga = cpu_attr(in, GA_GROUP);
    int64_t g = ga ? ga->v.i : 1;
    if (in->nops != 6 || x->rank != 4 || y->rank != 4 || !is_q8(x->dtype) || !is_q8(y->dtype) ||
        !w || !bias || !scales || !off)
        return GLOW_OK;
    int64_t m = y->dims[1], c = x->dims[1], kh = wt->dims[2], kw = wt->dims[3];
    bool dw = g > 1 && g == c && m == c;
    if (g != 1 && !dw)
        return GLOW_OK;
    glow_status s = GLOW_OK;
    void *p;
    if (!(q->mult = cpu_new_const(f, "qmult", in->id, GLOW_F32, m, &p, d, &s)))
        return s;
    for (int64_t i = 0; i < m; i++)
        ((float *)p)[i] = gk_q_multiplier((double)x->scale * scales[i], y->scale);
    if (dw) {
        int64_t cp = gk_qdw_cpad(c);
        int16_t *wp;
        if (!(q->w = cpu_new_const(f, "qdww", in->id, GLOW_I16, kh * kw * cp, &p, d, &s)))
            return s;
        wp = p;
        gk_qdw_pack_weights(wp, w, !u8, off, c, kh, kw);
        if (!(q->bias = cpu_new_const(f, "qdwb", in->id, GLOW_I32, cp, &p, d, &s)))
            return s;
        gk_qdw_pack_bias(p, bias, wp, c, kh, kw, x_zero_read(x));
        q->own = IK_CPU_QDWCONV_NHWC;
    } else {
        int8_t *w8 = signed_weights(w, u8, off, 0, m, c * kh * kw);
        if (!w8)
            return GLOW_OK;
        const char *pisa = pack_isa(isa, w8, (size_t)(m * c * kh * kw));
        int vlen = gk_qconv_vlen(pisa);
        size_t bytes = gk_qpack_bytes(vlen, m, c, kh, kw);
        if (qwino_fits(in, isa, kh, kw) &&
            cpu_qwino_choose(y->dims[0], c, m, y->dims[2], y->dims[3])) {
            /* int16 weights, and the qkernel attribute that sel_qconv reads. */
            if ((q->w = cpu_new_const(f, "qww", in->id, GLOW_I16,
                                      (int64_t)gk_qwino_elems(m, c), &p, d, &s))) {
                void *bp;
                if ((q->bias = cpu_new_const(f, "qb", in->id, GLOW_I32, m, &bp, d, &s)))
                    gk_qwino_pack(w8, bias, x_zero_read(x), m, c, p, bp);
            }
            q->qkernel = "winograd";
        } else if ((q->w = cpu_new_const(f, "qw", in->id, GLOW_I8, (int64_t)bytes, &p, d, &s))) {
            void *bp;
            int8_t *packed = p;
            if ((q->bias = cpu_new_const(f, "qb", in->id, GLOW_I32, m, &bp, d, &s)))
                gk_qpack_conv_isa(pisa, w8, bias, x_zero_read(x), m, c, kh, kw, packed, bp);
            if (strcmp(pisa, cpu_qconv_isa(isa)))
                q->qkernel = "7-bit";
        }
        free(w8);
        if (s != GLOW_OK)
            return s;
        q->own = IK_CPU_QCONV_NHWC;
    }
    q->kind = QP_NHWC;
    return GLOW_OK;
}

/* Quantized FullyConnected [y, x, w, bias], or a 2-D MatMul [y, x, w] by a constant: the 1x1
 * convolution of [M][1][1][K] bytes. */
static glow_status prep_qfc(ir_function *f, ir_instr *in, const cpu_isa *isa, qprep *q,
                            glow_diag *d)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type,
                    *wt = &in->ops[2].v->type;
    bool fc = in->kind == IK_FULLY_CONNECTED;
    if (in->nops != (fc ? 4u : 3u) || x->rank != 2 || y->rank != 2 || !is_q8(x->dtype) ||
        !is_q8(y->dtype) || !is_q8(wt->dtype) || x->dims[1] % 4)
        return GLOW_OK;
    const void *w = cpu_const_data(in->ops[2].v, wt->dtype);
    const glow_type *bt = fc ? &in->ops[3].v->type : NULL;
    const int32_t *bias = fc ? cpu_const_data(in->ops[3].v, bt->dtype) : NULL;
    if (!w || (fc && (!bias || (bt->dtype != GLOW_I32 && bt->dtype != GLOW_I32Q))))
        return GLOW_OK;
    int64_t k = wt->dims[0], n = wt->dims[1];
    /* [K][N] -> [N][K] (the conv's [M][C][1][1]). */
    uint8_t *wtr = glow_xmalloc((size_t)(k * n) + 1);
    for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++)
            wtr[j * k + i] = ((const uint8_t *)w)[i * n + j];
    int8_t *w8 = signed_weights(wtr, wt->dtype == GLOW_U8Q, NULL, wt->offset, n, k);
    free(wtr);
    if (!w8)
        return GLOW_OK;
    glow_status s = GLOW_OK;
    void *p, *bp;
    const char *pisa = pack_isa(isa, w8, (size_t)(n * k));
    int vlen = gk_qconv_vlen(pisa);
    size_t bytes = gk_qpack_bytes(vlen, n, k, 1, 1);
    if ((q->w = cpu_new_const(f, "qw", in->id, GLOW_I8, (int64_t)bytes, &p, d, &s)) &&
        (q->bias = cpu_new_const(f, "qb", in->id, GLOW_I32, n, &bp, d, &s)))
        gk_qpack_conv_isa(pisa, w8, bias, x_zero_read(x), n, k, 1, 1, p, bp);
    if (strcmp(pisa, cpu_qconv_isa(isa)))
        q->qkernel = "7-bit";
    free(w8);
    if (s == GLOW_OK && (q->mult = cpu_new_const(f, "qmult", in->id, GLOW_F32, n, &p, d, &s)))
        for (int64_t j = 0; j < n; j++)
            ((float *)p)[j] = gk_q_multiplier((double)x->scale * wt->scale, y->scale);
    if (s == GLOW_OK) {
        q->kind = QP_NHWC;
        q->own = IK_CPU_QCONV_NHWC;
    }
    return s;
}

/* What kind of int8 instruction `in` is (pools and elementwise need no packing). */
static glow_status classify(ir_function *f, ir_instr *in, const cpu_isa *isa, qprep *q,
                            glow_diag *d)
{
    const glow_type *y = &in->ops[0].v->type, *x = in->nops > 1 ? &in->ops[1].v->type : y;
    switch ((int)in->kind) {
    case IK_CHANNELWISE_QCONV:
        return prep_qconv(f, in, isa, q, d);
    case IK_FULLY_CONNECTED: case IK_MATMUL:
        return prep_qfc(f, in, isa, q, d);
    case IK_MAX_POOL: case IK_AVG_POOL:
        /* The max pool kernel moves bytes: the result must have x's quantization. */
        if (in->nout == 1 && in->nops == 2 && y->rank == 4 && is_q8(y->dtype) &&
            is_q8(x->dtype) && (in->kind == IK_AVG_POOL ||
                                (x->dtype == y->dtype && x->scale == y->scale &&
                                 x->offset == y->offset))) {
            q->kind = QP_NHWC;
            q->own = in->kind == IK_MAX_POOL ? IK_CPU_QMAXPOOL_NHWC : IK_CPU_QAVGPOOL_NHWC;
        }
        return GLOW_OK;
    case IK_CONCAT: {
        /* Along channels, every operand of the result's quantization and a whole number of
         * 4-channel groups (their NHWC channels then lie unpadded inside the result's). */
        const glow_attr *ax = cpu_attr(in, GA_AXIS);
        if (y->rank != 4 || !is_q8(y->dtype) || !ax || ax->v.i != 1 || in->nout != 1)
            return GLOW_OK;
        for (uint32_t i = 1; i < in->nops; i++) {
            const glow_type *t = &in->ops[i].v->type;
            if (t->dtype != y->dtype || t->scale != y->scale || t->offset != y->offset ||
                t->rank != 4 || t->dims[1] % 4)
                return GLOW_OK;
        }
        q->kind = QP_ELEM;
        q->own = IK_CPU_QCONCAT_NHWC;
        return GLOW_OK;
    }
    case IK_ADD: case IK_SUB: case IK_MUL: case IK_MAX: case IK_MIN: case IK_RELU: case IK_CLIP:
    case IK_RESCALE_QUANTIZED:
        for (uint32_t i = 0; i < in->nops; i++)
            if (!is_q8(in->ops[i].v->type.dtype) ||
                !glow_type_same_shape(&in->ops[i].v->type, y))
                return GLOW_OK;
        q->kind = QP_ELEM;
        return GLOW_OK;
    default:
        return GLOW_OK;
    }
}

/* --- RescaleQuantized folded into the convolution --- */

/* Whether instruction b comes after a in program order. */
static bool comes_after(const ir_instr *a, const ir_instr *b)
{
    for (const ir_instr *in = a->next; in; in = in->next)
        if (in == b)
            return true;
    return false;
}

/* The one instruction other than alloc/dealloc using v as operand, NULL if none or several;
 * *uses counts them. */
static ir_instr *only_user(ir_function *f, const ir_value *v, ir_instr *skip, int *uses)
{
    ir_instr *found = NULL;
    *uses = 0;
    for (ir_instr *in = f->first; in; in = in->next) {
        if (cpu_is_marker(in) || in == skip)
            continue;
        for (uint32_t i = 0; i < in->nops; i++)
            if (ir_root(in->ops[i].v) == v) {
                found = in;
                ++*uses;
                break;
            }
    }
    return *uses == 1 ? found : NULL;
}

/* The alloc or dealloc instruction of v. */
static ir_instr *lifetime_mark(ir_function *f, const ir_value *v, ir_instr_kind kind)
{
    for (ir_instr *in = f->first; in; in = in->next)
        if (in->kind == kind && in->nops == 1 && in->ops[0].v == v)
            return in;
    return NULL;
}

/* A RescaleQuantized [out, mid] whose input only an int8 convolution W writes (and nothing
 * else reads) becomes part of W: W writes out, requantizing twice in its store (the same
 * integers as the two instructions), and the pass over mid and the barrier before it go.
 * SqueezeNet rescales one of the two expand convolutions of every Fire module to the Concat's
 * quantization. out must be free between W and the rescale; its lifetime then starts at W. */
static glow_status fold_rescale(ir_function *f, qprep *qp, uint32_t n, glow_diag *d)
{
    for (ir_instr *r = f->first, *next; r; r = next) {
        next = r->next;
        if (r->kind != IK_RESCALE_QUANTIZED || r->nops != 2 || r->id >= n)
            continue;
        ir_value *out = r->ops[0].v, *mid = r->ops[1].v;
        if (out->kind != IV_ALLOC || mid->kind != IV_ALLOC || !is_q8(out->type.dtype) ||
            !is_q8(mid->type.dtype) || mid->type.rank != 4 ||
            !glow_type_same_shape(&out->type, &mid->type))
            continue;
        int uses;
        ir_instr *w = only_user(f, mid, r, &uses);
        if (!w || w->id >= n || qp[w->id].kind != QP_NHWC || qp[w->id].own != IK_CPU_QCONV_NHWC ||
            w->ops[0].v != mid || w->nops < 2 || ir_root(w->ops[1].v) == mid ||
            !comes_after(w, r))
            continue;
        bool busy = false;
        for (ir_instr *in = w->next; in != r && !busy; in = in->next)
            for (uint32_t i = 0; i < in->nops && !busy && in->kind != IK_ALLOC; i++)
                busy = ir_root(in->ops[i].v) == out;
        for (uint32_t i = 1; i < w->nops; i++)
            busy |= ir_root(w->ops[i].v) == out;
        ir_instr *out_alloc = lifetime_mark(f, out, IK_ALLOC);
        if (busy || !out_alloc)
            continue;
        qprep *q = &qp[w->id];
        int64_t m = glow_type_numel(&q->mult->type);
        const float *old = q->mult->storage->payload.data;
        void *p;
        glow_status s = GLOW_OK;
        ir_value *mult = cpu_new_const(f, "qmultr", w->id, GLOW_F32, m + QPOST, &p, d, &s);
        if (!mult)
            return s;
        memcpy(p, old, (size_t)m * sizeof(float));
        float *tail = (float *)p + m;
        cpu_qtype_put(tail, &mid->type);
        q->mult = mult;
        w->ops[0].v = out;
        /* out lives from W on; mid is no longer used (no memory). */
        if (comes_after(w, out_alloc)) {
            ir_instr_unlink(f, out_alloc);
            ir_instr_insert_before(f, w, out_alloc);
        }
        ir_instr *ma = lifetime_mark(f, mid, IK_ALLOC), *md = lifetime_mark(f, mid, IK_DEALLOC);
        if (ma)
            ir_instr_unlink(f, ma);
        if (md)
            ir_instr_unlink(f, md);
        if (next == ma || next == md)
            next = r->next;
        ir_instr_unlink(f, r);
        qp[r->id].kind = QP_NONE;
    }
    return GLOW_OK;
}

static ir_instr *insert_instr(ir_function *f, ir_instr_kind kind, const ir_instr *in,
                              const ir_operand *ops, int nops, ir_instr *pos, bool attrs,
                              const char *qkernel);

/* --- a rescale folded into the binary op before it --- */

int cpu_bin_code(ir_instr_kind k)
{
    switch ((int)k) {
    case IK_ADD: return GK_BIN_ADD;
    case IK_SUB: return GK_BIN_SUB;
    case IK_MUL: return GK_BIN_MUL;
    case IK_MAX: return GK_BIN_MAX;
    case IK_MIN: return GK_BIN_MIN;
    default: return -1;
    }
}

static uint64_t value_at(const ir_value *v) { return v->kind == IV_VIEW ? v->view_offset : 0; }

/* A RescaleQuantized, Relu or Clip r [out, mid] of the result of a quantized binary op A
 * [mid, a, b] becomes part of A (cpu.qbinary_post): A rescales in its store, the same integers
 * as the two instructions, and r's pass over the bytes and the barrier before it go. ResNet's
 * residual Add and the Relu after it, both in place over the convolution's result: 16 passes
 * and 16 barriers fewer. Only when out and mid are the same bytes (the IR optimizer's in-place
 * views of one buffer, so no lifetime moves), nothing but A and r uses mid, and nothing between
 * them touches those bytes (they now hold r's result from A on). */
static glow_status fold_post(ir_function *f, qprep **qpp, uint32_t *np, glow_diag *d)
{
    for (ir_instr *r = f->first, *next; r; r = next) {
        next = r->next;
        qprep *qp = *qpp;
        if ((r->kind != IK_RESCALE_QUANTIZED && r->kind != IK_RELU && r->kind != IK_CLIP) ||
            r->nops != 2 || r->id >= *np || qp[r->id].kind != QP_ELEM)
            continue;
        ir_value *out = r->ops[0].v, *mid = r->ops[1].v;
        if (ir_root(out) != ir_root(mid) || value_at(out) != value_at(mid) ||
            !is_q8(out->type.dtype) || !is_q8(mid->type.dtype) ||
            !glow_type_same_shape(&out->type, &mid->type))
            continue;
        ir_instr *a = NULL;
        int users = 0;
        for (ir_instr *in = f->first; in; in = in->next)
            for (uint32_t i = 0; i < in->nops && in != r; i++)
                if (in->ops[i].v == mid) {
                    a = in;
                    users++;
                    break;
                }
        if (users != 1 || a->id >= *np || qp[a->id].kind != QP_ELEM || a->nops != 3 ||
            cpu_bin_code(a->kind) < 0 || a->ops[0].v != mid || !comes_after(a, r))
            continue;
        bool busy = false;
        for (ir_instr *in = a->next; in != r && !busy; in = in->next)
            busy = !cpu_is_marker(in) && cpu_touches(in, ir_root(out));
        if (busy)
            continue;
        int32_t lo, hi;
        glow_dtype_qrange(out->type.dtype, &lo, &hi);
        const glow_attr *amin = cpu_attr(r, GA_MIN), *amax = cpu_attr(r, GA_MAX);
        int act = r->kind == IK_RELU ? GK_QACT_RELU : r->kind == IK_CLIP ? GK_QACT_CLIP
                                                                          : GK_QACT_NONE;
        gk_q_act_range(act, amin ? amin->v.f : 0, amax ? amax->v.f : 0, out->type.scale,
                       out->type.offset, &lo, &hi);
        glow_status s = GLOW_OK;
        void *p;
        ir_value *post = cpu_new_const(f, "qpost", a->id, GLOW_F32, 6, &p, d, &s);
        if (!post)
            return s;
        float *pf = p;
        pf[0] = (float)cpu_bin_code(a->kind);
        cpu_qtype_put(pf + 1, &mid->type);
        pf[4] = (float)lo;
        pf[5] = (float)hi;
        ir_operand ops[4] = { { out, 'o' }, a->ops[1], a->ops[2], { post, 'i' } };
        ir_instr *fused = insert_instr(f, IK_CPU_QBINARY_POST, a, ops, 4, a, false, NULL);
        if (next == a)
            next = a->next;
        ir_instr_unlink(f, a);
        ir_instr_unlink(f, r);
        qp[r->id].kind = qp[a->id].kind = QP_NONE;
        *qpp = qp = glow_xrealloc(qp, (f->next_id + 1) * sizeof *qp);
        memset(qp + *np, 0, (f->next_id + 1 - *np) * sizeof *qp);
        *np = f->next_id;
        qp[fused->id].kind = QP_ELEM;
    }
    return GLOW_OK;
}

/* --- a residual Add folded into the convolution --- */

/* The last instruction before `a` with an operand in root's bytes (markers aside). */
static ir_instr *last_toucher(ir_instr *a, const ir_value *root)
{
    for (ir_instr *in = a->prev; in; in = in->prev)
        if (!cpu_is_marker(in) && cpu_touches(in, root))
            return in;
    return NULL;
}

/* Whether only w and a use y: y itself (exact; its bytes then hold a's result, which views of
 * them read) or anything in its bytes. */
static bool only_by(const ir_function *f, const ir_value *y, const ir_instr *w,
                    const ir_instr *a, bool exact)
{
    for (const ir_instr *in = f->first; in; in = in->next) {
        if (in == w || in == a || cpu_is_marker(in))
            continue;
        for (uint32_t i = 0; i < in->nops; i++)
            if (exact ? in->ops[i].v == y : ir_root(in->ops[i].v) == y)
                return false;
    }
    return true;
}

/* The Add (cpu.qbinary_post of an Add, or a plain quantized Add) A [out, y, r(, post)] whose
 * operand y only an int8 convolution W writes (and nothing else reads) becomes part of W: W
 * writes out, adding r in its store as the two (or three) instructions computed it
 * (kernels/qconv/qres.h), and the Add's pass over three tensors and the barrier before it go.
 * ResNet-50: 16 Adds, 5.7 % of its int8 run on AVX2. out must be y's bytes (the IR optimizer's
 * in-place Add), r's, or a buffer free between W and A (its lifetime then starts at W); W's
 * input must not be out's bytes, and nothing between W and A may touch y, r or out. The
 * constant `qres` holds W's own result's quantization (i8, scale, offset), which sel_qconv
 * requantizes into, the kernel's rmode, then its GK_QRES_N parameters. */
static glow_status fold_residual(ir_function *f, qprep *qp, uint32_t n, glow_diag *d)
{
    for (ir_instr *a = f->first, *next; a; a = next) {
        next = a->next;
        bool post = a->kind == IK_CPU_QBINARY_POST;
        if (a->id >= n || qp[a->id].kind != QP_ELEM || (a->kind != IK_ADD && !post) ||
            a->nops != (post ? 4u : 3u))
            continue;
        const float *pf = post ? cpu_const_data(a->ops[3].v, GLOW_F32) : NULL;
        if (post && (!pf || pf[0] != (float)GK_BIN_ADD))
            continue;
        ir_value *out = a->ops[0].v;
        for (int yi = 1; yi <= 2; yi++) {
            ir_value *y = a->ops[yi].v, *r = a->ops[3 - yi].v;
            ir_instr *w = y->kind == IV_ALLOC ? last_toucher(a, y) : NULL;
            if (!w || w->id >= n || qp[w->id].kind != QP_NHWC ||
                qp[w->id].own != IK_CPU_QCONV_NHWC || qp[w->id].resq || w->ops[0].v != y ||
                y->type.rank != 4 || !is_q8(r->type.dtype) || ir_root(r) == y ||
                glow_type_numel(&qp[w->id].mult->type) != y->type.dims[1] ||
                !comes_after(w, a))
                continue;
            ir_value *xr = ir_root(w->ops[1].v), *outr = ir_root(out), *rr = ir_root(r);
            bool on_y = outr == y && value_at(out) == 0;
            bool on_r = outr == rr && value_at(out) == value_at(r);
            ir_instr *out_alloc = !on_y && !on_r && out->kind == IV_ALLOC
                                      ? lifetime_mark(f, out, IK_ALLOC) : NULL;
            if (outr == xr || (!on_y && !on_r && !out_alloc) || !only_by(f, y, w, a, on_y))
                continue;
            bool busy = false;
            for (ir_instr *in = w->next; in != a && !busy; in = in->next)
                busy = !cpu_is_marker(in) && (cpu_touches(in, rr) || cpu_touches(in, outr));
            if (busy)
                continue;
            /* The quantization the Add sums into, and the rescale after it. */
            glow_type mid = out->type;
            float p_mult = 0.0f;
            int32_t plo = 0, phi = 0;
            if (post) {
                cpu_qtype_get(pf + 1, &mid);
                p_mult = gk_q_multiplier(mid.scale, out->type.scale);
                plo = (int32_t)pf[4];
                phi = (int32_t)pf[5];
            }
            int32_t alo, ahi;
            glow_dtype_qrange(mid.dtype, &alo, &ahi);
            glow_status s = GLOW_OK;
            void *p;
            ir_value *resq = cpu_new_const(f, "qres", w->id, GLOW_F32, 4 + GK_QRES_N, &p, d, &s);
            if (!resq)
                return s;
            float *rq = p;
            cpu_qtype_put(rq, &y->type);
            rq[3] = (float)((r->type.dtype == GLOW_I8Q ? GK_QRES_R_I8 : 0) |
                            (post ? GK_QRES_POST : 0));
            rq += 4;
            rq[GK_QRES_RZERO] = (float)r->type.offset;
            rq[GK_QRES_MA] = gk_q_multiplier(y->type.scale, mid.scale);
            rq[GK_QRES_MB] = gk_q_multiplier(r->type.scale, mid.scale);
            rq[GK_QRES_AZERO] = (float)mid.offset;
            rq[GK_QRES_ALO] = (float)alo;
            rq[GK_QRES_AHI] = (float)ahi;
            rq[GK_QRES_PMULT] = p_mult;
            rq[GK_QRES_PZERO] = (float)out->type.offset;
            rq[GK_QRES_PLO] = (float)plo;
            rq[GK_QRES_PHI] = (float)phi;
            /* W [out, x, w, bias, scales, offsets, r]; the final step adds qres. */
            ir_operand *ops = GLOW_NEW_ARRAY(&f->arena, ir_operand, w->nops + 1);
            memcpy(ops, w->ops, w->nops * sizeof *ops);
            ops[0].v = out;
            ops[w->nops] = (ir_operand){ r, 'i' };
            w->ops = ops;
            w->nops++;
            qp[w->id].resq = resq;
            if (out_alloc && comes_after(w, out_alloc)) {
                ir_instr_unlink(f, out_alloc);
                ir_instr_insert_before(f, w, out_alloc);
            }
            /* y is no longer used unless out is in its bytes (no memory). */
            ir_instr *ya = on_y ? NULL : lifetime_mark(f, y, IK_ALLOC);
            ir_instr *yd = on_y ? NULL : lifetime_mark(f, y, IK_DEALLOC);
            next = a->next;
            while (next && (next == ya || next == yd))
                next = next->next;
            if (ya)
                ir_instr_unlink(f, ya);
            if (yd)
                ir_instr_unlink(f, yd);
            ir_instr_unlink(f, a);
            qp[a->id].kind = QP_NONE;
            break;
        }
    }
    return GLOW_OK;
}

/* --- layout --- */

static bool nhwc_candidate(const ir_value *v)
{
    return v->kind == IV_ALLOC && v->type.rank == 4 && is_q8(v->type.dtype);
}

/* Which activations stay NHWC (by value id): candidates touched only by int8 instructions,
 * never through a view, and, for an elementwise instruction, only when all its operands
 * stay NHWC. */
static bool *plan_nhwc(const ir_function *f, const qprep *qp, uint32_t n)
{
    bool *nhwc = glow_xcalloc(f->next_id + 1, sizeof *nhwc);
    for (ir_value *v = f->values; v; v = v->next)
        nhwc[v->id] = nhwc_candidate(v);
    /* A view of the whole buffer under another quantization (the IR optimizer's in-place
     * Add and Relu) reads the same elements: it follows its base. Any other view reads bytes
     * by position and keeps the base NCHW. */
    for (ir_value *v = f->values; v; v = v->next)
        if (v->kind == IV_VIEW &&
            !(v->view_offset == 0 && is_q8(v->type.dtype) &&
              glow_type_same_shape(&v->type, &v->base->type)))
            nhwc[v->base->id] = false;
    for (const ir_instr *in = f->first; in; in = in->next) {
        if (cpu_is_marker(in))
            continue;
        bool ours = in->id < n && qp[in->id].kind != QP_NONE;
        for (uint32_t i = 0; i < in->nops && !ours; i++)
            nhwc[ir_root(in->ops[i].v)->id] = false;
        /* A convolution's weights and a pool's output with other dims stay as they are. */
        if (ours && qp[in->id].kind == QP_NHWC &&
            (in->kind == IK_FULLY_CONNECTED || in->kind == IK_MATMUL))
            for (uint32_t i = 0; i < in->nops; i++)
                nhwc[ir_root(in->ops[i].v)->id] = false;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (const ir_instr *in = f->first; in; in = in->next) {
            if (in->id >= n || qp[in->id].kind != QP_ELEM)
                continue;
            bool all = true;
            for (uint32_t i = 0; i < in->nops; i++)
                all &= in->ops[i].v->kind == IV_WEIGHT || nhwc[ir_root(in->ops[i].v)->id];
            for (uint32_t i = 0; i < in->nops && !all; i++) {
                uint32_t id = ir_root(in->ops[i].v)->id;
                if (in->ops[i].role != 'i' && nhwc[id]) {
                    nhwc[id] = false;
                    changed = true;
                }
            }
        }
    }
    return nhwc;
}

static glow_type nhwc_type(const glow_type *t)
{
    glow_type r = *t;
    int64_t c = t->dims[1];
    r.dims[1] = t->dims[2];
    r.dims[2] = t->dims[3];
    r.dims[3] = (c + 3) / 4 * 4;
    return r;
}

/* A copy of `in` of another kind and operands before pos, with in's attributes (attrs) and
 * a qkernel attribute (non-NULL). */
static ir_instr *insert_instr(ir_function *f, ir_instr_kind kind, const ir_instr *in,
                              const ir_operand *ops, int nops, ir_instr *pos, bool attrs,
                              const char *qkernel)
{
    int na = attrs ? (int)in->nattr : 0;
    glow_attr *a = glow_xmalloc(sizeof *a * (size_t)(na + 1));
    if (na)
        memcpy(a, in->attrs, sizeof *a * (size_t)na);
    if (qkernel)
        a[na++] = GLOW_ASTR(QKERNEL, qkernel);
    ir_instr *n = ir_instr_append(f, kind, in->name, ops, nops, 1, na ? a : NULL, na);
    free(a);
    ir_instr_unlink(f, n);
    ir_instr_insert_before(f, pos, n);
    return n;
}

/* Operand i of `in` in the layout it needs (NHWC when want_nhwc): the value itself, or a
 * scratch buffer with a conversion before `in` (inputs) or after it (the result). */
static void convert_operand(ir_function *f, ir_instr *in, uint32_t i, bool want_nhwc,
                            const bool *nhwc)
{
    ir_value *v = in->ops[i].v;
    if (v->type.rank != 4 || nhwc[ir_root(v)->id] == want_nhwc)
        return;
    char name[64];
    snprintf(name, sizeof name, "cpu.%s.%u.%u", want_nhwc ? "qnhwc" : "qnchw", in->id, i);
    /* An NCHW scratch is for an elementwise instruction that runs NCHW: its result kept the
     * plain type, which is every operand's (the NHWC one may pad the channels). */
    glow_type t = want_nhwc ? nhwc_type(&v->type) : in->ops[0].v->type;
    t.dtype = v->type.dtype;
    t.scale = v->type.scale;
    t.offset = v->type.offset;
    ir_value *s = ir_alloc_create(f, name, &t);
    bool input = in->ops[i].role == 'i';
    ir_instr_kind k = input == want_nhwc ? IK_CPU_Q_TO_NHWC : IK_CPU_Q_FROM_NHWC;
    ir_operand ops[2] = { { input ? s : v, 'o' }, { input ? v : s, 'i' } };
    ir_instr *conv = insert_instr(f, k, in, ops, 2, input ? in : in->next, false, NULL);
    in->ops[i].v = s;
    if (input)
        cpu_mark_lifetime(f, s, conv, in);
    else
        cpu_mark_lifetime(f, s, in, conv);
}

/* --- Concat in place, undone for NHWC --- */

/* Whether view v is a channel slice of its base (the IR optimizer's Concat in place: the
 * producers of a Concat's operands write straight into their channels of its result): one
 * image, the base's spatial dims, a whole number of 4-channel groups. */
static bool channel_slice(const ir_value *v)
{
    const glow_type *t = &v->type, *b = &v->base->type;
    int64_t plane = b->dims[2] * b->dims[3];
    return v->kind == IV_VIEW && v->base->kind == IV_ALLOC && t->rank == 4 && b->rank == 4 &&
           is_q8(t->dtype) && is_q8(b->dtype) && t->dims[0] == 1 && b->dims[0] == 1 &&
           t->dims[2] == b->dims[2] && t->dims[3] == b->dims[3] && t->dims[1] % 4 == 0 &&
           plane > 0 && v->view_offset % (uint64_t)plane == 0 &&
           t->dtype == b->dtype && t->scale == b->scale && t->offset == b->offset;
}

/* In NCHW a channel slice is contiguous, so Concat costs nothing; in NHWC it is strided. So
 * for a base whose views are all channel slices, each slice gets its own buffer again and
 * a Concat (which the NHWC planning may make cpu.qconcat_nhwc) joins them after the last
 * instruction that writes one: the int8 convolutions around it stay NHWC. */
static void undo_concat_inplace(ir_function *f)
{
    static const glow_attr axis1 = { .id = GA_AXIS, .v.i = 1 };
    for (ir_value *b = f->values; b; b = b->next) {
        if (b->kind != IV_ALLOC || b->type.rank != 4 || !is_q8(b->type.dtype))
            continue;
        int nslices = 0;
        bool ok = true;
        for (ir_value *v = f->values; v && ok; v = v->next)
            if (v->kind == IV_VIEW && v->base == b) {
                ok = channel_slice(v);
                nslices++;
            }
        if (!ok || nslices < 2 || nslices > 64)
            continue;
        /* The slices in channel order, each with the first and last instruction using it. */
        ir_value *sl[64];
        ir_instr *first[64] = { NULL }, *last[64] = { NULL }, *last_write = NULL;
        int k = 0;
        for (ir_value *v = f->values; v; v = v->next)
            if (v->kind == IV_VIEW && v->base == b)
                sl[k++] = v;
        for (int i = 1; i < k; i++)
            for (int j = i; j > 0 && sl[j]->view_offset < sl[j - 1]->view_offset; j--) {
                ir_value *t = sl[j];
                sl[j] = sl[j - 1];
                sl[j - 1] = t;
            }
        int64_t channels = 0;
        for (int i = 0; i < k; i++) {
            int64_t plane = b->type.dims[2] * b->type.dims[3];
            ok &= (int64_t)sl[i]->view_offset == channels * plane;
            channels += sl[i]->type.dims[1];
        }
        if (!ok || channels != b->type.dims[1])
            continue;
        for (ir_instr *in = f->first; in; in = in->next)
            for (uint32_t o = 0; o < in->nops; o++)
                for (int i = 0; i < k; i++)
                    if (in->ops[o].v == sl[i]) {
                        if (!first[i])
                            first[i] = in;
                        last[i] = in;
                        if (in->ops[o].role != 'i')
                            last_write = in;
                    }
        if (!last_write)
            continue;
        ir_operand ops[65] = { { b, 'o' } };
        for (int i = 0; i < k; i++) {
            char name[64];
            snprintf(name, sizeof name, "cpu.qslice.%u.%d", b->id, i);
            ir_value *a = ir_alloc_create(f, name, &sl[i]->type);
            for (ir_instr *in = first[i]; in; in = in->next) {
                for (uint32_t o = 0; o < in->nops; o++)
                    if (in->ops[o].v == sl[i])
                        in->ops[o].v = a;
                if (in == last[i])
                    break;
            }
            /* Nothing uses the view any more: it becomes an unused activation (no memory). */
            sl[i]->base = NULL;
            sl[i]->kind = IV_ALLOC;
            sl[i]->view_offset = 0;
            ops[1 + i] = (ir_operand){ a, 'i' };
            sl[i] = a;
        }
        ir_instr *cat = ir_instr_append(f, IK_CONCAT, b->name, ops, 1 + k, 1, &axis1, 1);
        ir_instr_unlink(f, cat);
        ir_instr_insert_before(f, last_write->next, cat);
        for (int i = 0; i < k; i++)
            cpu_mark_lifetime(f, sl[i], first[i], comes_after(cat, last[i]) ? last[i] : cat);
    }
}

/* Counter k of the work counters. */
static ir_value *work_slot(ir_function *f, ir_value *work, int k)
{
    char name[32];
    snprintf(name, sizeof name, "cpu.qwork.%d", k);
    glow_type t = { .dtype = GLOW_U32, .rank = 1, .dims = { 1 } };
    return ir_view_create(f, name, work, &t, 4 * (uint64_t)k);
}

glow_status cpu_prepare_quant(ir_function *f, const cpu_isa *isa, glow_diag *d)
{
    undo_concat_inplace(f);
    uint32_t n = f->next_id;
    qprep *qp = glow_xcalloc(n + 1, sizeof *qp);
    glow_status s = GLOW_OK;
    int count = 0;
    for (ir_instr *in = f->first; in && s == GLOW_OK; in = in->next) {
        if (cpu_is_marker(in) || in->id >= n)
            continue;
        s = classify(f, in, isa, &qp[in->id], d);
        count += qp[in->id].kind == QP_NHWC;
    }
    if (s == GLOW_OK && count)
        s = fold_rescale(f, qp, n, d);
    if (s == GLOW_OK && count)
        s = fold_post(f, &qp, &n, d);
    if (s == GLOW_OK && count)
        s = fold_residual(f, qp, n, d);
    if (s != GLOW_OK || !count) {
        free(qp);
        return s;
    }
    bool *nhwc = plan_nhwc(f, qp, n);
    for (ir_value *v = f->values; v; v = v->next)
        if (ir_root(v)->id < n && nhwc[ir_root(v)->id])
            v->type = nhwc_type(&v->type);
    /* One work counter per convolution (kernels/units.h): its units go to whichever thread
     * asks next, so a thread whose core is busy elsewhere does not hold the others at the
     * barrier after it, as a static split would (MobileNet v2 at 2 threads, avx2: 0.84x the
     * time). The depthwise layers keep the static split: their units (an output row's 64
     * channels) take a few microseconds with VNNI, and the counter's trips between the cores
     * cost more than the balance gains (MobileNet v2, native: 1.03x the time with counters
     * there too, 0.99x without). */
    int nconv = 0;
    for (const ir_instr *in = f->first; in; in = in->next)
        nconv += in->id < n && qp[in->id].kind == QP_NHWC && qp[in->id].own == IK_CPU_QCONV_NHWC;
    ir_value *work = NULL;
    if (nconv) {
        glow_type wt = { .dtype = GLOW_U32, .rank = 1, .dims = { nconv } };
        work = cpu_add_zeroed(f, "cpu.qwork", &wt);
    }
    int slot = 0;
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = in->next;
        if (in->id >= n || qp[in->id].kind == QP_NONE)
            continue;
        const qprep *q = &qp[in->id];
        if (q->kind == QP_ELEM) {
            bool all = true;
            for (uint32_t i = 0; i < in->nops; i++)
                all &= in->ops[i].v->kind == IV_WEIGHT || nhwc[ir_root(in->ops[i].v)->id];
            for (uint32_t i = 0; i < in->nops && !all; i++)
                convert_operand(f, in, i, false, nhwc);
            if (all && q->own)
                in->kind = q->own;
            continue;
        }
        convert_operand(f, in, 0, true, nhwc);
        convert_operand(f, in, 1, true, nhwc);
        if (q->resq)
            convert_operand(f, in, in->nops - 1, true, nhwc);
        ir_operand ops[8] = { in->ops[0], in->ops[1], { q->w, 'i' }, { q->bias, 'i' },
                              { q->mult, 'i' }, { NULL, 'x' } };
        int nops = q->own == IK_CPU_QCONV_NHWC ? 6 : q->w ? 5 : 2;
        if (nops == 6)
            ops[5].v = work_slot(f, work, slot++);
        if (q->resq) {
            /* [y, x, w, bias, mult, work, residual, qres] */
            ops[6] = in->ops[in->nops - 1];
            ops[7] = (ir_operand){ q->resq, 'i' };
            nops = 8;
        }
        insert_instr(f, q->own, in, ops, nops, in, true, q->qkernel);
        ir_instr_unlink(f, in);
    }
    free(nhwc);
    free(qp);
    return GLOW_OK;
}
