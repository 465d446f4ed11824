// test_infer.c - Type inference through glow_build: result shapes per node family, and the
// messages of rejected nodes.
#include "check.h"
#include "graph/graph.h"

static glow_module *m;
static glow_function *f;
static glow_diag d;
static int nph;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define I64S(...) ((const int64_t[]){ __VA_ARGS__ })
#define NARGS(...) (int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
#define AINTS(aid, ...) GLOW_AINTS(aid, I64S(__VA_ARGS__), NARGS(__VA_ARGS__))
#define ATTRS(...) ((const glow_attr[]){ __VA_ARGS__ }), \
    (int)(sizeof((const glow_attr[]){ __VA_ARGS__ }) / sizeof(glow_attr))

/* A fresh input placeholder of the given type. */
static glow_value in(glow_dtype t, int rank, const int64_t *dims)
{
    glow_type ty = glow_type_make(t, rank, dims);
    char name[32];
    snprintf(name, sizeof name, "in%d", nph++);
    return glow_val(glow_placeholder_create(m, name, &ty, true), 0);
}

/* The type of result r of n as text, or the failure message when n is NULL. */
static const char *ty(const glow_node *n, int r)
{
    static char buf[4][128];
    static int k;
    char *b = buf[k++ & 3];
    if (!n)
        return d.msg;
    if (r >= (int)n->nout)
        return "(no such result)";
    return glow_type_str(&n->outs[r], b, 128);
}

static glow_node *build(glow_node_kind k, const char *name, const glow_value *ins, int nin,
                        const glow_attr *attrs, int nattr)
{
    glow_diag_clear(&d);
    return glow_build(f, k, name, ins, nin, attrs, nattr, NULL, 0, &d);
}

static glow_node *conv(const char *name, glow_value x, glow_value w, const int64_t *k,
                       const int64_t *s, const int64_t *p, const int64_t *dl, int nsp,
                       int64_t group)
{
    glow_attr a[] = { GLOW_AINTS(KERNEL, k, nsp), GLOW_AINTS(STRIDES, s, nsp),
                      GLOW_AINTS(PADS, p, 2 * nsp), GLOW_AINTS(DILATIONS, dl, nsp),
                      GLOW_AI(GROUP, group) };
    glow_value ins[] = { x, w };
    return build(NK_CONV, name, ins, 2, a, 5);
}

