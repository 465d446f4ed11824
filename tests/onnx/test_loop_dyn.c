// test_loop_dyn.c - A Loop with scan outputs whose body may stop it early (a decoder's loop:
// cond = i + 1 < k with k an input) and a trip count M = 100 known at import: one LOOP node
// whose scan outputs are bounded by M with the iterations run as their count
// (docs/dynamic-shapes.md). Checked at import (the graph outputs carry that count on axis 0)
// and run on the interpreter and the cpu backend with k = 50, 3, 100 and 150 (stopped by M),
// in that order so that a shorter run follows a longer one: each output, and a Mul consuming
// a scan output, has k (at most 100) rows with exact values. Without M the Loop stays refused.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

#define M_TRIPS 100

/* Loop(M, true, y0 = 0) over body: ynext = y + x, cout = i + 1 < k; scan outputs ynext and
 * i as f32. Graph outputs y (carried), ys [<=M, 2], is [<=M], twice = ys * 2. With `with_m`
 * false, M is absent (no bound for the scans). */
static mk_model *decoder(bool with_m, mk_model **body_out)
{
    mk_model *mk = mk_new(13), *body = mk_new(13);
    mk_input(mk, "k", MK_I64, 0, NULL);
    mk_input(mk, "x", MK_F32, 1, D(2));
    int64_t m = M_TRIPS, one = 1;
    uint8_t t = 1;
    float y0[2] = { 0, 0 }, two = 2;
    mk_initializer(mk, mk_tensor_raw(mk, "M", MK_I64, 0, NULL, &m, 8));
    mk_initializer(mk, mk_tensor_raw(mk, "T", MK_BOOL, 0, NULL, &t, 1));
    mk_initializer(mk, mk_tensor_raw(mk, "y0", MK_F32, 1, D(2), y0, sizeof y0));
    mk_initializer(mk, mk_tensor_raw(mk, "two", MK_F32, 0, NULL, &two, 4));
    mk_initializer(body, mk_tensor_raw(body, "one", MK_I64, 0, NULL, &one, 8));
    mk_input(body, "i", MK_I64, 0, NULL);
    mk_input(body, "cin", MK_BOOL, 0, NULL);
    mk_input(body, "y", MK_F32, 1, D(2));
    mk_node(body, "Add", "next_i", 2, S("i", "one"), 1, S("i1"));
    mk_node(body, "Less", "more", 2, S("i1", "k"), 1, S("cout"));
    mk_node(body, "Add", "acc", 2, S("y", "x"), 1, S("ynext"));
    Onnx__NodeProto *c = mk_node(body, "Cast", "fi", 1, S("i"), 1, S("fi"));
    mk_attr_int(body, c, "to", MK_F32);
    mk_output(body, "cout", MK_BOOL, 0, NULL);
    mk_output(body, "ynext", MK_F32, 1, D(2));
    mk_output(body, "ynext", MK_F32, 1, D(2));
    mk_output(body, "fi", MK_F32, 0, NULL);
    Onnx__NodeProto *n = mk_node(mk, "Loop", "decode", 3, S(with_m ? "M" : "", "T", "y0"),
                                 3, S("y", "ys", "is"));
    Onnx__AttributeProto *a = mk_attr(mk, n, "body", 5);
    a->g = &body->graph;
    mk_node(mk, "Mul", "double", 2, S("ys", "two"), 1, S("twice"));
    mk_output(mk, "y", MK_F32, 1, D(2));
    mk_output(mk, "ys", MK_F32, 2, D(M_TRIPS, 2));
    mk_output(mk, "is", MK_F32, 1, D(M_TRIPS));
    mk_output(mk, "twice", MK_F32, 2, D(M_TRIPS, 2));
    *body_out = body;
    return mk;
}

/* The import: one LOOP node with a last i64 [] result, and the scan outputs' placeholders
 * (and the Mul's) counted by it on axis 0, the carried one not. */
