// prepare.c - The CPU backend's prepare hook, run after the IR optimizer and before memory
// planning: convolutions, pools and matrix products the fast kernels run become the backend's
// own instructions (ir/instrs.def, "cpu.*") whose repacked weights, blocked scratch buffers and
// work counters are explicit operands, so that everything lives in the program's regions and
// every later step sees every byte an instruction touches.
//
// In order: repack the constant weights of every conv and GEMM a fast kernel can run (new
// constants; the originals, once nothing reads them, get no memory from the planner); decide
// which activations stay channel-blocked (layout.c) and retype them [N][ceil(C/V)][H][W][V];
// rewrite each fast conv as cpu.conv_nchwc (or cpu.dwconv_nchwc; cpu.wino_nchwc with its
// weights transformed and a scratch operand where winograd.c's cost model takes Winograd
// F(4x4,3x3)) between a cpu.to_nchwc of its input and a cpu.from_nchwc of its output where
// those are not blocked (scratch activations allocated right around them, so the planner
// reuses their memory elsewhere), pools over blocked activations as cpu.maxpool_nchwc /
// cpu.avgpool_nchwc (a graph output converted after them), GEMMs as cpu.gemm_packed; fold
// residual Adds into the convs (residual.c).
//
// Apart, for every target (cpu_add_error_record): the run's error record cpu.err that the
// index kernels write when an index is out of range. It is no operand of theirs (emit.c passes
// its address), so schedule.c puts a barrier after its zeroing.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/winograd.h"
#include "gk_ops.h"

/* What the repacking step made for one instruction. */
typedef struct prep {
    ir_value *w, *bias;   /* repacked weight (conv blocks or GEMM panels), padded bias */
    bool dw;              /* depthwise conv */
    bool wino;            /* Winograd F(4x4,3x3) (w transformed, winograd.c) */
} prep;

/* The constant payload behind a weight operand, or NULL when it is not a plain f32 constant. */
static const float *const_data(const ir_value *v)
{
    if (v->kind != IV_WEIGHT || v->is_mutable || !v->storage ||
        v->storage->kind != NK_CONSTANT || v->type.dtype != GLOW_F32)
        return NULL;
    return (const float *)v->storage->payload.data;
}

/* Repacked weights made so far, by source weight and layout: instructions that read the same
 * weight the same way (an unrolled LSTM's 50 steps of one recurrent matrix) share one copy. */
typedef struct repack_key {
    const ir_value *src;
    const char *what;
    int64_t a, b;        /* what else decides the layout (groups, input block) */
    ir_value *packed;
} repack_key;

typedef struct repack_cache {
    repack_key *v;
    size_t n, cap;
} repack_cache;

static ir_value *find_repacked(const repack_cache *c, const ir_value *src, const char *what,
                               int64_t a, int64_t b)
{
    for (size_t i = 0; i < c->n; i++) {
        const repack_key *k = &c->v[i];
        if (k->src == src && !strcmp(k->what, what) && k->a == a && k->b == b)
            return k->packed;
    }
    return NULL;
}

static void remember_repacked(repack_cache *c, const ir_value *src, const char *what, int64_t a,
                              int64_t b, ir_value *packed)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->v = glow_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    c->v[c->n++] = (repack_key){ src, what, a, b, packed };
}

ir_value *cpu_new_const(ir_function *f, const char *what, uint32_t id, glow_dtype t,
                        int64_t count, void **data, glow_diag *d, glow_status *s)
{
    char name[64];
    snprintf(name, sizeof name, "cpu.%s.%u", what, id);
    glow_type ty = { .dtype = t, .rank = 1, .dims = { count > 0 ? count : 1 } };
    glow_node *c = glow_constant_create(f->module, name, &ty, NULL);
    if (!c) {
        *s = glow_fail(d, GLOW_ERR_TOO_LARGE, "cpu backend: no memory to repack '%s'", name);
        return NULL;
    }
    *data = c->payload.data;
    ir_value *val = ir_weight_create(f, c);
    val->readonly = true;
    return val;
}

