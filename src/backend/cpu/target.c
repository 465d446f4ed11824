// target.c - The CPU backend's LLVM target: process-wide LLVM initialization, the host's vector
// ISA (and an aarch64 bundle's), target machines for the JIT and for object files, the
// attributes that make every function compile for the target CPU, and the optimization
// pipeline (O2).
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "backend/cpu/cpu_llvm.h"

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

/* One InstCombine sweep per run of the pass, not sweeps until nothing changes (LLVM 14 repeats
 * it over the whole function, at least once more to find nothing): InstCombine runs 8 times in
 * O2 and was its costliest pass (GoogLeNet b1: 0.7 of 2.7 s). With one sweep the optimizer
 * took 0.2 s less on GoogLeNet; the code differs in a few addressing modes and the run time
 * did not move (docs/cpu-backend.md "JIT"). Later LLVMs made one sweep their default. */
#define INSTCOMBINE_OPTION "-instcombine-max-iterations=1"

/* GLOWC_LLVM_OPTIONS's copy, which LLVM keeps pointers into (reachable: not a leak). */
static char *llvm_option_text;

/* LLVM's command-line options, once per process: INSTCOMBINE_OPTION, then GLOWC_LLVM_OPTIONS
 * (space-separated, e.g. "-time-passes"), for looking into the optimizer and code generator.
 * An option may be given once: GLOWC_LLVM_OPTIONS naming the InstCombine one replaces ours. */
static void llvm_options(void)
{
    const char *env = getenv("GLOWC_LLVM_OPTIONS");
    enum { MAX_ARGS = 32 };
    char *copy = llvm_option_text = env ? strdup(env) : NULL, *save = NULL;
    const char *argv[MAX_ARGS + 1] = { "glowc" };
    int argc = 1;
    if (!env || !strstr(env, "-instcombine-max-iterations"))
        argv[argc++] = INSTCOMBINE_OPTION;
    for (char *t = copy ? strtok_r(copy, " ", &save) : NULL; t && argc < MAX_ARGS;
         t = strtok_r(NULL, " ", &save))
        argv[argc++] = t;
    LLVMParseCommandLineOptions(argc, argv, "glowc (GLOWC_LLVM_OPTIONS)");
}

static void llvm_init(void)
{
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMInitializeNativeAsmParser();
    llvm_options();
}

void cpu_llvm_init(void) { pthread_once(&llvm_once, llvm_init); }

/* GLOWC_CPU_ISA: the vector ISA the JIT may use, at most the host's (docs/cpu-backend.md, "A
 * lesser host"), so that the kernels and the code of a lesser CPU run and can be timed here.
 * Each level is the set of cpu_isa flags it allows; "native" (or unset/empty) allows all.
 * aarch64 bundles have NEON at every level but "scalar", which gives them the scalar kernels
 * (to compare the two). */
typedef struct isa_level {
    const char *name;
    cpu_isa allow;
} isa_level;

static const isa_level LEVELS[] = {
    { "scalar", { false, false, false, false, false } },
    { "avx2", { true, false, false, false, true } },
    { "avx2+avxvnni", { true, false, false, true, true } },
    { "avx512", { true, true, false, false, true } },
    { "native", { true, true, true, true, true } },
};
#define NLEVELS (sizeof LEVELS / sizeof LEVELS[0])

/* The level GLOWC_CPU_ISA names; NULL when it names none (unset or empty: native). */
static const isa_level *isa_cap_level(void)
{
    const char *v = getenv("GLOWC_CPU_ISA");
    if (!v || !*v)
        return &LEVELS[NLEVELS - 1];
    for (size_t i = 0; i < NLEVELS; i++)
        if (!strcmp(v, LEVELS[i].name))
            return &LEVELS[i];
    return NULL;
}

