// test_lower_onnx.c - Lowers the ONNX backend-suite models that use a lowerable op and checks
// that the lowered graph verifies and computes what the original graph computes (both run by
// the reference evaluator on the suite's inputs), and that lowering never moves a result
// away from the suite's expected output.
#include <ctype.h>
#include <stdlib.h>

#include "conformance/node_test.h"
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

/* Whether `a` matches `b` within rel/abs_ (widened to 1e-2 for f16 and bf16), by
 * node_test's rule; `why` names the worst element otherwise. */
static bool matches(const char *what, const glow_tensor *a, const glow_tensor *b, double rel,
                    double abs_, char *why, size_t wn)
{
    if (a->type.dtype == GLOW_F16 || a->type.dtype == GLOW_BF16) {
        rel = rel > 1e-2 ? rel : 1e-2;
        abs_ = abs_ > 1e-2 ? abs_ : 1e-2;
    }
    return nt_compare(what, a, b, rel, abs_, why, wn);
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
    int nin = nt_read_prefix(dir, "input", inputs, MAX_IO);
    int nexp = nt_read_prefix(dir, "output", expected, MAX_IO);
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
            char why[300];
            bool same = matches("lowered output", &after[o], &before[o], 1e-5, 1e-6, why,
                                sizeof why);
            if (!same)
                fprintf(stderr, "%s: output %d, against the original graph: %s\n", name, o, why);
            CHECK(same);
        }
        nchecked++;
    }
    /* Against the suite's expected values: lowering must not break a result that the
     * original graph got right. */
    for (int o = 0; na >= 0 && o < na && o < nexp; o++) {
        char why[300];
        bool was_right = nb > o && matches("original output", &before[o], &expected[o], 1e-4,
                                           1e-5, why, sizeof why);
        bool right = matches("lowered output", &after[o], &expected[o], 1e-4, 1e-5, why,
                             sizeof why);
        if (!right && (was_right || nb < 0))
            fprintf(stderr, "%s: output %d, against the expected values: %s\n", name, o, why);
        if (!right && !was_right && nb >= 0)
            fprintf(stderr, "%s: output %d differs from the expected values before and after "
                    "lowering (not a lowering problem)\n", name, o);
        if (was_right)
            CHECK(right);
        nexpected += right;
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

static void run_suite(const char *suite, bool all, bool evaluate)
{
    const char *dir = nt_suite_dir(suite);
    int n;
    char **names = nt_list_tests(dir, &n);
    for (int i = 0; i < n; i++) {
        if (!all && !on_topic(names[i]))
            continue;
        char mdir[3072];
        snprintf(mdir, sizeof mdir, "%s/%s", dir, names[i]);
        run_model(mdir, names[i], evaluate);
    }
    nt_free_tests(names, n);
}

int main(void)
{
    if (!getenv("GLOWC_SHARED")) {
        printf("GLOWC_SHARED not set; skipping\n");
        return 0;
    }
    QUIET = true;
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++)
        run_suite(suites[s], false, true);
    run_suite("light", true, false);
    printf("lowered %d models (%d skipped at import); %d compared with the original graph, "
           "%d outputs match the expected values\n", nlowered, nskipped, nchecked, nexpected);
    CHECK(nlowered > 0);
    return CHECK_DONE();
}
