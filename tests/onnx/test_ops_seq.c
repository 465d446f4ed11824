// test_ops_seq.c - Sequences and optionals resolved at import (src/onnx/onnx_seq.c,
// onnx_ops_seq.c) and their files (seq_file.c): in-memory models with sequence inputs and
// outputs are loaded with input_counts, compiled for the interpreter and run; the placeholders
// follow the naming rule, output_counts reports each output, the values are ONNX's; positions
// known only at run time, missing lengths, tensor ops on sequences and empty optionals fail
// naming the node or input; SequenceProto/OptionalProto files round-trip.
#include "check.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"
#include "testlib/onnx_build.h"

#define S(...) ((const char *[]){ __VA_ARGS__ })
#define D(...) ((int64_t[]){ __VA_ARGS__ })

/* A ValueInfoProto of type seq(tensor(elem)) (opt: optional(...) around it; opt_tensor: an
 * optional tensor instead). */
static Onnx__ValueInfoProto *container_vi(mk_model *mk, const char *name, int elem, bool opt,
                                          bool seq)
{
    Onnx__ValueInfoProto *vi = mk_value_info(mk, name, elem, -1, NULL, NULL);
    Onnx__TypeProto *t = vi->type;
    if (seq) {
        Onnx__TypeProto *s = mk_alloc(mk, sizeof *s);
        onnx__type_proto__init(s);
        Onnx__TypeProto__Sequence *sq = mk_alloc(mk, sizeof *sq);
        onnx__type_proto__sequence__init(sq);
        sq->elem_type = t;
        s->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        s->sequence_type = sq;
        t = s;
    }
    if (opt) {
        Onnx__TypeProto *o = mk_alloc(mk, sizeof *o);
        onnx__type_proto__init(o);
        Onnx__TypeProto__Optional *op = mk_alloc(mk, sizeof *op);
        onnx__type_proto__optional__init(op);
        op->elem_type = t;
        o->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
        o->optional_type = op;
        t = o;
    }
    vi->type = t;
    return vi;
}

static void seq_input(mk_model *mk, const char *name, int elem, bool opt, bool seq)
{
    mk_push(mk, (void ***)&mk->graph.input, &mk->graph.n_input,
            container_vi(mk, name, elem, opt, seq));
}

static void seq_output(mk_model *mk, const char *name, int elem, bool opt, bool seq)
{
    mk_push(mk, (void ***)&mk->graph.output, &mk->graph.n_output,
            container_vi(mk, name, elem, opt, seq));
}

static void const_i64(mk_model *mk, const char *name, int rank, const int64_t *dims,
                      const int64_t *vals, int n)
{
    mk_initializer(mk, mk_tensor_raw(mk, name, MK_I64, rank, dims, vals, (size_t)n * 8));
}

static glow_tensor f32(int rank, const int64_t *dims, const float *vals)
{
    glow_type t = glow_type_make(GLOW_F32, rank, dims);
    glow_tensor x;
    glow_diag d = { 0 };
    glow_tensor_alloc(&x, &t, &d);
    memcpy(x.data, vals, glow_tensor_bytes(&x));
    return x;
}

/* Loads mk with the given flat inputs and counts; out_counts receives the output counts. */
static glow_status load(mk_model *mk, const glow_tensor *ins, int nflat, const int *counts,
                        int ncounts, int *out_counts, int nout, glow_module *m, glow_diag *d)
{
    const glow_type *types[16];
    for (int i = 0; i < nflat; i++)
        types[i] = &ins[i].type;
    glow_onnx_options opt = { .input_types = types, .ninput_types = nflat,
                              .input_counts = counts, .ninput_counts = ncounts,
                              .output_counts = out_counts, .noutput_counts = nout };
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    glow_status s = glow_onnx_load_bytes(m, bytes, size, &opt, d);
    free(bytes);
    return s;
}

static bool values_are(glow_tensor t, int n, const float *want)
{
    if (glow_type_numel(&t.type) != n)
        return false;
    for (int i = 0; i < n; i++)
        if (((const float *)t.data)[i] != want[i])
            return false;
    return true;
}

/* x: seq of 3 f32[2]; Insert t at 0, Erase the last, At(1), Length, ConcatFromSequence
 * stacked on a new axis 0, and the edited sequence as an output. */
