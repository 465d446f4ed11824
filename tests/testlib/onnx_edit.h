// onnx_edit.h - Test support: loads ONNX node-suite models for the op-loader tests, optionally
// edited first (fed inputs frozen into initializers from the test data, attributes, names and
// the opset changed), and prints the imported graph; expect_graph and expect_load check the
// outcome. Part of the test-support library (tests/testlib, linked into every test program).
//
//   static void legacy(Onnx__ModelProto *mp) { set_opset(mp, 6); }
//   expect_graph("test_add_bcast", 0, legacy, "...printed function...");
//   expect_load("test_col2im", 0, NULL, GLOW_ERR_UNSUPPORTED, "must be a constant");
#ifndef GLOW_TEST_ONNX_EDIT_H
#define GLOW_TEST_ONNX_EDIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

/* Edits the unpacked model before it is loaded. Anything added must be malloc'd, since
 * protobuf-c frees the message field by field. */
typedef void (*model_edit)(Onnx__ModelProto *mp);

typedef struct loaded {
    glow_status st;
    glow_diag d;
    char *text;        /* glow_function_print of "main" when the load succeeded; malloc'd */
    char *module_text; /* glow_module_print (storage with small constants' values); malloc'd */
} loaded;

/* The node suite's folder (GLOWC_SHARED/onnx-node-tests/node). */
const char *node_dir(void);

/* Attribute edits on a node: the integer and string setters change the attribute when it is
 * there and add it when not; set_ints_attr always adds. */
void set_int_attr(Onnx__NodeProto *np, const char *name, int64_t v);
void set_ints_attr(Onnx__NodeProto *np, const char *name, const int64_t *v, size_t n);
void set_string_attr(Onnx__NodeProto *np, const char *name, const char *v);
void set_node_name(Onnx__NodeProto *np, const char *name);

/* Keeps the node's first `keep` inputs (older opsets took the rest as attributes). */
void keep_inputs(Onnx__NodeProto *np, size_t keep);

/* Sets the default domain's opset version. */
void set_opset(Onnx__ModelProto *mp, int64_t v);

/* Loads node/<test>/model.onnx. Fed inputs whose bit is set in `freeze` become initializers
 * holding their test_data_set_0 value; `edit` (may be NULL) changes the model first. */
loaded load_node_test(const char *test, unsigned freeze, model_edit edit);

/* The text of a successful load, or the failure message (for CHECK_STR_EQ reports). */
const char *loaded_text(const loaded *r);

void loaded_free(loaded *r);

/* Whether `test` loads with status `st` to a text (printed function, or message) containing
 * `needle`; prints what it got when not. */
bool load_gives(const char *test, unsigned freeze, model_edit edit, glow_status st,
                const char *needle);

/* Whether `test` loads and its printed function - passed through `filter` (may be NULL; it
 * returns malloc'd text) - is `expected`; prints both when not. */
bool load_prints(const char *test, unsigned freeze, model_edit edit,
                 char *(*filter)(const char *), const char *expected);

/* The checks, counted by check.h in the calling test program. */
#define expect_load(test, freeze, edit, st, needle) \
    CHECK(load_gives(test, freeze, edit, st, needle))
#define expect_fail(test, freeze, edit, st, needle) expect_load(test, freeze, edit, st, needle)
#define expect_graph(test, freeze, edit, expected) \
    CHECK(load_prints(test, freeze, edit, NULL, expected))

#endif
