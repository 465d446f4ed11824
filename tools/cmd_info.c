// cmd_info.c - `glowc info MODEL`: what a model contains and which of its ops glowc supports.
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cmd_info_help(void)
{
    printf("usage: glowc info MODEL\n"
           "\n"
           "Prints a summary of the ONNX model MODEL without compiling it: IR version and\n"
           "producer, imported opsets, the inputs a caller feeds (initializers excluded) and\n"
           "the outputs with their types (symbolic dims by name, e.g. f32[N, 3, 224, 224]),\n"
           "the weight size, and a histogram of its ops. Each op is marked 'ok' when glowc\n"
           "can import it at the model's opset and 'UNSUPPORTED' otherwise; the last line\n"
           "lists every unsupported op.\n"
           "\n"
           "A model with unsupported ops is still described (exit 0); a file that is not a\n"
           "readable ONNX model exits with 2.\n"
           "\n"
           "options:\n"
           "  -h, --help   show this help\n");
}

/* "61.6 KiB" style, for the weight line. */
static void human_bytes(int64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%lld B", (long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
}

static const char *domain_label(const char *domain)
{
    return domain[0] ? glow_esc(domain) : "ai.onnx";
}

/* Width of the widest name in an I/O list, for aligned columns (capped so one absurd name
 * does not push everything off screen). */
static int io_width(const glow_onnx_io *io, int n)
{
    int w = 4;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(io[i].name);
        if (len > w)
            w = len;
    }
    return w > 40 ? 40 : w;
}

static void print_ios(const char *title, const glow_onnx_io *io, int n)
{
    printf("%s (%d):\n", title, n);
    int w = io_width(io, n);
    for (int i = 0; i < n; i++)
        printf("  %-*s  %s\n", w, io[i].name[0] ? glow_esc(io[i].name) : "(unnamed)",
               io[i].type_str);
}

/* "Conv" for the default domain, "com.microsoft:FusedConv" for others. */
static void op_label(const glow_onnx_op_count *op, char *buf, size_t size)
{
    if (op->domain[0])
        snprintf(buf, size, "%s:%s", glow_esc(op->domain), glow_esc(op->op_type));
    else
        snprintf(buf, size, "%s", op->op_type[0] ? glow_esc(op->op_type) : "(empty op_type)");
}

static void print_summary(const char *path, const glow_onnx_summary *s)
{
    printf("model:    %s\n", path);
    printf("ir:       %lld\n", (long long)s->ir_version);
    printf("producer: %s\n", s->producer[0] ? glow_esc(s->producer) : "(none)");
    printf("opsets:  ");
    if (s->nopsets == 0)
        printf(" (none)");
    for (int i = 0; i < s->nopsets; i++)
        printf(" %s %lld%s", domain_label(s->opset_domains[i]), (long long)s->opset_versions[i],
               i + 1 < s->nopsets ? "," : "");
    printf("\n");

    char size[32];
    human_bytes(s->weight_bytes, size, sizeof size);
    printf("weights:  %d initializers, %s\n", s->ninitializers, size);

    print_ios("inputs", s->inputs, s->ninputs);
    print_ios("outputs", s->outputs, s->noutputs);

    int nnodes = 0, nbad = 0;
    int w = 8;
    for (int i = 0; i < s->nops; i++) {
        char label[160];
        op_label(&s->ops[i], label, sizeof label);
        int len = (int)strlen(label);
        if (len > w)
            w = len < 48 ? len : 48;
        nnodes += s->ops[i].count;
        nbad += !s->ops[i].supported;
    }
    printf("ops (%d nodes, %d kinds, %d unsupported):\n", nnodes, s->nops, nbad);
    for (int i = 0; i < s->nops; i++) {
        const glow_onnx_op_count *op = &s->ops[i];
        char label[160];
        op_label(op, label, sizeof label);
        printf("  %5d  %-*s  opset %-3d %s\n", op->count, w, label, op->opset,
               op->supported ? "ok" : "UNSUPPORTED");
    }

    /* The last line is the one users (and scripts) look for: every unsupported op at once. */
    printf("unsupported:");
    if (nbad == 0)
        printf(" none");
    for (int i = 0, k = 0; i < s->nops; i++) {
        if (s->ops[i].supported)
            continue;
        char label[160];
        op_label(&s->ops[i], label, sizeof label);
        printf("%s %s", k++ ? "," : "", label);
    }
    printf("\n");
}

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    bool only_positional = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_positional && cli_is_help(arg)) {
            cmd_info_help();
            return CLI_EXIT_OK;
        }
        if (!only_positional && !strcmp(arg, "--")) {
            only_positional = true;
        } else if (!only_positional && arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error("info", "info: unknown option '%s'", arg);
        } else if (path) {
            return cli_usage_error("info", "info: takes one MODEL, got '%s' and '%s'", path, arg);
        } else {
            path = arg;
        }
    }
    if (!path)
        return cli_usage_error("info", "info: missing MODEL");

    glow_arena arena = { 0 };
    glow_onnx_summary s;
    glow_diag d = { 0 };
    glow_status st = glow_onnx_summarize(path, &arena, &s, &d);
    int rc = CLI_EXIT_OK;
    if (st != GLOW_OK)
        rc = cli_model_error(path, &d);
    else
        print_summary(path, &s);
    glow_arena_release(&arena);
    if (rc == CLI_EXIT_OK && fflush(stdout) != 0) {
        cli_error("info: cannot write the output");
        rc = CLI_EXIT_RUN_FAILED;
    }
    return rc;
}
