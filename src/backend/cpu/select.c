// select.c - Picks the kernel calls for one IR instruction: which gk_* function, with which
// constant shapes, strides and buffer offsets; instructions no kernel covers fall back.
//
// Only exact cases are taken (f32 operands of the shapes the kernel expects, no aliasing a
// kernel cannot tolerate); everything else returns false and runs through the evaluator, so
// adding a kernel never changes what the backend can run, only how fast.
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/repack.h"

/* Must match kernels/kernels.h. */
enum { UN_RELU = 1, UN_NEG, UN_ABS, UN_SQRT, UN_EXP, UN_TANH, UN_SIGMOID };
enum { BIN_ADD = 1, BIN_SUB, BIN_MUL, BIN_DIV, BIN_MAX, BIN_MIN };
enum { ACT_NONE = 0, ACT_RELU, ACT_CLIP, ACT_LEAKY_RELU, ACT_SIGMOID, ACT_TANH };

bool cpu_kernel_built(const char *op, const char *dtype, const char *isa)
{
    static const char *const rows[][3] = {
#define KERNEL(op, dtype, isa) { #op, #dtype, #isa },
#include "kernels.def"
#undef KERNEL
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i][0], op) && !strcmp(rows[i][1], dtype) && !strcmp(rows[i][2], isa))
            return true;
    return false;
}

static int region_of(const ir_value *v)
{
    const ir_value *r = ir_root((ir_value *)v);
    return r->kind == IV_ALLOC ? CPU_REGION_ACT
           : r->is_mutable     ? CPU_REGION_MUTABLE
                               : CPU_REGION_CONSTANT;
}

static cpu_arg ptr(const ir_value *v, uint64_t extra)
{
    return (cpu_arg){ .kind = CA_PTR, .region = region_of(v), .offset = v->addr + extra };
}
static cpu_arg num(int64_t i) { return (cpu_arg){ .kind = CA_INT, .i = i }; }
static cpu_arg real(double f) { return (cpu_arg){ .kind = CA_REAL, .f = f }; }
static cpu_arg null_ptr(void) { return (cpu_arg){ .kind = CA_NULL }; }

static bool overlap(const ir_value *a, const ir_value *b)
{
    if (region_of(a) != region_of(b))
        return false;
    uint64_t a0 = a->addr, a1 = a0 + glow_type_bytes(&a->type);
    uint64_t b0 = b->addr, b1 = b0 + glow_type_bytes(&b->type);
    return a0 < b1 && b0 < a1;
}

/* The output (operand 0) shares no byte with any input. */
static bool no_alias(const ir_instr *in)
{
    for (uint32_t i = in->nout; i < in->nops; i++)
        for (uint32_t o = 0; o < in->nout; o++)
            if (overlap(in->ops[o].v, in->ops[i].v))
                return false;
    return true;
}

static bool all_f32(const ir_instr *in)
{
    for (uint32_t i = 0; i < in->nops; i++)
        if (in->ops[i].v->type.dtype != GLOW_F32)
            return false;
    return true;
}

const glow_attr *cpu_attr(const ir_instr *in, glow_attr_id id)
{
    for (uint32_t i = 0; i < in->nattr; i++)
        if (in->attrs[i].id == id)
            return &in->attrs[i];
    return NULL;
}

static int64_t attr_int(const ir_instr *in, glow_attr_id id, int64_t dflt)
{
    const glow_attr *a = cpu_attr(in, id);
    return a ? a->v.i : dflt;
}

/* The 2 spatial entries of a kernel/strides/dilations list, or pads' 4. */
static bool attr_ints(const ir_instr *in, glow_attr_id id, uint32_t n, int64_t *out)
{
    const glow_attr *a = cpu_attr(in, id);
    if (!a || a->n != n)
        return false;
    for (uint32_t i = 0; i < n; i++)
        out[i] = a->v.ints[i];
    return true;
}

