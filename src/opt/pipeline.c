// pipeline.c - The pass table, the default pipelines around lowering and quantization, and
// how the shared pass driver (support/passrun.h) runs them on a graph function.
#include <string.h>

#include "opt/opt_internal.h"
#include "support/passrun.h"

static const glow_pass_desc pass_desc[] = {
#define PASS(id, name, desc) [GLOW_PASS_##id] = { #name, desc },
#include "passes.def"
#undef PASS
};

static void (*const pass_fn[])(opt_cx *cx) = {
#define PASS(id, name, desc) [GLOW_PASS_##id] = glow_pass_##name,
#include "passes.def"
#undef PASS
};

/* Repeats of a fixpoint step (see glow_pass_step). */
#define MAX_FIXPOINT 16

static const glow_pass_step before_lowering[] = {
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

static const glow_pass_step after_lowering[] = {
    { GLOW_PASS_FOLD_CONST, false, "lowering expands constant operands (norm parameters)" },
    { GLOW_PASS_ARITH_IDENTITY, true, "lowering produces x*1 and x+0 for default attributes" },
    { GLOW_PASS_REMOVE_NOOPS, true, "and trivial Reshapes/Broadcasts" },
    { GLOW_PASS_MERGE_RESHAPE, true, "reshape chains from lowered reductions" },
    { GLOW_PASS_SINK_TRANSPOSE, true, "transposes lowering adds around kernels" },
    { GLOW_PASS_CSE, true, "lowered nodes share splats and broadcasts" },
    { GLOW_PASS_FUSE_ACTIVATION, false, "last: only the backend knows (runs only with a hook)" },
    { GLOW_PASS_DCE, false, "drop what the rewrites left unused" },
};

static const glow_pass_step after_quantization[] = {
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
#define NAME_WIDTH 22

const char *glow_pass_name(glow_pass_id id)
{
    return (unsigned)id < GLOW_PASS_COUNT ? pass_desc[id].name : "?";
}

const char *glow_pass_description(glow_pass_id id)
{
    return (unsigned)id < GLOW_PASS_COUNT ? pass_desc[id].desc : "?";
}

bool glow_pass_from_name(const char *name, glow_pass_id *out)
{
    int id;
    if (!glow_pass_find(pass_desc, GLOW_PASS_COUNT, name, &id))
        return false;
    *out = (glow_pass_id)id;
    return true;
}

void glow_print_pipeline(FILE *out)
{
    static const struct {
        const char *title;
        const glow_pass_step *steps;
        int n;
    } phases[] = {
        { "before lowering", before_lowering, NSTEPS(before_lowering) },
        { "after lowering", after_lowering, NSTEPS(after_lowering) },
        { "after quantization", after_quantization, NSTEPS(after_quantization) },
    };
    for (int i = 0; i < NSTEPS(phases); i++) {
        fprintf(out, "%s:\n", phases[i].title);
        glow_pass_print_steps(out, pass_desc, phases[i].steps, phases[i].n, NAME_WIDTH);
    }
    fputs("passes:\n", out);
    glow_pass_print_table(out, pass_desc, GLOW_PASS_COUNT, NAME_WIDTH);
}

/* --- the driver's callbacks on a graph function --- */

typedef struct unit {
    glow_function *f;
    const glow_opt_options *o;
} unit;

static glow_status run_pass(void *u_, int id, int *changes, glow_diag *d)
{
    unit *u = u_;
    opt_cx cx = { .f = u->f, .m = u->f->module, .o = u->o, .d = d, .status = GLOW_OK };
    glow_function_count_users(u->f);
    pass_fn[id](&cx);
    *changes = cx.changes;
    return cx.status;
}

/* Function nodes (constants come and go with folding; DCE's count of rewrites includes the
 * constants it drops). */
static int count_nodes(void *u_) { return (int)((unit *)u_)->f->nodes.count; }

static glow_status verify(void *u_, glow_diag *d) { return glow_function_verify(((unit *)u_)->f, d); }

static void print(FILE *out, void *u_) { glow_module_print(out, ((unit *)u_)->f->module); }

static bool skip(void *u_, int id)
{
    return id == GLOW_PASS_FUSE_ACTIVATION && !((unit *)u_)->o->fuse_activation;
}

static glow_pass_driver driver(unit *u, glow_pass_stats *st)
{
    bool verify_all = u->o->verify;
#ifndef NDEBUG
    verify_all = true;
#endif
    return (glow_pass_driver){
        .what = "optimizer pass", .passes = pass_desc, .npasses = GLOW_PASS_COUNT,
        .max_fixpoint = MAX_FIXPOINT, .unit = u, .run = run_pass, .count = count_nodes,
        .verify = verify_all ? verify : NULL, .print = print, .dump_after = u->o->dump_after,
        .dump_out = u->o->dump_out, .stats = st, .skip = skip,
    };
}

static const glow_opt_options default_options = { 0 };

glow_status glow_run_pass(glow_function *f, glow_pass_id id, const glow_opt_options *o,
                          int *changes, glow_diag *d)
{
    unit u = { f, o ? o : &default_options };
    glow_pass_driver dr = driver(&u, NULL);
    if ((unsigned)id >= GLOW_PASS_COUNT)
        return glow_fail(d, GLOW_ERR_USAGE, "no optimizer pass %d", (int)id);
    return glow_pass_run_once(&dr, id, changes, d);
}

glow_status glow_optimize(glow_function *f, const glow_opt_options *o, glow_diag *d)
{
    unit u = { f, o ? o : &default_options };
    o = u.o;
    glow_pass_stats st[GLOW_PASS_COUNT] = { 0 };
    glow_pass_driver dr = driver(&u, st);
    glow_status s = GLOW_OK;
    if (o->passes) {
        for (int i = 0; i < o->npasses && s == GLOW_OK; i++)
            s = (unsigned)o->passes[i] < GLOW_PASS_COUNT
                    ? glow_pass_run_once(&dr, o->passes[i], NULL, d)
                    : glow_fail(d, GLOW_ERR_USAGE, "no optimizer pass %d", (int)o->passes[i]);
    } else if (o->phase == GLOW_OPT_AFTER_LOWERING) {
        s = glow_pass_run_steps(&dr, after_lowering, NSTEPS(after_lowering), d);
    } else if (o->phase == GLOW_OPT_AFTER_QUANTIZATION) {
        s = glow_pass_run_steps(&dr, after_quantization, NSTEPS(after_quantization), d);
    } else {
        s = glow_pass_run_steps(&dr, before_lowering, NSTEPS(before_lowering), d);
    }
    if ((o->stats || o->time_passes) && o->stats_out) {
        const char *title = o->phase == GLOW_OPT_AFTER_LOWERING ? "optimizer (after lowering)"
                          : o->phase == GLOW_OPT_AFTER_QUANTIZATION
                              ? "optimizer (after quantization)"
                              : "optimizer (before lowering)";
        glow_pass_print_stats(o->stats_out, title, pass_desc, st, GLOW_PASS_COUNT, NAME_WIDTH,
                              !o->stats);
    }
    return s;
}
