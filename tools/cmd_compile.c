// cmd_compile.c - `glowc compile MODEL --emit-bundle DIR`: compiles a model ahead of time for
// the cpu backend into a bundle (object file, header, weights) that links into a C program,
// through the public API (glowc_bundle_create, glowc_bundle_write).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cmd_compile_help(void)
{
    printf("usage: glowc compile MODEL --emit-bundle DIR [--name NAME] [--target TRIPLE]\n"
           "                           [--mcpu CPU] [--weights file|c-array|embedded]\n"
           "                           [--backend cpu] [--threads N] [--define SYM=VAL]...\n"
           "                           [--no-optimize] [--stats] [--time-passes]\n"
           "                           [--quantize PROFILE [quantization options]]\n"
           "\n"
           "Compiles the ONNX model MODEL ahead of time for the cpu backend into a bundle\n"
           "(Glow's bundle ABI) in DIR:\n"
           "  NAME.o            the code: int NAME(uint8_t *constant_weights,\n"
           "                    uint8_t *mutable_weights, uint8_t *activations), returns 0\n"
           "  NAME.h            region sizes, alignment, each input's and output's offset in\n"
           "                    the mutable region (macros), a table of names, types, shapes\n"
           "  NAME.weights.bin  the constant region's contents\n"
           "  NAME.weights.c    (--weights c-array) the same bytes as a C array\n"
           "The caller allocates the three regions; the bundle allocates nothing and needs no\n"
           "glowc runtime (link it with -lm). Every instruction must have a kernel: a bundle\n"
           "has no evaluator to fall back on, and the ones without are listed (exit 2).\n"
           "\n"
           "options:\n"
           "  --emit-bundle DIR  write the bundle into DIR (created if missing)\n"
           "  --name NAME        the entry point and file stem, a C identifier (default: the\n"
           "                     model file's name, sanitized)\n"
           "  --target TRIPLE    LLVM target triple (default: this machine); x86_64-* and\n"
           "                     aarch64-* (e.g. aarch64-linux-gnu) are supported\n"
           "  --mcpu CPU         target CPU (default: this machine's for the host target,\n"
           "                     'generic' for another); the host's vector kernels are used\n"
           "                     only when neither --target nor --mcpu is given\n"
           "  --weights MODE     file (default): load NAME.weights.bin; c-array: also write\n"
           "                     NAME.weights.c; embedded: the weights inside NAME.o (pass NULL\n"
           "                     as constant_weights)\n"
           "  --backend cpu      the only backend bundles come from (the default)\n"
           "  --threads N        also generate NAME_thread for N threads (see NAME.h)\n"
           "  --define SYM=VAL   fix the symbolic input dim SYM (dim_param) to VAL; repeatable\n"
           "  --no-optimize      skip the graph optimizer (before and after lowering)\n"
           "  --stats            per optimizer pass: runs, nodes removed, rewrites, time (to\n"
           "                     stderr)\n"
           "  --time-passes      only the time of each optimizer pass (to stderr)\n");
    cli_quant_help();
    printf("  -h, --help         show this help\n"
           "\n"
           "exit status: 0 ok, 1 usage error, 2 bad or unsupported model (or an instruction\n"
           "without a kernel), 3 failure writing the bundle.\n");
}

typedef struct compile_args {
    const char *path, *dir, *name, *triple, *cpu;
    glowc_bundle_weights weights;
    cli_model_opts model;   /* --threads: the bundle's NAME_thread entry */
} compile_args;

