// program.c - The compile pipeline (verify -> optimize -> lower -> optimize -> schedule ->
// IRGen -> plan -> backend) and running a compiled program on input tensors, on execution
// contexts (one run's regions and backend state) so that one program serves concurrent runs.
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <sys/mman.h>

#include "eval/eval.h"
#include "iropt/iropt.h"
#include "lower/lower.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/partition.h"
#include "runtime/runtime.h"

#define HUGE_PAGE ((size_t)2 << 20)

/* A region's size as allocated: 64-byte lines, whole 2 MiB pages from 2 MiB on. */
static size_t region_size(uint64_t bytes)
{
    size_t size = (size_t)((bytes + 63) / 64 * 64);
    if (size >= HUGE_PAGE)
        size = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    return size ? size : 64;
}

static uint8_t *region_alloc(uint64_t bytes)
{
    /* 64-byte alignment for vector kernels; at least one line so the pointer is valid. A
     * region of 2 MiB or more is aligned to whole 2 MiB pages and offered to transparent huge
     * pages: a layer's blocked tensors are read one channel-block plane at a time, many 4 KiB
     * pages at once (resnet50 b1, 2 threads, three interleaved pairs of runs: 2-11% faster).
     * Where the kernel keeps huge pages for madvise'd memory only, this is that advice.
     * Those big regions are mapped directly: the kernel's pages are zero already, and only
     * the pages a run (or the weights' copy) touches become resident, so filling the constant
     * region while freeing the module's payloads never holds both whole. */
    size_t size = region_size(bytes);
    if (size < HUGE_PAGE) {
        void *p = aligned_alloc(64, size);
        if (p)
            memset(p, 0, size);
        return p;
    }
    size_t span = size + HUGE_PAGE;
    uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uint8_t *p = (uint8_t *)start;
    if (p > m)
        munmap(m, (size_t)(p - m));
    if (m + span > p + size)
        munmap(p + size, (size_t)(m + span - (p + size)));
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE); /* advice only: no huge pages is not an error */
#endif
    return p;
}

static void region_free(uint8_t *p, uint64_t bytes)
{
    if (!p)
        return;
    size_t size = region_size(bytes);
    if (size < HUGE_PAGE)
        free(p);
    else
        munmap(p, size);
}

/* Lists every instruction kind (with its reason) the backend cannot run, in one message. */
/* Refuses a plan bigger than the limit, with the figures, before anything is allocated: a
 * model declaring absurd shapes must fail here with a message, not in mmap or the kernel's
 * OOM killer. The sum is checked for overflow since every term comes from the model. */
static glow_status check_memory_limit(const ir_function *ir, uint64_t limit, glow_diag *d)
{
    uint64_t c = ir->constant_bytes, m = ir->mutable_bytes, a = ir->activation_bytes;
    uint64_t total = c + m;
    bool overflow = total < c || total + a < total;
    total += a;
    if (!limit || (!overflow && total <= limit))
        return GLOW_OK;
    char bt[32], bl[32], bc[32], bm[32], ba[32];
    return glow_fail(d, GLOW_ERR_TOO_LARGE,
                     "the model needs %s%s of memory (constant weights %s + mutable weights %s + "
                     "activations %s; %llu + %llu + %llu bytes), more than the limit of %s "
                     "(%llu bytes, --max-memory)", overflow ? "more than " : "",
                     glow_bytes_str(overflow ? UINT64_MAX : total, bt, sizeof bt),
                     glow_bytes_str(c, bc, sizeof bc), glow_bytes_str(m, bm, sizeof bm),
                     glow_bytes_str(a, ba, sizeof ba), (unsigned long long)c,
                     (unsigned long long)m, (unsigned long long)a,
                     glow_bytes_str(limit, bl, sizeof bl), (unsigned long long)limit);
}

