// test_iropt_passes.c - Golden IR tests of each IR pass on small graphs, with the cases that
// must not fire, and the default pipeline keeping results bit for bit.
#include "iropt_check.h"

static glow_value slice(const char *name, glow_value x, const int64_t *st, const int64_t *en,
                        int r)
{
    static const int64_t steps[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    glow_attr at[3] = { GLOW_AINTS(STARTS, st, r), GLOW_AINTS(ENDS, en, r),
                        GLOW_AINTS(STEPS, steps, r) };
    return op(NK_SLICE, name, &x, 1, at, 3);
}

static glow_value concat(const char *name, glow_value a, glow_value b, int axis)
{
    glow_value ins[2] = { a, b };
    glow_attr at[1] = { GLOW_AI(AXIS, axis) };
    return op(NK_CONCAT, name, ins, 2, at, 1);
}

/* In place: Sigmoid may not take a's buffer (Add reads a later); Add takes a's. Then the
 * final Save copy disappears: the producers write into the output placeholder. */
static void test_share_buffers_and_save(void)
{
    begin();
    glow_value x = input("x", 3, DIMS(1, 4, 8));
    glow_value a = un(NK_RELU, "a", x);
    glow_value b = un(NK_SIGMOID, "b", a);
    save("out", bin(NK_ADD, "c", a, b));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_SHARE_BUFFERS);
    golden(ir, "program {\n"
               "  %a.res = allocactivation { f32[1, 4, 8] }\n"
               "  %a = Relu @out %a.res, @in %x\n"
               "  %b.res = allocactivation { f32[1, 4, 8] }\n"
               "  %b = Sigmoid @out %b.res, @in %a.res\n"
               "  %c = Add @out %a.res, @in %a.res, @in %b.res\n"
               "  deallocactivation @inout %b.res\n"
               "  %out.save = copy @out %out, @in %a.res\n"
               "  deallocactivation @inout %a.res\n"
               "}\n");
    PASSES(ir, IR_PASS_COPY_ELIM);
    golden(ir, "program {\n"
               "  %a = Relu @out %out, @in %x\n"
               "  %b.res = allocactivation { f32[1, 4, 8] }\n"
               "  %b = Sigmoid @out %b.res, @in %out\n"
               "  %c = Add @out %out, @in %out, @in %b.res\n"
               "  deallocactivation @inout %b.res\n"
               "}\n");
    ir_function_destroy(ir);
    check_same_results();
    end();
}

/* Slice views: s2 (rows 2..4 of b, which shares a's buffer) becomes a view at byte 64; s1
 * must not: a is written by the in-place Neg while s1 is still to be read. */
static void test_slice_views(void)
{
    begin();
    glow_value x = input("x", 3, DIMS(1, 4, 8));
    glow_value a = un(NK_RELU, "a", x);
    glow_value s1 = slice("s1", a, DIMS(0, 0, 0), DIMS(1, 2, 8), 3);
    glow_value b = un(NK_NEG, "b", a);
    glow_value s2 = slice("s2", b, DIMS(0, 2, 0), DIMS(1, 4, 8), 3);
    save("out", bin(NK_ADD, "c", s1, s2));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_SHARE_BUFFERS, IR_PASS_SLICE_VIEWS);
    golden(ir, "program {\n"
               "  %a.res = allocactivation { f32[1, 4, 8] }\n"
               "  %a = Relu @out %a.res, @in %x\n"
               "  %s1.res = allocactivation { f32[1, 2, 8] }\n"
               "  %s1 = Slice @out %s1.res, @in %a.res {starts=[0, 0, 0], ends=[1, 2, 8], "
               "steps=[1, 1, 1]}\n"
               "  %b = Neg @out %a.res, @in %a.res\n"
               "  %c = Add @out %s1.res, @in %s1.res, @in %s2.res (view %a.res+64 "
               "f32[1, 2, 8])\n"
               "  deallocactivation @inout %a.res\n"
               "  %out.save = copy @out %out, @in %s1.res\n"
               "  deallocactivation @inout %s1.res\n"
               "}\n");
    ir_function_destroy(ir);
    check_same_results();
    end();

    /* Columns 2..6 of each row are not one block: the Slice stays. */
    begin();
    x = input("x", 3, DIMS(1, 4, 8));
    a = un(NK_RELU, "a", x);
    save("out", un(NK_NEG, "n", slice("s", a, DIMS(0, 0, 2), DIMS(1, 4, 6), 3)));
    ir = gen();
    char *before = ir_text(ir);
    int changes = -1;
    CHECK(ir_run_pass(ir, IR_PASS_SLICE_VIEWS, NULL, &changes, &D) == GLOW_OK);
    CHECK_EQ(changes, 0);
    golden(ir, before);
    free(before);
    ir_function_destroy(ir);
    check_same_results();
    end();
}