static void test_conv(void)
{
    glow_value x = in(GLOW_F32, 4, DIMS(1, 3, 224, 224));
    glow_value w = in(GLOW_F32, 4, DIMS(64, 3, 7, 7));
    glow_value b = in(GLOW_F32, 1, DIMS(64));
    glow_attr a[] = { AINTS(KERNEL, 7, 7), AINTS(STRIDES, 2, 2), AINTS(PADS, 3, 3, 3, 3),
                      AINTS(DILATIONS, 1, 1), GLOW_AI(GROUP, 1) };
    glow_diag_clear(&d);
    glow_node *n = glow_build(f, NK_CONV, "conv1", (glow_value[]){ x, w, b }, 3, a, 5, NULL, 0,
                              &d);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 64, 112, 112]");

    /* Dilated. */
    n = conv("dil", in(GLOW_F32, 4, DIMS(1, 1, 10, 10)), in(GLOW_F32, 4, DIMS(1, 1, 3, 3)),
             I64S(3, 3), I64S(1, 1), I64S(0, 0, 0, 0), I64S(2, 2), 2, 1);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 1, 6, 6]");
    /* Asymmetric pads, different strides per dim. */
    n = conv("asym", in(GLOW_F32, 4, DIMS(1, 2, 7, 9)), in(GLOW_F32, 4, DIMS(4, 2, 2, 3)),
             I64S(2, 3), I64S(3, 2), I64S(1, 0, 0, 2), I64S(1, 1), 2, 1);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 4, 3, 5]");
    /* Grouped and depthwise. */
    n = conv("grp", in(GLOW_F32, 4, DIMS(2, 8, 5, 5)), in(GLOW_F32, 4, DIMS(16, 2, 3, 3)),
             I64S(3, 3), I64S(1, 1), I64S(1, 1, 1, 1), I64S(1, 1), 2, 4);
    CHECK_STR_EQ(ty(n, 0), "f32[2, 16, 5, 5]");
    n = conv("dw", in(GLOW_F32, 4, DIMS(1, 32, 14, 14)), in(GLOW_F32, 4, DIMS(32, 1, 3, 3)),
             I64S(3, 3), I64S(2, 2), I64S(1, 1, 1, 1), I64S(1, 1), 2, 32);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 32, 7, 7]");
    /* 1-D and 3-D. */
    n = conv("c1d", in(GLOW_F32, 3, DIMS(1, 4, 20)), in(GLOW_F32, 3, DIMS(8, 4, 5)), I64S(5),
             I64S(1), I64S(0, 0), I64S(1), 1, 1);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 8, 16]");
    n = conv("c3d", in(GLOW_F32, 5, DIMS(1, 2, 8, 8, 8)), in(GLOW_F32, 5, DIMS(4, 2, 3, 3, 3)),
             I64S(3, 3, 3), I64S(2, 2, 2), I64S(1, 1, 1, 1, 1, 1), I64S(1, 1, 1), 3, 1);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 4, 4, 4, 4]");

    /* Errors. */
    n = conv("conv1", x, in(GLOW_F32, 4, DIMS(64, 4, 7, 7)), I64S(7, 7), I64S(2, 2),
             I64S(3, 3, 3, 3), I64S(1, 1), 2, 1);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Conv 'conv1': weight f32[64, 4, 7, 7] has 4 input channels per "
                          "group, input f32[1, 3, 224, 224] has 3 (group 1)");
    CHECK_EQ(d.status, GLOW_ERR_BAD_SHAPE);
    n = conv("small", in(GLOW_F32, 4, DIMS(1, 1, 2, 2)), in(GLOW_F32, 4, DIMS(1, 1, 3, 3)),
             I64S(3, 3), I64S(1, 1), I64S(0, 0, 0, 0), I64S(1, 1), 2, 1);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "smaller than the dilated kernel");
    glow_value x8 = in(GLOW_F32, 4, DIMS(1, 1, 8, 8)), w3 = in(GLOW_F32, 4, DIMS(1, 1, 3, 3));
    n = build(NK_CONV, "kern", (glow_value[]){ x8, w3 }, 2,
              ATTRS(AINTS(KERNEL, 3, 3), AINTS(STRIDES, 1), AINTS(PADS, 0, 0, 0, 0),
                    AINTS(DILATIONS, 1, 1), GLOW_AI(GROUP, 1)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "'strides' has 1 values, expected 2");
    n = conv("int", in(GLOW_I32, 4, DIMS(1, 1, 8, 8)), in(GLOW_I32, 4, DIMS(1, 1, 3, 3)),
             I64S(3, 3), I64S(1, 1), I64S(0, 0, 0, 0), I64S(1, 1), 2, 1);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Conv 'int': input i32[1, 1, 8, 8] must be a floating-point tensor");
    /* A failed build leaves nothing behind. */
    uint32_t before = f->nodes.count;
    CHECK(!conv("gone", x, w, I64S(5, 5), I64S(1, 1), I64S(0, 0, 0, 0), I64S(1, 1), 2, 1));
    CHECK_CONTAINS(d.msg, "Conv 'gone': weight f32[64, 3, 7, 7] spatial dim 0 is 7");
    CHECK_EQ(f->nodes.count, before);
}

static void test_conv_transpose(void)
{
    glow_value x = in(GLOW_F32, 4, DIMS(1, 2, 3, 3)), w = in(GLOW_F32, 4, DIMS(2, 3, 3, 3));
    glow_attr a[] = { AINTS(KERNEL, 3, 3), AINTS(STRIDES, 2, 2), AINTS(PADS, 0, 0, 0, 0),
                      AINTS(DILATIONS, 1, 1), GLOW_AI(GROUP, 1), AINTS(OUTPUT_PADDING, 1, 1) };
    glow_value ins[] = { x, w };
    glow_type t7 = glow_type_make(GLOW_F32, 4, DIMS(1, 3, 7, 7));
    glow_type t8 = glow_type_make(GLOW_F32, 4, DIMS(1, 3, 8, 8));
    glow_type t9 = glow_type_make(GLOW_F32, 4, DIMS(1, 3, 9, 9));
    glow_diag_clear(&d);
    glow_node *n = glow_build(f, NK_CONV_TRANSPOSE, "ct", ins, 2, a, 6, &t7, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 7, 7]");
    n = glow_build(f, NK_CONV_TRANSPOSE, "ct8", ins, 2, a, 6, &t8, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 8, 8]");
    n = build(NK_CONV_TRANSPOSE, "ctnone", ins, 2, a, 6);   /* no declared type */
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 8, 8]");
    n = glow_build(f, NK_CONV_TRANSPOSE, "ct9", ins, 2, a, 6, &t9, 1, &d);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "ConvTranspose 'ct9': declared result f32[1, 3, 9, 9] spatial dim 0 "
                          "should be 7 (up to 8 with output_padding)");
}