static glow_status check_support(const glow_program *p, glow_diag *d)
{
    glow_strmap seen = { 0 };
    char msg[2048] = "";
    size_t len = 0;
    int count = 0;
    for (const ir_instr *in = p->ir->first; in; in = in->next) {
        char why[128] = "";
        if (p->backend->supports(in, why, sizeof why))
            continue;
        if (glow_strmap_has(&seen, why))
            continue;
        glow_strmap_put(&seen, glow_arena_strdup(&p->ir->arena, why), NULL);
        count++;
        if (len < sizeof msg - 200)
            len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s (e.g. '%s')",
                                    count > 1 ? ", " : "", why, in->name);
    }
    glow_strmap_free(&seen);
    if (!count)
        return GLOW_OK;
    return glow_fail(d, GLOW_ERR_UNSUPPORTED, "the %s backend cannot run %d kind%s of "
                     "instruction: %s", p->backend->name, count, count > 1 ? "s" : "", msg);
}

static void collect_placeholders(glow_program *p)
{
    int nin = 0, nout = 0;
    for (glow_node *n = p->m->placeholders.first; n; n = n->next)
        n->is_input ? nin++ : (nout += !n->hidden);
    p->inputs = glow_xcalloc((size_t)nin + 1, sizeof(*p->inputs));
    p->outputs = glow_xcalloc((size_t)nout + 1, sizeof(*p->outputs));
    for (glow_node *n = p->m->placeholders.first; n; n = n->next) {
        if (n->is_input)
            p->inputs[p->ninputs++] = n;
        else if (!n->hidden)
            p->outputs[p->noutputs++] = n;
    }
}

static void bind_weights(glow_program *p)
{
    p->input_vals = glow_xcalloc((size_t)p->ninputs + 1, sizeof(*p->input_vals));
    p->output_vals = glow_xcalloc((size_t)p->noutputs + 1, sizeof(*p->output_vals));
    p->output_counts = glow_xcalloc((size_t)p->noutputs + 1, sizeof(*p->output_counts));
    for (ir_value *v = p->ir->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT || v->storage->kind != NK_PLACEHOLDER)
            continue;
        for (int i = 0; i < p->ninputs; i++)
            if (p->inputs[i] == v->storage)
                p->input_vals[i] = v;
        for (int i = 0; i < p->noutputs; i++) {
            if (p->outputs[i] == v->storage)
                p->output_vals[i] = v;
            if (p->outputs[i]->count && p->outputs[i]->count == v->storage)
                p->output_counts[i] = v;
        }
    }
}

/* Frees the module's big constant payloads (those with a chunk of their own) that no code
 * will read again: with `live_too` false only those no live IR weight refers to (weights
 * the backend replaced by repacked copies), else all of them. The constant region is where
 * the program reads its weights, so the module's copies would only double its memory. */
static void release_payloads(glow_program *p, bool live_too)
{
    glow_module *m = p->m;
    for (glow_node *c = m->constants.first; c; c = c->next)
        c->aux = NULL;
    if (!live_too)
        for (ir_value *v = p->ir->values; v; v = v->next)
            if (v->kind == IV_WEIGHT && !v->unused && v->storage &&
                v->storage->kind == NK_CONSTANT)
                v->storage->aux = v->storage;   /* read by a weight */
    size_t n = 0;
    for (glow_node *c = m->constants.first; c; c = c->next)
        n += !c->aux && c->payload.data != NULL;
    void **ptrs = glow_xcalloc(n + 1, sizeof *ptrs);
    glow_node **owners = glow_xcalloc(n + 1, sizeof *owners);
    size_t k = 0;
    for (glow_node *c = m->constants.first; c; c = c->next)
        if (!c->aux && c->payload.data != NULL) {
            owners[k] = c;
            ptrs[k++] = c->payload.data;
        }
    glow_arena_free_alone(&m->arena, ptrs, k);
    for (size_t i = 0; i < k; i++)
        if (!ptrs[i])
            owners[i]->payload.data = NULL;
    for (glow_node *c = m->constants.first; c; c = c->next)
        c->aux = NULL;
    free(ptrs);
    free(owners);
}

/* Payloads this large are freed as soon as they are in the constant region (the module's
 * copy would only double the weights' memory while LLVM compiles). Smaller ones stay until
 * the code is compiled: code generation may still read small constants (per-channel
 * multipliers, shapes), and they are a small part of any model's weights. */
#define FREE_EARLY_BYTES ((size_t)1 << 20)

/* Copies a payload nothing reads after this copy into the region a few MiB at a time,
 * giving the source's pages back behind the copy: a weight and its copy never coexist whole
 * (VGG-19's 400 MB classifier weight would otherwise count twice at this point). */
