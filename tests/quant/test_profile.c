// test_profile.c - `glowc profile` end to end on models/digits.onnx: the input's and the
// output's ranges against the samples and `glowc run`, histogram totals, byte-identical files
// across runs and thread counts, the same keys on both backends, the input folder layouts,
// and the rejection of bad inputs.
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"
#include "quant/quant.h"
#include "runtime/runtime.h"
#include "testlib/spawn.h"

#define MODEL "models/digits.onnx"
#define NSAMPLES 3
#define NUMEL 64 /* digits' input f32[1, 1, 8, 8] */

static char samples[NSAMPLES][512];
static float sample_min = INFINITY, sample_max = -INFINITY;

/* A sample with values spread over a different range each (some negative, so the first
 * Conv's result has negative elements the following Relu clears). */
static void write_sample(const char *path, int k, const float *special, int nspecial)
{
    int64_t dims[4] = { 1, 1, 8, 8 };
    glow_type ty = glow_type_make(GLOW_F32, 4, dims);
    glow_tensor t;
    glow_diag d = { 0 };
    CHECK(glow_tensor_alloc(&t, &ty, &d) == GLOW_OK);
    float *x = t.data;
    for (int i = 0; i < NUMEL; i++) {
        x[i] = (float)((k + 1) * sin(0.37 * i + k) - 0.25 * k);
        if (!special) {
            sample_min = x[i] < sample_min ? x[i] : sample_min;
            sample_max = x[i] > sample_max ? x[i] : sample_max;
        }
    }
    for (int i = 0; i < nspecial; i++)
        x[i] = special[i];
    CHECK(glow_tensor_write_pb(path, &t, "image", &d) == GLOW_OK);
    glow_tensor_free(&t);
}

/* --- the keys of the graph at the quantization point, found through the hook --- */

typedef struct probe {
    char out_key[256];   /* the value saved into the model's output */
    char conv_key[256];  /* the first Conv's result (a Relu follows it) */
} probe;

static glow_status probe_hook(glow_function *f, void *ctx, glow_diag *d)
{
    probe *pb = ctx;
    glow_profile_keys ks;
    GLOW_TRY(glow_profile_keys_make(f, &ks, d));
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        const char *k = NULL;
        if (n->kind == NK_SAVE && !strcmp(n->ins[1].node->name, "probs") && !pb->out_key[0])
            k = glow_profile_key_of(&ks, n->ins[0]);
        if (k)
            snprintf(pb->out_key, sizeof pb->out_key, "%s", k);
        k = n->kind == NK_CONV ? glow_profile_key_of(&ks, glow_val(n, 0)) : NULL;
        if (k && !pb->conv_key[0])
            snprintf(pb->conv_key, sizeof pb->conv_key, "%s", k);
    }
    glow_profile_keys_free(&ks);
    return GLOW_OK;
}

static probe find_keys(void)
{
    probe pb = { { 0 } };
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    CHECK(glow_onnx_load(m, MODEL, NULL, &d) == GLOW_OK);
    glow_compile_options o = { .stop_after = GLOW_STAGE_LOWERED, .quant_hook = probe_hook,
                               .quant_ctx = &pb };
    glow_program *p = NULL;
    CHECK(glow_program_create(m, &o, &p, &d) == GLOW_OK);
    glow_program_destroy(p);
    printf("output key '%s', conv key '%s'\n", pb.out_key, pb.conv_key);
    CHECK(pb.out_key[0] && pb.conv_key[0]);
    return pb;
}

/* --- checks --- */

static glow_profile *load(const char *path)
{
    glow_profile *pf = NULL;
    glow_diag d = { 0 };
    if (glow_profile_load(path, &pf, &d) != GLOW_OK)
        fprintf(stderr, "%s\n", d.msg);
    CHECK(pf != NULL);
    return pf;
}

static uint64_t hist_sum(const glow_profile *pf, const glow_profile_entry *e)
{
    uint64_t s = 0;
    for (int b = 0; b < pf->bins; b++)
        s += e->histogram[b];
    return s;
}

static int64_t numel_of(const char *type)
{
    const char *p = strchr(type, '[');
    int64_t n = 1;
    while (p && *p && *p != ']') {
        p++;
        n *= strtoll(p, (char **)&p, 10);
    }
    return n;
}

/* The output's range over `glowc run` of every sample on backend be. */
static void run_range(const char *be, float *lo, float *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < NSAMPLES; k++) {
        TMP(dir, "runout");
        result r = RUN("run", MODEL, samples[k], "--backend", be, "--output-dir", dir);
        CHECK_EQ(r.code, 0);
        result_free(&r);
        char out0[700];
        snprintf(out0, sizeof out0, "%s/output_0.pb", dir);
        glow_tensor t = { 0 };
        glow_diag d = { 0 };
        CHECK(glow_tensor_read_file(out0, &t, NULL, &d) == GLOW_OK);
        for (int64_t i = 0; t.data && i < glow_type_numel(&t.type); i++) {
            float v = ((float *)t.data)[i];
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
        glow_tensor_free(&t);
        remove(out0);
    }
}

