// node_test.h - What every runner of the ONNX backend test folders shares: where the suites
// are, reading a folder's test_data_set_0 tensors and tolerances, and comparing an output.
//
// A test folder holds model.onnx and test_data_set_0/{input,output}_<i>.pb. The runners differ
// in how they execute the model (the conformance driver compiles and runs it on a backend;
// tests/onnx evaluate the imported graph node by node with glow_eval_node), not in how they
// read the folder or judge an output, which is done here, once.
#ifndef GLOW_TEST_NODE_TEST_H
#define GLOW_TEST_NODE_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "eval/eval.h"

/* $GLOWC_SHARED/onnx-node-tests/<suite> (unset or empty GLOWC_SHARED: ../shared); a static buffer
 * that the next call overwrites. */
const char *nt_suite_dir(const char *suite);

/* The names of the test folders in `dir` (entries named test_...), sorted by strcmp, each and
 * the array malloc'd (nt_free_tests); NULL and *count 0 when `dir` cannot be opened. */
char **nt_list_tests(const char *dir, int *count);
void nt_free_tests(char **names, int count);

/* Reads dir/test_data_set_0/<kind>_<i>.pb (kind "input" or "output") for i = 0.. until one is
 * missing or `max` are read. Returns the count, or -1 with a one-line reason in `why` (and
 * nothing left allocated) when a file cannot be read as a tensor. */
int nt_read_set(const char *dir, const char *kind, glow_tensor *ts, int max, char *why,
                size_t wsize);

/* Like nt_read_set for a model whose inputs or outputs may be sequences or optionals: the
 * declared types (`decl`, one glow_onnx_io per file, from glow_onnx_summarize) say which files
 * are SequenceProto/OptionalProto. Every file's tensors go to ts one after the other and its
 * count to counts[i] (1 for a tensor, a sequence's length, -1 for an absent optional), as
 * glow_onnx_options.input_counts takes them. Returns the number of tensors, or -1 with a
 * reason in `why`; *nfiles gets the number of files read. */
int nt_read_values(const char *dir, const char *kind, const glow_onnx_io *decl, int ndecl,
                   glow_tensor *ts, int max, int *counts, int *nfiles, char *why,
                   size_t wsize);

/* Like nt_read_set, but stops quietly at the first file that cannot be read as a tensor and
 * returns the count read before it (those tensors are kept). */
int nt_read_prefix(const char *dir, const char *kind, glow_tensor *ts, int max);

/* Turns input i of `g` into an initializer holding dir/test_data_set_0/input_<i>.pb, named
 * after the input (for loaders that need the value constant). False, `g` unchanged, when the
 * file cannot be read as a TensorProto. */
bool nt_freeze_input(Onnx__GraphProto *g, const char *dir, size_t i);

/* ONNX's tolerances for the folder: rtol 1e-3 and atol 1e-7 unless its data.json says, or
 * node_test.c's atol_overrides name the test (expected outputs further than that from the
 * exact result, each with its figures). */
void nt_read_tolerances(const char *dir, double *rtol, double *atol);

/* Whether `got` matches `want` by ONNX's rule (numpy's allclose): same shape and dtype; floats
 * within atol + rtol * |want|, NaN where NaN is expected and infinities exactly; other dtypes
 * equal. Otherwise false, and `why` gets "mismatch: <what> ..." naming the worst element. */
bool nt_compare(const char *what, const glow_tensor *got, const glow_tensor *want, double rtol,
                double atol, char *why, size_t wsize);

/* A one-line reason from a library message, behind `prefix`: "model uses 2 unsupported ops:
 * If (opset 13; node 'a'), Loop (...)" becomes "unsupported: If (opset 13), Loop (...)". */
void nt_shorten(char *out, size_t size, const char *prefix, const char *msg);

#endif