static void copy_last(glow_arena *a, uint8_t *dst, const uint8_t *src, size_t bytes)
{
    const size_t step = (size_t)4 << 20;
    for (size_t at = 0; at < bytes; at += step) {
        size_t n = bytes - at < step ? bytes - at : step;
        memcpy(dst + at, src + at, n);
        glow_arena_drop_pages(a, src, src + at, n);
    }
}

/* Copies every live constant weight into the constant region, freeing the big payloads as
 * it goes (node aux counts each payload's weights still to copy). */
static void fill_constants(glow_program *p)
{
    for (ir_value *v = p->ir->values; v; v = v->next)
        if (v->kind == IV_WEIGHT && v->storage->kind == NK_CONSTANT && !v->unused)
            v->storage->aux = NULL;
    for (ir_value *v = p->ir->values; v; v = v->next)
        if (v->kind == IV_WEIGHT && v->storage->kind == NK_CONSTANT && !v->unused)
            v->storage->aux = (void *)((uintptr_t)v->storage->aux + 1);
    for (ir_value *v = p->ir->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT || v->storage->kind != NK_CONSTANT || v->unused)
            continue;
        glow_node *c = v->storage;
        size_t bytes = glow_type_bytes(&v->type);
        uintptr_t left = (uintptr_t)c->aux - 1;
        c->aux = (void *)left;
        bool last = left == 0 && glow_type_bytes(&c->outs[0]) >= FREE_EARLY_BYTES;
        if (last)
            copy_last(&p->m->arena, p->constant + v->addr, c->payload.data, bytes);
        else
            memcpy(p->constant + v->addr, c->payload.data, bytes);
        if (last) {
            void *ptr = c->payload.data;
            glow_arena_free_alone(&p->m->arena, &ptr, 1);
            if (!ptr)
                c->payload.data = NULL;
        }
    }
    for (ir_value *v = p->ir->values; v; v = v->next)
        if (v->kind == IV_WEIGHT && v->storage->kind == NK_CONSTANT)
            v->storage->aux = NULL;
}

static glow_status build(glow_program *p, const glow_compile_options *opt, glow_diag *d)
{
    GLOW_TRY(glow_module_verify(p->m, d));
    if (opt->inline_control_flow)
        GLOW_TRY(glow_inline_if(p->f, d));
    if (opt->stop_after <= GLOW_STAGE_LOADED)
        return GLOW_OK;
    /* Glow's order: fold and optimize the imported graph, lower, then optimize again what
     * lowering produced (its splats, broadcasts and identities). */
    glow_opt_options oo = { 0 };
    if (opt->optimize)
        oo = *opt->optimize;
    oo.passes = NULL;
    oo.fuse_activation = p->backend->fuse_activation;
    if (!opt->no_optimize) {
        oo.phase = GLOW_OPT_BEFORE_LOWERING;
        GLOW_TRY(glow_optimize(p->f, &oo, d));
    }
    if (opt->stop_after <= GLOW_STAGE_OPTIMIZED)
        return GLOW_OK;
    bool quant = opt->quant_hook != NULL;
    GLOW_TRY(glow_lower_for_backend(p->f, quant ? glow_quant_keeps_node : p->backend->keeps_node,
                                    d));
    if (!opt->no_optimize) {
        oo.phase = GLOW_OPT_AFTER_LOWERING;
        oo.fuse_activation = quant ? NULL : p->backend->fuse_activation;
        GLOW_TRY(glow_optimize(p->f, &oo, d));
    }
    if (quant) {
        /* Lowered Gemms are MatMul + Add; the quantizer converts FullyConnected whole (one
         * int8 product with its bias in int32), so they merge back first. */
        if (!opt->no_optimize) {
            GLOW_TRY(glow_run_pass(p->f, GLOW_PASS_MATMUL_ADD_FC, &oo, NULL, d));
            GLOW_TRY(glow_run_pass(p->f, GLOW_PASS_DCE, &oo, NULL, d));
        }
        GLOW_TRY(opt->quant_hook(p->f, opt->quant_ctx, d));
        GLOW_TRY(glow_lower_for_backend(p->f, p->backend->keeps_node, d));
        if (!opt->no_optimize) {
            oo.phase = GLOW_OPT_AFTER_QUANTIZATION;
            oo.fuse_activation = p->backend->fuse_activation;
            GLOW_TRY(glow_optimize(p->f, &oo, d));
        }
    }
    glow_schedule(p->f);
    GLOW_TRY(glow_function_verify(p->f, d));
    if (opt->stop_after <= GLOW_STAGE_LOWERED)
        return GLOW_OK;
    GLOW_TRY(ir_generate(p->f, &p->ir, d));
    /* Stage ir stops at the IR as generated (what the IR optimizer starts from), planned by
     * the same best-fit planner as every later stage. */
    if (opt->stop_after > GLOW_STAGE_IR) {
        if (!opt->no_ir_optimize)
            GLOW_TRY(ir_optimize(p->ir, opt->ir_optimize, d));
        if (p->backend->prepare) {
            glow_prepare_options po = { .host = !opt->foreign_target,
                                        .triple = opt->target_triple,
                                        .plain_layout = opt->plain_layout };
            GLOW_TRY(p->backend->prepare(p->ir, &po, d));
        }
    }
    GLOW_TRY(ir_plan_memory_best_fit(p->ir, d));
    GLOW_TRY(check_memory_limit(p->ir, opt->max_memory, d));
    bind_weights(p);
    if (opt->stop_after <= GLOW_STAGE_IR_OPTIMIZED)
        return GLOW_OK;
    GLOW_TRY(check_support(p, d));
    release_payloads(p, false);
    p->constant = region_alloc(p->ir->constant_bytes);
    if (!p->constant)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot allocate %llu bytes of constant "
                         "weights", (unsigned long long)p->ir->constant_bytes);
    fill_constants(p);
    glow_codegen_options co = { .threads = opt->threads, .cache_dir = opt->cache_dir };
    uint64_t anon0 = 0, file0 = 0, anon1 = 0, file1 = 0;
    bool known = glow_process_rss(&anon0, &file0);
    GLOW_TRY(p->backend->compile(p->ir, &co, &p->state, d));
