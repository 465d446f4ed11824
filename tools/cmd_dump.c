// cmd_dump.c - `glowc dump MODEL`: prints a model's graph (as loaded or lowered) as text or
// Graphviz dot, or its low-level IR with the memory plan.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "iropt/iropt.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/partition.h"
#include "runtime/runtime.h"

/* Stages DESIGN.md names for `dump`; only those with available=true exist in this version.
 * Listing the rest lets the error say why `--stage optimized` is refused. */
static const struct {
    const char *name;
    bool available;
    glow_stage stage;
    bool graph;        /* a graph stage (text or dot); otherwise IR text */
} stages[] = {
    { "loaded", true, GLOW_STAGE_LOADED, true },
    { "optimized", true, GLOW_STAGE_OPTIMIZED, true },
    { "lowered", true, GLOW_STAGE_LOWERED, true },
    { "ir", true, GLOW_STAGE_IR, false },
    { "ir-optimized", true, GLOW_STAGE_IR_OPTIMIZED, false },
    /* The cpu backend's optimized LLVM IR (printed through the "llvm" format, below). */
    { "llvm", true, GLOW_STAGE_IR_OPTIMIZED, false },
};
#define NSTAGES (sizeof stages / sizeof stages[0])

void cmd_dump_help(void)
{
    printf("usage: glowc dump MODEL [--stage loaded|optimized|lowered|ir] [--format text|dot]\n"
           "                        [--backend B] [--define SYM=VAL]... [-o FILE]\n"
           "                        [--no-optimize] [--dump-after=PASS] [--stats]\n"
           "                        [--time-passes] [--quantize PROFILE [options]]\n"
           "       glowc dump MODEL --partitions --devices SPEC [--assign NODE=DEV]...\n"
           "                        [--split-nodes]\n"
           "                        [--dot FILE] [-o FILE]\n"
           "       glowc dump --print-pipeline\n"
           "\n"
           "Loads the ONNX model MODEL into glowc's typed graph and prints it at a stage of\n"
           "the compile pipeline. Shape computations are folded at load time, so every type\n"
           "in the dump is static.\n"
           "\n"
           "options:\n"
           "  --stage STAGE      what to print:\n"
           "                       loaded   the graph as imported (default)\n"
           "                       optimized the graph after the optimizer (before lowering)\n"
           "                       lowered  the graph after lowering for the backend and\n"
           "                                scheduling (node order = execution order)\n"
           "                       ir       the low-level IR (weights, instructions with\n"
           "                                @in/@out operands, activation allocations with\n"
           "                                their planned offsets); the last line gives the\n"
           "                                memory plan (constant, mutable and activation\n"
           "                                region sizes in bytes)\n"
           "                       ir-optimized  the IR after the IR optimizer, planned by\n"
           "                                the best-fit planner\n"
           "                       llvm     the cpu backend's LLVM IR after its O2 pipeline\n"
           "                                (kernels inlined; implies --backend cpu)\n"
           "  --format FORMAT    'text' (default): one line per node with attributes and\n"
           "                     result types; 'dot': a Graphviz digraph of the main function\n"
           "                     (graph stages only)\n"
           "  --backend B        the backend lowering prepares for: %s\n"
           "                     (default interpreter)\n"
           "  --define SYM=VAL   fix the symbolic input dim SYM (dim_param) to VAL; repeatable\n"
           "  -o, --output FILE  write to FILE (replaced atomically) instead of stdout\n"
           "  --no-optimize      skip the graph optimizer (before and after lowering)\n"
           "  --dump-after=PASS  print the module to stdout after each run of optimizer pass\n"
           "                     PASS ('all': after every pass that changed something)\n"
           "  --stats            per optimizer pass: runs, nodes removed, rewrites, time (to\n"
           "                     stderr); with --quantize, how many nodes were quantized;\n"
           "                     from --stage ir-optimized on, a line per conv with its\n"
           "                     kernel (cpu: winograd or direct; int8 winograd, direct\n"
           "                     or depthwise)\n"
           "  --time-passes      only the time of each optimizer pass (to stderr)\n"
           "  --print-pipeline   print the optimizer's default pipelines with the reason for\n"
           "                     each pass, and the pass list, then exit\n"
           "  --partitions       split the optimized graph over the --devices (by memory\n"
           "                     capacity, and --assign) and print the partitions: device,\n"
           "                     nodes, weight, input/output and activation bytes (estimated),\n"
           "                     and the tensors crossing partitions (docs/partitioning.md)\n"
           "  --devices SPEC     the devices, e.g. cpu:256MiB,cpu:256MiB or interpreter:1GiB\n"
           "                     (backend[:capacity], capacity in B, KiB, MiB, GiB, KB, MB, GB)\n"
           "  --assign NODE=DEV  put graph node NODE (as --stage optimized names it) on device\n"
           "                     index DEV; repeatable\n"
           "  --split-nodes      split a Gemm/FullyConnected/MatMul whose weights no device\n"
           "                     holds into products over column slices (else: an error)\n"
           "  --dot FILE         with --partitions: write the partition graph as Graphviz DOT\n"
           "  -h, --help         show this help\n"
           "\n"
           "A model that cannot be loaded exits with 2; the message lists every unsupported\n"
           "op of the model, or names the node at fault.\n", glow_backend_names());
    cli_memory_help();
    cli_quant_help();
}

