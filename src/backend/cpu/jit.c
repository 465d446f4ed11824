// jit.c - Runs generated modules in memory through ORC LLJIT: the host's target machine, the
// process's own symbols (libm for the kernels' expf & co) and the backend's two host hooks
// (barrier, evaluator fallback) as absolute symbols.
#include <stdlib.h>

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>

#include "backend/cpu/cpu_llvm.h"

struct cpu_jit {
    LLVMOrcLLJITRef jit;
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

static LLVMJITCSymbolMapPair host_symbol(LLVMOrcLLJITRef jit, const char *name, void *addr)
{
    LLVMJITSymbolFlags flags = { LLVMJITSymbolGenericFlagsExported |
                                     LLVMJITSymbolGenericFlagsCallable, 0 };
    return (LLVMJITCSymbolMapPair){ LLVMOrcLLJITMangleAndIntern(jit, name),
                                    { (LLVMOrcExecutorAddress)(uintptr_t)addr, flags } };
}

glow_status cpu_jit_create(cpu_module *m, cpu_jit **out, cpu_run_fn *run, glow_diag *d)
{
    cpu_llvm_init();
    LLVMOrcThreadSafeContextRef tsc;
    LLVMModuleRef mod = cpu_module_take(m, &tsc);
    cpu_jit *j = glow_xcalloc(1, sizeof(*j));
    LLVMOrcJITTargetMachineBuilderRef jtmb;
    LLVMErrorRef e = LLVMOrcJITTargetMachineBuilderDetectHost(&jtmb);
    if (!e) {
        LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
        LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, jtmb);
        e = LLVMOrcCreateLLJIT(&j->jit, b);
    }
    if (e) {
        LLVMDisposeModule(mod);
        LLVMOrcDisposeThreadSafeContext(tsc);
        cpu_jit_destroy(j);
        return jit_error(e, "creation", d);
    }
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
    if (!e) {
        LLVMOrcJITDylibAddGenerator(jd, gen);
        LLVMJITCSymbolMapPair syms[2] = {
            host_symbol(j->jit, "glowc_cpu_barrier", (void *)glowc_cpu_barrier),
            host_symbol(j->jit, "glowc_cpu_fallback", (void *)glowc_cpu_fallback),
        };
        e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(syms, 2));
    }
    if (e) {
        LLVMDisposeModule(mod);
        LLVMOrcDisposeThreadSafeContext(tsc);
        cpu_jit_destroy(j);
        return jit_error(e, "symbols", d);
    }
    /* The thread-safe module takes the module; our context reference can go. */
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc);
    e = LLVMOrcLLJITAddLLVMIRModule(j->jit, jd, tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        cpu_jit_destroy(j);
        return jit_error(e, "adding the module", d);
    }
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(j->jit, &addr, "glowc_run");
    if (e) {
        cpu_jit_destroy(j);
        return jit_error(e, "compiling glowc_run", d);
    }
    *run = (cpu_run_fn)(uintptr_t)addr;
    *out = j;
    return GLOW_OK;
}
