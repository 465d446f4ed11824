// cpu_internal.h - The CPU backend's steps, in the order a program goes through them. Each file
// decides one thing and calls only the files listed above it:
//
//   fit.c       leaf predicates: the Conv/Pool parameters the kernels run, elementwise op
//               codes, aliasing, the channel-blocked layout's shapes
//   repack.c    weight layouts of the fast kernels (repack.h)
//   layout.c    which activations stay channel-blocked between the fast kernels
//   residual.c  residual Adds (and a Relu after them) folded into blocked convolutions
//   prepare.c   the prepare step: fast convolutions, pools and GEMMs become the backend's own
//               instructions (ir/instrs.def, "cpu.*") with repacked weights, blocked scratch
//               and work counters as explicit operands; the run's error record
//   fuse_pwdw.c a 1x1 expansion and the depthwise conv reading it become one instruction
//   select.c    one instruction -> typed kernel operations (cpu_op)
//   select_*.c  the same per family, called from select.c's switch (each defines its own
//               small argument helpers):
//     select_move.c     data movement of any element kind (strided copies, insert, pad, trilu)
//     select_index.c    gathers, scatters, OneHot and ReverseSequence of any element kind
//     select_typed.c    elementwise instructions of every element kind -> the typed kernels
//     select_spatial.c  Conv, ConvTranspose and the pools over 1-3 dims, Resize
//     select_reduce.c   reductions, along-axis ops, LRN and MatMul of any element kind
//   schedule.c  elementwise chains fused, barriers placed -> a cpu_plan
//   target.c    LLVM setup, the host's ISA, target machines, attributes, O2 (cpu_llvm.h)
//   emit.c      a cpu_plan -> LLVM calls of the kernel library (no decisions)
//   parts.c     optimizing and compiling the module in parts on threads
//   jit.c       ORC LLJIT over those parts
//   bundle.c    AOT bundles (bundle.h, bundle_header.c)
//   cpu.c       the backend's hooks and run-time glue: the only file that calls them all
#ifndef GLOW_CPU_INTERNAL_H
#define GLOW_CPU_INTERNAL_H

#include <string.h>

#include "backend/backend.h"

/* Target features the selector may use: the host's (LLVMGetHostCPUFeatures), or an aarch64
 * bundle's NEON (cpu_foreign_isa). */
typedef struct cpu_isa {
    bool avx2, avx512;
    /* The int8 kernels' dot-product instructions (kernels/qconv): AVX-512 VNNI on top of avx512,
     * the VEX-encoded AVX-VNNI on top of avx2. */
    bool avx512vnni, avxvnni;
    /* aarch64's NEON (the f32 blocked-layout kernels' _neon rows; the int8 ones stay scalar). */
    bool neon;
    /* With avx512: the host core runs a 512-bit operation as two 256-bit halves (Zen 4), so a
     * 512-bit FMA issues at half the rate of 256-bit ones (cpu_wino_fma_rate) and a 256-bit
     * kernel that needs fewer instructions for the same work wins (the int8 depthwise one). */
    bool split512;
} cpu_isa;

/* Whether the host is AMD family 19h (Zen 3, Zen 4), from CPUID: with AVX-512 (Zen 4) its
 * 512-bit operations are split in two (cpu_isa.split512). */
bool cpu_host_amd_19h(void);

/* The vector length of the blocked layouts on isa: 16 (AVX-512), 8 (AVX2), 4 (NEON) or 0
 * (none). */
static inline int cpu_isa_vlen(const cpu_isa *isa)
{
    return isa->avx512 ? 16 : isa->avx2 ? 8 : isa->neon ? 4 : 0;
}

/* --- fit.c --- */

/* a and b share a byte. */
bool cpu_overlap(const ir_value *a, const ir_value *b);
/* No result shares a byte with an operand. */
bool cpu_no_alias(const ir_instr *in);
bool cpu_all_f32(const ir_instr *in);
/* The instruction's attribute `id`, or NULL. */
const glow_attr *cpu_attr(const ir_instr *in, glow_attr_id id);