typedef struct dump_args {
    const char *path;
    const char *stage;
    int stage_index;      /* into stages[] */
    const char *format;
    const char *backend;
    const char *output;
    const char **defines;
    int ndefines;
    bool no_optimize, stats, time_passes;
    const char *dump_after;
    cli_memory_args mem;
    cli_quant_opts quant;
    bool partitions;      /* --partitions */
    const char *devices;  /* --devices SPEC */
    const char *dot;      /* --dot FILE */
    const char **assign;  /* --assign NODE=DEV */
    int nassign;
    bool split_nodes;     /* --split-nodes */
} dump_args;

/* Returns -1 when parsing succeeded, otherwise the exit code to return at once. */
static int parse_args(int argc, char **argv, dump_args *a)
{
    bool only_positional = false;
    int mrc;
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
        } else if (!strcmp(arg, "--print-pipeline")) {
            glow_print_pipeline(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(arg, "--partitions")) {
            a->partitions = true;
        } else if (!strcmp(arg, "--split-nodes")) {
            a->split_nodes = true;
        } else if (cli_match_value(arg, "--devices", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("dump", "dump: --devices needs a device list such as "
                                       "cpu:256MiB,cpu:256MiB");
            a->devices = val;
        } else if (cli_match_value(arg, "--dot", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("dump", "dump: --dot needs a file name");
            a->dot = val;
        } else if (cli_match_value(arg, "--assign", &i, argc, argv, &val)) {
            if (!val || !strchr(val, '='))
                return cli_usage_error("dump", "dump: --assign wants NODE=DEVICE, got '%s'",
                                       val ? val : "");
            a->assign[a->nassign++] = val;
        } else if (!strcmp(arg, "--no-optimize")) {
            a->no_optimize = true;
        } else if (!strcmp(arg, "--stats")) {
            a->stats = true;
        } else if (!strcmp(arg, "--time-passes")) {
            a->time_passes = true;
        } else if (cli_match_value(arg, "--dump-after", &i, argc, argv, &val)) {
            glow_pass_id id;
            if (!val || (strcmp(val, "all") != 0 && !glow_pass_from_name(val, &id)))
                return cli_usage_error("dump", "dump: --dump-after wants a pass name or 'all' "
                                       "(see --print-pipeline), got '%s'", val ? val : "");
            a->dump_after = val;
        } else if (cli_memory_match(arg, &i, argc, argv, &a->mem, &mrc)) {
            if (mrc >= 0)
                return mrc;
        } else if (cli_quant_match("dump", arg, &i, argc, argv, &a->quant, &mrc)) {
            if (mrc >= 0)
                return mrc;
        } else if (cli_match_value(arg, "--stage", &i, argc, argv, &val)) {
            if (!val)
                return cli_usage_error("dump", "dump: --stage needs a value");
            a->stage = val;
        } else if (cli_match_value(arg, "--format", &i, argc, argv, &val)) {
            if (!val)
                return cli_usage_error("dump", "dump: --format needs a value");
            a->format = val;
        } else if (cli_match_value(arg, "--backend", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("dump", "dump: --backend needs a value");
            a->backend = val;
        } else if (cli_match_value(arg, "--define", &i, argc, argv, &val)) {
            if (!val || !cli_valid_define(val))
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
    if (a->partitions != (a->devices != NULL) ||
        (!a->partitions && (a->dot || a->nassign || a->split_nodes)))
        return cli_usage_error("dump", "dump: --partitions and --devices go together; --dot, "
                               "--assign and --split-nodes need them");
    if (strcmp(a->format, "text") != 0 && strcmp(a->format, "dot") != 0)
        return cli_usage_error("dump", "dump: unknown format '%s' (expected text or dot)",
                               a->format);
    if (!glow_backend_find(a->backend))
        return cli_usage_error("dump", "dump: unknown backend '%s' (known: %s)", a->backend,
                               glow_backend_names());
    for (size_t k = 0; k < NSTAGES; k++) {
        if (strcmp(stages[k].name, a->stage) != 0)
            continue;
        if (!stages[k].available)
            return cli_usage_error("dump", "dump: stage '%s' is not available in this version "
                                   "(available: loaded, optimized, lowered, ir, ir-optimized, "
                                   "llvm)",
                                   a->stage);
        if (!stages[k].graph && strcmp(a->format, "text") != 0)
            return cli_usage_error("dump", "dump: --format %s is for graph stages; the '%s' "
                                   "stage prints text only", a->format, a->stage);
        a->stage_index = (int)k;
        return -1;
    }
    return cli_usage_error("dump", "dump: unknown stage '%s' (available: loaded, optimized, "
                           "lowered, ir, ir-optimized, llvm)", a->stage);
}

/* Prints the program at its stage in the requested format; false when there is nothing to
 * print (no main function, or no IR). */
static bool print_graph(FILE *out, const glow_program *p, const char *format)
{
    glow_module *m = p->m;
    if (p->ir && !strcmp(format, "llvm")) {
        char *text = NULL;
        glow_diag d = { 0 };
        if (glow_cpu_llvm_ir(p->ir, &text, &d) != GLOW_OK) {
            cli_error("dump: %s", d.msg);
            return false;
        }
        fputs(text, out);
        free(text);
        return true;
    }
    if (p->ir) {
        ir_function_print(out, p->ir);
        return true;
    }
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

/* The channels of a conv operand, blocked ([N][C/V][H][W][V]) or plain. */
static int64_t channels(const glow_type *t)
{
    return t->rank == 5 ? t->dims[1] * t->dims[4] : t->dims[1];
}

static void print_conv_line(FILE *out, const char *name, int64_t kh, int64_t kw, int64_t sh,
                            int64_t sw, int64_t c, int64_t m, int64_t h, int64_t w,
                            const char *kernel, const char *with)
{
    fprintf(out, "conv '%s' %lldx%lld/%lldx%lld %lld->%lld channels at %lldx%lld: %s%s%s%s\n",
            name ? name : "?", (long long)kh, (long long)kw, (long long)sh, (long long)sw,
            (long long)c, (long long)m, (long long)h, (long long)w, kernel,
            with ? " '" : "", with ? with : "", with ? "' (cpu.pwdw_nchwc)" : "");
}

/* --stats, from the ir-optimized stage on: one line per convolution with the kernel that runs
 * it, so the cpu backend's choice between Winograd and the direct kernel (its cost model,
 * docs/cpu-backend.md) shows per layer, and a 1x1 expansion fused with the depthwise conv
 * after it (cpu.pwdw_nchwc) as two lines naming each other. Shapes in channels, whatever the
 * layout. */
static void print_conv_kernels(FILE *out, const glow_program *p)
{
    for (const ir_instr *in = p->ir ? p->ir->first : NULL; in; in = in->next) {
        const char *k = in->kind == IK_CPU_WINO_NCHWC   ? "winograd F(4x4,3x3)"
                        : in->kind == IK_CPU_CONV_NCHWC ? "direct"
                        : in->kind == IK_CPU_DWCONV_NCHWC ? "depthwise"
                        : in->kind == IK_CPU_PWDW_NCHWC ? "depthwise, fused with"
                        : in->kind == IK_CONV ? "reference" : NULL;
        /* The int8 convolutions on NHWC bytes ([N][H][W][cs]); FC layers (rank 2) are not
         * listed. */
        bool nhwc = in->kind == IK_CPU_QCONV_NHWC || in->kind == IK_CPU_QDWCONV_NHWC;
        const char *qk = NULL;
        for (uint32_t i = 0; i < in->nattr; i++)
            if (in->attrs[i].id == GA_QKERNEL)
                qk = in->attrs[i].v.s;
        if (nhwc && in->nops >= 3 && in->ops[0].v->type.rank == 4)
            k = in->kind == IK_CPU_QDWCONV_NHWC  ? "int8 depthwise"
                : qk && !strcmp(qk, "winograd") ? "int8 winograd F(2x2,3x3)"
                : qk && !strcmp(qk, "7-bit")    ? "int8 direct, 7-bit weights"
                                                : "int8 direct";
        if (!k || in->nops < 3)
            continue;
        const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
        int64_t c = channels(x), m = channels(y);
        if (nhwc)
            c = x->dims[3], m = y->dims[3];
        int64_t kh = 0, kw = 0, sh = 0, sw = 0;
        const char *pw = NULL;
        for (uint32_t i = 0; i < in->nattr; i++) {
            const glow_attr *a = &in->attrs[i];
            if (a->id == GA_KERNEL && a->n == 2)
                kh = a->v.ints[0], kw = a->v.ints[1];
            else if (a->id == GA_STRIDES && a->n == 2)
                sh = a->v.ints[0], sw = a->v.ints[1];
            else if (a->id == GA_PW_NAME)
                pw = a->v.s;
        }
        if (in->kind == IK_CPU_PWDW_NCHWC) {
            /* The 1x1 expansion into the depthwise's m channels, then the depthwise. */
            print_conv_line(out, pw, 1, 1, 1, 1, c, m, x->dims[2], x->dims[3],
                            "direct, fused into", in->name);
            print_conv_line(out, in->name, kh, kw, sh, sw, m, m, y->dims[2], y->dims[3], k, pw);
        } else {
            print_conv_line(out, in->name, kh, kw, sh, sw, c, m, y->dims[nhwc ? 1 : 2],
                            y->dims[nhwc ? 2 : 3], k, NULL);
        }
    }
}

/* Renders into memory and then writes FILE atomically, so a failed dump never leaves a
 * truncated file behind. */
static int write_output(const char *path, const glow_program *p, const char *format)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    if (!mem) {
        cli_error("dump: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    bool ok = print_graph(mem, p, format);
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

/* --partitions: the plan as text (stdout or -o FILE) and as DOT (--dot FILE). */
static int dump_partitions(const dump_args *a, glow_module *m)
{
    glow_diag d = { 0 };
    glow_device_spec *devs = NULL;
    int ndevs = 0;
    if (glow_devices_parse(a->devices, &devs, &ndevs, &d) != GLOW_OK) {
        glow_module_destroy(m);
        return cli_usage_error("dump", "dump: --devices: %s", d.msg);
    }
    glow_partition_options po = { .devices = devs, .ndevices = ndevs, .assign = a->assign,
                                  .nassign = a->nassign, .no_optimize = a->no_optimize,
                                  .split_nodes = a->split_nodes };
    glow_partition_plan *plan = NULL;
    int rc = CLI_EXIT_OK;
    if (glow_partition_module(m, &po, &plan, &d) != GLOW_OK) {
        rc = d.status == GLOW_ERR_USAGE ? cli_usage_error("dump", "dump: %s", d.msg)
                                        : cli_model_error(a->path, &d);
    }
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        const char *path = k ? a->dot : a->output;
        if (k && !path)
            break;
        char *buf = NULL;
        size_t size = 0;
        FILE *mem = open_memstream(&buf, &size);
        if (!mem) {
            cli_error("dump: out of memory");
            rc = CLI_EXIT_RUN_FAILED;
            break;
        }
        if (k)
            glow_partition_plan_dot(mem, plan);
        else
            glow_partition_plan_print(mem, plan);
        fclose(mem);
        if (!path) {
            if (fwrite(buf, 1, size, stdout) != size || fflush(stdout) != 0) {
                cli_error("dump: cannot write the output");
                rc = CLI_EXIT_RUN_FAILED;
            }
        } else if (glow_write_file(path, buf, size, &d) != GLOW_OK) {
            cli_error("dump: %s", d.len ? d.msg : path);
            rc = CLI_EXIT_RUN_FAILED;
        }
        free(buf);
    }
    glow_partition_plan_destroy(plan);
    glow_devices_free(devs, ndevs);
    return rc;
}

int cmd_dump(int argc, char **argv)
{
    dump_args a = { .stage = "loaded", .format = "text", .backend = "interpreter" };
    /* At most one define per argument, so argc bounds the array. */
    a.defines = calloc((size_t)argc + 1, sizeof *a.defines);
    a.assign = calloc((size_t)argc + 1, sizeof *a.assign);
    if (!a.defines || !a.assign) {
        free(a.defines);
        free(a.assign);
        cli_error("dump: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        free(a.defines);
        free(a.assign);
        return rc;
    }
    /* The llvm stage is the cpu backend's: lower for it, print through the "llvm" format. */
    if (!strcmp(stages[a.stage_index].name, "llvm")) {
        a.backend = "cpu";
        a.format = "llvm";
    }

    glow_onnx_options opt = { .defines = a.defines, .ndefines = a.ndefines };
    glow_diag d = { 0 };
    glow_module *mod = glow_module_create();
    glow_program *p = NULL;
    glow_opt_options oo = { .dump_after = a.dump_after, .dump_out = stdout, .stats = a.stats,
                            .time_passes = a.time_passes, .stats_out = stderr };
    glow_compile_options copt = { .backend = a.backend,
                                  .stop_after = stages[a.stage_index].stage,
                                  .no_optimize = a.no_optimize, .optimize = &oo };
    glow_quant_options quant;
    cli_quant_resolve(&a.quant, a.stats ? stderr : NULL, &quant);
    if (a.quant.profile) {
        copt.quant_hook = glow_quant_hook;
        copt.quant_ctx = &quant;
    }
    ir_opt_options io;
    cli_memory_compile_options(&a.mem, &copt, &io);
    if (glow_onnx_load(mod, a.path, &opt, &d) != GLOW_OK) {
        glow_module_destroy(mod);
        rc = cli_model_error(a.path, &d);
    } else if (a.partitions) {
        rc = dump_partitions(&a, mod);
    } else if (glow_program_create(mod, &copt, &p, &d) != GLOW_OK) {
        /* The program owned the module and destroyed it. */
        rc = cli_model_error(a.path, &d);
    } else if (cli_memory_wanted(&a.mem)) {
        rc = cli_memory_output(p, &a.mem, stdout);
    } else if (a.output) {
        rc = write_output(a.output, p, a.format);
    } else if (!print_graph(stdout, p, a.format)) {
        cli_error("dump: the model has no function 'main'");
        rc = CLI_EXIT_RUN_FAILED;
    } else if (fflush(stdout) != 0) {
        cli_error("dump: cannot write the output");
        rc = CLI_EXIT_RUN_FAILED;
    } else {
        rc = CLI_EXIT_OK;
    }
    if (p && a.stats && rc == CLI_EXIT_OK)
        print_conv_kernels(stderr, p);
    glow_program_destroy(p);
    free(a.defines);
    free(a.assign);
    return rc;
}
