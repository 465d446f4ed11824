// fit.c - Leaf predicates of the CPU backend: whether an instruction's shapes, types and
// attributes fit a kernel, and with which parameters; which buffers alias; the shapes of the
// channel-blocked layout. Nothing here changes the IR or chooses between kernels.
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_ops.h"

bool cpu_overlap(const ir_value *a, const ir_value *b)
{
    if (glow_value_region(a) != glow_value_region(b))
        return false;
    uint64_t a0 = a->addr, a1 = a0 + glow_type_bytes(&a->type);
    uint64_t b0 = b->addr, b1 = b0 + glow_type_bytes(&b->type);
    return a0 < b1 && b0 < a1;
}

bool cpu_no_alias(const ir_instr *in)
{
    for (uint32_t i = in->nout; i < in->nops; i++)
        for (uint32_t o = 0; o < in->nout; o++)
            if (cpu_overlap(in->ops[o].v, in->ops[i].v))
                return false;
    return true;
}

bool cpu_all_f32(const ir_instr *in)
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

/* An activation named by attribute ida, with parameters ia and ib (fused_act's form). */
static bool act_attrs(const ir_instr *in, glow_attr_id ida, glow_attr_id ia, glow_attr_id ib,
                      int *act, double *alpha, double *beta)
{
    const glow_attr *a = cpu_attr(in, ida), *fa = cpu_attr(in, ia), *fb = cpu_attr(in, ib);
    *act = GK_ACT_NONE;
    if (a) {
        const char *s = a->v.s;
        *act = !strcmp(s, "Relu") ? GK_ACT_RELU : !strcmp(s, "Clip") ? GK_ACT_CLIP
             : !strcmp(s, "LeakyRelu") ? GK_ACT_LEAKY_RELU
             : !strcmp(s, "Sigmoid") ? GK_ACT_SIGMOID : !strcmp(s, "Tanh") ? GK_ACT_TANH : -1;
        if (*act < 0)
            return false;
    }
    *alpha = fa ? fa->v.f : 0;
    *beta = fb ? fb->v.f : 0;
    return true;
}

bool cpu_fused_act(const ir_instr *in, int *act, double *alpha, double *beta)
{
    return act_attrs(in, GA_FUSED_ACT, GA_FUSED_ALPHA, GA_FUSED_BETA, act, alpha, beta);
}

bool cpu_pw_act(const ir_instr *in, int *act, double *alpha, double *beta)
{
    return act_attrs(in, GA_PW_ACT, GA_PW_ALPHA, GA_PW_BETA, act, alpha, beta);
}

bool cpu_conv_attrs(const ir_instr *in, cpu_conv *cp)
{
    memset(cp, 0, sizeof *cp);
    cp->g = attr_int(in, GA_GROUP, 1);
    return attr_ints(in, GA_KERNEL, 2, cp->k) && attr_ints(in, GA_STRIDES, 2, cp->s) &&
           attr_ints(in, GA_PADS, 4, cp->p) && attr_ints(in, GA_DILATIONS, 2, cp->dl) &&
           cp->g >= 1 && cp->s[0] >= 1 && cp->s[1] >= 1 && cp->dl[0] >= 1 &&
           cp->dl[1] >= 1 && cpu_fused_act(in, &cp->act, &cp->alpha, &cp->beta);
}

bool cpu_conv_params(const ir_instr *in, cpu_conv *cp)
{
    memset(cp, 0, sizeof *cp);
    if (in->kind != IK_CONV || in->nout != 1 || in->nops < 3 || in->nops > 4)
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type,
                    *w = &in->ops[2].v->type;
    if (!cpu_all_f32(in) || x->rank != 4 || w->rank != 4 || y->rank != 4 ||
        !cpu_conv_attrs(in, cp) || x->dims[1] % cp->g || y->dims[1] % cp->g ||
        w->dims[0] != y->dims[1] || w->dims[1] != x->dims[1] / cp->g ||
        w->dims[2] != cp->k[0] || w->dims[3] != cp->k[1] || x->dims[0] != y->dims[0])
        return false;
    return in->nops < 4 || glow_type_numel(&in->ops[3].v->type) == y->dims[1];
}

