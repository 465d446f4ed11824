// eval_check.h - Helpers shared by the evaluator tests: constants, nodes, evaluation, checks.
#ifndef GLOW_TEST_EVAL_CHECK_H
#define GLOW_TEST_EVAL_CHECK_H

#include "check.h"
#include "eval/eval.h"

static glow_module *M;
static glow_function *F;
static glow_diag D;
static int counter;

#define DIMS(...) ((const int64_t[]){ __VA_ARGS__ })

static inline glow_type ty(glow_dtype t, int rank, const int64_t *dims)
{
    return glow_type_make(t, rank, dims);
}

static inline glow_node *cst(glow_dtype t, int rank, const int64_t *dims, const void *data)
{
    char name[32];
    snprintf(name, sizeof name, "c%d", counter++);
    glow_type tt = ty(t, rank, dims);
    return glow_constant_create(M, name, &tt, data);
}

/* A node over constant operands with declared result types. */
static inline glow_node *mk(glow_node_kind k, int nin, glow_node *const *ins, int nout,
                            const glow_type *outs)
{
    glow_value v[8];
    for (int i = 0; i < nin; i++)
        v[i] = glow_val(ins[i], 0);
    return glow_node_create(F, k, glow_node_kind_name(k), v, nin, outs, nout);
}

static inline glow_node *mk1(glow_node_kind k, glow_node *a, glow_type out)
{
    return mk(k, 1, &a, 1, &out);
}

static inline glow_node *mk2(glow_node_kind k, glow_node *a, glow_node *b, glow_type out)
{
    glow_node *ins[2] = { a, b };
    return mk(k, 2, ins, 1, &out);
}

/* Evaluates n on its constants' payloads. */
static inline glow_status run(const glow_node *n, glow_tensor *outs)
{
    glow_tensor ins[8];
    for (uint32_t i = 0; i < n->nin; i++)
        ins[i] = n->ins[i].node->payload;
    glow_diag_clear(&D);
    return glow_eval_node(n, ins, outs, &D);
}

static inline double F64(const glow_tensor *t, size_t i)
{
    return glow_load_f64(t->type.dtype, t->data, i);
}

static inline int64_t I64(const glow_tensor *t, size_t i)
{
    return glow_load_i64(t->type.dtype, t->data, i);
}

/* Runs a one-result node and compares its values (as f64) and shape. */
static inline void expect_f(const glow_node *n, int count, const double *want, double tol, int line)
{
    glow_tensor out[2];
    glow_status s = run(n, out);
    if (s != GLOW_OK) {
        fprintf(stderr, "line %d: %s\n", line, D.msg);
        CHECK(s == GLOW_OK);
        return;
    }
    CHECK_EQ(glow_type_numel(&out[0].type), count);
    for (int i = 0; i < count; i++) {
        double got = F64(&out[0], (size_t)i);
        bool ok = isnan(want[i]) ? isnan(got) : got == want[i] || fabs(got - want[i]) <= tol;
        if (!ok)
            fprintf(stderr, "line %d: element %d is %.9g, expected %.9g\n", line, i, got,
                    want[i]);
        CHECK(ok);
    }
    for (uint32_t i = 0; i < n->nout; i++)
        glow_tensor_free(&out[i]);
}
#define EXPECT_F(n, tol, ...) \
    expect_f((n), sizeof((double[]){ __VA_ARGS__ }) / sizeof(double), \
             (const double[]){ __VA_ARGS__ }, (tol), __LINE__)
#define EXPECT(n, ...) EXPECT_F((n), 0, __VA_ARGS__)

#endif
