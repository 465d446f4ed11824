// target.c - The CPU backend's LLVM target: process-wide LLVM initialization, the host's vector
// ISA, target machines for the JIT and for object files, the attributes that make every
// function compile for the target CPU, and the O3 pipeline.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "backend/cpu/cpu_llvm.h"

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void llvm_init(void)
{
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMInitializeNativeAsmParser();
}

void cpu_llvm_init(void) { pthread_once(&llvm_once, llvm_init); }

void cpu_host_isa(cpu_isa *isa)
{
    cpu_llvm_init();
    char *f = LLVMGetHostCPUFeatures();
    isa->avx2 = strstr(f, "+avx2") && strstr(f, "+fma");
    isa->avx512 = strstr(f, "+avx512f") && strstr(f, "+avx512bw") && strstr(f, "+avx512vl") &&
                  strstr(f, "+avx512dq");
    /* Whole names (followed by ',' or the end): "+avxvnni" also begins later features' names. */
    isa->avx512vnni = false;
    isa->avxvnni = false;
    for (char *p = f; (p = strstr(p, "+avx")) != NULL; p++) {
        size_t len = strcspn(p, ",");
        if (len == 11 && !strncmp(p, "+avx512vnni", len))
            isa->avx512vnni = isa->avx512;
        else if (len == 8 && !strncmp(p, "+avxvnni", len))
            isa->avxvnni = isa->avx2;
    }
    LLVMDisposeMessage(f);
}

glow_status cpu_target_machine(const char *triple, const char *cpu, const char *features,
                               bool object, LLVMTargetMachineRef *tm, glow_diag *d)
{
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &err)) {
        glow_status s = glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: no LLVM target for %s: "
                                  "%s", triple, err ? err : "?");
        LLVMDisposeMessage(err);
        return s;
    }
    *tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelAggressive,
                                  object ? LLVMRelocPIC : LLVMRelocDefault,
                                  object ? LLVMCodeModelDefault : LLVMCodeModelJITDefault);
    return GLOW_OK;
}

void cpu_set_fn_attr(LLVMValueRef fn, const char *key, const char *val)
{
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
    unsigned kl = (unsigned)strlen(key);
    LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, key, kl);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(c, key, kl, val, (unsigned)strlen(val)));
}

void cpu_set_target_attrs(LLVMValueRef fn, const char *cpu, const char *features)
{
    cpu_set_fn_attr(fn, "target-cpu", cpu);
    cpu_set_fn_attr(fn, "target-features", features);
    LLVMRemoveStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, "tune-cpu", 8);
}

void cpu_set_enum_attr(LLVMValueRef fn, const char *name, bool on)
{
    LLVMContextRef c = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    if (on)
        LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(c, kind, 0));
    else
        LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind);
}

void cpu_delete_unused(LLVMModuleRef mod)
{
    /* Repeat, as deleting a kernel frees its helpers. */
    for (bool changed = true; changed;) {
        changed = false;
        for (LLVMValueRef fn = LLVMGetFirstFunction(mod), next; fn; fn = next) {
            next = LLVMGetNextFunction(fn);
            if (LLVMGetLinkage(fn) == LLVMInternalLinkage && !LLVMIsDeclaration(fn) &&
                !LLVMGetFirstUse(fn)) {
                LLVMDeleteFunction(fn);
                changed = true;
            }
        }
    }
}

glow_status cpu_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, glow_diag *d)
{
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
    LLVMErrorRef e = LLVMRunPasses(mod, "default<O3>", tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (!e)
        return GLOW_OK;
    char *msg = LLVMGetErrorMessage(e);
    glow_status s = glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: optimizing: %s", msg);
    LLVMDisposeErrorMessage(msg);
    return s;
}
