// iropt.h - The IR optimizer (a table of passes over the low-level IR, a default pipeline,
// dumps and statistics) and the static memory planner with its checker and report.
#ifndef GLOW_IROPT_H
#define GLOW_IROPT_H

#include <stdio.h>

#include "ir/ir.h"

typedef enum {
#define IRPASS(id, name, desc) IR_PASS_##id,
#include "iropt/passes.def"
#undef IRPASS
    IR_PASS_COUNT
} ir_pass_id;

typedef struct ir_opt_options {
    /* NULL: the default pipeline; else these passes in order, each once. */
    const ir_pass_id *passes;
    int npasses;
    /* Print the IR function to dump_out after every run of pass dump_after ("all": after every
     * pass that changed something), preceded by a "# after <pass>" line. */
    const char *dump_after;
    FILE *dump_out;
    /* Per-pass statistics (runs, changes, instructions removed, time) to stats_out. */
    bool stats;
    FILE *stats_out;
} ir_opt_options;

/* --- pipeline.c --- */

/* Runs the pipeline on f; the IR verifier runs after every pass and a pass that leaves an
 * invalid function is reported by name. o may be NULL (defaults). Addresses are not planned:
 * call ir_plan_memory_best_fit afterwards. */
glow_status ir_optimize(ir_function *f, const ir_opt_options *o, glow_diag *d);
/* One pass once; *changes gets the number of rewrites (may be NULL). */
glow_status ir_run_pass(ir_function *f, ir_pass_id id, const ir_opt_options *o, int *changes,
                        glow_diag *d);
const char *ir_pass_name(ir_pass_id id);
const char *ir_pass_description(ir_pass_id id);
bool ir_pass_from_name(const char *name, ir_pass_id *out);
/* The default pipeline, one pass per line with the reason for its position. */
void ir_print_pipeline(FILE *out);

/* --- plan_bestfit.c --- */

/* Places weights in their regions and activations in one region: every buffer is an interval
 * of program positions (allocactivation .. deallocactivation) and a size; buffers are placed
 * one by one, in a few orders (largest first, longest-lived first, ...), each at the smallest
 * free gap among the already placed buffers it overlaps in time (best fit, Glow's
 * allocate-all); the order giving the smallest region wins. Runs ir_memory_check on the
 * result. */
glow_status ir_plan_memory_best_fit(ir_function *f, glow_diag *d);
/* Checks a memory plan: no two activations live at the same time overlap (views checked
 * against their base's bounds), every buffer lies inside its region and is aligned, weights
 * of one region do not overlap. Fails naming both buffers. */
glow_status ir_memory_check(const ir_function *f, glow_diag *d);

/* --- memory_report.c --- */

typedef struct ir_memory_report {
    uint64_t constant_bytes, mutable_bytes, activation_bytes; /* the plan's regions */
    uint64_t naive_bytes;     /* every instruction result in its own buffer, never reused */
    uint64_t lower_bound;     /* max over program points of the live activations' bytes */
    uint32_t nbuffers;        /* activations (allocactivation count) */
    uint32_t ninstrs;         /* instructions other than alloc/dealloc */
    uint32_t ncopies;         /* copy instructions */
    uint32_t nconcats;        /* Concat instructions */
} ir_memory_report;

void ir_memory_report_compute(const ir_function *f, ir_memory_report *r);
void ir_memory_report_print(FILE *out, const ir_memory_report *r);
/* An SVG picture of the activation plan: one rectangle per buffer, x = its instruction range,
 * y = its address range; the live-bytes curve and the region size on top. */
void ir_memory_svg(FILE *out, const ir_function *f);

#endif
