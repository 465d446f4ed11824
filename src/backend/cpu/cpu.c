// cpu.c - The "cpu" backend: compiles an IR function to native code through LLVM (kernels
// inlined with constant shapes), runs it on a persistent thread pool, and provides the host
// hooks the generated code calls: the barrier and the evaluator fallback.
//
// The fallback runs an instruction exactly as the interpreter does (a stand-in graph node over
// tensors borrowing region memory), so every instruction the interpreter runs, this backend
// runs too; kernels only replace the hot ones. A fallback error is kept in the state (the
// first one) and reported when the run returns.
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "eval/eval.h"
#include "runtime/threadpool.h"

typedef struct cpu_state {
    ir_function *f;
    const ir_instr **instrs;     /* by program index, as glowc_run passes it */
    int ninstr;
    cpu_jit *jit;
    cpu_run_fn run;
    glow_threadpool *pool;
    int nthreads;
    /* The current run. */
    uint8_t *constant, *mutable_, *act;
    atomic_int failed;
    glow_status status;
    glow_diag diag;
} cpu_state;

/* Nodes lowering leaves whole: the interpreter's choice (so the fallback always has an
 * evaluator routine), except FullyConnected, which the GEMM kernel runs whole. */
static bool cpu_keeps_node(const glow_node *n)
{
    switch (n->kind) {
    case NK_FULLY_CONNECTED:
        /* Whole, for the packed GEMM kernel (bias and activation fused). */
        return true;
    case NK_CLIP:
        /* f32 Clip whole: fused into the Conv/FC before it (ReLU6) or the act kernel. */
        return n->outs[0].dtype == GLOW_F32;
    case NK_GEMM:
    case NK_BATCH_NORM: case NK_INSTANCE_NORM: case NK_LAYER_NORM: case NK_GROUP_NORM:
    case NK_RMS_NORM: case NK_LP_NORM:
    case NK_SOFTMAX: case NK_LOG_SOFTMAX:
    case NK_LEAKY_RELU: case NK_PRELU: case NK_HARD_SIGMOID: case NK_HARD_SWISH:
        return false;
    case NK_PAD:
        return strcmp(glow_node_str(n, GA_MODE, "constant"), "constant") != 0;
    default:
        return true;
    }
}

/* Activations the conv/matmul kernels apply in their store (f32 only). */
static bool cpu_fuse_activation(const glow_node *producer, const glow_node *act)
{
    return producer->outs[0].dtype == GLOW_F32;
}

#define MAX_OPS 64
#define MAX_RES 3

static bool cpu_supports(const ir_instr *in, char *why, size_t whylen)
{
    if (in->kind == IK_ALLOC || in->kind == IK_DEALLOC || in->kind == IK_COPY)
        return true;
    const char *kind = ir_instr_kind_name(in->kind);
    if (!ir_kind_is_node(in->kind) || in->nout > MAX_RES || in->nops - in->nout > MAX_OPS) {
        snprintf(why, whylen, "%s", kind);
        return false;
    }
    const glow_type *ins[MAX_OPS];
    glow_type outs[MAX_RES];
    for (uint32_t i = 0; i < in->nout; i++)
        outs[i] = in->ops[i].v->type;
    for (uint32_t i = in->nout; i < in->nops; i++)
        ins[i - in->nout] = &in->ops[i].v->type;
    int nin = (int)(in->nops - in->nout);
    if (glow_eval_supported_types((glow_node_kind)in->kind, ins, nin, outs, (int)in->nout))
        return true;
    glow_dtype t = nin > 0 ? ins[0]->dtype : outs[0].dtype;
    snprintf(why, whylen, "%s on %s", kind, glow_dtype_name(t));
    return false;
}

static void *value_ptr(const cpu_state *s, const ir_value *v)
{
    const ir_value *root = v->kind == IV_VIEW ? v->base : v;
    uint8_t *base = root->kind == IV_ALLOC ? s->act : root->is_mutable ? s->mutable_
                                                                       : s->constant;
    return base + v->addr;
}

