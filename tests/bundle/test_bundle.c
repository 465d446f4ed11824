// test_bundle.c - AOT bundles end to end: `glowc compile --emit-bundle` for the digit MLP and
// CNN, LeNet and SqueezeNet; each bundle linked with the system C compiler into
// tests/bundle/driver.c and run, its outputs equal to the cpu backend's (what `glowc run
// --backend cpu` prints); the same with --threads, embedded and C-array weights, regions
// between PROT_NONE pages, aarch64 bundles (NEON kernels) under qemu-aarch64, the header under
// C99 and C++, and a run-time index out of range making the bundle return nonzero. (A program
// with an instruction no kernel covers is refused: test_cpu_kernels_move.c, test_last_resort.)
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle/cnn_model.h"
#include "check.h"
#include "onnx/onnx.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

static const char *glowc_bin, *shared;
static char tmp[256];

/* Runs a shell command; returns its exit status (-1 if it did not exit). Output goes to
 * tmp/log, shown on failure. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096], full[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "(%s) >%s/log 2>&1", cmd, tmp);
    int st = system(full);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc != 0) {
        char show[4400];
        fprintf(stderr, "command: %s\nexit %d, output:\n", cmd, rc);
        snprintf(show, sizeof show, "head -c 3000 %s/log >&2", tmp);
        if (system(show) != 0)
            fprintf(stderr, "(no log)\n");
    }
    return rc;
}

static bool have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

/* The cpu backend's output 0 for `model` on `input` (a .pb), and the input's raw bytes
 * written to tmp/<name>.in. */
static float *reference(const char *model, const char *input, const char *name, size_t *n)
{
    glow_tensor x;
    glow_diag d = { 0 };
    if (glow_tensor_read_file(input, &x, NULL, &d) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", input, d.msg);
        return NULL;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s.in", tmp, name);
    glow_write_file(path, x.data, glow_type_bytes(&x.type), &d);
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    float *out = NULL;
    glow_compile_options co = { .backend = "cpu", .stop_after = GLOW_STAGE_COMPILED };
    if (glow_onnx_load(m, model, NULL, &d) != GLOW_OK) {
        glow_module_destroy(m);
    } else if (glow_program_create(m, &co, &p, &d) == GLOW_OK &&
               glow_program_run(p, &x, 1, &d) == GLOW_OK) {
        glow_tensor y = glow_program_output(p, 0);
        *n = (size_t)glow_type_numel(&y.type);
        out = malloc(*n * sizeof(float));
        memcpy(out, y.data, *n * sizeof(float));
    }
    if (!out)
        fprintf(stderr, "%s: %s\n", model, d.msg);
    glow_program_destroy(p);
    glow_tensor_free(&x);
    return out;
}

/* Compiles the driver for bundle DIR/NAME with CC (extra flags), -> DIR/run<suffix>. */
static int build_driver(const char *cc, const char *dir, const char *name, const char *extra,
                        const char *suffix)
{
    char up[64];
    size_t i = 0;
    for (; name[i] && i < sizeof up - 1; i++)
        up[i] = (name[i] >= 'a' && name[i] <= 'z') ? (char)(name[i] - 32) : name[i];
    up[i] = 0;
    return sh("%s -std=c99 -O1 -Wall -Werror -I%s '-DBUNDLE_H=\"%s.h\"' -DB_FN=%s -DB_P=%s %s "
              "tests/bundle/driver.c %s/%s.o -lm -lpthread -o %s/run%s", cc, dir, name, name, up,
              extra, dir, name, dir, suffix);
}

/* Max relative difference of the driver's output file against ref (exact: 0). */
static double compare(const char *outfile, const float *ref, size_t n)
{
    size_t size = 0;
    uint8_t *data = NULL;
    glow_diag d = { 0 };
    if (glow_read_file(outfile, &data, &size, &d) != GLOW_OK || size != n * sizeof(float)) {
        fprintf(stderr, "%s: %zu bytes, want %zu\n", outfile, size, n * sizeof(float));
        free(data);
        return INFINITY;
    }
    const float *y = (const float *)data;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)y[i] - ref[i]);
        double rel = diff / fmax(fabs((double)ref[i]), 1e-6);
        if (y[i] != ref[i] && rel > worst)
            worst = rel;
    }
    free(data);
    return worst;
}