/* The parameters of a 2-D convolution the kernels run, from its attributes. */
typedef struct cpu_conv {
    int64_t k[2], s[2], p[4], dl[2], g;
    int act;               /* GK_ACT_* (kernels/gk.h) */
    double alpha, beta;
} cpu_conv;
/* An f32 2-D Conv the kernels can run (consistent shapes, a known fused activation;
 * operands [y, x, w, bias?]); false when no kernel can. */
bool cpu_conv_params(const ir_instr *in, cpu_conv *cp);
/* Only the attributes (kernel, strides, pads, dilations, group, fused activation). */
bool cpu_conv_attrs(const ir_instr *in, cpu_conv *cp);
/* The fused activation of Conv/MatMul/FC as GK_ACT_* and its two parameters. */
bool cpu_fused_act(const ir_instr *in, int *act, double *alpha, double *beta);
/* The 1x1 convolution's activation of a cpu.pwdw_nchwc (its pw_* attributes), likewise. */
bool cpu_pw_act(const ir_instr *in, int *act, double *alpha, double *beta);

/* The parameters of a 2-D pool (pe: the end pads count_include_pad counts, i.e. without
 * ceil_mode's extra). */
typedef struct cpu_pool {
    int64_t k[2], s[2], p[4], dl[2], pe[2];
    bool cip;
} cpu_pool;
/* An f32 2-D MaxPool / AvgPool the kernels can run; false otherwise. */
bool cpu_pool_params(const ir_instr *in, cpu_pool *pp);
bool cpu_pool_attrs(const ir_instr *in, cpu_pool *pp);

/* The kernel op code of a same-shape f32 elementwise instruction (> 0 GK_UN_*, < 0 the
 * GK_BIN_* -op, GK_CHAIN_CLIP for Clip), 0 when the elementwise kernels do not run it. */
int cpu_eltwise_op(const ir_instr *in);
/* Copy, or Concat along channels in whole blocks of v: the same bytes move in NCHW and
 * NCHWc layouts. */
bool cpu_layout_agnostic(const ir_instr *in, int v);

/* The channel-blocked layout of block v: a blocked activation is typed [N][ceil(C/v)][H][W][v]
 * (channels padded to whole blocks, the padding lanes zero: layout.c). An
 * activation of one pixel per channel with whole blocks ([N][C][1][1], C % v == 0) has the
 * same bytes in both layouts, so the blocked kernels may read and write it as it is. */
bool cpu_is_nchwc(const glow_type *t, int v);
bool cpu_nchwc_bytes(const glow_type *t, int v);
/* The type of t ([N][C][H][W]) blocked, padded to whole blocks. */
glow_type cpu_nchwc_type(const glow_type *t, int v);
/* The blocked extents of a value the kernels read as NCHWc (*blocks = C / v or dims[1]). */
void cpu_nchwc_dims(const glow_type *t, int v, int64_t *n, int64_t *blocks, int64_t *h,
                    int64_t *w);
/* The backend's own instruction kinds (instrs.def "cpu.*"). */
bool cpu_own_kind(ir_instr_kind k);

/* --- layout.c --- */

/* Which activations (by root value id) the fast kernels keep in the NCHWc layout of block v:
 * an array of f->next_id flags (malloc'd); fast[instruction id]: the convs prepare.c runs
 * with the blocked kernels. */
bool *cpu_plan_layout(const ir_function *f, int v, const bool *fast);

/* --- residual.c --- */

/* Folds residual Adds (and a Relu after them) into the blocked conv producing one operand;
 * blocked[value id]: the activations cpu_plan_layout keeps blocked. Returns how many. */
int cpu_fuse_residuals(ir_function *f, const bool *blocked);

/* --- prepare.c --- */

/* A new read-only constant cpu.<what>.<id> of `count` elements of kind t (1-D), for the
 * caller to fill through *data (repacked and packed weights); NULL with *s set when there is
 * no memory. */
ir_value *cpu_new_const(ir_function *f, const char *what, uint32_t id, glow_dtype t,
                        int64_t count, void **data, glow_diag *d, glow_status *s);
