// run_inputs.c - `glowc run`'s input files: bound to the model's fed inputs by position or
// --input NAME=FILE, read (tensors, sequences, optionals) and checked against the declared
// types and symbolic dims (with --define), with messages that name the input and the file.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define MAX_SYMS 64

/* Symbolic dims seen so far: the same symbol must have the same size in every input. */
typedef struct sym_table {
    char name[MAX_SYMS][64];
    int64_t value[MAX_SYMS];
    int n;
} sym_table;

/* The --define value of symbol `sym` (length len), or 0 when not defined. */
static int64_t define_value(const run_args *a, const char *sym, size_t len)
{
    for (int i = 0; i < a->model.ndefines; i++) {
        const char *d = a->model.defines[i];
        if (strncmp(d, sym, len) == 0 && d[len] == '=')
            return strtoll(d + len + 1, NULL, 10);
    }
    return 0;
}

/* True when the tensor type t fits the declared type text of the summary ("f32[N, 3]",
 * "f32[...]" for an unknown rank, "?" or "undefined" for an unknown element type), binding
 * symbolic dims in st. */
static bool fits_declared(const run_args *a, const char *decl, const glow_type *t,
                          sym_table *st, char *why, size_t wsize)
{
    const char *br = strchr(decl, '[');
    size_t dlen = br ? (size_t)(br - decl) : strlen(decl);
    const char *dt = glow_dtype_name(t->dtype);
    bool any_dtype = (dlen == 1 && decl[0] == '?') || (dlen == 9 && !strncmp(decl, "undefined", 9));
    if (!any_dtype && (strlen(dt) != dlen || strncmp(decl, dt, dlen) != 0))
        return false;
    if (!br || !strcmp(br, "[...]"))
        return true;
    const char *p = br + 1;
    int k = 0;
    while (*p && *p != ']') {
        size_t n = strcspn(p, ",]");
        if (k >= t->rank)
            return false;
        int64_t have = t->dims[k++];
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p + n) {
            if (v != have)
                return false;
        } else if (!(n == 1 && *p == '?')) {
            int64_t def = define_value(a, p, n);
            if (def && def != have) {
                snprintf(why, wsize, " with %.*s=%lld (--define)", (int)n, p, (long long)def);
                return false;
            }
            int s = 0;
            while (s < st->n && (strlen(st->name[s]) != n || strncmp(st->name[s], p, n) != 0))
                s++;
            if (s < st->n && st->value[s] != have) {
                snprintf(why, wsize, " with %.*s=%lld (from an earlier input)", (int)n, p,
                         (long long)st->value[s]);
                return false;
            }
            if (s == st->n && st->n < MAX_SYMS && n < sizeof st->name[0]) {
                snprintf(st->name[s], sizeof st->name[s], "%.*s", (int)n, p);
                st->value[st->n++] = have;
            }
        }
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return k == t->rank;
}

/* The position of the input called `name`, or -1. */
static int input_index(const glow_onnx_summary *s, const char *name, size_t len)
{
    for (int i = 0; i < s->ninputs; i++)
        if (strlen(s->inputs[i].name) == len && strncmp(s->inputs[i].name, name, len) == 0)
            return i;
    return -1;
}

static void list_inputs(char *buf, size_t size, const glow_onnx_summary *s)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->ninputs && n + 1 < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s'%s' %s", i ? ", " : "",
                              glow_esc(s->inputs[i].name), s->inputs[i].type_str);
    if (!s->ninputs)
        snprintf(buf, size, "none");
}