typedef struct model_case {
    const char *name, *model, *input;
    bool guard, threads, weights_modes;
} model_case;

static void run_case(const model_case *mc)
{
    char dir[512], out[600];
    snprintf(dir, sizeof dir, "%s/%s", tmp, mc->name);
    size_t n = 0;
    float *ref = reference(mc->model, mc->input, mc->name, &n);
    CHECK(ref != NULL);
    if (!ref)
        return;
    CHECK_EQ(sh("%s compile %s --emit-bundle %s --name %s%s", glowc_bin, mc->model, dir,
                mc->name, mc->threads ? " --threads 3" : ""), 0);
    CHECK_EQ(build_driver("cc", dir, mc->name, mc->threads ? "-DB_THREADED" : "", ""), 0);
    snprintf(out, sizeof out, "%s/out", dir);
    CHECK_EQ(sh("%s/run %s/%s.weights.bin %s %s/%s.in", dir, dir, mc->name, out, tmp,
                mc->name), 0);
    double diff = compare(out, ref, n);
    printf("%-10s bundle vs cpu backend: max relative difference %g\n", mc->name, diff);
    CHECK(diff == 0);
    if (mc->threads) {
        CHECK_EQ(sh("%s/run %s/%s.weights.bin %s %s/%s.in --threads", dir, dir, mc->name, out,
                    tmp, mc->name), 0);
        CHECK(compare(out, ref, n) == 0);
    }
    if (mc->guard) {
        /* Regions flush against PROT_NONE pages on either side; weights read-only. */
        const char *modes[2] = { "start", "end" };
        for (int i = 0; i < 2; i++) {
            CHECK_EQ(sh("%s/run %s/%s.weights.bin %s %s/%s.in --guard %s", dir, dir, mc->name,
                        out, tmp, mc->name, modes[i]), 0);
            CHECK(compare(out, ref, n) == 0);
        }
    }
    if (mc->weights_modes) {
        /* Embedded: the entry takes NULL; c-array: NAME.weights.c linked in. */
        char d2[600];
        snprintf(d2, sizeof d2, "%s_emb", dir);
        CHECK_EQ(sh("%s compile %s --emit-bundle %s --name %s --weights embedded", glowc_bin,
                    mc->model, d2, mc->name), 0);
        CHECK_EQ(build_driver("cc", d2, mc->name, "", ""), 0);
        CHECK_EQ(sh("%s/run - %s %s/%s.in --guard end", d2, out, tmp, mc->name), 0);
        CHECK(compare(out, ref, n) == 0);
        snprintf(d2, sizeof d2, "%s_carr", dir);
        CHECK_EQ(sh("%s compile %s --emit-bundle %s --name %s --weights c-array", glowc_bin,
                    mc->model, d2, mc->name), 0);
        CHECK_EQ(sh("test -s %s/%s.weights.c && cc -std=c99 -Wall -Werror -c %s/%s.weights.c "
                    "-o %s/w.o", d2, mc->name, d2, mc->name, d2), 0);
        CHECK_EQ(sh("cmp %s/%s.weights.bin %s/%s.weights.bin", dir, mc->name, d2, mc->name), 0);
    }
    free(ref);
}

/* Input `i` of node test `test` as raw bytes in tmp/<test>.<i>, element 0 set to `bad` when
 * it is not 0. */
static bool raw_input(const char *test, int i, int64_t bad)
{
    char path[512];
    glow_tensor x;
    glow_diag d = { 0 };
    snprintf(path, sizeof path, "%s/onnx-node-tests/node/%s/test_data_set_0/input_%d.pb",
             shared ? shared : "../shared", test, i);
    if (glow_tensor_read_file(path, &x, NULL, &d) != GLOW_OK) {
        fprintf(stderr, "%s: %s\n", path, d.msg);
        return false;
    }
    if (bad)
        glow_store_i64(x.type.dtype, x.data, 0, bad);
    snprintf(path, sizeof path, "%s/%s.%d", tmp, test, i);
    bool ok = glow_write_file(path, x.data, glow_type_bytes(&x.type), &d) == GLOW_OK;
    glow_tensor_free(&x);
    return ok;
}