static void test_concat_inplace(void)
{
    begin();
    glow_value x = input("x", 4, DIMS(1, 2, 3, 3));
    glow_value a = un(NK_RELU, "a", x);
    glow_value b = un(NK_TANH, "b", x);
    save("out", un(NK_SIGMOID, "s", concat("cat", a, b, 1)));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_CONCAT_INPLACE);
    golden(ir, "program {\n"
               "  %cat.res = allocactivation { f32[1, 4, 3, 3] }\n"
               "  %a = Relu @out %a.res (view %cat.res+0 f32[1, 2, 3, 3]), @in %x\n"
               "  %b = Tanh @out %b.res (view %cat.res+72 f32[1, 2, 3, 3]), @in %x\n"
               "  %s.res = allocactivation { f32[1, 4, 3, 3] }\n"
               "  %s = Sigmoid @out %s.res, @in %cat.res\n"
               "  deallocactivation @inout %cat.res\n"
               "  %out.save = copy @out %out, @in %s.res\n"
               "  deallocactivation @inout %s.res\n"
               "}\n");
    ir_function_destroy(ir);
    check_same_results();
    end();

    /* Batch 2: the channel slices are not blocks; nothing changes. */
    begin();
    x = input("x", 4, DIMS(2, 2, 3, 3));
    save("out", concat("cat", un(NK_RELU, "a", x), un(NK_TANH, "b", x), 1));
    ir = gen();
    int changes = -1;
    CHECK(ir_run_pass(ir, IR_PASS_CONCAT_INPLACE, NULL, &changes, &D) == GLOW_OK);
    CHECK_EQ(changes, 0);
    ir_function_destroy(ir);
    check_same_results();
    end();

    /* a is read after the Concat: it keeps its buffer and is copied into its slot. */
    begin();
    x = input("x", 4, DIMS(1, 2, 3, 3));
    a = un(NK_RELU, "a", x);
    b = un(NK_TANH, "b", x);
    save("out", concat("cat", a, b, 1));
    save("out2", un(NK_EXP, "e", a));
    ir = gen();
    PASSES(ir, IR_PASS_CONCAT_INPLACE);
    golden(ir, "program {\n"
               "  %a.res = allocactivation { f32[1, 2, 3, 3] }\n"
               "  %a = Relu @out %a.res, @in %x\n"
               "  %cat.res = allocactivation { f32[1, 4, 3, 3] }\n"
               "  %b = Tanh @out %b.res (view %cat.res+72 f32[1, 2, 3, 3]), @in %x\n"
               "  %cat = copy @out %a.res (view %cat.res+0 f32[1, 2, 3, 3]), @in %a.res\n"
               "  %out.save = copy @out %out, @in %cat.res\n"
               "  deallocactivation @inout %cat.res\n"
               "  %e.res = allocactivation { f32[1, 2, 3, 3] }\n"
               "  %e = Exp @out %e.res, @in %a.res\n"
               "  deallocactivation @inout %a.res\n"
               "  %out2.save = copy @out %out2, @in %e.res\n"
               "  deallocactivation @inout %e.res\n"
               "}\n");
    ir_function_destroy(ir);
    check_same_results();
    end();
}

