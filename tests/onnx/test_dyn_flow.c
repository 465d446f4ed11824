// test_dyn_flow.c - Bounded values (docs/dynamic-shapes.md) consumed by the ops that keep
// their compact layout: the indices a NonZero selects squeezed, used to Gather static rows,
// scaled, squared into indices whose padding would be out of range (so the importer's mask
// shows), and concatenated; and x[x > 0] as torch exports it (NonZero, Transpose, GatherND).
// Checked at import (the outputs carry the count on the right axis) and run on the interpreter
// and the cpu backend with three extents, the last empty. Consumers that would read the
// padding as data (a reduction, a Concat along the dynamic axis, a Flatten merging it) are
// refused with one line naming both nodes.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "glowc/glowc.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

/* x [6] -> idx = Squeeze(NonZero(x > 0)) [K] ->
 *   rows = Gather(table [6, 2], idx)                  table[r] = (10 r, 10 r + 1)
 *   sc   = Mul(Gather(x, idx), 2)
 *   sq   = Gather(data [20], idx * idx - 21)          data[k] = 10 k; negative wraps
 *   cat  = Concat(rows, Unsqueeze(sc, 1), axis 1)     [K, 3]
 * idx * idx - 21 is -21 in the padding, out of range for 20 rows: Gather must not read it. */
static mk_model *flow_model(void)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 1, D(6));
    float zero = 0, two = 2, table[12], data[20];
    for (int r = 0; r < 6; r++)
        table[2 * r] = 10.0f * (float)r, table[2 * r + 1] = 10.0f * (float)r + 1;
    for (int k = 0; k < 20; k++)
        data[k] = 10.0f * (float)k;
    int64_t ax0 = 0, ax1 = 1, c21 = 21;
    mk_initializer(mk, mk_tensor_raw(mk, "zero", MK_F32, 0, NULL, &zero, 4));
    mk_initializer(mk, mk_tensor_raw(mk, "two", MK_F32, 0, NULL, &two, 4));
    mk_initializer(mk, mk_tensor_raw(mk, "table", MK_F32, 2, D(6, 2), table, sizeof table));
    mk_initializer(mk, mk_tensor_raw(mk, "data", MK_F32, 1, D(20), data, sizeof data));
    mk_initializer(mk, mk_tensor_raw(mk, "ax0", MK_I64, 1, D(1), &ax0, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "ax1", MK_I64, 1, D(1), &ax1, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "c21", MK_I64, 0, NULL, &c21, 8));
    mk_node(mk, "Greater", "pos", 2, S("x", "zero"), 1, S("p"));
    mk_node(mk, "NonZero", "nz", 1, S("p"), 1, S("where"));
    mk_node(mk, "Squeeze", "squeeze", 2, S("where", "ax0"), 1, S("idx"));
    mk_node(mk, "Gather", "rows_of", 2, S("table", "idx"), 1, S("rows"));
    mk_node(mk, "Gather", "x_of", 2, S("x", "idx"), 1, S("xs"));
    mk_node(mk, "Mul", "scale", 2, S("xs", "two"), 1, S("sc"));
    mk_node(mk, "Mul", "square", 2, S("idx", "idx"), 1, S("ii"));
    mk_node(mk, "Sub", "shift", 2, S("ii", "c21"), 1, S("j"));
    mk_node(mk, "Gather", "data_of", 2, S("data", "j"), 1, S("sq"));
    mk_node(mk, "Unsqueeze", "col", 2, S("sc", "ax1"), 1, S("sc1"));
    Onnx__NodeProto *c = mk_node(mk, "Concat", "cat_of", 2, S("rows", "sc1"), 1, S("cat"));
    mk_attr_int(mk, c, "axis", 1);
    mk_output(mk, "rows", MK_F32, 2, D(6, 2));
    mk_output(mk, "sc", MK_F32, 1, D(6));
    mk_output(mk, "sq", MK_F32, 1, D(6));
    mk_output(mk, "cat", MK_F32, 2, D(6, 3));
    return mk;
}