static void test_list_edits(void)
{
    mk_model *mk = mk_new(17);
    seq_input(mk, "x", MK_F32, false, true);
    mk_input(mk, "t", MK_F32, 1, D(2));
    const_i64(mk, "zero", 0, NULL, (int64_t[]){ 0 }, 1);
    const_i64(mk, "one", 0, NULL, (int64_t[]){ 1 }, 1);
    mk_node(mk, "SequenceInsert", NULL, 3, S("x", "t", "zero"), 1, S("a"));
    mk_node(mk, "SequenceErase", NULL, 1, S("a"), 1, S("b"));
    mk_node(mk, "SequenceAt", NULL, 2, S("b", "one"), 1, S("at"));
    mk_node(mk, "SequenceLength", NULL, 1, S("b"), 1, S("len"));
    Onnx__NodeProto *c = mk_node(mk, "ConcatFromSequence", NULL, 1, S("b"), 1, S("st"));
    mk_attr_int(mk, c, "axis", 0);
    mk_attr_int(mk, c, "new_axis", 1);
    seq_output(mk, "b", MK_F32, false, true);
    mk_output(mk, "at", MK_F32, 1, D(2));
    mk_output(mk, "len", MK_I64, 0, NULL);
    mk_output(mk, "st", MK_F32, 2, D(3, 2));

    float v[4][2] = { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 9, 9 } };
    glow_tensor ins[4] = { f32(1, D(2), v[0]), f32(1, D(2), v[1]), f32(1, D(2), v[2]),
                           f32(1, D(2), v[3]) };
    int counts[2] = { 3, 1 }, oc[4] = { 0 };
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, ins, 4, counts, 2, oc, 4, m, &d), GLOW_OK);
    /* Placeholders by the naming rule: x[0..2], t; outputs b[0..2], at, len, st. */
    const char *names[] = { "x[0]", "x[1]", "x[2]", "t", "b[0]", "b[1]", "b[2]", "at", "len",
                            "st" };
    int k = 0;
    for (glow_node *ph = m->placeholders.first; ph; ph = ph->next, k++)
        if (k < 10)
            CHECK_EQ(strcmp(ph->name, names[k]), 0);
    CHECK_EQ(k, 10);
    CHECK_EQ(oc[0], 3);
    CHECK_EQ(oc[1], 1);
    CHECK_EQ(oc[3], 1);
    glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    CHECK_EQ(glow_program_create(m, &copt, &p, &d), GLOW_OK);
    if (p) {
        CHECK_EQ(glow_program_run(p, ins, 4, &d), GLOW_OK);
        /* b = [t, x0, x1] */
        CHECK(values_are(glow_program_output(p, 0), 2, v[3]));
        CHECK(values_are(glow_program_output(p, 1), 2, v[0]));
        CHECK(values_are(glow_program_output(p, 2), 2, v[1]));
        CHECK(values_are(glow_program_output(p, 3), 2, v[0]));
        glow_tensor len = glow_program_output(p, 4);
        CHECK_EQ(((const int64_t *)len.data)[0], 3);
        float st[6] = { 9, 9, 1, 2, 3, 4 };
        CHECK(values_are(glow_program_output(p, 5), 6, st));
    }
    glow_program_destroy(p);
    for (int i = 0; i < 4; i++)
        glow_tensor_free(&ins[i]);
    mk_free(mk);
}

/* SplitToSequence by a scalar split (the last piece shorter) and into single elements with
 * keepdims=0; SequenceMap adds a tensor to every element. */
static void test_split_and_map(void)
{
    mk_model *mk = mk_new(17);
    mk_input(mk, "x", MK_F32, 1, D(5));
    const_i64(mk, "two", 0, NULL, (int64_t[]){ 2 }, 1);
    mk_node(mk, "SplitToSequence", NULL, 2, S("x", "two"), 1, S("s"));
    Onnx__NodeProto *n = mk_node(mk, "SplitToSequence", NULL, 1, S("x"), 1, S("e"));
    mk_attr_int(mk, n, "keepdims", 0);
    mk_model *body = mk_new(17);
    mk_input(body, "a", MK_F32, 0, NULL);
    mk_input(body, "b", MK_F32, 0, NULL);
    mk_node(body, "Add", NULL, 2, S("a", "b"), 1, S("c"));
    mk_output(body, "c", MK_F32, 0, NULL);
    const float ten = 10;
    mk_initializer(mk, mk_tensor_raw(mk, "ten", MK_F32, 0, NULL, &ten, 4));
    n = mk_node(mk, "SequenceMap", NULL, 2, S("e", "ten"), 1, S("m"));
    mk_attr(mk, n, "body", 5)->g = &body->graph;
    seq_output(mk, "s", MK_F32, false, true);
    seq_output(mk, "m", MK_F32, false, true);

    float xv[5] = { 1, 2, 3, 4, 5 };
    glow_tensor x = f32(1, D(5), xv);
    int counts[1] = { 1 }, oc[2] = { 0 };
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, &x, 1, counts, 1, oc, 2, m, &d), GLOW_OK);
    CHECK_EQ(oc[0], 3);
    CHECK_EQ(oc[1], 5);
    glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    CHECK_EQ(glow_program_create(m, &copt, &p, &d), GLOW_OK);
    if (p) {
        CHECK_EQ(glow_program_run(p, &x, 1, &d), GLOW_OK);
        CHECK_EQ(p->noutputs, 8);
        CHECK(values_are(glow_program_output(p, 1), 2, (float[]){ 3, 4 }));
        CHECK(values_are(glow_program_output(p, 2), 1, (float[]){ 5 }));
        glow_tensor e4 = glow_program_output(p, 7);
        CHECK_EQ(e4.type.rank, 0);   /* keepdims=0 squeezes the axis */
        CHECK(values_are(e4, 1, (float[]){ 15 }));
    }
    glow_program_destroy(p);
    glow_tensor_free(&x);
    mk_free(mk);
    mk_free(body);
}

