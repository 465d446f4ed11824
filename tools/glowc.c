// glowc.c - The glowc command line: global options and dispatch to the subcommands.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*help)(void);
} command;

/* Only what this build implements is listed, so `--help` never promises a missing command. */
static const command commands[] = {
    { "info", "inputs, outputs, opsets, op histogram and unsupported ops of an ONNX model",
      cmd_info, cmd_info_help },
    { "dump", "print a model's graph (as loaded or lowered; text or Graphviz dot) or its IR",
      cmd_dump, cmd_dump_help },
    { "run", "compile a model and run it once on input tensor files",
      cmd_run, cmd_run_help },
    { "bench", "compile a model and time repeated runs: latency, throughput, memory",
      cmd_bench, cmd_bench_help },
    { "compile", "compile a model ahead of time into a bundle (object, header, weights)",
      cmd_compile, cmd_compile_help },
    { "profile", "run a model on sample inputs, record value ranges for quantization",
      cmd_profile, cmd_profile_help },
    { "quantize", "quantize a model with a profile and write it as an ONNX QDQ model",
      cmd_quantize, cmd_quantize_help },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: glowc <command> [options] MODEL\n"
            "       glowc help <command>\n"
            "       glowc --help | --version\n"
            "\n"
            "glowc is an ahead-of-time neural-network compiler following the design of Glow.\n"
            "It imports ONNX models, optimizes and lowers the graph, generates the low-level\n"
            "IR and runs it on the reference interpreter (--backend interpreter) or as machine\n"
            "code from LLVM (--backend cpu: in this process, or ahead of time as a bundle).\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Run 'glowc <command> --help' for the options of a command.\n"
            "\n"
            "exit status: 0 ok, 1 usage error, 2 bad or unsupported model,\n"
            "             3 failure while running\n");
}

/* "glowc: <message>" on stderr. Messages quote names and paths from the model and the user,
 * so they are escaped (no terminal escape sequence or invalid UTF-8 reaches the terminal). */
static void put_error(const char *fmt, va_list ap)
{
    char raw[8192], safe[8192];
    vsnprintf(raw, sizeof raw, fmt, ap);
    glow_escape(safe, sizeof safe, raw, GLOW_ESC_PLAIN, GLOW_ESC_KEEP_NEWLINE, 0);
    fprintf(stderr, "glowc: %s\n", safe);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_error(fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_error(fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "Run 'glowc %s --help' for usage.\n", cmd);
    else
        fprintf(stderr, "Run 'glowc --help' for usage.\n");
    return CLI_EXIT_USAGE;
}

int cli_model_error(const char *path, const glow_diag *d)
{
    const char *msg = d->len ? d->msg : glow_status_name(d->status);
    /* The user must be able to tell which file failed even when the message is about a node
     * deep inside it. */
    if (strstr(msg, path))
        cli_error("%s", msg);
    else
        cli_error("%s: %s", path, msg);
    switch (d->status) {
    case GLOW_OK:
    case GLOW_ERR_USAGE:
        return CLI_EXIT_USAGE;
    case GLOW_ERR_RUNTIME:
    case GLOW_ERR_INTERNAL:
        return CLI_EXIT_RUN_FAILED;
    default:
        /* I/O, parse, unsupported, bad attributes/types/shapes, too large: the model. */
        return CLI_EXIT_BAD_MODEL;
    }
}

bool cli_match_value(const char *arg, const char *name, int *i, int argc, char **argv,
                     const char **value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return false;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    if (arg[n] != '\0')
        return false;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

bool cli_is_help(const char *arg)
{
    return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* Checking here turns a typo into a usage error instead of a confusing load failure. */
bool cli_valid_define(const char *def)
{
    const char *eq = strchr(def, '=');
    if (!eq || eq == def || eq[1] == '\0')
        return false;
    char *end = NULL;
    long long v = strtoll(eq + 1, &end, 10);
    return *end == '\0' && v > 0;
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *arg = argv[1];
    if (cli_is_help(arg)) {
        print_help(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "--version")) {
        printf("glowc %s\n", glowc_version());
        return CLI_EXIT_OK;
    }
    if (!strcmp(arg, "help")) {
        if (argc < 3) {
            print_help(stdout);
            return CLI_EXIT_OK;
        }
        const command *c = find_command(argv[2]);
        if (!c)
            return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
        c->help();
        return CLI_EXIT_OK;
    }
    if (arg[0] == '-')
        return cli_usage_error(NULL, "unknown option '%s'", arg);
    const command *c = find_command(arg);
    if (!c)
        return cli_usage_error(NULL, "unknown command '%s'", arg);
    /* Subcommands see their own name as argv[0], like a separate program. */
    return c->run(argc - 1, argv + 1);
}