/* A Gather whose run-time index is out of range: the bundle returns nonzero (the driver
 * exits 3), on one thread and on three; with the test's own indices it returns 0. */
static void check_bad_index(void)
{
    const char *t = "test_gather_0";
    char dir[512];
    snprintf(dir, sizeof dir, "%s/bad_index", tmp);
    if (!raw_input(t, 0, 0) || !raw_input(t, 1, 0)) {
        printf("SKIP bad index: %s is missing\n", t);
        return;
    }
    CHECK_EQ(sh("%s compile %s/onnx-node-tests/node/%s/model.onnx --emit-bundle %s --name gx "
                "--threads 3", glowc_bin, shared ? shared : "../shared", t, dir), 0);
    CHECK_EQ(build_driver("cc", dir, "gx", "-DB_THREADED -DB_IN1", ""), 0);
    const char *run = "%s/run %s/gx.weights.bin %s/out %s/%s.0 %s/%s.1 %s; test $? = %d";
    CHECK_EQ(sh(run, dir, dir, dir, tmp, t, tmp, t, "", 0), 0);
    CHECK(raw_input(t, 1, 1000));
    CHECK_EQ(sh(run, dir, dir, dir, tmp, t, tmp, t, "", 3), 0);
    CHECK_EQ(sh(run, dir, dir, dir, tmp, t, tmp, t, "--threads", 3), 0);
}

/* The header alone compiles as C99 and as C++ with warnings as errors. */
static void check_header(const char *name)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", tmp, name);
    char up[64];
    size_t i = 0;
    for (; name[i] && i < sizeof up - 1; i++)
        up[i] = (name[i] >= 'a' && name[i] <= 'z') ? (char)(name[i] - 32) : name[i];
    up[i] = 0;
    char src[1024];
    snprintf(src, sizeof src, "%s/h.c", dir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "#include \"%s.h\"\n"
               "static char constant[%s_CONSTANT_MEM_SIZE + 1], mut[%s_MUTABLE_MEM_SIZE + 1];\n"
               "static char act[%s_ACTIVATIONS_MEM_SIZE + %s_MEM_ALIGN];\n"
               "int main(void)\n{\n"
               "    int (*volatile run)(uint8_t *, uint8_t *, uint8_t *) = %s;\n"
               "    return run == 0 && constant[%s_INPUT_0_OFFSET] == mut[%s_OUTPUT_0_SIZE] &&\n"
               "           act[0];\n}\n", name, up, up, up, up, name, up, up);
    fclose(f);
    CHECK_EQ(sh("cc -std=c99 -Wall -Wextra -Werror -pedantic -I%s -c %s/h.c -o %s/h.o", dir,
                dir, dir), 0);
    if (have("g++"))
        CHECK_EQ(sh("g++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -I%s -c %s/h.c "
                    "-o %s/h.o", dir, dir, dir), 0);
    else
        printf("SKIP header as C++: no g++\n");
}

/* The number of vector fused multiply-adds (fmla v<n>.4s / by element) in an aarch64 object:
 * only the NEON kernels' vfmaq_f32 makes them (the scalar kernels are built with
 * -ffp-contract=off, so LLVM vectorizing them gives fmul and fadd), so an aarch64 bundle of a
 * CNN without any ran the scalar kernels. -1 when objdump fails. */
static long vector_fmas(const char *obj)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "aarch64-linux-gnu-objdump -d '%s' | grep -cE "
             "'fmla[[:space:]]+v[0-9]+\\.4s'", obj);
    FILE *p = popen(cmd, "r");
    long count = -1;
    if (p && fscanf(p, "%ld", &count) != 1)
        count = -1;
    if (p)
        pclose(p);
    return count;
}

/* --target aarch64-linux-gnu: linked statically by the cross gcc, run under qemu-aarch64 with
 * one and two threads, within 1e-5 relative of the x86-64 cpu backend; the f32 convolutions,
 * pools and GEMMs run NEON kernels (the object holds vector FMAs). `env` (may be "") prefixes
 * the compile: GLOWC_CPU_ISA=scalar gives the scalar kernels, and then no vector FMA. */