/* Equal constants merge, an identity Transpose becomes a copy, an unread Exp goes with its
 * buffer, and copy elimination removes both copies. */
static void test_dedup_peephole_dse_copies(void)
{
    begin();
    glow_value x = input("x", 2, DIMS(4, 4));
    glow_value k1 = constant("k1", 2, DIMS(4, 4), 1.0f), k2 = constant("k2", 2, DIMS(4, 4), 1.0f);
    glow_value a = bin(NK_ADD, "a", x, k1);
    glow_value b = bin(NK_MUL, "b", a, k2);
    un(NK_EXP, "unused", b);
    glow_attr perm[1] = { GLOW_AINTS(PERM, DIMS(0, 1), 2) };
    save("out", op(NK_TRANSPOSE, "t", &b, 1, perm, 1));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_DEDUP_CONSTANTS, IR_PASS_PEEPHOLE, IR_PASS_DSE, IR_PASS_DEAD_ALLOC);
    golden(ir, "program {\n"
               "  %a.res = allocactivation { f32[4, 4] }\n"
               "  %a = Add @out %a.res, @in %x, @in %k1\n"
               "  %b.res = allocactivation { f32[4, 4] }\n"
               "  %b = Mul @out %b.res, @in %a.res, @in %k1\n"
               "  deallocactivation @inout %a.res\n"
               "  %t.res = allocactivation { f32[4, 4] }\n"
               "  %t = copy @out %t.res, @in %b.res\n"
               "  deallocactivation @inout %b.res\n"
               "  %out.save = copy @out %out, @in %t.res\n"
               "  deallocactivation @inout %t.res\n"
               "}\n");
    int nweights = 0;
    for (ir_value *v = ir->values; v; v = v->next)
        nweights += v->kind == IV_WEIGHT;
    CHECK_EQ(nweights, 3); /* x, k1, out */
    PASSES(ir, IR_PASS_COPY_ELIM);
    golden(ir, "program {\n"
               "  %a.res = allocactivation { f32[4, 4] }\n"
               "  %a = Add @out %a.res, @in %x, @in %k1\n"
               "  %b = Mul @out %out, @in %a.res, @in %k1\n"
               "  deallocactivation @inout %a.res\n"
               "}\n");
    ir_function_destroy(ir);
    check_same_results();
    end();
}

/* Large constants are matched by a hash of their ends, then compared whole: equal ones merge,
 * ones that differ only in the middle do not. */
static void test_dedup_large(void)
{
    begin();
    glow_value x = input("x", 1, DIMS(8192));
    glow_value k[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "k%d", i);
        k[i] = constant(name, 1, DIMS(8192), 2.0f);
    }
    ((float *)k[2].node->payload.data)[4100] = 3.0f;
    save("out", bin(NK_MUL, "c", bin(NK_ADD, "b", bin(NK_ADD, "a", x, k[0]), k[1]), k[2]));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_DEDUP_CONSTANTS);
    bool seen[3] = { false };
    for (ir_value *v = ir->values; v; v = v->next)
        for (int i = 0; i < 3; i++)
            seen[i] |= v->kind == IV_WEIGHT && v->storage == k[i].node;
    CHECK(seen[0] && !seen[1] && seen[2]);
    ir_function_destroy(ir);
    check_same_results();
    end();
}

/* The first Save copy must stay: its source is read after it (by the second output's Exp),
 * which then writes straight into its own output. */
static void test_copy_kept(void)
{
    begin();
    glow_value x = input("x", 2, DIMS(2, 8));
    glow_value a = un(NK_RELU, "a", x);
    save("out", a);
    save("out2", un(NK_EXP, "e", a));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_COPY_ELIM);
    golden(ir, "program {\n"
               "  %a.res = allocactivation { f32[2, 8] }\n"
               "  %a = Relu @out %a.res, @in %x\n"
               "  %out.save = copy @out %out, @in %a.res\n"
               "  %e = Exp @out %out2, @in %a.res\n"
               "  deallocactivation @inout %a.res\n"
               "}\n");
    ir_function_destroy(ir);
    check_same_results();
    end();
}

