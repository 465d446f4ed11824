// cmd_profile.c - `glowc profile MODEL INPUT... -o PROFILE.json`: runs a float model on sample
// inputs twice (ranges, then histograms) and writes the profile the quantizer reads, through
// the public API's profiler (glowc_profiler_*); the samples are found and checked against
// the model's declared inputs here (cli_samples.c).
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void cmd_profile_help(void)
{
    printf("usage: glowc profile MODEL INPUT... -o PROFILE.json [--backend B] [--threads N]\n"
           "                     [--define SYM=VAL]... [--no-optimize] [--stats]\n"
           "                     [--time-passes]\n"
           "\n"
           "Runs the float model MODEL on sample inputs and records, for every float value\n"
           "the quantizer sees (each graph input and node result at the quantization point),\n"
           "the exact range of its finite elements, how many were NaN or infinite, and a\n"
           "histogram of %d bins over the range. Every sample runs twice: once for the\n"
           "ranges, once for the histograms. The profile is JSON (docs/quantization.md,\n"
           "\"Profiling\"), the same bytes for the same model and samples whatever the\n"
           "thread count.\n"
           "\n"
           "Each INPUT gives samples, in order:\n"
           "  a tensor file (.pb TensorProto or .npy)   one sample of a one-input model\n"
           "  a folder of test_data_set_* folders       one sample per folder (its input_0.pb,\n"
           "                                            input_1.pb, ... in model input order)\n"
           "  a folder holding input_0.pb, ...          one sample\n"
           "  a folder of tensor files                  one sample per file (one-input model)\n"
           "Every sample must have the model's input types, and all samples the same shapes\n"
           "(the first sample fixes symbolic dims).\n"
           "\n"
           "options:\n"
           "  -o, --output FILE  where to write the profile (required; written atomically)\n",
           GLOWC_PROFILE_BINS);
    cli_model_help("threads for the backend (default: the backend's choice); the profile "
                   "does\n                     not depend on it");
    printf("  -h, --help         show this help\n"
           "\n"
           "The backend defaults to cpu. A progress line is shown on a terminal when\n"
           "profiling takes more than a second.\n"
           "\n"
           "exit status: 0 ok, 1 usage error, 2 bad or unsupported model or input (missing,\n"
           "extra, unreadable, wrong element type or shape), 3 failure while running or\n"
           "writing the profile.\n");
}

typedef struct profile_args {
    const char *path;
    const char **inputs;      /* INPUT arguments */
    int ninputs;
    const char *out;
    cli_model_opts model;
} profile_args;

static int parse_args(int argc, char **argv, profile_args *a)
{
    bool only_positional = false;
    int rc = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (!a->path)
                a->path = arg;
            else
                a->inputs[a->ninputs++] = arg;
        } else if (!strcmp(arg, "--")) {
            only_positional = true;
        } else if (cli_is_help(arg)) {
            cmd_profile_help();
            return CLI_EXIT_OK;
        } else if (cli_match_value(arg, "-o", &i, argc, argv, &val) ||
                   cli_match_value(arg, "--output", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("profile", "profile: %s needs a file name", arg);
            a->out = val;
        } else if (cli_model_match("profile", arg, &i, argc, argv, &a->model, &rc)) {
            if (rc >= 0)
                return rc;
        } else {
            return cli_usage_error("profile", "profile: unknown option '%s'", arg);
        }
    }
    if (!a->path)
        return cli_usage_error("profile", "profile: missing MODEL");
    if (!a->ninputs)
        return cli_usage_error("profile", "profile: no INPUT: give tensor files or folders "
                               "of sample inputs after MODEL");
    if (!a->out)
        return cli_usage_error("profile", "profile: missing -o PROFILE.json");
    return -1;
}

/* --- running --- */

typedef struct progress {
    bool tty, shown;
    double start, last;
} progress;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* On a terminal, after a second, rewritten at most ten times a second. */
static void show_progress(progress *pg, int pass, int i, int n)
{
    double t = now();
    if (!pg->tty || t - pg->start < 1.0 || (t - pg->last < 0.1 && i + 1 < n))
        return;
    pg->last = t;
    pg->shown = true;
    fprintf(stderr, "\rprofile: pass %d/2, sample %d/%d", pass, i + 1, n);
    fflush(stderr);
}

/* The sample's tensors as the API's values (dims in shapes[], GLOW_MAX_DIMS an input). */
static void values_of(const glow_tensor *t, int n, glowc_value *v, int64_t *shapes)
{
    for (int i = 0; i < n; i++) {
        int64_t *shape = shapes + (size_t)i * GLOW_MAX_DIMS;
        for (int d = 0; d < t[i].type.rank; d++)
            shape[d] = t[i].type.dims[d];
        /* The public element types are numbered as ONNX's. */
        v[i] = (glowc_value){ NULL, (glowc_dtype)glow_dtype_to_onnx(t[i].type.dtype),
                              t[i].type.rank, shape, t[i].data, glow_type_bytes(&t[i].type) };
    }
}