bool cpu_pool_attrs(const ir_instr *in, cpu_pool *pp)
{
    memset(pp, 0, sizeof *pp);
    if (!attr_ints(in, GA_KERNEL, 2, pp->k) || !attr_ints(in, GA_STRIDES, 2, pp->s) ||
        !attr_ints(in, GA_PADS, 4, pp->p) || !attr_ints(in, GA_DILATIONS, 2, pp->dl) ||
        pp->s[0] < 1 || pp->s[1] < 1 || pp->dl[0] < 1 || pp->dl[1] < 1)
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

bool cpu_pool_params(const ir_instr *in, cpu_pool *pp)
{
    memset(pp, 0, sizeof *pp);
    if (in->kind != IK_MAX_POOL && in->kind != IK_AVG_POOL)
        return false;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    return cpu_all_f32(in) && in->nout == 1 && in->nops == 2 && x->rank == 4 &&
           y->rank == 4 && y->dims[0] == x->dims[0] && y->dims[1] == x->dims[1] &&
           cpu_pool_attrs(in, pp);
}

int cpu_eltwise_op(const ir_instr *in)
{
    int op = 0;
    switch ((int)in->kind) {
    case IK_RELU: op = GK_UN_RELU; break;
    case IK_NEG: op = GK_UN_NEG; break;
    case IK_ABS: op = GK_UN_ABS; break;
    case IK_SQRT: op = GK_UN_SQRT; break;
    case IK_EXP: op = GK_UN_EXP; break;
    case IK_TANH: op = GK_UN_TANH; break;
    case IK_SIGMOID: op = GK_UN_SIGMOID; break;
    case IK_LOG: op = GK_UN_LOG; break;
    case IK_ADD: op = -GK_BIN_ADD; break;
    case IK_SUB: op = -GK_BIN_SUB; break;
    case IK_MUL: op = -GK_BIN_MUL; break;
    case IK_DIV: op = -GK_BIN_DIV; break;
    case IK_MAX: op = -GK_BIN_MAX; break;
    case IK_MIN: op = -GK_BIN_MIN; break;
    case IK_POW: op = -GK_BIN_POW; break;
    case IK_CLIP: op = GK_CHAIN_CLIP; break;
    case IK_LEAKY_RELU: op = GK_CHAIN_LEAKY_RELU; break;
    default: return 0;
    }
    if (!cpu_all_f32(in) || in->nout != 1 || in->nops != (op > 0 ? 2u : 3u))
        return 0;
    for (uint32_t i = 1; i < in->nops; i++)
        if (!glow_type_same_shape(&in->ops[i].v->type, &in->ops[0].v->type))
            return 0;
    return op;
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

bool cpu_is_nchwc(const glow_type *t, int v)
{
    return v > 0 && t->dtype == GLOW_F32 && t->rank == 5 && t->dims[4] == v;
}

bool cpu_nchwc_bytes(const glow_type *t, int v)
{
    return cpu_is_nchwc(t, v) || (v > 0 && t->dtype == GLOW_F32 && t->rank == 4 &&
                                  t->dims[2] * t->dims[3] == 1 && t->dims[1] % v == 0);
}

glow_type cpu_nchwc_type(const glow_type *t, int v)
{
    glow_type b = *t;
    b.rank = 5;
    b.dims[1] = (t->dims[1] + v - 1) / v;   /* padded to whole blocks */
    b.dims[4] = v;
    return b;
}

void cpu_nchwc_dims(const glow_type *t, int v, int64_t *n, int64_t *blocks, int64_t *h,
                    int64_t *w)
{
    *n = t->dims[0];
    *blocks = t->rank == 5 ? t->dims[1] : t->dims[1] / v;
    *h = t->dims[2];
    *w = t->dims[3];
}

bool cpu_own_kind(ir_instr_kind k)
{
    switch ((int)k) {
    case IK_CPU_TO_NCHWC: case IK_CPU_FROM_NCHWC: case IK_CPU_CONV_NCHWC:
    case IK_CPU_DWCONV_NCHWC: case IK_CPU_MAXPOOL_NCHWC: case IK_CPU_AVGPOOL_NCHWC:
    case IK_CPU_GEMM_PACKED: case IK_CPU_ZERO: case IK_CPU_WINO_NCHWC: case IK_CPU_PWDW_NCHWC:
    case IK_CPU_Q_TO_NHWC: case IK_CPU_Q_FROM_NHWC: case IK_CPU_QCONV_NHWC:
    case IK_CPU_QDWCONV_NHWC: case IK_CPU_QMAXPOOL_NHWC: case IK_CPU_QAVGPOOL_NHWC:
    case IK_CPU_QCONCAT_NHWC: case IK_CPU_QBINARY_POST:
        return true;
    default:
        return false;
    }
}
