// prepare.c - The CPU backend's prepare hook: repacks constant conv / GEMM weights into the fast
// kernels' layouts (new constants) and adds the blocked-layout scratch activations a conv
// needs, before memory planning, so that everything lives in the program's regions.
//
// A fast conv runs as three calls: NCHW input -> blocked scratch (xblk), blocked conv into a
// second scratch (yblk), blocked -> NCHW output. The scratch buffers are allocated right before
// the conv and freed right after it, so the planner reuses their memory elsewhere. The values
// are named "cpu.<what>.<instruction id>" and created after every existing value, which is how
// cpu_fast_find gets from an instruction to them without a side table: it walks the function's
// value list forward from one of the instruction's operands.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_llvm.h"
#include "backend/cpu/repack.h"

/* The constant payload behind a weight operand, or NULL when it is not a plain f32 constant. */
static const float *const_data(const ir_value *v)
{
    if (v->kind != IV_WEIGHT || v->is_mutable || !v->storage ||
        v->storage->kind != NK_CONSTANT || v->type.dtype != GLOW_F32)
        return NULL;
    return (const float *)v->storage->payload.data;
}

/* A new f32 constant of n floats named cpu.<what>.<v>.<id>, filled by the caller. */
static ir_value *new_const(ir_function *f, const char *what, int v, uint32_t id, size_t n,
                           float **data, glow_diag *d, glow_status *s)
{
    char name[64];
    snprintf(name, sizeof name, "cpu.%s.%d.%u", what, v, id);
    glow_type t = { .dtype = GLOW_F32, .rank = 1, .dims = { (int64_t)n } };
    glow_node *c = glow_constant_create(f->module, name, &t, NULL);
    if (!c) {
        *s = glow_fail(d, GLOW_ERR_TOO_LARGE, "cpu backend: no memory to repack '%s'", name);
        return NULL;
    }
    *data = (float *)c->payload.data;
    ir_value *val = ir_weight_create(f, c);
    val->readonly = true;
    return val;
}

/* An activation `name` of type t, allocated right before `first` and freed right after
 * `last` (at the end of the program when last is NULL). */
static ir_value *add_alloc(ir_function *f, const char *name, const glow_type *t,
                           ir_instr *first, ir_instr *last)
{
    ir_value *val = ir_alloc_create(f, name, t);
    ir_operand op = { val, 'o' };
    ir_instr *a = ir_instr_append(f, IK_ALLOC, name, &op, 1, 1, NULL, 0);
    ir_instr_unlink(f, a);
    ir_instr_insert_before(f, first, a);
    op.role = 'x';
    ir_instr *dl = ir_instr_append(f, IK_DEALLOC, name, &op, 1, 0, NULL, 0);
    if (last && last->next) {
        ir_instr_unlink(f, dl);
        ir_instr_insert_before(f, last->next, dl);
    }
    return val;
}

/* alloc before `in`, dealloc after it, of a scratch activation of n floats. */
static ir_value *new_scratch(ir_function *f, ir_instr *in, const char *what, int v, size_t n)
{
    char name[64];
    snprintf(name, sizeof name, "cpu.%s.%d.%u", what, v, in->id);
    glow_type t = { .dtype = GLOW_F32, .rank = 1, .dims = { (int64_t)n } };
    return add_alloc(f, name, &t, in, in);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Floats of a fast conv's blocked input (*xb) and output (*yb): cv = C for a first conv with
 * fewer than V input channels, whole blocks of V otherwise. */
static void conv_blocked_floats(const ir_instr *in, int64_t g, int v, int64_t *xb, int64_t *yb)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    int64_t n = x->dims[0], c = x->dims[1], m = y->dims[1];
    int64_t cv = g == 1 && c < v ? c : v;
    *xb = n * cdiv(c, cv) * x->dims[2] * x->dims[3] * cv;
    *yb = n * cdiv(m, v) * y->dims[2] * y->dims[3] * v;
}

/* Blocked conv when the shapes fit the kernels: group 1, depthwise, or groups whose channel
 * counts are whole blocks. Repacks the weights (and bias); true when the conv is fast. */