static glow_node *placeholder(glow_module *m, const char *name)
{
    for (glow_node *n = m->placeholders.first; n; n = n->next)
        if (strcmp(n->name, name) == 0)
            return n;
    return NULL;
}

/* Import: every output is bounded, its count the NonZero's, on axis 0. */
static void test_import(void)
{
    mk_model *mk = flow_model();
    glow_diag d = { 0 };
    glow_module *m = mk_load(mk, &d);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "%s\n", d.msg);
        mk_free(mk);
        return;
    }
    const char *outs[] = { "rows", "sc", "sq", "cat" };
    for (int i = 0; i < 4; i++) {
        glow_node *ph = placeholder(m, outs[i]);
        CHECK(ph != NULL);
        if (!ph)
            continue;
        CHECK(ph->count != NULL && ph->count->hidden);
        CHECK_EQ(ph->count_axis, 0);
        CHECK_EQ(ph->outs[0].dims[0], 6);
    }
    glow_module_destroy(m);
    mk_free(mk);
}

static glow_tensor tensor_f32(int n, const float *vals)
{
    glow_type ty = glow_type_make(GLOW_F32, 1, D(n));
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &ty, &d);
    memcpy(x.data, vals, glow_tensor_bytes(&x));
    return x;
}

static void test_run(const char *backend)
{
    mk_model *mk = flow_model();
    glow_diag d = { 0 };
    glow_module *m = mk_load(mk, &d);
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED };
    if (m && glow_program_create(m, &o, &p, &d) != GLOW_OK)
        p = NULL;
    CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "%s: %s\n", backend, d.msg);
        mk_free(mk);
        return;
    }
    /* selected: {1, 3, 4}, then {4}, then none */
    const float xs[3][6] = { { -1, 2, 0, 4, 5, -6 }, { -1, -2, -3, -4, 3, -1 },
                             { -1, -2, -3, -4, -5, -6 } };
    const int sel[3][3] = { { 1, 3, 4 }, { 4 }, { 0 } };
    const int nsel[3] = { 3, 1, 0 };
    for (int run = 0; run < 3; run++) {
        glow_tensor x = tensor_f32(6, xs[run]);
        CHECK_EQ(glow_program_run(p, &x, 1, &d), GLOW_OK);
        glow_tensor rows = glow_program_output(p, 0), sc = glow_program_output(p, 1);
        glow_tensor sq = glow_program_output(p, 2), cat = glow_program_output(p, 3);
        int k = nsel[run];
        CHECK_EQ(rows.type.rank, 2);
        CHECK_EQ(rows.type.dims[0], k);
        CHECK_EQ(sc.type.dims[0], k);
        CHECK_EQ(sq.type.dims[0], k);
        CHECK_EQ(cat.type.dims[0], k);
        CHECK_EQ(cat.type.dims[1], 3);
        const float *rv = rows.data, *sv = sc.data, *qv = sq.data, *cv = cat.data;
        for (int i = 0; i < k && rows.type.dims[0] == k && cat.type.dims[0] == k; i++) {
            int r = sel[run][i];
            CHECK_EQ(rv[2 * i], 10.0f * (float)r);
            CHECK_EQ(rv[2 * i + 1], 10.0f * (float)r + 1);
            CHECK_EQ(sv[i], 2 * xs[run][r]);
            CHECK_EQ(qv[i], 10.0f * (float)(r * r - 1));
            CHECK_EQ(cv[3 * i], 10.0f * (float)r);
            CHECK_EQ(cv[3 * i + 1], 10.0f * (float)r + 1);
            CHECK_EQ(cv[3 * i + 2], 2 * xs[run][r]);
        }
        glow_tensor_free(&x);
    }
    glow_program_destroy(p);
    mk_free(mk);
}

