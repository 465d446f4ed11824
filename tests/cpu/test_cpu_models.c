// test_cpu_models.c - The cpu backend on whole models: lenet against the interpreter and the
// reference output, bit-identical for 1, 2 and 3 threads, repeated runs; the generated LLVM IR
// (one external function, kernels inlined and vectorized); the JIT's compile in parts;
// registration and bad options.
#include <llvm-c/Object.h>

#include "backend/cpu/cpu_llvm.h"
#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "support/threadpool.h"

static glow_diag D;

static glow_program *compile_to(const char *path, const char *backend, int threads,
                                glow_stage stop_after)
{
    glow_module *m = glow_module_create();
    glow_diag_clear(&D);
    if (glow_onnx_load(m, path, NULL, &D) != GLOW_OK) {
        fprintf(stderr, "load %s: %s\n", path, D.msg);
        glow_module_destroy(m);
        return NULL;
    }
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .threads = threads,
                               .stop_after = stop_after };
    if (glow_program_create(m, &o, &p, &D) != GLOW_OK) {
        fprintf(stderr, "compile %s on %s: %s\n", path, backend, D.msg);
        return NULL;
    }
    return p;
}

static glow_program *compile(const char *path, const char *backend, int threads)
{
    return compile_to(path, backend, threads, GLOW_STAGE_COMPILED);
}

/* Runs p on `in` and returns a malloc'd copy of output 0. */
static float *run(glow_program *p, const glow_tensor *in, int64_t *n)
{
    if (!p)
        return NULL;
    glow_diag_clear(&D);
    if (glow_program_run(p, in, 1, &D) != GLOW_OK) {
        fprintf(stderr, "run: %s\n", D.msg);
        return NULL;
    }
    glow_tensor t = glow_program_output(p, 0);
    *n = glow_type_numel(&t.type);
    float *out = malloc(sizeof(float) * (size_t)*n);
    memcpy(out, t.data, sizeof(float) * (size_t)*n);
    return out;
}

static void test_lenet(void)
{
    glow_tensor in = { 0 }, want = { 0 };
    char *name = NULL;
    CHECK(glow_tensor_read_file("models/lenet_input.pb", &in, &name, &D) == GLOW_OK);
    free(name);
    name = NULL;
    CHECK(glow_tensor_read_file("models/lenet_output.pb", &want, &name, &D) == GLOW_OK);
    free(name);
    glow_program *pi = compile("models/lenet.onnx", "interpreter", 1);
    int64_t n0 = 0, n = 0;
    float *ref = run(pi, &in, &n0);
    CHECK(ref != NULL);
    for (int threads = 1; threads <= 3; threads++) {
        glow_program *pc = compile("models/lenet.onnx", "cpu", threads);
        CHECK(pc != NULL);
        float *a = run(pc, &in, &n), *b = NULL;
        int64_t nb = 0;
        /* A second run on the same program (the pool and the JIT code are reused). */
        b = run(pc, &in, &nb);
        CHECK(a && b && ref);
        if (a && b && ref) {
            CHECK_EQ(n, n0);
            CHECK_EQ(nb, n0);
            const float *wf = want.data;
            for (int64_t i = 0; i < n && i < n0; i++) {
                CHECK_NEAR(a[i], ref[i], 1e-5);
                CHECK_NEAR(a[i], wf[i], 1e-4);
                CHECK(memcmp(&a[i], &b[i], sizeof(float)) == 0);
            }
            static float *first;
            if (threads == 1) {
                free(first);
                first = malloc(sizeof(float) * (size_t)n);
                memcpy(first, a, sizeof(float) * (size_t)n);
            } else {
                CHECK(memcmp(first, a, sizeof(float) * (size_t)n) == 0);
            }
            if (threads == 3)
                free(first), first = NULL;
        }
        free(a);
        free(b);
        glow_program_destroy(pc);
    }
    free(ref);
    glow_program_destroy(pi);
    glow_tensor_free(&in);
    glow_tensor_free(&want);
}

static void test_llvm_ir(void)
{
    glow_program *p = compile_to("models/lenet.onnx", "cpu", 0, GLOW_STAGE_IR_OPTIMIZED);
    CHECK(p != NULL);
    char *text = NULL;
    CHECK(p && glow_cpu_llvm_ir(p->ir, &text, &D) == GLOW_OK);
    if (text) {
        CHECK_CONTAINS(text, "define void @glowc_run(");
        /* Kernels are inlined: no gk_ function is left, defined or called (the fast
         * kernels' constant tables, such as @gk_zeros, may stay). */
        CHECK(!strstr(text, "void @gk_") && !strstr(text, "call void @gk_"));
        /* The specialized loops are vectorized. */
        CHECK_CONTAINS(text, "x float>");
        /* Only glowc_run is external. */
        int defines = 0;
        for (const char *s = text; (s = strstr(s, "\ndefine ")); s++)
            defines += strncmp(s, "\ndefine internal", 16) != 0;
        CHECK_EQ(defines, 1);
    }
    free(text);
    glow_program_destroy(p);
}