/* The fused activation of Conv/MatMul/FC as (code, alpha, beta); false when unknown. */
static bool fused_act(const ir_instr *in, cpu_arg *code, cpu_arg *alpha, cpu_arg *beta)
{
    const glow_attr *a = cpu_attr(in, GA_FUSED_ACT), *fa = cpu_attr(in, GA_FUSED_ALPHA),
                    *fb = cpu_attr(in, GA_FUSED_BETA);
    int act = ACT_NONE;
    if (a) {
        const char *s = a->v.s;
        act = !strcmp(s, "Relu") ? ACT_RELU : !strcmp(s, "Clip") ? ACT_CLIP
            : !strcmp(s, "LeakyRelu") ? ACT_LEAKY_RELU : !strcmp(s, "Sigmoid") ? ACT_SIGMOID
            : !strcmp(s, "Tanh") ? ACT_TANH : -1;
        if (act < 0)
            return false;
    }
    *code = num(act);
    *alpha = real(fa ? fa->v.f : 0);
    *beta = real(fb ? fb->v.f : 0);
    return true;
}

static void call(cpu_call *c, const char *fn, const cpu_arg *args, int nargs)
{
    snprintf(c->fn, sizeof c->fn, "%s", fn);
    memcpy(c->args, args, sizeof(*args) * (size_t)nargs);
    c->nargs = nargs;
    c->barrier_before = false;
}
#define CALL(c, fn, ...) \
    call(c, fn, (const cpu_arg[]){ __VA_ARGS__ }, \
         (int)(sizeof((const cpu_arg[]){ __VA_ARGS__ }) / sizeof(cpu_arg)))

int cpu_eltwise_op(const ir_instr *in)
{
    int op = 0;
    switch ((int)in->kind) {
    case IK_RELU: op = UN_RELU; break;
    case IK_NEG: op = UN_NEG; break;
    case IK_ABS: op = UN_ABS; break;
    case IK_SQRT: op = UN_SQRT; break;
    case IK_EXP: op = UN_EXP; break;
    case IK_TANH: op = UN_TANH; break;
    case IK_SIGMOID: op = UN_SIGMOID; break;
    case IK_ADD: op = -BIN_ADD; break;
    case IK_SUB: op = -BIN_SUB; break;
    case IK_MUL: op = -BIN_MUL; break;
    case IK_DIV: op = -BIN_DIV; break;
    case IK_MAX: op = -BIN_MAX; break;
    case IK_MIN: op = -BIN_MIN; break;
    case IK_CLIP: op = CPU_OP_CLIP; break;
    default: return 0;
    }
    if (!all_f32(in) || in->nout != 1 || in->nops != (op > 0 ? 2u : 3u))
        return 0;
    for (uint32_t i = 1; i < in->nops; i++)
        if (!glow_type_same_shape(&in->ops[i].v->type, &in->ops[0].v->type))
            return 0;
    return op;
}

/* Same-shape elementwise ops: any layout, as long as every operand has the same one. */
static bool sel_elementwise(const ir_instr *in, cpu_call *c)
{
    const ir_value *y = in->ops[0].v;
    int64_t n = glow_type_numel(&y->type);
    int op = cpu_eltwise_op(in);
    if (!op)
        return false;
    /* In place is fine only when the output is exactly an input. */
    for (uint32_t i = 1; i < in->nops; i++)
        if ((overlap(y, in->ops[i].v) && in->ops[i].v->addr != y->addr) ||
            cpu_blocked_bytes(in->ops[i].v) != cpu_blocked_bytes(y))
            return false;
    if (op == CPU_OP_CLIP) {
        const glow_attr *lo = cpu_attr(in, GA_MIN), *hi = cpu_attr(in, GA_MAX);
        CALL(c, "gk_act_f32_scalar", num(ACT_CLIP), real(lo ? lo->v.f : -INFINITY),
             real(hi ? hi->v.f : INFINITY), num(n), ptr(in->ops[1].v, 0), ptr(y, 0));
    } else if (op > 0) {
        CALL(c, "gk_unary_f32_scalar", num(op), num(n), ptr(in->ops[1].v, 0), ptr(y, 0));
    } else {
        CALL(c, "gk_binary_f32_scalar", num(-op), num(n), ptr(in->ops[1].v, 0),
             ptr(in->ops[2].v, 0), ptr(y, 0));
    }
    return true;
}