/* The public API (docs/runtime-api.md): glowc_session_run writes the caller's bound-sized
 * buffers with the actual elements first and zeros after (sc's padding, 2 * x[0] in the bound,
 * would show otherwise); glowc_session_run_tensors gives the actual extent as the shape. */
static void test_api(void)
{
    mk_model *mk = flow_model();
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    glowc_session *s = NULL;
    CHECK_EQ(glowc_session_create_from_bytes(NULL, bytes, size, &s), GLOWC_OK);
    free(bytes);
    mk_free(mk);
    if (!s) {
        fprintf(stderr, "%s\n", glowc_last_error());
        return;
    }
    float x[6] = { -1, 2, 0, 4, 5, -6 }, sc[6];
    int64_t shape[1] = { 6 };
    memset(sc, 0xff, sizeof sc);
    glowc_value in = { NULL, GLOWC_F32, 1, shape, x, sizeof x };
    glowc_value out = { "sc", GLOWC_F32, 0, NULL, sc, sizeof sc };
    CHECK_EQ(glowc_session_run(s, &in, 1, &out, 1), GLOWC_OK);
    float want[6] = { 4, 8, 10, 0, 0, 0 };
    for (int i = 0; i < 6; i++)
        CHECK_EQ(sc[i], want[i]);
    glowc_tensor *t[4] = { NULL };
    CHECK_EQ(glowc_session_run_tensors(s, &in, 1, t), GLOWC_OK);
    if (t[1]) {
        CHECK_EQ(glowc_tensor_rank(t[1]), 1);
        CHECK_EQ(glowc_tensor_shape(t[1])[0], 3);
        CHECK_EQ(glowc_tensor_size_bytes(t[1]), 3 * sizeof(float));
        CHECK_EQ(((const float *)glowc_tensor_data(t[1]))[2], 10);
    }
    if (t[3])
        CHECK_EQ(glowc_tensor_shape(t[3])[0], 3);
    for (int k = 0; k < 4; k++)
        glowc_tensor_destroy(t[k]);
    glowc_session_destroy(s);
}

/* x[x > 0] as torch exports it: NonZero [2, K] (its axis not leading) -> Transpose -> GatherND;
 * also NonZero's column row by Gather (torch's nz[1]) and by Slice. Both move the elements out
 * of the compact prefix first (import_bnd.c relayout). */