static void check_profile(const char *path, const char *be, const probe *pb)
{
    glow_profile *pf = load(path);
    if (!pf)
        return;
    CHECK_EQ(pf->samples, NSAMPLES);
    CHECK_EQ(pf->bins, GLOW_PROFILE_BINS);
    CHECK_STR_EQ(pf->model, "digits.onnx");
    CHECK(pf->n > 10);
    /* The graph input's range is exactly the samples'. */
    const glow_profile_entry *in = glow_profile_find(pf, "image");
    CHECK(in != NULL);
    if (in) {
        CHECK_STR_EQ(in->type, "f32[1, 1, 8, 8]");
        CHECK(in->min == sample_min && in->max == sample_max);
        /* The smallest element lands in the first bin, the largest in the last. */
        CHECK(in->histogram[0] >= 1 && in->histogram[pf->bins - 1] >= 1);
    }
    /* Every finite element of every sample lands in exactly one bin. */
    for (int i = 0; i < pf->n; i++) {
        const glow_profile_entry *e = &pf->entries[i];
        CHECK_EQ(e->nan + e->inf, 0);
        CHECK_EQ(hist_sum(pf, e), numel_of(e->type) * NSAMPLES);
        CHECK(e->min <= e->max);
    }
    /* The output's range is what `glowc run` gives on the same backend. */
    const glow_profile_entry *out = glow_profile_find(pf, pb->out_key);
    CHECK(out != NULL);
    float lo, hi;
    run_range(be, &lo, &hi);
    printf("%s: output range [%.9g, %.9g], glowc run [%.9g, %.9g]\n", be, out ? out->min : 0,
           out ? out->max : 0, lo, hi);
    if (out && !strcmp(be, "interpreter"))
        CHECK(out->min == lo && out->max == hi);
    if (out)
        CHECK(fabsf(out->min - lo) <= 1e-6f * fabsf(lo) && fabsf(out->max - hi) <= 1e-6f * hi);
    /* No activation was fused into the Conv before its value was saved: its result still
     * has the negative elements the Relu after it clears. */
    const glow_profile_entry *conv = glow_profile_find(pf, pb->conv_key);
    CHECK(conv && conv->min < 0);
    /* The reader keeps everything: writing what it read gives the same bytes. */
    size_t len = 0, flen = 0;
    char *text = glow_profile_to_json(pf, &len);
    char *file = slurp(path, &flen);
    CHECK(len == flen && !memcmp(text, file, len));
    free(text);
    free(file);
    glow_profile_free(pf);
}

/* Same keys, types and totals on both backends; ranges equal up to rounding (the backends'
 * kernels sum in different orders, so the files differ in the last digits). */
static void check_backends_agree(const char *a, const char *b)
{
    glow_profile *x = load(a), *y = load(b);
    if (!x || !y)
        goto done;
    CHECK_EQ(x->n, y->n);
    for (int i = 0; i < x->n && i < y->n; i++) {
        const glow_profile_entry *e = &x->entries[i], *f = &y->entries[i];
        CHECK_STR_EQ(e->key, f->key);
        CHECK_STR_EQ(e->type, f->type);
        CHECK_EQ(hist_sum(x, e), hist_sum(y, f));
        float tol = 1e-4f * (fabsf(e->max) + fabsf(e->min) + 1e-30f);
        CHECK(fabsf(e->min - f->min) <= tol && fabsf(e->max - f->max) <= tol);
    }
done:
    glow_profile_free(x);
    glow_profile_free(y);
}

static void check_profiles(const probe *pb)
{
    TMP(cpu, "cpu.json");
    TMP(cpu2, "cpu2.json");
    TMP(t1, "t1.json");
    TMP(t2, "t2.json");
    TMP(in, "interp.json");
    result r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", cpu);
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "over 3 samples (cpu backend)");
    result_free(&r);
    r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "--output", cpu2);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", t1, "--threads", "1");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", t2, "--threads=2");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", in, "--backend",
            "interpreter");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK(same_file(cpu, cpu2));
    CHECK(same_file(cpu, t1));
    CHECK(same_file(cpu, t2));
    check_profile(cpu, "cpu", pb);
    check_profile(in, "interpreter", pb);
    check_backends_agree(cpu, in);
}