/* The ISA suffix of the fast kernels for prepared values of vector length v, or NULL when the
 * target lacks it (a bundle built for another CPU): then the scalar kernels run. */
static const char *fast_isa(const cpu_fast *fs, const cpu_isa *isa)
{
    if (fs->v == 16 && isa->avx512)
        return "avx512";
    if (fs->v == 8 && isa->avx2)
        return "avx2";
    return NULL;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool cpu_conv_params(const ir_instr *in, cpu_conv *cp)
{
    memset(cp, 0, sizeof *cp);
    if (in->kind != IK_CONV || in->nout != 1 || in->nops < 3 || in->nops > 5)
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type,
                    *w = &in->ops[2].v->type;
    cp->g = attr_int(in, GA_GROUP, 1);
    if (!all_f32(in) || x->rank != 4 || w->rank != 4 || y->rank != 4 ||
        !attr_ints(in, GA_KERNEL, 2, cp->k) || !attr_ints(in, GA_STRIDES, 2, cp->s) ||
        !attr_ints(in, GA_PADS, 4, cp->p) || !attr_ints(in, GA_DILATIONS, 2, cp->dl) ||
        cp->g < 1 || x->dims[1] % cp->g || y->dims[1] % cp->g ||
        w->dims[0] != y->dims[1] || w->dims[1] != x->dims[1] / cp->g ||
        w->dims[2] != cp->k[0] || w->dims[3] != cp->k[1] || cp->s[0] < 1 || cp->s[1] < 1 ||
        cp->dl[0] < 1 || cp->dl[1] < 1 || x->dims[0] != y->dims[0])
        return false;
    cpu_arg act, alpha, beta;
    if (!fused_act(in, &act, &alpha, &beta))
        return false;
    cp->act = (int)act.i;
    cp->alpha = alpha.f;
    cp->beta = beta.f;
    if (in->nops >= 4 && glow_type_numel(&in->ops[3].v->type) != y->dims[1])
        return false;
    if (in->nops == 5 && !glow_type_same_shape(&in->ops[4].v->type, y))
        return false;
    return true;
}

/* A conv cpu_prepare set up: the input converted to the blocked layout unless it is kept
 * blocked (ir_value.blocked), the blocked conv (bias, residual, activation fused), the output
 * converted back unless it is kept blocked; a barrier between dependent calls. */
static bool sel_conv_fast(const ir_instr *in, const cpu_isa *isa, const cpu_conv *cp,
                          cpu_call *calls, int *ncalls)
{
    cpu_fast fs;
    const char *sfx;
    if (!cpu_fast_find(in, &fs) || !fs.w || !(sfx = fast_isa(&fs, isa)))
        return false;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *y = &yv->type, *x = &xv->type, *w = &in->ops[2].v->type;
    int64_t v = fs.v, n = x->dims[0], c = x->dims[1], m = y->dims[1], g = cp->g;
    bool dw = g > 1 && g == c && m == c;
    bool xb = xv->blocked == v, yb = yv->blocked == v, res = in->nops == 5;
    int64_t cv = g == 1 && c < v ? c : v;
    int64_t cb = dw ? cdiv(c, v) : cdiv(c / g, cv), mb = cdiv(m, v);
    int64_t ih = x->dims[2], iw = x->dims[3], oh = y->dims[2], ow = y->dims[3];
    /* Blocked operands hold whole blocks; otherwise the scratch must hold the blocked
     * tensors (cpu_prepare sized them so). A residual is added in the output's layout. */
    if ((xb && c % v) || (yb && m % v) || (res && (!yb || in->ops[4].v->blocked != v)) ||
        (!xb && (!fs.xblk ||
                 glow_type_numel(&fs.xblk->type) < n * (dw ? cb : g * cb) * ih * iw * cv)) ||
        (!yb && (!fs.yblk || glow_type_numel(&fs.yblk->type) < n * mb * oh * ow * v)) ||
        (in->nops >= 4) != !!fs.bias)
        return false;
    char fn[48];
    int k = 0;
    if (!xb) {
        snprintf(fn, sizeof fn, "gk_to_nchwc_f32_%s", sfx);
        CALL(&calls[k++], fn, ptr(fs.xblk, 0), ptr(xv, 0), num(n), num(c), num(ih * iw),
             num(cv));
    }
    cpu_arg bias = fs.bias ? ptr(fs.bias, 0) : null_ptr();
    cpu_arg out = yb ? ptr(yv, 0) : ptr(fs.yblk, 0), inp = xb ? ptr(xv, 0) : ptr(fs.xblk, 0);
    cpu_arg rp = res ? ptr(in->ops[4].v, 0) : null_ptr();
    cpu_arg act = num(cp->act), alpha = real(cp->alpha), beta = real(cp->beta);
    cpu_arg work = fs.work ? ptr(fs.work, 4 * (uint64_t)in->id) : null_ptr();
    if (dw) {
        snprintf(fn, sizeof fn, "gk_dwconv2d_nchwc_f32_%s", sfx);
        CALL(&calls[k], fn, out, inp, ptr(fs.w, 0), bias, rp, num(n), num(cb), num(ih),
             num(iw), num(oh), num(ow), num(w->dims[2]), num(w->dims[3]), num(cp->s[0]),
             num(cp->s[1]), num(cp->p[0]), num(cp->p[1]), num(cp->dl[0]), num(cp->dl[1]), act,
             alpha, beta, work);
    } else {
        snprintf(fn, sizeof fn, "gk_conv2d_nchwc_f32_%s", sfx);
        CALL(&calls[k], fn, out, inp, ptr(fs.w, 0), bias, rp, num(n), num(g), num(cb),
             num(cv), num(ih), num(iw), num(mb), num(oh), num(ow), num(w->dims[2]),
             num(w->dims[3]), num(cp->s[0]), num(cp->s[1]), num(cp->p[0]), num(cp->p[1]),
             num(cp->dl[0]), num(cp->dl[1]), act, alpha, beta, work);
    }
    calls[k].barrier_before = k > 0;
    k++;
    if (!yb) {
        snprintf(fn, sizeof fn, "gk_from_nchwc_f32_%s", sfx);
        CALL(&calls[k], fn, ptr(yv, 0), ptr(fs.yblk, 0), num(n), num(m), num(oh * ow));
        calls[k++].barrier_before = true;
    }
    *ncalls = k;
    return true;
}

static bool sel_conv(const ir_instr *in, const cpu_isa *isa, cpu_call *c, int *ncalls)
{
    cpu_conv cp;
    if (!cpu_conv_params(in, &cp))
        return false;
    /* The output shares no byte with the input and weights; the residual may be it exactly. */
    const ir_value *yv = in->ops[0].v;
    for (uint32_t i = 1; i < in->nops; i++)
        if (overlap(yv, in->ops[i].v) && !(i == 4 && in->ops[i].v->addr == yv->addr))
            return false;
    if (sel_conv_fast(in, isa, &cp, c, ncalls))
        return true;
    /* The scalar kernel reads and writes NCHW, knows no residual, reads the original weights. */
    if (in->nops == 5 || cpu_blocked_bytes(in->ops[0].v) || cpu_blocked_bytes(in->ops[1].v) ||
        ir_root(in->ops[2].v)->unplaced || (in->nops == 4 && ir_root(in->ops[3].v)->unplaced))
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    cpu_arg bias = in->nops == 4 ? ptr(in->ops[3].v, 0) : null_ptr();
    CALL(c, "gk_conv2d_f32_scalar", ptr(in->ops[1].v, 0), ptr(in->ops[2].v, 0), bias,
         ptr(in->ops[0].v, 0), num(x->dims[0]), num(x->dims[1]), num(x->dims[2]),
         num(x->dims[3]), num(y->dims[1]), num(cp.k[0]), num(cp.k[1]), num(y->dims[2]),
         num(y->dims[3]), num(cp.s[0]), num(cp.s[1]), num(cp.dl[0]), num(cp.dl[1]),
         num(cp.p[0]), num(cp.p[1]), num(cp.g), num(cp.act), real(cp.alpha), real(cp.beta));
    return true;
}

static bool sel_matmul(const ir_instr *in, const cpu_isa *isa, cpu_call *c)
{
    const glow_type *y = &in->ops[0].v->type, *a = &in->ops[1].v->type,
                    *b = &in->ops[2].v->type;
    int r = a->rank;
    if (!all_f32(in) || in->nout != 1 || r < 2 || b->rank != r || y->rank != r ||
        !no_alias(in))
        return false;
    for (int i = 0; i < r - 2; i++)
        if (b->dims[i] != a->dims[i] || y->dims[i] != a->dims[i])
            return false;
    int64_t m = a->dims[r - 2], k = a->dims[r - 1], n = b->dims[r - 1];
    if (b->dims[r - 2] != k || y->dims[r - 2] != m || y->dims[r - 1] != n)
        return false;
    cpu_arg act, alpha, beta;
    if (!fused_act(in, &act, &alpha, &beta))
        return false;
    int64_t batch = glow_type_numel(y) / (m * n > 0 ? m * n : 1);
    cpu_arg bias = null_ptr();
    if (in->kind == IK_FULLY_CONNECTED) {
        if (r != 2 || in->nops != 4 || glow_type_numel(&in->ops[3].v->type) != n)
            return false;
        bias = ptr(in->ops[3].v, 0);
    } else if (in->nops != 3) {
        return false;
    }
    cpu_fast fs;
    const char *sfx;
    if (r == 2 && cpu_fast_find(in, &fs) && fs.w && (sfx = fast_isa(&fs, isa)) &&
        glow_type_numel(&fs.w->type) >= (int64_t)glow_repack_gemm_b_floats(k, n, 2 * fs.v)) {
        char fn[48];
        snprintf(fn, sizeof fn, "gk_gemm_packed_f32_%s", sfx);
        CALL(c, fn, ptr(in->ops[0].v, 0), ptr(in->ops[1].v, 0), ptr(fs.w, 0), bias, null_ptr(),
             num(m), num(n), num(k), num(k), num(n), act, alpha, beta,
             fs.work ? ptr(fs.work, 4 * (uint64_t)in->id) : null_ptr());
        return true;
    }
    if (ir_root(in->ops[2].v)->unplaced)
        return false;
    CALL(c, "gk_matmul_f32_scalar", ptr(in->ops[1].v, 0), ptr(in->ops[2].v, 0), bias,
         ptr(in->ops[0].v, 0), num(batch), num(m), num(k), num(n), num(k * n), act, alpha,
         beta);
    return true;
}

bool cpu_pool_params(const ir_instr *in, cpu_pool *pp)
{
    memset(pp, 0, sizeof *pp);
    if (in->kind != IK_MAX_POOL && in->kind != IK_AVG_POOL)
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    if (!all_f32(in) || in->nout != 1 || in->nops != 2 || x->rank != 4 || y->rank != 4 ||
        !attr_ints(in, GA_KERNEL, 2, pp->k) || !attr_ints(in, GA_STRIDES, 2, pp->s) ||
        !attr_ints(in, GA_PADS, 4, pp->p) || !attr_ints(in, GA_DILATIONS, 2, pp->dl) ||
        pp->s[0] < 1 || pp->s[1] < 1 || pp->dl[0] < 1 || pp->dl[1] < 1 ||
        y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return false;
    for (int i = 0; i < 4; i++)
        if (pp->p[i] < 0)
            return false;
    /* AvgPool: ceil_mode's extra end padding is not counted by count_include_pad. */
    pp->pe[0] = pp->p[2];
    pp->pe[1] = pp->p[3];
    int64_t cx[2];
    if (cpu_attr(in, GA_CEIL_EXTRA)) {
        if (!attr_ints(in, GA_CEIL_EXTRA, 2, cx) || cx[0] < 0 || cx[1] < 0 ||
            cx[0] > pp->p[2] || cx[1] > pp->p[3])
            return false;
        pp->pe[0] -= cx[0];
        pp->pe[1] -= cx[1];
    }
    pp->cip = attr_int(in, GA_COUNT_INCLUDE_PAD, 0) != 0;
    return true;
}

/* The blocked pools: for activations kept blocked (ir_value.blocked); AvgPool without
 * dilation. */
static bool sel_pool_blocked(const ir_instr *in, const cpu_isa *isa, const cpu_pool *pp,
                             cpu_call *c)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *y = &yv->type, *x = &xv->type;
    int v = xv->blocked;
    const char *sfx = v == 16 && isa->avx512 ? "avx512" : v == 8 && isa->avx2 ? "avx2" : NULL;
    if (!sfx || yv->blocked != v || x->dims[1] % v)
        return false;
    char fn[48];
    int64_t cb = x->dims[1] / v;
    if (in->kind == IK_MAX_POOL) {
        snprintf(fn, sizeof fn, "gk_maxpool_nchwc_f32_%s", sfx);
        CALL(c, fn, ptr(yv, 0), ptr(xv, 0), num(x->dims[0]), num(cb), num(x->dims[2]),
             num(x->dims[3]), num(y->dims[2]), num(y->dims[3]), num(pp->k[0]), num(pp->k[1]),
             num(pp->s[0]), num(pp->s[1]), num(pp->p[0]), num(pp->p[1]), num(pp->dl[0]),
             num(pp->dl[1]));
        return true;
    }
    if (pp->dl[0] != 1 || pp->dl[1] != 1)
        return false;
    snprintf(fn, sizeof fn, "gk_avgpool_nchwc_f32_%s", sfx);
    CALL(c, fn, ptr(yv, 0), ptr(xv, 0), num(x->dims[0]), num(cb), num(x->dims[2]),
         num(x->dims[3]), num(y->dims[2]), num(y->dims[3]), num(pp->k[0]), num(pp->k[1]),
         num(pp->s[0]), num(pp->s[1]), num(pp->p[0]), num(pp->p[1]), num(pp->pe[0]),
         num(pp->pe[1]), num(pp->cip));
    return true;
}

static bool sel_pool(const ir_instr *in, const cpu_isa *isa, cpu_call *c)
{
    cpu_pool pp;
    if (!cpu_pool_params(in, &pp) || !no_alias(in))
        return false;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    if (cpu_blocked_bytes(xv) || cpu_blocked_bytes(yv))
        return sel_pool_blocked(in, isa, &pp, c);
    const glow_type *y = &yv->type, *x = &xv->type;
    int64_t planes = x->dims[0] * x->dims[1];
    if (in->kind == IK_MAX_POOL)
        CALL(c, "gk_maxpool2d_f32_scalar", ptr(xv, 0), ptr(yv, 0), num(planes),
             num(x->dims[2]), num(x->dims[3]), num(y->dims[2]), num(y->dims[3]),
             num(pp.k[0]), num(pp.k[1]), num(pp.s[0]), num(pp.s[1]), num(pp.dl[0]),
             num(pp.dl[1]), num(pp.p[0]), num(pp.p[1]));
    else
        CALL(c, "gk_avgpool2d_f32_scalar", ptr(xv, 0), ptr(yv, 0), num(planes),
             num(x->dims[2]), num(x->dims[3]), num(y->dims[2]), num(y->dims[3]),
             num(pp.k[0]), num(pp.k[1]), num(pp.s[0]), num(pp.s[1]), num(pp.dl[0]),
             num(pp.dl[1]), num(pp.p[0]), num(pp.p[1]), num(pp.pe[0]), num(pp.pe[1]),
             num(pp.cip));
    return true;
}

static bool sel_transpose(const ir_instr *in, cpu_call *c)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *perm = cpu_attr(in, GA_PERM);
    int r = x->rank;
    if (in->nout != 1 || in->nops != 2 || glow_dtype_size(x->dtype) != 4 ||
        y->dtype != x->dtype || r < 1 || r > 6 || !perm || perm->n != (uint32_t)r ||
        !no_alias(in))
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
    CALL(c, "gk_transpose_b32_scalar", ptr(in->ops[1].v, 0), ptr(in->ops[0].v, 0), num(d[0]),
         num(d[1]), num(d[2]), num(d[3]), num(d[4]), num(d[5]), num(st[0]), num(st[1]),
         num(st[2]), num(st[3]), num(st[4]), num(st[5]));
    return true;
}

