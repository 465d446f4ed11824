// fuse_pwdw.c - Pointwise-expand + depthwise fusion for inverted-residual blocks (MobileNet v2;
// issue 19 item 2, docs/cpu-backend.md "Inverted residuals"), the last step of the host's
// prepare hook: a 1x1 cpu.conv_nchwc whose result only the 3x3 cpu.dwconv_nchwc right after it
// reads becomes, with it, one cpu.pwdw_nchwc (kernels/conv/pwdw_tmpl.h). The kernel computes
// the expanded rows a band of depthwise output rows needs into a per-thread ring of a few rows
// and runs the depthwise over them, so the expanded activation (the block's largest: 96
// channels at 112x112 in MobileNet v2, 4.8 MB) is never materialized and leaves the memory
// plan; a scratch operand of one ring per thread lives over the fused instruction only. The
// result is the unfused pair's bit for bit.
//
// Runs after the residual fusion (residual.c), on what prepare.c made: the depthwise may have
// taken a residual Add; the 1x1 must have none (its result is not the block's output). Only
// the vector lengths of the kernel's rows (AVX-512 16, AVX2 8), not an aarch64 bundle's NEON.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/winograd.h"
#include "conv/pwdw_plan.h"
#include "gk_ops.h"

/* A depthwise conv the fused kernel runs: 3x3, stride 1 or 2, begin pads 1, dilation 1,
 * operands [y, t, w, work, bias(, residual)]. */
static bool dw_fits(const ir_instr *d)
{
    cpu_conv c;
    return d->kind == IK_CPU_DWCONV_NCHWC && (d->nops == 5 || d->nops == 6) &&
           d->ops[4].v->type.rank == 1 && (d->nops == 5 || d->ops[5].v->type.rank == 5) &&
           cpu_conv_attrs(d, &c) && c.k[0] == 3 && c.k[1] == 3 && c.s[0] <= 2 && c.s[1] <= 2 &&
           c.p[0] == 1 && c.p[1] == 1 && c.dl[0] == 1 && c.dl[1] == 1;
}

/* A 1x1 conv the fused kernel runs: stride 1, no pads, group 1, operands [t, x, w, work,
 * bias] (no residual). */
static bool pw_fits(const ir_instr *e)
{
    cpu_conv c;
    return e->kind == IK_CPU_CONV_NCHWC && e->nops == 5 && e->ops[4].v->type.rank == 1 &&
           cpu_conv_attrs(e, &c) && c.k[0] == 1 && c.k[1] == 1 && c.s[0] == 1 && c.s[1] == 1 &&
           !c.p[0] && !c.p[1] && !c.p[2] && !c.p[3] && c.dl[0] == 1 && c.dl[1] == 1 && c.g == 1;
}

/* The depthwise's attributes, then the 1x1's activation as pw_* and its name. */
static int fused_attrs(const ir_instr *e, const ir_instr *d, glow_attr *out)
{
    int n = 0;
    for (uint32_t i = 0; i < d->nattr; i++)
        out[n++] = d->attrs[i];
    static const glow_attr_id from[] = { GA_FUSED_ACT, GA_FUSED_ALPHA, GA_FUSED_BETA };
    static const glow_attr_id to[] = { GA_PW_ACT, GA_PW_ALPHA, GA_PW_BETA };
    for (int k = 0; k < 3; k++) {
        const glow_attr *a = cpu_attr(e, from[k]);
        if (a) {
            out[n] = *a;
            out[n++].id = to[k];
        }
    }
    out[n++] = GLOW_ASTR(PW_NAME, e->name);
    return n;
}

/* Fuses depthwise d with the 1x1 conv producing its input when the pattern holds; returns the
 * fused instruction (in d's place) or NULL. */
static ir_instr *fuse_one(ir_function *f, ir_instr *d, int v)
{
    if (!dw_fits(d))
        return NULL;
    ir_value *y = d->ops[0].v, *t = d->ops[1].v, *res = d->nops == 6 ? d->ops[5].v : NULL;
    if (t->kind != IV_ALLOC || t->type.rank != 5 || t->type.dims[4] != v)
        return NULL;
    /* The 1x1 conv wrote t just before: only lifetime markers between them, so its input is
     * unchanged when the fused instruction runs in d's place. */
    ir_instr *e = d->prev;
    while (e && cpu_is_marker(e))
        e = e->prev;
    if (!e || !pw_fits(e) || e->ops[0].v != t)
        return NULL;
    ir_value *x = e->ops[1].v;
    const glow_type *xt = &x->type, *tt = &t->type;
    if (xt->rank != 5 || xt->dims[0] != tt->dims[0] || xt->dims[2] != tt->dims[2] ||
        xt->dims[3] != tt->dims[3] || ir_root(x) == ir_root(y) || ir_root(y) == t ||
        (res && (ir_root(res) == ir_root(x) || ir_root(res) == t)))
        return NULL;
    /* t is theirs alone: its markers aside, nothing else (nor a view of it) touches it, and
     * the depthwise reads it only as its input (a residual Add of the expansion itself folds
     * into the depthwise as its residual operand, residual.c). */
    for (const ir_instr *in = f->first; in; in = in->next)
        if (in != e && in != d && !cpu_is_marker(in) && cpu_touches(in, t))
            return NULL;

    /* One ring per thread (the slots winograd.c gives its scratch: the online cores, at most
     * 16; threads past them take no units). */
    size_t slot = gk_pwdw_slot_floats((size_t)tt->dims[2], (size_t)tt->dims[3], 3, (size_t)v);
    char name[64];
    snprintf(name, sizeof name, "cpu.pwdw.%u", d->id);
    glow_type st = { .dtype = GLOW_F32, .rank = 1,
                     .dims = { (int64_t)slot * cpu_wino_slots() } };
    ir_value *scratch = ir_alloc_create(f, name, &st);
    ir_operand ops[9] = { { y, 'o' }, { x, 'i' }, e->ops[2], d->ops[3], { scratch, 'x' },
                          d->ops[2], e->ops[4], d->ops[4], { res, 'i' } };
    glow_attr *attrs = malloc(sizeof *attrs * (d->nattr + 4));
    int nattr = fused_attrs(e, d, attrs);
    ir_instr *fused = ir_instr_append(f, IK_CPU_PWDW_NCHWC, d->name, ops, res ? 9 : 8, 1, attrs,
                                      nattr);
    free(attrs);
    ir_instr_unlink(f, fused);
    ir_instr_insert_before(f, d, fused);
    /* What was freed between the two (the 1x1's input, a conversion's scratch) lives on to
     * the fused instruction, which reads it now. */
    for (ir_instr *in = e->next, *next; in != fused; in = next) {
        next = in->next;
        if (in->kind == IK_DEALLOC) {
            ir_instr_unlink(f, in);
            ir_instr_insert_before(f, d, in);
        }
    }
    ir_instr_unlink(f, e);
    ir_instr_unlink(f, d);
    /* t's allocation and release go with it. */
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = in->next;
        if (cpu_is_marker(in) && cpu_touches(in, t))
            ir_instr_unlink(f, in);
    }
    cpu_mark_lifetime(f, scratch, fused, fused);
    return fused;
}

