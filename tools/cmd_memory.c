// cmd_memory.c - The IR optimizer and memory planner options of `glowc dump`: --memory (region
// sizes against the naive sum and the liveness lower bound), --memory-svg FILE (a picture of
// the plan), --no-ir-optimize, --ir-dump-after=PASS, --ir-stats, --print-ir-pipeline.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "iropt/iropt.h"
#include "runtime/runtime.h"

void cli_memory_help(void)
{
    printf("IR optimizer and memory plan (stages ir-optimized and later):\n"
           "  --memory           print the memory plan instead of the dump: region sizes, the\n"
           "                     naive sum of all activations, the liveness lower bound (most\n"
           "                     bytes live at once in the schedule) and their ratios\n"
           "  --memory-svg FILE  write an SVG of the activation plan to FILE (x: instruction,\n"
           "                     y: address; red: live bytes)\n"
           "  --no-ir-optimize   skip the IR optimizer (the best-fit planner still runs)\n"
           "  --ir-dump-after=PASS  print the IR after each run of IR pass PASS ('all': after\n"
           "                     every pass that changed something)\n"
           "  --ir-stats         per IR pass: runs, instructions removed, rewrites, time (stderr)\n"
           "  --print-ir-pipeline  print the IR optimizer's pipeline with reasons, then exit\n"
           "--memory and --memory-svg default the stage to ir-optimized.\n");
}

bool cli_memory_match(const char *arg, int *i, int argc, char **argv, cli_memory_args *m,
                      int *rc)
{
    const char *val = NULL;
    *rc = -1;
    if (!strcmp(arg, "--memory")) {
        m->report = true;
    } else if (cli_match_value(arg, "--memory-svg", i, argc, argv, &val)) {
        if (!val || !val[0])
            *rc = cli_usage_error("dump", "dump: --memory-svg needs a file name");
        m->svg = val;
    } else if (!strcmp(arg, "--no-ir-optimize")) {
        m->no_ir_optimize = true;
    } else if (!strcmp(arg, "--ir-stats")) {
        m->ir_stats = true;
    } else if (!strcmp(arg, "--print-ir-pipeline")) {
        ir_print_pipeline(stdout);
        *rc = CLI_EXIT_OK;
    } else if (cli_match_value(arg, "--ir-dump-after", i, argc, argv, &val)) {
        ir_pass_id id;
        if (!val || (strcmp(val, "all") != 0 && !ir_pass_from_name(val, &id)))
            *rc = cli_usage_error("dump", "dump: --ir-dump-after wants an IR pass name or 'all' "
                                  "(see --print-ir-pipeline), got '%s'", val ? val : "");
        m->ir_dump_after = val;
    } else {
        return false;
    }
    return true;
}

bool cli_memory_wanted(const cli_memory_args *m) { return m->report || m->svg; }

void cli_memory_compile_options(const cli_memory_args *m, struct glow_compile_options *copt,
                                struct ir_opt_options *io)
{
    *io = (ir_opt_options){ .dump_after = m->ir_dump_after, .dump_out = stdout,
                            .stats = m->ir_stats, .stats_out = stderr };
    copt->no_ir_optimize = m->no_ir_optimize;
    copt->ir_optimize = io;
    if (cli_memory_wanted(m) && copt->stop_after < GLOW_STAGE_IR)
        copt->stop_after = GLOW_STAGE_IR_OPTIMIZED;
}

static int write_svg(const char *path, const ir_function *f)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    if (!mem) {
        cli_error("dump: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    ir_memory_svg(mem, f);
    fclose(mem);
    glow_diag d = { 0 };
    int rc = CLI_EXIT_OK;
    if (glow_write_file(path, buf, size, &d) != GLOW_OK) {
        cli_error("dump: %s", d.len ? d.msg : path);
        rc = CLI_EXIT_RUN_FAILED;
    }
    free(buf);
    return rc;
}

int cli_memory_output(const struct glow_program *p, const cli_memory_args *m, FILE *out)
{
    if (!p->ir) {
        cli_error("dump: --memory needs an IR stage (ir or ir-optimized)");
        return CLI_EXIT_USAGE;
    }
    if (m->report) {
        ir_memory_report r;
        ir_memory_report_compute(p->ir, &r);
        ir_memory_report_print(out, &r);
    }
    return m->svg ? write_svg(m->svg, p->ir) : CLI_EXIT_OK;
}
