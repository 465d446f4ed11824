// test_api_lowbit.c - The low-bit element types through the public API (glowc.h, "Element
// types"): their numbers, names and sizes, and sessions fed and read in them - ONNX Cast
// node tests (../shared/onnx-node-tests) from and to float8 e4m3fn, float4 e2m1, int4 and
// the 2-bit integers, each run through the header alone, one byte per element, against the
// suite's expected output.
#include <stdio.h>

#include "check.h"
#include "glowc/glowc.h"

static void test_names(void)
{
    static const struct { glowc_dtype t; int onnx; const char *name; } rows[] = {
        { GLOWC_F8E4M3FN, 17, "f8e4m3fn" }, { GLOWC_F8E4M3FNUZ, 18, "f8e4m3fnuz" },
        { GLOWC_F8E5M2, 19, "f8e5m2" },     { GLOWC_F8E5M2FNUZ, 20, "f8e5m2fnuz" },
        { GLOWC_U4, 21, "u4" },             { GLOWC_I4, 22, "i4" },
        { GLOWC_F4E2M1, 23, "f4e2m1" },     { GLOWC_F8E8M0, 24, "f8e8m0" },
        { GLOWC_U2, 25, "u2" },             { GLOWC_I2, 26, "i2" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        CHECK_EQ(rows[i].t, rows[i].onnx);
        CHECK_STR_EQ(glowc_dtype_name(rows[i].t), rows[i].name);
        CHECK_EQ(glowc_dtype_size(rows[i].t), 1);
    }
    CHECK_STR_EQ(glowc_dtype_name((glowc_dtype)27), "undefined");
}

/* Runs node test `test` (one input, one output) on the interpreter: the input read from its
 * file has type `in`, the session describes its input and output as `in` and `out`, and
 * the output equals the file's bytes. */
static void run_node_test(const char *shared, const char *test, glowc_dtype in, glowc_dtype out)
{
    char model[1024], input[1024], want_path[1024];
    snprintf(model, sizeof model, "%s/onnx-node-tests/node/%s/model.onnx", shared, test);
    snprintf(input, sizeof input, "%s/onnx-node-tests/node/%s/test_data_set_0/input_0.pb",
             shared, test);
    snprintf(want_path, sizeof want_path,
             "%s/onnx-node-tests/node/%s/test_data_set_0/output_0.pb", shared, test);
    glowc_options *o = glowc_options_create();
    CHECK_EQ(glowc_options_set_backend(o, "interpreter"), GLOWC_OK);
    glowc_session *s = NULL;
    glowc_status st = glowc_session_create(o, model, &s);
    glowc_options_destroy(o);
    if (st != GLOWC_OK) {
        fprintf(stderr, "%s: %s\n", test, glowc_last_error());
        CHECK_EQ(st, GLOWC_OK);
        return;
    }
    glowc_tensor_info ii, oi;
    CHECK_EQ(glowc_session_input_info(s, 0, &ii), GLOWC_OK);
    CHECK_EQ(glowc_session_output_info(s, 0, &oi), GLOWC_OK);
    CHECK_EQ(ii.dtype, in);
    CHECK_EQ(oi.dtype, out);
    glowc_tensor *x = NULL, *want = NULL, *got = NULL;
    CHECK_EQ(glowc_tensor_read_file(input, &x), GLOWC_OK);
    CHECK_EQ(glowc_tensor_read_file(want_path, &want), GLOWC_OK);
    if (x && want) {
        CHECK_EQ(glowc_tensor_dtype(x), in);
        CHECK_EQ(glowc_tensor_dtype(want), out);
        /* One byte per element of a low-bit type, whatever the file packs. */
        size_t n = 1;
        for (int d = 0; d < glowc_tensor_rank(x); d++)
            n *= (size_t)glowc_tensor_shape(x)[d];
        CHECK_EQ(glowc_tensor_size_bytes(x), n * glowc_dtype_size(in));
        glowc_value v = glowc_tensor_value(x);
        CHECK_EQ(glowc_session_run_tensors(s, &v, 1, &got), GLOWC_OK);
        if (got) {
            CHECK_EQ(glowc_tensor_dtype(got), out);
            CHECK_EQ(glowc_tensor_size_bytes(got), glowc_tensor_size_bytes(want));
            CHECK(glowc_tensor_size_bytes(got) == glowc_tensor_size_bytes(want) &&
                  memcmp(glowc_tensor_data(got), glowc_tensor_data(want),
                         glowc_tensor_size_bytes(want)) == 0);
        }
        /* Fed as bytes of another 1-byte type, the input is refused by name and type. */
        v.dtype = in == GLOWC_U4 || in == GLOWC_U2 ? GLOWC_U8 : GLOWC_I8;
        glowc_tensor *bad = NULL;
        CHECK_EQ(glowc_session_run_tensors(s, &v, 1, &bad), GLOWC_ERR_BAD_INPUT);
        CHECK_CONTAINS(glowc_last_error(), glowc_dtype_name(in));
        CHECK(bad == NULL);
    }
    glowc_tensor_destroy(x);
    glowc_tensor_destroy(want);
    glowc_tensor_destroy(got);
    glowc_session_destroy(s);
}

int main(void)
{
    test_names();
    const char *shared = getenv("GLOWC_SHARED");
    if (!shared) {
        fprintf(stderr, "GLOWC_SHARED is not set: the node tests are not run\n");
        CHECK(shared != NULL);
        return CHECK_DONE();
    }
    run_node_test(shared, "test_cast_FLOAT8E4M3FN_to_FLOAT", GLOWC_F8E4M3FN, GLOWC_F32);
    run_node_test(shared, "test_cast_FLOAT_to_FLOAT4E2M1", GLOWC_F32, GLOWC_F4E2M1);
    run_node_test(shared, "test_cast_INT4_to_FLOAT", GLOWC_I4, GLOWC_F32);
    run_node_test(shared, "test_cast_FLOAT_to_INT4", GLOWC_F32, GLOWC_I4);
    run_node_test(shared, "test_cast_UINT2_to_FLOAT", GLOWC_U2, GLOWC_F32);
    run_node_test(shared, "test_cast_INT2_to_FLOAT", GLOWC_I2, GLOWC_F32);
    return CHECK_DONE();
}
