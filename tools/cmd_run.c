// cmd_run.c - `glowc run MODEL [INPUT...]`: compiles a model for a backend, runs it once on
// tensor files and prints the outputs or writes them as TensorProto files. A model is run
// through the public API's session when that can be done with one parse (run_via_api); the
// checked path (a summary of the declared inputs, then a load specialized to the files)
// serves models whose inputs decide their shapes, --devices, --stats, and every error.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt/opt.h"
#include "quant/quant.h"
#include "run.h"

void cmd_run_help(void)
{
    printf("usage: glowc run MODEL [INPUT.pb|INPUT.npy ...] [--input NAME=FILE]...\n"
           "                       [--backend B] [--threads N] [--define SYM=VAL]...\n"
           "                       [--output-dir DIR] [--no-optimize] [--stats]\n"
           "                       [--time-passes] [--quantize PROFILE [options]]\n"
           "                       [--devices SPEC [--assign NODE=DEVICE]... [--split-nodes]]\n"
           "       glowc run MODEL --quantize PROFILE --compare-float SAMPLES...\n"
           "\n"
           "Compiles the ONNX model MODEL for a backend, runs it once on the given input\n"
           "tensors and shows the outputs.\n"
           "\n"
           "Input files are ONNX TensorProto (.pb) or NumPy (.npy) files. Positional files\n"
           "bind to the model's fed inputs (graph inputs that are not initializers) in order;\n"
           "--input binds one by name. Each file must have the input's declared element type\n"
           "and shape; its shape fixes the input's symbolic dims. Inputs that decide shapes\n"
           "(a Reshape's shape, axes, pads, scales, ...) are specialized to the given values.\n"
           "\n"
           "options:\n"
           "  --input NAME=FILE  the file for the input NAME; repeatable\n");
    cli_model_help("threads for the backend (default: the backend's choice)");
    cli_quant_help();
    printf("  --compare-float    with --quantize: the INPUTs are samples (tensor files, folders\n"
           "                     of them, test_data_set_* folders, as for glowc profile); run\n"
           "                     the float and the quantized model on each and report, per\n"
           "                     output, the max and mean absolute error, the SNR in dB and\n"
           "                     the top-1 agreement\n"
           "  --output-dir DIR   write output <i> to DIR/output_<i>.pb (TensorProto named after\n"
           "                     the graph output, graph output order), only when the run\n"
           "                     succeeds; without it each output's name, type and first\n"
           "                     values are printed, and the argmax of a float vector output\n"
           "                     ([K] or [1, K]: a classifier's prediction)\n"
           "  --devices SPEC     run partitioned over devices, e.g. cpu:256MiB,interpreter:1GiB\n"
           "                     (backend:capacity; see glowc dump --partitions and\n"
           "                     docs/partitioning.md); each partition is compiled for its\n"
           "                     device's backend (--backend is not used)\n"
           "  --assign NODE=DEV  run graph node NODE (as dump --stage optimized names it) on\n"
           "                     device index DEV; repeatable, with --devices\n"
           "  --split-nodes      with --devices: split a Gemm/FullyConnected/MatMul whose\n"
           "                     weights no device holds into products over column slices\n"
           "  -h, --help         show this help\n"
           "\n"
           "exit status: 0 ok, 1 usage error, 2 bad or unsupported model or input (missing,\n"
           "extra, unreadable, wrong element type or shape), 3 failure while running.\n");
}