static void test_pool(void)
{
    glow_value x = in(GLOW_F32, 4, DIMS(1, 3, 32, 32));
    glow_attr a[] = { AINTS(KERNEL, 2, 2), AINTS(STRIDES, 2, 2), AINTS(PADS, 0, 0, 0, 0),
                      AINTS(DILATIONS, 1, 1), GLOW_AI(COUNT_INCLUDE_PAD, 1) };
    glow_node *n = build(NK_MAX_POOL, "mp", &x, 1, a, 4);
    CHECK_EQ(n ? n->nout : 0, 2);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 16, 16]");
    CHECK_STR_EQ(ty(n, 1), "i64[1, 3, 16, 16]");
    glow_diag_clear(&d);
    n = glow_build(f, NK_MAX_POOL, "mp1", &x, 1, a, 4, NULL, 1, &d);   /* values only */
    CHECK_EQ(n ? n->nout : 0, 1);
    glow_attr b[] = { AINTS(KERNEL, 3, 3), AINTS(STRIDES, 1, 1), AINTS(PADS, 1, 1, 1, 1),
                      AINTS(DILATIONS, 1, 1), GLOW_AI(COUNT_INCLUDE_PAD, 1) };
    n = build(NK_AVG_POOL, "ap", &x, 1, b, 5);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 32, 32]");
    /* Floor rounding: (7 + 0 + 1 - 3) / 2 + 1 = 3. */
    glow_value x7 = in(GLOW_F32, 3, DIMS(1, 1, 7));
    glow_attr c[] = { AINTS(KERNEL, 3), AINTS(STRIDES, 2), AINTS(PADS, 0, 1), AINTS(DILATIONS, 1),
                      GLOW_AI(COUNT_INCLUDE_PAD, 0) };
    n = build(NK_AVG_POOL, "ap1d", &x7, 1, c, 5);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 1, 3]");
    n = build(NK_AVG_POOL, "ap_noattr", &x, 1, b, 4);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "AveragePool 'ap_noattr': missing required attribute "
                          "'count_include_pad'");
}

