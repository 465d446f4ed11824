// test_run_seq.c - `glowc run` on models with sequence and optional inputs and outputs: it reads
// the ONNX suite's SequenceProto/OptionalProto input files, writes such outputs byte for byte
// as ONNX stores them, prints a sequence's elements by the naming rule, and refuses a file
// that does not hold what the model declares.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "conformance/node_test.h"
#include "testlib/spawn.h"

/* Runs suite test `test` (node suite) with its input files; true when output_0.pb equals the
 * suite's expected file byte for byte. */
static bool same_output(const char *test, int ninputs)
{
    char model[2048], ins[4][2048], dir[600], got[700], want[2048];
    const char *node = nt_suite_dir("node");
    snprintf(model, sizeof model, "%s/%s/model.onnx", node, test);
    for (int i = 0; i < ninputs; i++)
        snprintf(ins[i], sizeof ins[i], "%s/%s/test_data_set_0/input_%d.pb", node, test, i);
    snprintf(dir, sizeof dir, "%s/%s", tmpdir, test);
    snprintf(got, sizeof got, "%s/output_0.pb", dir);
    snprintf(want, sizeof want, "%s/%s/test_data_set_0/output_0.pb", node, test);
    const char *args[12] = { "run", model };
    int n = 2;
    for (int i = 0; i < ninputs; i++)
        args[n++] = ins[i];
    args[n++] = "--output-dir";
    args[n++] = dir;
    args[n] = NULL;
    result r = run(args);
    bool ok = r.code == 0;
    result_free(&r);
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    glow_diag d = { 0 };
    ok = ok && glow_read_file(got, &a, &na, &d) == GLOW_OK &&
         glow_read_file(want, &b, &nb, &d) == GLOW_OK && na == nb && !memcmp(a, b, na);
    free(a);
    free(b);
    return ok;
}

int main(void)
{
    if (!spawn_setup("glowc_test_run_seq"))
        return 1;
    /* Sequence in and out; optional sequence in and out; a sequence built by a loop whose
     * inputs (trip count, condition, an empty sequence) all come from files; a sequence out of
     * a tensor. */
    CHECK(same_output("test_identity_sequence", 1));
    CHECK(same_output("test_identity_opt", 1));
    CHECK(same_output("test_loop13_seq", 3));
    CHECK(same_output("test_split_to_sequence_1", 2));
    CHECK(same_output("test_sequence_insert_at_front", 3));
    /* An absent optional input (an OptionalProto without a value). */
    CHECK(same_output("test_optional_has_element_empty_optional_input", 1));

    /* Printed: one line per element, named <output>[k]. */
    char model[2048], in0[2048], in1[2048];
    const char *node = nt_suite_dir("node");
    snprintf(model, sizeof model, "%s/test_split_to_sequence_1/model.onnx", node);
    snprintf(in0, sizeof in0, "%s/test_split_to_sequence_1/test_data_set_0/input_0.pb", node);
    snprintf(in1, sizeof in1, "%s/test_split_to_sequence_1/test_data_set_0/input_1.pb", node);
    result r = RUN("run", model, in0, in1);
    CHECK_EQ(r.code, 0);
    CHECK_CONTAINS(r.out, "seq[0] f32[3, 2] = ");
    CHECK_CONTAINS(r.out, "seq[2] f32[3, 2] = ");
    result_free(&r);

    /* A tensor file where the model wants a sequence: exit 2 naming the input. */
    snprintf(model, sizeof model, "%s/test_identity_sequence/model.onnx", node);
    r = RUN("run", model, in0);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "input 'x'");
    result_free(&r);
    spawn_cleanup();
    return CHECK_DONE();
}
