// cpu_internal.h - Shared by the CPU backend's files: kernel calls chosen per instruction
// (select.c), LLVM code generation (llvm_gen.c), the JIT (jit.c) and the runtime glue (cpu.c).
#ifndef GLOW_CPU_INTERNAL_H
#define GLOW_CPU_INTERNAL_H

#include "backend/backend.h"

/* One argument of a kernel call; the generator converts it to the kernel's parameter type
 * (i32/i64 for ints, float/double for reals, the pointer type for addresses). Every kernel
 * also gets (tid, nthreads) appended. */
typedef enum { CA_PTR, CA_NULL, CA_INT, CA_REAL } cpu_arg_kind;
enum { CPU_REGION_CONSTANT, CPU_REGION_MUTABLE, CPU_REGION_ACT };

typedef struct cpu_arg {
    cpu_arg_kind kind;
    int region;          /* CA_PTR */
    uint64_t offset;     /* CA_PTR: bytes from the region base */
    int64_t i;           /* CA_INT */
    double f;            /* CA_REAL */
} cpu_arg;

#define CPU_MAX_ARGS 30
#define CPU_MAX_CALLS 64

typedef struct cpu_call {
    char fn[48];         /* gk_<op>_<dtype>_<isa> */
    cpu_arg args[CPU_MAX_ARGS];
    int nargs;
    /* The call reads what earlier calls of the same instruction wrote (a conv's layout
     * conversions): all threads meet at a barrier first. An instruction with such a call
     * also gets a barrier before and after it, since its scratch buffers are no operands. */
    bool barrier_before;
} cpu_call;

/* Host features the selector may use (LLVMGetHostCPUFeatures). */
typedef struct cpu_isa {
    bool avx2, avx512;
} cpu_isa;

/* --- select.c --- */

/* The kernel calls that compute `in`, in order (all of one instruction may run without a
 * barrier between them: they write disjoint bytes). False: no kernel fits, the instruction
 * runs through the evaluator (glowc_cpu_fallback). */
bool cpu_select(const ir_instr *in, const cpu_isa *isa, cpu_call *calls, int *ncalls);
/* The parameters of a Conv the kernels run (checked: f32, 2-D, consistent shapes, a known
 * fused activation; operands [y, x, w, bias?, residual?]); false when no kernel can. */
typedef struct cpu_conv {
    int64_t k[2], s[2], p[4], dl[2], g;
    int act;
    double alpha, beta;
} cpu_conv;
bool cpu_conv_params(const ir_instr *in, cpu_conv *cp);
/* The parameters of a 2-D f32 MaxPool / AvgPool (pe: the end pads count_include_pad counts,
 * i.e. without ceil_mode's extra); false when no kernel can run it. */
typedef struct cpu_pool {
    int64_t k[2], s[2], p[4], dl[2], pe[2];
    bool cip;
} cpu_pool;
bool cpu_pool_params(const ir_instr *in, cpu_pool *pp);
/* The kernel op code of a same-shape f32 elementwise instruction (> 0 unary, < 0 binary,
 * CPU_OP_CLIP for Clip), 0 when the elementwise kernels do not run it. */
enum { CPU_OP_CLIP = 100 };
int cpu_eltwise_op(const ir_instr *in);
/* Copy, or Concat along channels in whole blocks of v: the same bytes move in NCHW and
 * NCHWc layouts. */
bool cpu_layout_agnostic(const ir_instr *in, int v);
/* The instruction's attribute `id`, or NULL. */
const glow_attr *cpu_attr(const ir_instr *in, glow_attr_id id);
/* True when the library was built with gk_<op>_<dtype>_<isa> (kernels/kernels.def). */
bool cpu_kernel_built(const char *op, const char *dtype, const char *isa);

/* --- chain.c: runs of elementwise instructions fused into one loop --- */

enum { CPU_CHAIN_MAX = 4, CPU_STEP_ARGS = 6 };   /* kernels.h: GK_CHAIN_MAX */
typedef struct cpu_chain {
    int64_t n;                                 /* elements of every step */
    int nsteps;
    cpu_arg step[CPU_CHAIN_MAX][CPU_STEP_ARGS]; /* op, p, q, a, b (or null), y */
    const ir_instr *first;                     /* the first instruction (for messages) */
    cpu_call single;                           /* its own call, when it stays alone */
    size_t rd_mark, wr_mark;                   /* the generator's ranges before the chain */
} cpu_chain;
/* The step an elementwise kernel call makes (false: the call is no chainable kernel). */
bool cpu_chain_step(const cpu_call *c, int64_t *n, cpu_arg st[CPU_STEP_ARGS]);
/* True when the step may join the (non-empty) chain: same size, room, and every buffer it
 * touches is a buffer of the chain exactly or disjoint from them where one side writes. */
