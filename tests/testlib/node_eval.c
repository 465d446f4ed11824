// node_eval.c - Test support: the node-suite runner of node_eval.h. Each node's results are
// kept in node->aux while the function is evaluated in order, so later nodes read them.
#include "testlib/node_eval.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/node_test.h"
#include "eval/eval.h"
#include "onnx/onnx.h"

const char *node_eval_dir(void)
{
    return nt_suite_dir("node");
}

const glow_tensor *node_eval_value(glow_value v)
{
    if (v.node->kind == NK_CONSTANT)
        return &v.node->payload;
    return v.node->aux ? &((const glow_tensor *)v.node->aux)[v.res] : NULL;
}

node_eval_result node_eval(const char *test, char *why, size_t wn)
{
    glow_tensor in[NODE_EVAL_MAX_IO], want[NODE_EVAL_MAX_IO];
    glow_tensor *res[512];
    int nres = 0;
    char dir[1400];
    snprintf(dir, sizeof dir, "%s/%s", node_eval_dir(), test);
    int nin = nt_read_set(dir, "input", in, NODE_EVAL_MAX_IO, why, wn);
    int nwant = nin < 0 ? -1 : nt_read_set(dir, "output", want, NODE_EVAL_MAX_IO, why, wn);
    node_eval_result r = NE_MISMATCH;
    glow_module *m = NULL;
    snprintf(why, wn, "no test data");
    if (nin < 0 || nwant <= 0)
        goto done;
    const glow_type *types[NODE_EVAL_MAX_IO];
    const glow_tensor *vals[NODE_EVAL_MAX_IO];
    for (int i = 0; i < nin; i++) {
        types[i] = &in[i].type;
        vals[i] = &in[i];
    }
    glow_onnx_options opt = { .input_types = types, .ninput_types = nin,
                              .input_values = vals, .ninput_values = nin };
    char path[1500];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    glow_diag d = { 0 };
    m = glow_module_create();
    if (glow_onnx_load(m, path, &opt, &d) != GLOW_OK) {
        snprintf(why, wn, "%.400s", d.msg);
        r = NE_NO_LOAD;
        goto done;
    }
    int k = 0;
    for (glow_node *p = m->placeholders.first; p; p = p->next)
        p->aux = p->is_input && k < nin ? &in[k++] : NULL;
    const glow_tensor *outs[NODE_EVAL_MAX_IO];
    int nout = 0;
    GLOW_FOR_EACH_NODE(glow_module_function(m, "main"), n) {
        n->aux = NULL;
        if (n->kind == NK_SAVE) {
            if (nout < NODE_EVAL_MAX_IO)
                outs[nout++] = node_eval_value(n->ins[0]);
            continue;
        }
        if (!glow_eval_supported(n) || n->nin > 64 || nres == 512) {
            snprintf(why, wn, "no evaluator for %s '%s'", glow_node_kind_name(n->kind), n->name);
            r = NE_NO_EVAL;
            goto done;
        }
        glow_tensor ins[64];
        for (uint32_t i = 0; i < n->nin; i++) {
            const glow_tensor *v = node_eval_value(n->ins[i]);
            if (!v) {
                snprintf(why, wn, "operand %u of '%s' has no value", i, n->name);
                goto done;
            }
            ins[i] = *v;
        }
        glow_tensor *o = calloc(3, sizeof *o);
        res[nres++] = o;
        glow_diag_clear(&d);
        if (glow_eval_node(n, ins, o, &d) != GLOW_OK) {
            snprintf(why, wn, "evaluating '%.100s': %.300s", n->name, d.msg);
            goto done;
        }
        n->aux = o;
    }
    if (nout != nwant) {
        snprintf(why, wn, "%d outputs, expected %d", nout, nwant);
        goto done;
    }
    for (int i = 0; i < nout; i++) {
        char what[32];
        snprintf(what, sizeof what, "output %d", i);
        if (!outs[i]) {
            snprintf(why, wn, "%s: missing", what);
            goto done;
        }
        if (!nt_compare(what, outs[i], &want[i], NODE_EVAL_RTOL, NODE_EVAL_ATOL, why, wn))
            goto done;
    }
    r = NE_PASS;
    snprintf(why, wn, "ok");
done:
    for (int i = 0; i < nres; i++) {
        for (int j = 0; j < 3; j++)
            glow_tensor_free(&res[i][j]);
        free(res[i]);
    }
    for (int i = 0; i < nin; i++)
        glow_tensor_free(&in[i]);
    for (int i = 0; i < nwant; i++)
        glow_tensor_free(&want[i]);
    if (m)
        glow_module_destroy(m);
    return r;
}

int node_eval_all(const char *const *names, int n, int *failed)
{
    int pass = 0;
    for (int i = 0; i < n; i++) {
        char why[600];
        node_eval_result r = node_eval(names[i], why, sizeof why);
        if (r == NE_PASS)
            pass++;
        else {
            (*failed)++;
            fprintf(stderr, "node test %s: %s\n", names[i], why);
        }
    }
    return pass;
}

bool ne_have_suite(void)
{
    DIR *dp = opendir(node_eval_dir());
    if (dp)
        closedir(dp);
    return dp != NULL;
}

ne_totals ne_run_prefixes(const char *const *prefixes, bool expanded)
{
    ne_totals t = { 0 };
    int count;
    char **names = nt_list_tests(node_eval_dir(), &count);
    static const char *const tag[] = { "pass", "not loaded", "no evaluator", "MISMATCH" };
    for (int i = 0; i < count; i++) {
        bool match = false;
        for (const char *const *p = prefixes; *p; p++)
            match = match || strncmp(names[i], *p, strlen(*p)) == 0;
        size_t len = strlen(names[i]);
        bool is_exp = len > 9 && strcmp(names[i] + len - 9, "_expanded") == 0;
        if (!match || is_exp != expanded)
            continue;
        char why[600];
        node_eval_result r = node_eval(names[i], why, sizeof why);
        /* Test data glowc cannot read (rank above GLOW_MAX_DIMS) counts as not loaded. */
        if (r == NE_MISMATCH && strcmp(why, "no test data") == 0)
            r = NE_NO_LOAD;
        if (r != NE_PASS)
            printf("  %-12s %s: %.300s\n", tag[r], names[i], why);
        t.total++;
        t.pass += r == NE_PASS;
        t.no_load += r == NE_NO_LOAD;
        t.no_eval += r == NE_NO_EVAL;
        t.mismatch += r == NE_MISMATCH;
    }
    nt_free_tests(names, count);
    return t;
}

void ne_print_totals(const char *what, ne_totals t)
{
    printf("%s: %d tests, %d pass, %d not loaded, %d without evaluator, %d mismatch\n", what,
           t.total, t.pass, t.no_load, t.no_eval, t.mismatch);
}
