// cmd_bench.c - `glowc bench MODEL`: compile time, latency over repeated runs, throughput,
// planned memory, the JIT's own memory and peak RSS of a model on one backend, as text or JSON. A client of the
// public API: the model is a session (specialized to the --input files when given), timed
// through glowc_session_run, its figures from glowc_session_get_info; --devices is a host
// (cmd_bench_host.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"

void cmd_bench_help(void)
{
    printf("usage: glowc bench MODEL [--backend B] [--threads N] [--define SYM=VAL]...\n"
           "                         [--no-optimize] [--stats] [--time-passes]\n"
           "                         [--iterations K] [--warmup W] [--max-seconds S]\n"
           "                         [--input FILE]... [--reference FILE] [--json]\n"
           "       glowc bench MODEL --devices SPEC [--clients K] [--iterations K]\n"
           "                         [--warmup W] [--define SYM=VAL]... [--no-optimize] [--json]\n"
           "\n"
           "Compiles the ONNX model MODEL for a backend and runs it repeatedly, reporting\n"
           "load and compile time, latency (min/median/max over the timed runs, after the\n"
           "warm-up runs), throughput, the planned memory regions, the JIT's own memory\n"
           "(its machine code, and what code generation left resident) and the peak RSS.\n"
           "\n"
           "options:\n");
    cli_model_help("threads for the backend (default: the backend's choice)");
    cli_quant_help();
    printf("  --iterations K     timed runs (default 10)\n"
           "  --warmup W         untimed runs first (default 1)\n"
           "  --max-seconds S    stop timing once S seconds of runs are spent (at least one\n"
           "                     timed run is always made); the report says how many ran\n"
           "  --input FILE       an input tensor (.pb or .npy), in model input order;\n"
           "                     repeatable. Without it, inputs are filled with fixed\n"
           "                     pseudo-random values in [-1, 1]\n"
           "  --reference FILE   compare output 0 of the last run with this tensor and report\n"
           "                     the max absolute and max relative error\n"
           "  --devices SPEC     run on a host of devices instead (the public API's\n"
           "                     glowc_host): BACKEND[:CAPACITY][:tTHREADS],..., e.g.\n"
           "                     cpu:t1,cpu:t1; the model is placed whole on each device\n"
           "                     with room (or partitioned), --clients threads run\n"
           "                     --iterations requests (after --warmup), and the report is\n"
           "                     requests/s with the host's latency statistics\n"
           "  --clients K        client threads with --devices (default: one per device)\n"
           "  --json             print one JSON object instead of text\n"
           "  -h, --help         show this help\n"
           "\n"
           "exit status: 0 ok, 1 usage error, 2 bad or unsupported model or input,\n"
           "             3 failure while running.\n");
}

typedef struct bench_args {
    const char *path;
    cli_model_opts model;   /* --backend, --threads, --define, ... */
    int iterations, warmup;
    double max_seconds;
    const char **inputs;
    int ninputs;
    const char *reference;
    bool json;
    const char *devices;    /* --devices SPEC: on a host (cmd_bench_host.c) */
    int clients;            /* --clients K with --devices; 0: one per device */
} bench_args;

typedef struct bench_result {
    double load_ms, compile_ms;
    bool code_cached;         /* the machine code came from --cache */
    double *lat_ms;         /* timed runs, in run order */
    double *sorted;         /* the same, ascending */
    int nruns;
    bool budget_hit;
    int fallbacks;          /* instructions the backend runs through the evaluator */
    bool checked;
    double max_abs, max_rel;
    uint64_t constant, mutable_, activation; /* planned region sizes, bytes */
    uint64_t code, codegen_anon, codegen_file; /* the JIT's own memory (glowc_session_info) */
    long long peak_rss;     /* bytes */
    int64_t batch;
} bench_result;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool parse_int(const char *val, int lo, int hi, int *out)
{
    char *end = NULL;
    long n = val && val[0] ? strtol(val, &end, 10) : lo - 1L;
    if (!val || !val[0] || *end || n < lo || n > hi)
        return false;
    *out = (int)n;
    return true;
}

