// test_eval_onnx.c - Runs the ONNX backend node tests through the reference evaluator, node by
// node, and compares with the expected outputs.
//
// Each test model is imported (its inputs typed from test_data_set_0), then every node of the
// function is evaluated in order with glow_eval_node on the values computed so far. Tests
// whose graph holds a kind the evaluator does not support, or that the importer rejects, are
// skipped and counted; every other test must match ONNX's outputs (floats within rtol 1e-3 /
// atol 1e-5, NaN equal to NaN; other kinds exactly). Models the importer rejects because an
// input must be constant (axes, shapes, k) are retried with every input turned into an
// initializer, which also runs the importer's folding (and so the evaluator) on them.
// Usage: test_eval_onnx [filter-substring] [-v].
#include <stdlib.h>

#include "check.h"
#include "conformance/node_test.h"
#include "eval/eval.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "testlib/node_eval.h"

#define MAX_IO 32

/* Known differences, each with its cause; they are reported but do not fail the test. */
static const struct {
    const char *test, *why;
} known[] = {
    /* (none at present; the list ends with this terminator) */
    { NULL, NULL },
};

static const char *known_failure(const char *name)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].test && !strcmp(known[i].test, name))
            return known[i].why;
    return NULL;
}

static bool verbose;

typedef enum { R_PASS, R_SKIP_LOAD, R_SKIP_KIND, R_FAIL } result;

/* The model at `path` with the fed inputs turned into initializers holding `in`; malloc'd
 * bytes, or NULL. */
static uint8_t *constant_model(const char *path, const char *dir, int nin, size_t *size)
{
    uint8_t *data;
    size_t n;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &n, &d) != GLOW_OK)
        return NULL;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, n, data);
    free(data);
    if (!mp || !mp->graph) {
        if (mp)
            onnx__model_proto__free_unpacked(mp, NULL);
        return NULL;
    }
    Onnx__GraphProto *g = mp->graph;
    size_t ninit = g->n_initializer;
    Onnx__TensorProto **init = g->initializer;
    Onnx__TensorProto **all = calloc(ninit + MAX_IO, sizeof *all);
    Onnx__TensorProto *added[MAX_IO];
    char *old_names[MAX_IO];
    int nadded = 0;
    if (ninit)
        memcpy(all, init, ninit * sizeof *all);
    for (size_t i = 0; i < g->n_input && nadded < nin; i++) {
        bool is_init = false;
        for (size_t j = 0; j < ninit; j++)
            is_init = is_init || !strcmp(init[j]->name, g->input[i]->name);
        if (is_init)
            continue;
        char tp[2304];
        snprintf(tp, sizeof tp, "%s/test_data_set_0/input_%d.pb", dir, nadded);
        uint8_t *td;
        size_t tn;
        if (glow_read_file(tp, &td, &tn, &d) != GLOW_OK)
            break;
        Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, tn, td);
        free(td);
        if (!t)
            break;
        old_names[nadded] = t->name;
        t->name = g->input[i]->name;
        added[nadded++] = t;
        all[ninit + (size_t)nadded - 1] = t;
    }
    uint8_t *out = NULL;
    if (nadded == nin) {
        g->initializer = all;
        g->n_initializer = ninit + (size_t)nadded;
        *size = onnx__model_proto__get_packed_size(mp);
        out = malloc(*size ? *size : 1);
        onnx__model_proto__pack(mp, out);
        g->initializer = init;
        g->n_initializer = ninit;
    }
    for (int i = 0; i < nadded; i++) {
        added[i]->name = old_names[i];
        onnx__tensor_proto__free_unpacked(added[i], NULL);
    }
    free(all);
    onnx__model_proto__free_unpacked(mp, NULL);
    return out;
}


