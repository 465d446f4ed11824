// pipeline.c - The IR pass table, the default pipeline (each position with its reason) and the
// driver that runs passes with verification, dumps and per-pass statistics.
#include <string.h>
#include <time.h>

#include "iropt/iropt_internal.h"

typedef void (*pass_fn)(iropt_cx *cx);

static const struct {
    const char *name, *desc;
    pass_fn fn;
} pass_table[] = {
#define IRPASS(id, name, desc) [IR_PASS_##id] = { #name, desc, ir_pass_##name },
#include "iropt/passes.def"
#undef IRPASS
};

/* A step runs its pass once, or until it reports no change (bounded, so a pass that keeps
 * rewriting is a bug that cannot hang the compiler). */
typedef struct step {
    ir_pass_id id;
    bool fixpoint;
    const char *why;
} step;

#define MAX_FIXPOINT 8

static const step pipeline[] = {
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

const char *ir_pass_name(ir_pass_id id)
{
    return (unsigned)id < IR_PASS_COUNT ? pass_table[id].name : "?";
}

const char *ir_pass_description(ir_pass_id id)
{
    return (unsigned)id < IR_PASS_COUNT ? pass_table[id].desc : "?";
}

bool ir_pass_from_name(const char *name, ir_pass_id *out)
{
    for (int i = 0; i < IR_PASS_COUNT; i++) {
        /* Accept dashes for underscores: --ir-dump-after=copy-elim. */
        const char *a = pass_table[i].name, *b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
            a++;
            b++;
        }
        if (!*a && !*b) {
            *out = (ir_pass_id)i;
            return true;
        }
    }
    return false;
}

void ir_print_pipeline(FILE *out)
{
    fputs("IR optimizer:\n", out);
    for (int i = 0; i < NSTEPS; i++)
        fprintf(out, "  %2d. %-18s %-9s %s\n", i + 1, pass_table[pipeline[i].id].name,
                pipeline[i].fixpoint ? "fixpoint" : "once", pipeline[i].why);
    fputs("IR passes:\n", out);
    for (int i = 0; i < IR_PASS_COUNT; i++)
        fprintf(out, "  %-18s %s\n", pass_table[i].name, pass_table[i].desc);
}

typedef struct pass_stats {
    int runs, changes, removed;
    double seconds;
} pass_stats;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int count_instrs(const ir_function *f)
{
    int n = 0;
    for (const ir_instr *in = f->first; in; in = in->next)
        n += !iropt_is_marker(in);
    return n;
}

static glow_status run_one(ir_function *f, ir_pass_id id, const ir_opt_options *o,
                           int *changes, pass_stats *st, glow_diag *d)
{
    static const ir_opt_options dflt = { 0 };
    if (!o)
        o = &dflt;
    iropt_cx cx = { .f = f, .o = o, .d = d, .status = GLOW_OK };
    int before = st ? count_instrs(f) : 0;
    double t0 = now();
    pass_table[id].fn(&cx);
    double t1 = now();
    if (cx.status != GLOW_OK) {
        if (d && d->status == GLOW_OK)
            glow_fail(d, cx.status, "IR pass %s failed", pass_table[id].name);
        return cx.status;
    }
    /* The IR verifier is linear in the program, so it runs after every pass in every build:
     * a pass that breaks a lifetime must not reach the planner. */
    if (ir_function_verify(f, d) != GLOW_OK) {
        char msg[sizeof d->msg];
        snprintf(msg, sizeof msg, "%s", d->msg);
        return glow_fail(d, GLOW_ERR_INTERNAL, "after IR pass %s: %s", pass_table[id].name, msg);
    }
    if (st) {
        st->runs++;
        st->changes += cx.changes;
        st->removed += before - count_instrs(f);
        st->seconds += t1 - t0;
    }
    if (o->dump_after && o->dump_out) {
        ir_pass_id want;
        bool all = !strcmp(o->dump_after, "all");
        if ((all && cx.changes) ||
            (!all && ir_pass_from_name(o->dump_after, &want) && want == id)) {
            fprintf(o->dump_out, "# after %s (%d change%s)\n", pass_table[id].name, cx.changes,
                    cx.changes == 1 ? "" : "s");
            ir_function_print(o->dump_out, f);
        }
    }
    if (changes)
        *changes = cx.changes;
    return GLOW_OK;
}

glow_status ir_run_pass(ir_function *f, ir_pass_id id, const ir_opt_options *o, int *changes,
                        glow_diag *d)
{
    if ((unsigned)id >= IR_PASS_COUNT)
        return glow_fail(d, GLOW_ERR_USAGE, "no IR pass %d", (int)id);
    return run_one(f, id, o, changes, NULL, d);
}

static void print_stats(FILE *out, const pass_stats *st)
{
    double total = 0;
    fprintf(out, "# IR optimizer\n# %-18s %5s %8s %8s %10s\n", "pass", "runs", "removed",
            "changes", "time(ms)");
    for (int i = 0; i < IR_PASS_COUNT; i++) {
        total += st[i].seconds;
        if (st[i].runs)
            fprintf(out, "  %-18s %5d %8d %8d %10.3f\n", pass_table[i].name, st[i].runs,
                    st[i].removed, st[i].changes, st[i].seconds * 1e3);
    }
    fprintf(out, "  %-18s %5s %8s %8s %10.3f\n", "total", "", "", "", total * 1e3);
}

glow_status ir_optimize(ir_function *f, const ir_opt_options *o, glow_diag *d)
{
    static const ir_opt_options dflt = { 0 };
    if (!o)
        o = &dflt;
    pass_stats st[IR_PASS_COUNT] = { 0 };
    glow_status s = GLOW_OK;
    if (o->passes) {
        for (int i = 0; i < o->npasses && s == GLOW_OK; i++) {
            if ((unsigned)o->passes[i] >= IR_PASS_COUNT)
                return glow_fail(d, GLOW_ERR_USAGE, "no IR pass %d", (int)o->passes[i]);
            s = run_one(f, o->passes[i], o, NULL, &st[o->passes[i]], d);
        }
    } else {
        for (int i = 0; i < NSTEPS && s == GLOW_OK; i++) {
            for (int k = 0; k < (pipeline[i].fixpoint ? MAX_FIXPOINT : 1); k++) {
                int changes = 0;
                s = run_one(f, pipeline[i].id, o, &changes, &st[pipeline[i].id], d);
                if (s != GLOW_OK || !changes)
                    break;
            }
        }
    }
    if (o->stats && o->stats_out)
        print_stats(o->stats_out, st);
    return s;
}