/* Returns -1 when parsing succeeded, otherwise the exit code to return at once. */
static int parse_args(int argc, char **argv, bench_args *a)
{
    int rc = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->path)
                return cli_usage_error("bench", "bench: more than one MODEL ('%s' and '%s'); "
                                       "inputs go after --input", a->path, arg);
            a->path = arg;
        } else if (cli_is_help(arg)) {
            cmd_bench_help();
            return CLI_EXIT_OK;
        } else if (!strcmp(arg, "--json")) {
            a->json = true;
        } else if (cli_model_match("bench", arg, &i, argc, argv, &a->model, &rc)) {
            if (rc >= 0)
                return rc;
        } else if (cli_match_value(arg, "--iterations", &i, argc, argv, &val)) {
            if (!parse_int(val, 1, 1000000, &a->iterations))
                return cli_usage_error("bench", "bench: --iterations wants a number from 1 "
                                       "to 1000000, got '%s'", val ? val : "");
        } else if (cli_match_value(arg, "--warmup", &i, argc, argv, &val)) {
            if (!parse_int(val, 0, 1000000, &a->warmup))
                return cli_usage_error("bench", "bench: --warmup wants a number from 0 to "
                                       "1000000, got '%s'", val ? val : "");
        } else if (cli_match_value(arg, "--max-seconds", &i, argc, argv, &val)) {
            char *end = NULL;
            double s = val && val[0] ? strtod(val, &end) : -1;
            if (!val || !val[0] || *end || !(s > 0))
                return cli_usage_error("bench", "bench: --max-seconds wants a positive number, "
                                       "got '%s'", val ? val : "");
            a->max_seconds = s;
        } else if (cli_match_value(arg, "--input", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("bench", "bench: --input needs a file");
            a->inputs[a->ninputs++] = val;
        } else if (cli_match_value(arg, "--devices", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("bench", "bench: --devices needs a device list such "
                                       "as cpu:t1,cpu:t1");
            a->devices = val;
        } else if (cli_match_value(arg, "--clients", &i, argc, argv, &val)) {
            if (!parse_int(val, 1, 256, &a->clients))
                return cli_usage_error("bench", "bench: --clients wants a number from 1 to "
                                       "256, got '%s'", val ? val : "");
        } else if (cli_match_value(arg, "--reference", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("bench", "bench: --reference needs a file");
            a->reference = val;
        } else {
            return cli_usage_error("bench", "bench: unknown option '%s'", arg);
        }
    }
    if (!a->path)
        return cli_usage_error("bench", "bench: missing MODEL");
    if (a->clients && !a->devices)
        return cli_usage_error("bench", "bench: --clients needs --devices");
    if (a->devices && (a->ninputs || a->reference || a->model.threads || a->model.stats ||
                       a->model.time_passes))
        return cli_usage_error("bench", "bench: --devices takes none of --input, --reference, "
                               "--threads (threads are per device: cpu:t2), --stats, "
                               "--time-passes");
    return -1;
}

/* --devices: the host's benchmark, with one client per device unless told. */
static int bench_host(const bench_args *a)
{
    int ndev = 1;
    for (const char *c = a->devices; *c; c++)
        ndev += *c == ',';
    cli_bench_host_opts o = { .path = a->path, .devices = a->devices,
                              .clients = a->clients ? a->clients : ndev,
                              .requests = a->iterations, .warmup = a->warmup,
                              .model = &a->model, .json = a->json };
    return cli_bench_host(&o);
}

/* The public element type's internal one, and a tensor type of the given dims. */
static glow_type type_of(glowc_dtype dt, int rank, const int64_t *shape)
{
    glow_type t = { .rank = rank };
    /* The public element types are numbered as ONNX's. */
    glow_dtype_from_onnx((int)dt, &t.dtype);
    for (int d = 0; d < rank; d++)
        t.dims[d] = shape[d];
    return t;
}

/* Fixed pseudo-random fill so runs without --input are repeatable and not all zeros (zeros
 * would let a backend skip work or hide NaN paths). */
static void fill_pseudo_random(const glowc_tensor_info *info, void *data, uint64_t seed)
{
    /* Strings: numbers' spellings, which every string op takes (Cast to a number too). */
    static const char *const words[] = { "0.5", "-1.25", "3", "42", "1e3", "0" };
    glow_type t = type_of(info->dtype, info->rank, info->shape);
    if (info->dtype == GLOWC_DTYPE_STRING) {
        for (int64_t i = 0; i < glow_type_numel(&t); i++)
            ((const char **)data)[i] = words[(uint64_t)(i + (int64_t)seed) % 6];
        return;
    }
    /* The low-bit types take a byte an element here, which the pipeline's packed stores do
     * not write: those stay zero. */
    if (glow_type_bytes(&t) != info->size_bytes)
        return;
    int64_t n = glow_type_numel(&t);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    bool is_float = glow_dtype_is_float(t.dtype);
    for (int64_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double u = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
        glow_store_f64(t.dtype, data, (size_t)i, is_float ? 2 * u - 1 : 0);
    }
}

/* Reads the --input files; returns -1 on success or the exit code. */
static int read_inputs(const bench_args *a, glowc_tensor **files)
{
    for (int i = 0; i < a->ninputs; i++) {
        if (glowc_tensor_read_file(a->inputs[i], &files[i]) != GLOWC_OK) {
            cli_error("bench: input %d: %s", i, glowc_last_error());
            return CLI_EXIT_BAD_MODEL;
        }
    }
    return -1;
}

static int compare_reference(const bench_args *a, const glowc_session *s, const void *out0,
                             bench_result *r)
{
    glowc_tensor *ref = NULL;
    if (glowc_tensor_read_file(a->reference, &ref) != GLOWC_OK) {
        cli_error("bench: reference: %s", glowc_last_error());
        return CLI_EXIT_BAD_MODEL;
    }
    glow_type rt = type_of(glowc_tensor_dtype(ref), glowc_tensor_rank(ref),
                           glowc_tensor_shape(ref)), ot = rt;
    glowc_tensor_info info;
    bool has_out = glowc_session_output_info(s, 0, &info) == GLOWC_OK;
    if (has_out)
        ot = type_of(info.dtype, info.rank, info.shape);
    int rc = -1;
    if (!has_out || glow_type_numel(&ot) != glow_type_numel(&rt)) {
        char a1[128], b1[128];
        cli_error("bench: reference '%s' is %s, output 0 is %s", a->reference,
                  glow_type_str(&rt, a1, sizeof a1),
                  has_out ? glow_type_str(&ot, b1, sizeof b1) : "missing");
        rc = CLI_EXIT_BAD_MODEL;
    } else {
        int64_t n = glow_type_numel(&rt);
        double max_abs = 0, max_ref = 0;
        for (int64_t i = 0; i < n; i++) {
            double x = glow_load_f64(ot.dtype, out0, (size_t)i);
            double y = glow_load_f64(rt.dtype, glowc_tensor_data(ref), (size_t)i);
            double e = fabs(x - y);
            if (e != e || e > max_abs)
                max_abs = e == e ? e : INFINITY;
            if (fabs(y) > max_ref)
                max_ref = fabs(y);
        }
        /* Relative to the reference's largest magnitude: elementwise relative error explodes
         * on logits near zero and says nothing about the model. */
        r->checked = true;
        r->max_abs = max_abs;
        r->max_rel = max_ref > 0 ? max_abs / max_ref : max_abs;
    }
    glowc_tensor_destroy(ref);
    return rc;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Buffers for every input (the files, or pseudo-random values) and output of s; -1 or the
 * exit code. Outputs are bound by name, *nout of them: string outputs are left out, since a
 * caller's buffer cannot hold strings (glowc.h), and still run. */
static int make_values(const bench_args *a, const glowc_session *s, glowc_tensor **files,
                       glowc_value *in, glowc_value *out, void **owned, int *nout)
{
    *nout = 0;
    int ni = glowc_session_input_count(s), no = glowc_session_output_count(s);
    for (int i = 0; i < ni + no; i++) {
        glowc_tensor_info info;
        if (i < ni && a->ninputs) {
            in[i] = glowc_tensor_value(files[i]);
            continue;
        }
        if (i < ni ? glowc_session_input_info(s, i, &info)
                   : glowc_session_output_info(s, i - ni, &info)) {
            cli_error("bench: %s: %s", a->path, glowc_last_error());
            return CLI_EXIT_RUN_FAILED;
        }
        if (i >= ni && info.dtype == GLOWC_DTYPE_STRING)
            continue;
        /* 64-byte aligned, as a program's own buffers, so copies run at full speed. */
        size_t bytes = (info.size_bytes + 63) / 64 * 64;
        if (!(owned[i] = aligned_alloc(64, bytes ? bytes : 64))) {
            cli_error("bench: cannot allocate %zu bytes for %s '%s'", info.size_bytes,
                      i < ni ? "input" : "output", info.name);
            return CLI_EXIT_RUN_FAILED;
        }
        memset(owned[i], 0, bytes ? bytes : 64);
        if (i < ni) {
            fill_pseudo_random(&info, owned[i], (uint64_t)i + 1);
            in[i] = (glowc_value){ NULL, info.dtype, info.rank, info.shape, owned[i],
                                   info.size_bytes };
        } else {
            out[(*nout)++] = (glowc_value){ info.name, GLOWC_DTYPE_UNDEFINED, 0, NULL,
                                            owned[i], info.size_bytes };
        }
    }
    return -1;
}

/* Warm-up and timed runs of glowc_session_run. */
static int time_runs(const bench_args *a, glowc_session *s, const glowc_value *in,
                     glowc_value *out, int no, bench_result *r)
{
    int ni = glowc_session_input_count(s);
    double spent = 0;
    for (int k = 0; k < a->warmup + a->iterations; k++) {
        double t0 = now_ms();
        if (glowc_session_run(s, in, ni, out, no) != GLOWC_OK) {
            cli_error("bench: %s: %s", a->path, glowc_last_error());
            return CLI_EXIT_RUN_FAILED;
        }
        double ms = now_ms() - t0;
        if (k >= a->warmup)
            r->lat_ms[r->nruns++] = ms;
        spent += ms;
        /* Warm-up past the budget: go straight to the one timed run still owed. */
        if (a->max_seconds > 0 && spent >= a->max_seconds * 1e3 && k + 1 < a->warmup)
            k = a->warmup - 1;
        /* The budget covers the warm-up too: a slow backend must not hold a sweep hostage. */
        if (a->max_seconds > 0 && spent >= a->max_seconds * 1e3 && r->nruns > 0 &&
            k + 1 < a->warmup + a->iterations) {
            r->budget_hit = true;
            break;
        }
    }
    return -1;
}

/* Loads and compiles a session (specialized to the --input files when given), runs
 * warm-up and timed iterations. */
static int bench_model(const bench_args *a, glowc_tensor **files, bench_result *r)
{
    glowc_options *opt = cli_api_options(&a->model);
    glowc_value *given = calloc((size_t)a->ninputs + 1, sizeof *given);
    if (!opt || !given) {
        glowc_options_destroy(opt);
        free(given);
        cli_error("bench: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    for (int i = 0; i < a->ninputs; i++)
        given[i] = glowc_tensor_value(files[i]);
    glowc_session *s = NULL;
    glowc_status st = a->ninputs
                          ? glowc_session_create_for_inputs(opt, a->path, given, a->ninputs, &s)
                          : glowc_session_create(opt, a->path, &s);
    glowc_options_destroy(opt);
    free(given);
    if (st != GLOWC_OK)
        return cli_api_model_error(a->path, st);
    glowc_session_info si;
    glowc_session_get_info(s, &si);
    r->load_ms = si.load_ms;
    r->compile_ms = si.compile_ms;
    r->fallbacks = si.fallbacks;
    r->code_cached = si.code_cached;
    int ni = glowc_session_input_count(s), no = glowc_session_output_count(s), rc = -1;
    if (a->ninputs && a->ninputs != ni) {
        cli_error("bench: %s has %d input%s, %d given", a->path, ni, ni == 1 ? "" : "s",
                  a->ninputs);
        rc = CLI_EXIT_BAD_MODEL;
    }
    glowc_value *in = calloc((size_t)ni + 1, sizeof *in);
    glowc_value *out = calloc((size_t)no + 1, sizeof *out);
    void **owned = calloc((size_t)(ni + no) + 1, sizeof *owned);
    r->lat_ms = calloc((size_t)a->iterations + 1, sizeof *r->lat_ms);
    r->sorted = calloc((size_t)a->iterations + 1, sizeof *r->sorted);
    if (rc < 0 && (!in || !out || !owned || !r->lat_ms || !r->sorted)) {
        cli_error("bench: cannot allocate %d latency samples", a->iterations);
        rc = CLI_EXIT_RUN_FAILED;
    }
    int bound = 0;
    if (rc < 0)
        rc = make_values(a, s, files, in, out, owned, &bound);
    glowc_tensor_info in0;
    if (rc < 0 && ni > 0 && glowc_session_input_info(s, 0, &in0) == GLOWC_OK && in0.rank > 0)
        r->batch = in0.shape[0];
    if (rc < 0)
        rc = time_runs(a, s, in, out, bound, r);
    glowc_tensor_info out0;
    if (rc < 0 && a->reference && no > 0 && glowc_session_output_info(s, 0, &out0) == GLOWC_OK &&
        out0.dtype == GLOWC_DTYPE_STRING) {
        cli_error("bench: --reference compares numbers; output 0 '%s' is string", out0.name);
        rc = CLI_EXIT_BAD_MODEL;
    }
    if (rc < 0 && a->reference)
        rc = compare_reference(a, s, no > 0 ? out[0].data : NULL, r);
    if (rc < 0) {
        r->constant = si.constant_bytes;
        r->mutable_ = si.mutable_bytes;
        r->activation = si.activation_bytes;
        r->code = si.code_bytes;
        r->codegen_anon = si.codegen_anon_bytes;
        r->codegen_file = si.codegen_file_bytes;
        memcpy(r->sorted, r->lat_ms, (size_t)r->nruns * sizeof *r->sorted);
        qsort(r->sorted, (size_t)r->nruns, sizeof *r->sorted, cmp_double);
    }
    for (int i = 0; owned && i < ni + no; i++)
        free(owned[i]);
    free(owned);
    free(in);
    free(out);
    glowc_session_destroy(s);
    return rc;
}

static double median(const double *v, int n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* JSON numbers: NaN and infinity are not JSON, so they become null. */
static void json_num(const char *key, double v, const char *sep)
{
    if (isfinite(v))
        printf("  \"%s\": %.6g%s\n", key, v, sep);
    else
        printf("  \"%s\": null%s\n", key, sep);
}

static void json_string(const char *s)
{
    putchar('"');
    glow_escape_put(stdout, s, GLOW_ESC_JSON);   /* JSON must be valid UTF-8 */
    putchar('"');
}

static void print_json(const bench_args *a, const bench_result *r)
{
    int n = r->nruns;
    double med = median(r->sorted, n);
    printf("{\n  \"model\": ");
    json_string(a->path);
    printf(",\n  \"backend\": ");
    json_string(a->model.backend);
    printf(",\n  \"threads\": %d,\n  \"batch\": %lld,\n  \"fallbacks\": %d,\n",
           a->model.threads, (long long)r->batch, r->fallbacks);
    printf("  \"warmup\": %d,\n  \"iterations\": %d,\n  \"budget_hit\": %s,\n", a->warmup,
           n, r->budget_hit ? "true" : "false");
    json_num("load_ms", r->load_ms, ",");
    json_num("compile_ms", r->compile_ms, ",");
    printf("  \"code_cached\": %s,\n", r->code_cached ? "true" : "false");
    printf("  \"latency_ms\": {\"min\": %.6g, \"median\": %.6g, \"max\": %.6g},\n",
           r->sorted[0], med, r->sorted[n - 1]);
    printf("  \"latencies_ms\": [");
    for (int i = 0; i < n; i++)
        printf("%s%.6g", i ? ", " : "", r->lat_ms[i]);
    printf("],\n");
    json_num("throughput_per_s", med > 0 ? (double)(r->batch > 0 ? r->batch : 1) * 1e3 / med
                                         : NAN, ",");
    printf("  \"memory\": {\"constant_bytes\": %llu, \"mutable_bytes\": %llu, "
           "\"activation_bytes\": %llu},\n", (unsigned long long)r->constant,
           (unsigned long long)r->mutable_, (unsigned long long)r->activation);
    printf("  \"jit\": {\"code_bytes\": %llu, \"codegen_anon_bytes\": %llu, "
           "\"codegen_file_bytes\": %llu},\n", (unsigned long long)r->code,
           (unsigned long long)r->codegen_anon, (unsigned long long)r->codegen_file);
    printf("  \"peak_rss_bytes\": %lld", r->peak_rss);
    if (r->checked) {
        printf(",\n  \"check\": {\"max_abs_err\": ");
        isfinite(r->max_abs) ? printf("%.6g", r->max_abs) : printf("null");
        printf(", \"max_rel_err\": ");
        isfinite(r->max_rel) ? printf("%.6g", r->max_rel) : printf("null");
        printf("}");
    }
    printf("\n}\n");
}

static void print_text(const bench_args *a, const bench_result *r)
{
    int n = r->nruns;
    double med = median(r->sorted, n);
    printf("model       %s\n", a->path);
    printf("backend     %s, threads %d, batch %lld", a->model.backend, a->model.threads,
           (long long)r->batch);
    if (r->fallbacks)
        printf(", %d instruction%s through the evaluator", r->fallbacks,
               r->fallbacks == 1 ? "" : "s");
    printf("\n");
    printf("load        %.3f ms\ncompile     %.3f ms%s\n", r->load_ms, r->compile_ms,
           r->code_cached ? " (machine code from the cache)" : "");
    printf("latency     min %.3f  median %.3f  max %.3f ms over %d run%s after %d warm-up%s\n",
           r->sorted[0], med, r->sorted[n - 1], n, n == 1 ? "" : "s", a->warmup,
           r->budget_hit ? " (time budget reached)" : "");
    printf("throughput  %.3f inferences/s\n",
           med > 0 ? (double)(r->batch > 0 ? r->batch : 1) * 1e3 / med : 0.0);
    printf("memory      constant %.3f MiB, mutable %.3f MiB, activations %.3f MiB\n",
           (double)r->constant / 1048576, (double)r->mutable_ / 1048576,
           (double)r->activation / 1048576);
    /* Beside the regions, what compiling keeps: with the regions, most of the peak RSS. */
    printf("jit         code %.3f MiB; code generation kept %.3f MiB anonymous, %.3f MiB of "
           "file pages\n", (double)r->code / 1048576, (double)r->codegen_anon / 1048576,
           (double)r->codegen_file / 1048576);
    printf("peak RSS    %.3f MiB\n", (double)r->peak_rss / 1048576);
    if (r->checked)
        printf("vs reference  max abs error %.3g, max rel error %.3g\n", r->max_abs, r->max_rel);
}

/* Peak RSS of this process in bytes. VmHWM belongs to this program's address space, while
 * getrusage's ru_maxrss keeps the high-water mark of whatever process exec'd us (a Python
 * harness would add its own tens of MiB), so it is only the fallback. */
static long long peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmHWM:", 6)) {
            kib = strtoll(line + 6, NULL, 10);
            break;
        }
    }
    if (f)
        fclose(f);
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss; /* Linux reports KiB */
    }
    return kib * 1024;
}

int cmd_bench(int argc, char **argv)
{
    bench_args a = { .iterations = 10, .warmup = 1 };
    bench_result r = { 0 };
    a.inputs = calloc((size_t)argc + 1, sizeof *a.inputs);
    bool ok = cli_model_init(&a.model, argc, "interpreter");
    int rc = a.inputs && ok ? parse_args(argc, argv, &a) : CLI_EXIT_RUN_FAILED;
    if (rc < 0 && a.devices) {
        rc = bench_host(&a);
        free(a.inputs);
        cli_model_free(&a.model);
        return rc;
    }
    glowc_tensor **files = rc < 0 ? calloc((size_t)a.ninputs + 1, sizeof *files) : NULL;
    if (rc < 0)
        rc = read_inputs(&a, files);
    if (rc < 0)
        rc = bench_model(&a, files, &r);
    if (rc < 0) {
        r.peak_rss = peak_rss_bytes();
        a.json ? print_json(&a, &r) : print_text(&a, &r);
        rc = fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_RUN_FAILED;
        if (rc != CLI_EXIT_OK)
            cli_error("bench: cannot write the report");
    }
    for (int i = 0; files && i < a.ninputs; i++)
        glowc_tensor_destroy(files[i]);
    free(files);
    free(r.lat_ms);
    free(r.sorted);
    free(a.inputs);
    cli_model_free(&a.model);
    return rc;
}