/* Returns -1 when parsing succeeded, otherwise the exit code to return at once. */
static int parse_args(int argc, char **argv, run_args *a)
{
    bool only_positional = false;
    int rc = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (!a->path)
                a->path = arg;
            else
                a->files[a->nfiles++] = arg;
        } else if (!strcmp(arg, "--")) {
            only_positional = true;
        } else if (cli_is_help(arg)) {
            cmd_run_help();
            return CLI_EXIT_OK;
        } else if (cli_match_value(arg, "--input", &i, argc, argv, &val)) {
            const char *eq = val ? strchr(val, '=') : NULL;
            if (!eq || eq == val || !eq[1])
                return cli_usage_error("run", "run: --input wants NAME=FILE, got '%s'",
                                       val ? val : "");
            a->named[a->nnamed++] = val;
            } else if (cli_model_match("run", arg, &i, argc, argv, &a->model, &rc)) {
            if (rc >= 0)
                return rc;
        } else if (cli_match_value(arg, "--devices", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("run", "run: --devices needs a device list such as "
                                       "cpu:256MiB,cpu:256MiB");
            a->devices = val;
        } else if (cli_match_value(arg, "--assign", &i, argc, argv, &val)) {
            if (!val || !strchr(val, '='))
                return cli_usage_error("run", "run: --assign wants NODE=DEVICE, got '%s'",
                                       val ? val : "");
            a->assign[a->nassign++] = val;
        } else if (!strcmp(arg, "--split-nodes")) {
            a->split_nodes = true;
        } else if (!strcmp(arg, "--compare-float")) {
            a->compare_float = true;
        } else if (cli_match_value(arg, "--output-dir", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("run", "run: --output-dir needs a directory");
            a->outdir = val;
        } else {
            return cli_usage_error("run", "run: unknown option '%s'", arg);
        }
    }
    if (!a->path)
        return cli_usage_error("run", "run: missing MODEL");
    if (a->compare_float && (!a->model.quant.profile || a->nnamed || a->outdir || !a->nfiles))
        return cli_usage_error("run", "run: --compare-float needs --quantize PROFILE and "
                               "sample INPUTs (no --input, no --output-dir)");
    if ((a->nassign || a->split_nodes) && !a->devices)
        return cli_usage_error("run", "run: --assign and --split-nodes need --devices");
    if (a->devices && a->compare_float)
        return cli_usage_error("run", "run: --compare-float does not take --devices");
    return -1;
}

/* --stats with --devices: each partition's compiled region sizes, and its fallbacks. */
static void report_partitions(const glow_executor *e)
{
    const glow_partition_plan *plan = glow_executor_plan(e);
    for (int i = 0; i < plan->nparts; i++) {
        const glow_program *p = glow_executor_program(e, i);
        const glow_device_spec *dev = &plan->devices[plan->parts[i].device];
        uint64_t used = p->ir->constant_bytes + p->ir->mutable_bytes + p->ir->activation_bytes;
        char c[32], m[32], act[32], cap[32];
        fprintf(stderr, "partition %d on device %d (%s): constant %s, mutable %s, "
                "activations %s%s%s\n", i, plan->parts[i].device, dev->backend,
                glow_bytes_str(p->ir->constant_bytes, c, sizeof c),
                glow_bytes_str(p->ir->mutable_bytes, m, sizeof m),
                glow_bytes_str(p->ir->activation_bytes, act, sizeof act),
                used > dev->capacity ? "; more than the device's capacity, " : "",
                used > dev->capacity ? glow_bytes_str(dev->capacity, cap, sizeof cap) : "");
        if (p->backend->fallbacks) {
            fputs("  ", stderr);
            glow_program_report_backend(p, stderr);
        }
    }
}


/* --devices: partitions the loaded module m (owned), compiles and runs the partitions. */
static int run_partitioned(const run_args *a, glow_module *m, int ninputs, glow_tensor *tensors,
                           run_outputs o)
{
    glow_diag d = { 0 };
    glow_device_spec *devs = NULL;
    int ndevs = 0;
    if (glow_devices_parse(a->devices, &devs, &ndevs, &d) != GLOW_OK) {
        glow_module_destroy(m);
        return cli_usage_error("run", "run: --devices: %s", d.msg);
    }
    glow_partition_options po = { .devices = devs, .ndevices = ndevs, .assign = a->assign,
                                  .nassign = a->nassign, .no_optimize = a->model.no_optimize,
                                  .split_nodes = a->split_nodes };
    glow_partition_plan *plan = NULL;
    glow_executor *e = NULL;
    int rc = CLI_EXIT_OK;
    glow_opt_options oo;
    glow_quant_options q;
    glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
    cli_model_options(&a->model, &oo, &q, &copt);
    /* The profile names nodes of the whole graph: quantize it whole, then cut it. */
    if (copt.quant_hook && glow_module_quantize(&m, &copt, &d) != GLOW_OK) {
        glow_devices_free(devs, ndevs);
        return cli_model_error(a->path, &d);
    }
    copt.quant_hook = NULL;
    if (glow_partition_module(m, &po, &plan, &d) != GLOW_OK)
        rc = d.status == GLOW_ERR_USAGE ? cli_usage_error("run", "run: %s", d.msg)
                                        : cli_model_error(a->path, &d);
    else if (glow_executor_create(plan, &copt, &e, &d) != GLOW_OK)
        rc = cli_model_error(a->path, &d);
    else if (a->model.stats)
        report_partitions(e);
    if (rc == CLI_EXIT_OK) {
        glow_status s = glow_executor_run(e, tensors, ninputs, &d);
        if (s == GLOW_OK)
            run_outputs_of_executor(e, &o);
        rc = run_finish(a, s, &d, &o);
    }
    glow_executor_destroy(e);
    glow_devices_free(devs, ndevs);
    return rc;
}

