// run_outputs.c - `glowc run`'s outputs: printed (name, type, the first values and a
// classifier's argmax) or written to --output-dir as TensorProto files, all or none.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run.h"

#define SHOWN_VALUES 10

bool cli_is_scores(const glow_type *t)
{
    int64_t numel = glow_type_numel(t);
    return numel > 1 && t->rank > 0 && t->dims[t->rank - 1] == numel;
}

int64_t cli_argmax(const glow_tensor *t, double *best)
{
    int64_t n = glow_type_numel(&t->type), k = -1;
    for (int64_t i = 0; i < n; i++) {
        double v = glow_load_f64(t->type.dtype, t->data, (size_t)i);
        if (v == v && (k < 0 || v > *best)) {
            k = i;
            *best = v;
        }
    }
    return k;
}


void run_outputs_of_program(const glow_program *p, run_outputs *o)
{
    o->n = p->noutputs;
    o->names = calloc((size_t)o->n + 1, sizeof *o->names);
    o->t = calloc((size_t)o->n + 1, sizeof *o->t);
    for (int i = 0; o->names && o->t && i < o->n; i++) {
        o->names[i] = p->outputs[i]->name;
        o->t[i] = glow_program_output(p, i);
    }
}

void run_outputs_of_executor(const glow_executor *e, run_outputs *o)
{
    o->n = glow_executor_noutputs(e);
    o->names = calloc((size_t)o->n + 1, sizeof *o->names);
    o->t = calloc((size_t)o->n + 1, sizeof *o->t);
    for (int i = 0; o->names && o->t && i < o->n; i++) {
        o->names[i] = glow_executor_plan(e)->output_names[i];
        o->t[i] = glow_executor_output(e, i);
    }
}

static void print_outputs(const run_outputs *o)
{
    for (int i = 0; i < o->n; i++) {
        glow_tensor t = o->t[i];
        char ty[128];
        printf("%s %s = ", glow_esc(o->names[i]), glow_type_str(&t.type, ty, sizeof ty));
        glow_tensor_print(stdout, &t, SHOWN_VALUES);
        printf("\n");
        /* A prediction only means something for one vector of scores ([K], [1, K], ...). */
        double best = 0;
        if (glow_dtype_is_float(t.type.dtype) && cli_is_scores(&t.type)) {
            int64_t k = cli_argmax(&t, &best);
            if (k >= 0)
                printf("  argmax %lld = %g\n", (long long)k, best);
        }
    }
}

/* Serializes every output first, then writes them beside their final names and renames
 * them all, so a failure leaves no partial set of outputs behind. */
static int write_outputs(const run_outputs *o, const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        cli_error("run: cannot create the output directory '%s': %s", dir, strerror(errno));
        return CLI_EXIT_RUN_FAILED;
    }
    int n = o->counts ? o->summary->noutputs : o->n, rc = CLI_EXIT_OK, written = 0;
    uint8_t **bufs = calloc((size_t)n + 1, sizeof *bufs);
    size_t *sizes = calloc((size_t)n + 1, sizeof *sizes);
    char tmp[4096], final[4096];
    for (int i = 0, k = 0; i < n && rc == CLI_EXIT_OK; i++) {
        glow_diag d = { 0 };
        glow_io_kind kind = o->counts ? glow_io_kind_of(o->summary->outputs[i].type_str)
                                      : GLOW_IO_TENSOR;
        int cnt = o->counts ? o->counts[i] : 1;
        const char *name = o->counts ? o->summary->outputs[i].name : o->names[i];
        glow_status s = k + (cnt > 0 ? cnt : 0) > o->n
                            ? glow_fail(&d, GLOW_ERR_INTERNAL, "fewer outputs than expected")
                        : kind == GLOW_IO_TENSOR
                            ? glow_tensor_to_pb(&o->t[k], name, &bufs[i], &sizes[i], &d)
                            : glow_seq_to_pb(&o->t[k], cnt, kind, name, &bufs[i], &sizes[i], &d);
        if (s != GLOW_OK) {
            cli_error("run: output '%s': %s", name, d.msg);
            rc = CLI_EXIT_RUN_FAILED;
        }
        k += cnt > 0 ? cnt : 0;
    }
    for (; written < n && rc == CLI_EXIT_OK; written++) {
        glow_diag d = { 0 };
        snprintf(tmp, sizeof tmp, "%s/.output_%d.pb.part", dir, written);
        if (glow_write_file(tmp, bufs[written], sizes[written], &d) != GLOW_OK) {
            cli_error("run: %s", d.msg);
            rc = CLI_EXIT_RUN_FAILED;
            break;
        }
    }
    for (int i = 0; i < written; i++) {
        snprintf(tmp, sizeof tmp, "%s/.output_%d.pb.part", dir, i);
        snprintf(final, sizeof final, "%s/output_%d.pb", dir, i);
        if (rc != CLI_EXIT_OK) {
            remove(tmp);
        } else if (rename(tmp, final) != 0) {
            cli_error("run: cannot write '%s': %s", final, strerror(errno));
            rc = CLI_EXIT_RUN_FAILED;
        }
    }
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(sizes);
    return rc;
}

/* Prints the outputs or writes them to --output-dir. */
static int show_outputs(const run_args *a, const run_outputs *o)
{
    if (!o->names || !o->t) {
        cli_error("run: out of memory");
        return CLI_EXIT_RUN_FAILED;
    }
    if (a->outdir)
        return write_outputs(o, a->outdir);
    print_outputs(o);
    if (fflush(stdout) != 0) {
        cli_error("run: cannot write the output");
        return CLI_EXIT_RUN_FAILED;
    }
    return CLI_EXIT_OK;
}

int run_finish(const run_args *a, glow_status s, const glow_diag *d, run_outputs *o)
{
    if (s != GLOW_OK) {
        cli_error("run: %s: %s", a->path, d->len ? d->msg : glow_status_name(d->status));
        return CLI_EXIT_RUN_FAILED;
    }
    int rc = show_outputs(a, o);
    free(o->names);
    free(o->t);
    return rc;
}
