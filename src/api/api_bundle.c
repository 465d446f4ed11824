// api_bundle.c - Bundles through the public API: a model compiled ahead of time for the cpu
// backend (up to the planned IR, for another target if asked) and written as an object file,
// a header and the weights (src/backend/cpu/bundle.c) - what `glowc compile --emit-bundle`
// does, as its client.
//
// Compiling and writing are two calls so that a caller can tell a model the bundle cannot be
// made of from a directory it cannot be written to.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "backend/cpu/bundle.h"

struct glowc_bundle {
    glow_program *p;            /* compiled to GLOW_STAGE_IR_OPTIMIZED */
    char *path;                 /* the model file, for the header's comment; NULL for bytes */
    char *triple, *cpu;
    int threads;                /* > 1: the NAME_thread entry */
};

GLOWC_API int glowc_bundle_name_ok(const char *name) { return name && glow_bundle_name_ok(name); }

GLOWC_API void glowc_bundle_destroy(glowc_bundle *b)
{
    if (!b)
        return;
    glow_program_destroy(b->p);
    free(b->path);
    free(b->triple);
    free(b->cpu);
    free(b);
}

static bool dup_or_null(const char *s, char **out)
{
    *out = s ? strdup(s) : NULL;
    return !s || *out;
}

GLOWC_API glowc_status glowc_bundle_create(const glowc_options *o, const char *path,
                                           const char *triple, const char *cpu,
                                           glowc_bundle **out)
{
    if (!out || !path)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_bundle_create: %s is NULL",
                        out ? "path" : "out");
    *out = NULL;
    glowc_options *dflt = NULL;
    if (!o && !(o = dflt = glowc_options_create()))
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glowc_status st = GLOWC_OK;
    glowc_bundle *b = calloc(1, sizeof *b);
    if (strcmp(o->backend, "cpu"))
        st = api_fail(GLOWC_ERR_INVALID_ARGUMENT, "bundles come from the cpu backend, not "
                      "'%s'", o->backend);
    else if (!b || !dup_or_null(path, &b->path) || !dup_or_null(triple, &b->triple) ||
             !dup_or_null(cpu, &b->cpu))
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glow_module *m = NULL;
    if (st == GLOWC_OK)
        st = api_load(o, path, NULL, 0, NULL, 0, false, &m, NULL);
    api_compile *c = st == GLOWC_OK ? malloc(sizeof *c) : NULL;
    glow_diag *d = st == GLOWC_OK ? calloc(1, sizeof *d) : NULL;
    if (st == GLOWC_OK && (!c || !d)) {
        glow_module_destroy(m);
        st = api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    if (st == GLOWC_OK) {
        api_compile_init(c, o);
        /* Another triple or CPU gets no host-ISA preparation (blocked layouts, repacking;
         * an aarch64 triple gets NEON's instead); a bundle has no evaluator for lazy
         * branches, so they are inlined; its object file is made each time (no cache); the
         * options' threads are the bundle's entry's, the compile itself takes the default. */
        c->copt.stop_after = GLOW_STAGE_IR_OPTIMIZED;
        c->copt.foreign_target = triple || (cpu && strcmp(cpu, "native"));
        c->copt.target_triple = b->triple;
        c->copt.inline_control_flow = true;
        c->copt.cache_dir = NULL;
        c->copt.threads = 0;
        b->threads = o->threads;
        if (glow_program_create(m, &c->copt, &b->p, d) != GLOW_OK) /* takes m */
            st = api_fail_compile(d);
    }
    free(c);
    free(d);
    glowc_options_destroy(dflt);
    if (st != GLOWC_OK) {
        glowc_bundle_destroy(b);
        return st;
    }
    *out = b;
    return GLOWC_OK;
}

