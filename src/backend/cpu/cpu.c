// cpu.c - The "cpu" backend: compiles an IR function to native code through LLVM (kernels
// inlined with constant shapes), runs it on a persistent thread pool, and provides the host
// hooks the generated code calls: the barrier and the evaluator fallback.
//
// The fallback runs an instruction exactly as the interpreter does (a stand-in graph node over
// tensors borrowing region memory), so every instruction the interpreter runs, this backend
// runs too; kernels only replace the hot ones. A fallback error is kept in the run's context
// (the first one) and reported when the run returns; so is a failure a kernel recorded in the
// run's error record (an index out of range), in the evaluator's words.
//
// The compiled state (code, instruction table) is only read while running; everything a run
// changes lives in its context (cpu_run: the thread pool, the regions, the first error), which
// the generated code receives as its last argument and hands back to the host functions. So
// one program serves concurrent runs, one per context.
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_llvm.h"
#include "gk_ops.h"
#include "support/threadpool.h"

typedef struct cpu_state {
    ir_function *f;
    const ir_instr **instrs;     /* by program index, as glowc_run passes it */
    int ninstr;
    const ir_instr **fallback;   /* the instructions the evaluator runs, program order */
    int nfallback;
    cpu_jit *jit;
    cpu_run_fn run;
    int nthreads;
    bool serial;                 /* the code runs on thread 0 alone: no context needs a pool */
    bool cached;                 /* the code came from the compiled-code cache */
    const ir_value *err;         /* the run's error record, or NULL */
    /* The pool that compiled the code in parts, kept for the first context that wants one
     * (starting threads again would cost each program its first context's worth). */
    _Atomic(glow_threadpool *) spare;
} cpu_state;

/* One run's context: what the run changes. */
typedef struct cpu_run {
    const cpu_state *s;
    glow_threadpool *pool;       /* NULL for a serial program */
    uint8_t *constant, *mutable_, *act;
    atomic_int failed;
    glow_status status;
    glow_diag diag;
} cpu_run;

/* Nodes kept whole beyond lowering's rules: FullyConnected, which the packed GEMM kernel runs
 * with bias and activation fused, and f32 Clip and LeakyRelu, fused into the Conv/FC before
 * them (ReLU6, YOLO's leaky activations) or run by the elementwise kernels. Lowered, LeakyRelu
 * became a Mul by a splat and a Max, which neither fused nor stayed in the blocked layout. */
static bool cpu_keeps_node(const glow_node *n)
{
    return n->kind == NK_FULLY_CONNECTED ||
           ((n->kind == NK_CLIP || n->kind == NK_LEAKY_RELU) && n->outs[0].dtype == GLOW_F32);
}

/* The evaluator's instructions, and the backend's own (prepare.c), which only kernels run. */
static bool cpu_supports(const ir_instr *in, char *why, size_t whylen)
{
    return cpu_own_kind(in->kind) || glow_backend_eval_supports(in, why, whylen);
}

/* The run's error record for every target, then the prepare step for the host's vector ISA,
 * or an aarch64 target's NEON (nothing more for another CPU). */
static glow_status cpu_prepare_hook(ir_function *f, const glow_prepare_options *o,
                                    glow_diag *d)
{
    cpu_add_error_record(f);
    if (!o->host) {
        /* Another CPU gets the portable int8 kernels (scalar rows, any target); aarch64 also
         * the NEON f32 kernels on NCHWc4. */
        cpu_isa isa;
        cpu_foreign_isa(o->triple, &isa);
        if (isa.neon)
            GLOW_TRY(cpu_isa_cap_check(d));
        GLOW_TRY(cpu_prepare_quant(f, &(cpu_isa){ 0 }, d));
        return cpu_prepare(f, cpu_isa_vlen(&isa), o->plain_layout, d); /* 0: nothing */
    }
    GLOW_TRY(cpu_isa_cap_check(d));
    cpu_isa isa;
    cpu_host_isa(&isa);
    GLOW_TRY(cpu_prepare_quant(f, &isa, d));
    GLOW_TRY(cpu_prepare(f, cpu_isa_vlen(&isa), o->plain_layout, d));
    if (!o->plain_layout)
        cpu_fuse_pwdw(f, cpu_isa_vlen(&isa));
    return GLOW_OK;
}

/* Activations the conv/matmul kernels apply in their store (f32 only). */
static bool cpu_fuse_activation(const glow_node *producer, const glow_node *act)
{
    return producer->outs[0].dtype == GLOW_F32;
}

/* The host functions generated code calls (emit.c declares them). */
static void glowc_cpu_barrier(void *ctx)
{
    cpu_run *r = ctx;
    if (r->pool) /* a serial program has no barriers; this is only a guard */
        glow_threadpool_barrier(r->pool);
}

static void glowc_cpu_fallback(void *ctx, int instr_index, uint8_t *constant,
                               uint8_t *mutable_, uint8_t *act)
{
    cpu_run *run = ctx;
    const cpu_state *s = run->s;
    if (instr_index < 0 || instr_index >= s->ninstr)
        return;
    glow_diag d = { 0 };
    glow_regions r = { constant, mutable_, act };
    glow_status st = glow_backend_eval_run(s->instrs[instr_index], &r, "cpu backend", &d);
    if (st != GLOW_OK && !atomic_exchange(&run->failed, 1)) {
        run->status = st;
        run->diag = d;
    }
}

static void cpu_destroy(void *state)
{
    cpu_state *s = state;
    if (!s)
        return;
    glow_threadpool_destroy(atomic_load(&s->spare));
    cpu_jit_destroy(s->jit);
    free(s->instrs);
    free(s->fallback);
    free(s);
}

