// cmd_quantize.c - `glowc quantize MODEL --profile PROFILE -o OUT.onnx`: quantizes a float model
// with a profile, as `glowc run --quantize` does, and writes the quantized graph as a standard
// ONNX QDQ model that other runtimes (ONNX Runtime's int8 kernels) and glowc itself can run.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

void cmd_quantize_help(void)
{
    printf("usage: glowc quantize MODEL --profile PROFILE -o OUT.onnx [--schema S]\n"
           "                      [--calibration C] [--per-channel] [--reduce-range]\n"
           "                      [--keep-float K,...]\n"
           "                      [--precision int8] [--define SYM=VAL]... [--no-optimize]\n"
           "\n"
           "Quantizes the float model MODEL with the ranges in PROFILE (written by `glowc\n"
           "profile`) exactly as `glowc run MODEL --quantize PROFILE` does, and writes the\n"
           "quantized graph as an ONNX model (opset 13) in QDQ form: each quantized value is a\n"
           "uint8/int8 tensor, each quantized op DequantizeLinear -> the float op ->\n"
           "QuantizeLinear, weights int8 initializers (docs/quantization.md, \"Export\").\n"
           "\n"
           "options:\n"
           "  --profile PROFILE  the profile to quantize with (required; --quantize is the same)\n"
           "  -o, --output FILE  where to write the model (required; written atomically)\n");
    printf("  --schema S         asymmetric (default), symmetric, symmetric-uint8,\n"
           "                     symmetric-power2\n"
           "  --calibration C    minmax (default) or kl (clip ranges by KL divergence)\n"
           "  --per-channel      one weight scale per convolution output channel\n"
           "  --reduce-range     7-bit weights ([-63, 63]): faster on AVX2 without VNNI\n"
           "  --keep-float K,..  node kinds that stay float (e.g. Conv,Add)\n"
           "  --precision P      int8 (default); int16 has no ONNX form at opset 13\n"
           "  --define SYM=VAL   fix the symbolic input dim SYM (dim_param) to VAL; repeatable\n"
           "  --no-optimize      skip the graph optimizer (use the options the profile was\n"
           "                     made with)\n"
           "  --stats            the quantizer's and optimizer's statistics (to stderr)\n"
           "  -h, --help         show this help\n"
           "\n"
           "The graph written is the interpreter backend's after quantization and the\n"
           "optimizer. A node with no ONNX form fails naming it, and no file is written.\n"
           "\n"
           "exit status: 0 ok, 1 usage error, 2 bad or unsupported model or profile, or a\n"
           "node with no ONNX form, 3 failure writing the file.\n");
}

typedef struct quantize_args {
    const char *path, *out;
    cli_model_opts model;
} quantize_args;

static int parse_args(int argc, char **argv, quantize_args *a)
{
    int rc = -1;
    a->model.no_cache = true;   /* writes a model, compiles no code */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->path)
                return cli_usage_error("quantize", "quantize: unexpected argument '%s'", arg);
            a->path = arg;
        } else if (cli_is_help(arg)) {
            cmd_quantize_help();
            return CLI_EXIT_OK;
        } else if (cli_match_value(arg, "-o", &i, argc, argv, &val) ||
                   cli_match_value(arg, "--output", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("quantize", "quantize: %s needs a file name", arg);
            a->out = val;
        } else if (cli_match_value(arg, "--profile", &i, argc, argv, &val)) {
            if (!val || !val[0])
                return cli_usage_error("quantize", "quantize: --profile needs a profile file "
                                       "(glowc profile writes one)");
            a->model.quant.profile = val;
        } else if (cli_model_match("quantize", arg, &i, argc, argv, &a->model, &rc)) {
            if (rc >= 0)
                return rc;
        } else {
            return cli_usage_error("quantize", "quantize: unknown option '%s'", arg);
        }
    }
    if (!a->path)
        return cli_usage_error("quantize", "quantize: missing MODEL");
    /* Another backend keeps nodes whole for its kernels (Conv, pooling...), and the file
     * would then depend on it: the export is the interpreter's graph, always. */
    if (strcmp(a->model.backend, "interpreter") != 0)
        return cli_usage_error("quantize", "quantize: writes the graph of the interpreter "
                               "backend; --backend %s is not an option here", a->model.backend);
    if (!a->model.quant.profile)
        return cli_usage_error("quantize", "quantize: missing --profile PROFILE (glowc "
                               "profile MODEL INPUT... -o PROFILE writes one)");
    if (!a->out)
        return cli_usage_error("quantize", "quantize: missing -o OUT.onnx");
    return -1;
}

