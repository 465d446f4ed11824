// cf_eval.h - Test support: loads an ONNX node-suite test (chosen inputs frozen into
// initializers) and checks the imported graph numerically: every node is evaluated in order
// with glow_eval_node on the test's input_*.pb tensors, and the saved outputs are compared with
// output_*.pb (folder reading and comparison: conformance/node_test.h). Part of the
// test-support library (tests/testlib).
#ifndef GLOW_TEST_CF_EVAL_H
#define GLOW_TEST_CF_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

#define CF_MAX_IO 16

typedef struct cf_result {
    glow_status load;          /* the import's status */
    glow_diag d;               /* its message */
    int nout;
    glow_type outs[CF_MAX_IO]; /* result types of the graph outputs, in order */
    int nnodes;                /* nodes in "main" */
    bool evaluated;            /* every node had an evaluator */
    char eval_msg[512];        /* why not (the first node without one) */
    int compared, mismatches;  /* outputs compared / outside the tolerance */
    char mismatch_msg[512];
} cf_result;

/* Evaluates "main" in order (node->aux holds each node's result tensors) with the input
 * placeholders fed by name, and compares graph output k with want[k]. */
void cf_eval(cf_result *r, glow_module *m, const glow_tensor *ins,
             char *const *in_names, int nin, const glow_tensor *want, int nwant);

/* Loads a serialized model and evaluates it (see cf_eval). */
cf_result cf_run_bytes(const uint8_t *data, size_t size, const glow_tensor *ins,
                       char *const *in_names, int nin, const glow_tensor *want,
                       int nwant);

/* Packs a model built with tests/testlib/onnx_build.h and runs it as cf_run_bytes does. */
struct mk_model;
cf_result cf_run_model(struct mk_model *mk, const glow_tensor *ins, char *const *in_names,
                       int nin, const glow_tensor *want, int nwant);

/* Whether r loaded, evaluated every node and matched all nout outputs; prints why not,
 * prefixed by `what`. */
bool cf_ok(const char *what, const cf_result *r, int nout);

/* A node-suite test with the inputs whose bit is set in `freeze` turned into initializers
 * holding their test_data_set_0 value: the model bytes, the other inputs' values and names
 * (model order), and the expected outputs. */
typedef struct cf_frozen {
    uint8_t *bytes;
    size_t size;
    glow_tensor ins[CF_MAX_IO];
    char *in_names[CF_MAX_IO];
    int nin;
    glow_tensor want[CF_MAX_IO];
    int nwant;
    char path[2048]; /* the model file */
} cf_frozen;

/* Reads and freezes <suite>/<test>; false when its model cannot be read (fz->path names it).
 * Free with cf_frozen_free either way. */
bool cf_freeze(const char *suite, const char *test, unsigned freeze, cf_frozen *fz);
void cf_frozen_free(cf_frozen *fz);

/* Loads <suite>/<test>: inputs whose bit is set in `freeze` become initializers holding their
 * test_data_set_0 value; the others are fed when evaluating. */
cf_result cf_run(const char *suite, const char *test, unsigned freeze);

/* Whether node/<test> (inputs in `freeze` frozen) loads with `nout` outputs of `types`
 * ("f32[1, 3, 4]"), every node evaluated and every output within tolerance; prints what did
 * not hold. *out (if given) receives the result. */
bool cf_passes(const char *test, unsigned freeze, int nout, const char *const *types,
               cf_result *out);

/* "f32[1, 3, 4]" of output i, for CHECK_STR_EQ. */
const char *cf_out_type(const cf_result *r, int i);

#endif