/* The data of v when it is a read-only constant of kind t, else NULL. */
static inline const void *cpu_const_data(const ir_value *v, glow_dtype t)
{
    if (v->kind != IV_WEIGHT || v->is_mutable || !v->storage ||
        v->storage->kind != NK_CONSTANT || v->type.dtype != t)
        return NULL;
    return v->storage->payload.data;
}
/* The quantization of an 8-bit value (i8 or u8, scale, offset) as 3 floats, in the constants
 * qprepare.c writes for select_quant.c (a folded rescale's, cpu.qbinary_post's, cpu.qres's),
 * and read back into t's kind, scale and offset. */
static inline void cpu_qtype_put(float *p, const glow_type *t)
{
    p[0] = t->dtype == GLOW_I8Q;
    p[1] = t->scale;
    p[2] = (float)t->offset;
}
static inline void cpu_qtype_get(const float *p, glow_type *t)
{
    t->dtype = p[0] != 0.0f ? GLOW_I8Q : GLOW_U8Q;
    t->scale = p[1];
    t->offset = (int32_t)p[2];
}
/* Allocates the activation val right before `first` and frees it right after `last` (at the
 * end of the program when last is NULL). */
void cpu_mark_lifetime(ir_function *f, ir_value *val, ir_instr *first, ir_instr *last);
/* An allocation or release marker (no work of its own). */
static inline bool cpu_is_marker(const ir_instr *in)
{
    return in->kind == IK_ALLOC || in->kind == IK_DEALLOC;
}
/* True when an operand of in is root or a view of it. */
static inline bool cpu_touches(const ir_instr *in, const ir_value *root)
{
    for (uint32_t i = 0; i < in->nops; i++)
        if (ir_root(in->ops[i].v) == root)
            return true;
    return false;
}

/* The prepare step for vector length v (0: nothing to prepare); plain: keep every activation
 * in its plain layout (no layout pass, no residual fusion). */
glow_status cpu_prepare(ir_function *f, int v, bool plain, glow_diag *d);
/* The run's error record (kernels/gk_ops.h GK_ERR_*) the kernels that can fail write: an
 * activation cpu.err of GK_ERR_WORDS int64, live for the whole program and zeroed by a
 * cpu.zero at its start, added for every target when f has an instruction whose kernel can
 * meet a bad index (cpu_can_fail); cpu_error_record finds it (NULL when there is none). */
void cpu_add_error_record(ir_function *f);
/* A new activation `name` of type t, live for the whole program and zeroed by a cpu.zero at
 * its start (work counters: kernels/units.h gk_units). */
ir_value *cpu_add_zeroed(ir_function *f, const char *name, const glow_type *t);
const ir_value *cpu_error_record(const ir_function *f);
bool cpu_can_fail(ir_instr_kind k);

/* --- fuse_pwdw.c --- */

/* The last prepare step on the host (cpu.c calls it after cpu_prepare unless every activation
 * stays plain): each 1x1 cpu.conv_nchwc (stride 1, no pads, group 1, bias, no residual) whose
 * result only a 3x3 cpu.dwconv_nchwc (stride 1 or 2, begin pads 1, bias) right after it reads
 * becomes, with it, one cpu.pwdw_nchwc on vector length v (16 or 8): the expanded activation
 * and its memory disappear, a scratch operand of the threads' rings lives over the new
 * instruction. GLOWC_FUSE_PWDW=0 turns it off. Returns how many pairs it fused. */
int cpu_fuse_pwdw(ir_function *f, int v);

/* --- select.c: typed kernel operations --- */

/* One kernel of the library (kernels/kernels.def row): the operation's type. */
typedef enum {
#define KERNEL(op, dtype, isa, ...) CPU_K_##op##_##dtype##_##isa,
#include "kernels.def"
#undef KERNEL
    CPU_K_COUNT
} cpu_kernel;
/* gk_<op>_<dtype>_<isa>, the function's name in the kernel library. */
const char *cpu_kernel_name(cpu_kernel k);

/* One argument of a kernel call; the emitter converts it to the kernel's parameter type
 * (i32/i64 for ints, float/double for reals, the pointer type for addresses). Every kernel
 * also gets (tid, nthreads) appended. */