/* Bytes of the constants f's nodes read: 8-bit integer ones and float ones (of the loaded
 * model: its weights, without initializers no node reads). */
static void weight_bytes(const glow_function *f, uint64_t *int8, uint64_t *flt)
{
    uint32_t nids = f->module->next_id + 1;
    bool *seen = glow_xcalloc(nids, 1);
    *int8 = *flt = 0;
    for (const glow_node *n = f->nodes.first; n; n = n->next)
        for (uint32_t i = 0; i < n->nin; i++) {
            const glow_node *c = n->ins[i].node;
            if (c->kind != NK_CONSTANT || c->id >= nids || seen[c->id])
                continue;
            seen[c->id] = true;
            glow_dtype t = c->outs[0].dtype;
            if (glow_dtype_size(t) == 1 && t != GLOW_BOOL)
                *int8 += glow_type_bytes(&c->outs[0]);
            else if (glow_dtype_is_float(t))
                *flt += glow_type_bytes(&c->outs[0]);
        }
    free(seen);
}

int cmd_quantize(int argc, char **argv)
{
    quantize_args a = { 0 };
    int rc = cli_model_init(&a.model, argc, "interpreter") ? parse_args(argc, argv, &a)
                                                           : CLI_EXIT_RUN_FAILED;
    if (rc >= 0) {
        cli_model_free(&a.model);
        return rc;
    }
    glow_onnx_options opt = { .defines = a.model.defines, .ndefines = a.model.ndefines };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    rc = CLI_EXIT_OK;
    uint64_t float_model = 0;
    if (glow_onnx_load(m, a.path, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        rc = cli_model_error(a.path, &d);
    } else {
        uint64_t ignored;
        weight_bytes(glow_module_function(m, "main"), &ignored, &float_model);
        /* The interpreter keeps no node whole for its kernels, so the graph holds only the
         * quantizer's nodes and lowered primitives, all of which have ONNX forms. */
        glow_opt_options oo;
        glow_quant_options q;
        glow_compile_options copt = { .stop_after = GLOW_STAGE_LOWERED };
        cli_model_options(&a.model, &oo, &q, &copt);
        if (glow_program_create(m, &copt, &p, &d) != GLOW_OK)
            rc = cli_model_error(a.path, &d);
    }
    if (rc == CLI_EXIT_OK) {
        char producer[64];
        snprintf(producer, sizeof producer, "glowc %s", glowc_version());
        glow_status s = glow_onnx_write(p->f, a.out, producer, &d);
        if (s == GLOW_ERR_IO) {
            cli_error("quantize: %s", d.msg);
            rc = CLI_EXIT_RUN_FAILED;
        } else if (s != GLOW_OK) {
            rc = cli_model_error(a.path, &d);
        } else {
            int nodes = 0, quantized = 0;
            for (const glow_node *n = p->f->nodes.first; n; n = n->next) {
                if (n->kind == NK_SAVE)
                    continue;
                nodes++;
                bool q = false;
                for (uint32_t i = 0; i < n->nout; i++)
                    q = q || glow_dtype_is_quantized(n->outs[i].dtype);
                quantized += q;
            }
            uint64_t w8, wf;
            weight_bytes(p->f, &w8, &wf);
            printf("wrote %s: %d nodes, %d quantized; weights %llu bytes int8 + %llu bytes "
                   "float (the float model: %llu bytes)\n", a.out, nodes, quantized,
                   (unsigned long long)w8, (unsigned long long)wf,
                   (unsigned long long)float_model);
        }
    }
    glow_program_destroy(p);
    cli_model_free(&a.model);
    return rc;
}
