// jit.c - Runs generated modules in memory through ORC LLJIT: the object code of their parts
// (parts.c), linked against the process's own symbols (libm for the kernels' expf & co) and
// the host symbols the caller names (cpu.c: the barrier and the evaluator fallback) as absolute
// symbols.
#include <stdlib.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "backend/cpu/cpu_llvm.h"

#define CPU_MAX_HOST_SYMBOLS 8

struct cpu_jit {
    LLVMOrcLLJITRef jit;
    uint64_t code_bytes;   /* object code handed to the JIT */
};

static glow_status jit_error(LLVMErrorRef e, const char *what, glow_diag *d)
{
    char *msg = LLVMGetErrorMessage(e);
    glow_status s = glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: JIT %s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return s;
}

void cpu_jit_destroy(cpu_jit *j)
{
    if (!j)
        return;
    if (j->jit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
        if (e)
            LLVMConsumeError(e);
    }
    free(j);
}

uint64_t cpu_jit_code_bytes(const cpu_jit *j)
{
    return j ? j->code_bytes : 0;
}

static LLVMJITCSymbolMapPair host_symbol(LLVMOrcLLJITRef jit, const char *name, void *addr)
{
    LLVMJITSymbolFlags flags = { LLVMJITSymbolGenericFlagsExported |
                                     LLVMJITSymbolGenericFlagsCallable, 0 };
    return (LLVMJITCSymbolMapPair){ LLVMOrcLLJITMangleAndIntern(jit, name),
                                    { (LLVMOrcExecutorAddress)(uintptr_t)addr, flags } };
}

glow_status cpu_jit_create(cpu_module *m, glow_threadpool *pool, const char *cache_dir,
                           const cpu_host_symbol *syms, int nsyms, cpu_jit **out,
                           cpu_run_fn *run, bool *cached, glow_diag *d)
{
    cpu_llvm_init();
    LLVMMemoryBufferRef objs[CPU_MAX_PARTS];
    int nobj = 0;
    glow_status s = cpu_compile_parts(m, pool, cache_dir, objs, &nobj, cached, d);
    cpu_module_destroy(m);
    GLOW_TRY(s);
    cpu_jit *j = glow_xcalloc(1, sizeof(*j));
    LLVMOrcJITTargetMachineBuilderRef jtmb;
    LLVMErrorRef e = LLVMOrcJITTargetMachineBuilderDetectHost(&jtmb);
    if (!e) {
        LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
        LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, jtmb);
        e = LLVMOrcCreateLLJIT(&j->jit, b);
    }
    const char *what = "creation";
    LLVMOrcJITDylibRef jd = NULL;
    if (!e) {
        what = "symbols";
        jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
        LLVMOrcDefinitionGeneratorRef gen;
        e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
        if (!e) {
            LLVMOrcJITDylibAddGenerator(jd, gen);
            LLVMJITCSymbolMapPair pairs[CPU_MAX_HOST_SYMBOLS];
            int n = nsyms < CPU_MAX_HOST_SYMBOLS ? nsyms : CPU_MAX_HOST_SYMBOLS;
            for (int i = 0; i < n; i++)
                pairs[i] = host_symbol(j->jit, syms[i].name, syms[i].addr);
            e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, (size_t)n));
        }
    }
    /* The JIT takes each object it is given, also when adding it fails. */
    int given = 0;
    for (; !e && given < nobj; given++) {
        what = "adding the object code";
        j->code_bytes += LLVMGetBufferSize(objs[given]);
        e = LLVMOrcLLJITAddObjectFile(j->jit, jd, objs[given]);
    }
    for (int i = given; i < nobj; i++)
        LLVMDisposeMemoryBuffer(objs[i]);
    LLVMOrcExecutorAddress addr = 0;
    if (!e) {
        what = "linking glowc_run";
        e = LLVMOrcLLJITLookup(j->jit, &addr, "glowc_run");
    }
    if (e) {
        cpu_jit_destroy(j);
        return jit_error(e, what, d);
    }
    *run = (cpu_run_fn)(uintptr_t)addr;
    *out = j;
    return GLOW_OK;
}