static glow_status cpu_compile(ir_function *f, const glow_codegen_options *o, void **state,
                               glow_diag *d)
{
    int threads = o->threads;
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
    cpu_isa isa;
    cpu_host_isa(&isa);
    s->nfallback = cpu_fallbacks(f, &isa, &s->fallback, NULL);
    s->err = cpu_error_record(f);
    cpu_module *m = NULL;
    int nk, nf;
    glow_status st = GLOW_OK;
    /* The pool first: it also compiles the code, in parts. */
    glow_threadpool *pool = glow_threadpool_create(s->nthreads);
    atomic_init(&s->spare, pool);
    if (!pool)
        st = glow_fail(d, GLOW_ERR_TOO_LARGE, "cpu backend: cannot start %d threads",
                       s->nthreads);
    if (st == GLOW_OK)
        st = cpu_generate_unoptimized(f, &m, &nk, &nf, d);
    if (st == GLOW_OK) {
        s->serial = cpu_module_serial(m);
        const cpu_host_symbol syms[] = {
            { "glowc_cpu_barrier", (void *)glowc_cpu_barrier },
            { "glowc_cpu_fallback", (void *)glowc_cpu_fallback },
        };
        st = cpu_jit_create(m, pool, o->cache_dir, syms, 2, &s->jit, &s->run, &s->cached, d);
    }
    if (st != GLOW_OK) {
        cpu_destroy(s);
        return st;
    }
    if (s->serial) /* its threads would only sleep */
        glow_threadpool_destroy(atomic_exchange(&s->spare, NULL));
    *state = s;
    return GLOW_OK;
}

static uint64_t cpu_code_bytes(const void *state)
{
    return cpu_jit_code_bytes(((const cpu_state *)state)->jit);
}

static bool cpu_code_cached(const void *state)
{
    return ((const cpu_state *)state)->cached;
}

static glow_status cpu_context_create(void *state, void **ctx, glow_diag *d)
{
    cpu_state *s = state;
    cpu_run *r = glow_xcalloc(1, sizeof(*r));
    r->s = s;
    if (!s->serial) {
        r->pool = atomic_exchange(&s->spare, NULL);
        if (!r->pool && !(r->pool = glow_threadpool_create(s->nthreads))) {
            free(r);
            return glow_fail(d, GLOW_ERR_TOO_LARGE, "cpu backend: cannot start %d threads",
                             s->nthreads);
        }
    }
    *ctx = r;
    return GLOW_OK;
}

static void cpu_context_destroy(void *state, void *ctx)
{
    cpu_run *r = ctx;
    if (!r)
        return;
    glow_threadpool_destroy(r->pool);
    free(r);
}

static void run_thread(void *arg, int tid)
{
    cpu_run *r = arg;
    r->s->run(r->constant, r->mutable_, r->act, tid, r->s->nthreads, r);
}

/* The failure a kernel recorded in the run's error record (gk_ops.h GK_ERR_*), in the
 * evaluator's words. */
static glow_status kernel_failure(const cpu_state *s, const int64_t *rec, glow_diag *d)
{
    const ir_instr *in = NULL;
    for (int i = 0; i < s->ninstr && !in; i++)
        if ((int64_t)s->instrs[i]->id + 1 == rec[GK_ERR_CODE])
            in = s->instrs[i];
    const char *kind = in ? ir_instr_kind_name(in->kind) : "?", *name = in ? in->name : "?";
    long long v = rec[GK_ERR_VALUE], pos = rec[GK_ERR_POS], bound = rec[GK_ERR_BOUND];
    if (in && in->kind == IK_REVERSE_SEQUENCE)
        return glow_fail(d, GLOW_ERR_RUNTIME, "cpu backend: %s '%s': sequence length %lld of "
                         "batch %lld outside [0, %lld]", kind, name, v, pos, bound);
    return glow_fail(d, GLOW_ERR_RUNTIME, "cpu backend: %s '%s': index %lld at position %lld "
                     "is out of range [%lld, %lld)", kind, name, v, pos, -bound, bound);
}

static glow_status cpu_execute(void *state, void *ctx, uint8_t *constant, uint8_t *mutable_,
                               uint8_t *act, glow_diag *d)
{
    cpu_state *s = state;
    cpu_run *r = ctx;
    r->constant = constant;
    r->mutable_ = mutable_;
    r->act = act;
    atomic_store(&r->failed, 0);
    if (s->serial)
        s->run(constant, mutable_, act, 0, 1, r);
    else
        glow_threadpool_run(r->pool, run_thread, r);
    if (atomic_load(&r->failed)) {
        if (d)
            *d = r->diag;
        return r->status;
    }
    int64_t rec[GK_ERR_WORDS] = { 0 };
    if (s->err)
        memcpy(rec, act + s->err->addr, sizeof rec);
    return rec[GK_ERR_CODE] ? kernel_failure(s, rec, d) : GLOW_OK;
}

static int cpu_fallback_list(const void *state, const ir_instr *const **out)
{
    const cpu_state *s = state;
    *out = s->fallback;
    return s->nfallback;
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
    .code_cached = cpu_code_cached,
    .context_create = cpu_context_create,
    .context_destroy = cpu_context_destroy,
    .execute = cpu_execute,
    .destroy = cpu_destroy,
    .fuse_activation = cpu_fuse_activation,
    .prepare = cpu_prepare_hook,
    .fallbacks = cpu_fallback_list,
    .code_bytes = cpu_code_bytes,
};
