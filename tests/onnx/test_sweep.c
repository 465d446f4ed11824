// test_sweep.c - Loads every model of the ONNX backend test suites and reports what loads.
//
// Each model must either load (and then verify) or fail cleanly: GLOW_ERR_UNSUPPORTED or
// GLOW_ERR_PARSE with a message that names an op, node or input of the model. Any other
// outcome is an importer bug and fails the test. How many models load is a figure printed
// per suite, not a gate, so the test keeps passing while op coverage grows; the aggregated
// failure reasons show where coverage is missing.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "conformance/node_test.h"
#include "onnx/onnx.h"
#include "testlib/files.h"

static const char *const suites[] = { "node", "simple", "pytorch-converted", "pytorch-operator",
                                      "light" };
#define NSUITES (sizeof suites / sizeof suites[0])
#define MAX_INPUTS 64
#define MAX_REASONS 2048
#define TOP_REASONS 40

typedef struct reason {
    char key[160];
    char example_test[128];
    char example_msg[200];
    int count;
} reason;

static reason reasons[MAX_REASONS];
static int nreasons;

typedef struct slow_model {
    char name[160];
    double seconds;
} slow_model;
static slow_model slowest[5];

static void add_reason(const char *key, const char *test, const char *msg)
{
    for (int i = 0; i < nreasons; i++) {
        if (!strcmp(reasons[i].key, key)) {
            reasons[i].count++;
            return;
        }
    }
    if (nreasons == MAX_REASONS)
        return;
    reason *r = &reasons[nreasons++];
    snprintf(r->key, sizeof r->key, "%s", key);
    snprintf(r->example_test, sizeof r->example_test, "%s", test);
    /* First line only: the examples must stay one line each. */
    size_t len = strcspn(msg, "\n");
    snprintf(r->example_msg, sizeof r->example_msg, "%.*s", (int)len, msg);
    r->count = 1;
}

static int cmp_reason(const void *pa, const void *pb)
{
    const reason *a = pa, *b = pb;
    if (a->count != b->count)
        return b->count - a->count;
    return strcmp(a->key, b->key);
}

/* True when `msg` mentions `word` as a whole identifier (so "Add" does not match "Padd"). */
static bool mentions(const char *msg, const char *word)
{
    size_t n = strlen(word);
    if (n == 0)
        return false;
    for (const char *p = strstr(msg, word); p; p = strstr(p + 1, word)) {
        bool left_ok = p == msg || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                     (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                     (p[-1] >= '0' && p[-1] <= '9'));
        char c = p[n];
        bool right_ok = !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9'));
        if (left_ok && right_ok)
            return true;
    }
    return false;
}

/* Classifies a failed load: aggregates it under the op it concerns, and returns whether the
 * message names something of the model (an op, an input/output, or a quoted name). */
static bool record_failure(const char *model, const char *test, const glow_diag *d)
{
    glow_arena a = { 0 };
    glow_onnx_summary s;
    glow_diag sd = { 0 };
    const char *msg = d->msg;
    const char *status = glow_status_name(d->status);
    char key[160];
    bool named = strchr(msg, '\'') != NULL;

    if (glow_onnx_summarize(model, &a, &s, &sd) != GLOW_OK) {
        snprintf(key, sizeof key, "%s: (model not summarizable)", status);
        add_reason(key, test, msg);
        glow_arena_release(&a);
        return named;
    }
    bool keyed = false;
    for (int i = 0; i < s.nops; i++) {
        if (mentions(msg, s.ops[i].op_type))
            named = true;
        if (d->status == GLOW_ERR_UNSUPPORTED && !s.ops[i].supported) {
            snprintf(key, sizeof key, "unsupported op: %s%s%s", s.ops[i].domain,
                     s.ops[i].domain[0] ? ":" : "", s.ops[i].op_type);
            add_reason(key, test, msg);
            keyed = true;
        }
    }
    for (int i = 0; i < s.ninputs; i++)
        named |= mentions(msg, s.inputs[i].name);
    for (int i = 0; i < s.noutputs; i++)
        named |= mentions(msg, s.outputs[i].name);
    if (!keyed) {
        /* A supported op failed: key by the (most frequent) op the message names. */
        const char *op = "(no op named)";
        for (int i = 0; i < s.nops; i++) {
            if (mentions(msg, s.ops[i].op_type)) {
                op = s.ops[i].op_type;
                break;
            }
        }
        if (strcmp(op, "(no op named)") != 0) {
            snprintf(key, sizeof key, "%s: %s", status, op);
        } else {
            /* Model-level problems (element kinds, ranks): group by the message's words with
             * the quoted names blanked, so "input 'x' has rank 7" and "input 'y' has rank 7"
             * fall together. */
            char shape[72];
            size_t k = 0;
            bool quoted = false;
            for (const char *p = msg; *p && *p != '\n' && k + 1 < sizeof shape; p++) {
                if (*p == '\'')
                    quoted = !quoted;
                else if (quoted)
                    continue;
                shape[k++] = *p;
            }
            shape[k] = '\0';
            snprintf(key, sizeof key, "%s: %s", status, shape);
        }
        add_reason(key, test, msg);
    }
    glow_arena_release(&a);
    return named;
}