static void test_const_weights_and_lifetimes(void)
{
    begin();
    glow_value x = input("x", 2, DIMS(2, 8));
    glow_value k = constant("k", 2, DIMS(2, 8), 0.5f);
    save("out", bin(NK_SUB, "s", un(NK_ABS, "a", x), k));
    ir_function *ir = gen();
    PASSES(ir, IR_PASS_CONST_WEIGHTS);
    for (ir_value *v = ir->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT)
            continue;
        if (!strcmp(v->name, "out"))
            CHECK(!v->readonly);
        else
            CHECK(v->readonly);
    }
    /* Move the first allocation to the top and the dealloc to the end: shrink restores. */
    char *tight = ir_text(ir);
    ir_instr *al = ir->first;
    CHECK(al->kind == IK_ALLOC);
    ir_instr *dl = NULL;
    for (ir_instr *in = ir->first; in; in = in->next)
        if (in->kind == IK_DEALLOC && in->ops[0].v == al->ops[0].v)
            dl = in;
    CHECK(dl != NULL);
    if (dl) {
        ir_instr_unlink(ir, dl);
        ir_instr_insert_before(ir, NULL, dl);
    }
    int changes = 0;
    CHECK(ir_run_pass(ir, IR_PASS_SHRINK_LIFETIMES, NULL, &changes, &D) == GLOW_OK);
    CHECK_EQ(changes, 1);
    golden(ir, tight);
    free(tight);
    ir_function_destroy(ir);
    check_same_results();
    end();
}

/* The pipeline on a residual block, a diamond and a broadcast chain. */
static void test_pipeline_numerics(void)
{
    begin();
    glow_value x = input("x", 4, DIMS(1, 3, 5, 5));
    glow_value a = un(NK_RELU, "a", x);
    glow_value b = un(NK_TANH, "b", a);
    glow_value c = bin(NK_ADD, "c", a, b);
    glow_value d = bin(NK_MUL, "d", c, c);
    glow_value e = concat("e", d, un(NK_NEG, "n", c), 1);
    save("out", bin(NK_SUB, "f", e, e));
    save("out2", slice("s", e, DIMS(0, 2, 0, 0), DIMS(1, 5, 5, 5), 4));
    check_same_results();
    ir_function *ir = gen();
    CHECK(ir_optimize(ir, NULL, &D) == GLOW_OK);
    int concats = 0, slices = 0;
    for (ir_instr *in = ir->first; in; in = in->next) {
        concats += (int)in->kind == NK_CONCAT;
        slices += (int)in->kind == NK_SLICE;
    }
    CHECK_EQ(concats, 0);
    CHECK_EQ(slices, 0);
    ir_function_destroy(ir);
    end();
}

/* --dump-after prints the IR after the named pass; unknown names are refused. */
static void test_dump_after(void)
{
    begin();
    glow_value x = input("x", 1, DIMS(8));
    save("out", un(NK_RELU, "a", x));
    ir_function *ir = gen();
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    ir_opt_options o = { .dump_after = "copy-elim", .dump_out = mem };
    CHECK(ir_optimize(ir, &o, &D) == GLOW_OK);
    fclose(mem);
    CHECK_CONTAINS(buf, "# after copy_elim (1 change)");
    CHECK_CONTAINS(buf, "%a = Relu @out %out, @in %x");
    free(buf);
    ir_pass_id id;
    CHECK(!ir_pass_from_name("no-such-pass", &id));
    CHECK(ir_pass_from_name("share-buffers", &id) && id == IR_PASS_SHARE_BUFFERS);
    ir_function_destroy(ir);
    end();
}

int main(void)
{
    test_share_buffers_and_save();
    test_slice_views();
    test_concat_inplace();
    test_dedup_peephole_dse_copies();
    test_dedup_large();
    test_copy_kept();
    test_const_weights_and_lifetimes();
    test_pipeline_numerics();
    test_dump_after();
    return CHECK_DONE();
}
