// api_compile.c - What sessions, profilers and bundles share on their way to a compiled
// program: loading the model (a file or bytes, with the options' defines, optionally
// specialized to input values) with messages that name the file, and the pipeline's compile
// options made from the public ones.
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "onnx/onnx.h"

double api_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void api_compile_init(api_compile *c, const glowc_options *o)
{
    *c = (api_compile){ 0 };
    /* Reports go to stderr: they are a compiler's diagnostics, as the CLI's --stats. */
    c->oo = (glow_opt_options){ .stats = (o->report & GLOWC_REPORT_PASSES) != 0,
                                .time_passes = (o->report & GLOWC_REPORT_PASS_TIMES) != 0,
                                .stats_out = stderr };
    c->q = (glow_quant_options){ .profile = o->profile, .schema = o->schema,
                                 .calibration = o->calibration, .per_channel = o->per_channel,
                                 .reduce_range = o->reduce_range, .keep_float = o->keep_float, .precision = o->precision,
                                 .stats_out = o->report & GLOWC_REPORT_PASSES ? stderr : NULL };
    c->copt = (glow_compile_options){ .backend = o->backend, .threads = o->threads,
                                      .stop_after = GLOW_STAGE_COMPILED,
                                      .no_optimize = o->no_optimize, .optimize = &c->oo,
                                      .cache_dir = o->cache_dir,
                                      /* A plan bigger than the machine would only fail
                                       * later, in mmap or the OOM killer. */
                                      .max_memory = o->max_memory ? o->max_memory
                                                                  : glow_machine_memory() };
    if (o->profile) {
        c->copt.quant_hook = glow_quant_hook;
        c->copt.quant_ctx = &c->q;
    }
}

glowc_status api_load(const glowc_options *o, const char *path, const void *bytes, size_t size,
                      const glow_tensor *spec, int nspec, bool values, glow_module **out,
                      double *ms)
{
    *out = NULL;
    glow_diag *d = calloc(1, sizeof *d);
    glow_module *m = glow_module_create();
    const glow_type **types = calloc((size_t)nspec + 1, sizeof *types);
    const glow_tensor **vals = calloc((size_t)nspec + 1, sizeof *vals);
    glowc_status st = GLOWC_OK;
    if (!d || !m || !types || !vals) {
        glow_module_destroy(m);
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int i = 0; i < nspec; i++) {
        types[i] = &spec[i].type;
        vals[i] = &spec[i];
    }
    glow_onnx_options lo = { .defines = (const char *const *)o->defines,
                             .ndefines = o->ndefines, .input_types = types,
                             .ninput_types = nspec, .input_values = vals,
                             .ninput_values = values ? nspec : 0 };
    double t0 = api_now_ms();
    glow_status ls = path ? glow_onnx_load(m, path, &lo, d)
                          : glow_onnx_load_bytes(m, bytes, size, &lo, d);
    if (ms)
        *ms = api_now_ms() - t0;
    if (ls != GLOW_OK) {
        glow_module_destroy(m);
        /* The file's name where the loader's message lacks it, as the CLI reports it. */
        size_t plen = path ? strlen(path) + 2 : 0, mlen = strlen(d->msg);
        if (path && !strstr(d->msg, path) && plen + mlen < sizeof d->msg) {
            memmove(d->msg + plen, d->msg, mlen + 1);
            memcpy(d->msg, path, plen - 2);
            memcpy(d->msg + plen - 2, ": ", 2);
        }
        st = api_fail_compile(d);
        goto done;
    }
    *out = m;
done:
    free(types);
    free(vals);
    free(d);
    return st;
}

glowc_status api_tensors_of(const glowc_value *v, int n, glow_tensor *out)
{
    for (int i = 0; i < n; i++) {
        glow_tensor *t = &out[i];
        *t = (glow_tensor){ .type = { .rank = v[i].rank }, .data = v[i].data };
        if (v[i].rank < 0 || v[i].rank > GLOW_MAX_DIMS || (v[i].rank && !v[i].shape) ||
            !glow_dtype_from_onnx((int)v[i].dtype, &t->type.dtype))
            return api_fail(GLOWC_ERR_BAD_INPUT, "input %d%s%s%s: %s of rank %d is no tensor "
                            "glowc takes", i, v[i].name ? " '" : "", v[i].name ? v[i].name : "",
                            v[i].name ? "'" : "", glowc_dtype_name(v[i].dtype), v[i].rank);
        for (int d = 0; d < v[i].rank; d++)
            t->type.dims[d] = v[i].shape[d];
        if (glow_type_bytes(&t->type) != v[i].size_bytes || (!v[i].data && v[i].size_bytes))
            return api_fail(GLOWC_ERR_BAD_INPUT, "input %d%s%s%s takes %zu bytes, %zu given", i,
                            v[i].name ? " '" : "", v[i].name ? v[i].name : "",
                            v[i].name ? "'" : "", (size_t)glow_type_bytes(&t->type),
                            v[i].size_bytes);
    }
    return GLOWC_OK;
}

glowc_status api_fail_compile(glow_diag *d)
{
    /* "Not found" while loading or compiling is a name the model uses and never defines, or
     * a value the quantization profile lacks (made for another model): the model's fault, as
     * the CLI has always said, not an argument's (the host's unknown network names). */
    if (d->status == GLOW_ERR_NOT_FOUND)
        d->status = GLOW_ERR_BAD_ATTR;
    return api_fail_diag(d);
}