#ifdef __GLIBC__
    /* Code generation's heap is free now, but glibc keeps what it freed mapped (several MiB
     * of LLVM's memory, over the arenas of the threads that compiled in parts): the runs'
     * peak is the regions plus what stays. */
    malloc_trim(0);
#endif
    /* Process-wide figures: another thread allocating meanwhile would count too, which
     * `glowc bench` (one compile at a time) does not do. */
    if (known && glow_process_rss(&anon1, &file1)) {
        p->codegen_anon = anon1 > anon0 ? anon1 - anon0 : 0;
        p->codegen_file = file1 > file0 ? file1 - file0 : 0;
    }
    release_payloads(p, true);
    /* glow_program_run's context now, so that a program that compiled can run. */
    return glow_exec_create(p, &p->exec, d);
}

glow_status glow_program_create(glow_module *m, const glow_compile_options *opt,
                                glow_program **out, glow_diag *d)
{
    glow_compile_options dflt = { .stop_after = GLOW_STAGE_COMPILED };
    if (!opt)
        opt = &dflt;
    glow_subgraph_runner_install();
    const char *bname = opt->backend ? opt->backend : "interpreter";
    const glow_backend *b = glow_backend_find(bname);
    if (!b) {
        glow_module_destroy(m);
        return glow_fail(d, GLOW_ERR_USAGE, "unknown backend '%s' (known: %s)", bname,
                         glow_backend_names());
    }
    glow_program *p = glow_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    p->m = m;
    p->backend = b;
    p->f = glow_module_function(m, "main");
    if (!p->f) {
        glow_program_destroy(p);
        return glow_fail(d, GLOW_ERR_INTERNAL, "module has no function 'main'");
    }
    collect_placeholders(p);
    glow_status s = build(p, opt, d);
    if (s != GLOW_OK) {
        glow_program_destroy(p);
        return s;
    }
    *out = p;
    return GLOW_OK;
}