static void check_aarch64_with(const char *name, const char *model, const char *input,
                               const char *env)
{
    bool neon = !strstr(env, "scalar");
    char dir[512], out[600], arm[64];
    snprintf(arm, sizeof arm, "%s_arm%s", name, neon ? "" : "_scalar");
    snprintf(dir, sizeof dir, "%s/%s", tmp, arm);
    size_t n = 0;
    float *ref = reference(model, input, arm, &n);
    CHECK(ref != NULL);
    if (!ref)
        return;
    CHECK_EQ(sh("%s %s compile %s --emit-bundle %s --name %s --target aarch64-linux-gnu "
                "--threads 2", env, glowc_bin, model, dir, name), 0);
    CHECK_EQ(sh("file %s/%s.o | grep -q aarch64 || readelf -h %s/%s.o | grep -q AArch64", dir,
                name, dir, name), 0);
    if (have("aarch64-linux-gnu-objdump")) {
        char obj[600];
        snprintf(obj, sizeof obj, "%s/%s.o", dir, name);
        long fmas = vector_fmas(obj);
        printf("%-10s aarch64 bundle (%s kernels): %ld vector FMAs (fmla v.4s)\n", name,
               neon ? "NEON" : "scalar", fmas);
        CHECK(neon ? fmas > 0 : fmas == 0);
    } else {
        printf("SKIP %s: no aarch64-linux-gnu-objdump to look for the NEON kernels\n", name);
    }
    CHECK_EQ(build_driver("aarch64-linux-gnu-gcc -static", dir, name, "-DB_THREADED", ""), 0);
    snprintf(out, sizeof out, "%s/out", dir);
    CHECK_EQ(sh("qemu-aarch64 %s/run %s/%s.weights.bin %s %s/%s.in", dir, dir, name, out, tmp,
                arm), 0);
    double diff = compare(out, ref, n);
    printf("%-10s aarch64 bundle (qemu, %s) vs x86-64 cpu backend: max relative difference "
           "%g\n", name, neon ? "NEON" : "scalar", diff);
    CHECK(diff <= 1e-5);
    CHECK_EQ(sh("qemu-aarch64 %s/run %s/%s.weights.bin %s %s/%s.in --threads --guard end", dir,
                dir, name, out, tmp, arm), 0);
    CHECK(compare(out, ref, n) <= 1e-5);
    free(ref);
}

static bool have_aarch64(void)
{
    if (have("aarch64-linux-gnu-gcc") && have("qemu-aarch64"))
        return true;
    printf("SKIP aarch64 bundle: aarch64-linux-gnu-gcc or qemu-aarch64 is missing "
           "(scripts/setup installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, "
           "qemu-user)\n");
    return false;
}

static void check_aarch64(const char *name, const char *model, const char *input)
{
    if (have_aarch64())
        check_aarch64_with(name, model, input, "");
}

/* The NEON kernels against x86 on cnn_model.h's CNN (every blocked family at shapes that do
 * not fill 4-lane blocks), and the same bundle with the scalar kernels. */
static void check_aarch64_cnn(void)
{
    if (!have_aarch64())
        return;
    char model[512], input[512];
    snprintf(model, sizeof model, "%s/cnn.onnx", tmp);
    snprintf(input, sizeof input, "%s/cnn_input.pb", tmp);
    CHECK(cnn_write_model(model) && cnn_write_input(input));
    check_aarch64_with("cnn", model, input, "");
    check_aarch64_with("cnn", model, input, "GLOWC_CPU_ISA=scalar");
}

/* Winograd convolutions in a bundle: their transformed weights in NAME.weights.bin and the
 * same outputs as the JIT's (both forced to Winograd with GLOWC_WINOGRAD=1), at 1 and 3
 * threads. Only where the host has a blocked layout for them (AVX2 or AVX-512). */
