// pipeline.c - The pass table, the default pipelines around lowering, and the driver that runs
// them with verification, dumps and per-pass statistics.
#include <string.h>
#include <time.h>

#include "opt/opt_internal.h"

typedef void (*pass_fn)(opt_cx *cx);

static const struct {
    const char *name, *desc;
    pass_fn fn;
} pass_table[] = {
#define PASS(id, name, desc) [GLOW_PASS_##id] = { #name, desc, glow_pass_##name },
#include "passes.def"
#undef PASS
};

/* A step runs its pass once, or until the pass reports no change (bounded: a pass that keeps
 * changing the graph is a bug, and the bound keeps it from hanging the compiler). */
typedef struct step {
    glow_pass_id id;
    bool fixpoint;
    const char *why;
} step;

#define MAX_FIXPOINT 16

static const step before_lowering[] = {
    { GLOW_PASS_DCE, false, "drop dead nodes and unused constants before anything counts users" },
    { GLOW_PASS_FOLD_CONST, false, "compute all-constant subgraphs (weight transposes, reshapes, "
      "casts) so later patterns see constants" },
    { GLOW_PASS_REMOVE_NOOPS, true, "trivial data movement hides the patterns below" },
    { GLOW_PASS_ARITH_IDENTITY, true, "x*1, x+0 ... are no-ops of arithmetic" },
    { GLOW_PASS_GATHER_SLICE, false, "a constant-index Gather is a Slice, which the concat and "
      "transpose rewrites understand" },
    { GLOW_PASS_MERGE_RESHAPE, true, "chains of Reshapes collapse; Reshapes move below unary ops" },
    { GLOW_PASS_SINK_TRANSPOSE, true, "Transposes move down until pairs meet and cancel" },
    { GLOW_PASS_TRANSPOSE_TO_RESHAPE, false, "what is left and only moves size-1 dims is a "
      "Reshape (no data movement)" },
    { GLOW_PASS_MERGE_RESHAPE, true, "the new Reshapes may merge with their neighbours" },
    { GLOW_PASS_MERGE_CONCAT, true, "nested Concats and Concat/Slice pairs, after the sinking "
      "has settled" },
    { GLOW_PASS_REMOVE_NOOPS, true, "sinking and merging leave identity nodes behind" },
    { GLOW_PASS_MINMAX_CLIP, true, "Relu6 arrives as Min(Max(x, 0), 6)" },
    { GLOW_PASS_FUSE_SOFTMAX, false, "before lowering, which would split the pattern further" },
    { GLOW_PASS_REDUCE_POOL, false, "global average pooling written as ReduceMean" },
    { GLOW_PASS_FOLD_PAD, false, "before BatchNorm folding so the Conv is adjacent to its BN" },
    { GLOW_PASS_FOLD_BATCHNORM, false, "BN disappears into the Conv's weights before lowering "
      "would expand it" },
    { GLOW_PASS_FOLD_CONV_ARITH, true, "scale and shift after a Conv (also what BN folding "
      "could not reach)" },
    { GLOW_PASS_SINK_RESIZE, false, "a 1x1 Conv after an upsample runs at the low "
      "resolution, once BN and scales are in its weights" },
    { GLOW_PASS_MATMUL_ADD_FC, false, "before lowering so the backend sees FullyConnected" },
    { GLOW_PASS_FOLD_CONST, false, "the rewrites above leave constant subgraphs" },
    { GLOW_PASS_CSE, true, "merge duplicates once the graph has settled" },
    { GLOW_PASS_DCE, false, "drop what the rewrites left unused" },
};

static const step after_lowering[] = {
    { GLOW_PASS_FOLD_CONST, false, "lowering expands constant operands (norm parameters)" },
    { GLOW_PASS_ARITH_IDENTITY, true, "lowering produces x*1 and x+0 for default attributes" },
    { GLOW_PASS_REMOVE_NOOPS, true, "and trivial Reshapes/Broadcasts" },
    { GLOW_PASS_MERGE_RESHAPE, true, "reshape chains from lowered reductions" },
    { GLOW_PASS_SINK_TRANSPOSE, true, "transposes lowering adds around kernels" },
    { GLOW_PASS_CSE, true, "lowered nodes share splats and broadcasts" },
    { GLOW_PASS_FUSE_ACTIVATION, false, "last: only the backend knows (runs only with a hook)" },
    { GLOW_PASS_DCE, false, "drop what the rewrites left unused" },
};

