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
#include "onnx/onnx.h"

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

/* The caller's values as tensors in model order: a named value to the input of that name
 * (names[0..want): the model's inputs), the others by position. */
static glowc_status order_inputs(const char *const *names, int want, const glowc_value *in,
                                 int n, glow_tensor *t)
{
    if (n < 0 || (n && !in))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%d inputs given at %p", n,
                        (const void *)in);
    if (n != want)
        return api_fail(GLOWC_ERR_BAD_INPUT, "the model has %d input%s, %d given", want,
                        want == 1 ? "" : "s", n);
    glow_tensor *given = calloc((size_t)n + 1, sizeof *given);
    bool *bound = calloc((size_t)n + 1, sizeof *bound);
    glowc_status st = given && bound ? api_tensors_of(in, n, given)
                                     : api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; st == GLOWC_OK && i < n; i++) {
        int k = i;
        if (in[i].name)
            for (k = 0; k < n && strcmp(names[k], in[i].name); k++)
                ;
        if (k == n)
            st = api_fail(GLOWC_ERR_BAD_INPUT, "the model has no input '%s'", in[i].name);
        else if (bound[k])
            st = api_fail(GLOWC_ERR_BAD_INPUT, "input %d is given twice", k);
        else {
            bound[k] = true;
            t[k] = given[i];
        }
    }
    free(given);
    free(bound);
    return st;
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
    /* Before compiling, the input names come from the model's summary (a light parse), and
     * only when a value is named. */
    bool named = false;
    for (int i = 0; inputs && i < ninputs; i++)
        named = named || inputs[i].name;
    glow_arena arena = { 0 };
    glow_onnx_summary sum = { 0 };
    const char **names = calloc((size_t)ninputs + 1, sizeof *names);
    glow_diag *sd = named ? calloc(1, sizeof *sd) : NULL;
    glowc_status st = !t || !names || (named && !sd)
                          ? api_fail(GLOWC_ERR_NO_MEMORY, "out of memory") : GLOWC_OK;
    int want = ninputs;
    if (st == GLOWC_OK && named) {
        if (glow_onnx_summarize(p->path, &arena, &sum, sd) != GLOW_OK)
            st = api_fail_compile(sd);
        want = sum.ninputs;
        for (int i = 0; st == GLOWC_OK && i < ninputs && i < want; i++)
            names[i] = sum.inputs[i].name;
    }
    if (st == GLOWC_OK)
        st = order_inputs(names, want, inputs, ninputs, t);
    free(sd);
    free(names);
    glow_module *m = NULL;
    if (st == GLOWC_OK)
        st = api_load(p->o, p->path, NULL, 0, t, ninputs, false, &m, NULL);
    free(t);
    glow_arena_release(&arena);
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
    const char **names = calloc((size_t)p->p->ninputs + 1, sizeof *names);
    for (int i = 0; names && i < p->p->ninputs; i++)
        names[i] = p->p->inputs[i]->name;
    glowc_status st = t && d && names ? order_inputs(names, p->p->ninputs, inputs, ninputs, t)
                                      : api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    free(names);
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