static glow_status prep_conv(ir_function *f, ir_instr *in, int v, bool *fast, glow_diag *d)
{
    *fast = false;
    cpu_conv cp;
    if (!cpu_conv_params(in, &cp) || in->nops > 4)
        return GLOW_OK;
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type,
                    *w = &in->ops[2].v->type;
    const float *wd = const_data(in->ops[2].v);
    const float *bd = in->nops == 4 ? const_data(in->ops[3].v) : NULL;
    int64_t g = cp.g;
    if (!wd || (in->nops == 4 && !bd))
        return GLOW_OK;
    int64_t c = x->dims[1], m = y->dims[1], kh = w->dims[2], kw = w->dims[3];
    bool dw = g > 1 && g == c && m == c;
    int cv = g == 1 && c < v ? (int)c : v;
    size_t wn = dw ? glow_repack_dwconv_floats(c, kh, kw, v)
                   : glow_repack_conv_floats(m, c / g, g, kh, kw, v, cv);
    if (!wn)
        return GLOW_OK;
    /* Scratch sizes (allocated later, when the layouts are known): the activations exist
     * already, blocking pads less than one block; keep them modest all the same. */
    int64_t xb, yb;
    conv_blocked_floats(in, g, v, &xb, &yb);
    if (xb <= 0 || yb <= 0 || xb > ((int64_t)1 << 34) || yb > ((int64_t)1 << 34))
        return GLOW_OK;
    glow_status s = GLOW_OK;
    float *p;
    if (!new_const(f, "wblk", v, in->id, wn, &p, d, &s))
        return s;
    if (dw)
        glow_repack_dwconv(p, wd, c, kh, kw, v);
    else
        glow_repack_conv(p, wd, m, c / g, g, kh, kw, v, cv);
    if (bd) {
        if (!new_const(f, "bblk", v, in->id, glow_repack_bias_floats(m, v), &p, d, &s))
            return s;
        glow_repack_bias(p, bd, m, v);
    }
    *fast = true;
    return GLOW_OK;
}

/* The blocked scratch a fast conv needs for whichever of its input and output is plain. */
static void conv_scratch(ir_function *f, ir_instr *in, int v)
{
    const glow_attr *ga = cpu_attr(in, GA_GROUP);
    int64_t xb, yb;
    conv_blocked_floats(in, ga ? ga->v.i : 1, v, &xb, &yb);
    if (in->ops[1].v->blocked != v)
        new_scratch(f, in, "xblk", v, (size_t)xb);
    if (in->ops[0].v->blocked != v)
        new_scratch(f, in, "yblk", v, (size_t)yb);
}

/* FullyConnected / 2-D MatMul whose right operand is a constant: B as GEMM panels. */
static glow_status prep_gemm(ir_function *f, ir_instr *in, int v, bool *fast, glow_diag *d)
{
    *fast = false;
    const glow_type *b = &in->ops[2].v->type;
    const float *bd = const_data(in->ops[2].v);
    /* What sel_matmul's packed path needs besides the panels: f32 operands, a bias of N for
     * FullyConnected, none for MatMul. */
    bool fc = in->kind == IK_FULLY_CONNECTED;
    if (in->nout != 1 || !bd || b->rank != 2 || in->ops[0].v->type.rank != 2 ||
        in->ops[1].v->type.dtype != GLOW_F32 || in->ops[0].v->type.dtype != GLOW_F32 ||
        in->nops != (fc ? 4u : 3u) ||
        (fc && (in->ops[3].v->type.dtype != GLOW_F32 ||
                glow_type_numel(&in->ops[3].v->type) != b->dims[1])))
        return GLOW_OK;
    int64_t k = b->dims[0], n = b->dims[1];
    size_t pn = glow_repack_gemm_b_floats(k, n, 2 * v);
    if (!pn)
        return GLOW_OK;
    glow_status s = GLOW_OK;
    float *p;
    if (!new_const(f, "gemm", v, in->id, pn, &p, d, &s))
        return s;
    glow_repack_gemm_b(p, bd, k, n, n, 0, 2 * v);
    *fast = true;
    return GLOW_OK;
}

/* Constants that only fast kernels use, which read repacked copies, get no memory. fast[] is
 * indexed by the ids of instructions older than nfast. */