static void check_import(glow_module *m)
{
    const glow_node *loop = NULL;
    int loops = 0;
    GLOW_FOR_EACH_NODE(glow_module_function(m, "main"), n) {
        if (n->kind == NK_LOOP)
            loop = n, loops++;
    }
    CHECK_EQ(loops, 1);
    if (!loop)
        return;
    CHECK_EQ(loop->nout, 4u);
    CHECK_EQ(loop->outs[3].dtype, GLOW_I64);
    CHECK_EQ(loop->outs[3].rank, 0);
    CHECK_EQ(loop->outs[1].dims[0], M_TRIPS);
    const char *counted[] = { "ys", "is", "twice" };
    for (int i = 0; i < 3; i++) {
        const glow_node *ph = NULL;
        for (glow_node *n = m->placeholders.first; n; n = n->next)
            if (strcmp(n->name, counted[i]) == 0)
                ph = n;
        CHECK(ph && ph->count && ph->count_axis == 0);
    }
    for (glow_node *n = m->placeholders.first; n; n = n->next)
        if (strcmp(n->name, "y") == 0)
            CHECK(!n->count);
}

static bool out_is(glow_program *p, int i, const char *want)
{
    char buf[96];
    glow_tensor t = glow_program_output(p, i);
    CHECK_STR_EQ(glow_type_str(&t.type, buf, sizeof buf), want);
    return strcmp(buf, want) == 0;
}

static void run_k(glow_program *p, int64_t k)
{
    int64_t rows = k < M_TRIPS ? k : M_TRIPS;
    float xv[2] = { 1, 0.5f };
    glow_type kt = glow_type_scalar(GLOW_I64), xt = glow_type_make(GLOW_F32, 1, D(2));
    glow_tensor ins[2] = { glow_tensor_borrow(&kt, &k), glow_tensor_borrow(&xt, xv) };
    glow_diag d = { 0 };
    CHECK_EQ(glow_program_run(p, ins, 2, &d), GLOW_OK);
    char ys_t[32], is_t[32];
    snprintf(ys_t, sizeof ys_t, "f32[%lld, 2]", (long long)rows);
    snprintf(is_t, sizeof is_t, "f32[%lld]", (long long)rows);
    if (!out_is(p, 0, "f32[2]") || !out_is(p, 1, ys_t) || !out_is(p, 2, is_t) ||
        !out_is(p, 3, ys_t)) {
        fprintf(stderr, "k = %lld\n", (long long)k);
        return;
    }
    const float *y = glow_program_output(p, 0).data, *ys = glow_program_output(p, 1).data;
    const float *is = glow_program_output(p, 2).data, *tw = glow_program_output(p, 3).data;
    CHECK_EQ(y[0], (float)rows);
    CHECK_EQ(y[1], 0.5f * (float)rows);
    int bad = 0;
    for (int64_t t = 0; t < rows; t++) {
        float a = (float)(t + 1), b = 0.5f * (float)(t + 1);
        bad += ys[2 * t] != a || ys[2 * t + 1] != b || is[t] != (float)t ||
               tw[2 * t] != 2 * a || tw[2 * t + 1] != 2 * b;
    }
    CHECK_EQ(bad, 0);
}

static void test_decoder(const char *backend)
{
    mk_model *body, *mk = decoder(true, &body);
    glow_diag d = { 0 };
    glow_module *m = mk_load(mk, &d);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "decoder loop: %s\n", d.msg);
        mk_free(mk), mk_free(body);
        return;
    }
    check_import(m);
    glow_compile_options o = { .backend = backend, .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    CHECK_EQ(glow_program_create(m, &o, &p, &d), GLOW_OK);
    if (p) {
        const int64_t ks[] = { 50, 3, 100, 150 };
        for (int i = 0; i < 4; i++)
            run_k(p, ks[i]);
        glow_program_destroy(p);
    } else {
        fprintf(stderr, "decoder loop on %s: %s\n", backend, d.msg);
    }
    mk_free(mk), mk_free(body);
}

/* Without M the scan outputs have no bound: refused with one line naming the node. */
static void test_no_bound(void)
{
    mk_model *body, *mk = decoder(false, &body);
    glow_diag d = { 0 };
    glow_module *m = mk_load(mk, &d);
    CHECK(m == NULL);
    CHECK_CONTAINS(d.msg, "Loop 'decode'");
    CHECK_CONTAINS(d.msg, "no bound");
    CHECK(!strchr(d.msg, '\n'));
    mk_free(mk), mk_free(body);
}

int main(void)
{
    test_decoder("interpreter");
    test_decoder("cpu");
    test_no_bound();
    return CHECK_DONE();
}
