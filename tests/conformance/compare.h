// compare.h - Runs one ONNX backend test directory through the compile pipeline and compares
// its outputs by ONNX's rules; the conformance driver calls it in a forked child.
#ifndef GLOW_TEST_COMPARE_H
#define GLOW_TEST_COMPARE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "runtime/runtime.h"

#define CONF_MAX_IO 64
#define CONF_REASON 480

/* ONNX's defaults (onnx/backend/test/loader), overridden by a test dir's data.json. */
static void read_tolerances(const char *dir, double *rtol, double *atol)
{
    *rtol = 1e-3;
    *atol = 1e-7;
    char path[4096];
    snprintf(path, sizeof path, "%s/data.json", dir);
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &size, &d) != GLOW_OK)
        return;
    const char *s = (const char *)data, *p;
    if ((p = strstr(s, "\"rtol\"")) && (p = strchr(p, ':')))
        *rtol = strtod(p + 1, NULL);
    if ((p = strstr(s, "\"atol\"")) && (p = strchr(p, ':')))
        *atol = strtod(p + 1, NULL);
    free(data);
}

/* A one-line reason from a library message: "model uses 2 unsupported ops: If (opset 13; node
 * 'a'), Loop (...)" becomes "unsupported: If (opset 13), Loop (opset 16)"; other messages keep
 * their first line behind `prefix`. */
static void shorten(char *out, size_t size, const char *prefix, const char *msg)
{
    const char *p = msg;
    bool ops = strncmp(msg, "model uses ", 11) == 0 && strstr(msg, ": ");
    if (ops) {
        prefix = "unsupported: ";
        p = strstr(msg, ": ") + 2;
    }
    size_t n = (size_t)snprintf(out, size, "%s", prefix);
    if (n >= size)
        n = size - 1;
    bool skipping = false;
    for (; *p && *p != '\n' && n + 1 < size; p++) {
        if (ops && strncmp(p, "; node", 6) == 0)
            skipping = true;
        if (skipping) {
            if (*p != ')')
                continue;
            skipping = false;
        }
        out[n++] = *p == '\t' ? ' ' : *p;
    }
    out[n] = '\0';
    if (*p && *p != '\n' && size > 4)
        strcpy(out + size - 4, "...");
}

static bool is_sequence_msg(const char *msg)
{
    return strstr(msg, "equence") || strstr(msg, "ptional");
}

/* Reads dir/test_data_set_0/<kind>_<i>.pb for i = 0.. into ts; returns the count or -1 with a
 * reason. */
static int read_set(const char *dir, const char *kind, glow_tensor *ts, char *why, size_t wsize)
{
    int n = 0;
    for (; n < CONF_MAX_IO; n++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/test_data_set_0/%s_%d.pb", dir, kind, n);
        if (access(path, R_OK) != 0)
            break;
        glow_diag d = { 0 };
        if (glow_tensor_read_file(path, &ts[n], NULL, &d) != GLOW_OK) {
            /* The path is the same for every test: keep the reasons comparable. */
            const char *msg = d.msg;
            size_t plen = strlen(path);
            if (!strncmp(msg, path, plen) && msg[plen] == ':')
                msg += plen + 1 + (msg[plen + 1] == ' ');
            if (is_sequence_msg(msg))
                snprintf(why, wsize, "sequence %s", kind);
            else
                shorten(why, wsize, !strcmp(kind, "input") ? "input file: " : "output file: ",
                        msg);
            for (int k = 0; k < n; k++)
                glow_tensor_free(&ts[k]);
            return -1;
        }
    }
    return n;
}

/* Compares actual against expected (ONNX's assert_similar_outputs); false with a reason. */
static bool compare_output(int i, const glow_tensor *a, const glow_tensor *e, double rtol,
                           double atol, char *why, size_t wsize)
{
    char ta[128], te[128];
    glow_type_str(&a->type, ta, sizeof ta);
    glow_type_str(&e->type, te, sizeof te);
    if (!glow_type_same_shape(&a->type, &e->type)) {
        snprintf(why, wsize, "mismatch: output %d shape %s, expected %s", i, ta, te);
        return false;
    }
    glow_dtype dt = a->type.dtype;
    if (dt != e->type.dtype) {
        snprintf(why, wsize, "mismatch: output %d dtype %s, expected %s", i, ta, te);
        return false;
    }
    int64_t n = glow_type_numel(&a->type), bad = 0, worst = -1;
    double worst_rel = 0;
    bool fl = glow_dtype_is_float(dt);
    for (int64_t k = 0; k < n; k++) {
        bool ok;
        double rel = 0;
        if (fl) {
            double x = glow_load_f64(dt, a->data, (size_t)k);
            double y = glow_load_f64(dt, e->data, (size_t)k);
            double diff = fabs(x - y);
            ok = (isnan(x) && isnan(y)) || x == y || diff <= atol + rtol * fabs(y);
            rel = isnan(diff) ? INFINITY : diff / (fabs(y) > 0 ? fabs(y) : 1e-30);
        } else {
            ok = glow_load_i64(dt, a->data, (size_t)k) == glow_load_i64(dt, e->data, (size_t)k);
            rel = ok ? 0 : INFINITY;
        }
        if (!ok) {
            bad++;
            if (worst < 0 || rel > worst_rel) {
                worst = k;
                worst_rel = rel;
            }
        }
    }
    if (!bad)
        return true;
    double x = glow_load_f64(dt, a->data, (size_t)worst);
    double y = glow_load_f64(dt, e->data, (size_t)worst);
    snprintf(why, wsize, "mismatch: output %d max rel err %.1e (%lld of %lld values; [%lld] is "
             "%.7g, expected %.7g)", i, worst_rel, (long long)bad, (long long)n,
             (long long)worst, x, y);
    return false;
}

