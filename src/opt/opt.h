// opt.h - The graph optimizer: a table of passes (passes.def), the default pipelines Glow
// runs around lowering (fold -> optimize -> lower -> optimize), statistics and dumps.
#ifndef GLOW_OPT_H
#define GLOW_OPT_H

#include <stdio.h>

#include "graph/graph.h"

typedef enum {
#define PASS(id, name, desc) GLOW_PASS_##id,
#include "passes.def"
#undef PASS
    GLOW_PASS_COUNT
} glow_pass_id;

/* Which default pipeline glow_optimize runs. */
typedef enum {
    GLOW_OPT_BEFORE_LOWERING,  /* the imported graph: folds, sinks, pattern rewrites */
    GLOW_OPT_AFTER_LOWERING,   /* lowering's output: folds and cleans what lowering left */
    GLOW_OPT_AFTER_QUANTIZATION, /* the quantizer's output: folds quantized constants,
                                  * cancels Dequantize/Quantize pairs */
} glow_opt_phase;

/* Backend hook: true when the backend wants activation `act` (Relu, Clip, LeakyRelu,
 * Sigmoid or Tanh) fused into its producer `producer` (Conv, FullyConnected or MatMul). The
 * fused form is the producer with attributes fused_act ("Relu", "Clip", ...) and fused_alpha /
 * fused_beta (Clip: min / max, LeakyRelu: alpha); the evaluator applies it. */
typedef bool (*glow_fuse_act_fn)(const glow_node *producer, const glow_node *act);

typedef struct glow_opt_options {
    glow_opt_phase phase;
    /* NULL: the default pipeline of `phase`; else these passes in order, each once. */
    const glow_pass_id *passes;
    int npasses;
    /* Print the whole module to dump_out after every run of pass dump_after ("all": after
     * every pass), preceded by a "# after <pass>" line. */
    const char *dump_after;
    FILE *dump_out;
    /* Per-pass statistics (runs, nodes removed, rewrites, time) printed to stats_out when
     * glow_optimize returns; time_passes prints only the times. */
    bool stats;
    bool time_passes;
    FILE *stats_out;
    /* Run the verifier after every pass (always on in debug builds). */
    bool verify;
    glow_fuse_act_fn fuse_activation;   /* NULL: nothing is fused */
} glow_opt_options;

/* Runs the pipeline on f. Every pass keeps f's outputs within float rounding; a pass that
 * leaves an invalid graph is reported naming the pass. o may be NULL (defaults). */
glow_status glow_optimize(glow_function *f, const glow_opt_options *o, glow_diag *d);

/* One pass once; *changes gets the number of rewrites it made (may be NULL). */
glow_status glow_run_pass(glow_function *f, glow_pass_id id, const glow_opt_options *o,
                          int *changes, glow_diag *d);

const char *glow_pass_name(glow_pass_id id);
const char *glow_pass_description(glow_pass_id id);
bool glow_pass_from_name(const char *name, glow_pass_id *out);
/* Prints the default pipeline of both phases, one pass per line with its reason. */
void glow_print_pipeline(FILE *out);

/* Largest constant (bytes) constant folding creates; bigger results stay computed at run
 * time so a tiny model cannot demand a huge compile-time tensor. */
#define GLOW_OPT_FOLD_LIMIT ((size_t)64 << 20)

#endif