/* Loads, compiles and runs; in holds the inputs in model order. */
static int compile_and_run(const run_args *a, const glow_onnx_summary *sum, flat_inputs *in)
{
    int ninputs = in->n;
    glow_tensor *tensors = in->t;
    int *ocounts = calloc((size_t)sum->noutputs + 1, sizeof *ocounts);
    /* Graph outputs that are sequences or optionals are written as such (seq_file.c). */
    bool grouped = false;
    for (int i = 0; i < sum->noutputs; i++)
        grouped = grouped || glow_io_kind_of(sum->outputs[i].type_str) != GLOW_IO_TENSOR;
    run_outputs base = { .summary = sum, .counts = grouped ? ocounts : NULL };
    const glow_type **types = calloc((size_t)ninputs + 1, sizeof *types);
    const glow_tensor **values = calloc((size_t)ninputs + 1, sizeof *values);
    for (int i = 0; i < ninputs; i++) {
        types[i] = &tensors[i].type;
        values[i] = &tensors[i];
    }
    glow_onnx_options opt = { .defines = a->model.defines, .ndefines = a->model.ndefines,
                              .input_types = types, .ninput_types = ninputs,
                              .input_values = values, .ninput_values = ninputs,
                              .input_counts = in->counts, .ninput_counts = sum->ninputs,
                              .output_counts = ocounts, .noutput_counts = sum->noutputs };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    int rc = CLI_EXIT_OK;
    if (glow_onnx_load(m, a->path, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        rc = cli_model_error(a->path, &d);
    } else if (a->devices) {
        rc = run_partitioned(a, m, ninputs, tensors, base);
    } else {
        glow_opt_options oo;
        glow_quant_options q;
        glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
        cli_model_options(&a->model, &oo, &q, &copt);
        if (glow_program_create(m, &copt, &p, &d) != GLOW_OK)
            rc = cli_model_error(a->path, &d);
        else if (a->model.stats)
            glow_program_report_backend(p, stderr);
    }
    if (p && rc == CLI_EXIT_OK) {
        run_outputs o = base;
        glow_status s = glow_program_run(p, tensors, ninputs, &d);
        if (s == GLOW_OK)
            run_outputs_of_program(p, &o);
        rc = run_finish(a, s, &d, &o);
    }
    glow_program_destroy(p);
    free(types);
    free(values);
    free(ocounts);
    return rc;
}

/* The whole-program run through the public API, for a model whose inputs do not decide its
 * shapes: one parse of the model (the session's) instead of a summary and a load. Returns -1
 * when this path cannot say exactly what the checked path below says - the session cannot be
 * made without the input files (symbolic dims the files fix, inputs whose values decide
 * shapes, anything the loader refuses) or a file does not fit the input as loaded - so that
 * path runs instead and gives its own message (a second parse only on such models and on
 * errors); otherwise the exit code. */
static int run_via_api(const run_args *a)
{
    glowc_session *s = NULL;
    if (cli_api_session(&a->model, a->path, &s) != GLOWC_OK)
        return -1;
    int n = glowc_session_input_count(s), rc = -1;
    glowc_tensor **in = calloc((size_t)n + 1, sizeof *in);
    glowc_value *vals = calloc((size_t)n + 1, sizeof *vals);
    int nout = glowc_session_output_count(s);
    glowc_tensor **out = calloc((size_t)nout + 1, sizeof *out);
    bool ok = in && vals && out && a->nfiles <= n;
    for (int k = 0; ok && k < a->nfiles; k++)
        ok = glowc_tensor_read_file(a->files[k], &in[k]) == GLOWC_OK;
    for (int k = 0; ok && k < a->nnamed; k++) {
        const char *eq = strchr(a->named[k], '=');
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - a->named[k]), a->named[k]);
        int i = glowc_session_input_index(s, name);
        ok = i >= 0 && (size_t)(eq - a->named[k]) < sizeof name && !in[i] &&
             glowc_tensor_read_file(eq + 1, &in[i]) == GLOWC_OK;
    }
    for (int i = 0; ok && i < n; i++) {
        glowc_tensor_info info;
        ok = in[i] && glowc_session_input_info(s, i, &info) == GLOWC_OK &&
             glowc_tensor_dtype(in[i]) == info.dtype && glowc_tensor_rank(in[i]) == info.rank;
        for (int d = 0; ok && d < info.rank; d++)
            ok = glowc_tensor_shape(in[i])[d] == info.shape[d];
        if (ok)
            vals[i] = glowc_tensor_value(in[i]);
    }
    if (ok) {
        glowc_status st = glowc_session_run_tensors(s, vals, n, out);
        if (st != GLOWC_OK) {
            cli_error("run: %s: %s", a->path, glowc_last_error());
            rc = CLI_EXIT_RUN_FAILED;
        } else {
            run_outputs o = { .n = nout, .names = calloc((size_t)nout + 1, sizeof *o.names),
                              .t = calloc((size_t)nout + 1, sizeof *o.t) };
            for (int i = 0; o.names && o.t && i < nout; i++) {
                /* The public element types are numbered as ONNX's. */
                glow_type t = { .rank = glowc_tensor_rank(out[i]) };
                glow_dtype_from_onnx((int)glowc_tensor_dtype(out[i]), &t.dtype);
                for (int d = 0; d < t.rank; d++)
                    t.dims[d] = glowc_tensor_shape(out[i])[d];
                o.names[i] = glowc_tensor_name(out[i]);
                o.t[i] = (glow_tensor){ .type = t, .data = (void *)glowc_tensor_data(out[i]) };
            }
            rc = run_finish(a, GLOW_OK, NULL, &o);
        }
    }
    for (int i = 0; in && i < n; i++)
        glowc_tensor_destroy(in[i]);
    for (int i = 0; out && i < nout; i++)
        glowc_tensor_destroy(out[i]);
    free(in);
    free(vals);
    free(out);
    glowc_session_destroy(s);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_args a = { 0 };
    /* At most one entry per argument, so argc bounds every array. */
    a.files = calloc((size_t)argc + 1, sizeof *a.files);
    a.named = calloc((size_t)argc + 1, sizeof *a.named);
    a.assign = calloc((size_t)argc + 1, sizeof *a.assign);
    bool ok = cli_model_init(&a.model, argc, "interpreter");
    int rc = a.files && a.named && a.assign && ok ? parse_args(argc, argv, &a)
                                                  : CLI_EXIT_RUN_FAILED;
    if (rc < 0 && a.compare_float)
        rc = cli_compare_float(a.path, &a.model, a.files, a.nfiles);
    /* --stats and --time-passes print the pipeline's own figures, which the API does not
     * give; --devices partitions by the user's assignment (the host's partitioning is by
     * free memory only). */
    if (rc < 0 && !a.devices && !a.model.stats && !a.model.time_passes)
        rc = run_via_api(&a);
    glow_arena arena = { 0 };
    glow_onnx_summary s = { 0 };
    const char **files = NULL;
    glow_tensor *tensors = NULL;
    flat_inputs in = { 0 };
    if (rc < 0) {
        glow_diag d = { 0 };
        if (glow_onnx_summarize(a.path, &arena, &s, &d) != GLOW_OK)
            rc = cli_model_error(a.path, &d);
    }
    if (rc < 0) {
        files = calloc((size_t)s.ninputs + 1, sizeof *files);
        tensors = calloc((size_t)s.ninputs + 1, sizeof *tensors);
        in.seqs = calloc((size_t)s.ninputs + 1, sizeof *in.seqs);
        in.counts = calloc((size_t)s.ninputs + 1, sizeof *in.counts);
        rc = run_bind_files(&a, &s, files);
    }
    if (rc < 0)
        rc = run_read_inputs(&a, &s, files, tensors, in.seqs);
    if (rc < 0) {
        run_flatten_inputs(&s, tensors, &in);
        rc = compile_and_run(&a, &s, &in);
    }
    for (int i = 0; tensors && i < s.ninputs; i++)
        glow_tensor_free(&tensors[i]);
    for (int i = 0; in.seqs && i < s.ninputs; i++)
        glow_seq_value_free(&in.seqs[i]);
    free(in.seqs);
    free(in.counts);
    free(in.t);
    free(tensors);
    free(files);
    glow_arena_release(&arena);
    free(a.files);
    free(a.named);
    free(a.assign);
    cli_model_free(&a.model);
    return rc;
}