static int run_passes(const profile_args *a, const cli_sample_list *l, glowc_profiler *pr,
                      const glow_type *first, glow_tensor *tensors)
{
    int n = (int)l->v.len, ni = l->s->ninputs;
    glowc_value *v = calloc((size_t)ni + 1, sizeof *v);
    int64_t *shapes = calloc((size_t)ni * GLOW_MAX_DIMS + 1, sizeof *shapes);
    progress pg = { .tty = isatty(2), .start = now() };
    int rc = v && shapes ? -1 : CLI_EXIT_RUN_FAILED;
    for (int pass = 1; pass <= 2 && rc < 0; pass++) {
        glowc_profiler_begin_pass(pr, pass);
        for (int i = 0; i < n && rc < 0; i++) {
            rc = cli_samples_read(&a->model, l, i, first, tensors);
            if (rc < 0)
                values_of(tensors, ni, v, shapes);
            if (rc < 0 && glowc_profiler_run(pr, v, ni) != GLOWC_OK) {
                cli_error("profile: %s: sample %d ('%s'): %s", a->path, i + 1,
                          l->v.data[i].label, glowc_last_error());
                rc = CLI_EXIT_RUN_FAILED;
            }
            if (rc < 0)
                show_progress(&pg, pass, i, n);
            cli_tensors_free(tensors, ni);
        }
    }
    if (pg.shown)
        fputc('\n', stderr);
    free(v);
    free(shapes);
    return rc;
}

/* Compiles the model with the profiler's hook for the types of the first sample (read
 * again: its data is needed for nothing but the types). */
static int compile(const profile_args *a, const cli_sample_list *l, glowc_profiler *pr,
                   glow_tensor *tensors)
{
    int ni = l->s->ninputs;
    glowc_value *v = calloc((size_t)ni + 1, sizeof *v);
    int64_t *shapes = calloc((size_t)ni * GLOW_MAX_DIMS + 1, sizeof *shapes);
    int rc = v && shapes ? cli_samples_read(&a->model, l, 0, NULL, tensors) : CLI_EXIT_RUN_FAILED;
    if (rc < 0) {
        values_of(tensors, ni, v, shapes);
        glowc_status st = glowc_profiler_compile(pr, v, ni);
        if (st != GLOWC_OK)
            rc = cli_api_model_error(a->path, st);
        cli_tensors_free(tensors, ni);
    }
    free(v);
    free(shapes);
    return rc;
}

static int profile(const profile_args *a, const cli_sample_list *l)
{
    int ni = l->s->ninputs, n = (int)l->v.len;
    glow_tensor *tensors = glow_xcalloc((size_t)ni + 1, sizeof *tensors);
    glow_type *first = glow_xcalloc((size_t)ni + 1, sizeof *first);
    /* Every sample is checked before anything runs, so a bad file late in a long list
     * fails at once. */
    int rc = cli_samples_read(&a->model, l, 0, NULL, tensors);
    for (int i = 0; i < ni && rc < 0; i++)
        first[i] = tensors[i].type;
    cli_tensors_free(tensors, ni);
    for (int i = 1; i < n && rc < 0; i++) {
        rc = cli_samples_read(&a->model, l, i, first, tensors);
        cli_tensors_free(tensors, ni);
    }
    glowc_options *opt = rc < 0 ? cli_api_options(&a->model) : NULL;
    glowc_profiler *pr = NULL;
    if (rc < 0 && (!opt || glowc_profiler_create(opt, a->path, &pr) != GLOWC_OK)) {
        cli_error("profile: out of memory");
        rc = CLI_EXIT_RUN_FAILED;
    }
    if (rc < 0)
        rc = compile(a, l, pr, tensors);
    if (rc < 0)
        rc = run_passes(a, l, pr, first, tensors);
    if (rc < 0 && glowc_profiler_finish(pr) != GLOWC_OK) {
        cli_error("%s: %s", a->path, glowc_last_error());
        rc = CLI_EXIT_RUN_FAILED;
    }
    if (rc < 0 && glowc_profiler_write(pr, a->out) != GLOWC_OK) {
        cli_error("profile: %s", glowc_last_error());
        rc = CLI_EXIT_RUN_FAILED;
    }
    if (rc < 0) {
        printf("profile '%s': %d values of %s over %d sample%s (%s backend)\n", a->out,
               glowc_profiler_value_count(pr), a->path, n, n == 1 ? "" : "s",
               a->model.backend);
        rc = CLI_EXIT_OK;
    }
    glowc_profiler_destroy(pr);
    glowc_options_destroy(opt);
    free(first);
    free(tensors);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    profile_args a = { 0 };
    a.inputs = calloc((size_t)argc + 1, sizeof *a.inputs);
    bool ok = cli_model_init(&a.model, argc, "cpu");
    int rc = a.inputs && ok ? parse_args(argc, argv, &a) : CLI_EXIT_RUN_FAILED;
    glow_arena arena = { 0 };
    glow_onnx_summary s = { 0 };
    cli_sample_list l = { .s = &s, .cmd = "profile" };
    if (rc < 0) {
        glow_diag d = { 0 };
        if (glow_onnx_summarize(a.path, &arena, &s, &d) != GLOW_OK)
            rc = cli_model_error(a.path, &d);
    }
    for (int i = 0; i < s.ninputs && rc < 0; i++) {
        if (strchr(s.inputs[i].type_str, '(')) {
            cli_error("profile: input '%s' is %s, which glowc cannot feed (only tensors)",
                      s.inputs[i].name, s.inputs[i].type_str);
            rc = CLI_EXIT_BAD_MODEL;
        }
    }
    for (int i = 0; i < a.ninputs && rc < 0; i++)
        rc = cli_samples_collect(&l, a.inputs[i]);
    if (rc < 0 && !l.v.len) {
        cli_error("profile: no samples in the inputs given");
        rc = CLI_EXIT_BAD_MODEL;
    }
    if (rc < 0)
        rc = profile(&a, &l);
    cli_samples_free(&l);
    glow_arena_release(&arena);
    free(a.inputs);
    cli_model_free(&a.model);
    return rc;
}
