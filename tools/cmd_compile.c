// cmd_compile.c - `glowc compile MODEL --emit-bundle DIR`: compiles a model ahead of time for
// the cpu backend into a bundle (object file, header, weights) that links into a C program.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/bundle.h"
#include "cli.h"
#include "opt/opt.h"
#include "runtime/runtime.h"

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
    glow_bundle_weights weights;
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
            if (!val || !glow_bundle_name_ok(val))
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
                a->weights = GLOW_WEIGHTS_FILE;
            else if (val && !strcmp(val, "c-array"))
                a->weights = GLOW_WEIGHTS_C_ARRAY;
            else if (val && !strcmp(val, "embedded"))
                a->weights = GLOW_WEIGHTS_EMBEDDED;
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

/* The model file's stem as a C identifier: "models/my-net.onnx" -> "my_net". */
static void default_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = 0;
    if (*base >= '0' && *base <= '9')
        out[n++] = 'm';
    for (const char *c = base; *c && *c != '.' && n + 1 < size && n < 40; c++) {
        bool ok = *c == '_' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z');
        out[n++] = ok ? *c : '_';
    }
    out[n] = 0;
    if (!n || !strcmp(out, "m"))
        snprintf(out, size, "model");
}

int cmd_compile(int argc, char **argv)
{
    compile_args a = { .weights = GLOW_WEIGHTS_FILE };
    int rc = cli_model_init(&a.model, argc, "cpu") ? parse_args(argc, argv, &a)
                                                   : CLI_EXIT_RUN_FAILED;
    if (rc >= 0) {
        cli_model_free(&a.model);
        return rc;
    }
    char name[64];
    if (a.name)
        snprintf(name, sizeof name, "%s", a.name);
    else
        default_name(a.path, name, sizeof name);

    glow_onnx_options opt = { .defines = a.model.defines, .ndefines = a.model.ndefines };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    rc = CLI_EXIT_OK;
    if (glow_onnx_load(m, a.path, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        rc = cli_model_error(a.path, &d);
    } else {
        /* Another triple or CPU gets no host-ISA preparation (blocked layouts, repacking). */
        bool foreign = a.triple || (a.cpu && strcmp(a.cpu, "native"));
        glow_opt_options oo;
        glow_compile_options copt = { .stop_after = GLOW_STAGE_IR_OPTIMIZED,
                                      .foreign_target = foreign, .inline_control_flow = true };
        cli_model_options(&a.model, &oo, &copt);
        copt.threads = 0;   /* the compile itself; a->model.threads is the bundle's */
        if (glow_program_create(m, &copt, &p, &d) != GLOW_OK)
            rc = cli_model_error(a.path, &d);
    }
    if (rc == CLI_EXIT_OK) {
        glow_bundle_options bo = { .dir = a.dir, .name = name, .triple = a.triple,
                                   .cpu = a.cpu, .weights = a.weights, .threads = a.model.threads,
                                   .model = a.path };
        glow_bundle_info info;
        glow_bundle_io *ios = glow_xcalloc((size_t)(p->ninputs + p->noutputs) + 1, sizeof *ios);
        for (int i = 0; i < p->ninputs + p->noutputs; i++) {
            bool in = i < p->ninputs;
            const glow_node *ph = in ? p->inputs[i] : p->outputs[i - p->ninputs];
            ios[i] = (glow_bundle_io){ ph->name, &ph->outs[0],
                                       in ? p->input_vals[i] : p->output_vals[i - p->ninputs] };
        }
        glow_bundle_ios io = { ios, ios + p->ninputs, p->ninputs, p->noutputs };
        glow_status s = glow_bundle_emit(p->ir, &io, &bo, &info, &d);
        free(ios);
        if (s == GLOW_ERR_IO || s == GLOW_ERR_INTERNAL) {
            cli_error("compile: %s", d.msg);
            rc = CLI_EXIT_RUN_FAILED;
        } else if (s != GLOW_OK) {
            rc = cli_model_error(a.path, &d);
        } else {
            printf("bundle '%s' for %s (cpu %s): %d instructions as kernel calls\n", name,
                   info.triple, info.cpu, info.ninstr);
            printf("  %s/%s.o  %llu bytes\n", a.dir, name,
                   (unsigned long long)info.object_bytes);
            printf("  %s/%s.h\n", a.dir, name);
            printf("  %s/%s.weights.bin%s\n", a.dir, name,
                   a.weights == GLOW_WEIGHTS_C_ARRAY ? "  (and .weights.c)" : "");
            printf("  regions: constant %llu, mutable %llu, activations %llu bytes; "
                   "alignment %llu\n", (unsigned long long)info.constant_bytes,
                   (unsigned long long)info.mutable_bytes,
                   (unsigned long long)info.activation_bytes,
                   (unsigned long long)info.alignment);
        }
    }
    glow_program_destroy(p);
    cli_model_free(&a.model);
    return rc;
}
