// select_spatial.c - Picks the kernels of the spatial instructions: Conv, ConvTranspose,
// MaxPool, AveragePool, LpPool (1-3 spatial dims) and Resize: f32, or any kind the evaluator
// runs them on through the "any" rows (LRN: select_reduce.c).
//
// Window ops are read into one 3-D form (the spatial dims padded in front with size-1 dims of
// kernel 1, stride 1, no pads), as the evaluator normalizes them (src/eval/eval_conv.c), and
// are taken only when their shapes are exactly what the evaluator accepts; 2-D convolutions
// and pools without an index result keep their 2-D kernels. Anything else returns false and
// runs through the evaluator.
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/winograd.h"
#include "gk_dtype.h"
#include "gk_ops.h"
#include "resize_math.h"

/* A window op over exactly three spatial dims [D][H][W]: in/out extents, kernel, strides,
 * dilations, begin and end pads. */
typedef struct {
    int nsp;
    int64_t in[3], out[3], k[3], s[3], dl[3], pb[3], pe[3];
} win3;

/* Copies the nsp values of attribute id into v[3 - nsp ..] (v[1 + nsp ..] for pads' ends). */
static bool spatial_ints(const ir_instr *in, glow_attr_id id, int nsp, int64_t *v, int64_t lo)
{
    const glow_attr *a = cpu_attr(in, id);
    int want = id == GA_PADS ? 2 * nsp : nsp;
    if (!a || a->n != (uint32_t)want)
        return false;
    for (int i = 0; i < want; i++) {
        int64_t x = a->v.ints[i];
        if (x < lo || x > ((int64_t)1 << 30))
            return false;
        if (id == GA_PADS)
            v[(i < nsp ? 0 : 3) + 3 - nsp + i % nsp] = x;
        else
            v[3 - nsp + i] = x;
    }
    return true;
}

/* The window of `in` on its f32 operand x ([N][C] + 1..3 spatial dims) and result y. */
static bool read_win(const ir_instr *in, const glow_type *x, const glow_type *y, win3 *w)
{
    int r = x->rank, nsp = r - 2;
    if (r < 3 || r > 5 || y->rank != r || y->dims[0] != x->dims[0])
        return false;
    int64_t pads[6] = { 0 };
    w->nsp = nsp;
    for (int j = 0; j < 3; j++)
        w->in[j] = w->out[j] = w->k[j] = w->s[j] = w->dl[j] = 1, w->pb[j] = w->pe[j] = 0;
    if (!spatial_ints(in, GA_KERNEL, nsp, w->k, 1) || !spatial_ints(in, GA_STRIDES, nsp, w->s, 1) ||
        !spatial_ints(in, GA_DILATIONS, nsp, w->dl, 1) || !spatial_ints(in, GA_PADS, nsp, pads, 0))
        return false;
    for (int j = 0; j < 3; j++) {
        w->pb[j] = pads[j];
        w->pe[j] = pads[3 + j];
    }
    for (int i = 0; i < nsp; i++) {
        w->in[3 - nsp + i] = x->dims[2 + i];
        w->out[3 - nsp + i] = y->dims[2 + i];
    }
    return true;
}

/* The result extents of a forward window op agree with the evaluator's floor formula. */
static bool forward_out_ok(const win3 *w)
{
    for (int j = 0; j < 3; j++) {
        int64_t span = w->in[j] + w->pb[j] + w->pe[j] - w->dl[j] * (w->k[j] - 1);
        if (span < 1 || w->out[j] != (span - 1) / w->s[j] + 1)
            return false;
    }
    return true;
}

static bool conv2d(const ir_instr *in, cpu_op *op)
{
    cpu_conv cp;
    if (!cpu_conv_params(in, &cp) || !cpu_no_alias(in))
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    CPU_OP(op, CPU_K_conv2d_f32_scalar, cpu_ptr(in->ops[1].v, 0), cpu_ptr(in->ops[2].v, 0),
           cpu_opt_ptr(in->nops == 4 ? in->ops[3].v : NULL), cpu_ptr(in->ops[0].v, 0),
           cpu_num(x->dims[0]), cpu_num(x->dims[1]), cpu_num(x->dims[2]), cpu_num(x->dims[3]),
           cpu_num(y->dims[1]), cpu_num(cp.k[0]), cpu_num(cp.k[1]), cpu_num(y->dims[2]),
           cpu_num(y->dims[3]), cpu_num(cp.s[0]), cpu_num(cp.s[1]), cpu_num(cp.dl[0]),
           cpu_num(cp.dl[1]), cpu_num(cp.p[0]), cpu_num(cp.p[1]), cpu_num(cp.g), cpu_num(cp.act),
           cpu_real(cp.alpha), cpu_real(cp.beta));
    return true;
}