/* The folder forms give the same profile as the files listed one by one. */
static void check_layouts(void)
{
    TMP(ref, "ref.json");
    TMP(got, "got.json");
    TMP(setdir, "sets");
    TMP(set0, "sets/test_data_set_0");
    TMP(flat, "flat");
    TMP(empty, "empty");
    TMP(extra, "sets/test_data_set_1/input_1.pb");
    result r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", ref,
                   "--backend", "interpreter");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    /* test_data_set_0, _1, _10: natural order would matter only for -0, but each must run. */
    const char *sets[NSAMPLES] = { "sets/test_data_set_0", "sets/test_data_set_1",
                                   "sets/test_data_set_10" };
    mkdir(setdir, 0777);
    for (int k = 0; k < NSAMPLES; k++) {
        TMP(dir, sets[k]);
        mkdir(dir, 0777);
        char p[700];
        snprintf(p, sizeof p, "%s/input_0.pb", dir);
        CHECK_EQ(link(samples[k], p), 0);
    }
    r = RUN("profile", MODEL, setdir, "-o", got, "--backend", "interpreter");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK(same_file(ref, got));
    remove(got);
    /* One sample folder, then a folder of tensor files (other files are ignored). */
    mkdir(flat, 0777);
    TMP(fb, "flat/b.pb");
    TMP(fc, "flat/c.pb");
    TMP(notes, "flat/notes.txt");
    CHECK_EQ(link(samples[1], fb), 0);
    CHECK_EQ(link(samples[2], fc), 0);
    FILE *f = fopen(notes, "w");
    if (f) {
        fputs("not a tensor\n", f);
        fclose(f);
    }
    r = RUN("profile", MODEL, set0, flat, "-o", got,
            "--backend", "interpreter");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    CHECK(same_file(ref, got));
    /* An extra input file in a sample folder is an error naming it. */
    CHECK_EQ(link(samples[0], extra), 0);
    r = RUN("profile", MODEL, setdir, "-o", got);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "input_1.pb");
    CHECK_CONTAINS(r.err, "the model has 1 input");
    result_free(&r);
    /* A folder without samples. */
    mkdir(empty, 0777);
    r = RUN("profile", MODEL, empty, "-o", got);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "holds no test_data_set_* folders");
    result_free(&r);
}

/* NaN and infinities are counted apart and stay out of the range and the histogram. */
static void check_special_values(void)
{
    const float special[3] = { NAN, INFINITY, -INFINITY };
    TMP(p, "special.pb");
    TMP(out, "special.json");
    write_sample(p, 0, special, 3);
    result r = RUN("profile", MODEL, p, "-o", out, "--backend", "interpreter");
    CHECK_EQ(r.code, 0);
    result_free(&r);
    glow_profile *pf = load(out);
    const glow_profile_entry *in = pf ? glow_profile_find(pf, "image") : NULL;
    CHECK(in != NULL);
    if (in) {
        CHECK_EQ(in->nan, 1);
        CHECK_EQ(in->inf, 2);
        CHECK(isfinite(in->min) && isfinite(in->max));
        CHECK_EQ(hist_sum(pf, in), NUMEL - 3);
        /* The rest of the sample: sin(0.37 i) for i >= 3. */
        float lo = INFINITY, hi = -INFINITY;
        for (int i = 3; i < NUMEL; i++) {
            float v = (float)sin(0.37 * i);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        CHECK(in->min == lo && in->max == hi);
    }
    glow_profile_free(pf);
}

static void check_bad_inputs(void)
{
    TMP(out, "bad.json");
    TMP(bad, "bad.pb");
    TMP(nothing, "nothing.pb");
    TMP(nodir, "no/such/dir.json");
    /* A wrong shape names the sample, the input and the file; nothing is written. */
    result r = RUN("profile", MODEL, samples[0], "models/lenet_input.pb", "-o", out);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "sample 2");
    CHECK_CONTAINS(r.err, "'image'");
    CHECK_CONTAINS(r.err, "models/lenet_input.pb");
    CHECK_CONTAINS(r.err, "f32[1, 1, 28, 28]");
    CHECK_CONTAINS(r.err, "f32[1, 1, 8, 8]");
    CHECK(access(out, F_OK) != 0);
    result_free(&r);
    /* A wrong element type. */
    int64_t dims[4] = { 1, 1, 8, 8 };
    glow_type ty = glow_type_make(GLOW_F64, 4, dims);
    glow_tensor t;
    glow_diag d = { 0 };
    CHECK(glow_tensor_alloc(&t, &ty, &d) == GLOW_OK);
    CHECK(glow_tensor_write_pb(bad, &t, "image", &d) == GLOW_OK);
    glow_tensor_free(&t);
    r = RUN("profile", MODEL, bad, "-o", out);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "f64[1, 1, 8, 8]");
    CHECK_CONTAINS(r.err, "bad.pb");
    result_free(&r);
    /* Not a tensor file; a missing file. */
    r = RUN("profile", MODEL, "models/digits.onnx", "-o", out);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "'image'");
    result_free(&r);
    r = RUN("profile", MODEL, nothing, "-o", out);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "nothing.pb");
    result_free(&r);
    /* Usage: no -o, no INPUT, an unknown option; --help. */
    r = RUN("profile", MODEL, samples[0]);
    CHECK_EQ(r.code, 1);
    CHECK_CONTAINS(r.err, "-o");
    result_free(&r);
    r = RUN("profile", MODEL, "-o", out);
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = RUN("profile", MODEL, samples[0], "-o", out, "--bins", "3");
    CHECK_EQ(r.code, 1);
    result_free(&r);
    r = RUN("profile", "--help");
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "usage: glowc profile MODEL INPUT...");
    CHECK_CONTAINS(r.out, "test_data_set_*");
    result_free(&r);
    r = RUN("--help");
    CHECK_CONTAINS(r.out, "profile");
    result_free(&r);
    /* An unwritable destination: exit 3 and no file. */
    r = RUN("profile", MODEL, samples[0], "-o", nodir, "--backend",
            "interpreter");
    CHECK_EQ(r.code, 3);
    CHECK_CONTAINS(r.err, "no/such/dir.json");
    result_free(&r);
    CHECK(access(out, F_OK) != 0);
}

