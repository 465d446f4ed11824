// compare.h - Test support: comparing results - two runs' output buffers element by element
// within a tolerance (or bit for bit), tensors and tensor files by their largest difference -
// and writing simple input tensors. Part of the test-support library (tests/testlib, linked
// into every test program). ONNX's allclose rule for node-suite outputs is nt_compare
// (conformance/node_test.h).
#ifndef GLOW_TEST_COMPARE_H
#define GLOW_TEST_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"

/* How compare_close judges and reports: a float element passes when
 * |got - ref| <= rel_tol * max(|ref|, floor), and NaN against NaN passes when nan_equal;
 * elements of other types must be equal. Each mismatch prints
 * "<what>: [i] <got_name> g, <ref_name> r" to stderr, at most max_report of them. */
typedef struct cmp_spec {
    const char *what;
    const char *got_name, *ref_name;
    double rel_tol;
    double floor;
    bool nan_equal;
    int max_report;
} cmp_spec;

/* The mismatches among n elements of type dt, counted up to s->max_report (the comparison
 * stops there). */
int compare_close(const cmp_spec *s, glow_dtype dt, const void *got, const void *ref,
                  int64_t n);

/* The same for bit-identical elements (runs that must agree exactly, e.g. thread counts). */
int compare_bits(const cmp_spec *s, glow_dtype dt, const void *got, const void *ref,
                 int64_t n);

/* Max |a - e| of two tensors of the same type, or -1 when the types differ. */
double tensor_max_diff(const glow_tensor *a, const glow_tensor *e);

/* Max |got - ref| of two tensor files (.pb or .npy), or -1 when either cannot be read or
 * their types differ; *got_name (if given, malloc'd) is the name stored in `got`. */
double tensor_file_diff(const char *got, const char *ref, char **got_name);

/* Writes a tensor of type dt whose element i is i * scale as a .pb file named "t". */
bool write_ramp_tensor(const char *path, glow_dtype dt, int rank, const int64_t *dims,
                       double scale);

#endif
