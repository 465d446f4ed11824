// compare.h - Runs one ONNX backend test directory through the compile pipeline and compares
// its outputs with node_test.c; the conformance driver calls it in a forked child.
#ifndef GLOW_TEST_COMPARE_H
#define GLOW_TEST_COMPARE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/node_test.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

#define CONF_MAX_IO 64
#define CONF_REASON 480

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

/* Loads, compiles and runs the test in `dir` on `backend`; true when every output matches.
 * Otherwise `why` gets a one-line reason starting with its category. */
static bool conformance_run(const char *dir, const char *backend, char *why, size_t wsize)
{
    glow_tensor ins[CONF_MAX_IO] = { 0 }, outs[CONF_MAX_IO] = { 0 };
    if (non_tensor_io(dir, why, wsize))
        return false;
    int nin = nt_read_set(dir, "input", ins, CONF_MAX_IO, why, wsize);
    if (nin < 0)
        return false;
    int nout = nt_read_set(dir, "output", outs, CONF_MAX_IO, why, wsize);
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
        nt_shorten(why, wsize, d.status == GLOW_ERR_UNSUPPORTED ? "unsupported: " : "load: ",
                   d.msg);
    } else if (glow_program_create(m, &copt, &p, &d) != GLOW_OK) {
        nt_shorten(why, wsize, d.status == GLOW_ERR_UNSUPPORTED ? "unsupported: " : "compile: ",
                   d.msg);
    } else if (glow_program_run(p, ins, nin, &d) != GLOW_OK) {
        nt_shorten(why, wsize, "run: ", d.msg);
    } else if (p->noutputs != nout) {
        snprintf(why, wsize, "mismatch: %d outputs, expected %d", p->noutputs, nout);
    } else {
        double rtol, atol;
        nt_read_tolerances(dir, &rtol, &atol);
        pass = true;
        for (int k = 0; k < nout && pass; k++) {
            glow_tensor a = glow_program_output(p, k);
            char what[32];
            snprintf(what, sizeof what, "output %d", k);
            pass = nt_compare(what, &a, &outs[k], rtol, atol, why, wsize);
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