static const step after_quantization[] = {
    { GLOW_PASS_FOLD_CONST, false, "the quantizer quantizes weights with Quantize(constant)" },
    { GLOW_PASS_FOLD_QDQ, true, "Dequantize/Quantize pairs at the quantizer's boundaries and "
      "in imported QDQ models" },
    { GLOW_PASS_MERGE_RESCALE, true, "Rescales those pairs become fold into their producer" },
    { GLOW_PASS_REMOVE_NOOPS, true, "identity data movement" },
    { GLOW_PASS_CSE, true, "quantizing a value for two users makes two equal Quantize nodes" },
    { GLOW_PASS_FUSE_ACTIVATION, false, "the float nodes left, for the backend" },
    { GLOW_PASS_DCE, false, "drop what the rewrites left unused" },
};

#define NSTEPS(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *glow_pass_name(glow_pass_id id)
{
    return (unsigned)id < GLOW_PASS_COUNT ? pass_table[id].name : "?";
}

const char *glow_pass_description(glow_pass_id id)
{
    return (unsigned)id < GLOW_PASS_COUNT ? pass_table[id].desc : "?";
}

bool glow_pass_from_name(const char *name, glow_pass_id *out)
{
    for (int i = 0; i < GLOW_PASS_COUNT; i++) {
        /* Accept dashes for underscores: --dump-after=fold-const. */
        const char *a = pass_table[i].name, *b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
            a++;
            b++;
        }
        if (!*a && !*b) {
            *out = (glow_pass_id)i;
            return true;
        }
    }
    return false;
}

static void print_steps(FILE *out, const char *title, const step *s, int n)
{
    fprintf(out, "%s:\n", title);
    for (int i = 0; i < n; i++)
        fprintf(out, "  %2d. %-22s %-9s %s\n", i + 1, pass_table[s[i].id].name,
                s[i].fixpoint ? "fixpoint" : "once", s[i].why);
}

void glow_print_pipeline(FILE *out)
{
    print_steps(out, "before lowering", before_lowering, NSTEPS(before_lowering));
    print_steps(out, "after lowering", after_lowering, NSTEPS(after_lowering));
    print_steps(out, "after quantization", after_quantization, NSTEPS(after_quantization));
    fputs("passes:\n", out);
    for (int i = 0; i < GLOW_PASS_COUNT; i++)
        fprintf(out, "  %-22s %s\n", pass_table[i].name, pass_table[i].desc);
}

/* `removed` counts function nodes (constants come and go with folding; DCE's count of
 * rewrites includes the constants it drops). */
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

static bool want_verify(const glow_opt_options *o)
{
#ifndef NDEBUG
    (void)o;
    return true;
#else
    return o && o->verify;
#endif
}