typedef enum { CA_PTR, CA_NULL, CA_INT, CA_REAL, CA_ERR } cpu_arg_kind;
typedef struct cpu_arg {
    cpu_arg_kind kind;
    int region;          /* CA_PTR: glow_region (backend.h) */
    uint64_t offset;     /* CA_PTR: bytes from the region base */
    int64_t i;           /* CA_INT */
    double f;            /* CA_REAL */
    /* CA_INT: passed at run time rather than specialized into the code, so that calls which
     * differ only in it share one compiled function (an elementwise loop's element count:
     * its loop bounds are run-time values anyway, the thread's share). */
    bool varies;
} cpu_arg;

#define CPU_MAX_ARGS 36
#define CPU_MAX_CALLS 64

/* A typed operation: kernel k with its arguments in the kernel's parameter order. */
typedef struct cpu_op {
    cpu_kernel k;
    cpu_arg args[CPU_MAX_ARGS];
    int nargs;
} cpu_op;

/* Arguments of the select files' operations: a buffer at its planned place plus extra
 * bytes, an optional buffer, an absent pointer, an integer, a real; CPU_OP(op, kernel,
 * args...) fills op. */
static inline cpu_arg cpu_ptr(const ir_value *v, uint64_t extra)
{
    return (cpu_arg){ .kind = CA_PTR, .region = glow_value_region(v), .offset = v->addr + extra };
}
static inline cpu_arg cpu_null(void) { return (cpu_arg){ .kind = CA_NULL }; }
static inline cpu_arg cpu_opt_ptr(const ir_value *v) { return v ? cpu_ptr(v, 0) : cpu_null(); }
static inline cpu_arg cpu_num(int64_t i) { return (cpu_arg){ .kind = CA_INT, .i = i }; }
/* An integer passed at run time when `varies` (cpu_arg.varies). */
static inline cpu_arg cpu_size(bool varies, int64_t i)
{
    return (cpu_arg){ .kind = CA_INT, .i = i, .varies = varies };
}
/* When sizes vary (docs/cpu-backend.md, "Sizes at run time"): a direct, depthwise or pooling
 * layer of at least CPU_DEEP_BLOCKS channel blocks in, a GEMM-like layer (Winograd, the
 * fused pointwise + depthwise) of at least CPU_DEEP_PAIRS pairs of input and output blocks,
 * an elementwise or layout operation of at least CPU_VARY_ELEMENTS elements. Below, the
 * loops are short or the per-tile transforms dominate, and constant bounds pay (U-Net's
 * 16-32-channel Winograd layers ran 1.3x slower generic); above, the work per call hides the
 * generic loop, and layers that differ only in size share one compiled function. */
#define CPU_DEEP_BLOCKS 4
#define CPU_DEEP_PAIRS 64
#define CPU_VARY_ELEMENTS 4096
static inline bool cpu_deep(int64_t in_blocks, int64_t out_blocks)
{
    return in_blocks * out_blocks >= CPU_DEEP_PAIRS;
}
static inline cpu_arg cpu_elements(int64_t n) { return cpu_size(n >= CPU_VARY_ELEMENTS, n); }
static inline cpu_arg cpu_real(double f) { return (cpu_arg){ .kind = CA_REAL, .f = f }; }
/* The kernels' code of an element kind (kernels/gk_dtype.h), 0 for the quantized kinds. */
static inline int cpu_gk_dtype(glow_dtype t) { return t <= GLOW_BOOL ? (int)t + 1 : 0; }
/* The run's error record (cpu_error_record), an address emit.c fills in. */
static inline cpu_arg cpu_err(void) { return (cpu_arg){ .kind = CA_ERR }; }
static inline void cpu_make_op(cpu_op *op, cpu_kernel k, const cpu_arg *args, int nargs)
{
    op->k = k;
    memcpy(op->args, args, sizeof(*args) * (size_t)nargs);
    op->nargs = nargs;
}
#define CPU_OP(op, k, ...)                                                                    \
    cpu_make_op(op, k, (const cpu_arg[]){ __VA_ARGS__ },                                      \
                (int)(sizeof((const cpu_arg[]){ __VA_ARGS__ }) / sizeof(cpu_arg)))

