// test_info.c - glow_onnx_summarize on the demo model, suite models and broken files.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "onnx/onnx.h"

static const glow_onnx_op_count *find_op(const glow_onnx_summary *s, const char *op)
{
    for (int i = 0; i < s->nops; i++) {
        if (!strcmp(s->ops[i].op_type, op))
            return &s->ops[i];
    }
    return NULL;
}

static void check_lenet(void)
{
    glow_arena a = { 0 };
    glow_onnx_summary s;
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_summarize("models/lenet.onnx", &a, &s, &d), GLOW_OK);
    CHECK_EQ(s.ir_version, 7);
    CHECK_CONTAINS(s.producer, "make_lenet.py");
    CHECK_EQ(s.nopsets, 1);
    if (s.nopsets == 1) {
        CHECK_STR_EQ(s.opset_domains[0], "");
        CHECK_EQ(s.opset_versions[0], 13);
    }
    CHECK_EQ(s.ninputs, 1);
    CHECK_EQ(s.noutputs, 1);
    if (s.ninputs == 1 && s.noutputs == 1) {
        CHECK_STR_EQ(s.inputs[0].name, "input");
        CHECK_STR_EQ(s.inputs[0].type_str, "f32[1, 1, 28, 28]");
        CHECK_STR_EQ(s.outputs[0].name, "probs");
        CHECK_STR_EQ(s.outputs[0].type_str, "f32[1, 10]");
    }
    CHECK_EQ(s.ninitializers, 8);
    /* conv1 6x1x5x5+6, conv2 16x6x5x5+16, fc1 120x400+120, fc2 10x120+10, all f32. */
    CHECK_EQ(s.weight_bytes, 4 * (150 + 6 + 2400 + 16 + 48000 + 120 + 1200 + 10));
    CHECK_EQ(s.nops, 6);
    if (s.nops == 6) {
        /* Sorted by count, then name. */
        CHECK_STR_EQ(s.ops[0].op_type, "Relu");
        CHECK_EQ(s.ops[0].count, 3);
        CHECK_STR_EQ(s.ops[1].op_type, "Conv");
        CHECK_STR_EQ(s.ops[2].op_type, "Gemm");
        CHECK_STR_EQ(s.ops[3].op_type, "MaxPool");
        CHECK_STR_EQ(s.ops[4].op_type, "Flatten");
        CHECK_STR_EQ(s.ops[5].op_type, "Softmax");
    }
    for (int i = 0; i < s.nops; i++) {
        CHECK_EQ(s.ops[i].opset, 13);
        CHECK_STR_EQ(s.ops[i].domain, "");
    }
    glow_arena_release(&a);
}

/* Older exporters list initializers among the inputs: those are not fed inputs. */
static void check_initializer_inputs(const char *shared)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/onnx-node-tests/light/test_squeezenet/model.onnx", shared);
    glow_arena a = { 0 };
    glow_onnx_summary s;
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_summarize(path, &a, &s, &d), GLOW_OK);
    CHECK_EQ(s.ninputs, 1);
    if (s.ninputs >= 1)
        CHECK_STR_EQ(s.inputs[0].type_str, "f32[1, 3, 224, 224]");
    CHECK(find_op(&s, "Conv") != NULL);
    glow_arena_release(&a);

    /* An ai.onnx.ml model: its op is in another domain, at that domain's opset, and
     * supported (onnx_ops_ml.c). */
    snprintf(path, sizeof path, "%s/onnx-node-tests/node/test_ai_onnx_ml_binarizer/model.onnx",
             shared);
    CHECK_EQ(glow_onnx_summarize(path, &a, &s, &d), GLOW_OK);
    const glow_onnx_op_count *op = find_op(&s, "Binarizer");
    CHECK(op != NULL);
    if (op) {
        CHECK_STR_EQ(op->domain, "ai.onnx.ml");
        CHECK(op->opset >= 1);
        CHECK(op->supported);
    }
    glow_arena_release(&a);
}

/* Sequence-typed inputs print as seq(...). */
static void check_sequence(const char *shared)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/onnx-node-tests/node/test_sequence_insert_at_back/model.onnx",
             shared);
    if (access(path, R_OK) != 0)
        return;
    glow_arena a = { 0 };
    glow_onnx_summary s;
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_summarize(path, &a, &s, &d), GLOW_OK);
    CHECK(s.ninputs >= 1);
    if (s.ninputs >= 1)
        CHECK(strncmp(s.inputs[0].type_str, "seq(", 4) == 0);
    glow_arena_release(&a);
}

static void check_errors(void)
{
    glow_arena a = { 0 };
    glow_onnx_summary s;
    glow_diag d = { 0 };
    CHECK_EQ(glow_onnx_summarize("no/such/file.onnx", &a, &s, &d), GLOW_ERR_IO);
    CHECK_CONTAINS(d.msg, "no/such/file.onnx");

    /* Every truncation of the demo model either parses or fails as a parse error. */
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag_clear(&d);
    CHECK_EQ(glow_read_file("models/lenet.onnx", &data, &size, &d), GLOW_OK);
    char tmp[] = "/tmp/glowc_test_info_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    close(fd);
    int parse_errors = 0;
    for (size_t cut = 0; data && cut < size; cut += size / 37 + 1) {
        glow_diag_clear(&d);
        CHECK_EQ(glow_write_file(tmp, data, cut, &d), GLOW_OK);
        glow_status st = glow_onnx_summarize(tmp, &a, &s, &d);
        CHECK(st == GLOW_OK || st == GLOW_ERR_PARSE);
        if (st != GLOW_OK) {
            parse_errors++;
            CHECK(d.len > 0);
        }
        glow_arena_reset(&a);
    }
    CHECK(parse_errors > 0);
    remove(tmp);
    free(data);
    glow_arena_release(&a);
}

int main(void)
{
    const char *shared = getenv("GLOWC_SHARED");
    if (!shared || !shared[0])
        shared = "../shared";
    check_lenet();
    check_initializer_inputs(shared);
    check_sequence(shared);
    check_errors();
    return CHECK_DONE();
}