static glow_status run_instr(const cpu_state *s, const ir_instr *in, glow_diag *d)
{
    if (in->kind == IK_COPY) {
        size_t dst = glow_type_bytes(&in->ops[0].v->type);
        size_t src = glow_type_bytes(&in->ops[1].v->type);
        if (dst != src)
            return glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: copy '%s' of %zu bytes into "
                             "%zu bytes", in->name, src, dst);
        memmove(value_ptr(s, in->ops[0].v), value_ptr(s, in->ops[1].v), dst);
        return GLOW_OK;
    }
    if (!ir_kind_is_node(in->kind) || in->nout > MAX_RES || in->nops - in->nout > MAX_OPS)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "cpu backend: no implementation of %s '%s'",
                         ir_instr_kind_name(in->kind), in->name);
    return glow_interp_run_node(in, s->constant, s->mutable_, s->act, d);
}

void glowc_cpu_barrier(void *ctx)
{
    cpu_state *s = ctx;
    glow_threadpool_barrier(s->pool);
}

void glowc_cpu_fallback(void *ctx, int instr_index, uint8_t *constant, uint8_t *mutable_,
                        uint8_t *act)
{
    cpu_state *s = ctx;
    if (instr_index < 0 || instr_index >= s->ninstr)
        return;
    glow_diag d = { 0 };
    glow_status st = run_instr(s, s->instrs[instr_index], &d);
    if (st != GLOW_OK && !atomic_exchange(&s->failed, 1)) {
        s->status = st;
        s->diag = d;
    }
}

static void cpu_destroy(void *state)
{
    cpu_state *s = state;
    if (!s)
        return;
    glow_threadpool_destroy(s->pool);
    cpu_jit_destroy(s->jit);
    free(s->instrs);
    free(s);
}

static glow_status cpu_compile(ir_function *f, int threads, void **state, glow_diag *d)
{
    if (threads < 0 || threads > 1024)
        return glow_fail(d, GLOW_ERR_USAGE, "cpu backend: %d threads (1 to 1024)", threads);
    cpu_state *s = glow_xcalloc(1, sizeof(*s));
    s->f = f;
    s->nthreads = threads ? threads : glow_default_threads();
    for (const ir_instr *in = f->first; in; in = in->next)
        s->ninstr++;
    s->instrs = glow_xcalloc((size_t)s->ninstr + 1, sizeof(*s->instrs));
    int i = 0;
    for (const ir_instr *in = f->first; in; in = in->next)
        s->instrs[i++] = in;
    cpu_module *m = NULL;
    int nk, nf;
    glow_status st = GLOW_OK;
    /* The pool first: it also compiles the code, in parts. */
    if (!(s->pool = glow_threadpool_create(s->nthreads)))
        st = glow_fail(d, GLOW_ERR_TOO_LARGE, "cpu backend: cannot start %d threads",
                       s->nthreads);
    if (st == GLOW_OK)
        st = cpu_generate_unoptimized(f, &m, &nk, &nf, d);
    if (st == GLOW_OK)
        st = cpu_jit_create(m, s->pool, &s->jit, &s->run, d);
    if (st != GLOW_OK) {
        cpu_destroy(s);
        return st;
    }
    *state = s;
    return GLOW_OK;
}

static void run_thread(void *arg, int tid)
{
    cpu_state *s = arg;
    s->run(s->constant, s->mutable_, s->act, tid, s->nthreads, s);
}

static glow_status cpu_execute(void *state, uint8_t *constant, uint8_t *mutable_, uint8_t *act,
                               glow_diag *d)
{
    cpu_state *s = state;
    s->constant = constant;
    s->mutable_ = mutable_;
    s->act = act;
    atomic_store(&s->failed, 0);
    glow_threadpool_run(s->pool, run_thread, s);
    if (atomic_load(&s->failed)) {
        if (d)
            *d = s->diag;
        return s->status;
    }
    return GLOW_OK;
}

glow_status glow_cpu_llvm_ir(ir_function *f, char **text, glow_diag *d)
{
    cpu_module *m = NULL;
    int nk, nf;
    GLOW_TRY(cpu_generate(f, &m, &nk, &nf, d));
    *text = cpu_module_text(m);
    cpu_module_destroy(m);
    return GLOW_OK;
}

const glow_backend glow_cpu_backend = {
    .name = "cpu",
    .keeps_node = cpu_keeps_node,
    .supports = cpu_supports,
    .compile = cpu_compile,
    .execute = cpu_execute,
    .destroy = cpu_destroy,
    .fuse_activation = cpu_fuse_activation,
    .prepare = cpu_prepare,
};