static void check_winograd(void)
{
    if (sh("grep -qw avx2 /proc/cpuinfo") != 0 || getenv("GLOWC_CPU_ISA"))
        return;
    char model[512], input[512];
    snprintf(model, sizeof model, "%s/wino.onnx", tmp);
    snprintf(input, sizeof input, "%s/wino_input.pb", tmp);
    CHECK(cnn_write_wino_model(model) &&
          cnn_write_input_dims(input, (const int64_t[]){ 2, 16, 13, 15 }));
    setenv("GLOWC_WINOGRAD", "1", 1);
    CHECK_EQ(sh("test \"$(%s dump %s --backend cpu --stage ir-optimized --stats 2>&1 | grep -c "
                "': winograd')\" = 3", glowc_bin, model), 0);
    run_case(&(model_case){ "wino", model, input, true, true, true });
    unsetenv("GLOWC_WINOGRAD");
}

/* An int8 bundle (glowc profile, then compile --quantize): the same bytes as the cpu
 * backend's quantized run, on this machine and (portable int8 kernels) as an aarch64 bundle
 * under qemu; its constant region a quarter of the float bundle's. */
static void check_quantized(const char *name, const char *model, const char *input)
{
    char dir[512], prof[600], out[600], q[64];
    snprintf(q, sizeof q, "%s_q", name);
    snprintf(dir, sizeof dir, "%s/%s", tmp, q);
    snprintf(prof, sizeof prof, "%s/%s.json", tmp, q);
    CHECK_EQ(sh("%s profile %s %s -o %s >/dev/null", glowc_bin, model, input, prof), 0);
    glow_quant_options qo = { .profile = prof, .per_channel = true };
    glow_tensor x;
    glow_diag d = { 0 };
    CHECK(glow_tensor_read_file(input, &x, NULL, &d) == GLOW_OK);
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    glow_compile_options co = { .backend = "cpu", .stop_after = GLOW_STAGE_COMPILED,
                                .quant_hook = glow_quant_hook, .quant_ctx = &qo };
    float *ref = NULL;
    size_t n = 0;
    if (glow_onnx_load(m, model, NULL, &d) == GLOW_OK &&
        glow_program_create(m, &co, &p, &d) == GLOW_OK && glow_program_run(p, &x, 1, &d) == 0) {
        glow_tensor y = glow_program_output(p, 0);
        n = (size_t)glow_type_numel(&y.type);
        ref = malloc(n * sizeof(float));
        memcpy(ref, y.data, n * sizeof(float));
    } else {
        fprintf(stderr, "%s quantized: %s\n", model, d.msg);
    }
    glow_program_destroy(p);
    char in[600];
    snprintf(in, sizeof in, "%s/%s.in", tmp, q);
    glow_write_file(in, x.data, glow_type_bytes(&x.type), &d);
    glow_tensor_free(&x);
    CHECK(ref != NULL);
    if (!ref)
        return;
    CHECK_EQ(sh("%s compile %s --emit-bundle %s --name %s --quantize %s --per-channel "
                "--threads 2", glowc_bin, model, dir, name, prof), 0);
    CHECK_EQ(build_driver("cc", dir, name, "-DB_THREADED", ""), 0);
    snprintf(out, sizeof out, "%s/out", dir);
    CHECK_EQ(sh("%s/run %s/%s.weights.bin %s %s --threads --guard end", dir, dir, name, out,
                in), 0);
    double diff = compare(out, ref, n);
    printf("%-10s int8 bundle vs cpu backend --quantize: max relative difference %g\n", name,
           diff);
    CHECK(diff == 0);
    /* Weights: int8 and int32 biases against the float bundle's f32. */
    CHECK_EQ(sh("test $(( $(stat -c %%s %s/%s.weights.bin) * 10 )) -le "
                "$(( $(stat -c %%s %s/%s/%s.weights.bin) * 3 ))", dir, name, tmp, name, name),
             0);
    if (have("aarch64-linux-gnu-gcc") && have("qemu-aarch64")) {
        char adir[600];
        snprintf(adir, sizeof adir, "%s_arm", dir);
        CHECK_EQ(sh("%s compile %s --emit-bundle %s --name %s --quantize %s --per-channel "
                    "--target aarch64-linux-gnu", glowc_bin, model, adir, name, prof), 0);
        CHECK_EQ(build_driver("aarch64-linux-gnu-gcc -static", adir, name, "", ""), 0);
        CHECK_EQ(sh("qemu-aarch64 %s/run %s/%s.weights.bin %s %s", adir, adir, name, out, in),
                 0);
        diff = compare(out, ref, n);
        printf("%-10s int8 aarch64 bundle (qemu) vs x86-64 cpu backend: max relative "
               "difference %g\n", name, diff);
        CHECK(diff == 0);
    }
    free(ref);
}