static void drop_originals(ir_function *f, const bool *fast, uint32_t nfast)
{
    uint32_t n = f->next_id;
    uint8_t *other = glow_xcalloc(n ? n : 1, 1), *repacked = glow_xcalloc(n ? n : 1, 1);
    for (ir_instr *in = f->first; in; in = in->next)
        for (uint32_t i = 0; i < in->nops; i++) {
            const ir_value *r = ir_root(in->ops[i].v);
            bool copy = in->id < nfast && fast[in->id] && in->ops[i].v == r &&
                        ((in->kind == IK_CONV && (i == 2 || i == 3)) ||
                         (in->kind != IK_CONV && i == 2));
            if (copy)
                repacked[r->id] = 1;
            else
                other[r->id] = 1;
        }
    for (ir_value *v = f->values; v; v = v->next)
        if (v->kind == IV_WEIGHT && !v->is_mutable && repacked[v->id] && !other[v->id])
            v->unplaced = true;
    free(other);
    free(repacked);
}

/* The counters from which the threads take the work units of the fast conv and GEMM calls
 * (kernels/simd.h gk_units): one u32 per instruction id, live for the whole program, cleared
 * by the generated code at the start of every run. */
static void add_work_counters(ir_function *f)
{
    glow_type t = { .dtype = GLOW_U32, .rank = 1, .dims = { (int64_t)f->next_id } };
    add_alloc(f, "cpu.work", &t, f->first, NULL);
}

glow_status cpu_prepare(ir_function *f, bool host, glow_diag *d)
{
    cpu_isa isa;
    cpu_host_isa(&isa);
    int v = isa.avx512 ? 16 : isa.avx2 ? 8 : 0;
    if (!v || !host)
        return GLOW_OK;
    uint32_t n = f->next_id;
    bool *fast = glow_xcalloc(n ? n : 1, sizeof *fast);
    glow_status s = GLOW_OK;
    for (ir_instr *in = f->first; in && s == GLOW_OK; in = in->next) {
        if (in->kind == IK_CONV)
            s = prep_conv(f, in, v, &fast[in->id], d);
        else if (in->kind == IK_FULLY_CONNECTED || in->kind == IK_MATMUL)
            s = prep_gemm(f, in, v, &fast[in->id], d);
    }
    if (s == GLOW_OK && !getenv("GLOWC_CPU_PLAIN")) {
        cpu_plan_layout(f, v, fast);
        cpu_fuse_residuals(f, fast);
    }
    if (s == GLOW_OK) {
        bool any = false;
        for (ir_instr *in = f->first; in; in = in->next) {
            if (in->kind == IK_CONV && fast[in->id])
                conv_scratch(f, in, v);
            any |= in->id < n && fast[in->id];
        }
        drop_originals(f, fast, n);
        if (any)
            add_work_counters(f);
    }
    free(fast);
    return s;
}

bool cpu_fast_find(const ir_instr *in, cpu_fast *out)
{
    memset(out, 0, sizeof *out);
    if (in->nops == 0)
        return false;
    /* Our values come after every operand in the list; start at the latest operand. */
    const ir_value *start = in->ops[0].v;
    for (uint32_t i = 1; i < in->nops; i++)
        if (in->ops[i].v->id > start->id)
            start = in->ops[i].v;
    bool any = false;
    for (const ir_value *v = start; v; v = v->next) {
        char what[16];
        int vl = 0, len = 0;
        unsigned id = 0;
        if (!strcmp(v->name, "cpu.work")) {
            out->work = v;
            continue;
        }
        if (strncmp(v->name, "cpu.", 4) ||
            sscanf(v->name, "cpu.%15[a-z].%d.%u%n", what, &vl, &id, &len) != 3 ||
            v->name[len] || id != in->id || (any && vl != out->v))
            continue;
        out->v = vl;
        any = true;
        if (!strcmp(what, "xblk"))
            out->xblk = v;
        else if (!strcmp(what, "yblk"))
            out->yblk = v;
        else if (!strcmp(what, "wblk") || !strcmp(what, "gemm"))
            out->w = v;
        else if (!strcmp(what, "bblk"))
            out->bias = v;
    }
    return any;
}