/* The kernels' code of a numeric kind (gk_dtype follows dtypes.def), 0 for bool and the
 * quantized kinds. */
static int dt_code(glow_dtype t) { return t < GLOW_BOOL ? (int)t + 1 : 0; }

/* Conv and ConvTranspose over 1-3 spatial dims: [y, x, w, bias?], f32 or every operand of
 * one other float kind (without a fused activation). */
static bool conv(const ir_instr *in, cpu_op *op)
{
    bool tr = in->kind == IK_CONV_TRANSPOSE, f32 = cpu_all_f32(in);
    if (!tr && f32 && in->ops[1].v->type.rank == 4)
        return conv2d(in, op);
    int dt = dt_code(in->ops[0].v->type.dtype);
    for (uint32_t i = 1; i < in->nops; i++)
        if (in->ops[i].v->type.dtype != in->ops[0].v->type.dtype)
            dt = 0;
    if (in->nout != 1 || in->nops < 3 || in->nops > 4 || !gk_dt_is_float(dt) ||
        !cpu_no_alias(in))
        return false;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *wv = in->ops[2].v;
    const ir_value *bv = in->nops == 4 ? in->ops[3].v : NULL;
    const glow_type *y = &yv->type, *x = &xv->type, *wt = &wv->type;
    win3 w;
    const glow_attr *ga = cpu_attr(in, GA_GROUP);
    int64_t g = ga ? ga->v.i : 1, c = x->dims[1], m = y->dims[1];
    int act = GK_ACT_NONE;
    double alpha = 0, beta = 0;
    if (!read_win(in, x, y, &w) || wt->rank != x->rank || g < 1 || c % g || m % g ||
        !cpu_fused_act(in, &act, &alpha, &beta) || ((tr || !f32) && act != GK_ACT_NONE))
        return false;
    if (wt->dims[0] != (tr ? c : m) || wt->dims[1] != (tr ? m / g : c / g) ||
        (bv && glow_type_numel(&bv->type) != m) || (!tr && !forward_out_ok(&w)))
        return false;
    /* The f32 ConvTranspose's row chunk holds 16 columns of up to 64 phases. */
    bool any = !f32 || (tr && w.s[2] > 64);
    for (int i = 0; i < w.nsp; i++)
        if (wt->dims[2 + i] != w.k[3 - w.nsp + i])
            return false;
    /* The f32 rows' arguments; the any rows' lead with dt and end at the group. */
    cpu_arg args[] = {
        cpu_num(dt), cpu_ptr(xv, 0), cpu_ptr(wv, 0), cpu_opt_ptr(bv), cpu_ptr(yv, 0),
        cpu_num(x->dims[0]), cpu_num(c), cpu_num(w.in[0]), cpu_num(w.in[1]), cpu_num(w.in[2]),
        cpu_num(m), cpu_num(w.k[0]), cpu_num(w.k[1]), cpu_num(w.k[2]), cpu_num(w.out[0]),
        cpu_num(w.out[1]), cpu_num(w.out[2]), cpu_num(w.s[0]), cpu_num(w.s[1]), cpu_num(w.s[2]),
        cpu_num(w.dl[0]), cpu_num(w.dl[1]), cpu_num(w.dl[2]), cpu_num(w.pb[0]), cpu_num(w.pb[1]),
        cpu_num(w.pb[2]), cpu_num(g), cpu_num(act), cpu_real(alpha), cpu_real(beta)
    };
    int nargs = (int)(sizeof args / sizeof args[0]);
    if (any)
        cpu_make_op(op, tr ? CPU_K_deconv3d_any_scalar : CPU_K_conv3d_any_scalar, args,
                    nargs - 3);
    else
        cpu_make_op(op, tr ? CPU_K_deconv3d_f32_scalar : CPU_K_conv3d_f32_scalar, args + 1,
                    tr ? nargs - 4 : nargs - 1);
    return true;
}