/* Concat along `axis`: one strided row copy per input into its slot of the output. */
static bool sel_concat(const ir_instr *in, cpu_call *calls, int *ncalls)
{
    const glow_type *y = &in->ops[0].v->type;
    int64_t axis = attr_int(in, GA_AXIS, -1);
    int nin = (int)(in->nops - in->nout);
    if (in->nout != 1 || nin < 1 || nin > CPU_MAX_CALLS || axis < 0 || axis >= y->rank ||
        !no_alias(in))
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
        CALL(&calls[i], "gk_copy2d_u8_scalar", num(rows), num(row), ptr(v, 0), num(row),
             ptr(in->ops[0].v, (uint64_t)at), num(out_row));
        at += row;
    }
    if (at != out_row)
        return false;
    *ncalls = nin;
    return true;
}

static bool sel_copy(const ir_instr *in, cpu_call *c)
{
    const ir_value *dst = in->ops[0].v, *src = in->ops[1].v;
    size_t bytes = glow_type_bytes(&dst->type);
    /* Overlapping copies need memmove's order, which a split over threads cannot keep. */
    if (bytes != glow_type_bytes(&src->type) || overlap(dst, src))
        return false;
    CALL(c, "gk_copy2d_u8_scalar", num(1), num((int64_t)bytes), ptr(src, 0), num(0),
         ptr(dst, 0), num(0));
    return true;
}