int cpu_fuse_pwdw(ir_function *f, int v)
{
    const char *env = getenv("GLOWC_FUSE_PWDW");
    if ((v != 16 && v != 8) || (env && !strcmp(env, "0")))
        return 0;
    int count = 0;
    for (ir_instr *in = f->first; in; in = in->next) {
        ir_instr *fused = fuse_one(f, in, v);
        if (fused) {
            in = fused;
            count++;
        }
    }
    return count;
}

bool cpu_select_pwdw(const ir_instr *in, const cpu_isa *isa, cpu_op *op)
{
    int v = cpu_isa_vlen(isa), act1;
    double alpha1, beta1;
    cpu_conv cp;
    if ((v != 16 && v != 8) || in->nops < 8 || in->nops > 9 ||
        !cpu_conv_attrs(in, &cp) || !cpu_pw_act(in, &act1, &alpha1, &beta1) ||
        cp.dl[0] != 1 || cp.dl[1] != 1 || cp.g < 1)
        return false;
    const ir_value *y = in->ops[0].v, *x = in->ops[1].v, *scr = in->ops[4].v;
    const ir_value *res = in->nops == 9 ? in->ops[8].v : NULL;
    const glow_type *yt = &y->type, *xt = &x->type;
    if (yt->rank != 5 || yt->dims[4] != v || xt->rank != 5 || xt->dims[4] > v ||
        xt->dims[0] != yt->dims[0] || scr->type.dtype != GLOW_F32 ||
        (res && !glow_type_equal(&res->type, yt)))
        return false;
    /* y shares bytes with no operand but a residual exactly in place; the rings with none. */
    for (uint32_t i = 1; i < in->nops; i++) {
        const ir_value *o = in->ops[i].v;
        if ((cpu_overlap(y, o) && !(o == res && res->addr == y->addr)) ||
            (i != 4 && cpu_overlap(scr, o)))
            return false;
    }
    int64_t n = yt->dims[0], mb = yt->dims[1], oh = yt->dims[2], ow = yt->dims[3];
    int64_t cb = xt->dims[1], cv = xt->dims[4], ih = xt->dims[2], iw = xt->dims[3];
    size_t slot = gk_pwdw_slot_floats((size_t)ih, (size_t)iw, (size_t)cp.k[0], (size_t)v);
    int64_t slots = glow_type_numel(&scr->type) / (int64_t)slot;
    if (slots < 1 || (ih + cp.p[0] + cp.p[2] - cp.k[0]) / cp.s[0] + 1 != oh ||
        (iw + cp.p[1] + cp.p[3] - cp.k[1]) / cp.s[1] + 1 != ow)
        return false;
    bool deep = cpu_deep(cb, mb);   /* block counts at run time (cpu_internal.h) */
    CPU_OP(op, isa->avx512 ? CPU_K_pwdw_nchwc_f32_avx512 : CPU_K_pwdw_nchwc_f32_avx2,
           cpu_ptr(y, 0), cpu_ptr(x, 0), cpu_ptr(in->ops[2].v, 0), cpu_ptr(in->ops[6].v, 0),
           cpu_ptr(in->ops[5].v, 0), cpu_ptr(in->ops[7].v, 0), cpu_opt_ptr(res),
           cpu_ptr(scr, 0), cpu_num(slots), cpu_size(deep, n), cpu_size(deep, cb), cpu_num(cv),
           cpu_num(ih), cpu_num(iw), cpu_size(deep, mb), cpu_num(oh), cpu_num(ow),
           cpu_num(cp.k[0]), cpu_num(cp.k[1]), cpu_num(cp.s[0]), cpu_num(cp.s[1]), cpu_num(cp.p[0]),
           cpu_num(cp.p[1]), cpu_num(act1), cpu_real(alpha1), cpu_real(beta1), cpu_num(cp.act),
           cpu_real(cp.alpha), cpu_real(cp.beta), cpu_ptr(in->ops[3].v, 0));
    return true;
}