static void test_boolean_index(const char *backend)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(2, 3));
    float zero = 0;
    int64_t one = 1, s1 = 1, e2 = 2, ax0 = 0;
    mk_initializer(mk, mk_tensor_raw(mk, "zero", MK_F32, 0, NULL, &zero, 4));
    mk_initializer(mk, mk_tensor_raw(mk, "one", MK_I64, 0, NULL, &one, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "s1", MK_I64, 1, D(1), &s1, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "e2", MK_I64, 1, D(1), &e2, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "ax0", MK_I64, 1, D(1), &ax0, 8));
    mk_node(mk, "Greater", "pos", 2, S("x", "zero"), 1, S("p"));
    mk_node(mk, "NonZero", "nz", 1, S("p"), 1, S("where"));
    mk_node(mk, "Transpose", "tr", 1, S("where"), 1, S("coords"));
    mk_node(mk, "GatherND", "pick", 2, S("x", "coords"), 1, S("picked"));
    mk_node(mk, "Gather", "col_of", 2, S("where", "one"), 1, S("cols"));
    mk_node(mk, "Slice", "col_sl", 4, S("where", "s1", "e2", "ax0"), 1, S("cols2"));
    mk_output(mk, "picked", MK_F32, 1, D(6));
    mk_output(mk, "cols", MK_I64, 1, D(6));
    mk_output(mk, "cols2", MK_I64, 2, D(1, 6));
    glow_diag d = { 0 };
    glow_module *m = mk_load(mk, &d);
    glow_program *p = NULL;
    glow_compile_options o = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED };
    if (m && glow_program_create(m, &o, &p, &d) != GLOW_OK)
        p = NULL;
    CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "%s: %s\n", backend, d.msg);
        mk_free(mk);
        return;
    }
    const float xs[3][6] = { { 1, -2, 0, 4, 5, -6 }, { -1, -2, 3, -4, -5, -6 },
                             { -1, -2, -3, -4, -5, -6 } };
    const float want[3][3] = { { 1, 4, 5 }, { 3 }, { 0 } };
    const int64_t wcol[3][3] = { { 0, 0, 1 }, { 2 }, { 0 } };
    const int nwant[3] = { 3, 1, 0 };
    for (int run = 0; run < 3; run++) {
        glow_type ty = glow_type_make(GLOW_F32, 2, D(2, 3));
        glow_tensor x;
        glow_tensor_alloc(&x, &ty, &d);
        memcpy(x.data, xs[run], sizeof xs[run]);
        CHECK_EQ(glow_program_run(p, &x, 1, &d), GLOW_OK);
        glow_tensor pk = glow_program_output(p, 0), cl = glow_program_output(p, 1);
        glow_tensor c2 = glow_program_output(p, 2);
        int k = nwant[run];
        CHECK_EQ(pk.type.dims[0], k);
        CHECK_EQ(cl.type.dims[0], k);
        CHECK_EQ(c2.type.rank, 2);
        CHECK_EQ(c2.type.dims[1], k);
        const float *pv = pk.data;
        const int64_t *cv = cl.data, *c2v = c2.data;
        for (int i = 0; i < k && pk.type.dims[0] == k && cl.type.dims[0] == k &&
                        c2.type.dims[1] == k; i++) {
            CHECK_EQ(pv[i], want[run][i]);
            CHECK_EQ(cv[i], wcol[run][i]);
            CHECK_EQ(c2v[i], wcol[run][i]);
        }
        glow_tensor_free(&x);
    }
    glow_program_destroy(p);
    mk_free(mk);
}

/* NonZero(x) [2, K] for a [1, 6] x, then `op` on it (with `in2` as its second input when
 * given, and `axis` when >= 0): refused, naming the consumer, its input, the producer and why. */
static void refused(const char *op, const char *in2, int axis, const char *why)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, D(1, 6));
    int64_t ax1 = 1;
    mk_initializer(mk, mk_tensor_raw(mk, "ax1", MK_I64, 1, D(1), &ax1, 8));
    mk_node(mk, "NonZero", "nz", 1, S("x"), 1, S("where"));   /* i64 [2, K] */
    Onnx__NodeProto *n = mk_node(mk, op, "use", in2 ? 2 : 1, S("where", in2), 1, S("y"));
    if (axis >= 0)
        mk_attr_int(mk, n, "axis", axis);
    mk_output(mk, "y", MK_I64, -1, NULL);
    glow_diag d = { 0 };
    glow_module *m = mk_load(mk, &d);
    CHECK(m == NULL);
    glow_module_destroy(m);
    CHECK_EQ(d.status, GLOW_ERR_UNSUPPORTED);
    char head[128];
    snprintf(head, sizeof head, "%s 'use'", op);
    CHECK_CONTAINS(d.msg, head);
    CHECK_CONTAINS(d.msg, "input 0 'where' has a data-dependent shape (a result of NonZero 'nz')");
    CHECK_CONTAINS(d.msg, why);
    mk_free(mk);
}

int main(void)
{
    test_import();
    test_run("interpreter");
    test_run("cpu");
    test_api();
    test_boolean_index("interpreter");
    test_boolean_index("cpu");
    refused("ReduceSum", "ax1", -1, "only to graph outputs and to the ops that keep its rows apart");
    refused("Concat", "where", 1, "Concat joins along the dynamic axis");
    refused("Flatten", NULL, 0, "its dynamic axis is not leading");
    return CHECK_DONE();
}