/* Definitions of glowc_k functions and of glowc_run in one object file. */
static void count_defs(LLVMMemoryBufferRef obj, int *kernels, int *runs)
{
    char *err = NULL;
    LLVMBinaryRef bin = LLVMCreateBinary(obj, NULL, &err);
    CHECK(bin != NULL);
    LLVMDisposeMessage(err);
    if (!bin)
        return;
    LLVMSymbolIteratorRef sym = LLVMObjectFileCopySymbolIterator(bin);
    LLVMSectionIteratorRef sect = LLVMObjectFileCopySectionIterator(bin);
    for (; !LLVMObjectFileIsSymbolIteratorAtEnd(bin, sym); LLVMMoveToNextSymbol(sym)) {
        LLVMMoveToContainingSection(sect, sym);
        if (LLVMObjectFileIsSectionIteratorAtEnd(bin, sect))
            continue; /* undefined: another part's function, or the host's */
        const char *name = LLVMGetSymbolName(sym);
        *kernels += !strncmp(name, "glowc_k", 7);
        *runs += !strcmp(name, "glowc_run");
    }
    LLVMDisposeSectionIterator(sect);
    LLVMDisposeSymbolIterator(sym);
    LLVMDisposeBinary(bin);
}

/* The JIT compiles in parts, one per pool thread up to the number of cores: together the
 * objects define every glowc_k function and glowc_run exactly once, and each object has some
 * of the work. */
static void test_parts(void)
{
    glow_program *p = compile_to("models/lenet.onnx", "cpu", 0, GLOW_STAGE_IR_OPTIMIZED);
    CHECK(p != NULL);
    cpu_module *cm = NULL;
    int nk = 0, nf = 0;
    CHECK(p && cpu_generate_unoptimized(p->ir, &cm, &nk, &nf, &D) == GLOW_OK);
    glow_threadpool *pool = glow_threadpool_create(2);
    CHECK(cm && pool);
    if (cm && pool) {
        int fns = 0;
        for (LLVMValueRef fn = LLVMGetFirstFunction(cpu_module_llvm(cm)); fn;
             fn = LLVMGetNextFunction(fn)) {
            size_t len;
            fns += !LLVMIsDeclaration(fn) && !strncmp(LLVMGetValueName2(fn, &len), "glowc_k", 7);
        }
        CHECK(fns >= 2);
        LLVMMemoryBufferRef objs[CPU_MAX_PARTS];
        int nobj = 0;
        bool cached = false;
        CHECK(cpu_compile_parts(cm, pool, NULL, objs, &nobj, &cached, &D) == GLOW_OK);
        CHECK_EQ(nobj, glow_default_threads() >= 2 ? 2 : 1);
        int kernels = 0, runs = 0;
        for (int i = 0; i < nobj; i++) {
            int k = 0, r = 0;
            count_defs(objs[i], &k, &r);
            CHECK(k + r >= 1);
            kernels += k;
            runs += r;
            LLVMDisposeMemoryBuffer(objs[i]);
        }
        CHECK_EQ(kernels, fns);
        CHECK_EQ(runs, 1);
    }
    if (pool)
        glow_threadpool_destroy(pool);
    cpu_module_destroy(cm);
    glow_program_destroy(p);
}

static void test_registration(void)
{
    CHECK(glow_backend_find("cpu") == &glow_cpu_backend);
    CHECK_CONTAINS(glow_backend_names(), "cpu");
    glow_module *m = glow_module_create();
    CHECK(glow_onnx_load(m, "models/lenet.onnx", NULL, &D) == GLOW_OK);
    glow_program *p = NULL;
    glow_compile_options o = { .backend = "cpu", .threads = 5000,
                               .stop_after = GLOW_STAGE_COMPILED };
    glow_diag_clear(&D);
    CHECK(glow_program_create(m, &o, &p, &D) != GLOW_OK);
    CHECK_CONTAINS(D.msg, "threads");
}

int main(void)
{
    test_lenet();
    test_llvm_ir();
    test_parts();
    test_registration();
    return CHECK_DONE();
}