/* MaxPool (with its index result) of any numeric kind, AveragePool and LpPool of any float
 * kind, over 1-3 spatial dims. */
static bool pool(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *iv = NULL, *xv = in->ops[in->nout].v;
    const glow_type *x = &xv->type, *y = &yv->type;
    bool max = in->kind == IK_MAX_POOL, lp = in->kind == IK_LP_POOL;
    bool f32 = x->dtype == GLOW_F32;
    int dt = dt_code(x->dtype);
    if (in->nout == 2 && max)
        iv = in->ops[1].v;
    if (in->nops != in->nout + 1 || (in->nout != 1 && !iv) || !dt || y->dtype != x->dtype ||
        (!max && !gk_dt_is_float(dt)) || (iv && (iv->type.dtype != GLOW_I64 ||
                                                 !glow_type_same_shape(&iv->type, y))) ||
        !cpu_no_alias(in) || (iv && cpu_overlap(yv, iv)))
        return false;
    if (f32 && x->rank == 4 && !iv && !lp) {
        cpu_pool pp;
        if (!cpu_pool_params(in, &pp))
            return false;
        int64_t planes = x->dims[0] * x->dims[1];
        if (max) CPU_OP(op, CPU_K_maxpool2d_f32_scalar, cpu_ptr(xv, 0), cpu_ptr(yv, 0),
            cpu_num(planes), cpu_num(x->dims[2]), cpu_num(x->dims[3]), cpu_num(y->dims[2]),
            cpu_num(y->dims[3]), cpu_num(pp.k[0]), cpu_num(pp.k[1]), cpu_num(pp.s[0]),
            cpu_num(pp.s[1]), cpu_num(pp.dl[0]), cpu_num(pp.dl[1]), cpu_num(pp.p[0]),
            cpu_num(pp.p[1]));
        else CPU_OP(op, CPU_K_avgpool2d_f32_scalar, cpu_ptr(xv, 0), cpu_ptr(yv, 0), cpu_num(planes),
                    cpu_num(x->dims[2]), cpu_num(x->dims[3]), cpu_num(y->dims[2]),
                    cpu_num(y->dims[3]), cpu_num(pp.k[0]), cpu_num(pp.k[1]), cpu_num(pp.s[0]),
                    cpu_num(pp.s[1]), cpu_num(pp.dl[0]), cpu_num(pp.dl[1]), cpu_num(pp.p[0]),
                    cpu_num(pp.p[1]), cpu_num(pp.pe[0]), cpu_num(pp.pe[1]), cpu_num(pp.cip));
        return true;
    }
    win3 w;
    if (!read_win(in, x, y, &w) || y->dims[1] != x->dims[1] || !forward_out_ok(&w))
        return false;
    int64_t planes = x->dims[0] * x->dims[1];
    /* The any rows' arguments: dt, then the f32 rows'. */
    cpu_arg a[27] = { cpu_num(dt), cpu_ptr(xv, 0), cpu_ptr(yv, 0) }, *at = a + 3;
    if (max)
        *at++ = cpu_opt_ptr(iv);
    *at++ = cpu_num(planes);
    const int64_t *win[6] = { w.in, w.out, w.k, w.s, w.dl, w.pb };
    for (int j = 0; j < 6; j++)
        for (int i = 0; i < 3; i++)
            *at++ = cpu_num(win[j][i]);
    if (max) {
        cpu_make_op(op, f32 ? CPU_K_maxpool3d_f32_scalar : CPU_K_maxpool3d_any_scalar,
                    a + f32, (int)(at - a) - f32);
        return true;
    }
    /* count_include_pad counts the model's own end pads, without ceil_mode's extra. */
    const glow_attr *cx = cpu_attr(in, GA_CEIL_EXTRA), *cip = cpu_attr(in, GA_COUNT_INCLUDE_PAD);
    const glow_attr *pa = cpu_attr(in, GA_P);
    if (cx && cx->n != (uint32_t)w.nsp)
        return false;
    for (int i = 0; cx && i < w.nsp; i++) {
        int j = 3 - w.nsp + i;
        if (cx->v.ints[i] < 0 || cx->v.ints[i] > w.pe[j])
            return false;
        w.pe[j] -= cx->v.ints[i];
    }
    int64_t p = lp ? (pa ? pa->v.i : 2) : 0;
    if (lp && p < 1)
        return false;
    for (int i = 0; i < 3; i++)
        *at++ = cpu_num(w.pe[i]);
    *at++ = cpu_num(cip && cip->v.i != 0);
    *at++ = cpu_num(p);
    cpu_make_op(op, f32 ? CPU_K_avgpool3d_f32_scalar : CPU_K_avgpool3d_any_scalar, a + f32,
                (int)(at - a) - f32);
    return true;
}

