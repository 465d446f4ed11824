// cmd_compare.c - `glowc run MODEL --quantize PROFILE --compare-float INPUT...`: the accuracy
// report of a quantized model. Both the float and the quantized program run every sample;
// per output the maximum and mean absolute error of the quantized result, its signal-to-noise
// ratio over all samples (10 log10 of the float output's energy over the error's) and, for a
// vector of scores, how often both pick the same top class.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

typedef struct out_stats {
    double max_err, sum_err, sum_ref2, sum_err2;
    int64_t count;
    int agree, scored;       /* top-1 agreements, samples where the output is a score vector */
} out_stats;

static int compile(const char *path, const cli_model_opts *o, bool quantized,
                   const glow_type *types, int ninputs, glow_program **out)
{
    const glow_type **tp = glow_xcalloc((size_t)ninputs + 1, sizeof *tp);
    for (int i = 0; i < ninputs; i++)
        tp[i] = &types[i];
    glow_onnx_options opt = { .defines = o->defines, .ndefines = o->ndefines,
                              .input_types = tp, .ninput_types = ninputs };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    int rc = -1;
    if (glow_onnx_load(m, path, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        rc = cli_model_error(path, &d);
    } else {
        cli_model_opts mo = *o;
        if (!quantized)
            mo.quant.profile = NULL;
        mo.stats = false;   /* no quantizer line */
        glow_opt_options oo;
        glow_quant_options q;
        glow_compile_options copt = { .stop_after = GLOW_STAGE_COMPILED };
        cli_model_options(&mo, &oo, &q, &copt);
        oo.stats = oo.time_passes = false;
        if (glow_program_create(m, &copt, out, &d) != GLOW_OK)
            rc = cli_model_error(path, &d);
    }
    free(tp);
    return rc;
}

static void accumulate(out_stats *st, const glow_tensor *ref, const glow_tensor *q)
{
    int64_t n = glow_type_numel(&ref->type);
    for (int64_t i = 0; i < n; i++) {
        double r = glow_load_f64(ref->type.dtype, ref->data, (size_t)i);
        double e = fabs(glow_load_f64(q->type.dtype, q->data, (size_t)i) - r);
        st->max_err = e > st->max_err ? e : st->max_err;
        st->sum_err += e;
        st->sum_ref2 += r * r;
        st->sum_err2 += e * e;
    }
    st->count += n;
    if (cli_is_scores(&ref->type)) {
        double br = 0, bq = 0;
        st->scored++;
        st->agree += cli_argmax(ref, &br) == cli_argmax(q, &bq);
    }
}

static void report(const char *path, const cli_model_opts *o, const glow_program *p,
                   const out_stats *st, int nsamples)
{
    printf("compare-float: %s, %d sample%s, quantized (profile %s) vs float, %s backend\n",
           path, nsamples, nsamples == 1 ? "" : "s", o->quant.profile, p->backend->name);
    printf("%-24s %12s %12s %8s  %s\n", "output", "max abs err", "mean abs err", "SNR dB",
           "top-1 agreement");
    for (int i = 0; i < p->noutputs; i++) {
        const out_stats *s = &st[i];
        double snr = s->sum_err2 > 0 ? 10 * log10(s->sum_ref2 / s->sum_err2) : INFINITY;
        printf("%-24s %12.6g %12.6g %8.2f  ", glow_esc(p->outputs[i]->name), s->max_err,
               s->count ? s->sum_err / (double)s->count : 0.0, snr);
        if (s->scored)
            printf("%d/%d (%.1f%%)\n", s->agree, s->scored, 100.0 * s->agree / s->scored);
        else
            printf("-\n");
    }
}

int cli_compare_float(const char *path, const cli_model_opts *o, const char *const *inputs,
                      int ninputs)
{
    glow_arena arena = { 0 };
    glow_onnx_summary s = { 0 };
    cli_sample_list l = { .s = &s, .cmd = "run" };
    glow_diag d = { 0 };
    int rc = -1;
    if (glow_onnx_summarize(path, &arena, &s, &d) != GLOW_OK)
        rc = cli_model_error(path, &d);
    for (int i = 0; i < ninputs && rc < 0; i++)
        rc = cli_samples_collect(&l, inputs[i]);
    if (rc < 0 && !l.v.len) {
        cli_error("run: --compare-float: no samples in the inputs given");
        rc = CLI_EXIT_BAD_MODEL;
    }
    int ni = s.ninputs, n = (int)l.v.len;
    glow_tensor *tensors = glow_xcalloc((size_t)ni + 1, sizeof *tensors);
    glow_type *first = glow_xcalloc((size_t)ni + 1, sizeof *first);
    if (rc < 0)
        rc = cli_samples_read(o, &l, 0, NULL, tensors);
    for (int i = 0; i < ni && rc < 0; i++)
        first[i] = tensors[i].type;
    cli_tensors_free(tensors, ni);
    glow_program *pf = NULL, *pq = NULL;
    if (rc < 0)
        rc = compile(path, o, false, first, ni, &pf);
    if (rc < 0)
        rc = compile(path, o, true, first, ni, &pq);
    out_stats *st = glow_xcalloc((size_t)(pf ? pf->noutputs : 0) + 1, sizeof *st);
    for (int k = 0; k < n && rc < 0; k++) {
        rc = cli_samples_read(o, &l, k, first, tensors);
        if (rc < 0 && (glow_program_run(pf, tensors, ni, &d) != GLOW_OK ||
                       glow_program_run(pq, tensors, ni, &d) != GLOW_OK)) {
            cli_error("run: %s: sample %d ('%s'): %s", path, k + 1, l.v.data[k].label,
                      d.len ? d.msg : glow_status_name(d.status));
            rc = CLI_EXIT_RUN_FAILED;
        }
        for (int i = 0; rc < 0 && i < pf->noutputs; i++) {
            glow_tensor r = glow_program_output(pf, i), q = glow_program_output(pq, i);
            accumulate(&st[i], &r, &q);
        }
        cli_tensors_free(tensors, ni);
    }
    if (rc < 0) {
        report(path, o, pq, st, n);
        rc = CLI_EXIT_OK;
    }
    glow_program_destroy(pf);
    glow_program_destroy(pq);
    free(st);
    free(first);
    free(tensors);
    cli_samples_free(&l);
    glow_arena_release(&arena);
    return rc;
}
