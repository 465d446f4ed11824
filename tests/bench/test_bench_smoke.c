// test_bench_smoke.c - Keeps the benchmark from rotting without running it: `glowc bench` on
// the small LeNet (JSON keys, reference check, time budget, usage errors), bench/ab and
// bench/bundle_run.c (the "glowc bundle" column) on it, and a syntax check of the bench
// scripts with whatever interpreters the machine has (no torch or ORT needed).
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static const char *glowc_bin;

/* Runs a shell command, returns its exit status and (if out) its stdout, malloc'd. */
static int sh(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *grown = realloc(buf, cap * 2);
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
    }
    if (buf)
        buf[len] = '\0';
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int glowc(const char *args, char **out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", glowc_bin, args);
    return sh(cmd, out);
}

static bool have(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return sh(cmd, NULL) == 0;
}

/* The number after "key": in a flat-enough JSON text, or -1 when the key is missing. */
static double json_number(const char *json, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = json ? strstr(json, pat) : NULL;
    return p ? strtod(p + strlen(pat), NULL) : -1;
}

static void test_json(void)
{
    char *out = NULL;
    CHECK_EQ(glowc("bench models/lenet.onnx --iterations 2 --json", &out), 0);
    const char *keys[] = { "\"model\"", "\"backend\"", "\"threads\"", "\"batch\"",
                           "\"iterations\"", "\"load_ms\"", "\"compile_ms\"", "\"latency_ms\"",
                           "\"min\"", "\"median\"", "\"max\"", "\"throughput_per_s\"",
                           "\"constant_bytes\"", "\"mutable_bytes\"", "\"activation_bytes\"",
                           "\"peak_rss_bytes\"" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_CONTAINS(out, keys[i]);
    CHECK_EQ(json_number(out, "iterations"), 2);
    CHECK_EQ(json_number(out, "batch"), 1);
    CHECK(json_number(out, "constant_bytes") > 0);
    CHECK(json_number(out, "activation_bytes") > 0);
    CHECK(json_number(out, "peak_rss_bytes") > 0);
    CHECK(json_number(out, "median") > 0);
    if (have("python3") && out) {
        /* The runner parses it with a real JSON parser, so this one must accept it too. */
        char tmp[] = "/tmp/glowc_bench_XXXXXX";
        int fd = mkstemp(tmp);
        if (fd >= 0) {
            CHECK(write(fd, out, strlen(out)) == (ssize_t)strlen(out));
            close(fd);
            char cmd[512];
            snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; json.load(open(sys.argv[1]))'"
                     " %s", tmp);
            CHECK_EQ(sh(cmd, NULL), 0);
            unlink(tmp);
        }
    }
    free(out);
}

static void test_reference_and_budget(void)
{
    char *out = NULL;
    CHECK_EQ(glowc("bench models/lenet.onnx --iterations 1 --warmup 0 --json "
                   "--input models/lenet_input.pb --reference models/lenet_output.pb", &out), 0);
    CHECK_CONTAINS(out, "\"max_abs_err\"");
    CHECK_CONTAINS(out, "\"max_rel_err\"");
    double e = json_number(out, "max_abs_err");
    CHECK(e >= 0 && e < 1e-3);
    free(out);
    /* A tiny budget stops a long request early and says so. */
    CHECK_EQ(glowc("bench models/lenet.onnx --iterations 100000 --max-seconds 0.000001 --json",
                   &out), 0);
    CHECK_CONTAINS(out, "\"budget_hit\": true");
    CHECK(json_number(out, "iterations") >= 1 && json_number(out, "iterations") < 100000);
    free(out);
    CHECK_EQ(glowc("bench models/lenet.onnx --iterations 2", &out), 0);
    CHECK_CONTAINS(out, "latency");
    CHECK_CONTAINS(out, "activations");
    free(out);
}

static void test_errors(void)
{
    CHECK_EQ(glowc("bench", NULL), 1);
    CHECK_EQ(glowc("bench models/lenet.onnx --iterations 0", NULL), 1);
    CHECK_EQ(glowc("bench models/lenet.onnx --threads x", NULL), 1);
    CHECK_EQ(glowc("bench models/lenet.onnx --backend nope", NULL), 1);
    CHECK_EQ(glowc("bench models/lenet.onnx --bogus", NULL), 1);
    CHECK_EQ(glowc("bench models/no_such_model.onnx", NULL), 2);
    CHECK_EQ(glowc("bench models/lenet.onnx --reference models/no_such.pb", NULL), 2);
    CHECK_EQ(glowc("bench --help", NULL), 0);
    char *out = NULL;
    CHECK_EQ(glowc("--help", &out), 0);
    CHECK_CONTAINS(out, "bench");
    free(out);
}

/* Syntax only: the scripts import torch/onnx/onnxruntime lazily, so no peer is needed. */
static void test_scripts(void)
{
    if (have("python3")) {
        CHECK_EQ(sh("PYTHONPYCACHEPREFIX=/tmp/glowc_bench_pycache python3 -m py_compile "
                    "bench/models.py bench/export_models.py bench/torch_run.py bench/flops.py "
                    "bench/run bench/ab", NULL), 0);
    } else {
        printf("python3 not found: bench script syntax not checked\n");
    }
    if (have("node"))
        CHECK_EQ(sh("node --check bench/ort_run.js", NULL), 0);
    if (have("bash"))
        CHECK_EQ(sh("bash -n bench/setup", NULL), 0);
}

