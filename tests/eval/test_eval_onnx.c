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
#include <dirent.h>
#include <stdlib.h>

#include "check.h"
#include "eval/eval.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads <dir>/<prefix>_<i>.pb for i = 0, 1, ... until one is missing. */
static int read_tensors(const char *dir, const char *prefix, glow_tensor *t)
{
    int n = 0;
    for (; n < MAX_IO; n++) {
        char path[2304];
        snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, prefix, n);
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

static const glow_tensor *value_of(glow_value v)
{
    if (v.node->kind == NK_CONSTANT)
        return &v.node->payload;
    return v.node->aux ? &((const glow_tensor *)v.node->aux)[v.res] : NULL;
}

static bool close_enough(const glow_tensor *got, const glow_tensor *want, char *why, size_t wn)
{
    char a[96], b[96];
    if (!glow_type_same_shape(&got->type, &want->type) || got->type.dtype != want->type.dtype) {
        snprintf(why, wn, "result %s, expected %s", glow_type_str(&got->type, a, sizeof a),
                 glow_type_str(&want->type, b, sizeof b));
        return false;
    }
    glow_dtype t = got->type.dtype;
    int64_t count = glow_type_numel(&got->type);
    for (int64_t i = 0; i < count; i++) {
        if (glow_dtype_is_float(t)) {
            double x = glow_load_f64(t, got->data, (size_t)i);
            double y = glow_load_f64(t, want->data, (size_t)i);
            bool ok = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= 1e-5 + 1e-3 * fabs(y);
            if (!ok) {
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
    int nin = read_tensors(dir, "input", in), nwant = read_tensors(dir, "output", want);
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
    GLOW_FOR_EACH_NODE(f, n) {
        n->aux = NULL;
        if (n->kind == NK_SAVE) {
            if (nout < MAX_IO)
                outs[nout++] = value_of(n->ins[0]);
            continue;
        }
        if (!glow_eval_supported(n)) {
            *skip_kind = glow_node_kind_name(n->kind);
            r = R_SKIP_KIND;
            goto done;
        }
        glow_tensor ins[64];
        for (uint32_t i = 0; i < n->nin; i++) {
            const glow_tensor *v = value_of(n->ins[i]);
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
        char why[256];
        if (!outs[i] || !close_enough(outs[i], &want[i], why, sizeof why)) {
            fprintf(stderr, "FAIL %s: output %d: %s\n", name, i, outs[i] ? why : "missing");
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
    const char *shared = getenv("GLOWC_SHARED");
    char root[1024];
    snprintf(root, sizeof root, "%s/onnx-node-tests/node", shared ? shared : "../shared");
    DIR *dp = opendir(root);
    if (!dp) {
        printf("no ONNX node tests at %s: skipped\n", root);
        return 0;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (strncmp(e->d_name, "test_", 5) || (filter && !strstr(e->d_name, filter)))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 256;
            names = realloc(names, cap * sizeof *names);
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(dp);
    qsort(names, count, sizeof *names, cmp_str);
    int totals[4] = { 0 };
    for (size_t i = 0; i < count; i++) {
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
        free(names[i]);
    }
    free(names);
    printf("ONNX node tests through the evaluator: %d pass, %d fail, %d skipped (not imported), "
           "%d skipped (kind without evaluator, or a known difference)\n", totals[R_PASS],
           totals[R_FAIL], totals[R_SKIP_LOAD], totals[R_SKIP_KIND]);
    return CHECK_DONE();
}
