// cli.h - What the glowc subcommands share: exit codes, error reporting, option parsing.
#ifndef GLOWC_CLI_H
#define GLOWC_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "glowc/glowc.h"
#include "onnx/onnx.h"

/* The CLI's version is the library's (glowc_version(), the public header's
 * GLOWC_VERSION_*): the CLI is a client of libglowc and has none of its own. */

/* Exit codes promised by DESIGN.md. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_USAGE = 1,
    CLI_EXIT_BAD_MODEL = 2,
    CLI_EXIT_RUN_FAILED = 3,
};

/* --- glowc.c --- */

/* Prints "glowc: <message>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports a usage error for `cmd` with a pointer to its help, and returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports a failed library call on MODEL (the path is added when the message lacks it) and
 * returns the exit code for the status. */
int cli_model_error(const char *path, const glow_diag *d);
/* True when arg is "--name" (value in the next argument) or "--name=value"; *value is set
 * to the value, or NULL when it is missing (a usage error the caller reports). */
bool cli_match_value(const char *arg, const char *name, int *i, int argc, char **argv,
                     const char **value);
bool cli_is_help(const char *arg);
/* True for a well-formed --define value: SYM=VAL with VAL a positive integer. */
bool cli_valid_define(const char *def);

/* --- cli_model.c: the options deciding how a model compiles (run, bench, compile) --- */
struct glow_program;
struct glow_compile_options;
struct glow_opt_options;
struct glow_quant_options;
/* --quantize PROFILE [--schema S] [--calibration C] [--per-channel] [--keep-float K,...]
 * [--precision P], as given (checked when parsed): NULL for an option not given. */
typedef struct cli_quant_opts {
    const char *profile;      /* NULL: the model stays float */
    const char *schema, *calibration, *keep_float, *precision;
    bool per_channel, reduce_range;
} cli_quant_opts;
typedef struct cli_model_opts {
    const char *backend;      /* --backend B */
    int threads;              /* --threads N; 0: the backend's choice */
    const char **defines;     /* --define SYM=VAL, repeatable */
    int ndefines;
    bool no_optimize, stats, time_passes;
    cli_quant_opts quant;
    bool no_quant;            /* the command takes no quantization options (profile) */
    const char *cache_dir;    /* --cache DIR: the compiled-code cache; NULL: none */
    bool no_cache;            /* the command takes no --cache (compile, quantize) */
    uint64_t max_memory;      /* --max-memory SIZE; 0: the machine's memory */
} cli_model_opts;
/* Empty options with the default backend; false when out of memory. */
bool cli_model_init(cli_model_opts *o, int argc, const char *backend);
void cli_model_free(cli_model_opts *o);
/* True when arg is one of the model options (consuming its value); *rc is -1 to go on, else
 * the exit code of a usage error for `cmd` (already reported). */
bool cli_model_match(const char *cmd, const char *arg, int *i, int argc, char **argv,
                     cli_model_opts *o, int *rc);
/* The options' lines of --help; threads_text says what --threads means for the command. */
void cli_model_help(const char *threads_text);
/* The quantization options' lines of --help (run, bench, compile, dump). */
void cli_quant_help(void);
/* True when arg is one of the quantization options (consuming its value); *rc as for
 * cli_model_match. */
bool cli_quant_match(const char *cmd, const char *arg, int *i, int argc, char **argv,
                     cli_quant_opts *q, int *rc);
/* The quantizer's options for q (stats_out: its --stats line's stream, or NULL). */
void cli_quant_resolve(const cli_quant_opts *q, FILE *stats_out, struct glow_quant_options *out);
/* Sets the compile options' backend, threads, optimizer and quantization fields, for the
 * commands that use the pipeline itself (oo and q must outlive copt). */
void cli_model_options(const cli_model_opts *o, struct glow_opt_options *oo,
                       struct glow_quant_options *q, struct glow_compile_options *copt);

/* --- cli_api.c: the model options through the public API --- */

/* A glowc_options object with o's backend, threads, defines, optimizer switch, cache,
 * memory limit and quantization options; NULL when out of memory. */
glowc_options *cli_api_options(const cli_model_opts *o);
/* The CLI's exit code for a public API status. */
int cli_api_exit_code(glowc_status s);
/* Reports a failed load or compile of the model at path (glowc_last_error(), with the path
 * when the message lacks it) and returns the exit code, as cli_model_error does. */