static int parse_args(int argc, char **argv, compile_args *a)
{
    int rc = -1;
    a->model.no_cache = true;   /* a bundle's object file is made each time */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->path)
                return cli_usage_error("compile", "compile: more than one MODEL ('%s', '%s')",
                                       a->path, arg);
            a->path = arg;
        } else if (cli_is_help(arg)) {
            cmd_compile_help();
            return CLI_EXIT_OK;
        } else if (cli_match_value(arg, "--emit-bundle", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("compile", "compile: --emit-bundle needs a directory");
            a->dir = val;
        } else if (cli_match_value(arg, "--name", &i, argc, argv, &val)) {
            if (!val || !glowc_bundle_name_ok(val))
                return cli_usage_error("compile", "compile: --name wants a C identifier of at "
                                       "most 63 characters, got '%s'", val ? val : "");
            a->name = val;
        } else if (cli_match_value(arg, "--target", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("compile", "compile: --target needs a triple");
            a->triple = val;
        } else if (cli_match_value(arg, "--mcpu", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("compile", "compile: --mcpu needs a CPU name");
            a->cpu = val;
        } else if (cli_match_value(arg, "--weights", &i, argc, argv, &val)) {
            if (val && !strcmp(val, "file"))
                a->weights = GLOWC_WEIGHTS_FILE;
            else if (val && !strcmp(val, "c-array"))
                a->weights = GLOWC_WEIGHTS_C_ARRAY;
            else if (val && !strcmp(val, "embedded"))
                a->weights = GLOWC_WEIGHTS_EMBEDDED;
            else
                return cli_usage_error("compile", "compile: --weights wants file, c-array or "
                                       "embedded, got '%s'", val ? val : "");
        } else if (cli_model_match("compile", arg, &i, argc, argv, &a->model, &rc)) {
            if (rc >= 0)
                return rc;
            if (strcmp(a->model.backend, "cpu"))
                return cli_usage_error("compile", "compile: bundles come from the cpu backend, "
                                       "not '%s'", a->model.backend);
        } else {
            return cli_usage_error("compile", "compile: unknown option '%s'", arg);
        }
    }
    if (!a->path)
        return cli_usage_error("compile", "compile: missing MODEL");
    if (!a->dir)
        return cli_usage_error("compile", "compile: nothing to emit: give --emit-bundle DIR");
    return -1;
}

int cmd_compile(int argc, char **argv)
{
    compile_args a = { .weights = GLOWC_WEIGHTS_FILE };
    int rc = cli_model_init(&a.model, argc, "cpu") ? parse_args(argc, argv, &a)
                                                   : CLI_EXIT_RUN_FAILED;
    glowc_options *opt = rc < 0 ? cli_api_options(&a.model) : NULL;
    if (rc < 0 && !opt) {
        cli_error("compile: out of memory");
        rc = CLI_EXIT_RUN_FAILED;
    }
    glowc_bundle *b = NULL;
    glowc_status st = rc < 0 ? glowc_bundle_create(opt, a.path, a.triple, a.cpu, &b) : GLOWC_OK;
    if (st != GLOWC_OK)
        rc = cli_api_model_error(a.path, st);
    glowc_bundle_info info;
    if (rc < 0 && (st = glowc_bundle_write(b, a.dir, a.name, a.weights, &info)) != GLOWC_OK) {
        /* Writing the files failed (exit 3), or the model has what a bundle cannot hold. */
        if (st == GLOWC_ERR_IO || st == GLOWC_ERR_INTERNAL) {
            cli_error("compile: %s", glowc_last_error());
            rc = CLI_EXIT_RUN_FAILED;
        } else {
            rc = cli_api_model_error(a.path, st);
        }
    }
    if (rc < 0) {
        const char *name = info.name;
        printf("bundle '%s' for %s (cpu %s): %d instructions as kernel calls\n", name,
               info.triple, info.cpu, info.instructions);
        printf("  %s/%s.o  %llu bytes\n", a.dir, name, (unsigned long long)info.object_bytes);
        printf("  %s/%s.h\n", a.dir, name);
        printf("  %s/%s.weights.bin%s\n", a.dir, name,
               a.weights == GLOWC_WEIGHTS_C_ARRAY ? "  (and .weights.c)" : "");
        printf("  regions: constant %llu, mutable %llu, activations %llu bytes; "
               "alignment %llu\n", (unsigned long long)info.constant_bytes,
               (unsigned long long)info.mutable_bytes,
               (unsigned long long)info.activation_bytes,
               (unsigned long long)info.alignment);
        rc = CLI_EXIT_OK;
    }
    glowc_bundle_destroy(b);
    glowc_options_destroy(opt);
    cli_model_free(&a.model);
    return rc;
}
