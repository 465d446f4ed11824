// api_session.c - Sessions of the public API: load an ONNX model (a file or bytes) with the
// options' defines, compile it for the options' backend (quantized when a profile is given),
// and describe its inputs and outputs in public types.
//
// A session is a compiled program (src/runtime) plus its input/output table. Runs take their
// execution contexts from the program's pool (api_run.c), so the session itself holds nothing
// a run changes and needs no lock.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

void api_io_set_type(api_io *io, const glow_type *t)
{
    io->dtype = api_dtype_public(t->dtype);
    io->rank = t->rank;
    for (int d = 0; d < t->rank; d++)
        io->shape[d] = t->dims[d];
    io->bytes = glow_type_bytes(t);
    io->type = *t;
}

/* Fills one input/output row from a placeholder; false for an element type the API has no
 * name for (a quantized placeholder). */
static bool describe(const glow_node *ph, api_io *io)
{
    const glow_type *t = &ph->outs[0];
    io->name = strdup(ph->name ? ph->name : "");
    api_io_set_type(io, t);
    return io->name && io->dtype != GLOWC_DTYPE_UNDEFINED;
}

static void free_ios(api_io *io, int n)
{
    for (int i = 0; io && i < n; i++)
        free(io[i].name);
    free(io);
}

GLOWC_API void glowc_session_destroy(glowc_session *s)
{
    if (!s)
        return;
    glow_program_destroy(s->p);
    free_ios(s->inputs, s->ninputs);
    free_ios(s->outputs, s->noutputs);
    free(s->backend);
    free(s);
}

/* The session around a compiled program (which it takes), or a failure naming the
 * placeholder the API cannot describe. */
static glowc_status wrap(glow_program *p, glowc_session **out)
{
    glowc_session *s = calloc(1, sizeof *s);
    if (!s) {
        glow_program_destroy(p);
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    /* Runs take contexts from the pool: the first takes the one compiling made. */
    glow_program_pool_own_context(p);
    s->p = p;
    s->ninputs = p->ninputs;
    s->noutputs = p->noutputs;
    s->inputs = calloc((size_t)p->ninputs + 1, sizeof *s->inputs);
    s->outputs = calloc((size_t)p->noutputs + 1, sizeof *s->outputs);
    if (!s->inputs || !s->outputs) {
        glowc_session_destroy(s);
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    for (int k = 0; k < 2; k++) {
        int n = k ? p->noutputs : p->ninputs;
        for (int i = 0; i < n; i++) {
            glow_node *ph = k ? p->outputs[i] : p->inputs[i];
            if (!describe(ph, k ? &s->outputs[i] : &s->inputs[i])) {
                char ty[128];
                glowc_status st = api_fail(GLOWC_ERR_UNSUPPORTED, "%s %d '%s' is %s, which the "
                                           "API has no element type for", k ? "output" : "input",
                                           i, ph->name, glow_type_str(&ph->outs[0], ty,
                                                                      sizeof ty));
                glowc_session_destroy(s);
                return st;
            }
        }
    }
    *out = s;
    return GLOWC_OK;
}

/* Loads (from path, or from bytes when path is NULL; specialized to spec[0..nspec), their
 * types and values) and compiles. */
static glowc_status create(const glowc_options *o, const char *path, const void *bytes,
                           size_t size, const glow_tensor *spec, int nspec, glowc_session **out)
{
    if (!out)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_create: out is NULL");
    *out = NULL;
    if (!path && !bytes)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_create: no model given");
    glowc_options *dflt = NULL;
    if (!o && !(o = dflt = glowc_options_create()))
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");

    glow_module *m = NULL;
    double load_ms = 0;
    glowc_status st = api_load(o, path, bytes, size, spec, nspec, true, &m, &load_ms);
    glow_diag *d = st == GLOWC_OK ? calloc(1, sizeof *d) : NULL;
    api_compile *c = st == GLOWC_OK ? malloc(sizeof *c) : NULL;
    if (st == GLOWC_OK && (!d || !c)) {
        glow_module_destroy(m);
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    if (st == GLOWC_OK) {
        api_compile_init(c, o);
        double t0 = api_now_ms();
        glow_program *p = NULL;
        if (glow_program_create(m, &c->copt, &p, d) != GLOW_OK) { /* takes m */
            st = api_fail_compile(d);
        } else {
            if (o->report & GLOWC_REPORT_BACKEND)
                glow_program_report_backend(p, stderr);
            double compile_ms = api_now_ms() - t0;
            st = wrap(p, out);
            if (st == GLOWC_OK) {
                (*out)->load_ms = load_ms;
                (*out)->compile_ms = compile_ms;
                (*out)->threads = o->threads;
                if (!((*out)->backend = strdup(o->backend))) {
                    glowc_session_destroy(*out);
                    *out = NULL;
                    st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
                }
            }
        }
    }
    free(c);
    free(d);
    glowc_options_destroy(dflt);
    return st;
}

GLOWC_API glowc_status glowc_session_create(const glowc_options *o, const char *path,
                                            glowc_session **out)
{
    if (!path)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_create: path is NULL");
    return create(o, path, NULL, 0, NULL, 0, out);
}

GLOWC_API glowc_status glowc_session_create_from_bytes(const glowc_options *o,
                                                       const void *bytes, size_t size,
                                                       glowc_session **out)
{
    if (!bytes)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_create_from_bytes: bytes "
                        "is NULL");
    return create(o, NULL, bytes, size, NULL, 0, out);
}

GLOWC_API int glowc_session_input_count(const glowc_session *s) { return s ? s->ninputs : 0; }

GLOWC_API int glowc_session_output_count(const glowc_session *s) { return s ? s->noutputs : 0; }

static glowc_status info_of(const api_io *io, int n, int i, const char *what,
                            glowc_tensor_info *info)
{
    if (!info)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_%s_info: info is NULL", what);
    if (i < 0 || i >= n)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the model has %d %s%s; there is no %s %d",
                        n, what, n == 1 ? "" : "s", what, i);
    *info = (glowc_tensor_info){ .name = io[i].name, .dtype = io[i].dtype, .rank = io[i].rank,
                                 .shape = io[i].shape, .size_bytes = io[i].bytes };
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_session_input_info(const glowc_session *s, int i,
                                                glowc_tensor_info *info)
{
    if (!s)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_input_info: session is NULL");
    return info_of(s->inputs, s->ninputs, i, "input", info);
}

GLOWC_API glowc_status glowc_session_output_info(const glowc_session *s, int i,
                                                 glowc_tensor_info *info)
{
    if (!s)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_output_info: session is "
                        "NULL");
    return info_of(s->outputs, s->noutputs, i, "output", info);
}

static int index_of(const api_io *io, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(io[i].name, name))
            return i;
    return -1;
}