int main(void)
{
    glowc_bin = getenv("GLOWC_BIN");
    shared = getenv("GLOWC_SHARED");
    if (!glowc_bin || !have("cc")) {
        printf("SKIP: GLOWC_BIN unset or no cc\n");
        return CHECK_DONE();
    }
    snprintf(tmp, sizeof tmp, "/tmp/glowc_bundle_XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    /* Inputs for the digit models: a real image from examples/digits/digits.bin. */
    {
        uint8_t *rec = NULL;
        size_t size = 0;
        glow_diag d = { 0 };
        CHECK(glow_read_file("examples/digits/digits.bin", &rec, &size, &d) == GLOW_OK &&
              size >= 65);
        float px[64] = { 0 };
        for (int i = 0; i < 64 && size >= 65; i++)
            px[i] = rec[1 + i] / 16.0f;
        free(rec);
        glow_type t = { .dtype = GLOW_F32, .rank = 4, .dims = { 1, 1, 8, 8 } };
        glow_tensor x = glow_tensor_borrow(&t, px);
        uint8_t *pb = NULL;
        size_t pbsize = 0;
        char path[512];
        snprintf(path, sizeof path, "%s/digit.pb", tmp);
        CHECK(glow_tensor_to_pb(&x, "image", &pb, &pbsize, &d) == GLOW_OK &&
              glow_write_file(path, pb, pbsize, &d) == GLOW_OK);
        free(pb);
    }
    char digit[512], sq_model[512], sq_input[512];
    snprintf(digit, sizeof digit, "%s/digit.pb", tmp);
    model_case cases[] = {
        { "mlp", "models/digits_mlp.onnx", digit, true, false, true },
        { "digits", "models/digits.onnx", digit, true, true, false },
        { "lenet", "models/lenet.onnx", "models/lenet_input.pb", true, true, true },
        { "squeezenet", sq_model, sq_input, true, false, false },
    };
    snprintf(sq_model, sizeof sq_model, "%s/onnx-node-tests/light/test_squeezenet/model.onnx",
             shared ? shared : "../shared");
    snprintf(sq_input, sizeof sq_input,
             "%s/onnx-node-tests/light/test_squeezenet/test_data_set_0/input_0.pb",
             shared ? shared : "../shared");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (access(cases[i].model, R_OK) != 0) {
            printf("SKIP %s: %s is missing\n", cases[i].name, cases[i].model);
            continue;
        }
        run_case(&cases[i]);
    }
    check_header("lenet");
    check_header("digits");
    check_aarch64("digits", "models/digits.onnx", digit);
    check_aarch64("lenet", "models/lenet.onnx", "models/lenet_input.pb");
    check_aarch64_cnn();
    check_winograd();
    check_quantized("lenet", "models/lenet.onnx", "models/lenet_input.pb");
    check_bad_index();

    /* An instruction without a kernel (the node suite has none left) is refused naming it:
     * tests/cpu/test_cpu_kernels_move.c, test_last_resort. */
    /* Usage errors. */
    CHECK_EQ(sh("%s compile models/lenet.onnx --emit-bundle %s/x --name 'bad name'; "
                "test $? = 1", glowc_bin, tmp), 0);
    CHECK_EQ(sh("%s compile models/lenet.onnx --emit-bundle %s/x --target mips-unknown-none; "
                "rc=$?; test $rc = 1 -o $rc = 2", glowc_bin, tmp), 0);
    /* A big-endian aarch64 is refused (little-endian kernels and weights), nothing written. */
    CHECK_EQ(sh("%s compile models/lenet.onnx --emit-bundle %s/be --target "
                "aarch64_be-linux-gnu 2>%s/be.err; rc=$?; test $rc = 2 && "
                "grep -q 'big-endian' %s/be.err && test ! -e %s/be/lenet.o", glowc_bin, tmp,
                tmp, tmp, tmp), 0);

    if (!check_failures)
        sh("rm -rf %s", tmp);
    return CHECK_DONE();
}