static result run_test(const char *dir, const char *name, bool as_constants,
                       const char **skip_kind)
{
    glow_tensor in[MAX_IO], want[MAX_IO];
    char why[600];
    int nin = nt_read_set(dir, "input", in, MAX_IO, why, sizeof why);
    int nwant = nt_read_set(dir, "output", want, MAX_IO, why, sizeof why);
    int nin_read = nin;
    result r = R_SKIP_LOAD;
    glow_module *m = NULL;
    glow_tensor *values[1024];
    int nvalues = 0;
    if (nin < 0 || nwant <= 0)
        goto done;
    const glow_type *types[MAX_IO];
    for (int i = 0; i < nin; i++)
        types[i] = &in[i].type;
    glow_onnx_options opt = { .input_types = types, .ninput_types = nin };
    char path[2304];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    glow_diag d = { 0 };
    m = glow_module_create();
    glow_status ls;
    if (as_constants) {
        size_t size;
        uint8_t *bytes = constant_model(path, dir, nin, &size);
        if (!bytes)
            goto done;
        ls = glow_onnx_load_bytes(m, bytes, size, NULL, &d);
        free(bytes);
        nin = 0;
    } else {
        ls = glow_onnx_load(m, path, &opt, &d);
    }
    if (ls != GLOW_OK) {
        if (verbose)
            printf("not imported %s: %.200s\n", name, d.msg);
        goto done;
    }
    glow_function *f = glow_module_function(m, "main");
    int k = 0;
    for (glow_node *p = m->placeholders.first; p; p = p->next) {
        p->aux = NULL;
        if (p->is_input && k < nin)
            p->aux = &in[k++];
    }
    if (k != nin)
        goto done;
    r = R_PASS;
    int nout = 0;
    const glow_tensor *outs[MAX_IO];
    glow_tensor trimmed[MAX_IO];
    GLOW_FOR_EACH_NODE(f, n) {
        n->aux = NULL;
        if (n->kind == NK_SAVE) {
            /* A bounded output (docs/dynamic-shapes.md) is its buffer's prefix under the
             * count saved into its hidden count placeholder. */
            const glow_node *ph = n->ins[1].node;
            if (ph->hidden || nout >= MAX_IO)
                continue;
            outs[nout] = node_eval_value(n->ins[0]);
            const glow_tensor *cnt = NULL;
            GLOW_FOR_EACH_NODE(f, c)
                if (ph->count && c->kind == NK_SAVE && c->ins[1].node == ph->count)
                    cnt = node_eval_value(c->ins[0]);
            if (outs[nout] && cnt) {
                trimmed[nout] = *outs[nout];
                trimmed[nout].type.dims[ph->count_axis] = *(const int64_t *)cnt->data;
                outs[nout] = &trimmed[nout];
            }
            nout++;
            continue;
        }
        if (!glow_eval_supported(n)) {
            *skip_kind = glow_node_kind_name(n->kind);
            r = R_SKIP_KIND;
            goto done;
        }
        glow_tensor ins[64];
        for (uint32_t i = 0; i < n->nin; i++) {
            const glow_tensor *v = node_eval_value(n->ins[i]);
            if (!v) {
                r = R_SKIP_KIND;
                *skip_kind = "(operand without a value)";
                goto done;
            }
            ins[i] = *v;
        }
        glow_tensor *res = calloc(3, sizeof *res);
        values[nvalues++] = res;
        glow_diag_clear(&d);
        glow_status s = glow_eval_node(n, ins, res, &d);
        if (s == GLOW_ERR_UNSUPPORTED) {
            *skip_kind = glow_node_kind_name(n->kind);
            r = R_SKIP_KIND;
            goto done;
        }
        if (s != GLOW_OK) {
            fprintf(stderr, "FAIL %s: %s\n", name, d.msg);
            r = R_FAIL;
            goto done;
        }
        n->aux = res;
        if (nvalues == 1024) {
            r = R_SKIP_KIND;
            *skip_kind = "(too many nodes)";
            goto done;
        }
    }
    if (nout != nwant) {
        fprintf(stderr, "FAIL %s: %d results, expected %d\n", name, nout, nwant);
        r = R_FAIL;
        goto done;
    }
    for (int i = 0; i < nout; i++) {
        char what[32];
        snprintf(what, sizeof what, "output %d", i);
        if (!outs[i] || !nt_compare(what, outs[i], &want[i], NODE_EVAL_RTOL, NODE_EVAL_ATOL, why, sizeof why)) {
            fprintf(stderr, "FAIL %s: %s: %s\n", name, what, outs[i] ? why : "missing");
            r = R_FAIL;
            break;
        }
    }
done:
    for (int i = 0; i < nvalues; i++) {
        glow_tensor_free(&values[i][0]);
        glow_tensor_free(&values[i][1]);
        glow_tensor_free(&values[i][2]);
        free(values[i]);
    }
    for (int i = 0; i < nin_read; i++)
        glow_tensor_free(&in[i]);
    for (int i = 0; i < nwant; i++)
        glow_tensor_free(&want[i]);
    if (m)
        glow_module_destroy(m);
    return r;
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = true;
        else
            filter = argv[i];
    }
    const char *root = nt_suite_dir("node");
    int count;
    char **names = nt_list_tests(root, &count);
    if (!names) {
        printf("no ONNX node tests at %s: skipped\n", root);
        return 0;
    }
    int totals[4] = { 0 };
    for (int i = 0; i < count; i++) {
        if (filter && !strstr(names[i], filter))
            continue;
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        const char *kind = "";
        result r = run_test(dir, names[i], false, &kind);
        if (r == R_SKIP_LOAD)
            r = run_test(dir, names[i], true, &kind);
        const char *why = known_failure(names[i]);
        if (r == R_FAIL && why) {
            printf("known difference %s: %s\n", names[i], why);
            r = R_SKIP_KIND;
        } else if (r == R_PASS && why) {
            printf("%s now passes: remove it from the known differences\n", names[i]);
        }
        totals[r]++;
        if (verbose && r != R_FAIL)
            printf("%s %s%s%s\n", r == R_PASS ? "pass" : "skip", names[i], *kind ? ": " : "",
                   kind);
        CHECK(r != R_FAIL);
    }
    nt_free_tests(names, count);
    printf("ONNX node tests through the evaluator: %d pass, %d fail, %d skipped (not imported), "
           "%d skipped (kind without evaluator, or a known difference)\n", totals[R_PASS],
           totals[R_FAIL], totals[R_SKIP_LOAD], totals[R_SKIP_KIND]);
    return CHECK_DONE();
}