/* Broadcast of 4-byte elements: the transpose kernel with stride 0 on the broadcast dims
 * (the operand is right-aligned against the result, NumPy style). */
static bool sel_broadcast(const ir_instr *in, cpu_call *c)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    int r = y->rank;
    if (in->nout != 1 || in->nops != 2 || glow_dtype_size(x->dtype) != 4 ||
        y->dtype != x->dtype || r < 1 || r > 6 || x->rank > r || !no_alias(in))
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
    CALL(c, "gk_transpose_b32_scalar", ptr(in->ops[1].v, 0), ptr(in->ops[0].v, 0), num(d[0]),
         num(d[1]), num(d[2]), num(d[3]), num(d[4]), num(d[5]), num(st[0]), num(st[1]),
         num(st[2]), num(st[3]), num(st[4]), num(st[5]));
    return true;
}

/* Sum/Mean/Max/Min whose reduced dims (ignoring 1s) are one contiguous run: [outer, n, inner]. */
static bool sel_reduce(const ir_instr *in, cpu_call *c)
{
    const glow_type *x = &in->ops[1].v->type;
    const glow_attr *axes = cpu_attr(in, GA_AXES);
    if (!all_f32(in) || in->nout != 1 || in->nops != 2 || !axes || !no_alias(in))
        return false;
    bool red[GLOW_MAX_DIMS] = { false };
    for (uint32_t i = 0; i < axes->n; i++) {
        int64_t a = axes->v.ints[i];
        if (a < 0 || a >= x->rank)
            return false;
        red[a] = true;
    }
    int first = -1, last = -1;
    for (int i = 0; i < x->rank; i++)
        if (red[i] && x->dims[i] != 1) {
            first = first < 0 ? i : first;
            last = i;
        }
    int64_t outer = 1, n = 1, inner = 1;
    for (int i = 0; i < x->rank; i++) {
        if (first >= 0 && i >= first && i <= last) {
            if (!red[i] && x->dims[i] != 1)
                return false;
            n *= x->dims[i];
        } else if (first < 0 || i < first) {
            outer *= x->dims[i];
        } else {
            inner *= x->dims[i];
        }
    }
    if (outer * inner != glow_type_numel(&in->ops[0].v->type))
        return false;
    int op = in->kind == IK_REDUCE_SUM ? 1 : in->kind == IK_REDUCE_MEAN ? 2
           : in->kind == IK_REDUCE_MAX ? 3 : 4;   /* kernels.h GK_RED_* */
    CALL(c, "gk_reduce_f32_scalar", num(op), num(outer), num(n), num(inner),
         ptr(in->ops[1].v, 0), ptr(in->ops[0].v, 0));
    return true;
}