/* The operations that compute `in`, in order; all of one instruction may run without a
 * barrier between them (they write disjoint bytes). False: no kernel fits, the instruction
 * runs through the evaluator (glowc_cpu_fallback). */
bool cpu_select(const ir_instr *in, const cpu_isa *isa, cpu_op *ops, int *nops);
/* The instructions of f no kernel computes on isa (lifetime markers and cpu.zero aside), in
 * program order: returns how many and, when out is not NULL, a malloc'd array of them in *out
 * (NULL when there are none); *nnative (may be NULL) gets the count a kernel computes. */
int cpu_fallbacks(const ir_function *f, const cpu_isa *isa, const ir_instr ***out,
                  int *nnative);

/* cpu_select for cpu.pwdw_nchwc (one operation) on the ISA it was prepared for (in
 * fuse_pwdw.c, beside the pattern that makes it). */
bool cpu_select_pwdw(const ir_instr *in, const cpu_isa *isa, cpu_op *op);

/* --- select_move.c --- */

/* cpu_select for Slice, Transpose, Broadcast, Tile, DepthToSpace, SpaceToDepth,
 * InsertTensor, Pad and Trilu of any element kind; false when no kernel fits. */
bool cpu_select_move(const ir_instr *in, cpu_op *ops, int *nops);
/* The row of a family of four kernels.def rows by element size (u8, b16, b32, b64) for
 * elements of es bytes; false for another size. */
bool cpu_kernel_by_size(const cpu_kernel *k4, size_t es, cpu_kernel *k);

/* --- select_typed.c --- */

/* The typed elementwise kernel (kernels/typed) computing `in`, an elementwise instruction of
 * any element kind, Cast, Where or Splat: one operation. False when none fits. */
bool cpu_select_typed(const ir_instr *in, cpu_op *op);

/* --- select_spatial.c --- */

/* cpu_select for Conv, ConvTranspose, MaxPool, AveragePool, LpPool and Resize (one
 * operation). */
bool cpu_select_spatial(const ir_instr *in, cpu_op *op);
/* cpu.wino_nchwc: the Winograd kernel of the target's vector length. */
bool cpu_select_wino(const ir_instr *in, const cpu_isa *isa, cpu_op *op);
/* The optional operands of the backend's conv and GEMM instructions from operand `from` on
 * (after [y, x, w, work], and a Winograd conv's scratch): the bias is 1-D, a residual has y's
 * type; NULL when absent. */
void cpu_tail_operands(const ir_instr *in, uint32_t from, const ir_value **bias,
                       const ir_value **res);

/* --- select_reduce.c --- */

/* cpu_select for Reduce*, ArgMax/ArgMin, CumSum/CumProd, TopK, Hardmax, LRN and MatMul of a
 * kind other than f32 (any numeric kind the evaluator runs). */
bool cpu_select_reduce(const ir_instr *in, cpu_op *ops, int *nops);

/* --- select_index.c --- */

/* cpu_select for Gather, GatherElements, GatherND, ScatterElements, ScatterND, OneHot and
 * ReverseSequence of any element kind and indices of any integer kind (OneHot: any kind);
 * the kernels record a bad index in the run's error record. False when no kernel fits. */
bool cpu_select_index(const ir_instr *in, cpu_op *ops, int *nops);

/* --- select_quant.c, qprepare.c: int8 (docs/quantization.md, "CPU backend") --- */

/* cpu_select for the int8 instructions (cpu.q*_nhwc, conversions) and the quantized
 * elementwise ops, Quantize and Dequantize. */
bool cpu_select_quant(const ir_instr *in, const cpu_isa *isa, cpu_op *ops, int *nops);
/* The int8 prepare step: quantized convolutions, FullyConnected and pools the int8 kernels run
 * become cpu.q*_nhwc instructions, and 8-bit activations between them stay NHWC. */
glow_status cpu_prepare_quant(ir_function *f, const cpu_isa *isa, glow_diag *d);
/* The GK_BIN_* code of Add, Sub, Mul, Max or Min, -1 for another kind. */
int cpu_bin_code(ir_instr_kind k);
/* The isa column of the qconv row the target uses ("avx512vnni", ..., "scalar"). */
const char *cpu_qconv_isa(const cpu_isa *isa);