static void test_matmul_norm(void)
{
    glow_value a = in(GLOW_F32, 4, DIMS(2, 3, 4, 5)), b = in(GLOW_F32, 4, DIMS(2, 3, 5, 6));
    glow_node *n = build(NK_MATMUL, "mm", (glow_value[]){ a, b }, 2, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3, 4, 6]");
    glow_value b2 = in(GLOW_F32, 4, DIMS(1, 3, 5, 6));
    n = build(NK_MATMUL, "mmb", (glow_value[]){ a, b2 }, 2, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "MatMul 'mmb': operand A f32[2, 3, 4, 5] and operand B "
                          "f32[1, 3, 5, 6] differ in batch dim 0");

    glow_value ga = in(GLOW_F32, 2, DIMS(4, 3)), gb = in(GLOW_F32, 2, DIMS(5, 4));
    glow_value gc = in(GLOW_F32, 2, DIMS(3, 5));
    n = build(NK_GEMM, "gemm", (glow_value[]){ ga, gb, gc }, 3,
              ATTRS(GLOW_AF(ALPHA, 1), GLOW_AF(BETA, 1), GLOW_AI(TRANS_A, 1), GLOW_AI(TRANS_B, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[3, 5]");
    n = build(NK_GEMM, "gemm2", (glow_value[]){ ga, gb, gc }, 3,
              ATTRS(GLOW_AF(ALPHA, 1), GLOW_AF(BETA, 1), GLOW_AI(TRANS_A, 0), GLOW_AI(TRANS_B, 1)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Gemm 'gemm2': operand A f32[4, 3] has K = 3");

    n = build(NK_FULLY_CONNECTED, "fc",
              (glow_value[]){ in(GLOW_F32, 2, DIMS(8, 16)), in(GLOW_F32, 2, DIMS(16, 10)),
                              in(GLOW_F32, 1, DIMS(10)) }, 3, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "f32[8, 10]");

    glow_value x = in(GLOW_F32, 4, DIMS(2, 3, 4, 4)), p = in(GLOW_F32, 1, DIMS(3));
    n = build(NK_BATCH_NORM, "bn", (glow_value[]){ x, p, p, p, p }, 5,
              ATTRS(GLOW_AF(EPSILON, 1e-5)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3, 4, 4]");
    glow_value p4 = in(GLOW_F32, 1, DIMS(4));
    n = build(NK_BATCH_NORM, "bn2", (glow_value[]){ x, p, p, p4, p }, 5,
              ATTRS(GLOW_AF(EPSILON, 1e-5)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "BatchNormalization 'bn2': mean f32[4] must have shape [3]");

    glow_value lx = in(GLOW_F32, 3, DIMS(2, 5, 8)), ls = in(GLOW_F32, 1, DIMS(8));
    n = build(NK_LAYER_NORM, "ln", (glow_value[]){ lx, ls, ls }, 3,
              ATTRS(GLOW_AI(AXIS, 2), GLOW_AF(EPSILON, 1e-5)));
    CHECK_EQ(n ? n->nout : 0, 3);
    CHECK_STR_EQ(ty(n, 0), "f32[2, 5, 8]");
    CHECK_STR_EQ(ty(n, 1), "f32[2, 5, 1]");
    CHECK_STR_EQ(ty(n, 2), "f32[2, 5, 1]");
    n = build(NK_SOFTMAX, "sm", &lx, 1, ATTRS(GLOW_AI(AXIS, 3)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Softmax 'sm': 'axis' = 3 is outside [0, 3)");
}

static void test_elementwise(void)
{
    glow_value a = in(GLOW_F32, 2, DIMS(2, 3)), b = in(GLOW_F32, 2, DIMS(2, 3));
    glow_value c = in(GLOW_F32, 2, DIMS(3, 2)), bl = in(GLOW_BOOL, 2, DIMS(2, 3));
    glow_value i = in(GLOW_I32, 2, DIMS(2, 3));
    glow_node *n = build(NK_ADD, "add", (glow_value[]){ a, b }, 2, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3]");
    n = build(NK_ADD, "add2", (glow_value[]){ a, c }, 2, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Add 'add2': operand 1 f32[3, 2] does not have the shape of "
                          "operand 0 f32[2, 3]");
    n = build(NK_ADD, "add3", (glow_value[]){ a, i }, 2, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "differ in element kind");
    n = build(NK_LESS, "lt", (glow_value[]){ a, b }, 2, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "bool[2, 3]");
    n = build(NK_AND, "and", (glow_value[]){ a, b }, 2, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "And 'and': operand 0 f32[2, 3] must be bool");
    n = build(NK_AND, "and2", (glow_value[]){ bl, bl }, 2, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "bool[2, 3]");
    n = build(NK_WHERE, "where", (glow_value[]){ bl, a, b }, 3, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3]");
    n = build(NK_WHERE, "where2", (glow_value[]){ a, a, b }, 3, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Where 'where2': condition f32[2, 3] must be bool");
    n = build(NK_ISNAN, "isnan", &a, 1, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "bool[2, 3]");
    n = build(NK_SIGMOID, "sig", &i, 1, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Sigmoid 'sig': operand 0 i32[2, 3] must be a floating-point tensor");
    n = build(NK_RELU, "relu_i", &i, 1, NULL, 0);
    CHECK_STR_EQ(ty(n, 0), "i32[2, 3]");
    n = build(NK_ELU, "elu", &a, 1, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Elu 'elu': missing required attribute 'alpha'");
    n = build(NK_ADD, "add1", &a, 1, NULL, 0);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Add 'add1': has 1 operands, expected 2");
    glow_type t = glow_type_make(GLOW_I64, 2, DIMS(2, 3));
    glow_diag_clear(&d);
    n = glow_build(f, NK_CAST, "cast", &a, 1, NULL, 0, &t, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "i64[2, 3]");
}

static void test_shape(void)
{
    glow_value x = in(GLOW_F32, 3, DIMS(2, 3, 4));
    glow_type t = glow_type_make(GLOW_F32, 2, DIMS(6, 4));
    glow_diag_clear(&d);
    glow_node *n = glow_build(f, NK_RESHAPE, "rs", &x, 1, NULL, 0, &t, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "f32[6, 4]");
    t = glow_type_make(GLOW_F32, 2, DIMS(5, 5));
    n = glow_build(f, NK_RESHAPE, "rs2", &x, 1, NULL, 0, &t, 1, &d);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Reshape 'rs2': declared result f32[5, 5] has 25 elements, operand "
                          "f32[2, 3, 4] has 24");
    glow_value y = in(GLOW_F32, 2, DIMS(3, 1));
    t = glow_type_make(GLOW_F32, 3, DIMS(2, 3, 4));
    glow_diag_clear(&d);
    n = glow_build(f, NK_BROADCAST, "bc", &y, 1, NULL, 0, &t, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3, 4]");
    t = glow_type_make(GLOW_F32, 2, DIMS(2, 4));
    n = glow_build(f, NK_BROADCAST, "bc2", &y, 1, NULL, 0, &t, 1, &d);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "cannot broadcast");

    n = build(NK_TRANSPOSE, "tr", &x, 1, ATTRS(AINTS(PERM, 2, 0, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[4, 2, 3]");
    glow_value x2 = in(GLOW_F32, 3, DIMS(2, 5, 4));
    n = build(NK_CONCAT, "cat", (glow_value[]){ x, x2, x }, 3, ATTRS(GLOW_AI(AXIS, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 11, 4]");
    n = build(NK_CONCAT, "cat2", (glow_value[]){ x, x2 }, 2, ATTRS(GLOW_AI(AXIS, 2)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Concat 'cat2': operand 1 f32[2, 5, 4] does not match operand 0");

    glow_value v = in(GLOW_F32, 2, DIMS(10, 6));
    n = build(NK_SLICE, "sl", &v, 1,
              ATTRS(AINTS(STARTS, 9, 1), AINTS(ENDS, -1, 6), AINTS(STEPS, -2, 2)));
    CHECK_STR_EQ(ty(n, 0), "f32[5, 3]");
    n = build(NK_SLICE, "sl2", &v, 1,
              ATTRS(AINTS(STARTS, 8, 4), AINTS(ENDS, 2, 2), AINTS(STEPS, -3, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 0]");
    n = build(NK_SLICE, "sl3", &v, 1,
              ATTRS(AINTS(STARTS, 0, 0), AINTS(ENDS, 11, 6), AINTS(STEPS, 1, 1)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Slice 'sl3': dim 0: start 0, end 11, step 1 is not a clamped slice");

    n = build(NK_PAD, "pad", &v, 1,
              ATTRS(AINTS(PADS, 1, 0, 1, -1), GLOW_ASTR(MODE, "constant"), GLOW_AF(VALUE, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[12, 5]");
    n = build(NK_TILE, "tile", &v, 1, ATTRS(AINTS(REPEATS, 2, 3)));
    CHECK_STR_EQ(ty(n, 0), "f32[20, 18]");

    glow_value data = in(GLOW_F32, 3, DIMS(5, 4, 3));
    glow_value idx = in(GLOW_I64, 2, DIMS(2, 6)), idx32 = in(GLOW_I32, 1, DIMS(7));
    glow_value fidx = in(GLOW_F32, 1, DIMS(2));
    n = build(NK_GATHER, "g", (glow_value[]){ data, idx }, 2, ATTRS(GLOW_AI(AXIS, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[5, 2, 6, 3]");
    n = build(NK_GATHER, "g32", (glow_value[]){ data, idx32 }, 2, ATTRS(GLOW_AI(AXIS, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[7, 4, 3]");
    n = build(NK_GATHER, "gf", (glow_value[]){ data, fidx }, 2, ATTRS(GLOW_AI(AXIS, 0)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Gather 'gf': indices f32[2] must be i32 or i64");
    glow_value nd = in(GLOW_F32, 3, DIMS(2, 3, 4)), ndi = in(GLOW_I64, 2, DIMS(2, 1));
    n = build(NK_GATHER_ND, "gnd", (glow_value[]){ nd, ndi }, 2, ATTRS(GLOW_AI(BATCH_DIMS, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 4]");
    n = build(NK_GATHER_ND, "gnd0", (glow_value[]){ nd, ndi }, 2, ATTRS(GLOW_AI(BATCH_DIMS, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3, 4]");

    glow_value dd = in(GLOW_F32, 4, DIMS(1, 8, 2, 3));
    n = build(NK_DEPTH_TO_SPACE, "d2s", &dd, 1,
              ATTRS(GLOW_AI(BLOCKSIZE, 2), GLOW_ASTR(MODE, "DCR")));
    CHECK_STR_EQ(ty(n, 0), "f32[1, 2, 4, 6]");
    n = build(NK_SPACE_TO_DEPTH, "s2d", &dd, 1, ATTRS(GLOW_AI(BLOCKSIZE, 2)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "not multiples of blocksize 2");
}

static void test_reduce(void)
{
    glow_value x = in(GLOW_F32, 3, DIMS(2, 3, 4));
    glow_node *n = build(NK_REDUCE_SUM, "rs1", &x, 1,
                         ATTRS(AINTS(AXES, 1), GLOW_AI(KEEPDIMS, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 1, 4]");
    n = build(NK_REDUCE_MEAN, "rs0", &x, 1, ATTRS(AINTS(AXES, 0, 2), GLOW_AI(KEEPDIMS, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[3]");
    n = build(NK_REDUCE_MAX, "rsall", &x, 1,
              ATTRS(AINTS(AXES, 0, 1, 2), GLOW_AI(KEEPDIMS, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[]");
    n = build(NK_REDUCE_MAX, "rsbad", &x, 1, ATTRS(AINTS(AXES, 2, 1), GLOW_AI(KEEPDIMS, 0)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "ReduceMax 'rsbad': 'axes' must be sorted");
    n = build(NK_ARG_MAX, "am", &x, 1,
              ATTRS(GLOW_AI(AXIS, 2), GLOW_AI(KEEPDIMS, 0), GLOW_AI(SELECT_LAST, 0)));
    CHECK_STR_EQ(ty(n, 0), "i64[2, 3]");
    glow_value t = in(GLOW_F32, 2, DIMS(3, 10));
    n = build(NK_TOPK, "topk", &t, 1,
              ATTRS(GLOW_AI(AXIS, 1), GLOW_AI(K, 4), GLOW_AI(LARGEST, 1), GLOW_AI(SORTED, 1)));
    CHECK_EQ(n ? n->nout : 0, 2);
    CHECK_STR_EQ(ty(n, 0), "f32[3, 4]");
    CHECK_STR_EQ(ty(n, 1), "i64[3, 4]");
    n = build(NK_TOPK, "topk2", &t, 1,
              ATTRS(GLOW_AI(AXIS, 1), GLOW_AI(K, 11), GLOW_AI(LARGEST, 1), GLOW_AI(SORTED, 1)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "TopK 'topk2': k 11 is outside [0, 10]");
    n = build(NK_CUMSUM, "cs", &t, 1,
              ATTRS(GLOW_AI(AXIS, 1), GLOW_AI(EXCLUSIVE, 0), GLOW_AI(REVERSE, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[3, 10]");
}

static void test_more_families(void)
{
    glow_value x = in(GLOW_F32, 4, DIMS(2, 6, 4, 4)), c6 = in(GLOW_F32, 1, DIMS(6));
    glow_value g3 = in(GLOW_F32, 1, DIMS(3)), c5 = in(GLOW_F32, 1, DIMS(5));
    glow_node *n = build(NK_GROUP_NORM, "gn", (glow_value[]){ x, c6, c6 }, 3,
                         ATTRS(GLOW_AF(EPSILON, 1e-5), GLOW_AI(NUM_GROUPS, 3)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 6, 4, 4]");
    n = build(NK_GROUP_NORM, "gn3", (glow_value[]){ x, g3, g3 }, 3,
              ATTRS(GLOW_AF(EPSILON, 1e-5), GLOW_AI(NUM_GROUPS, 3)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 6, 4, 4]");
    n = build(NK_GROUP_NORM, "gn4", (glow_value[]){ x, c6, c6 }, 3,
              ATTRS(GLOW_AF(EPSILON, 1e-5), GLOW_AI(NUM_GROUPS, 4)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "GroupNormalization 'gn4': num_groups 4 does not divide the 6 channels");
    n = build(NK_INSTANCE_NORM, "in", (glow_value[]){ x, c6, c5 }, 3,
              ATTRS(GLOW_AF(EPSILON, 1e-5)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "InstanceNormalization 'in': bias f32[5] must have shape [6]");
    n = build(NK_LRN, "lrn", &x, 1, ATTRS(GLOW_AI(SIZE, 3), GLOW_AF(ALPHA, 1e-4),
                                          GLOW_AF(BETA, 0.75), GLOW_AF(BIAS, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 6, 4, 4]");

    glow_value ix = in(GLOW_I64, 2, DIMS(2, 3)), dep = in(GLOW_I64, 0, NULL);
    glow_value vals = in(GLOW_F32, 1, DIMS(2));
    n = build(NK_ONE_HOT, "oh", (glow_value[]){ ix, dep, vals }, 3,
              ATTRS(GLOW_AI(AXIS, 1), GLOW_AI(DEPTH, 10)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 10, 3]");

    glow_value seq = in(GLOW_F32, 3, DIMS(4, 2, 5)), lens = in(GLOW_I64, 1, DIMS(2));
    n = build(NK_REVERSE_SEQUENCE, "rs", (glow_value[]){ seq, lens }, 2,
              ATTRS(GLOW_AI(TIME_AXIS, 0), GLOW_AI(BATCH_AXIS, 1)));
    CHECK_STR_EQ(ty(n, 0), "f32[4, 2, 5]");
    n = build(NK_REVERSE_SEQUENCE, "rs2", (glow_value[]){ seq, lens }, 2,
              ATTRS(GLOW_AI(TIME_AXIS, 1), GLOW_AI(BATCH_AXIS, 0)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "ReverseSequence 'rs2': sequence_lens i64[2] must have shape [4]");

    glow_value data = in(GLOW_F32, 2, DIMS(3, 3)), ei = in(GLOW_I64, 2, DIMS(2, 3));
    glow_value eu = in(GLOW_F32, 2, DIMS(2, 3));
    n = build(NK_GATHER_ELEMENTS, "ge", (glow_value[]){ data, ei }, 2, ATTRS(GLOW_AI(AXIS, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[2, 3]");
    n = build(NK_SCATTER_ELEMENTS, "se", (glow_value[]){ data, ei, eu }, 3,
              ATTRS(GLOW_AI(AXIS, 0), GLOW_ASTR(REDUCTION, "add")));
    CHECK_STR_EQ(ty(n, 0), "f32[3, 3]");
    glow_value nd = in(GLOW_F32, 3, DIMS(4, 4, 4)), ndi = in(GLOW_I64, 2, DIMS(2, 1));
    glow_value ndu = in(GLOW_F32, 3, DIMS(2, 4, 4)), bad = in(GLOW_F32, 2, DIMS(2, 4));
    n = build(NK_SCATTER_ND, "snd", (glow_value[]){ nd, ndi, ndu }, 3,
              ATTRS(GLOW_ASTR(REDUCTION, "none")));
    CHECK_STR_EQ(ty(n, 0), "f32[4, 4, 4]");
    n = build(NK_SCATTER_ND, "snd2", (glow_value[]){ nd, ndi, bad }, 3,
              ATTRS(GLOW_ASTR(REDUCTION, "none")));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "ScatterND 'snd2': updates f32[2, 4] must have shape");
    n = build(NK_SCATTER_ND, "snd3", (glow_value[]){ nd, ndi, ndu }, 3,
              ATTRS(GLOW_ASTR(REDUCTION, "sum")));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "'reduction' is \"sum\", expected one of: none add mul max min");

    glow_value img = in(GLOW_F32, 4, DIMS(1, 3, 5, 5));
    const float sc[] = { 1, 1, 2, 2.5f };
    glow_attr ra[] = { GLOW_AFLOATS(SCALES, sc, 4), GLOW_ASTR(MODE, "nearest"),
                       GLOW_ASTR(COORD_MODE, "asymmetric"), GLOW_ASTR(NEAREST_MODE, "floor"),
                       GLOW_AF(CUBIC_COEFF_A, -0.75), GLOW_AI(EXCLUDE_OUTSIDE, 0),
                       GLOW_AF(EXTRAPOLATION_VALUE, 0) };
    n = build(NK_RESIZE, "rsz", &img, 1, ra, 7);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 10, 12]");
    glow_type t = glow_type_make(GLOW_F32, 4, DIMS(1, 3, 10, 13));
    glow_diag_clear(&d);
    n = glow_build(f, NK_RESIZE, "rsz2", &img, 1, ra, 7, &t, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "f32[1, 3, 10, 13]");
    t.dims[2] = 12;
    n = glow_build(f, NK_RESIZE, "rsz3", &img, 1, ra, 7, &t, 1, &d);
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Resize 'rsz3': declared result f32[1, 3, 12, 13] does not match");

    n = build(NK_TRILU, "tri", &data, 1, ATTRS(GLOW_AI(UPPER, 1), GLOW_AI(K, 0)));
    CHECK_STR_EQ(ty(n, 0), "f32[3, 3]");
    n = build(NK_TRILU, "tri1", &c6, 1, ATTRS(GLOW_AI(UPPER, 1), GLOW_AI(K, 0)));
    CHECK(!n);
    CHECK_CONTAINS(d.msg, "Trilu 'tri1': input f32[6] has rank 1, expected 2 to 8");
}

/* Quantized results take scale and offset from the declared type; glow_infer_types rewrites
 * a node's result types in place. */
static void test_quant_and_reinfer(void)
{
    glow_type tx = glow_type_make(GLOW_I8Q, 4, DIMS(1, 2, 4, 4));
    tx.scale = 0.5f;
    glow_type tw = glow_type_make(GLOW_I8Q, 4, DIMS(3, 2, 1, 1));
    tw.scale = 0.25f;
    glow_value x = glow_val(glow_placeholder_create(m, "qx", &tx, true), 0);
    glow_value w = glow_val(glow_placeholder_create(m, "qw", &tw, true), 0);
    glow_type out = glow_type_make(GLOW_I8Q, 4, DIMS(1, 3, 4, 4));
    out.scale = 0.125f;
    out.offset = 3;
    glow_attr a[] = { AINTS(KERNEL, 1, 1), AINTS(STRIDES, 1, 1), AINTS(PADS, 0, 0, 0, 0),
                      AINTS(DILATIONS, 1, 1), GLOW_AI(GROUP, 1) };
    glow_diag_clear(&d);
    glow_node *n = glow_build(f, NK_CONV, "qconv", (glow_value[]){ x, w }, 2, a, 5, &out, 1, &d);
    CHECK_STR_EQ(ty(n, 0), "i8q[1, 3, 4, 4]:0.125:3");
    glow_value qv = glow_val(n, 0);
    glow_node *r = build(NK_RELU, "qrelu", &qv, 1, NULL, 0);
    CHECK_STR_EQ(ty(r, 0), "i8q[1, 3, 4, 4]:0.125:3");

    glow_value y = in(GLOW_F32, 2, DIMS(2, 2));
    glow_node *e = build(NK_EXP, "exp", &y, 1, NULL, 0);
    CHECK(e != NULL);
    if (e) {
        e->outs[0].dims[0] = 7;
        glow_diag_clear(&d);
        CHECK_EQ(glow_infer_types(e, &d), GLOW_OK);
        CHECK_STR_EQ(ty(e, 0), "f32[2, 2]");
    }
}

int main(void)
{
    m = glow_module_create();
    f = glow_function_create(m, "main");
    test_conv();
    test_conv_transpose();
    test_pool();
    test_matmul_norm();
    test_elementwise();
    test_shape();
    test_reduce();
    test_more_families();
    test_quant_and_reinfer();
    /* Everything glow_build accepted passes the verifier. */
    glow_diag_clear(&d);
    CHECK_EQ(glow_function_verify(f, &d), GLOW_OK);
    if (d.status != GLOW_OK)
        fprintf(stderr, "%s\n", d.msg);
    glow_module_destroy(m);
    return CHECK_DONE();
}
