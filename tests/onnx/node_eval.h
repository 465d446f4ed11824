// node_eval.h - Runs one ONNX node-suite test through the importer and the reference evaluator
// (glow_eval_node, node by node in function order) and compares with its expected outputs.
#ifndef GLOW_TEST_NODE_EVAL_H
#define GLOW_TEST_NODE_EVAL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "onnx/onnx.h"

#define NODE_EVAL_MAX_IO 16

typedef enum {
    NE_PASS,       /* every output matches */
    NE_NO_LOAD,    /* the importer rejected the model (why: its message) */
    NE_NO_EVAL,    /* a node has no evaluator for its kinds */
    NE_MISMATCH,   /* an output differs, or evaluation failed */
} node_eval_result;

static inline const char *node_eval_dir(void)
{
    static char dir[1024];
    const char *shared = getenv("GLOWC_SHARED");
    snprintf(dir, sizeof dir, "%s/onnx-node-tests/node", shared ? shared : "../shared");
    return dir;
}

/* Reads test_data_set_0/<prefix>_<i>.pb of `test` until one is missing; -1 on a bad file. */
static inline int node_eval_read(const char *test, const char *prefix, glow_tensor *t)
{
    int n = 0;
    for (; n < NODE_EVAL_MAX_IO; n++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s/test_data_set_0/%s_%d.pb", node_eval_dir(), test,
                 prefix, n);
        FILE *f = fopen(path, "rb");
        if (!f)
            break;
        fclose(f);
        glow_diag d = { 0 };
        if (glow_tensor_read_file(path, &t[n], NULL, &d) != GLOW_OK) {
            for (int i = 0; i < n; i++)
                glow_tensor_free(&t[i]);
            return -1;
        }
    }
    return n;
}

/* Floats within rtol 1e-3 / atol 1e-5 (NaN equals NaN), everything else exactly. */
static inline bool node_eval_close(const glow_tensor *got, const glow_tensor *want, char *why,
                                   size_t wn)
{
    char a[96], b[96];
    if (got->type.dtype != want->type.dtype || !glow_type_same_shape(&got->type, &want->type)) {
        snprintf(why, wn, "result %s, expected %s", glow_type_str(&got->type, a, sizeof a),
                 glow_type_str(&want->type, b, sizeof b));
        return false;
    }
    glow_dtype t = got->type.dtype;
    int64_t n = glow_type_numel(&got->type);
    for (int64_t i = 0; i < n; i++) {
        if (glow_dtype_is_float(t)) {
            double x = glow_load_f64(t, got->data, (size_t)i);
            double y = glow_load_f64(t, want->data, (size_t)i);
            if (!((isnan(x) && isnan(y)) || x == y || fabs(x - y) <= 1e-5 + 1e-3 * fabs(y))) {
                snprintf(why, wn, "element %lld is %.9g, expected %.9g", (long long)i, x, y);
                return false;
            }
        } else {
            int64_t x = glow_load_i64(t, got->data, (size_t)i);
            int64_t y = glow_load_i64(t, want->data, (size_t)i);
            if (x != y) {
                snprintf(why, wn, "element %lld is %lld, expected %lld", (long long)i,
                         (long long)x, (long long)y);
                return false;
            }
        }
    }
    return true;
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
    int nin = node_eval_read(test, "input", in);
    int nwant = node_eval_read(test, "output", want);
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
    char path[1400];
    snprintf(path, sizeof path, "%s/%s/model.onnx", node_eval_dir(), test);
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
        char w[200];
        if (!outs[i] || !node_eval_close(outs[i], &want[i], w, sizeof w)) {
            snprintf(why, wn, "output %d: %s", i, outs[i] ? w : "missing");
            goto done;
        }
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
