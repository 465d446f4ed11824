// pipeline.c - The IR pass table, the default pipeline (each position with its reason) and
// how the shared pass driver (support/passrun.h) runs it on an IR function.
#include <string.h>

#include "iropt/iropt_internal.h"
#include "support/passrun.h"

static const glow_pass_desc pass_desc[] = {
#define IRPASS(id, name, desc) [IR_PASS_##id] = { #name, desc },
#include "iropt/passes.def"
#undef IRPASS
};

static void (*const pass_fn[])(iropt_cx *cx) = {
#define IRPASS(id, name, desc) [IR_PASS_##id] = ir_pass_##name,
#include "iropt/passes.def"
#undef IRPASS
};

/* Repeats of a fixpoint step (see glow_pass_step). */
#define MAX_FIXPOINT 8

static const glow_pass_step pipeline[] = {
    { IR_PASS_CONST_WEIGHTS, false, "first: views and copy propagation may alias read-only "
      "weights freely" },
    { IR_PASS_DEDUP_CONSTANTS, false, "equal constants (lowering's splats, repeated biases) "
      "share one weight before anything compares operands" },
    { IR_PASS_PEEPHOLE, true, "identity data movement becomes a copy the passes below "
      "understand" },
    { IR_PASS_SLICE_VIEWS, false, "before buffer sharing: a view keeps its base alive, which "
      "in-place reuse must then respect" },
    { IR_PASS_DSE, false, "results nobody reads are not computed" },
    { IR_PASS_DEAD_ALLOC, false, "and their buffers go" },
    { IR_PASS_SHARE_BUFFERS, false, "activations write over their dying operand; before the "
      "concat and save renames, which it would otherwise block" },
    { IR_PASS_CONCAT_INPLACE, false, "producers (with their in-place chains) write straight "
      "into the concat result" },
    { IR_PASS_COPY_ELIM, true, "last renames: the final Save copies make their producers "
      "write into the output placeholders" },
    { IR_PASS_SHARE_BUFFERS, false, "renames can leave new dying operands" },
    { IR_PASS_DSE, false, "copies removed may leave dead results" },
    { IR_PASS_DEAD_ALLOC, false, "and unused buffers" },
    { IR_PASS_SHRINK_LIFETIMES, false, "last: every lifetime as short as the uses allow, for "
      "the planner" },
};

#define NSTEPS ((int)(sizeof(pipeline) / sizeof(pipeline[0])))
#define NAME_WIDTH 18

const char *ir_pass_name(ir_pass_id id)
{
    return (unsigned)id < IR_PASS_COUNT ? pass_desc[id].name : "?";
}

const char *ir_pass_description(ir_pass_id id)
{
    return (unsigned)id < IR_PASS_COUNT ? pass_desc[id].desc : "?";
}

bool ir_pass_from_name(const char *name, ir_pass_id *out)
{
    int id;
    if (!glow_pass_find(pass_desc, IR_PASS_COUNT, name, &id))
        return false;
    *out = (ir_pass_id)id;
    return true;
}

void ir_print_pipeline(FILE *out)
{
    fputs("IR optimizer:\n", out);
    glow_pass_print_steps(out, pass_desc, pipeline, NSTEPS, NAME_WIDTH);
    fputs("IR passes:\n", out);
    glow_pass_print_table(out, pass_desc, IR_PASS_COUNT, NAME_WIDTH);
}

/* --- the driver's callbacks on an IR function --- */

typedef struct unit {
    ir_function *f;
    const ir_opt_options *o;
} unit;

static glow_status run_pass(void *u_, int id, int *changes, glow_diag *d)
{
    unit *u = u_;
    iropt_cx cx = { .f = u->f, .o = u->o, .d = d, .status = GLOW_OK };
    pass_fn[id](&cx);
    *changes = cx.changes;
    return cx.status;
}

static int count_instrs(void *u_)
{
    int n = 0;
    for (const ir_instr *in = ((unit *)u_)->f->first; in; in = in->next)
        n += !iropt_is_marker(in);
    return n;
}

/* The IR verifier is linear in the program, so it runs after every pass in every build: a
 * pass that breaks a lifetime must not reach the planner. */
static glow_status verify(void *u_, glow_diag *d) { return ir_function_verify(((unit *)u_)->f, d); }

static void print(FILE *out, void *u_) { ir_function_print(out, ((unit *)u_)->f); }

static glow_pass_driver driver(unit *u, glow_pass_stats *st)
{
    return (glow_pass_driver){
        .what = "IR pass", .passes = pass_desc, .npasses = IR_PASS_COUNT,
        .max_fixpoint = MAX_FIXPOINT, .unit = u, .run = run_pass, .count = count_instrs,
        .verify = verify, .print = print, .dump_after = u->o->dump_after,
        .dump_out = u->o->dump_out, .stats = st,
    };
}

static const ir_opt_options default_options = { 0 };

glow_status ir_run_pass(ir_function *f, ir_pass_id id, const ir_opt_options *o, int *changes,
                        glow_diag *d)
{
    unit u = { f, o ? o : &default_options };
    glow_pass_driver dr = driver(&u, NULL);
    if ((unsigned)id >= IR_PASS_COUNT)
        return glow_fail(d, GLOW_ERR_USAGE, "no IR pass %d", (int)id);
    return glow_pass_run_once(&dr, id, changes, d);
}

glow_status ir_optimize(ir_function *f, const ir_opt_options *o, glow_diag *d)
{
    unit u = { f, o ? o : &default_options };
    o = u.o;
    glow_pass_stats st[IR_PASS_COUNT] = { 0 };
    glow_pass_driver dr = driver(&u, st);
    glow_status s = GLOW_OK;
    if (o->passes) {
        for (int i = 0; i < o->npasses && s == GLOW_OK; i++)
            s = (unsigned)o->passes[i] < IR_PASS_COUNT
                    ? glow_pass_run_once(&dr, o->passes[i], NULL, d)
                    : glow_fail(d, GLOW_ERR_USAGE, "no IR pass %d", (int)o->passes[i]);
    } else {
        s = glow_pass_run_steps(&dr, pipeline, NSTEPS, d);
    }
    if (o->stats && o->stats_out)
        glow_pass_print_stats(o->stats_out, "IR optimizer", pass_desc, st, IR_PASS_COUNT,
                              NAME_WIDTH, false);
    return s;
}
