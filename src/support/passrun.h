// passrun.h - The pass driver the graph optimizer (src/opt) and the IR optimizer (src/iropt)
// share: pass names looked up with dashes for underscores, a pipeline of steps (a pass once,
// or until it changes nothing), verification after every pass, a dump after the chosen pass,
// and per-pass statistics (runs, rewrites, units removed, time). Each optimizer keeps its own
// pass table and pipelines and says, through the driver's callbacks, what running, counting,
// verifying and printing its unit (a graph function, an IR function) means.
#ifndef GLOW_PASSRUN_H
#define GLOW_PASSRUN_H

#include <stdio.h>

#include "support/support.h"

/* A pass's name (as options spell it) and a one-line description, indexed by pass id. */
typedef struct glow_pass_desc {
    const char *name, *desc;
} glow_pass_desc;

/* One position of a pipeline: the pass, whether it repeats until it changes nothing (bounded
 * by the driver's max_fixpoint: a pass that keeps rewriting is a bug that must not hang the
 * compiler), and why it stands there. */
typedef struct glow_pass_step {
    int id;
    bool fixpoint;
    const char *why;
} glow_pass_step;

typedef struct glow_pass_stats {
    int runs, changes, removed;
    double seconds;
} glow_pass_stats;

typedef struct glow_pass_driver {
    const char *what;               /* "optimizer pass", "IR pass": in messages */
    const glow_pass_desc *passes;   /* [npasses] */
    int npasses;
    int max_fixpoint;
    void *unit;                     /* what the callbacks work on */
    /* Runs pass `id` once on unit; *changes gets its rewrites. A failure's message is set
     * by the callback or, when it set none, by the driver naming the pass. */
    glow_status (*run)(void *unit, int id, int *changes, glow_diag *d);
    /* How many units of work the unit holds (nodes, instructions): `removed` counts them. */
    int (*count)(void *unit);
    /* NULL: no verification after a pass. */
    glow_status (*verify)(void *unit, glow_diag *d);
    void (*print)(FILE *out, void *unit);
    /* Print the unit to dump_out after every run of pass dump_after ("all": after every pass
     * that changed something), preceded by a "# after <pass> (N changes)" line. */
    const char *dump_after;
    FILE *dump_out;
    glow_pass_stats *stats;         /* [npasses], or NULL for none */
    /* NULL, or true for steps the pipeline leaves out this time (a pass needing a hook the
     * caller did not give). */
    bool (*skip)(void *unit, int id);
} glow_pass_driver;

/* The pass named `name` (dashes accepted for underscores: --dump-after=fold-const). */
bool glow_pass_find(const glow_pass_desc *passes, int npasses, const char *name, int *id);
/* Runs pass `id` once: timing, verification, statistics and the dump. */
glow_status glow_pass_run_once(const glow_pass_driver *dr, int id, int *changes, glow_diag *d);
/* Runs a pipeline's steps in order. */
glow_status glow_pass_run_steps(const glow_pass_driver *dr, const glow_pass_step *steps,
                                int nsteps, glow_diag *d);
/* "  N. name  fixpoint|once  why" for each step, names padded to `width`. */
void glow_pass_print_steps(FILE *out, const glow_pass_desc *passes, const glow_pass_step *steps,
                           int nsteps, int width);
/* "  name  description" for every pass. */
void glow_pass_print_table(FILE *out, const glow_pass_desc *passes, int npasses, int width);
/* The statistics of the passes that ran, under `title` ("# <title>"): runs, removed, changes
 * and time, or (times_only) the time alone, and the total time. */
void glow_pass_print_stats(FILE *out, const char *title, const glow_pass_desc *passes,
                           const glow_pass_stats *st, int npasses, int width, bool times_only);

#endif
