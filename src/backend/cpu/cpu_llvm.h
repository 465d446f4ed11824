// cpu_llvm.h - The CPU backend's LLVM-typed internals: the target (target.c), code generation
// (emit.c), the parts compiled in parallel (parts.c), the JIT (jit.c) and bundles (bundle.c).
#ifndef GLOW_CPU_LLVM_H
#define GLOW_CPU_LLVM_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "backend/cpu/cpu_internal.h"

/* --- target.c --- */

/* Initializes LLVM's native target once per process. */
void cpu_llvm_init(void);
/* The host's vector extensions as the selector sees them, capped by GLOWC_CPU_ISA. */
void cpu_host_isa(cpu_isa *isa);
/* The vector ISA of code for another CPU (a bundle for `triple`, NULL: the host's triple with
 * another --mcpu): NEON for aarch64-* unless GLOWC_CPU_ISA=scalar, nothing otherwise. Bundles
 * (bundle.c) and the prepare step (cpu.c) both ask here, so the layout prepared and the
 * kernels selected agree. */
void cpu_foreign_isa(const char *triple, cpu_isa *isa);
/* GLOW_OK, or a usage error listing the valid values when GLOWC_CPU_ISA names no ISA. */
glow_status cpu_isa_cap_check(glow_diag *d);
/* The host's LLVM target features (LLVMGetHostCPUFeatures, to free with LLVMDisposeMessage)
 * with those above GLOWC_CPU_ISA's cap turned off: the JIT's and native bundles' features. */
char *cpu_host_features(void);
/* *tm: a target machine for triple, for the JIT (object false) or an object file; fails when
 * LLVM has no target for triple. */
glow_status cpu_target_machine(const char *triple, const char *cpu, const char *features,
                               bool object, LLVMTargetMachineRef *tm, glow_diag *d);
/* Replaces fn's string attribute key by val. */
void cpu_set_fn_attr(LLVMValueRef fn, const char *key, const char *val);
/* The target CPU and features on fn (without which the vectorizer targets generic x86-64). */
void cpu_set_target_attrs(LLVMValueRef fn, const char *cpu, const char *features);
/* Adds (on) or removes the enum attribute `name` ("noinline", "alwaysinline", ...). */
void cpu_set_enum_attr(LLVMValueRef fn, const char *name, bool on);
/* The optimizer pipeline: "default<O2>", or "default<O1>" with GLOWC_LLVM_OPT=1. */
const char *cpu_pipeline(void);
/* Runs cpu_pipeline() (with the vectorizers and unrolling) on mod for tm's target. */
glow_status cpu_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, glow_diag *d);
/* Reads the bodies of a lazily read module's functions that something uses, transitively,
 * and deletes the functions left unread. */
void cpu_materialize_used(LLVMModuleRef mod);
/* Deletes the internal functions nothing calls, and then those only they called. */
void cpu_delete_unused(LLVMModuleRef mod);

/* --- emit.c --- */

/* Where cpu_generate_for generates code: the JIT's host defaults (all fields zero) or an AOT
 * bundle's target (bundle.c). */
typedef struct cpu_target {
    const char *triple, *cpu, *features;   /* NULL: the host's */
    const unsigned char *bitcode;          /* the kernel library; NULL: the embedded x86-64 one */
    size_t bitcode_size;
    const cpu_isa *isa;                    /* kernel variants to select; NULL: the host's */
    bool object;                           /* for an object file: PIC, default code model */
    bool unoptimized;                      /* stop before the optimizer (cpu_jit_create's) */
    /* Called after glowc_run is emitted and the kernels are made internal, before the module
     * is verified and optimized: adds entry points around `run` (cpu and features are the
     * target's, for the new functions' attributes). */
    glow_status (*add_entries)(LLVMModuleRef mod, LLVMValueRef run, const char *cpu,
                               const char *features, void *arg, glow_diag *d);
    void *arg;
} cpu_target;

/* cpu_generate for a target (NULL: the host, as cpu_generate). */
glow_status cpu_generate_for(ir_function *f, const cpu_target *t, cpu_module **out,
                             int *nkernel, int *nfallback, glow_diag *d);
/* The module and target machine of m (owned by m). */
LLVMModuleRef cpu_module_llvm(cpu_module *m);
LLVMTargetMachineRef cpu_module_target_machine(cpu_module *m);
/* The target m was generated for (owned by m). */
const char *cpu_module_triple(cpu_module *m);
const char *cpu_module_cpu(cpu_module *m);
const char *cpu_module_features(cpu_module *m);
/* glowc_run does all its work on thread 0 (cpu_plan.serial): no barrier, the other threads
 * return at once, so the caller may run it alone as thread 0 of 1. */
bool cpu_module_serial(const cpu_module *m);

/* --- parts.c --- */

#define CPU_MAX_PARTS 16

/* Optimizes and compiles m's module (unoptimized) to object files: its glowc_k functions
 * split into up to min(pool size, cores, CPU_MAX_PARTS) parts, one per pool thread. On
 * success objs[0 .. *nobj) are the objects (the caller's); m's module is left with the parts
 * recorded on its functions. With cache_dir (may be NULL) the objects come from the cache
 * when it has them (*cached true), and are stored there when they are compiled. */
glow_status cpu_compile_parts(cpu_module *m, glow_threadpool *pool, const char *cache_dir,
                              LLVMMemoryBufferRef *objs, int *nobj, bool *cached,
                              glow_diag *d);

/* --- cache.c: the compiled-code cache (--cache DIR) --- */

#define CPU_CACHE_KEY_LEN 32

/* The key (hex) of a module's objects: its bitcode (after the parts are assigned) and what
 * else the code depends on. */
void cpu_cache_key(const void *bitcode, size_t size, const char *triple, const char *cpu,
                   const char *features, int nparts, char key[CPU_CACHE_KEY_LEN + 1]);
/* The objects stored under key in dir (the caller's); false on a miss or a damaged entry. */
bool cpu_cache_load(const char *dir, const char *key, LLVMMemoryBufferRef *objs, int *nobj);
/* Stores objs under key in dir (created with its parents when missing), atomically; false
 * when it cannot (the compile goes on without the cache). */
bool cpu_cache_store(const char *dir, const char *key, LLVMMemoryBufferRef *objs, int nobj);

#endif