int run_bind_files(const run_args *a, const glow_onnx_summary *s, const char **files)
{
    char inputs[1024];
    list_inputs(inputs, sizeof inputs, s);
    int rc = -1;
    for (int k = 0; k < a->nfiles; k++) {
        if (k < s->ninputs) {
            files[k] = a->files[k];
            continue;
        }
        cli_error("run: extra input file '%s': the model has %d input%s (%s)", a->files[k],
                  s->ninputs, s->ninputs == 1 ? "" : "s", inputs);
        return CLI_EXIT_BAD_MODEL;
    }
    for (int k = 0; k < a->nnamed; k++) {
        const char *eq = strchr(a->named[k], '=');
        size_t len = (size_t)(eq - a->named[k]);
        int i = input_index(s, a->named[k], len);
        if (i < 0) {
            cli_error("run: extra input '%.*s': the model has no input of that name (its "
                      "inputs: %s)", (int)len, a->named[k], inputs);
            return CLI_EXIT_BAD_MODEL;
        }
        if (files[i])
            return cli_usage_error("run", "run: input '%s' is given twice ('%s' and '%s')",
                                   s->inputs[i].name, files[i], eq + 1);
        files[i] = eq + 1;
    }
    for (int i = 0; i < s->ninputs; i++) {
        if (files[i])
            continue;
        cli_error("run: missing input %d '%s' (%s): give its file after MODEL in input order, "
                  "or as --input %s=FILE", i, s->inputs[i].name, s->inputs[i].type_str,
                  s->inputs[i].name);
        rc = CLI_EXIT_BAD_MODEL;
    }
    return rc;
}


void run_flatten_inputs(const glow_onnx_summary *s, const glow_tensor *tensors,
                           flat_inputs *f)
{
    int n = 0;
    for (int i = 0; i < s->ninputs; i++) {
        bool seq = glow_io_kind_of(s->inputs[i].type_str) != GLOW_IO_TENSOR;
        f->counts[i] = seq ? f->seqs[i].count : 1;
        n += f->counts[i] > 0 ? f->counts[i] : 0;
    }
    f->t = calloc((size_t)n + 1, sizeof *f->t);
    for (int i = 0, k = 0; f->t && i < s->ninputs; i++)
        for (int j = 0; j < f->counts[i]; j++)
            f->t[k++] = glow_io_kind_of(s->inputs[i].type_str) != GLOW_IO_TENSOR
                            ? f->seqs[i].tensors[j] : tensors[i];
    f->n = n;
}

int run_read_inputs(const run_args *a, const glow_onnx_summary *s, const char **files,
                    glow_tensor *tensors, glow_seq_value *seqs)
{
    sym_table st = { .n = 0 };
    for (int i = 0; i < s->ninputs; i++) {
        const char *decl = s->inputs[i].type_str;
        glow_io_kind kind = glow_io_kind_of(decl);
        if (kind != GLOW_IO_TENSOR) {
            /* SequenceProto / OptionalProto: the importer checks the elements' types. */
            glow_diag d = { 0 };
            if (glow_seq_read_file(files[i], kind, &seqs[i], &d) != GLOW_OK) {
                cli_error("run: input '%s' (%s): %s", s->inputs[i].name, decl, d.msg);
                return CLI_EXIT_BAD_MODEL;
            }
            continue;
        }
        if (strchr(decl, '(')) {
            cli_error("run: input '%s' is %s, which glowc cannot feed (only tensors, "
                      "sequences and optionals)", s->inputs[i].name, decl);
            return CLI_EXIT_BAD_MODEL;
        }
        glow_diag d = { 0 };
        if (glow_tensor_read_file(files[i], &tensors[i], NULL, &d) != GLOW_OK) {
            cli_error("run: input '%s': %s", s->inputs[i].name, d.msg);
            return CLI_EXIT_BAD_MODEL;
        }
        char have[128];
        glow_type_str(&tensors[i].type, have, sizeof have);
        char why[128] = "";
        if (!fits_declared(a, decl, &tensors[i].type, &st, why, sizeof why)) {
            cli_error("run: input '%s' is %s (file '%s'), the model expects %s%s",
                      s->inputs[i].name, have, files[i], decl, why);
            return CLI_EXIT_BAD_MODEL;
        }
    }
    return -1;
}