static double attr_float(const ir_instr *in, glow_attr_id id, double dflt)
{
    const glow_attr *a = cpu_attr(in, id);
    return a ? a->v.f : dflt;
}

static const char *attr_str(const ir_instr *in, glow_attr_id id, const char *dflt)
{
    const glow_attr *a = cpu_attr(in, id);
    return a ? a->v.s : dflt;
}

/* Resize of rank 1-4 of any numeric kind, the dims padded in front to four. */
static bool resize(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    bool f32 = x->dtype == GLOW_F32;
    int dt = dt_code(x->dtype);
    const glow_attr *sa = cpu_attr(in, GA_SCALES), *ra = cpu_attr(in, GA_ROI);
    const glow_attr *ex = cpu_attr(in, GA_EXCLUDE_OUTSIDE);
    int r = x->rank, lead = 4 - r;
    const char *mode = attr_str(in, GA_MODE, "nearest");
    if (in->nout != 1 || in->nops != 2 || !dt || y->dtype != x->dtype || r < 1 || r > 4 ||
        y->rank != r ||
        !sa || sa->n != (uint32_t)r || !cpu_no_alias(in) ||
        (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic")))
        return false;
    int64_t id[4] = { 1, 1, 1, 1 }, od[4] = { 1, 1, 1, 1 };
    double sc[4] = { 1, 1, 1, 1 }, rs[4] = { 0, 0, 0, 0 }, re[4] = { 1, 1, 1, 1 };
    bool roi = ra && ra->n == 2 * (uint32_t)r;
    for (int i = 0; i < r; i++) {
        if (!(sa->v.floats[i] > 0) || (x->dims[i] == 0 && y->dims[i] > 0))
            return false;
        id[lead + i] = x->dims[i];
        od[lead + i] = y->dims[i];
        sc[lead + i] = sa->v.floats[i];
        rs[lead + i] = roi ? ra->v.floats[i] : 0;
        re[lead + i] = roi ? ra->v.floats[r + i] : 1;
    }
    int coord = gk_coord_mode_code(attr_str(in, GA_COORD_MODE, "half_pixel"));
    int nearest = gk_nearest_mode_code(attr_str(in, GA_NEAREST_MODE, "round_prefer_floor"));
    /* The any row's arguments: dt, then the f32 row's. */
    cpu_arg a[] = {
        cpu_num(dt), cpu_ptr(in->ops[1].v, 0), cpu_ptr(in->ops[0].v, 0), cpu_num(id[0]),
        cpu_num(id[1]), cpu_num(id[2]), cpu_num(id[3]), cpu_num(od[0]), cpu_num(od[1]),
        cpu_num(od[2]), cpu_num(od[3]), cpu_num(lead), cpu_real(sc[0]), cpu_real(sc[1]),
        cpu_real(sc[2]), cpu_real(sc[3]), cpu_real(rs[0]), cpu_real(rs[1]), cpu_real(rs[2]),
        cpu_real(rs[3]), cpu_real(re[0]), cpu_real(re[1]), cpu_real(re[2]), cpu_real(re[3]),
        cpu_num(gk_resize_mode_code(mode)), cpu_num(coord), cpu_num(nearest),
        cpu_real(attr_float(in, GA_CUBIC_COEFF_A, -0.75)), cpu_num(ex && ex->v.i != 0),
        cpu_real(attr_float(in, GA_EXTRAPOLATION_VALUE, 0.0))
    };
    int nargs = (int)(sizeof a / sizeof a[0]);
    cpu_make_op(op, f32 ? CPU_K_resize_f32_scalar : CPU_K_resize_any_scalar, a + f32,
                nargs - f32);
    return true;
}

/* cpu.wino_nchwc [y, x, U, work, scratch, bias?, res?]: a 3x3 stride-1 group-1 convolution
 * whose input blocks are whole vectors, output and residual in the blocked layout of the
 * target's vector length; the scratch holds whole slots of the shape's plan, which the kernel
 * gets as constants (searched here once, not in every specialized kernel). */
bool cpu_select_wino(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    int v = cpu_isa_vlen(isa);
    cpu_conv cp;
    if (!v || in->nops < 5 || !cpu_conv_attrs(in, &cp) || cp.g != 1 || cp.k[0] != 3 ||
        cp.k[1] != 3 || cp.s[0] != 1 || cp.s[1] != 1 || cp.dl[0] != 1 || cp.dl[1] != 1)
        return false;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *sv = in->ops[4].v;
    const ir_value *bias, *res;
    cpu_tail_operands(in, 5, &bias, &res);
    const glow_type *y = &yv->type, *x = &xv->type;
    if (!cpu_nchwc_bytes(y, v) || !cpu_nchwc_bytes(x, v) || (x->rank == 5 && x->dims[4] != v) ||
        (res && !glow_type_equal(&res->type, y)) || sv->type.dtype != GLOW_F32)
        return false;
    for (uint32_t i = 1; i < in->nops; i++)
        if (cpu_overlap(yv, in->ops[i].v) && !(in->ops[i].v == res && res->addr == yv->addr))
            return false;
    if (cpu_overlap(sv, xv) || (res && cpu_overlap(sv, res)))
        return false;
    int64_t n, mb, oh, ow, xn, cb, ih, iw;
    cpu_nchwc_dims(y, v, &n, &mb, &oh, &ow);
    cpu_nchwc_dims(x, v, &xn, &cb, &ih, &iw);
    size_t plan[3];
    size_t slot = cpu_wino_plan(n, cb * v, mb * v, oh, ow, v, plan);
    int64_t slots = slot ? glow_type_numel(&sv->type) / (int64_t)slot : 0;
    if (xn != n || slots < 1 || (int64_t)(ih + cp.p[0] + cp.p[2]) != oh + 2 ||
        (int64_t)(iw + cp.p[1] + cp.p[3]) != ow + 2)
        return false;
    /* A deep layer's sizes and plan are run-time values, so that GoogLeNet's fourteen 3x3
     * layers share a few functions (run time within 1.6 %); a shallow one (cpu_deep) keeps
     * them constant: there the transforms dominate. */
    bool deep = cpu_deep(cb, mb);
    CPU_OP(op, isa->avx512 ? CPU_K_wino_nchwc_f32_avx512 : CPU_K_wino_nchwc_f32_avx2,
           cpu_ptr(yv, 0), cpu_ptr(xv, 0), cpu_ptr(in->ops[2].v, 0), cpu_opt_ptr(bias),
           cpu_opt_ptr(res), cpu_ptr(sv, 0), cpu_num(slots), cpu_size(deep, n),
           cpu_size(deep, cb), cpu_size(deep, ih), cpu_size(deep, iw), cpu_size(deep, mb),
           cpu_size(deep, oh), cpu_size(deep, ow), cpu_num(cp.p[0]), cpu_num(cp.p[1]),
           cpu_size(deep, (int64_t)plan[0]), cpu_size(deep, (int64_t)plan[1]),
           cpu_size(deep, (int64_t)plan[2]), cpu_num(cp.act), cpu_real(cp.alpha),
           cpu_real(cp.beta), cpu_ptr(in->ops[3].v, 0));
    return true;
}

bool cpu_select_spatial(const ir_instr *in, cpu_op *op)
{
    switch ((int)in->kind) {
    case IK_CONV: case IK_CONV_TRANSPOSE:
        return conv(in, op);
    case IK_MAX_POOL: case IK_AVG_POOL: case IK_LP_POOL:
        return pool(in, op);
    case IK_RESIZE:
        return resize(in, op);
    default:
        return false;
    }
}
