// test_lower_onnx.c - Lowers the ONNX backend-suite models that use a lowerable op and checks
// that the lowered graph verifies and computes what the original graph computes (both run by
// the reference evaluator on the suite's inputs), and that lowering never moves a result
// away from the suite's expected output.
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>

#include "lower_check.h"
#include "onnx/onnx.h"

#define MAX_IO 16

/* Case-insensitive fragments of test names whose models contain a lowerable op. */
static const char *const topics[] = {
    "gemm", "linear", "batchnorm", "instancenorm", "layer_norm", "layernorm", "group_norm",
    "groupnorm", "rms_norm", "lpnorm", "softmax", "clip", "leakyrelu", "prelu", "hardsigmoid",
    "hardswish", "hardtanh", "relu6", "pad", "conv", "fc",
};
static const char *const suites[] = { "node", "simple", "pytorch-converted", "pytorch-operator" };

static int nlowered, nchecked, nexpected, nskipped;

static bool on_topic(const char *name)
{
    char low[256];
    size_t i = 0;
    for (; name[i] && i < sizeof low - 1; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = 0;
    if (strstr(low, "expanded") || strstr(low, "training"))
        return false;   /* expanded forms are primitives already; training is not inference */
    for (size_t t = 0; t < sizeof topics / sizeof topics[0]; t++)
        if (strstr(low, topics[t]))
            return true;
    return false;
}

/* Reads <dir>/test_data_set_0/<prefix>_<i>.pb for i = 0.. into ts; returns the count. */
static int read_set(const char *dir, const char *prefix, glow_tensor *ts)
{
    int n = 0;
    for (; n < MAX_IO; n++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, prefix, n);
        FILE *f = fopen(path, "rb");
        if (!f)
            break;
        fclose(f);
        glow_diag_clear(&D);
        if (glow_tensor_read_file(path, &ts[n], NULL, &D) != GLOW_OK)
            break;
    }
    return n;
}

static bool close_enough(glow_dtype dt, double a, double b, double rel, double abs_)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (a == b)
        return true;
    if (dt == GLOW_F16 || dt == GLOW_BF16) {
        rel = rel > 1e-2 ? rel : 1e-2;
        abs_ = abs_ > 1e-2 ? abs_ : 1e-2;
    }
    return fabs(a - b) <= abs_ + rel * fabs(b);
}

/* Index of the first element of a that differs from b, or -1. */
static int64_t first_diff(const glow_tensor *a, const glow_tensor *b, double rel, double abs_)
{
    if (!glow_type_same_shape(&a->type, &b->type) || a->type.dtype != b->type.dtype)
        return 0;
    int64_t n = glow_type_numel(&a->type);
    for (int64_t i = 0; i < n; i++) {
        double x = glow_load_f64(a->type.dtype, a->data, (size_t)i);
        double y = glow_load_f64(b->type.dtype, b->data, (size_t)i);
        if (!close_enough(a->type.dtype, x, y, rel, abs_))
            return i;
    }
    return -1;
}

static void free_all(glow_tensor *ts, int n)
{
    for (int i = 0; i < n; i++)
        glow_tensor_free(&ts[i]);
}

/* `evaluate` false: whole CNNs, which the reference evaluator would take too long on; they
 * are lowered and verified only. */