/* The profile in use: `run --quantize` gives the same integers on the interpreter and on the
 * cpu backend at 1 and 2 threads and the float run's prediction; a profile of another model,
 * a missing file and an unknown --keep-float kind are refused with messages naming them. */
static void check_quantized_runs(void)
{
    TMP(prof, "quant.json");
    TMP(d1, "q_interp");
    TMP(d2, "q_cpu1");
    TMP(d3, "q_cpu2");
    result r = RUN("profile", MODEL, samples[0], samples[1], samples[2], "-o", prof);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    const char *const dirs[3] = { d1, d2, d3 };
    const char *const be[3] = { "interpreter", "cpu", "cpu" };
    const char *const th[3] = { "1", "1", "2" };
    for (int i = 0; i < 3; i++) {
        r = RUN("run", MODEL, samples[1], "--quantize", prof, "--per-channel", "--backend",
                be[i], "--threads", th[i], "--output-dir", dirs[i]);
        CHECK_EQ(r.code, 0);
        result_free(&r);
    }
    TMP(o1, "q_interp/output_0.pb");
    TMP(o2, "q_cpu1/output_0.pb");
    TMP(o3, "q_cpu2/output_0.pb");
    CHECK(same_file(o1, o2));
    CHECK(same_file(o1, o3));
    result f = RUN("run", MODEL, samples[1]);
    result q = RUN("run", MODEL, samples[1], "--quantize", prof, "--schema", "symmetric",
                   "--calibration", "kl");
    const char *fa = strstr(f.out, "argmax"), *qa = strstr(q.out, "argmax");
    CHECK(fa && qa && !strncmp(fa, qa, 8));
    result_free(&f);
    result_free(&q);

    TMP(lprof, "lenet.json");
    r = RUN("profile", "models/lenet.onnx", "models/lenet_input.pb", "-o", lprof);
    CHECK_EQ(r.code, 0);
    result_free(&r);
    r = RUN("run", MODEL, samples[1], "--quantize", lprof);
    CHECK_EQ(r.code, 2);
    CHECK(strstr(r.err, lprof) && strstr(r.err, "features"));
    result_free(&r);
    TMP(none, "no_such_profile.json");
    r = RUN("run", MODEL, samples[1], "--quantize", none);
    CHECK_EQ(r.code, 2);
    CHECK(strstr(r.err, "no_such_profile.json") != NULL);
    result_free(&r);
    /* dump shows the quantized graph and, with --stats, how much of it converted. */
    r = RUN("dump", MODEL, "--stage", "lowered", "--quantize", prof, "--stats");
    CHECK_EQ(r.code, 0);
    CHECK(strstr(r.out, "ChannelwiseQuantizedConv") && strstr(r.err, "nodes converted"));
    result_free(&r);
    r = RUN("run", MODEL, samples[1], "--quantize", prof, "--keep-float", "Conv,Blur");
    CHECK_EQ(r.code, 1);
    CHECK(strstr(r.err, "Blur") != NULL);
    result_free(&r);
}

int main(void)
{
    if (!spawn_setup("glowc_test_profile"))
        return 1;
    for (int k = 0; k < NSAMPLES; k++) {
        snprintf(samples[k], sizeof samples[k], "%s/sample_%d.pb", tmpdir, k);
        write_sample(samples[k], k, NULL, 0);
    }
    printf("samples: range [%.9g, %.9g]\n", sample_min, sample_max);
    probe pb = find_keys();
    check_profiles(&pb);
    check_layouts();
    check_special_values();
    check_bad_inputs();
    check_quantized_runs();
    spawn_cleanup();
    return CHECK_DONE();
}
