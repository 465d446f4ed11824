// parts.c - Optimizes and compiles a generated module in parts, on several threads at once.
//
// LLVM's optimizer and code generator run one function at a time, single-threaded, and for a
// large model they are most of the compile time. The glowc_k<n> functions (one per kernel-call
// shape) do not inline into each other, so they split cleanly: each part is the whole module
// with the glowc_k<n> of other parts turned into declarations, parsed into its own LLVM
// context (contexts are not shared between threads), optimized with O2 and compiled to an
// object file; the JIT links the objects. Every function is optimized exactly as in the whole
// module, so the machine code does not depend on the number of parts.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>

#include "backend/cpu/cpu_llvm.h"
#include "support/threadpool.h"

/* The string attribute that names a glowc_k function's part. */
#define PART_ATTR "glowc-part"

static bool is_kernel_fn(LLVMValueRef fn)
{
    size_t len;
    return !strncmp(LLVMGetValueName2(fn, &len), "glowc_k", 7) && !LLVMIsDeclaration(fn);
}

/* Instructions fn's code will have once its callees are inlined: an estimate of the time
 * LLVM spends on it. */
static size_t fn_cost(LLVMValueRef fn, int depth)
{
    size_t n = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
             in = LLVMGetNextInstruction(in)) {
            n++;
            if (depth > 0 && LLVMGetInstructionOpcode(in) == LLVMCall) {
                LLVMValueRef callee = LLVMGetCalledValue(in);
                if (LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee) &&
                    !is_kernel_fn(callee))
                    n += fn_cost(callee, depth - 1);
            }
        }
    return n;
}

typedef struct part_fn {
    LLVMValueRef fn;
    size_t cost, index;   /* index: module order, for a fixed order among equal costs */
} part_fn;

static int by_cost_desc(const void *x, const void *y)
{
    const part_fn *a = x, *b = y;
    if (a->cost != b->cost)
        return a->cost < b->cost ? 1 : -1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Gives every glowc_k function a part (the costliest first, each to the part with the least
 * work so far; glowc_run's part is 0) and external linkage, so other parts can call it. */
static void assign_parts(LLVMModuleRef mod, int nparts)
{
    size_t nfn = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        nfn += is_kernel_fn(fn);
    part_fn *fns = glow_xcalloc(nfn + 1, sizeof(*fns));
    size_t k = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        if (is_kernel_fn(fn)) {
            fns[k] = (part_fn){ fn, fn_cost(fn, 8), k };
            k++;
        }
    qsort(fns, nfn, sizeof(*fns), by_cost_desc);
    size_t load[CPU_MAX_PARTS] = { 0 };
    LLVMValueRef run = LLVMGetNamedFunction(mod, "glowc_run");
    if (run)
        load[0] = fn_cost(run, 0);
    LLVMContextRef c = LLVMGetModuleContext(mod);
    for (size_t i = 0; i < nfn; i++) {
        int p = 0;
        for (int q = 1; q < nparts; q++)
            if (load[q] < load[p])
                p = q;
        load[p] += fns[i].cost;
        char val[16];
        snprintf(val, sizeof val, "%d", p);
        LLVMAddAttributeAtIndex(fns[i].fn, LLVMAttributeFunctionIndex,
                                LLVMCreateStringAttribute(c, PART_ATTR, sizeof PART_ATTR - 1,
                                                          val, (unsigned)strlen(val)));
        LLVMSetLinkage(fns[i].fn, LLVMExternalLinkage);
    }
    free(fns);
}

static int part_of(LLVMValueRef fn)
{
    LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                                       PART_ATTR, sizeof PART_ATTR - 1);
    unsigned len;
    const char *v = a ? LLVMGetStringAttributeValue(a, &len) : "0";
    return atoi(v);
}

/* Turns fn into a declaration of the same name, type and calling convention. */
static void drop_body(LLVMModuleRef mod, LLVMValueRef fn)
{
    size_t len;
    char *name = strdup(LLVMGetValueName2(fn, &len));
    LLVMSetValueName2(fn, "", 0);
    LLVMValueRef decl = LLVMAddFunction(mod, name, LLVMGlobalGetValueType(fn));
    LLVMSetFunctionCallConv(decl, LLVMGetFunctionCallConv(fn));
    LLVMReplaceAllUsesWith(fn, decl);
    LLVMDeleteFunction(fn);
    free(name);
}

typedef struct parts_job {
    const char *bc;
    size_t bc_size;
    const char *triple, *cpu, *features;
    int nparts;
    LLVMMemoryBufferRef obj[CPU_MAX_PARTS];
    glow_status status[CPU_MAX_PARTS];
    glow_diag diag[CPU_MAX_PARTS];
} parts_job;

static glow_status compile_part(parts_job *j, int p, LLVMContextRef c, LLVMModuleRef *mod,
                                LLVMTargetMachineRef *tm, glow_diag *d)
{
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(j->bc, j->bc_size,
                                                                    "part.bc", 0);
    LLVMBool bad = LLVMParseBitcodeInContext2(c, buf, mod);
    LLVMDisposeMemoryBuffer(buf);
    if (bad)
        return glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: part %d does not parse", p);
    LLVMValueRef run = LLVMGetNamedFunction(*mod, "glowc_run");
    if (run && p != 0)
        LLVMDeleteFunction(run);
    for (LLVMValueRef fn = LLVMGetFirstFunction(*mod), next; fn; fn = next) {
        next = LLVMGetNextFunction(fn);
        if (is_kernel_fn(fn) && part_of(fn) != p)
            drop_body(*mod, fn);
    }
    cpu_delete_unused(*mod);
    GLOW_TRY(cpu_target_machine(j->triple, j->cpu, j->features, false, tm, d));
    GLOW_TRY(cpu_optimize(*mod, *tm, d));
    char *err = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(*tm, *mod, LLVMObjectFile, &err, &j->obj[p])) {
        glow_status s = glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: compiling part %d: %s",
                                  p, err ? err : "?");
        LLVMDisposeMessage(err);
        return s;
    }
    return GLOW_OK;
}

