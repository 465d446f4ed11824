// test_eval_prim.c - Type inference and evaluation of the lowering primitives Splat and
// InsertTensor, including the malformed cases that must fail cleanly.
#include "check.h"
#include "eval/eval.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static glow_node *splat(glow_dtype dt, int rank, const int64_t *dims, double v)
{
    glow_type t = glow_type_make(dt, rank, dims);
    glow_attr a = GLOW_AF(VALUE, v);
    glow_diag_clear(&D);
    return glow_build(F, NK_SPLAT, "s", NULL, 0, &a, 1, &t, 1, &D);
}

static glow_node *insert(glow_node *big, glow_node *small, const int64_t *starts, int n)
{
    glow_value ins[2] = { glow_val(big, 0), glow_val(small, 0) };
    glow_attr a = GLOW_AINTS(STARTS, starts, n);
    glow_diag_clear(&D);
    return glow_build(F, NK_INSERT_TENSOR, "ins", ins, 2, &a, 1, NULL, 0, &D);
}

static void test_splat(void)
{
    glow_node *s = splat(GLOW_F32, 2, DIMS(2, 3), 1.5);
    CHECK(s != NULL);
    CHECK(glow_eval_supported(s));
    glow_tensor out[1];
    CHECK(glow_eval_node(s, NULL, out, &D) == GLOW_OK);
    CHECK_EQ(glow_type_numel(&out[0].type), 6);
    for (int i = 0; i < 6; i++)
        CHECK_EQ(((float *)out[0].data)[i], 1.5f);
    glow_tensor_free(&out[0]);

    /* Integer kinds take the value converted (truncated, saturated); bool is v != 0. */
    s = splat(GLOW_I8, 1, DIMS(3), 300.7);
    CHECK(s && glow_eval_node(s, NULL, out, &D) == GLOW_OK);
    CHECK_EQ(((int8_t *)out[0].data)[2], 127);
    glow_tensor_free(&out[0]);
    s = splat(GLOW_BOOL, 0, NULL, 2);
    CHECK(s && glow_eval_node(s, NULL, out, &D) == GLOW_OK);
    CHECK_EQ(((uint8_t *)out[0].data)[0], 1);
    glow_tensor_free(&out[0]);
    s = splat(GLOW_F16, 1, DIMS(0), 2);
    CHECK(s && glow_eval_node(s, NULL, out, &D) == GLOW_OK);
    glow_tensor_free(&out[0]);

    /* Quantized splats have a type but no evaluator. */
    glow_type q = glow_type_make(GLOW_I8Q, 1, DIMS(4));
    q.scale = 0.5f;
    glow_attr a = GLOW_AF(VALUE, 1.0);
    s = glow_build(F, NK_SPLAT, "q", NULL, 0, &a, 1, &q, 1, &D);
    CHECK(s != NULL);
    CHECK(!glow_eval_supported(s));
    CHECK(glow_eval_node(s, NULL, out, &D) == GLOW_ERR_UNSUPPORTED);

    /* No declared type, no value, negative dims: refused with the node named. */
    glow_diag_clear(&D);
    CHECK(!glow_build(F, NK_SPLAT, "bare", NULL, 0, &a, 1, NULL, 0, &D));
    CHECK_CONTAINS(D.msg, "Splat 'bare'");
    glow_type t = glow_type_make(GLOW_F32, 1, DIMS(2));
    glow_diag_clear(&D);
    CHECK(!glow_build(F, NK_SPLAT, "noval", NULL, 0, NULL, 0, &t, 1, &D));
    CHECK_CONTAINS(D.msg, "value");
    t.dims[0] = -2;
    CHECK(!glow_build(F, NK_SPLAT, "neg", NULL, 0, &a, 1, &t, 1, &D));
}

static void test_insert(void)
{
    float bigv[12], smallv[4] = { 1, 2, 3, 4 };
    for (int i = 0; i < 12; i++)
        bigv[i] = -(float)i;
    glow_type bt = glow_type_make(GLOW_F32, 2, DIMS(3, 4));
    glow_type st = glow_type_make(GLOW_F32, 2, DIMS(2, 2));
    glow_node *big = glow_constant_create(M, "big", &bt, bigv);
    glow_node *small = glow_constant_create(M, "small", &st, smallv);
    glow_node *n = insert(big, small, DIMS(1, 2), 2);
    CHECK(n != NULL);
    CHECK(glow_type_equal(&n->outs[0], &bt));
    CHECK(glow_eval_supported(n));
    glow_tensor ins[2] = { big->payload, small->payload }, out[1];
    CHECK(glow_eval_node(n, ins, out, &D) == GLOW_OK);
    static const float want[12] = { 0, -1, -2, -3, -4, -5, 1, 2, -8, -9, 3, 4 };
    for (int i = 0; i < 12; i++)
        CHECK_EQ(((float *)out[0].data)[i], want[i]);
    glow_tensor_free(&out[0]);
    CHECK(glow_function_verify(F, &D) == GLOW_OK);

    /* Does not fit, wrong starts count, negative start, other dtype or rank. */
    CHECK(!insert(big, small, DIMS(2, 2), 2));
    CHECK_CONTAINS(D.msg, "InsertTensor 'ins'");
    CHECK(!insert(big, small, DIMS(0, 3), 2));
    CHECK(!insert(big, small, DIMS(-1, 0), 2));
    CHECK(!insert(big, small, DIMS(0), 1));
    glow_type it = glow_type_make(GLOW_I32, 2, DIMS(2, 2));
    glow_node *ismall = glow_constant_create(M, "ismall", &it, NULL);
    CHECK(!insert(big, ismall, DIMS(0, 0), 2));
    glow_type r1 = glow_type_make(GLOW_F32, 1, DIMS(4));
    glow_node *row = glow_constant_create(M, "row", &r1, NULL);
    CHECK(!insert(big, row, DIMS(0), 1));

    /* Evaluated on tensors that do not match the attributes: an error, no overrun. */
    glow_tensor bad[2] = { small->payload, big->payload };
    CHECK(glow_eval_node(n, bad, out, &D) != GLOW_OK);

    /* Rank 0 and an empty insert. */
    glow_type s0 = glow_type_scalar(GLOW_I64);
    int64_t a0 = 5, b0 = 9;
    glow_node *c0 = glow_constant_create(M, "a0", &s0, &a0);
    glow_node *c1 = glow_constant_create(M, "b0", &s0, &b0);
    glow_node *n0 = insert(c0, c1, NULL, 0);
    CHECK(n0 != NULL);
    glow_tensor i0[2] = { c0->payload, c1->payload };
    CHECK(n0 && glow_eval_node(n0, i0, out, &D) == GLOW_OK);
    CHECK_EQ(((int64_t *)out[0].data)[0], 9);
    glow_tensor_free(&out[0]);
    glow_type et = glow_type_make(GLOW_F32, 2, DIMS(0, 4));
    glow_node *empty = glow_constant_create(M, "empty", &et, NULL);
    glow_node *ne = insert(big, empty, DIMS(3, 0), 2);
    CHECK(ne != NULL);
    glow_tensor ie[2] = { big->payload, empty->payload };
    CHECK(ne && glow_eval_node(ne, ie, out, &D) == GLOW_OK);
    CHECK_EQ(((float *)out[0].data)[11], -11);
    glow_tensor_free(&out[0]);
}

int main(void)
{
    M = glow_module_create();
    F = glow_function_create(M, "main");
    test_splat();
    test_insert();
    glow_module_destroy(M);
    return CHECK_DONE();
}