glow_status cpu_isa_cap_check(glow_diag *d)
{
    if (isa_cap_level())
        return GLOW_OK;
    char names[128] = "";
    for (size_t i = 0; i < NLEVELS; i++) {
        strcat(names, i ? ", " : "");
        strcat(names, LEVELS[i].name);
    }
    return glow_fail(d, GLOW_ERR_USAGE, "GLOWC_CPU_ISA=%s: unknown vector ISA (expected one of: "
                     "%s)", getenv("GLOWC_CPU_ISA"), names);
}

static void host_isa_uncapped(cpu_isa *isa, const char *f)
{
    isa->avx2 = strstr(f, "+avx2") && strstr(f, "+fma");
    isa->avx512 = strstr(f, "+avx512f") && strstr(f, "+avx512bw") && strstr(f, "+avx512vl") &&
                  strstr(f, "+avx512dq");
    /* Whole names (followed by ',' or the end): "+avxvnni" also begins later features' names. */
    isa->avx512vnni = false;
    isa->avxvnni = false;
    isa->neon = false; /* the JIT's kernel library is x86-64's (aarch64's is for bundles) */
    for (const char *p = f; (p = strstr(p, "+avx")) != NULL; p++) {
        size_t len = strcspn(p, ",");
        if (len == 11 && !strncmp(p, "+avx512vnni", len))
            isa->avx512vnni = isa->avx512;
        else if (len == 8 && !strncmp(p, "+avxvnni", len))
            isa->avxvnni = isa->avx2;
    }
}

bool cpu_host_amd_19h(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541 /* "Auth" */ ||
        !__get_cpuid(1, &a, &b, &c, &d))
        return false;
    unsigned family = (a >> 8) & 0xf;
    if (family == 0xf)
        family += (a >> 20) & 0xff;
    return family == 0x19;
#else
    return false;
#endif
}

void cpu_host_isa(cpu_isa *isa)
{
    cpu_llvm_init();
    char *f = LLVMGetHostCPUFeatures();
    host_isa_uncapped(isa, f);
    LLVMDisposeMessage(f);
    /* An unknown GLOWC_CPU_ISA is rejected before code generation (cpu_isa_cap_check); here
     * it caps nothing. */
    const isa_level *l = isa_cap_level();
    if (l) {
        isa->avx2 &= l->allow.avx2;
        isa->avx512 &= l->allow.avx512;
        isa->avx512vnni &= l->allow.avx512vnni;
        isa->avxvnni &= l->allow.avxvnni;
    }
    isa->split512 = isa->avx512 && cpu_host_amd_19h();
}

void cpu_foreign_isa(const char *triple, cpu_isa *isa)
{
    memset(isa, 0, sizeof *isa);
    const isa_level *l = isa_cap_level();
    /* NEON is part of ARMv8-A: every aarch64 CPU (any --mcpu) has it. */
    isa->neon = triple && !strncmp(triple, "aarch64", 7) && (!l || l->allow.neon);
}

/* Whether LLVM feature `name` (without its sign) lies above the capped isa: the AVX-512 family
 * (and AMX) above avx512 without VNNI, all of it and AVX-VNNI above avx2, and every VEX/EVEX
 * extension (AVX and what builds on it) above scalar, which keeps SSE4.2 and below. */
static bool feature_above(const char *name, size_t len, const cpu_isa *c)
{
#define IS(lit) (len == sizeof(lit) - 1 && !strncmp(name, lit, len))
#define STARTS(lit) (len >= sizeof(lit) - 1 && !strncmp(name, lit, sizeof(lit) - 1))
    if (STARTS("avx512") || STARTS("amx")) {
        if (!c->avx512)
            return true;
        /* Skylake-X's set stays; everything AVX-512 added later goes with VNNI. */
        return !c->avx512vnni && !(IS("avx512f") || IS("avx512bw") || IS("avx512dq") ||
                                   IS("avx512vl") || IS("avx512cd"));
    }
    if (IS("avxvnni"))
        return !c->avxvnni;
    if (!c->avx2)
        return STARTS("avx") || IS("fma") || IS("fma4") || IS("xop") || IS("f16c") ||
               IS("vaes") || IS("vpclmulqdq") || IS("gfni");
    return false;
#undef IS
#undef STARTS
}

