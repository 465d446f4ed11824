// test_iropt_chains.c - Long chains of the ops the renaming IR passes remove: Slices
// (slice_views), Concats (concat_inplace) and copies (copy_elim, from identity Transposes).
// Each pass used to compute its whole analysis again after every rewrite, quadratic in such a
// chain; now each rewrite is local (iropt_rename_local). Checked: every op of the chain goes,
// the program verifies and computes what the unoptimized one does. The time of the optimizer
// is printed, not asserted (timings are reported, not tested).
#include <stdlib.h>
#include <time.h>

#include "iropt_check.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Instructions of kind k left in the optimized program, and the optimizer's time. */
static int left_after_optimize(int k, const char *what, int n)
{
    ir_function *ir = gen();
    double t0 = now();
    ir_opt_options o = { .stats = getenv("IROPT_CHAIN_STATS") != NULL, .stats_out = stdout };
    CHECK(ir_optimize(ir, &o, &D) == GLOW_OK);
    double t = now() - t0;
    CHECK(ir_function_verify(ir, &D) == GLOW_OK);
    int left = 0;
    for (ir_instr *in = ir->first; in; in = in->next)
        left += (int)in->kind == k;
    printf("%d %s: IR optimizer %.3f s, %d left\n", n, what, t, left);
    ir_function_destroy(ir);
    return left;
}

/* x [1, n + 1, 4] -> Relu (or nothing: the chain starts at the graph input) -> n Slices,
 * each dropping the first row: each a view. */
static void test_slice_chain(int n, bool from_input)
{
    begin();
    glow_value v = input("x", 3, DIMS(1, n + 1, 4));
    if (!from_input)
        v = un(NK_RELU, "r", v);
    static const int64_t steps[3] = { 1, 1, 1 };
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%d", i);
        int64_t rows = glow_value_type(v)->dims[1];
        glow_attr at[3] = { GLOW_AINTS(STARTS, DIMS(0, 1, 0), 3),
                            GLOW_AINTS(ENDS, DIMS(1, rows, 4), 3), GLOW_AINTS(STEPS, steps, 3) };
        v = op(NK_SLICE, name, &v, 1, at, 3);
    }
    save("out", un(NK_NEG, "n", v));
    CHECK_EQ(left_after_optimize(NK_SLICE, from_input ? "Slices of an input" : "Slices", n), 0);
    check_same_results();
    end();
}

/* c0 = Relu(x) [1, 1, 4]; c(i+1) = Concat(c(i), Tanh(x)) on axis 1: every operand moves into
 * its block of the last result. */
static void test_concat_chain(int n)
{
    begin();
    glow_value x = input("x", 3, DIMS(1, 1, 4));
    glow_value c = un(NK_RELU, "c", x);
    glow_attr at[1] = { GLOW_AI(AXIS, 1) };
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        glow_value ins[2] = { c, un(NK_TANH, name, x) };
        snprintf(name, sizeof name, "cat%d", i);
        c = op(NK_CONCAT, name, ins, 2, at, 1);
    }
    save("out", c);
    CHECK_EQ(left_after_optimize(NK_CONCAT, "Concats", n), 0);
    check_same_results();
    end();
}

/* Relu -> n identity Transposes (copies after the peephole pass) -> Save: every copy goes,
 * the Relu writes the output. */
static void test_copy_chain(int n)
{
    begin();
    glow_value v = un(NK_RELU, "r", input("x", 2, DIMS(4, 4)));
    glow_attr perm[1] = { GLOW_AINTS(PERM, DIMS(0, 1), 2) };
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        v = op(NK_TRANSPOSE, name, &v, 1, perm, 1);
    }
    save("out", v);
    CHECK_EQ(left_after_optimize(IK_COPY, "copies", n), 0);
    check_same_results();
    end();
}

int main(void)
{
    test_slice_chain(3000, false);
    test_slice_chain(3000, true);
    test_concat_chain(3000);
    test_copy_chain(3000);
    return CHECK_DONE();
}