static void note_time(const char *name, double seconds)
{
    int k = 4;
    if (seconds <= slowest[k].seconds)
        return;
    while (k > 0 && slowest[k - 1].seconds < seconds) {
        slowest[k] = slowest[k - 1];
        k--;
    }
    snprintf(slowest[k].name, sizeof slowest[k].name, "%s", name);
    slowest[k].seconds = seconds;
}

/* Writes the per-suite figures to importer_sweep.txt in the build tree (beside the tests/
 * folder holding this program), so scripts can track coverage without parsing test logs. */
static void write_figures(char summary[][128], size_t n, int total_loaded, int total)
{
    char dir[4096], exe[4200];
    if (!program_dir(dir, sizeof dir))
        return;
    snprintf(exe, sizeof exe, "%s/../importer_sweep.txt", dir);
    FILE *f = fopen(exe, "w");
    if (!f)
        return;
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s\n", summary[k]);
    fprintf(f, "total: %d/%d load\n", total_loaded, total);
    fclose(f);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Loads one test's model with the input types of its data set; returns false on a dirty
 * failure (reported on stderr). */
static bool sweep_one(const char *suite, const char *dir, const char *test, int *loaded)
{
    char model[4096], path[4096];
    snprintf(model, sizeof model, "%s/%s/model.onnx", dir, test);

    /* The data set's tensors fix the input types, so symbolic dims resolve as a runner's
     * would. Sequence inputs are not TensorProtos: their entry stays NULL. */
    glow_type types[MAX_INPUTS];
    const glow_type *type_ptrs[MAX_INPUTS];
    int ntypes = 0;
    for (int i = 0; i < MAX_INPUTS; i++) {
        snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_%d.pb", dir, test, i);
        if (access(path, R_OK) != 0)
            break;
        glow_tensor t = { 0 };
        glow_diag td = { 0 };
        type_ptrs[i] = NULL;
        if (glow_tensor_read_file(path, &t, NULL, &td) == GLOW_OK) {
            types[i] = t.type;
            type_ptrs[i] = &types[i];
            glow_tensor_free(&t);
        }
        ntypes = i + 1;
    }
    glow_onnx_options opt = { .input_types = type_ptrs, .ninput_types = ntypes };

    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    double t0 = now();
    glow_status s = glow_onnx_load(m, model, &opt, &d);
    double dt = now() - t0;
    char name[160];
    snprintf(name, sizeof name, "%s/%s", suite, test);
    note_time(name, dt);

    bool clean = true;
    if (s == GLOW_OK) {
        glow_diag vd = { 0 };
        if (glow_module_verify(m, &vd) != GLOW_OK) {
            fprintf(stderr, "BUG %s: loads but does not verify: %s\n", name, vd.msg);
            clean = false;
        } else {
            ++*loaded;
        }
    } else if (s != d.status || d.len == 0 || d.msg[0] == '\0') {
        fprintf(stderr, "BUG %s: status %s with an empty message or a diag status of %s\n",
                name, glow_status_name(s), glow_status_name(d.status));
        clean = false;
    } else {
        bool named = record_failure(model, name, &d);
        if (s != GLOW_ERR_UNSUPPORTED && s != GLOW_ERR_PARSE) {
            fprintf(stderr, "BUG %s: a valid model fails with %s: %s\n", name,
                    glow_status_name(s), d.msg);
            clean = false;
        } else if (!named) {
            fprintf(stderr, "BUG %s: the message names nothing of the model: %s\n", name,
                    d.msg);
            clean = false;
        }
    }
    glow_module_destroy(m);
    return clean;
}

int main(void)
{
    int total = 0, total_loaded = 0, dirty = 0;
    double t0 = now();
    char summary[NSUITES][128];

    for (size_t k = 0; k < NSUITES; k++) {
        char dir[2048];
        snprintf(dir, sizeof dir, "%s", nt_suite_dir(suites[k]));
        int n = 0, loaded = 0;
        char **tests = nt_list_tests(dir, &n);
        CHECK(n > 0); /* a missing suite is a broken setup, not a figure */
        if (n == 0)
            fprintf(stderr, "no tests under %s\n", dir);
        for (int i = 0; i < n; i++)
            if (!sweep_one(suites[k], dir, tests[i], &loaded))
                dirty++;
        nt_free_tests(tests, n);
        snprintf(summary[k], sizeof summary[k], "%s: %d/%d load", suites[k], loaded, n);
        printf("%s\n", summary[k]);
        fflush(stdout);
        total += n;
        total_loaded += loaded;
    }

    qsort(reasons, (size_t)nreasons, sizeof *reasons, cmp_reason);
    printf("\nfailure reasons (top %d of %d):\n", TOP_REASONS, nreasons);
    for (int i = 0; i < nreasons && i < TOP_REASONS; i++)
        printf("  %4d  %s\n        e.g. %s: %s\n", reasons[i].count, reasons[i].key,
               reasons[i].example_test, reasons[i].example_msg);
    printf("\nslowest loads:\n");
    for (int i = 0; i < 5 && slowest[i].seconds > 0; i++)
        printf("  %7.3f s  %s\n", slowest[i].seconds, slowest[i].name);

    printf("\n");
    for (size_t k = 0; k < NSUITES; k++)
        printf("%s\n", summary[k]);
    printf("total: %d/%d load, %d unclean failures, %.1f s\n", total_loaded, total, dirty,
           now() - t0);
    write_figures(summary, NSUITES, total_loaded, total);
    CHECK_EQ(dirty, 0);
    return CHECK_DONE();
}