char *cpu_host_features(void)
{
    cpu_llvm_init();
    char *f = LLVMGetHostCPUFeatures();
    const isa_level *l = isa_cap_level();
    if (!l || l == &LEVELS[NLEVELS - 1])
        return f;
    cpu_isa c;
    cpu_host_isa(&c);
    /* The same list with the features above the cap turned off: each "+name" becomes "-name"
     * (a feature left on would turn on what it implies, avx512bw turning avx512f back on). */
    for (char *p = f; *p; p += strcspn(p, ","), p += *p == ',') {
        size_t len = strcspn(p, ",");
        if (len > 1 && *p == '+' && feature_above(p + 1, len - 1, &c))
            *p = '-';
    }
    return f;
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

/* The kernel library is read lazily (LLVMGetBitcodeModuleInContext2): a function's body stays
 * in the bitcode until something materializes it. Parsing every body took 50-60 % of a small
 * model's compile (the library holds every ISA's kernels; a model calls a few dozen). Reads
 * the bodies the generated code reaches, transitively, and deletes every function left unread:
 * nothing uses it, as any use would have had it read. A function pass manager without passes
 * is the C API's way to materialize one function (legacy::FunctionPassManager::run). */
void cpu_materialize_used(LLVMModuleRef mod)
{
    LLVMPassManagerRef fpm = LLVMCreateFunctionPassManagerForModule(mod);
    LLVMInitializeFunctionPassManager(fpm);
    for (bool changed = true; changed;) {
        changed = false;
        for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
            if (!LLVMIsDeclaration(fn) && !LLVMCountBasicBlocks(fn) && LLVMGetFirstUse(fn)) {
                LLVMRunFunctionPassManager(fpm, fn);
                changed = true;
            }
    }
    LLVMFinalizeFunctionPassManager(fpm);
    LLVMDisposePassManager(fpm);
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod), next; fn; fn = next) {
        next = LLVMGetNextFunction(fn);
        if (!LLVMIsDeclaration(fn) && !LLVMCountBasicBlocks(fn))
            LLVMDeleteFunction(fn);
    }
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

/* GLOWC_LLVM_OPT=1 runs O1 instead: about a third less optimizer time, slower code. The
 * sanitizer tree's tests use it (tests/CMakeLists.txt): the sanitizers check glowc's own code,
 * and neither LLVM nor the machine code it makes is instrumented at any level. */
const char *cpu_pipeline(void)
{
    const char *level = getenv("GLOWC_LLVM_OPT");
    return level && !strcmp(level, "1") ? "default<O1>" : "default<O2>";
}

glow_status cpu_optimize(LLVMModuleRef mod, LLVMTargetMachineRef tm, glow_diag *d)
{
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
    /* O2, not O3: on the bench models O3 cost 20-30 % more compile time (ResNet-50 b1 at one
     * thread 2.9-3.2 s vs 2.3-2.4 s, GoogLeNet 4.5-4.6 vs 3.5-3.7 s) for no run-time gain
     * (medians of 20-30 runs at 1 and 2 threads within 2 % either way on five models;
     * docs/cpu-backend.md "JIT"). The kernels' hot loops are vectorized and unrolled at O2
     * as well: the vectorizers and unrolling are asked for explicitly above. */
    LLVMErrorRef e = LLVMRunPasses(mod, cpu_pipeline(), tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (!e)
        return GLOW_OK;
    char *msg = LLVMGetErrorMessage(e);
    glow_status s = glow_fail(d, GLOW_ERR_INTERNAL, "cpu backend: optimizing: %s", msg);
    LLVMDisposeErrorMessage(msg);
    return s;
}