bool cpu_chain_fits(const cpu_chain *ch, int64_t n, const cpu_arg st[CPU_STEP_ARGS]);
void cpu_chain_add(cpu_chain *ch, int64_t n, const cpu_arg st[CPU_STEP_ARGS]);
/* The one gk_chain_f32_scalar call of the chain's steps. */
void cpu_chain_call(const cpu_chain *ch, cpu_call *out);

/* --- prepare.c --- */

/* The backend's prepare hook: for the convolutions and matrix products the fast kernels run,
 * adds the repacked weights (constants) and the blocked-layout scratch activations (alloc/
 * dealloc right around the instruction); cpu_select finds them by name. */
glow_status cpu_prepare(ir_function *f, bool host, glow_diag *d);

/* --- layout.c --- */

/* True when v's bytes differ from its plain layout: blocked, and not an activation of one
 * pixel per channel (H * W == 1), whose NCHWc bytes are its NCHW bytes (a global pool's
 * result, read through a Flatten view by the classifier). */
static inline bool cpu_blocked_bytes(const ir_value *v)
{
    const glow_type *t = v->kind == IV_VIEW ? &v->base->type : &v->type;
    return v->blocked && !(t->rank == 4 && t->dims[2] * t->dims[3] == 1);
}

/* Sets ir_value.blocked = v on every activation the fast kernels can keep in the NCHWc
 * layout of block v; fast[instruction id]: the convs cpu_prepare repacked. */
void cpu_plan_layout(ir_function *f, int v, const bool *fast);
/* Folds residual Adds (and a Relu after them) into the fast conv producing one operand;
 * returns how many. */
int cpu_fuse_residuals(ir_function *f, const bool *fast);

/* The values cpu_prepare added for instruction `in` (NULL members when absent). */
typedef struct cpu_fast {
    int v;                      /* vector length of the layouts: 16 (avx512) or 8 (avx2) */
    const ir_value *xblk, *yblk; /* conv: blocked input and output scratch */
    const ir_value *w, *bias;   /* repacked weight (conv blocks or GEMM panels), padded bias */
    const ir_value *work;       /* the work counters (u32 per instruction id), or NULL */
} cpu_fast;
bool cpu_fast_find(const ir_instr *in, cpu_fast *out);

/* --- llvm_gen.c --- */

typedef struct cpu_module cpu_module;   /* an LLVM context + module + target machine */

/* Generates and optimizes `void glowc_run(i8 *constant, i8 *mutable, i8 *act, i32 tid,
 * i32 nthreads, i8 *ctx)` for f. *nkernel / *nfallback count the instructions of each
 * kind. */
glow_status cpu_generate(ir_function *f, cpu_module **out, int *nkernel, int *nfallback,
                         glow_diag *d);
/* As cpu_generate, without the optimizer: cpu_jit_create optimizes in parts. */
glow_status cpu_generate_unoptimized(ir_function *f, cpu_module **out, int *nkernel,
                                     int *nfallback, glow_diag *d);
/* The optimized module as LLVM IR text (malloc'd). */
char *cpu_module_text(cpu_module *m);
void cpu_module_destroy(cpu_module *m);

/* --- jit.c --- */

typedef struct cpu_jit cpu_jit;
typedef struct glow_threadpool glow_threadpool;
typedef void (*cpu_run_fn)(uint8_t *constant, uint8_t *mutable_, uint8_t *act, int tid,
                           int nthreads, void *ctx);

/* Optimizes and compiles m (from cpu_generate_unoptimized; consumed, also on failure) on the
 * pool's threads, one part of its functions each, hands the object code to a new ORC LLJIT
 * and looks up glowc_run. The code is the same for every number of threads. */
glow_status cpu_jit_create(cpu_module *m, glow_threadpool *pool, cpu_jit **out,
                           cpu_run_fn *run, glow_diag *d);
void cpu_jit_destroy(cpu_jit *j);

/* --- cpu.c: the host functions generated code calls --- */
void glowc_cpu_barrier(void *ctx);
void glowc_cpu_fallback(void *ctx, int instr_index, uint8_t *constant, uint8_t *mutable_,
                        uint8_t *act);

#endif