/* bench/ab end to end on LeNet: two bundles (the same glowc twice) linked into ab_driver.c and
 * run in turn; the summary names both builds and gives the second's ratio to the first. */
static void test_ab(void)
{
    if (!have("python3") || !have("cc")) {
        printf("python3 or cc not found: bench/ab not run\n");
        return;
    }
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "bench/ab models/lenet.onnx '%s' '%s' --labels base,same "
             "--rounds 3 --warmup 1 2>&1", glowc_bin, glowc_bin);
    CHECK_EQ(sh(cmd, &out), 0);
    CHECK(out && strstr(out, "lenet.onnx, 1 thread, 3 rounds"));
    CHECK(out && strstr(out, "\nbase "));
    CHECK(out && strstr(out, "\nsame ") && strstr(out, "per-run ratio to base"));
    free(out);
    snprintf(cmd, sizeof cmd, "bench/ab models/lenet.onnx '%s' --threads 2 --rounds 2 "
             "--warmup 0 '%s' 2>&1", glowc_bin, glowc_bin);
    CHECK_EQ(sh(cmd, &out), 0);
    CHECK(out && strstr(out, "lenet.onnx, 2 threads, 2 rounds"));
    free(out);
    /* One build is not a comparison: a usage error, nothing run. */
    snprintf(cmd, sizeof cmd, "bench/ab models/lenet.onnx '%s' >/dev/null 2>&1", glowc_bin);
    CHECK(sh(cmd, NULL) != 0);
}

/* Writes the last `bytes` bytes of the float TensorProto file `pb` to `dst` when they are its
 * raw_data field (tag 0x4a and the length's varint just before them): bundle_run's raw
 * input. */
static bool raw_tail(const char *pb, const char *dst, size_t bytes)
{
    FILE *f = fopen(pb, "rb");
    unsigned char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    unsigned char head[8];
    size_t h = 0;
    head[h++] = 0x4a;
    for (size_t v = bytes; h < sizeof head; v >>= 7) {
        head[h++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f)
            break;
    }
    if (n >= sizeof buf || n < bytes + h || memcmp(buf + n - bytes - h, head, h))
        return false;
    FILE *o = fopen(dst, "wb");
    bool ok = o && fwrite(buf + n - bytes, 1, bytes, o) == bytes;
    return o && !fclose(o) && ok;
}

/* bench/bundle_run.c on LeNet as bench/run builds it: the bundle compiled for 2 threads and
 * linked once for each entry; both outputs match the held-out reference, the JSON has the
 * keys bench/run reads, and an input file of the wrong size is refused. */
static void test_bundle_run(void)
{
    if (!have("cc")) {
        printf("cc not found: bench/bundle_run.c not run\n");
        return;
    }
    char dir[] = "/tmp/glowc_bundle_run_XXXXXX", cmd[4096], x[128], ref[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(x, sizeof x, "%s/x.f32", dir);
    snprintf(ref, sizeof ref, "%s/ref.f32", dir);
    CHECK(raw_tail("models/lenet_input.pb", x, 1 * 28 * 28 * 4));
    CHECK(raw_tail("models/lenet_output.pb", ref, 10 * 4));
    snprintf(cmd, sizeof cmd, "compile models/lenet.onnx --emit-bundle %s --name net --threads 2",
             dir);
    CHECK_EQ(glowc(cmd, NULL), 0);
    for (int t = 1; t <= 2; t++) {
        snprintf(cmd, sizeof cmd, "cc -O2 -std=c11 -DBR_THREADS=%d -I %s -o %s/br "
                 "bench/bundle_run.c %s/net.o -lm -lpthread", t, dir, dir, dir);
        CHECK_EQ(sh(cmd, NULL), 0);
        char *out = NULL;
        snprintf(cmd, sizeof cmd, "%s/br %s/net.weights.bin %s %s 3 1 10 12.5", dir, dir, x,
                 ref);
        CHECK_EQ(sh(cmd, &out), 0);
        double e = json_number(out, "max_rel_err");
        CHECK(e >= 0 && e < 1e-4);
        CHECK(json_number(out, "threads") == t);
        CHECK(json_number(out, "iterations") == 3);
        CHECK(json_number(out, "compile_ms") == 12.5);
        CHECK(json_number(out, "peak_rss_bytes") > 0);
        CHECK_CONTAINS(out, "\"latencies_ms\": [");
        CHECK_CONTAINS(out, "\"activation_bytes\": ");
        free(out);
    }
    snprintf(cmd, sizeof cmd, "%s/br %s/net.weights.bin %s %s 3 1 10 0 2>/dev/null", dir, dir,
             ref, ref);
    CHECK(sh(cmd, NULL) != 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd, NULL);
}

int main(void)
{
    glowc_bin = getenv("GLOWC_BIN");
    if (!glowc_bin) {
        fprintf(stderr, "GLOWC_BIN is not set (run through ctest)\n");
        return 1;
    }
    test_json();
    test_reference_and_budget();
    test_errors();
    test_scripts();
    test_ab();
    test_bundle_run();
    return CHECK_DONE();
}
