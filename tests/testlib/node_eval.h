// node_eval.h - Test support: runs ONNX node-suite tests through the importer and the
// reference evaluator (glow_eval_node, node by node in function order) and compares with their
// expected outputs (test folder and comparison: conformance/node_test.h); one test, a list, or
// every test whose name starts with given prefixes, counting the outcomes so op-family tests
// cover all of their ONNX tests. Part of the test-support library (tests/testlib).
#ifndef GLOW_TEST_NODE_EVAL_H
#define GLOW_TEST_NODE_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "graph/graph.h"

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

typedef struct ne_totals {
    int total, pass, no_load, no_eval, mismatch;
} ne_totals;

/* The node suite's folder. */
const char *node_eval_dir(void);

/* The value v evaluated to (a constant's payload, or what node_eval left in node->aux). */
const glow_tensor *node_eval_value(glow_value v);

/* Imports node/<test> with its fed inputs typed and valued from test_data_set_0 (so loaders
 * that need an input constant get it), evaluates the function and compares. `why` receives
 * the reason for anything but NE_PASS. */
node_eval_result node_eval(const char *test, char *why, size_t wn);

/* Runs every test of `names` expecting NE_PASS; prints failures; returns the pass count. */
int node_eval_all(const char *const *names, int n, int *failed);

/* Whether the node suite is present (tests skip otherwise). */
bool ne_have_suite(void);

/* Tests named <prefix>... for one of `prefixes` (NULL-terminated, each starting "test_");
 * `expanded` picks the *_expanded variants (ONNX's function bodies) or the op's own tests.
 * Prints one line for each test that does not pass. */
ne_totals ne_run_prefixes(const char *const *prefixes, bool expanded);

void ne_print_totals(const char *what, ne_totals t);

#endif