static void run_model(const char *dir, const char *name, bool evaluate)
{
    glow_tensor inputs[MAX_IO], expected[MAX_IO], before[MAX_IO], after[MAX_IO];
    int nin = read_set(dir, "input", inputs), nexp = read_set(dir, "output", expected);
    const glow_type *itypes[MAX_IO];
    const glow_tensor *ivals[MAX_IO];
    for (int i = 0; i < nin; i++) {
        itypes[i] = &inputs[i].type;
        ivals[i] = &inputs[i];
    }
    glow_onnx_options opt = { .input_types = itypes, .ninput_types = nin,
                              .input_values = ivals, .ninput_values = nin };
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    M = glow_module_create();
    glow_diag_clear(&D);
    if (glow_onnx_load(M, path, &opt, &D) != GLOW_OK || !(F = glow_module_function(M, "main"))) {
        nskipped++;   /* import coverage is the importer tests' business */
        goto done;
    }
    bool lowerable = false;
    for (glow_node *n = F->nodes.first; n; n = n->next)
        lowerable |= glow_lower_has_rule(n->kind);
    if (!lowerable)
        goto done;
    FEED = inputs;
    NFEED = nin;
    int nb = evaluate ? eval_function(before, MAX_IO) : -1;
    glow_diag_clear(&D);
    glow_status s = glow_lower(F, NULL, &D);
    if (s != GLOW_OK)
        fprintf(stderr, "%s: lowering failed: %s\n", name, D.msg);
    CHECK(s == GLOW_OK);
    glow_diag_clear(&D);
    s = glow_function_verify(F, &D);
    if (s != GLOW_OK)
        fprintf(stderr, "%s: lowered graph does not verify: %s\n", name, D.msg);
    CHECK(s == GLOW_OK);
    nlowered++;
    int na = evaluate ? eval_function(after, MAX_IO) : -1;
    if (nb >= 0) {
        if (na != nb)
            fprintf(stderr, "%s: the lowered graph cannot be evaluated\n", name);
        CHECK_EQ(na, nb);
        for (int o = 0; o < nb && o < na; o++) {
            int64_t i = first_diff(&after[o], &before[o], 1e-5, 1e-6);
            if (i >= 0)
                fprintf(stderr, "%s: output %d element %lld: %.9g lowered, %.9g original\n",
                        name, o, (long long)i,
                        glow_load_f64(after[o].type.dtype, after[o].data, (size_t)i),
                        glow_load_f64(before[o].type.dtype, before[o].data, (size_t)i));
            CHECK(i < 0);
        }
        nchecked++;
    }
    /* Against the suite's expected values: lowering must not break a result that the
     * original graph got right. */
    for (int o = 0; na >= 0 && o < na && o < nexp; o++) {
        bool was_right = nb > o && first_diff(&before[o], &expected[o], 1e-4, 1e-5) < 0;
        int64_t i = first_diff(&after[o], &expected[o], 1e-4, 1e-5);
        if (i >= 0 && (was_right || nb < 0))
            fprintf(stderr, "%s: output %d element %lld: %.9g lowered, %.9g expected\n", name, o,
                    (long long)i, glow_load_f64(after[o].type.dtype, after[o].data, (size_t)i),
                    glow_load_f64(expected[o].type.dtype, expected[o].data, (size_t)i));
        if (i >= 0 && !was_right && nb >= 0)
            fprintf(stderr, "%s: output %d differs from the expected values before and after "
                    "lowering (not a lowering problem)\n", name, o);
        if (was_right)
            CHECK(i < 0);
        nexpected += i < 0;
    }
    if (nb > 0)
        free_all(before, nb);
    if (na > 0)
        free_all(after, na);
done:
    FEED = NULL;
    NFEED = 0;
    free_all(inputs, nin);
    free_all(expected, nexp);
    end();
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_suite(const char *root, const char *suite, bool all, bool evaluate)
{
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/onnx-node-tests/%s", root, suite);
    DIR *dp = opendir(dir);
    if (!dp)
        return;
    char *names[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && n < 4096)
        if (!strncmp(e->d_name, "test_", 5) && (all || on_topic(e->d_name)))
            names[n++] = strdup(e->d_name);
    closedir(dp);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        char mdir[3072];
        snprintf(mdir, sizeof mdir, "%s/%s", dir, names[i]);
        run_model(mdir, names[i], evaluate);
        free(names[i]);
    }
}

int main(void)
{
    const char *root = getenv("GLOWC_SHARED");
    if (!root) {
        printf("GLOWC_SHARED not set; skipping\n");
        return 0;
    }
    QUIET = true;
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
        run_suite(root, suites[s], false, true);
    run_suite(root, "light", true, false);
    printf("lowered %d models (%d skipped at import); %d compared with the original graph, "
           "%d outputs match the expected values\n", nlowered, nskipped, nchecked, nexpected);
    CHECK(nlowered > 0);
    return CHECK_DONE();
}
