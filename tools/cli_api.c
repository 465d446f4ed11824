// cli_api.c - The CLI as a client of the public API (include/glowc/glowc.h): the model options
// of run and bench (cli_model.c) as a glowc_options object, the exit code of a failed API call,
// and a session made from them - the one way `run` and `bench --devices` load and compile a
// model through libglowc.
//
// What stays on the pipeline's own interfaces, and why (docs/runtime-api.md, "The CLI and the
// API"): `profile` instruments the graph (a compile hook), `compile` emits bundles, `dump`,
// `memory` and `info` print the graph, the IR and the memory plan, `run --devices` partitions
// by the user's --assign, and --stats/--time-passes print the optimizer's per-pass figures.
// None of those belongs in an embedding API.
#include <stdlib.h>
#include <string.h>

#include "cli.h"

glowc_options *cli_api_options(const cli_model_opts *o)
{
    glowc_options *opt = glowc_options_create();
    if (!opt)
        return NULL;
    const cli_quant_opts *q = &o->quant;
    glowc_status st = glowc_options_set_backend(opt, o->backend);
    if (st == GLOWC_OK)
        st = glowc_options_set_threads(opt, o->threads);
    for (int i = 0; i < o->ndefines && st == GLOWC_OK; i++)
        st = glowc_options_add_define(opt, o->defines[i]);
    if (st == GLOWC_OK)
        st = glowc_options_set_no_optimize(opt, o->no_optimize);
    if (st == GLOWC_OK && o->cache_dir)
        st = glowc_options_set_cache_dir(opt, o->cache_dir);
    if (st == GLOWC_OK)
        st = glowc_options_set_max_memory(opt, o->max_memory);
    if (st == GLOWC_OK)
        st = glowc_options_set_report(opt, (o->stats ? GLOWC_REPORT_PASSES | GLOWC_REPORT_BACKEND
                                                     : 0) |
                                               (o->time_passes ? GLOWC_REPORT_PASS_TIMES : 0));
    if (st == GLOWC_OK && q->profile) {
        st = glowc_options_set_quantize(opt, q->profile);
        if (st == GLOWC_OK && q->schema)
            st = glowc_options_set_quant_schema(opt, q->schema);
        if (st == GLOWC_OK && q->calibration)
            st = glowc_options_set_quant_calibration(opt, q->calibration);
        if (st == GLOWC_OK)
            st = glowc_options_set_quant_per_channel(opt, q->per_channel);
        if (st == GLOWC_OK)
            st = glowc_options_set_quant_reduce_range(opt, q->reduce_range);
        if (st == GLOWC_OK && q->keep_float)
            st = glowc_options_set_quant_keep_float(opt, q->keep_float);
        if (st == GLOWC_OK && q->precision)
            st = glowc_options_set_quant_precision(opt, q->precision);
    }
    if (st != GLOWC_OK) {
        /* cli_model_match checked every value, so only memory can be missing here. */
        glowc_options_destroy(opt);
        return NULL;
    }
    return opt;
}

int cli_api_exit_code(glowc_status s)
{
    switch (s) {
    case GLOWC_OK: return CLI_EXIT_OK;
    case GLOWC_ERR_INVALID_ARGUMENT: return CLI_EXIT_USAGE;
    case GLOWC_ERR_IO:
    case GLOWC_ERR_BAD_MODEL:
    case GLOWC_ERR_UNSUPPORTED:
    case GLOWC_ERR_BAD_INPUT: return CLI_EXIT_BAD_MODEL;
    default: return CLI_EXIT_RUN_FAILED;
    }
}

int cli_api_model_error(const char *path, glowc_status s)
{
    const char *msg = glowc_last_error();
    /* The user must be able to tell which file failed even when the message is about a node
     * deep inside it. */
    if (strstr(msg, path))
        cli_error("%s", msg);
    else
        cli_error("%s: %s", path, msg);
    switch (s) {
    case GLOWC_ERR_INVALID_ARGUMENT: return CLI_EXIT_USAGE;
    case GLOWC_ERR_RUNTIME:
    case GLOWC_ERR_INTERNAL: return CLI_EXIT_RUN_FAILED;
    default:
        /* I/O, parse, unsupported, bad types or shapes, a plan over the memory limit: the
         * model (as cli_model_error says for the pipeline's statuses). */
        return CLI_EXIT_BAD_MODEL;
    }
}

glowc_status cli_api_session(const cli_model_opts *o, const char *path, glowc_session **out)
{
    *out = NULL;
    glowc_options *opt = cli_api_options(o);
    if (!opt)
        return GLOWC_ERR_NO_MEMORY;
    glowc_status st = glowc_session_create(opt, path, out);
    glowc_options_destroy(opt);
    return st;
}
