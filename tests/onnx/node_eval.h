// node_eval.h - Runs one ONNX node-suite test through the importer and the reference evaluator
// (glow_eval_node, node by node in function order) and compares with its expected outputs
// (test folder and comparison: conformance/node_test.h).
#ifndef GLOW_TEST_NODE_EVAL_H
#define GLOW_TEST_NODE_EVAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/node_test.h"
#include "graph/graph.h"
#include "onnx/onnx.h"
#include "eval/eval.h"

#define NODE_EVAL_MAX_IO 16

typedef enum {
    NE_PASS,       /* every output matches */
    NE_NO_LOAD,    /* the importer rejected the model (why: its message) */
    NE_NO_EVAL,    /* a node has no evaluator for its kinds */
    NE_MISMATCH,   /* an output differs, or evaluation failed */
} node_eval_result;

/* This runner's tolerances, tighter in atol than ONNX's default for the suite's small values. */
#define NODE_EVAL_RTOL 1e-3
#define NODE_EVAL_ATOL 1e-5

static inline const char *node_eval_dir(void)
{
    return nt_suite_dir("node");
}

static inline const glow_tensor *node_eval_value(glow_value v)
{
    if (v.node->kind == NK_CONSTANT)
        return &v.node->payload;
    return v.node->aux ? &((const glow_tensor *)v.node->aux)[v.res] : NULL;
}

/* Imports node/<test> with its fed inputs typed and valued from test_data_set_0 (so loaders
 * that need an input constant get it), evaluates the function and compares. `why` receives
 * the reason for anything but NE_PASS. */
static inline node_eval_result node_eval(const char *test, char *why, size_t wn)
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

/* Runs every test of `names` expecting NE_PASS; prints failures; returns the pass count. */
static inline int node_eval_all(const char *const *names, int n, int *failed)
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

#endif