glow_status glow_module_quantize(glow_module **m, const glow_compile_options *opt, glow_diag *d)
{
    glow_compile_options c = *opt;
    c.backend = "interpreter";
    c.stop_after = GLOW_STAGE_LOWERED;
    c.cache_dir = NULL;
    glow_program *p = NULL;
    glow_module *in = *m;
    *m = NULL;
    GLOW_TRY(glow_program_create(in, &c, &p, d));
    *m = p->m;
    p->m = NULL;
    p->f = NULL;
    glow_program_destroy(p);
    return GLOW_OK;
}

struct glow_exec {
    glow_program *p;
    uint8_t *mutable_, *act;     /* the run's regions, 64-byte aligned */
    void *ctx;                   /* the backend's, or NULL */
    glow_exec *next;             /* in the program's idle list */
    /* The bytes of the strings a run makes and of its string inputs (docs/onnx-import.md,
     * "String tensors"): reset when a run starts, so outputs stay valid until the next run;
     * empty (and free) for programs without strings. */
    glow_arena strings;
    bool strings_ready;          /* glow_exec_run filled it with this run's inputs */
};

glow_status glow_exec_create(glow_program *p, glow_exec **out, glow_diag *d)
{
    if (!p->state)
        return glow_fail(d, GLOW_ERR_USAGE, "program was not compiled for running");
    glow_exec *e = glow_xcalloc(1, sizeof(*e));
    e->p = p;
    e->mutable_ = region_alloc(p->ir->mutable_bytes);
    e->act = region_alloc(p->ir->activation_bytes);
    if (!e->mutable_ || !e->act) {
        glow_exec_destroy(e);
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot allocate %llu + %llu bytes of "
                         "program memory", (unsigned long long)p->ir->mutable_bytes,
                         (unsigned long long)p->ir->activation_bytes);
    }
    if (p->backend->context_create) {
        glow_status s = p->backend->context_create(p->state, &e->ctx, d);
        if (s != GLOW_OK) {
            glow_exec_destroy(e);
            return s;
        }
    }
    *out = e;
    return GLOW_OK;
}

void glow_exec_destroy(glow_exec *e)
{
    if (!e)
        return;
    if (e->ctx && e->p->backend->context_destroy)
        e->p->backend->context_destroy(e->p->state, e->ctx);
    region_free(e->mutable_, e->p->ir->mutable_bytes);
    region_free(e->act, e->p->ir->activation_bytes);
    glow_arena_release(&e->strings);
    free(e);
}

void *glow_exec_input(const glow_exec *e, int i)
{
    const ir_value *v = e->p->input_vals[i];
    return v ? e->mutable_ + v->addr : NULL;
}

glow_status glow_exec_execute(glow_exec *e, glow_diag *d)
{
    glow_program *p = e->p;
    if (!e->strings_ready)
        glow_arena_reset(&e->strings);
    e->strings_ready = false;
    /* String results go to this context's store; backends evaluate on this thread. */
    glow_arena *outer = glow_eval_bind_strings(&e->strings);
    glow_status s = p->backend->execute(p->state, e->ctx, p->constant, e->mutable_, e->act, d);
    glow_eval_bind_strings(outer);
    return s;
}

/* Copies string input bytes into the run's store, so outputs that pass them on (Identity,
 * Reshape, ...) do not point into the caller's tensors. */
static void own_input_strings(glow_exec *e, void *dst, const glow_type *t)
{
    glow_str *h = dst;
    for (int64_t k = 0; k < glow_type_numel(t); k++)
        h[k] = h[k] && *h[k] ? glow_arena_strdup(&e->strings, h[k]) : NULL;
}

glow_status glow_exec_run(glow_exec *e, const glow_tensor *inputs, int ninputs, glow_diag *d)
{
    glow_program *p = e->p;
    if (ninputs != p->ninputs)
        return glow_fail(d, GLOW_ERR_USAGE, "the model has %d input%s, %d given", p->ninputs,
                         p->ninputs == 1 ? "" : "s", ninputs);
    glow_arena_reset(&e->strings);
    for (int i = 0; i < ninputs; i++) {
        const glow_type *want = &p->inputs[i]->outs[0];
        if (!glow_type_equal(&inputs[i].type, want)) {
            char a[128], b[128];
            return glow_fail(d, GLOW_ERR_BAD_TYPE, "input %d '%s' is %s, the model expects %s",
                             i, p->inputs[i]->name, glow_type_str(&inputs[i].type, a, sizeof a),
                             glow_type_str(want, b, sizeof b));
        }
        void *dst = glow_exec_input(e, i);
        if (dst)
            memcpy(dst, inputs[i].data, glow_type_bytes(want));
        if (dst && want->dtype == GLOW_STRING)
            own_input_strings(e, dst, want);
    }
    e->strings_ready = true;
    return glow_exec_execute(e, d);
}

