// api_profile.c - Profiling through the public API: a float model compiled with the
// profiler's hook (every value the quantizer sees saved as an extra output), run on the
// caller's samples in two passes (ranges, then histograms), and the profile written as the
// JSON that glowc_options_set_quantize reads - the same bytes `glowc profile` writes, which
// is this code's client.
//
// The model is compiled on the first sample (or glowc_profiler_compile), for that sample's
// types: they fix its symbolic dims. Types only, no values: a model whose shapes depend on
// input values cannot be profiled over samples that differ in them.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

struct glowc_profiler {
    glowc_options *o;           /* a copy */
    char *path;
    glow_profiler *pr;
    glow_program *p;            /* NULL until compiled */
    const glow_profile *profile; /* after finish; the profiler's */
    int pass;                   /* 0 before glowc_profiler_begin_pass */
};

_Static_assert(GLOWC_PROFILE_BINS == GLOW_PROFILE_BINS, "the public bin count is the profiler's");

#define NEED(p, fn)                                                                     \
    do {                                                                                \
        if (!(p))                                                                       \
            return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%s: the profiler is NULL", fn); \
    } while (0)

GLOWC_API glowc_status glowc_profiler_create(const glowc_options *o, const char *path,
                                             glowc_profiler **out)
{
    if (!out || !path)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_profiler_create: %s is NULL",
                        out ? "path" : "out");
    *out = NULL;
    glowc_profiler *p = calloc(1, sizeof *p);
    if (p) {
        p->o = api_options_clone(o);
        p->path = strdup(path);
        p->pr = glow_profiler_create(path, GLOWC_PROFILE_BINS);
    }
    if (!p || !p->o || !p->path || !p->pr) {
        glowc_profiler_destroy(p);
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    *out = p;
    return GLOWC_OK;
}

GLOWC_API void glowc_profiler_destroy(glowc_profiler *p)
{
    if (!p)
        return;
    glow_program_destroy(p->p);
    if (p->pr)
        glow_profiler_destroy(p->pr);
    glowc_options_destroy(p->o);
    free(p->path);
    free(p);
}

/* The caller's values as tensors, in model order when named (the program's inputs). */
static glowc_status order_inputs(const glowc_profiler *p, const glowc_value *in, int n,
                                 glow_tensor *t)
{
    int want = p->p ? p->p->ninputs : n;
    if (n < 0 || (n && !in))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%d inputs given at %p", n,
                        (const void *)in);
    if (n != want)
        return api_fail(GLOWC_ERR_BAD_INPUT, "the model has %d input%s, %d given", want,
                        want == 1 ? "" : "s", n);
    GLOWC_TRY_API(api_tensors_of(in, n, t));
    for (int i = 0; p->p && i < n; i++) {
        if (!in[i].name)
            continue;
        int k = 0;
        while (k < n && strcmp(p->p->inputs[k]->name, in[i].name))
            k++;
        if (k == n)
            return api_fail(GLOWC_ERR_BAD_INPUT, "the model has no input '%s'", in[i].name);
        if (k != i) {
            glow_tensor tmp = t[k];
            t[k] = t[i];
            t[i] = tmp;
        }
    }
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_profiler_compile(glowc_profiler *p, const glowc_value *inputs,
                                              int ninputs)
{
    NEED(p, "glowc_profiler_compile");
    if (p->p)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the profiler's model is compiled already");
    glow_tensor *t = calloc((size_t)ninputs + 1, sizeof *t);
    if (!t)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = order_inputs(p, inputs, ninputs, t);
    glow_module *m = NULL;
    if (st == GLOWC_OK)
        st = api_load(p->o, p->path, NULL, 0, t, ninputs, false, &m, NULL);
    free(t);
    if (st != GLOWC_OK)
        return st;
    api_compile c;
    api_compile_init(&c, p->o);
    c.copt.quant_hook = glow_profiler_hook;
    c.copt.quant_ctx = p->pr;
    glow_diag *d = calloc(1, sizeof *d);
    if (!d) {
        glow_module_destroy(m);
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    if (glow_program_create(m, &c.copt, &p->p, d) != GLOW_OK ||   /* takes m */
        glow_profiler_bind(p->pr, p->p, d) != GLOW_OK) {
        st = api_fail_compile(d);
        glow_program_destroy(p->p);
        p->p = NULL;
    } else if (p->o->report & GLOWC_REPORT_BACKEND) {
        glow_program_report_backend(p->p, stderr);
    }
    free(d);
    return st;
}

GLOWC_API glowc_status glowc_profiler_begin_pass(glowc_profiler *p, int pass)
{
    NEED(p, "glowc_profiler_begin_pass");
    /* The profiler fixes each value's histogram range when pass 2 begins. */
    if (pass != p->pass + 1 || pass > 2)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "profiling passes go 1 then 2; pass %d "
                        "after pass %d", pass, p->pass);
    glow_profiler_begin_pass(p->pr, pass);
    p->pass = pass;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_profiler_run(glowc_profiler *p, const glowc_value *inputs,
                                          int ninputs)
{
    NEED(p, "glowc_profiler_run");
    if (!p->pass || p->profile)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_profiler_run: %s",
                        p->profile ? "the profile is finished" : "no pass begun");
    if (!p->p)
        GLOWC_TRY_API(glowc_profiler_compile(p, inputs, ninputs));
    glow_tensor *t = calloc((size_t)ninputs + 1, sizeof *t);
    glow_diag *d = calloc(1, sizeof *d);
    glowc_status st = t && d ? order_inputs(p, inputs, ninputs, t)
                             : api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    /* Every sample of the first's types: the program was compiled for them. */
    for (int i = 0; st == GLOWC_OK && i < ninputs; i++) {
        const glow_node *ph = p->p->inputs[i];
        char a[128], b[128];
        if (!glow_type_equal(&t[i].type, &ph->outs[0]))
            st = api_fail(GLOWC_ERR_BAD_INPUT, "input %d '%s' is %s, the model's is %s (the "
                          "first sample's)", i, ph->name, glow_type_str(&t[i].type, a, sizeof a),
                          glow_type_str(&ph->outs[0], b, sizeof b));
    }
    if (st == GLOWC_OK && glow_program_run(p->p, t, ninputs, d) != GLOW_OK) {
        if (!d->len)
            glow_fail(d, d->status, "%s", glow_status_name(d->status));
        st = api_fail_diag(d);
    }
    if (st == GLOWC_OK)
        glow_profiler_observe(p->pr, t);
    free(t);
    free(d);
    return st;
}

GLOWC_API int glowc_profiler_value_count(const glowc_profiler *p)
{
    return p && p->p ? glow_profiler_nkeys(p->pr) : 0;
}

GLOWC_API glowc_status glowc_profiler_finish(glowc_profiler *p)
{
    NEED(p, "glowc_profiler_finish");
    if (p->pass != 2 || !p->p)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_profiler_finish: %s",
                        p->p ? "pass 2 has not begun" : "no sample was run");
    if (p->profile)
        return GLOWC_OK;
    glow_diag *d = calloc(1, sizeof *d);
    if (!d)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = GLOWC_OK;
    if (glow_profiler_finish(p->pr, &p->profile, d) != GLOW_OK) {
        p->profile = NULL;
        st = api_fail_diag(d);
    }
    free(d);
    return st;
}

GLOWC_API glowc_status glowc_profiler_write(glowc_profiler *p, const char *path)
{
    NEED(p, "glowc_profiler_write");
    if (!p->profile || !path)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_profiler_write: %s",
                        path ? "the profile is not finished (glowc_profiler_finish)"
                             : "path is NULL");
    glow_diag *d = calloc(1, sizeof *d);
    if (!d)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = GLOWC_OK;
    if (glow_profile_write(p->profile, path, d) != GLOW_OK)
        st = api_fail_diag(d);
    free(d);
    return st;
}