/* Optionals: an empty one is absent at import (count -1, HasElement a constant false); getting
 * its element fails naming the node; a present optional input is its tensor. */
static void test_optionals(void)
{
    mk_model *mk = mk_new(18);
    seq_input(mk, "o", MK_F32, true, false);
    Onnx__NodeProto *n = mk_node(mk, "Optional", "empty", 0, NULL, 1, S("none"));
    Onnx__AttributeProto *a = mk_attr(mk, n, "type", 13);
    a->tp = container_vi(mk, "", MK_F32, false, false)->type;
    mk_node(mk, "OptionalHasElement", NULL, 1, S("o"), 1, S("has"));
    mk_node(mk, "OptionalHasElement", NULL, 1, S("none"), 1, S("has_none"));
    mk_node(mk, "OptionalGetElement", NULL, 1, S("o"), 1, S("v"));
    seq_output(mk, "none", MK_F32, true, false);
    mk_output(mk, "has", MK_BOOL, 0, NULL);
    mk_output(mk, "has_none", MK_BOOL, 0, NULL);
    mk_output(mk, "v", MK_F32, 1, D(2));

    glow_tensor x = f32(1, D(2), (float[]){ 7, 8 });
    int counts[1] = { 1 }, oc[4] = { 0 };
    glow_module *m = glow_module_create();
    glow_diag d = { 0 };
    CHECK_EQ(load(mk, &x, 1, counts, 1, oc, 4, m, &d), GLOW_OK);
    CHECK_EQ(oc[0], -1);
    CHECK_EQ(oc[1], 1);
    CHECK_EQ(strcmp(m->placeholders.first->name, "o"), 0);
    glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
    glow_program *p = NULL;
    CHECK_EQ(glow_program_create(m, &copt, &p, &d), GLOW_OK);
    if (p) {
        CHECK_EQ(glow_program_run(p, &x, 1, &d), GLOW_OK);
        CHECK_EQ(p->noutputs, 3);
        CHECK_EQ(((const bool *)glow_program_output(p, 0).data)[0], true);
        CHECK_EQ(((const bool *)glow_program_output(p, 1).data)[0], false);
        CHECK(values_are(glow_program_output(p, 2), 2, (float[]){ 7, 8 }));
    }
    glow_program_destroy(p);

    /* The same model with the input absent: OptionalGetElement has nothing to get. */
    int absent[1] = { -1 };
    m = glow_module_create();
    d = (glow_diag){ 0 };
    CHECK(load(mk, NULL, 0, absent, 1, oc, 4, m, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "OptionalGetElement");
    CHECK_CONTAINS(d.msg, "empty");
    glow_module_destroy(m);
    glow_tensor_free(&x);
    mk_free(mk);
}

/* What cannot be resolved at import fails with a message naming the input or node. */
static void test_refused(void)
{
    mk_model *mk = mk_new(17);
    seq_input(mk, "x", MK_F32, false, true);
    mk_input(mk, "pos", MK_I64, 0, NULL);
    mk_node(mk, "SequenceAt", "at", 2, S("x", "pos"), 1, S("y"));
    mk_output(mk, "y", MK_F32, 1, D(2));
    glow_tensor ins[3] = { f32(1, D(2), (float[]){ 1, 2 }), f32(1, D(2), (float[]){ 3, 4 }) };
    glow_type ti = glow_type_scalar(GLOW_I64);
    glow_diag d = { 0 };

    /* No lengths given (glowc compile, say): the input is named and the remedy said. */
    glow_module *m = glow_module_create();
    glow_onnx_options none = { 0 };
    size_t size;
    uint8_t *bytes = mk_pack(mk, &size);
    CHECK_EQ(glow_onnx_load_bytes(m, bytes, size, &none, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "input 'x' is a sequence");
    CHECK_CONTAINS(d.msg, "SequenceProto");
    glow_module_destroy(m);
    free(bytes);

    /* A position computed at run time. */
    CHECK_EQ(glow_tensor_alloc(&ins[2], &ti, &d), GLOW_OK);
    int counts[2] = { 2, 1 };
    m = glow_module_create();
    d = (glow_diag){ 0 };
    CHECK_EQ(load(mk, ins, 3, counts, 2, NULL, 0, m, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "SequenceAt 'at'");
    CHECK_CONTAINS(d.msg, "must be a constant");
    glow_module_destroy(m);

    /* A tensor op given a sequence. */
    mk_model *mk2 = mk_new(17);
    seq_input(mk2, "x", MK_F32, false, true);
    mk_node(mk2, "Relu", "relu", 1, S("x"), 1, S("y"));
    mk_output(mk2, "y", MK_F32, 1, D(2));
    m = glow_module_create();
    d = (glow_diag){ 0 };
    CHECK_EQ(load(mk2, ins, 2, counts, 1, NULL, 0, m, &d), GLOW_ERR_UNSUPPORTED);
    CHECK_CONTAINS(d.msg, "Relu 'relu'");
    CHECK_CONTAINS(d.msg, "is a sequence; this op takes tensors");
    glow_module_destroy(m);
    mk_free(mk2);

    /* A constant position out of range. */
    mk_model *mk3 = mk_new(17);
    seq_input(mk3, "x", MK_F32, false, true);
    const_i64(mk3, "five", 0, NULL, (int64_t[]){ 5 }, 1);
    mk_node(mk3, "SequenceAt", "at", 2, S("x", "five"), 1, S("y"));
    mk_output(mk3, "y", MK_F32, 1, D(2));
    m = glow_module_create();
    d = (glow_diag){ 0 };
    CHECK(load(mk3, ins, 2, counts, 1, NULL, 0, m, &d) != GLOW_OK);
    CHECK_CONTAINS(d.msg, "position 5 is out of range [-2, 1]");
    glow_module_destroy(m);
    mk_free(mk3);

    for (int i = 0; i < 3; i++)
        glow_tensor_free(&ins[i]);
    mk_free(mk);
}

/* SequenceProto / OptionalProto files: written and read back, absent optionals included. */
static void test_files(void)
{
    glow_tensor ts[2] = { f32(1, D(2), (float[]){ 1, 2 }), f32(2, D(1, 1), (float[]){ 3 }) };
    const struct { glow_io_kind kind; int count; } cases[] = {
        { GLOW_IO_SEQ, 2 }, { GLOW_IO_SEQ, 0 }, { GLOW_IO_OPT_TENSOR, 1 },
        { GLOW_IO_OPT_TENSOR, -1 }, { GLOW_IO_OPT_SEQ, 2 }, { GLOW_IO_OPT_SEQ, -1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t *buf = NULL;
        size_t size = 0;
        glow_diag d = { 0 };
        CHECK_EQ(glow_seq_to_pb(ts, cases[c].count, cases[c].kind, "v", &buf, &size, &d),
                 GLOW_OK);
        glow_seq_value v = { 0 };
        CHECK_EQ(glow_seq_read_pb(buf, size, cases[c].kind, &v, &d), GLOW_OK);
        CHECK_EQ(v.count, cases[c].count);
        CHECK_EQ(strcmp(v.name ? v.name : "", "v"), 0);
        for (int k = 0; k < v.count; k++)
            CHECK(glow_tensor_equal(&v.tensors[k], &ts[k]));
        glow_seq_value_free(&v);
        free(buf);
    }
    /* An optional tensor file read where the model declares an optional sequence. */
    uint8_t *buf = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    CHECK_EQ(glow_seq_to_pb(ts, 1, GLOW_IO_OPT_TENSOR, "v", &buf, &size, &d), GLOW_OK);
    glow_seq_value v = { 0 };
    CHECK_EQ(glow_seq_read_pb(buf, size, GLOW_IO_OPT_SEQ, &v, &d), GLOW_ERR_BAD_TYPE);
    CHECK_CONTAINS(d.msg, "holds a tensor");
    free(buf);
    CHECK_EQ(glow_io_kind_of("seq(f32[...])"), GLOW_IO_SEQ);
    CHECK_EQ(glow_io_kind_of("optional(seq(i32[4]))"), GLOW_IO_OPT_SEQ);
    CHECK_EQ(glow_io_kind_of("optional(f32[2])"), GLOW_IO_OPT_TENSOR);
    CHECK_EQ(glow_io_kind_of("f32[2]"), GLOW_IO_TENSOR);
    for (int i = 0; i < 2; i++)
        glow_tensor_free(&ts[i]);
}

int main(void)
{
    test_list_edits();
    test_split_and_map();
    test_optionals();
    test_refused();
    test_files();
    return CHECK_DONE();
}
