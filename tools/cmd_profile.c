// cmd_profile.c - `glowc profile MODEL INPUT... -o PROFILE.json`: runs a float model on sample
// inputs twice (ranges, then histograms) and writes the profile the quantizer reads.
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

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
           GLOW_PROFILE_BINS);
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

/* --- samples --- */

/* One sample: a file per model input, and what to call it in messages. */
typedef struct sample {
    char *label;
    char **files;
} sample;

typedef struct sample_list {
    GLOW_VEC(sample) v;
    const glow_onnx_summary *s;
} sample_list;

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = glow_xmalloc(n);
    snprintf(p, n, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    return p;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Names in natural order: runs of digits compare as numbers (test_data_set_2 before _10). */
static int natural(const char *a, const char *b)
{
    while (*a && *b) {
        if (digit(*a) && digit(*b)) {
            while (*a == '0' && digit(a[1]))
                a++;
            while (*b == '0' && digit(b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (digit(a[la]))
                la++;
            while (digit(b[lb]))
                lb++;
            if (la != lb)
                return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c)
                return c;
            a += la;
            b += lb;
        } else if (*a != *b) {
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        } else {
            a++;
            b++;
        }
    }
    return *a ? 1 : *b ? -1 : 0;
}

/* Natural order, then plain order where it ties ("1" and "01"), so the order is total. */
static int cmp_names(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    int c = natural(a, b);
    return c ? c : strcmp(a, b);
}

/* The sorted entry names of a folder (hidden ones left out); NULL with a message on error. */
static char **list_dir(const char *dir, int *count)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        cli_error("profile: cannot read the folder '%s': %s", dir, strerror(errno));
        return NULL;
    }
    GLOW_VEC(char *) names = { 0 };
    for (struct dirent *e; (e = readdir(dp));)
        if (e->d_name[0] != '.')
            GLOW_VEC_PUSH(names, strdup(e->d_name));
    closedir(dp);
    GLOW_VEC_PUSH(names, NULL);
    qsort(names.data, names.len - 1, sizeof(char *), cmp_names);
    *count = (int)names.len - 1;
    return names.data;
}