static void part_thread(void *arg, int tid)
{
    parts_job *j = arg;
    if (tid >= j->nparts)
        return;
    LLVMContextRef c = LLVMContextCreate();
    LLVMModuleRef mod = NULL;
    LLVMTargetMachineRef tm = NULL;
    j->status[tid] = compile_part(j, tid, c, &mod, &tm, &j->diag[tid]);
    if (mod)
        LLVMDisposeModule(mod);
    if (tm)
        LLVMDisposeTargetMachine(tm);
    LLVMContextDispose(c);
}

glow_status cpu_compile_parts(cpu_module *m, glow_threadpool *pool, const char *cache_dir,
                              LLVMMemoryBufferRef *objs, int *nobj, bool *cached,
                              glow_diag *d)
{
    *cached = false;
    int nparts = glow_threadpool_size(pool);
    if (nparts > CPU_MAX_PARTS)
        nparts = CPU_MAX_PARTS;
    if (nparts > glow_default_threads())
        nparts = glow_default_threads();
    /* GLOWC_CPU_PARTS=N: at most N parts, as on an N-core host. With 1, a program for any
     * number of threads is the 1-thread program's code (the module does not depend on the
     * threads), so the compiled-code cache serves both: the differential fuzzer runs the
     * 2-thread program of a 1-core host without a second LLVM compile (docs/fuzzing.md). */
    const char *cap = getenv("GLOWC_CPU_PARTS");
    if (cap && atoi(cap) >= 1 && atoi(cap) < nparts)
        nparts = atoi(cap);
    LLVMModuleRef mod = cpu_module_llvm(m);
    assign_parts(mod, nparts);
    LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(mod);
    parts_job *j = glow_xcalloc(1, sizeof(*j));
    j->bc = LLVMGetBufferStart(bc);
    j->bc_size = LLVMGetBufferSize(bc);
    j->triple = cpu_module_triple(m);
    j->cpu = cpu_module_cpu(m);
    j->features = cpu_module_features(m);
    j->nparts = nparts;
    char key[CPU_CACHE_KEY_LEN + 1];
    if (cache_dir) {
        cpu_cache_key(j->bc, j->bc_size, j->triple, j->cpu, j->features, nparts, key);
        if (cpu_cache_load(cache_dir, key, objs, nobj)) {
            LLVMDisposeMemoryBuffer(bc);
            free(j);
            *cached = true;
            return GLOW_OK;
        }
    }
    glow_threadpool_run(pool, part_thread, j);
    LLVMDisposeMemoryBuffer(bc);
    glow_status s = GLOW_OK;
    for (int p = 0; p < nparts; p++)
        if (j->status[p] != GLOW_OK && s == GLOW_OK) {
            s = j->status[p];
            if (d)
                *d = j->diag[p];
        }
    for (int p = 0; p < nparts; p++) {
        if (s == GLOW_OK)
            objs[p] = j->obj[p];
        else if (j->obj[p])
            LLVMDisposeMemoryBuffer(j->obj[p]);
    }
    *nobj = s == GLOW_OK ? nparts : 0;
    free(j);
    /* A cache that cannot be written (full, read-only) costs the next compile its time, not
     * this one its result. */
    if (s == GLOW_OK && cache_dir)
        cpu_cache_store(cache_dir, key, objs, nparts);
    return s;
}