/* --- schedule.c: what runs in which order, with which barriers --- */

typedef enum {
    CPU_STEP_RUN,        /* ops[first .. first + nops): one instruction's (or chain's) calls */
    CPU_STEP_BARRIER,    /* all threads meet */
    CPU_STEP_FALLBACK,   /* thread 0 runs instruction `index` through the evaluator */
    CPU_STEP_ZERO,       /* thread 0 zeroes bytes [offset, offset + bytes) of the region */
} cpu_step_kind;

typedef struct cpu_step {
    cpu_step_kind kind;
    int first, nops;                 /* RUN: into cpu_plan.ops */
    bool chain;                      /* RUN: a fused elementwise chain (named apart) */
    bool serial;                     /* RUN: thread 0 runs it alone (tid 0 of 1) */
    bool for_size;                   /* RUN: compiled for size (operands of a few KiB) */
    const ir_instr *in;              /* RUN, FALLBACK: the instruction (chain: the first) */
    int index;                       /* FALLBACK: the instruction's program index */
    int region;                      /* ZERO: glow_region */
    uint64_t offset, bytes;          /* ZERO */
} cpu_step;

typedef struct cpu_plan {
    cpu_step *steps;
    int nsteps, capsteps;
    cpu_op *ops;
    int nops, capops;
    int nkernel, nfallback;          /* instructions run by kernels / by the evaluator */
    bool serial;                     /* every step on thread 0, no barrier */
} cpu_plan;

/* The plan of f for isa: every instruction's operations, runs of elementwise operations
 * fused into chains, a barrier only where an instruction touches bytes an instruction since
 * the last barrier wrote (or writes bytes one of them read). */
glow_status cpu_schedule(const ir_function *f, const cpu_isa *isa, cpu_plan *plan,
                         glow_diag *d);
void cpu_plan_free(cpu_plan *plan);

/* --- emit.c (cpu_llvm.h: the LLVM-typed part) --- */

typedef struct cpu_module cpu_module;   /* an LLVM context + module + target machine */

/* Generates and optimizes `void glowc_run(i8 *constant, i8 *mutable, i8 *act, i32 tid,
 * i32 nthreads, i8 *ctx)` for f on the host. *nkernel / *nfallback count the instructions
 * of each kind. */
glow_status cpu_generate(ir_function *f, cpu_module **out, int *nkernel, int *nfallback,
                         glow_diag *d);
/* As cpu_generate, without the optimizer: cpu_jit_create optimizes in parts. */
glow_status cpu_generate_unoptimized(ir_function *f, cpu_module **out, int *nkernel,
                                     int *nfallback, glow_diag *d);
/* The module as LLVM IR text (malloc'd). */
char *cpu_module_text(cpu_module *m);
void cpu_module_destroy(cpu_module *m);

/* --- jit.c --- */

typedef struct cpu_jit cpu_jit;
typedef struct glow_threadpool glow_threadpool;
typedef void (*cpu_run_fn)(uint8_t *constant, uint8_t *mutable_, uint8_t *act, int tid,
                           int nthreads, void *ctx);

/* A function of the host process the generated code calls (cpu.c's barrier and fallback). */
typedef struct cpu_host_symbol {
    const char *name;
    void *addr;
} cpu_host_symbol;

/* Optimizes and compiles m (from cpu_generate_unoptimized; consumed, also on failure) on the
 * pool's threads, one part of its functions each, hands the object code to a new ORC LLJIT
 * with the host symbols syms[0 .. nsyms) and looks up glowc_run. The code is the same for
 * every number of threads. With cache_dir (may be NULL), the object code is looked up in and
 * stored to that compiled-code cache (cache.c); *cached tells whether it came from there. */
glow_status cpu_jit_create(cpu_module *m, glow_threadpool *pool, const char *cache_dir,
                           const cpu_host_symbol *syms, int nsyms, cpu_jit **out,
                           cpu_run_fn *run, bool *cached, glow_diag *d);
void cpu_jit_destroy(cpu_jit *j);
/* Bytes of object code the JIT was given (its code and data sections, relocations). */
uint64_t cpu_jit_code_bytes(const cpu_jit *j);


#endif