int cli_api_model_error(const char *path, glowc_status s);
/* Loads and compiles the model at path as a session with o's options (glowc_last_error()
 * says why when it fails). */
glowc_status cli_api_session(const cli_model_opts *o, const char *path, glowc_session **out);

/* --- cli_samples.c: sample inputs of profile and run --compare-float --- */

/* One sample: a file per model input, and what to call it in messages. */
typedef struct cli_sample {
    char *label;
    char **files;
} cli_sample;

typedef struct cli_sample_list {
    GLOW_VEC(cli_sample) v;
    const glow_onnx_summary *s;   /* the model's inputs */
    const char *cmd;              /* the command, for messages */
} cli_sample_list;

/* Adds the samples of one INPUT: a tensor file (one sample of a one-input model), a folder
 * of test_data_set_* folders, a folder holding input_0.pb ..., or a folder of tensor files.
 * Returns -1, or the exit code after reporting. */
int cli_samples_collect(cli_sample_list *l, const char *input);
void cli_samples_free(cli_sample_list *l);
/* Reads sample si into tensors (model order), checked against the declared inputs (with
 * o's --define values) and the first sample's types (first: NULL for the first sample). */
int cli_samples_read(const cli_model_opts *o, const cli_sample_list *l, int si,
                     const glow_type *first, glow_tensor *tensors);
void cli_tensors_free(glow_tensor *t, int n);

/* --- cmd_compare.c: run --quantize ... --compare-float --- */

/* Runs the float and the quantized model (o->quant) on every sample of `inputs` and prints,
 * per output, the max and mean absolute error, the SNR in dB and the top-1 agreement. */
int cli_compare_float(const char *path, const cli_model_opts *o, const char *const *inputs,
                      int ninputs);

/* --- cmd_info.c --- */
int cmd_info(int argc, char **argv);
void cmd_info_help(void);

/* --- cmd_dump.c --- */
int cmd_dump(int argc, char **argv);
void cmd_dump_help(void);

/* --- cmd_memory.c --- */
struct glow_program;
struct glow_compile_options;
struct ir_opt_options;
typedef struct cli_memory_args {
    bool report;              /* --memory */
    const char *svg;          /* --memory-svg FILE */
    bool no_ir_optimize, ir_stats;
    const char *ir_dump_after;
} cli_memory_args;
void cli_memory_help(void);
/* True when arg is one of the IR/memory options (consuming its value); *rc is -1 to go on,
 * else the exit code to return at once. */
bool cli_memory_match(const char *arg, int *i, int argc, char **argv, cli_memory_args *m,
                      int *rc);
bool cli_memory_wanted(const cli_memory_args *m);
/* Sets the IR optimizer options (io must outlive copt) and, for --memory, the stage. */
void cli_memory_compile_options(const cli_memory_args *m, struct glow_compile_options *copt,
                                struct ir_opt_options *io);
/* Prints the memory report to out and writes the SVG. */
int cli_memory_output(const struct glow_program *p, const cli_memory_args *m, FILE *out);

/* --- cmd_run.c --- */
int cmd_run(int argc, char **argv);
/* One vector of scores ([K], [1, K], ...: a classifier's output), where a prediction means
 * something. */
bool cli_is_scores(const glow_type *t);
/* Index of the largest value of t (first of equals; NaN never wins), -1 when there is none;
 * *best gets it. */
int64_t cli_argmax(const glow_tensor *t, double *best);
void cmd_run_help(void);

/* --- cmd_bench.c --- */
int cmd_bench(int argc, char **argv);
void cmd_bench_help(void);

/* --- cmd_bench_host.c: bench --devices, through the public API's host --- */
typedef struct cli_bench_host_opts {
    const char *path, *devices;
    int clients, requests, warmup;
    const cli_model_opts *model;  /* defines, no_optimize, cache, quantization */
    bool json;
} cli_bench_host_opts;
int cli_bench_host(const cli_bench_host_opts *o);

/* --- cmd_compile.c --- */
int cmd_compile(int argc, char **argv);
void cmd_compile_help(void);

/* --- cmd_profile.c --- */
int cmd_profile(int argc, char **argv);
void cmd_profile_help(void);

/* --- cmd_quantize.c --- */
int cmd_quantize(int argc, char **argv);
void cmd_quantize_help(void);

#endif
