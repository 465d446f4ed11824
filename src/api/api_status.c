// api_status.c - The public API's versions, statuses and element types, and the per-thread
// last-error message that goes with a failed call.
//
// The message lives in thread-local storage: a call that fails writes it, glowc_last_error
// reads it on the same thread. A run on one thread therefore never sees another thread's
// message, whatever session the two use, and no call has to take an error object.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"

#define STR2(x) #x
#define STR(x) STR2(x)

static _Thread_local char last_error[4096];

GLOWC_API const char *glowc_version(void)
{
    return STR(GLOWC_VERSION_MAJOR) "." STR(GLOWC_VERSION_MINOR) "." STR(GLOWC_VERSION_PATCH);
}

GLOWC_API int glowc_version_number(void) { return GLOWC_VERSION; }

GLOWC_API const char *glowc_status_name(glowc_status s)
{
    switch (s) {
    case GLOWC_OK: return "ok";
    case GLOWC_ERR_INVALID_ARGUMENT: return "invalid argument";
    case GLOWC_ERR_IO: return "i/o error";
    case GLOWC_ERR_BAD_MODEL: return "bad model";
    case GLOWC_ERR_UNSUPPORTED: return "unsupported";
    case GLOWC_ERR_BAD_INPUT: return "bad input";
    case GLOWC_ERR_NO_MEMORY: return "out of memory";
    case GLOWC_ERR_RUNTIME: return "failure while running";
    case GLOWC_ERR_INTERNAL: return "internal error";
    case GLOWC_BUSY: return "busy";
    case GLOWC_CANCELLED: return "cancelled";
    case GLOWC_DEADLINE: return "deadline passed";
    }
    return "unknown status";
}

GLOWC_API const char *glowc_last_error(void) { return last_error; }

/* The public status of an internal one: the public set is smaller and says what the caller
 * can do about it (fix an argument, the model, the input; or report a bug). */
static glowc_status public_status(glow_status s)
{
    switch (s) {
    case GLOW_OK: return GLOWC_OK;
    case GLOW_ERR_IO: return GLOWC_ERR_IO;
    case GLOW_ERR_PARSE:
    case GLOW_ERR_BAD_ATTR: return GLOWC_ERR_BAD_MODEL;
    case GLOW_ERR_UNSUPPORTED: return GLOWC_ERR_UNSUPPORTED;
    case GLOW_ERR_BAD_TYPE:
    case GLOW_ERR_BAD_SHAPE: return GLOWC_ERR_BAD_MODEL;
    case GLOW_ERR_TOO_LARGE: return GLOWC_ERR_NO_MEMORY;
    case GLOW_ERR_NOT_FOUND:
    case GLOW_ERR_USAGE: return GLOWC_ERR_INVALID_ARGUMENT;
    case GLOW_ERR_RUNTIME: return GLOWC_ERR_RUNTIME;
    default: return GLOWC_ERR_INTERNAL;
    }
}

glowc_status api_fail_diag(const glow_diag *d)
{
    glowc_status s = public_status(d->status);
    if (s == GLOWC_OK) /* a failure without a status is still a failure */
        s = GLOWC_ERR_INTERNAL;
    snprintf(last_error, sizeof last_error, "%s", d->msg[0] ? d->msg : glowc_status_name(s));
    return s;
}

glowc_status api_fail(glowc_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

/* The public types by internal kind; quantized kinds never reach a session's inputs or
 * outputs as such (the quantizer keeps them float), so they have none. */
static const glowc_dtype public_of[] = {
    [GLOW_F32] = GLOWC_F32,   [GLOW_F16] = GLOWC_F16, [GLOW_BF16] = GLOWC_BF16,
    [GLOW_F64] = GLOWC_F64,   [GLOW_I8] = GLOWC_I8,   [GLOW_U8] = GLOWC_U8,
    [GLOW_I16] = GLOWC_I16,   [GLOW_U16] = GLOWC_U16, [GLOW_I32] = GLOWC_I32,
    [GLOW_U32] = GLOWC_U32,   [GLOW_I64] = GLOWC_I64, [GLOW_U64] = GLOWC_U64,
    [GLOW_BOOL] = GLOWC_BOOL,
    [GLOW_F8E4M3FN] = GLOWC_F8E4M3FN,     [GLOW_F8E4M3FNUZ] = GLOWC_F8E4M3FNUZ,
    [GLOW_F8E5M2] = GLOWC_F8E5M2,         [GLOW_F8E5M2FNUZ] = GLOWC_F8E5M2FNUZ,
    [GLOW_F8E8M0] = GLOWC_F8E8M0,         [GLOW_F4E2M1] = GLOWC_F4E2M1,
    [GLOW_I4] = GLOWC_I4, [GLOW_U4] = GLOWC_U4, [GLOW_I2] = GLOWC_I2, [GLOW_U2] = GLOWC_U2,
    /* A handle (a pointer) an element in both: api_run.c copies the bytes behind them. */
    [GLOW_STRING] = GLOWC_DTYPE_STRING,
};

glowc_dtype api_dtype_public(glow_dtype t)
{
    if ((unsigned)t >= sizeof public_of / sizeof public_of[0])
        return GLOWC_DTYPE_UNDEFINED;
    return public_of[t];
}

/* The internal kind of a public type; false for an unknown value. */
static bool internal_dtype(glowc_dtype t, glow_dtype *out)
{
    if (t == GLOWC_DTYPE_UNDEFINED)
        return false;
    for (unsigned i = 0; i < sizeof public_of / sizeof public_of[0]; i++) {
        if (public_of[i] == t) {
            *out = (glow_dtype)i;
            return true;
        }
    }
    return false;
}

GLOWC_API const char *glowc_dtype_name(glowc_dtype t)
{
    glow_dtype k;
    return internal_dtype(t, &k) ? glow_dtype_name(k) : "undefined";
}

GLOWC_API size_t glowc_dtype_size(glowc_dtype t)
{
    glow_dtype k;
    return internal_dtype(t, &k) ? glow_dtype_size(k) : 0;
}