static void free_names(char **names)
{
    for (int i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

static void add_sample(sample_list *l, char *label, char **files)
{
    GLOW_VEC_PUSH(l->v, ((sample){ label, files }));
}

/* A folder holding input_0.pb, input_1.pb, ... (or .npy): one sample. */
static int add_sample_dir(sample_list *l, const char *dir)
{
    int n = l->s->ninputs;
    char **files = glow_xcalloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i <= n; i++) {
        char name[64], *found = NULL;
        static const char *const exts[] = { "pb", "npy" };
        for (int k = 0; k < 2 && !found; k++) {
            snprintf(name, sizeof name, "input_%d.%s", i, exts[k]);
            char *p = join(dir, name);
            if (access(p, F_OK) == 0)
                found = p;
            else
                free(p);
        }
        if (i < n && !found) {
            cli_error("profile: '%s' has no input_%d.pb for model input %d '%s' (%s)", dir, i,
                      i, l->s->inputs[i].name, l->s->inputs[i].type_str);
        } else if (i == n && found) {
            cli_error("profile: '%s' has '%s', but the model has %d input%s", dir, found, n,
                      n == 1 ? "" : "s");
            free(found);
            found = NULL;
        } else {
            if (i < n)
                files[i] = found;
            continue;
        }
        for (int k = 0; k < n; k++)
            free(files[k]);
        free(files);
        return CLI_EXIT_BAD_MODEL;
    }
    add_sample(l, strdup(dir), files);
    return -1;
}

/* One tensor file as the sample of a one-input model. */
static int add_sample_file(sample_list *l, const char *path)
{
    if (l->s->ninputs != 1) {
        cli_error("profile: '%s' is one tensor file, but the model has %d inputs: give a "
                  "folder with input_0.pb ... input_%d.pb per sample", path, l->s->ninputs,
                  l->s->ninputs - 1);
        return CLI_EXIT_BAD_MODEL;
    }
    char **files = glow_xcalloc(2, sizeof(char *));
    files[0] = strdup(path);
    add_sample(l, strdup(path), files);
    return -1;
}

static int collect(sample_list *l, const char *input)
{
    if (!is_dir(input)) {
        if (access(input, R_OK) != 0) {
            cli_error("profile: cannot read the input '%s': %s", input, strerror(errno));
            return CLI_EXIT_BAD_MODEL;
        }
        return add_sample_file(l, input);
    }
    int count = 0, rc = -1, sets = 0, tensors = 0;
    char **names = list_dir(input, &count);
    if (!names)
        return CLI_EXIT_BAD_MODEL;
    bool own = false;
    for (int i = 0; i < count; i++) {
        own |= !strcmp(names[i], "input_0.pb") || !strcmp(names[i], "input_0.npy");
        tensors += ends_with(names[i], ".pb") || ends_with(names[i], ".npy");
    }
    for (int i = 0; i < count && rc < 0; i++) {
        char *p = join(input, names[i]);
        if (!strncmp(names[i], "test_data_set_", 14) && is_dir(p)) {
            sets++;
            rc = add_sample_dir(l, p);
        }
        free(p);
    }
    if (rc < 0 && !sets && own) {
        rc = add_sample_dir(l, input);
    } else if (rc < 0 && !sets) {
        for (int i = 0; i < count && rc < 0; i++) {
            char *p = join(input, names[i]);
            if ((ends_with(names[i], ".pb") || ends_with(names[i], ".npy")) && !is_dir(p))
                rc = add_sample_file(l, p);
            free(p);
        }
        if (rc < 0 && !tensors) {
            cli_error("profile: the folder '%s' holds no test_data_set_* folders, no "
                      "input_0.pb and no tensor files (.pb, .npy)", input);
            rc = CLI_EXIT_BAD_MODEL;
        }
    }
    free_names(names);
    return rc;
}

static void free_samples(sample_list *l)
{
    for (size_t i = 0; i < l->v.len; i++) {
        for (int k = 0; l->v.data[i].files && k < l->s->ninputs; k++)
            free(l->v.data[i].files[k]);
        free(l->v.data[i].files);
        free(l->v.data[i].label);
    }
    GLOW_VEC_FREE(l->v);
}

/* --- checking inputs --- */

/* The --define value of the symbol (len chars at sym), or 0. */
static int64_t define_value(const cli_model_opts *o, const char *sym, size_t len)
{
    for (int i = 0; i < o->ndefines; i++)
        if (!strncmp(o->defines[i], sym, len) && o->defines[i][len] == '=')
            return strtoll(o->defines[i] + len + 1, NULL, 10);
    return 0;
}

/* True when t fits the declared type text ("f32[N, 3]", "f32[...]", "?" element type):
 * same element type and rank, equal fixed dims, and symbolic dims as --define fixes them. */
static bool fits(const cli_model_opts *o, const char *decl, const glow_type *t)
{
    const char *br = strchr(decl, '[');
    size_t dlen = br ? (size_t)(br - decl) : strlen(decl);
    const char *dt = glow_dtype_name(t->dtype);
    bool any = (dlen == 1 && decl[0] == '?') || (dlen == 9 && !strncmp(decl, "undefined", 9));
    if (!any && (strlen(dt) != dlen || strncmp(decl, dt, dlen)))
        return false;
    if (!br || !strcmp(br, "[...]"))
        return true;
    int k = 0;
    for (const char *p = br + 1; *p && *p != ']';) {
        size_t n = strcspn(p, ",]");
        if (k >= t->rank)
            return false;
        int64_t have = t->dims[k++];
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p + n ? v != have : define_value(o, p, n) && define_value(o, p, n) != have)
            return false;
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return k == t->rank;
}

/* Reads sample `si` into tensors (model order), checking each against the model's declared
 * input and the first sample's type (first: NULL for the first sample). */
static int read_sample(const profile_args *a, const sample_list *l, int si,
                       const glow_type *first, glow_tensor *tensors)
{
    const sample *sm = &l->v.data[si];
    for (int i = 0; i < l->s->ninputs; i++) {
        const glow_onnx_io *in = &l->s->inputs[i];
        glow_diag d = { 0 };
        if (glow_tensor_read_file(sm->files[i], &tensors[i], NULL, &d) != GLOW_OK) {
            cli_error("profile: sample %d, input %d '%s': %s", si + 1, i, in->name, d.msg);
            return CLI_EXIT_BAD_MODEL;
        }
        char have[128], want[128];
        glow_type_str(&tensors[i].type, have, sizeof have);
        if (!fits(&a->model, in->type_str, &tensors[i].type)) {
            cli_error("profile: sample %d: input %d '%s' is %s (file '%s'), the model expects "
                      "%s", si + 1, i, in->name, have, sm->files[i], in->type_str);
            return CLI_EXIT_BAD_MODEL;
        }
        if (first && !glow_type_equal(&tensors[i].type, &first[i])) {
            cli_error("profile: sample %d: input %d '%s' is %s (file '%s'), the first sample's "
                      "is %s: one compiled program runs every sample, so all must have the "
                      "same shapes", si + 1, i, in->name, have, sm->files[i],
                      glow_type_str(&first[i], want, sizeof want));
            return CLI_EXIT_BAD_MODEL;
        }
    }
    return -1;
}

static void free_tensors(glow_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        glow_tensor_free(&t[i]);
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

/* Compiles the model with the profiler's hook, for the types of the first sample. */
static int compile(const profile_args *a, const glow_type *types, int ninputs,
                   glow_profiler *pr, glow_program **out)
{
    const glow_type **tp = glow_xcalloc((size_t)ninputs + 1, sizeof *tp);
    for (int i = 0; i < ninputs; i++)
        tp[i] = &types[i];
    /* Types only, no values: a model whose shapes depend on input values cannot be profiled
     * over samples that differ in them. */
    glow_onnx_options opt = { .defines = a->model.defines, .ndefines = a->model.ndefines,
                              .input_types = tp, .ninput_types = ninputs };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    int rc = -1;
    if (glow_onnx_load(m, a->path, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        rc = cli_model_error(a->path, &d);
    } else {
        glow_opt_options oo;
        glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED,
                                      .quant_hook = glow_profiler_hook, .quant_ctx = pr };
        cli_model_options(&a->model, &oo, &copt);
        if (glow_program_create(m, &copt, out, &d) != GLOW_OK)
            rc = cli_model_error(a->path, &d);
        else if (glow_profiler_bind(pr, *out, &d) != GLOW_OK)
            rc = cli_model_error(a->path, &d);
        else if (a->model.stats)
            cli_model_report_fallbacks(*out, stderr);
    }
    free(tp);
    return rc;
}

static int run_passes(const profile_args *a, const sample_list *l, glow_program *p,
                      glow_profiler *pr, const glow_type *first, glow_tensor *tensors)
{
    int n = (int)l->v.len, ni = l->s->ninputs;
    progress pg = { .tty = isatty(2), .start = now() };
    int rc = -1;
    for (int pass = 1; pass <= 2 && rc < 0; pass++) {
        glow_profiler_begin_pass(pr, pass);
        for (int i = 0; i < n && rc < 0; i++) {
            rc = read_sample(a, l, i, first, tensors);
            glow_diag d = { 0 };
            if (rc < 0 && glow_program_run(p, tensors, ni, &d) != GLOW_OK) {
                cli_error("profile: %s: sample %d ('%s'): %s", a->path, i + 1,
                          l->v.data[i].label, d.len ? d.msg : glow_status_name(d.status));
                rc = CLI_EXIT_RUN_FAILED;
            }
            if (rc < 0) {
                glow_profiler_observe(pr, tensors);
                show_progress(&pg, pass, i, n);
            }
            free_tensors(tensors, ni);
        }
    }
    if (pg.shown)
        fputc('\n', stderr);
    return rc;
}

static int profile(const profile_args *a, const sample_list *l)
{
    int ni = l->s->ninputs, n = (int)l->v.len;
    glow_tensor *tensors = glow_xcalloc((size_t)ni + 1, sizeof *tensors);
    glow_type *first = glow_xcalloc((size_t)ni + 1, sizeof *first);
    /* Every sample is checked before anything runs, so a bad file late in a long list
     * fails at once. */
    int rc = read_sample(a, l, 0, NULL, tensors);
    for (int i = 0; i < ni && rc < 0; i++)
        first[i] = tensors[i].type;
    free_tensors(tensors, ni);
    for (int i = 1; i < n && rc < 0; i++) {
        rc = read_sample(a, l, i, first, tensors);
        free_tensors(tensors, ni);
    }
    glow_profiler *pr = glow_profiler_create(a->path, GLOW_PROFILE_BINS);
    glow_program *p = NULL;
    if (rc < 0)
        rc = compile(a, first, ni, pr, &p);
    if (rc < 0)
        rc = run_passes(a, l, p, pr, first, tensors);
    const glow_profile *pf = NULL;
    glow_diag d = { 0 };
    if (rc < 0 && glow_profiler_finish(pr, &pf, &d) != GLOW_OK) {
        cli_error("%s: %s", a->path, d.msg);
        rc = CLI_EXIT_RUN_FAILED;
    }
    if (rc < 0 && glow_profile_write(pf, a->out, &d) != GLOW_OK) {
        cli_error("profile: %s", d.msg);
        rc = CLI_EXIT_RUN_FAILED;
    }
    if (rc < 0) {
        printf("profile '%s': %d values of %s over %d sample%s (%s backend)\n", a->out,
               glow_profiler_nkeys(pr), a->path, n, n == 1 ? "" : "s", p->backend->name);
        rc = CLI_EXIT_OK;
    }
    glow_program_destroy(p);
    glow_profiler_destroy(pr);
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
    sample_list l = { .s = &s };
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
        rc = collect(&l, a.inputs[i]);
    if (rc < 0 && !l.v.len) {
        cli_error("profile: no samples in the inputs given");
        rc = CLI_EXIT_BAD_MODEL;
    }
    if (rc < 0)
        rc = profile(&a, &l);
    free_samples(&l);
    glow_arena_release(&arena);
    free(a.inputs);
    cli_model_free(&a.model);
    return rc;
}