bool cpu_layout_agnostic(const ir_instr *in, int v)
{
    if (in->kind == IK_COPY)
        return in->nops == 2 && glow_type_same_shape(&in->ops[0].v->type, &in->ops[1].v->type);
    if (in->kind != IK_CONCAT)
        return false;
    /* Along C with whole blocks: each input is one run of bytes per image in either layout. */
    if (attr_int(in, GA_AXIS, -1) != 1 || in->nout != 1)
        return false;
    for (uint32_t i = 0; i < in->nops; i++)
        if (in->ops[i].v->type.rank != 4 || in->ops[i].v->type.dims[1] % v)
            return false;
    return true;
}

/* Which instructions may see blocked bytes: the layout-aware kernels and the layout-agnostic
 * moves, with every operand in one layout (a conv converts its own). */
static bool blocked_ok(const ir_instr *in)
{
    int v = 0;
    bool mixed = false;
    for (uint32_t i = 0; i < in->nops; i++) {
        int b = cpu_blocked_bytes(in->ops[i].v) ? in->ops[i].v->blocked : 0;
        if (b && v && b != v)
            return false;
        v = b ? b : v;
    }
    if (!v || in->kind == IK_CONV)
        return true;
    for (uint32_t i = 0; i < in->nops; i++)
        mixed |= in->ops[i].v->blocked != v;
    if (mixed)
        return false;
    return in->kind == IK_MAX_POOL || in->kind == IK_AVG_POOL || cpu_eltwise_op(in) ||
           cpu_layout_agnostic(in, v);
}

bool cpu_select(const ir_instr *in, const cpu_isa *isa, cpu_call *calls, int *ncalls)
{
    *ncalls = 1;
    if (!blocked_ok(in))
        return false;
    switch ((int)in->kind) {
    case IK_COPY: case IK_RESHAPE:
        return sel_copy(in, calls);
    case IK_CONV:
        return sel_conv(in, isa, calls, ncalls);
    case IK_MATMUL: case IK_FULLY_CONNECTED:
        return sel_matmul(in, isa, calls);
    case IK_MAX_POOL: case IK_AVG_POOL:
        return sel_pool(in, isa, calls);
    case IK_TRANSPOSE:
        return sel_transpose(in, calls);
    case IK_CONCAT:
        return sel_concat(in, calls, ncalls);
    case IK_BROADCAST:
        return sel_broadcast(in, calls);
    case IK_REDUCE_SUM: case IK_REDUCE_MEAN: case IK_REDUCE_MAX: case IK_REDUCE_MIN:
        return sel_reduce(in, calls);
    default:
        return sel_elementwise(in, calls);
    }
}