static glow_status run_one(glow_function *f, glow_pass_id id, const glow_opt_options *o,
                           int *changes, pass_stats *st, glow_diag *d)
{
    static const glow_opt_options dflt = { 0 };
    if (!o)
        o = &dflt;
    opt_cx cx = { .f = f, .m = f->module, .o = o, .d = d, .status = GLOW_OK };
    uint32_t before = f->nodes.count;
    glow_function_count_users(f);
    double t0 = now();
    pass_table[id].fn(&cx);
    double t1 = now();
    if (cx.status != GLOW_OK) {
        if (d && d->status == GLOW_OK)
            glow_fail(d, cx.status, "optimizer pass %s failed", pass_table[id].name);
        return cx.status;
    }
    if (want_verify(o) && glow_function_verify(f, d) != GLOW_OK) {
        char msg[sizeof d->msg];
        snprintf(msg, sizeof msg, "%s", d->msg);
        return glow_fail(d, GLOW_ERR_INTERNAL, "after optimizer pass %s: %s",
                         pass_table[id].name, msg);
    }
    uint32_t after = f->nodes.count;
    if (st) {
        st->runs++;
        st->changes += cx.changes;
        st->removed += (int)before - (int)after;
        st->seconds += t1 - t0;
    }
    if (o->dump_after && o->dump_out) {
        /* "all" shows only passes that changed something; a named pass shows every run. */
        glow_pass_id want;
        bool all = !strcmp(o->dump_after, "all");
        if ((all && cx.changes) ||
            (!all && glow_pass_from_name(o->dump_after, &want) && want == id)) {
            fprintf(o->dump_out, "# after %s (%d change%s)\n", pass_table[id].name, cx.changes,
                    cx.changes == 1 ? "" : "s");
            glow_module_print(o->dump_out, f->module);
        }
    }
    if (changes)
        *changes = cx.changes;
    return GLOW_OK;
}

glow_status glow_run_pass(glow_function *f, glow_pass_id id, const glow_opt_options *o,
                          int *changes, glow_diag *d)
{
    if ((unsigned)id >= GLOW_PASS_COUNT)
        return glow_fail(d, GLOW_ERR_USAGE, "no optimizer pass %d", (int)id);
    return run_one(f, id, o, changes, NULL, d);
}

static void print_stats(FILE *out, const glow_opt_options *o, const pass_stats *st)
{
    double total = 0;
    for (int i = 0; i < GLOW_PASS_COUNT; i++)
        total += st[i].seconds;
    fprintf(out, "# optimizer (%s lowering)\n", o->phase == GLOW_OPT_BEFORE_LOWERING ?
            "before" : "after");
    if (o->stats)
        fprintf(out, "# %-22s %5s %8s %8s %10s\n", "pass", "runs", "removed", "changes",
                "time(ms)");
    else
        fprintf(out, "# %-22s %10s\n", "pass", "time(ms)");
    for (int i = 0; i < GLOW_PASS_COUNT; i++) {
        if (!st[i].runs)
            continue;
        if (o->stats)
            fprintf(out, "  %-22s %5d %8d %8d %10.3f\n", pass_table[i].name, st[i].runs,
                    st[i].removed, st[i].changes, st[i].seconds * 1e3);
        else
            fprintf(out, "  %-22s %10.3f\n", pass_table[i].name, st[i].seconds * 1e3);
    }
    fprintf(out, "  %-22s %10.3f\n", "total", total * 1e3);
}

glow_status glow_optimize(glow_function *f, const glow_opt_options *o, glow_diag *d)
{
    static const glow_opt_options dflt = { 0 };
    if (!o)
        o = &dflt;
    pass_stats st[GLOW_PASS_COUNT] = { 0 };
    glow_status s = GLOW_OK;
    if (o->passes) {
        for (int i = 0; i < o->npasses && s == GLOW_OK; i++)
            s = run_one(f, o->passes[i], o, NULL, &st[o->passes[i]], d);
    } else {
        const step *steps = before_lowering;
        int n = NSTEPS(before_lowering);
        if (o->phase == GLOW_OPT_AFTER_LOWERING) {
            steps = after_lowering;
            n = NSTEPS(after_lowering);
        } else if (o->phase == GLOW_OPT_AFTER_QUANTIZATION) {
            steps = after_quantization;
            n = NSTEPS(after_quantization);
        }
        for (int i = 0; i < n && s == GLOW_OK; i++) {
            if (steps[i].id == GLOW_PASS_FUSE_ACTIVATION && !o->fuse_activation)
                continue;
            for (int k = 0; k < (steps[i].fixpoint ? MAX_FIXPOINT : 1); k++) {
                int changes = 0;
                s = run_one(f, steps[i].id, o, &changes, &st[steps[i].id], d);
                if (s != GLOW_OK || !changes)
                    break;
            }
        }
    }
    if ((o->stats || o->time_passes) && o->stats_out)
        print_stats(o->stats_out, o, st);
    return s;
}