/* The model file's stem as a C identifier: "models/my-net.onnx" -> "my_net". */
static void default_name(const char *path, char *out, size_t size)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path ? path : "";
    size_t n = 0;
    if (*base >= '0' && *base <= '9')
        out[n++] = 'm';
    for (const char *c = base; *c && *c != '.' && n + 1 < size && n < 40; c++) {
        bool ok = *c == '_' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z');
        out[n++] = ok ? *c : '_';
    }
    out[n] = 0;
    if (!n || !strcmp(out, "m"))
        snprintf(out, size, "model");
}

GLOWC_API glowc_status glowc_bundle_write(glowc_bundle *b, const char *dir, const char *name,
                                          glowc_bundle_weights weights,
                                          glowc_bundle_info *info)
{
    if (!b || !dir || !dir[0])
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_bundle_write: %s",
                        b ? "no directory" : "the bundle is NULL");
    if (name && !glow_bundle_name_ok(name))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "a bundle's name wants a C identifier of "
                        "at most 63 characters, got '%s'", name);
    if (weights != GLOWC_WEIGHTS_FILE && weights != GLOWC_WEIGHTS_C_ARRAY &&
        weights != GLOWC_WEIGHTS_EMBEDDED)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "unknown weights mode %d", (int)weights);
    char stem[64];
    if (name)
        snprintf(stem, sizeof stem, "%s", name);
    else
        default_name(b->path, stem, sizeof stem);
    const glow_program *p = b->p;
    glow_bundle_options bo = { .dir = dir, .name = stem, .triple = b->triple, .cpu = b->cpu,
                               .weights = weights == GLOWC_WEIGHTS_C_ARRAY ? GLOW_WEIGHTS_C_ARRAY
                                          : weights == GLOWC_WEIGHTS_EMBEDDED
                                              ? GLOW_WEIGHTS_EMBEDDED : GLOW_WEIGHTS_FILE,
                               .threads = b->threads, .model = b->path };
    int n = p->ninputs + p->noutputs;
    glow_bundle_io *ios = calloc((size_t)n + 1, sizeof *ios);
    glow_diag *d = calloc(1, sizeof *d);
    if (!ios || !d) {
        free(ios);
        free(d);
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        bool in = i < p->ninputs;
        const glow_node *ph = in ? p->inputs[i] : p->outputs[i - p->ninputs];
        ios[i] = (glow_bundle_io){ ph->name, &ph->outs[0],
                                   in ? p->input_vals[i] : p->output_vals[i - p->ninputs] };
    }
    glow_bundle_ios io = { ios, ios + p->ninputs, p->ninputs, p->noutputs };
    glow_bundle_info bi;
    glowc_status st = GLOWC_OK;
    if (glow_bundle_emit(p->ir, &io, &bo, &bi, d) != GLOW_OK) {
        st = api_fail_diag(d);
    } else if (info) {
        *info = (glowc_bundle_info){ .constant_bytes = bi.constant_bytes,
                                     .mutable_bytes = bi.mutable_bytes,
                                     .activation_bytes = bi.activation_bytes,
                                     .alignment = bi.alignment,
                                     .object_bytes = bi.object_bytes,
                                     .instructions = bi.ninstr };
        snprintf(info->name, sizeof info->name, "%s", stem);
        snprintf(info->triple, sizeof info->triple, "%s", bi.triple);
        snprintf(info->cpu, sizeof info->cpu, "%s", bi.cpu);
    }
    free(ios);
    free(d);
    return st;
}

GLOWC_API glowc_status glowc_compile_bundle(const glowc_options *o, const char *path,
                                            const char *triple, const char *cpu,
                                            const char *dir, const char *name,
                                            glowc_bundle_weights weights,
                                            glowc_bundle_info *info)
{
    glowc_bundle *b = NULL;
    GLOWC_TRY_API(glowc_bundle_create(o, path, triple, cpu, &b));
    glowc_status st = glowc_bundle_write(b, dir, name, weights, info);
    glowc_bundle_destroy(b);
    return st;
}