GLOWC_API int glowc_session_input_index(const glowc_session *s, const char *name)
{
    return s ? index_of(s->inputs, s->ninputs, name) : -1;
}

GLOWC_API int glowc_session_output_index(const glowc_session *s, const char *name)
{
    return s ? index_of(s->outputs, s->noutputs, name) : -1;
}

GLOWC_API glowc_status glowc_session_create_for_inputs(const glowc_options *o, const char *path,
                                                       const glowc_value *inputs, int ninputs,
                                                       glowc_session **out)
{
    if (!path)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_create_for_inputs: path is "
                        "NULL");
    if (ninputs < 0 || (ninputs && !inputs))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%d inputs given at %p", ninputs,
                        (const void *)inputs);
    glow_tensor *spec = calloc((size_t)ninputs + 1, sizeof *spec);
    if (!spec)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = api_tensors_of(inputs, ninputs, spec);
    if (st == GLOWC_OK)
        st = create(o, path, NULL, 0, spec, ninputs, out);
    else if (out)
        *out = NULL;
    free(spec);
    return st;
}

GLOWC_API glowc_status glowc_session_get_info(const glowc_session *s, glowc_session_info *info)
{
    if (!s || !info)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_get_info: %s is NULL",
                        s ? "info" : "session");
    const glow_program *p = s->p;
    const ir_instr *const *fb = NULL;
    *info = (glowc_session_info){
        .backend = s->backend, .threads = s->threads,
        .constant_bytes = p->ir ? p->ir->constant_bytes : 0,
        .mutable_bytes = p->ir ? p->ir->mutable_bytes : 0,
        .activation_bytes = p->ir ? p->ir->activation_bytes : 0,
        .load_ms = s->load_ms, .compile_ms = s->compile_ms,
        .fallbacks = glow_program_fallbacks(p, &fb),
        .code_cached = glow_program_code_cached(p),
        .code_bytes = glow_program_code_bytes(p),
        .codegen_anon_bytes = p->codegen_anon,
        .codegen_file_bytes = p->codegen_file,
    };
    return GLOWC_OK;
}
