// cli_model.c - The options that decide how a model is compiled, parsed and described once for
// `glowc run`, `bench`, `profile` and `compile`: --backend, --threads, --define, --max-memory,
// --no-optimize, --stats, --time-passes, and the quantization options (cli_api.c turns them
// into the public API's options; cli_model_options into the pipeline's, for run's own paths).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

bool cli_model_init(cli_model_opts *o, int argc, const char *backend)
{
    *o = (cli_model_opts){ .backend = backend };
    /* At most one --define per argument. */
    o->defines = calloc((size_t)argc + 1, sizeof *o->defines);
    return o->defines != NULL;
}

void cli_model_free(cli_model_opts *o)
{
    free(o->defines);
    o->defines = NULL;
}

bool cli_quant_match(const char *cmd, const char *arg, int *i, int argc, char **argv,
                     cli_quant_opts *q, int *rc)
{
    const char *val = NULL;
    char bad[64];
    glow_quant_schema schema;
    glow_quant_calibration calibration;
    if (cli_match_value(arg, "--quantize", i, argc, argv, &val)) {
        if (!val || !val[0])
            *rc = cli_usage_error(cmd, "%s: --quantize needs a profile file (glowc profile "
                                  "writes one)", cmd);
        q->profile = val;
    } else if (cli_match_value(arg, "--schema", i, argc, argv, &val)) {
        if (!val || !glow_quant_schema_from_name(val, &schema))
            *rc = cli_usage_error(cmd, "%s: --schema wants asymmetric, symmetric, "
                                  "symmetric-uint8 or symmetric-power2, got '%s'", cmd,
                                  val ? val : "");
        q->schema = val;
    } else if (cli_match_value(arg, "--calibration", i, argc, argv, &val)) {
        if (!val || !glow_quant_calibration_from_name(val, &calibration))
            *rc = cli_usage_error(cmd, "%s: --calibration wants minmax or kl, got '%s'", cmd,
                                  val ? val : "");
        q->calibration = val;
    } else if (!strcmp(arg, "--per-channel")) {
        q->per_channel = true;
    } else if (!strcmp(arg, "--reduce-range")) {
        q->reduce_range = true;
    } else if (cli_match_value(arg, "--keep-float", i, argc, argv, &val)) {
        if (!val || !glow_quant_kind_list_ok(val, bad, sizeof bad))
            *rc = cli_usage_error(cmd, "%s: --keep-float wants node kinds such as "
                                  "Conv,FullyConnected; '%s' is not one", cmd,
                                  val ? bad : "");
        q->keep_float = val;
    } else if (cli_match_value(arg, "--precision", i, argc, argv, &val)) {
        if (!val || (strcmp(val, "int8") && strcmp(val, "int16")))
            *rc = cli_usage_error(cmd, "%s: --precision wants int8 or int16, got '%s'", cmd,
                                  val ? val : "");
        q->precision = val;
    } else {
        return false;
    }
    return true;
}

bool cli_model_match(const char *cmd, const char *arg, int *i, int argc, char **argv,
                     cli_model_opts *o, int *rc)
{
    const char *val = NULL;
    *rc = -1;
    if (cli_match_value(arg, "--backend", i, argc, argv, &val)) {
        if (!val || !val[0])
            *rc = cli_usage_error(cmd, "%s: --backend needs a value", cmd);
        else if (!glow_backend_find(val))
            *rc = cli_usage_error(cmd, "%s: unknown backend '%s' (known: %s)", cmd, val,
                                  glow_backend_names());
        o->backend = val;
    } else if (cli_match_value(arg, "--threads", i, argc, argv, &val)) {
        char *end = NULL;
        long n = val && val[0] ? strtol(val, &end, 10) : -1;
        if (!val || !val[0] || *end || n < 1 || n > 1024)
            *rc = cli_usage_error(cmd, "%s: --threads wants a number from 1 to 1024, got '%s'",
                                  cmd, val ? val : "");
        o->threads = (int)n;
    } else if (cli_match_value(arg, "--define", i, argc, argv, &val)) {
        if (!val || !cli_valid_define(val))
            *rc = cli_usage_error(cmd, "%s: --define wants SYM=VAL with VAL a positive "
                                  "integer, got '%s'", cmd, val ? val : "");
        else
            o->defines[o->ndefines++] = val;
    } else if (!o->no_quant && cli_quant_match(cmd, arg, i, argc, argv, &o->quant, rc)) {
        return true;
    } else if (!o->no_cache && cli_match_value(arg, "--cache", i, argc, argv, &val)) {
        if (!val || !val[0] || !glow_make_dirs(val))
            *rc = cli_usage_error(cmd, "%s: --cache wants a directory glowc can create and "
                                  "write, got '%s'", cmd, val ? val : "");
        o->cache_dir = val;
    } else if (cli_match_value(arg, "--max-memory", i, argc, argv, &val)) {
        if (!glow_parse_size(val, &o->max_memory))
            *rc = cli_usage_error(cmd, "%s: --max-memory wants a size such as 64M, 2G or "
                                  "1048576 (bytes), got '%s'", cmd, val ? val : "");
    } else if (!strcmp(arg, "--no-optimize")) {
        o->no_optimize = true;
    } else if (!strcmp(arg, "--stats")) {
        o->stats = true;
    } else if (!strcmp(arg, "--time-passes")) {
        o->time_passes = true;
    } else {
        return false;
    }
    return true;
}