/* cpu_new_const of n floats. */
static ir_value *new_const(ir_function *f, const char *what, uint32_t id, size_t n,
                           float **data, glow_diag *d, glow_status *s)
{
    void *p = NULL;
    ir_value *v = cpu_new_const(f, what, id, GLOW_F32, (int64_t)n, &p, d, s);
    *data = p;
    return v;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The constant behind a weight operand (or a view of one), else NULL. */
static glow_node *const_node(ir_value *v)
{
    v = v ? ir_root(v) : NULL;
    return v && v->kind == IV_WEIGHT && v->storage && v->storage->kind == NK_CONSTANT
               ? v->storage : NULL;
}

/* Counts in each constant's aux the instruction operands that read it, so that an original
 * weight can be freed as soon as its last reader has a repacked copy: the originals and the
 * copies then never coexist whole (ResNet-50 would hold its weights twice, VGG-19 its 400 MB
 * classifier). */
static void count_readers(ir_function *f)
{
    for (glow_node *c = f->module->constants.first; c; c = c->next)
        c->aux = NULL;
    for (ir_instr *in = f->first; in; in = in->next)
        for (uint32_t k = 0; k < in->nops; k++) {
            glow_node *c = const_node(in->ops[k].v);
            if (c)
                c->aux = (void *)((uintptr_t)c->aux + 1);
        }
}

/* Operand v of a fast instruction is replaced by its repacked copy: the last such reader
 * frees the original payload (a borrowed one gives its file pages back). */
static void release_original(ir_function *f, ir_value *v)
{
    glow_node *c = const_node(v);
    if (!c || !c->aux)
        return;
    c->aux = (void *)((uintptr_t)c->aux - 1);
    if (c->aux || !c->payload.data)
        return;
    void *ptr = c->payload.data;
    glow_arena_free_alone(&f->module->arena, &ptr, 1);
    if (!ptr)
        c->payload.data = NULL;
}

/* The channel block of a conv's blocked input: all C channels of a first conv with fewer
 * than v of them, v otherwise. */
static int64_t input_block(int64_t c, int64_t g, int v) { return g == 1 && c < v ? c : v; }

/* Blocked conv when the shapes fit the kernels: group 1, depthwise, or groups whose channel
 * counts are whole blocks. Repacks the weights (and bias); true when the conv is fast. */
static glow_status prep_conv(ir_function *f, ir_instr *in, int v, prep *pr, bool *fast,
                             repack_cache *rc, glow_diag *d)
{
    cpu_conv cp;
    if (!cpu_conv_params(in, &cp))
        return GLOW_OK;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type,
                    *w = &in->ops[2].v->type;
    const float *wd = const_data(in->ops[2].v);
    const float *bd = in->nops == 4 ? const_data(in->ops[3].v) : NULL;
    int64_t g = cp.g, c = x->dims[1], m = y->dims[1], kh = w->dims[2], kw = w->dims[3];
    if (!wd || (in->nops == 4 && !bd))
        return GLOW_OK;
    bool dw = g > 1 && g == c && m == c;
    int cv = (int)input_block(c, g, v);
    /* 3x3 stride-1 convolutions of whole input blocks: Winograd where the cost model says. */
    bool wino = g == 1 && cv == v && kh == 3 && kw == 3 && cp.s[0] == 1 && cp.s[1] == 1 &&
                cp.dl[0] == 1 && cp.dl[1] == 1 && cpu_wino_weight_floats(m, c, v) &&
                cpu_wino_choose(y->dims[0], c, m, y->dims[2], y->dims[3], v,
                                cpu_wino_fma_rate(v));
    size_t wn = dw ? glow_repack_dwconv_floats(c, kh, kw, v)
                   : glow_repack_conv_floats(m, c / g, g, kh, kw, v, cv);
    /* The blocked activations pad less than one block; keep them modest all the same. */
    int64_t xb = x->dims[0] * cdiv(c, cv) * x->dims[2] * x->dims[3] * cv;
    int64_t yb = y->dims[0] * cdiv(m, v) * y->dims[2] * y->dims[3] * v;
    if (!wn || xb <= 0 || yb <= 0 || xb > ((int64_t)1 << 34) || yb > ((int64_t)1 << 34))
        return GLOW_OK;
    glow_status s = GLOW_OK;
    float *p;
    const ir_value *wv = in->ops[2].v, *bv = bd ? in->ops[3].v : NULL;
    if (wino) {
        wn = cpu_wino_weight_floats(m, c, v);
        if ((pr->w = find_repacked(rc, wv, "wino", m, c)) == NULL) {
            if (!(pr->w = new_const(f, "wino", in->id, wn, &p, d, &s)))
                return s;
            cpu_wino_weights(p, wd, m, c, v);
            remember_repacked(rc, wv, "wino", m, c, pr->w);
        }
    } else if ((pr->w = find_repacked(rc, wv, "wblk", g, cv)) == NULL) {
        if (!(pr->w = new_const(f, "wblk", in->id, wn, &p, d, &s)))
            return s;
        if (dw)
            glow_repack_dwconv(p, wd, c, kh, kw, v);
        else
            glow_repack_conv(p, wd, m, c / g, g, kh, kw, v, cv);
        remember_repacked(rc, wv, "wblk", g, cv, pr->w);
    }
    if (bd && (pr->bias = find_repacked(rc, bv, "bblk", m, 0)) == NULL) {
        if (!(pr->bias = new_const(f, "bblk", in->id, glow_repack_bias_floats(m, v), &p, d, &s)))
            return s;
        glow_repack_bias(p, bd, m, v);
        remember_repacked(rc, bv, "bblk", m, 0, pr->bias);
    }
    pr->dw = dw;
    pr->wino = wino;
    *fast = true;
    return GLOW_OK;
}

/* Packs B (K x N, a constant's payload) into panels at p. When this instruction is B's only
 * reader (count_readers), B's pages go back as they are read: a large classifier weight
 * (VGG-19's 400 MB) and its panels then never coexist whole. */
static void pack_gemm_b(ir_function *f, ir_value *bv, float *p, const float *bd, int64_t k,
                        int64_t n, int nr)
{
    glow_node *c = const_node(bv);
    bool alone = c && (uintptr_t)c->aux == 1;
    int64_t step = alone ? ((int64_t)1 << 20) / (n > 0 ? n : 1) + 1 : k;
    const uint8_t *dropped = (const uint8_t *)bd;
    for (int64_t k0 = 0; k0 < k; k0 += step) {
        int64_t k1 = k0 + step < k ? k0 + step : k;
        glow_repack_gemm_b_rows(p, bd, k0, k1, k, n, n, nr);
        if (!alone)
            continue;
        const uint8_t *done = (const uint8_t *)(bd + k1 * n);
        glow_arena_drop_pages(&f->module->arena, bd, dropped, (size_t)(done - dropped));
        uintptr_t page = (uintptr_t)done & ~(uintptr_t)4095;
        if (page > (uintptr_t)dropped)
            dropped = (const uint8_t *)bd + (page - (uintptr_t)bd);
    }
}

/* FullyConnected / 2-D MatMul whose right operand is a constant: B as GEMM panels. */
static glow_status prep_gemm(ir_function *f, ir_instr *in, int v, prep *pr, bool *fast,
                             repack_cache *rc, glow_diag *d)
{
    const glow_type *y = &in->ops[0].v->type, *a = &in->ops[1].v->type,
                    *b = &in->ops[2].v->type;
    const float *bd = const_data(in->ops[2].v);
    bool fc = in->kind == IK_FULLY_CONNECTED;
    int act;
    double alpha, beta;
    if (in->nout != 1 || !bd || b->rank != 2 || y->rank != 2 || a->rank != 2 ||
        !cpu_all_f32(in) || in->nops != (fc ? 4u : 3u) || a->dims[1] != b->dims[0] ||
        y->dims[0] != a->dims[0] || y->dims[1] != b->dims[1] ||
        !cpu_fused_act(in, &act, &alpha, &beta) ||
        (fc && glow_type_numel(&in->ops[3].v->type) != b->dims[1]))
        return GLOW_OK;
    int64_t k = b->dims[0], n = b->dims[1];
    size_t pn = glow_repack_gemm_b_floats(k, n, 2 * v);
    if (!pn)
        return GLOW_OK;
    glow_status s = GLOW_OK;
    float *p;
    if ((pr->w = find_repacked(rc, in->ops[2].v, "gemm", 0, 0)) == NULL) {
        if (!(pr->w = new_const(f, "gemm", in->id, pn, &p, d, &s)))
            return s;
        pack_gemm_b(f, in->ops[2].v, p, bd, k, n, 2 * v);
        remember_repacked(rc, in->ops[2].v, "gemm", 0, 0, pr->w);
    }
    if (fc)
        pr->bias = in->ops[3].v;
    *fast = true;
    return GLOW_OK;
}

void cpu_mark_lifetime(ir_function *f, ir_value *val, ir_instr *first, ir_instr *last)
{
    ir_operand op = { val, 'o' };
    ir_instr *a = ir_instr_append(f, IK_ALLOC, val->name, &op, 1, 1, NULL, 0);
    ir_instr_unlink(f, a);
    ir_instr_insert_before(f, first, a);
    op.role = 'x';
    ir_instr *dl = ir_instr_append(f, IK_DEALLOC, val->name, &op, 1, 0, NULL, 0);
    if (last && last->next) {
        ir_instr_unlink(f, dl);
        ir_instr_insert_before(f, last->next, dl);
    }
}

/* A new instruction of `kind` (result first) with in's name, before `pos`; the conversions
 * have no attributes, the others take in's. */
static ir_instr *add_instr(ir_function *f, ir_instr_kind kind, const ir_instr *in,
                           const ir_operand *ops, int nops, ir_instr *pos)
{
    bool attrs = kind != IK_CPU_TO_NCHWC && kind != IK_CPU_FROM_NCHWC;
    ir_instr *n = ir_instr_append(f, kind, in->name, ops, nops, 1, attrs ? in->attrs : NULL,
                                  attrs ? (int)in->nattr : 0);
    ir_instr_unlink(f, n);
    ir_instr_insert_before(f, pos, n);
    return n;
}

/* A blocked scratch activation [N][blocks][H][W][block] named cpu.<what>.<id>. */
static glow_type scratch_type(const glow_type *t, int64_t blocks, int64_t block)
{
    glow_type s = { .dtype = GLOW_F32, .rank = 5,
                    .dims = { t->dims[0], blocks, t->dims[2], t->dims[3], block } };
    return s;
}

/* The fast conv `in` as [cpu.to_nchwc] cpu.conv_nchwc [cpu.from_nchwc]. */
static void rewrite_conv(ir_function *f, ir_instr *in, const prep *pr, int v, ir_value *work)
{
    ir_value *y = in->ops[0].v, *x = in->ops[1].v, *xin = x, *yout = y;
    const glow_attr *ga = cpu_attr(in, GA_GROUP);
    int64_t g = ga ? ga->v.i : 1, c = x->type.dims[1], m = y->type.dims[1];
    char name[64];
    ir_instr *to = NULL;
    if (!cpu_nchwc_bytes(&x->type, v)) {
        int64_t cv = input_block(c, g, v);
        glow_type t = scratch_type(&x->type, cdiv(c, cv), cv);
        snprintf(name, sizeof name, "cpu.xblk.%u", in->id);
        xin = ir_alloc_create(f, name, &t);
        to = add_instr(f, IK_CPU_TO_NCHWC, in, (ir_operand[]){ { xin, 'o' }, { x, 'i' } }, 2,
                       in);
    }
    if (!cpu_nchwc_bytes(&y->type, v)) {
        glow_type t = scratch_type(&y->type, cdiv(m, v), v);
        snprintf(name, sizeof name, "cpu.yblk.%u", in->id);
        yout = ir_alloc_create(f, name, &t);
    }
    ir_operand ops[6] = { { yout, 'o' }, { xin, 'i' }, { pr->w, 'i' }, { work, 'x' },
                          { pr->bias, 'i' } };
    ir_value *scratch = NULL;
    if (pr->wino) {
        /* One slot of the plan's scratch per thread (winograd.h). The weight's dims give the
         * channels: x and y may be retyped blocked by now. */
        const glow_type *wt = &in->ops[2].v->type;
        glow_type t = { .dtype = GLOW_F32, .rank = 1 };
        t.dims[0] = (int64_t)cpu_wino_slot_floats(y->type.dims[0], wt->dims[1], wt->dims[0],
                                                  y->type.dims[2], y->type.dims[3], v) *
                    cpu_wino_slots();
        snprintf(name, sizeof name, "cpu.wscr.%u", in->id);
        scratch = ir_alloc_create(f, name, &t);
        ops[5] = ops[4];
        ops[4] = (ir_operand){ scratch, 'x' };
    }
    int nops = (pr->bias ? 5 : 4) + (pr->wino ? 1 : 0);
    ir_instr *conv = add_instr(f, pr->wino ? IK_CPU_WINO_NCHWC : pr->dw ? IK_CPU_DWCONV_NCHWC
                                                                         : IK_CPU_CONV_NCHWC,
                               in, ops, nops, in);
    ir_instr *from = NULL;
    if (yout != y)
        from = add_instr(f, IK_CPU_FROM_NCHWC, in, (ir_operand[]){ { y, 'o' }, { yout, 'i' } },
                         2, in);
    ir_instr_unlink(f, in);
    /* The scratch buffers live exactly over the instructions that use them. */
    if (to)
        cpu_mark_lifetime(f, xin, to, conv);
    if (scratch)
        cpu_mark_lifetime(f, scratch, conv, conv);
    if (from)
        cpu_mark_lifetime(f, yout, conv, from);
}

/* A pool over a blocked input as cpu.maxpool_nchwc / cpu.avgpool_nchwc; when its result is
 * a graph output (layout.c), the pool writes a blocked scratch cpu.yblk.<id> that a
 * cpu.from_nchwc then converts (a global pool's: one pixel per channel). */
static void rewrite_pool(ir_function *f, ir_instr *in, int v)
{
    ir_value *y = in->ops[0].v;
    in->kind = in->kind == IK_MAX_POOL ? IK_CPU_MAXPOOL_NCHWC : IK_CPU_AVGPOOL_NCHWC;
    if (cpu_nchwc_bytes(&y->type, v))
        return;
    char name[64];
    snprintf(name, sizeof name, "cpu.yblk.%u", in->id);
    glow_type t = scratch_type(&y->type, cdiv(y->type.dims[1], v), v);
    ir_value *yout = ir_alloc_create(f, name, &t);
    in->ops[0].v = yout;
    ir_instr *from = add_instr(f, IK_CPU_FROM_NCHWC, in,
                               (ir_operand[]){ { y, 'o' }, { yout, 'i' } }, 2, in->next);
    cpu_mark_lifetime(f, yout, in, from);
}

/* A GEMM whose B was repacked: cpu.gemm_packed y, a, panels, work[, bias]. */
static void rewrite_gemm(ir_function *f, ir_instr *in, const prep *pr, ir_value *work)
{
    ir_operand ops[5] = { in->ops[0], in->ops[1], { pr->w, 'i' }, { work, 'x' },
                          { pr->bias, 'i' } };
    add_instr(f, IK_CPU_GEMM_PACKED, in, ops, pr->bias ? 5 : 4, in);
    ir_instr_unlink(f, in);
}

/* Activations of one pixel per channel keep their plain type: their blocked bytes are the
 * plain bytes (cpu_nchwc_bytes), and a Flatten view may read them as [N][C]. Views first,
 * while their bases still have their plain types. */
static void retype_blocked(ir_function *f, const bool *blocked, int v)
{
    for (int views = 1; views >= 0; views--)
        for (ir_value *x = f->values; x; x = x->next) {
            const ir_value *r = ir_root(x);
            if ((x->kind == IV_VIEW) != views || x->kind == IV_WEIGHT || !blocked[r->id] ||
                cpu_nchwc_bytes(&r->type, v))
                continue;
            x->type = cpu_nchwc_type(&x->type, v);
        }
}

/* A new activation `name` of type t, live for the whole program and zeroed at the start of
 * every run (cpu.zero): the work counters of the fast kernels (kernels/simd.h gk_units, one
 * u32 per instruction) and the run's error record. */
static ir_value *add_zeroed(ir_function *f, const char *name, const glow_type *t)
{
    ir_instr *first = f->first;
    ir_value *w = ir_alloc_create(f, name, t);
    cpu_mark_lifetime(f, w, first, NULL);
    ir_operand op = { w, 'o' };
    ir_instr *z = ir_instr_append(f, IK_CPU_ZERO, name, &op, 1, 1, NULL, 0);
    ir_instr_unlink(f, z);
    ir_instr_insert_before(f, first, z);
    return w;
}

bool cpu_can_fail(ir_instr_kind k)
{
    return k == IK_GATHER || k == IK_GATHER_ELEMENTS || k == IK_GATHER_ND ||
           k == IK_SCATTER_ELEMENTS || k == IK_SCATTER_ND || k == IK_REVERSE_SEQUENCE;
}

void cpu_add_error_record(ir_function *f)
{
    const ir_instr *in = f->first;
    while (in && !cpu_can_fail(in->kind))
        in = in->next;
    if (!in || cpu_error_record(f))
        return;
    glow_type t = { .dtype = GLOW_I64, .rank = 1, .dims = { GK_ERR_WORDS } };
    add_zeroed(f, "cpu.err", &t);
}

const ir_value *cpu_error_record(const ir_function *f)
{
    for (const ir_value *v = f->values; v; v = v->next)
        if (v->kind == IV_ALLOC && v->name && !strcmp(v->name, "cpu.err"))
            return v;
    return NULL;
}

static ir_value *work_slot(ir_function *f, ir_value *work, int k)
{
    char name[32];
    snprintf(name, sizeof name, "cpu.work.%d", k);
    glow_type t = { .dtype = GLOW_U32, .rank = 1, .dims = { 1 } };
    return ir_view_create(f, name, work, &t, 4 * (uint64_t)k);
}

glow_status cpu_prepare(ir_function *f, int v, bool plain, glow_diag *d)
{
    if (!v)
        return GLOW_OK;
    uint32_t n = f->next_id;
    bool *fast = glow_xcalloc(n ? n : 1, sizeof *fast);
    prep *pr = glow_xcalloc(n ? n : 1, sizeof *pr);
    glow_status s = GLOW_OK;
    int nfast = 0;
    repack_cache rc = { 0 };
    count_readers(f);
    for (ir_instr *in = f->first; in && s == GLOW_OK; in = in->next) {
        if (in->kind == IK_CONV)
            s = prep_conv(f, in, v, &pr[in->id], &fast[in->id], &rc, d);
        else if (in->kind == IK_FULLY_CONNECTED || in->kind == IK_MATMUL)
            s = prep_gemm(f, in, v, &pr[in->id], &fast[in->id], &rc, d);
        if (s != GLOW_OK || !fast[in->id])
            continue;
        nfast++;
        /* Every fast instruction is rewritten below to read the copies instead. */
        release_original(f, in->ops[2].v);
        if (in->kind == IK_CONV && pr[in->id].bias)
            release_original(f, in->ops[3].v);
    }
    for (glow_node *c = f->module->constants.first; c; c = c->next)
        c->aux = NULL;
    bool *blocked = NULL;
    if (s == GLOW_OK && nfast) {
        blocked = plain ? glow_xcalloc(n, sizeof *blocked) : cpu_plan_layout(f, v, fast);
        retype_blocked(f, blocked, v);
        glow_type wt = { .dtype = GLOW_U32, .rank = 1, .dims = { nfast } };
        ir_value *work = add_zeroed(f, "cpu.work", &wt);
        int k = 0;
        for (ir_instr *in = f->first, *next; in; in = next) {
            next = in->next;
            if (in->id >= n)
                continue;
            if (fast[in->id] && in->kind == IK_CONV)
                rewrite_conv(f, in, &pr[in->id], v, work_slot(f, work, k++));
            else if (fast[in->id])
                rewrite_gemm(f, in, &pr[in->id], work_slot(f, work, k++));
            else if ((in->kind == IK_MAX_POOL || in->kind == IK_AVG_POOL) &&
                     (cpu_is_nchwc(&in->ops[0].v->type, v) ||
                      cpu_is_nchwc(&in->ops[1].v->type, v)))
                rewrite_pool(f, in, v);
        }
        /* Values made since are scratch and work views, none of them blocked. */
        blocked = glow_xrealloc(blocked, f->next_id * sizeof *blocked);
        memset(blocked + n, 0, (f->next_id - n) * sizeof *blocked);
        if (!plain)
            cpu_fuse_residuals(f, blocked);
    }
    free(blocked);
    free(pr);
    free(fast);
    free(rc.v);
    return s;
}

ir_value *cpu_add_zeroed(ir_function *f, const char *name, const glow_type *t)
{
    return add_zeroed(f, name, t);
}