glow_tensor glow_exec_output(const glow_exec *e, int i)
{
    const glow_program *p = e->p;
    const glow_type *t = &p->outputs[i]->outs[0];
    /* An output no instruction writes (never planned) reads as zeros; callers only read. */
    static uint8_t empty[64];
    void *data = p->output_vals[i] ? e->mutable_ + p->output_vals[i]->addr : empty;
    const ir_value *c = p->output_counts[i];
    if (!c)
        return glow_tensor_borrow(t, data);
    /* A data-dependent shape: the buffer holds the actual elements compactly at its start
     * (docs/dynamic-shapes.md), so the output is that prefix under the actual extent. */
    glow_type actual = *t;
    int64_t n;
    memcpy(&n, e->mutable_ + c->addr, sizeof n);
    int axis = p->outputs[i]->count_axis;
    if (n >= 0 && n <= actual.dims[axis])
        actual.dims[axis] = n;
    return glow_tensor_borrow(&actual, data);
}

glow_status glow_program_acquire(glow_program *p, glow_exec **out, glow_diag *d)
{
    pthread_mutex_lock(&p->lock);
    glow_exec *e = p->idle;
    if (e)
        p->idle = e->next;
    pthread_mutex_unlock(&p->lock);
    if (e) {
        e->next = NULL;
        *out = e;
        return GLOW_OK;
    }
    /* Created outside the lock: a context allocates regions and may start threads. */
    return glow_exec_create(p, out, d);
}

void glow_program_release(glow_program *p, glow_exec *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&p->lock);
    e->next = p->idle;
    p->idle = e;
    pthread_mutex_unlock(&p->lock);
}

void glow_program_pool_own_context(glow_program *p)
{
    glow_program_release(p, p->exec);
    p->exec = NULL;
}

glow_status glow_program_run(glow_program *p, const glow_tensor *inputs, int ninputs,
                             glow_diag *d)
{
    if (!p->exec)
        return glow_fail(d, GLOW_ERR_USAGE, "program was not compiled for running");
    return glow_exec_run(p->exec, inputs, ninputs, d);
}

uint8_t *glow_program_mutable(const glow_program *p)
{
    return p->exec ? p->exec->mutable_ : NULL;
}

glow_tensor glow_program_output(const glow_program *p, int i)
{
    if (p->exec)
        return glow_exec_output(p->exec, i);
    static uint8_t empty[64];
    return glow_tensor_borrow(&p->outputs[i]->outs[0], empty);
}

uint64_t glow_program_code_bytes(const glow_program *p)
{
    return p && p->state && p->backend->code_bytes ? p->backend->code_bytes(p->state) : 0;
}

bool glow_program_code_cached(const glow_program *p)
{
    return p && p->state && p->backend->code_cached && p->backend->code_cached(p->state);
}

int glow_program_fallbacks(const glow_program *p, const ir_instr *const **out)
{
    static const ir_instr *const none[1];
    *out = none;
    if (!p || !p->state || !p->backend->fallbacks)
        return 0;
    return p->backend->fallbacks(p->state, out);
}

void glow_program_destroy(glow_program *p)
{
    if (!p)
        return;
    /* Contexts first: their backend parts belong to the state. */
    glow_exec_destroy(p->exec);
    while (p->idle) {
        glow_exec *e = p->idle;
        p->idle = e->next;
        glow_exec_destroy(e);
    }
    pthread_mutex_destroy(&p->lock);
    if (p->state && p->backend)
        p->backend->destroy(p->state);
    region_free(p->constant, p->ir ? p->ir->constant_bytes : 0);
    ir_function_destroy(p->ir);
    free(p->inputs);
    free(p->outputs);
    free(p->input_vals);
    free(p->output_vals);
    free(p->output_counts);
    glow_module_destroy(p->m);
    free(p);
}