/* Loads, compiles and runs the test in `dir` on `backend`; true when every output matches.
 * Otherwise `why` gets a one-line reason starting with its category. */
/* Sequence and optional values are not tensors; the model's declared types tell (their .pb
 * files are SequenceProto/OptionalProto messages, which may even parse as a TensorProto). */
static bool non_tensor_io(const char *dir, char *why, size_t wsize)
{
    char model[4096];
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    glow_arena a = { 0 };
    glow_onnx_summary s;
    glow_diag d = { 0 };
    bool found = false;
    if (glow_onnx_summarize(model, &a, &s, &d) == GLOW_OK) {
        for (int i = 0; i < s.ninputs + s.noutputs && !found; i++) {
            const char *t = i < s.ninputs ? s.inputs[i].type_str
                                          : s.outputs[i - s.ninputs].type_str;
            const char *io = i < s.ninputs ? "input" : "output";
            size_t k = strcspn(t, "([");
            if ((found = t[k] == '(')) {
                bool seq = !strncmp(t, "seq(", 4) || !strncmp(t, "optional(", 9);
                snprintf(why, wsize, "%s%.*s %s", seq ? "sequence" : "",
                         seq ? 0 : (int)k, t, io);
            }
        }
    }
    glow_arena_release(&a);
    return found;
}

static bool conformance_run(const char *dir, const char *backend, char *why, size_t wsize)
{
    glow_tensor ins[CONF_MAX_IO] = { 0 }, outs[CONF_MAX_IO] = { 0 };
    if (non_tensor_io(dir, why, wsize))
        return false;
    int nin = read_set(dir, "input", ins, why, wsize);
    if (nin < 0)
        return false;
    int nout = read_set(dir, "output", outs, why, wsize);
    if (nout < 0) {
        for (int k = 0; k < nin; k++)
            glow_tensor_free(&ins[k]);
        return false;
    }
    const glow_type *types[CONF_MAX_IO];
    const glow_tensor *values[CONF_MAX_IO];
    for (int k = 0; k < nin; k++) {
        types[k] = &ins[k].type;
        values[k] = &ins[k];
    }
    glow_onnx_options opt = { .input_types = types, .ninput_types = nin,
                              .input_values = values, .ninput_values = nin };
    char model[4096];
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    bool pass = false;
    glow_compile_options copt = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED };
    /* GLOWC_CONF_NO_OPTIMIZE=1 runs without the graph optimizer: the pass list must match. */
    const char *noopt = getenv("GLOWC_CONF_NO_OPTIMIZE");
    copt.no_optimize = noopt && *noopt && strcmp(noopt, "0") != 0;
    if (glow_onnx_load(m, model, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        shorten(why, wsize, d.status == GLOW_ERR_UNSUPPORTED ? "unsupported: " : "load: ", d.msg);
    } else if (glow_program_create(m, &copt, &p, &d) != GLOW_OK) {
        shorten(why, wsize, d.status == GLOW_ERR_UNSUPPORTED ? "unsupported: " : "compile: ",
                d.msg);
    } else if (glow_program_run(p, ins, nin, &d) != GLOW_OK) {
        shorten(why, wsize, "run: ", d.msg);
    } else if (p->noutputs != nout) {
        snprintf(why, wsize, "mismatch: %d outputs, expected %d", p->noutputs, nout);
    } else {
        double rtol, atol;
        read_tolerances(dir, &rtol, &atol);
        pass = true;
        for (int k = 0; k < nout && pass; k++) {
            glow_tensor a = glow_program_output(p, k);
            pass = compare_output(k, &a, &outs[k], rtol, atol, why, wsize);
        }
    }
    glow_program_destroy(p);
    for (int k = 0; k < nin; k++)
        glow_tensor_free(&ins[k]);
    for (int k = 0; k < nout; k++)
        glow_tensor_free(&outs[k]);
    return pass;
}

#endif
