// cmd_dump.c - `glowc dump MODEL`: loads a model and prints its graph as text or Graphviz dot.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Stages DESIGN.md names for `dump`; only those with available=true exist in this version.
 * Listing the rest lets the error say why `--stage optimized` is refused. */
static const struct {
    const char *name;
    bool available;
} stages[] = {
    { "loaded", true },
    { "optimized", false },
    { "lowered", false },
    { "ir", false },
    { "ir-optimized", false },
};
#define NSTAGES (sizeof stages / sizeof stages[0])

void cmd_dump_help(void)
{
    printf("usage: glowc dump MODEL [--stage loaded] [--format text|dot]\n"
           "                        [--define SYM=VAL]... [-o FILE]\n"
           "\n"
           "Loads the ONNX model MODEL into glowc's typed graph and prints it. Shape\n"
           "computations are folded at load time, so every type in the dump is static.\n"
           "\n"
           "options:\n"
           "  --stage STAGE      the graph to print; 'loaded' (as imported) is the only stage\n"
           "                     of this version\n"
           "  --format FORMAT    'text' (default): one line per node with attributes and\n"
           "                     result types; 'dot': a Graphviz digraph of the main function\n"
           "  --define SYM=VAL   fix the symbolic input dim SYM (dim_param) to VAL; repeatable\n"
           "  -o, --output FILE  write to FILE (replaced atomically) instead of stdout\n"
           "  -h, --help         show this help\n"
           "\n"
           "A model that cannot be loaded exits with 2; the message lists every unsupported\n"
           "op of the model, or names the node at fault.\n");
}

/* A define must be NAME=VALUE with a positive integer value; checking here turns a typo into
 * a usage error instead of a confusing load failure. */
static bool valid_define(const char *def)
{
    const char *eq = strchr(def, '=');
    if (!eq || eq == def || eq[1] == '\0')
        return false;
    char *end = NULL;
    long long v = strtoll(eq + 1, &end, 10);
    return *end == '\0' && v > 0;
}

typedef struct dump_args {
    const char *path;
    const char *stage;
    const char *format;
    const char *output;
    const char **defines;
    int ndefines;
} dump_args;

/* Returns -1 when parsing succeeded, otherwise the exit code to return at once. */
static int parse_args(int argc, char **argv, dump_args *a)
{
    bool only_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (a->path)
                return cli_usage_error("dump", "dump: takes one MODEL, got '%s' and '%s'",
                                       a->path, arg);
            a->path = arg;
        } else if (!strcmp(arg, "--")) {
            only_positional = true;
        } else if (cli_is_help(arg)) {
            cmd_dump_help();
            return CLI_EXIT_OK;
        } else if (cli_match_value(arg, "--stage", &i, argc, argv, &val)) {
            if (!val)
                return cli_usage_error("dump", "dump: --stage needs a value");
            a->stage = val;
        } else if (cli_match_value(arg, "--format", &i, argc, argv, &val)) {
            if (!val)
                return cli_usage_error("dump", "dump: --format needs a value");
            a->format = val;
        } else if (cli_match_value(arg, "--define", &i, argc, argv, &val)) {
            if (!val || !valid_define(val))
                return cli_usage_error("dump", "dump: --define wants SYM=VAL with VAL a positive "
                                       "integer, got '%s'", val ? val : "");
            a->defines[a->ndefines++] = val;
        } else if (cli_match_value(arg, "--output", &i, argc, argv, &val) ||
                   cli_match_value(arg, "-o", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("dump", "dump: -o needs a file name");
            a->output = val;
        } else {
            return cli_usage_error("dump", "dump: unknown option '%s'", arg);
        }
    }
    if (!a->path)
        return cli_usage_error("dump", "dump: missing MODEL");
    if (strcmp(a->format, "text") != 0 && strcmp(a->format, "dot") != 0)
        return cli_usage_error("dump", "dump: unknown format '%s' (expected text or dot)",
                               a->format);
    for (size_t k = 0; k < NSTAGES; k++) {
        if (!strcmp(stages[k].name, a->stage)) {
            if (stages[k].available)
                return -1;
            return cli_usage_error("dump", "dump: stage '%s' is not available in this version "
                                   "(available: loaded)", a->stage);
        }
    }
    return cli_usage_error("dump", "dump: unknown stage '%s' (available: loaded)", a->stage);
}

/* Prints the module in the requested format; false when there is no main function. */
static bool print_graph(FILE *out, glow_module *m, const char *format)
{
    if (!strcmp(format, "text")) {
        glow_module_print(out, m);
        return true;
    }
    glow_function *f = glow_module_function(m, "main");
    if (!f)
        return false;
    glow_function_dump_dot(out, f);
    return true;
}

/* Renders into memory and then writes FILE atomically, so a failed dump never leaves a
 * truncated file behind. */
static int write_output(const char *path, glow_module *m, const char *format)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    if (!mem) {
        cli_error("dump: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    bool ok = print_graph(mem, m, format);
    fclose(mem);
    int rc = CLI_EXIT_OK;
    if (!ok) {
        cli_error("dump: the model has no function 'main'");
        rc = CLI_EXIT_RUN_FAILED;
    } else {
        glow_diag d = { 0 };
        if (glow_write_file(path, buf, size, &d) != GLOW_OK) {
            cli_error("dump: %s", d.len ? d.msg : path);
            rc = CLI_EXIT_RUN_FAILED;
        }
    }
    free(buf);
    return rc;
}

int cmd_dump(int argc, char **argv)
{
    dump_args a = { .stage = "loaded", .format = "text" };
    /* At most one define per argument, so argc bounds the array. */
    a.defines = calloc((size_t)argc + 1, sizeof *a.defines);
    if (!a.defines) {
        cli_error("dump: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        free(a.defines);
        return rc;
    }

    glow_onnx_options opt = { .defines = a.defines, .ndefines = a.ndefines };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    if (glow_onnx_load(m, a.path, &opt, &d) != GLOW_OK) {
        rc = cli_model_error(a.path, &d);
    } else if (a.output) {
        rc = write_output(a.output, m, a.format);
    } else if (!print_graph(stdout, m, a.format)) {
        cli_error("dump: the model has no function 'main'");
        rc = CLI_EXIT_RUN_FAILED;
    } else if (fflush(stdout) != 0) {
        cli_error("dump: cannot write the output");
        rc = CLI_EXIT_RUN_FAILED;
    } else {
        rc = CLI_EXIT_OK;
    }
    glow_module_destroy(m);
    free(a.defines);
    return rc;
}
