// cpu_llvm.h - The CPU backend's LLVM-typed internals shared by llvm_gen.c and jit.c.
#ifndef GLOW_CPU_LLVM_H
#define GLOW_CPU_LLVM_H

#include <llvm-c/Core.h>
#include <llvm-c/Orc.h>

#include "backend/cpu/cpu_internal.h"

/* Initializes LLVM's native target once per process. */
void cpu_llvm_init(void);
/* The host's vector extensions as the selector sees them. */
void cpu_host_isa(cpu_isa *isa);
/* Takes the module and its thread-safe context out of m (m is freed). */
LLVMModuleRef cpu_module_take(cpu_module *m, LLVMOrcThreadSafeContextRef *tsc);

#endif