void cli_model_help(const char *threads_text)
{
    printf("  --backend B        the backend: %s (default %s)\n"
           "  --threads N        %s\n"
           "  --define SYM=VAL   fix the symbolic input dim SYM (dim_param) to VAL; repeatable\n"
           "  --cache DIR        keep the cpu backend's machine code in DIR (created if\n"
           "                     missing): compiling the same model with the same options\n"
           "                     again loads it instead of running LLVM\n"
           "  --no-optimize      skip the graph optimizer (before and after lowering)\n"
           "  --max-memory SIZE  refuse, at compile time, a model whose memory plan (weights,\n"
           "                     inputs and outputs, activations) exceeds SIZE (e.g. 512M,\n"
           "                     2G; default: the machine's memory)\n"
           "  --stats            per optimizer pass: runs, nodes removed, rewrites, time; then\n"
           "                     how many instructions the backend runs natively and which\n"
           "                     fall back to the evaluator (to stderr)\n"
           "  --time-passes      only the time of each optimizer pass (to stderr)\n",
           glow_backend_names(), "interpreter", threads_text);
}

void cli_quant_help(void)
{
    printf("  --quantize PROFILE run the model in 8-bit integers with the ranges `glowc\n"
           "                     profile` recorded (docs/quantization.md); with:\n"
           "    --schema S       asymmetric (default), symmetric, symmetric-uint8,\n"
           "                     symmetric-power2\n"
           "    --calibration C  minmax (default) or kl (clip ranges by KL divergence)\n"
           "    --per-channel    one weight scale per convolution output channel\n"
           "    --reduce-range   7-bit weights ([-63, 63]): faster on AVX2 without VNNI,\n"
           "                     a little less accurate\n"
           "    --keep-float K,..  node kinds that stay float (e.g. Conv,Add)\n"
           "    --precision P    int8 (default) or int16\n");
}

void cli_quant_resolve(const cli_quant_opts *q, FILE *stats_out, glow_quant_options *out)
{
    *out = (glow_quant_options){ .profile = q->profile, .per_channel = q->per_channel,
                                 .reduce_range = q->reduce_range, .keep_float = q->keep_float, .stats_out = stats_out,
                                 .precision = q->precision && !strcmp(q->precision, "int16")
                                                  ? GLOW_I16Q : GLOW_I8Q };
    /* Checked when parsed: a name that is not one stays the default. */
    if (q->schema)
        glow_quant_schema_from_name(q->schema, &out->schema);
    if (q->calibration)
        glow_quant_calibration_from_name(q->calibration, &out->calibration);
}

void cli_model_options(const cli_model_opts *o, glow_opt_options *oo, glow_quant_options *q,
                       glow_compile_options *copt)
{
    *oo = (glow_opt_options){ .stats = o->stats, .time_passes = o->time_passes,
                              .stats_out = stderr };
    copt->backend = o->backend;
    copt->threads = o->threads;
    copt->no_optimize = o->no_optimize;
    copt->cache_dir = o->cache_dir;
    copt->optimize = oo;
    /* A plan bigger than the machine would only fail later, in mmap or the OOM killer. */
    copt->max_memory = o->max_memory ? o->max_memory : glow_machine_memory();
    cli_quant_resolve(&o->quant, o->stats ? stderr : NULL, q);
    if (o->quant.profile) {
        copt->quant_hook = glow_quant_hook;
        copt->quant_ctx = q;
    }
}
