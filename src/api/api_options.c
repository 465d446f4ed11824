// api_options.c - Session options of the public API: backend, threads, --define symbols, the
// optimizer switch and the quantization options, checked as the CLI checks them (the same
// names, the same messages) and copied into a session when it is created.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

/* A strdup whose failure callers turn into GLOWC_ERR_NO_MEMORY. */
static char *copy_str(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

/* Replaces *field with a copy of value (NULL clears it). */
static glowc_status set_str(char **field, const char *value)
{
    char *c = copy_str(value);
    if (value && !c)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    free(*field);
    *field = c;
    return GLOWC_OK;
}

#define NEED_OPTIONS(o)                                                                   \
    do {                                                                                  \
        if (!(o))                                                                         \
            return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%s: the options are NULL", __func__); \
    } while (0)

GLOWC_API glowc_options *glowc_options_create(void)
{
    glowc_options *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->backend = copy_str("cpu");
    o->precision = GLOW_I8Q;
    if (!o->backend) {
        free(o);
        return NULL;
    }
    return o;
}

GLOWC_API void glowc_options_destroy(glowc_options *o)
{
    if (!o)
        return;
    free(o->backend);
    for (int i = 0; i < o->ndefines; i++)
        free(o->defines[i]);
    free(o->defines);
    free(o->profile);
    free(o->keep_float);
    free(o->cache_dir);
    free(o);
}

GLOWC_API glowc_status glowc_options_set_backend(glowc_options *o, const char *backend)
{
    NEED_OPTIONS(o);
    if (!backend || !glow_backend_find(backend))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "unknown backend '%s' (known: %s)",
                        backend ? backend : "(null)", glow_backend_names());
    return set_str(&o->backend, backend);
}

GLOWC_API glowc_status glowc_options_set_threads(glowc_options *o, int threads)
{
    NEED_OPTIONS(o);
    if (threads < 0 || threads > 1024)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "threads wants a number from 1 to 1024 "
                        "(0: one per core), got %d", threads);
    o->threads = threads;
    return GLOWC_OK;
}

/* SYM=VAL with SYM non-empty and VAL a positive integer (the CLI's --define rule). */
static bool valid_define(const char *def)
{
    const char *eq = strchr(def, '=');
    if (!eq || eq == def || !eq[1])
        return false;
    char *end = NULL;
    long long v = strtoll(eq + 1, &end, 10);
    return !*end && v > 0;
}

GLOWC_API glowc_status glowc_options_add_define(glowc_options *o, const char *sym_eq_val)
{
    NEED_OPTIONS(o);
    if (!sym_eq_val || !valid_define(sym_eq_val))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "a define wants SYM=VAL with VAL a positive "
                        "integer, got '%s'", sym_eq_val ? sym_eq_val : "(null)");
    char **grown = realloc(o->defines, sizeof *grown * (size_t)(o->ndefines + 1));
    if (!grown)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    o->defines = grown;
    if (!(o->defines[o->ndefines] = copy_str(sym_eq_val)))
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    o->ndefines++;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_no_optimize(glowc_options *o, int no_optimize)
{
    NEED_OPTIONS(o);
    o->no_optimize = no_optimize != 0;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_cache_dir(glowc_options *o, const char *dir)
{
    NEED_OPTIONS(o);
    if (dir && (!dir[0] || !glow_make_dirs(dir)))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the cache wants a directory glowc can "
                        "create and write, got '%s'", dir);
    return set_str(&o->cache_dir, dir);
}

GLOWC_API glowc_status glowc_options_set_quantize(glowc_options *o, const char *profile_path)
{
    NEED_OPTIONS(o);
    if (profile_path && !profile_path[0])
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "quantize needs a profile file (glowc "
                        "profile writes one)");
    return set_str(&o->profile, profile_path);
}

GLOWC_API glowc_status glowc_options_set_quant_schema(glowc_options *o, const char *schema)
{
    NEED_OPTIONS(o);
    if (!schema || !glow_quant_schema_from_name(schema, &o->schema))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the quantization schema wants asymmetric, "
                        "symmetric, symmetric-uint8 or symmetric-power2, got '%s'",
                        schema ? schema : "(null)");
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_quant_calibration(glowc_options *o,
                                                           const char *calibration)
{
    NEED_OPTIONS(o);
    if (!calibration || !glow_quant_calibration_from_name(calibration, &o->calibration))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the calibration wants minmax or kl, got "
                        "'%s'", calibration ? calibration : "(null)");
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_quant_per_channel(glowc_options *o, int per_channel)
{
    NEED_OPTIONS(o);
    o->per_channel = per_channel != 0;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_quant_reduce_range(glowc_options *o, int reduce_range)
{
    NEED_OPTIONS(o);
    o->reduce_range = reduce_range != 0;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_quant_keep_float(glowc_options *o, const char *kinds)
{
    NEED_OPTIONS(o);
    char bad[64];
    if (kinds && !glow_quant_kind_list_ok(kinds, bad, sizeof bad))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "keep-float wants node kinds such as "
                        "Conv,FullyConnected; '%s' is not one", bad);
    return set_str(&o->keep_float, kinds);
}

GLOWC_API glowc_status glowc_options_set_quant_precision(glowc_options *o,
                                                         const char *precision)
{
    NEED_OPTIONS(o);
    if (precision && !strcmp(precision, "int8"))
        o->precision = GLOW_I8Q;
    else if (precision && !strcmp(precision, "int16"))
        o->precision = GLOW_I16Q;
    else
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "the precision wants int8 or int16, got "
                        "'%s'", precision ? precision : "(null)");
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_replicas(glowc_options *o, int n)
{
    NEED_OPTIONS(o);
    if (n < 0 || n > 64)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "replicas wants a number from 1 to 64 (0: "
                        "every device with room), got %d", n);
    o->replicas = n;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_max_memory(glowc_options *o, uint64_t bytes)
{
    NEED_OPTIONS(o);
    o->max_memory = bytes;
    return GLOWC_OK;
}

GLOWC_API glowc_status glowc_options_set_report(glowc_options *o, int flags)
{
    NEED_OPTIONS(o);
    const int all = GLOWC_REPORT_PASSES | GLOWC_REPORT_PASS_TIMES | GLOWC_REPORT_BACKEND;
    if (flags & ~all)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "report wants GLOWC_REPORT_* flags, got "
                        "%#x", (unsigned)flags);
    o->report = flags;
    return GLOWC_OK;
}

glowc_options *api_options_clone(const glowc_options *o)
{
    glowc_options *c = glowc_options_create();
    if (!c || !o)
        return c;
    char *backend = c->backend;
    *c = *o;
    c->backend = backend;
    c->defines = NULL;
    c->ndefines = 0;
    c->profile = c->keep_float = c->cache_dir = NULL;
    bool ok = set_str(&c->backend, o->backend) == GLOWC_OK &&
              set_str(&c->profile, o->profile) == GLOWC_OK &&
              set_str(&c->keep_float, o->keep_float) == GLOWC_OK &&
              set_str(&c->cache_dir, o->cache_dir) == GLOWC_OK;
    for (int i = 0; ok && i < o->ndefines; i++)
        ok = glowc_options_add_define(c, o->defines[i]) == GLOWC_OK;
    if (!ok) {
        glowc_options_destroy(c);
        return NULL;
    }
    return c;
}
