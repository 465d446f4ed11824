// api_run.c - Running a session: binds the caller's values to the model's inputs and outputs
// (by name or position, every type, shape and size checked with a message naming the tensor),
// runs on an execution context from the program's pool, and copies the outputs into the
// caller's buffers or into new library-owned tensors; those tensors' accessors, and reading a
// tensor file (.pb or .npy) into one, so a program that embeds glowc can feed it the files
// `glowc run` takes without a parser of its own.
//
// A run copies its inputs into the context's mutable region and its outputs out of it, so the
// caller's buffers are never shared with another run, and a context goes back to the pool as
// soon as the outputs are copied. Binding allocates nothing for models with up to
// MAX_STACK_IO inputs and outputs, which keeps the session's cost per run small beside the
// bare program's (bench/session_overhead.c).
//
// String tensors (glowc.h, "Element types") are arrays of pointers: a library-owned tensor
// copies the strings behind them into its own block (api_tensor_copy), because the bytes an
// op makes live in the context's string store, which the next run on that context resets;
// for the same reason a caller's buffer cannot receive a string output.
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "onnx/onnx.h"

#define MAX_STACK_IO 32

/* "f32[1, 3, 224, 224]" for a value the caller gave; "?" parts where it is malformed. */
static char *value_type_str(const glowc_value *v, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "%s[", glowc_dtype_name(v->dtype));
    for (int d = 0; v->shape && d < v->rank && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", d ? ", " : "",
                                (long long)v->shape[d]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

static char *io_type_str(const api_io *io, char *buf, size_t size)
{
    return glow_type_str(&io->type, buf, size);
}

glowc_status api_bind(const api_io *io, int nio, const glowc_value *values, int n,
                      const char *what, bool all, const glowc_value **slot)
{
    if (n < 0 || (n > 0 && !values))
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "%d %ss given at %p", n, what,
                        (const void *)values);
    if (n > nio)
        return api_fail(GLOWC_ERR_BAD_INPUT, "the model has %d %s%s, %d given", nio, what,
                        nio == 1 ? "" : "s", n);
    for (int k = 0; k < nio; k++)
        slot[k] = NULL;
    for (int i = 0; i < n; i++) {
        int k = i;
        if (values[i].name) {
            for (k = 0; k < nio && strcmp(io[k].name, values[i].name); k++)
                ;
            if (k == nio) {
                char known[512] = "";
                size_t len = 0;
                for (int j = 0; j < nio && len < sizeof known - 1; j++)
                    len += (size_t)snprintf(known + len, sizeof known - len, "%s'%s'",
                                            j ? ", " : "", io[j].name);
                return api_fail(GLOWC_ERR_BAD_INPUT, "the model has no %s '%s' (its %ss: %s)",
                                what, values[i].name, what, known);
            }
        }
        if (slot[k])
            return api_fail(GLOWC_ERR_BAD_INPUT, "%s %d '%s' is given twice", what, k,
                            io[k].name);
        slot[k] = &values[i];
    }
    for (int k = 0; all && k < nio; k++) {
        char ty[128];
        if (!slot[k])
            return api_fail(GLOWC_ERR_BAD_INPUT, "missing %s %d '%s' (%s)", what, k,
                            io[k].name, io_type_str(&io[k], ty, sizeof ty));
    }
    return GLOWC_OK;
}

/* The value's element type and shape equal the row's; for outputs (strict false) only what
 * the caller filled in is compared. */
static bool same_type(const glowc_value *v, const api_io *io, bool strict)
{
    if ((strict || v->dtype != GLOWC_DTYPE_UNDEFINED) && v->dtype != io->dtype)
        return false;
    if (!strict && !v->shape)
        return true;
    if (v->rank != io->rank || (v->rank > 0 && !v->shape))
        return false;
    for (int d = 0; d < v->rank; d++)
        if (v->shape[d] != io->shape[d])
            return false;
    return true;
}

glowc_status api_check_value(const glowc_value *v, const api_io *io, int k, bool input)
{
    const char *what = input ? "input" : "output";
    char a[160], b[128];
    if (!same_type(v, io, input))
        return api_fail(GLOWC_ERR_BAD_INPUT, "%s %d '%s' is %s, the model's is %s", what, k,
                        io->name, value_type_str(v, a, sizeof a), io_type_str(io, b, sizeof b));
    if (!input && io->dtype == GLOWC_DTYPE_STRING)
        return api_fail(GLOWC_ERR_BAD_INPUT, "output %d '%s' is %s: a caller's buffer cannot "
                        "hold strings (their bytes live in the run's memory, which the next "
                        "run reuses); leave it out of the outputs, or take it from "
                        "glowc_session_run_tensors", k, io->name, io_type_str(io, b, sizeof b));
    if (!v->data && io->bytes)
        return api_fail(GLOWC_ERR_BAD_INPUT, "%s %d '%s' has no data", what, k, io->name);
    if (input ? v->size_bytes != io->bytes : v->size_bytes < io->bytes)
        return api_fail(GLOWC_ERR_BAD_INPUT, "%s %d '%s' (%s) takes %zu bytes, %s %zu", what,
                        k, io->name, io_type_str(io, b, sizeof b), io->bytes,
                        input ? "given" : "the buffer holds", v->size_bytes);
    return GLOWC_OK;
}

/* The slots of one run: on the stack for small models. */
typedef struct run_slots {
    const glowc_value *stack[2 * MAX_STACK_IO];
    const glowc_value **in, **out;
    void *heap;
} run_slots;

static glowc_status slots_init(run_slots *r, const glowc_session *s)
{
    r->heap = NULL;
    if (s->ninputs <= MAX_STACK_IO && s->noutputs <= MAX_STACK_IO) {
        r->in = r->stack;
        r->out = r->stack + MAX_STACK_IO;
        return GLOWC_OK;
    }
    r->heap = malloc(sizeof(*r->in) * (size_t)(s->ninputs + s->noutputs + 1));
    if (!r->heap)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    r->in = r->heap;
    r->out = r->in + s->ninputs;
    return GLOWC_OK;
}

/* Binds and checks the inputs, takes a context, copies the inputs in and runs. On success
 * *exec is the context holding the outputs; the caller copies them and releases it.
 * String inputs are copied as handles: the caller's bytes stay alive for the whole call, and
 * every string output is copied out (api_tensor_copy) before the call returns, so the run's
 * store needs no copy of them (glow_exec_run makes one because its caller may not wait). */
static glowc_status run_inputs(glowc_session *s, const glowc_value **in, glow_exec **exec)
{
    for (int k = 0; k < s->ninputs; k++)
        GLOWC_TRY_API(api_check_value(in[k], &s->inputs[k], k, true));
    glow_diag d;
    d.status = GLOW_OK;
    d.msg[0] = 0;
    d.len = 0;
    glow_exec *e = NULL;
    if (glow_program_acquire(s->p, &e, &d) != GLOW_OK)
        return api_fail_diag(&d);
    for (int k = 0; k < s->ninputs; k++) {
        void *dst = glow_exec_input(e, k);
        if (dst)
            memcpy(dst, in[k]->data, s->inputs[k].bytes);
    }
    if (glow_exec_execute(e, &d) != GLOW_OK) {
        glow_program_release(s->p, e);
        return api_fail_diag(&d);
    }
    *exec = e;
    return GLOWC_OK;
}

/* A caller's buffer has the output's declared size, the bound for a data-dependent output
 * (docs/dynamic-shapes.md): the actual elements come first, compactly, and the rest is zeroed,
 * so it never shows an earlier run's elements or a padding that went through arithmetic. */
static void api_copy_output(void *dst, size_t size, const glow_tensor *t)
{
    size_t bytes = glow_tensor_bytes(t);
    if (bytes > size)
        bytes = size;
    memcpy(dst, t->data, bytes);
    memset((uint8_t *)dst + bytes, 0, size - bytes);
}

GLOWC_API glowc_status glowc_session_run(glowc_session *s, const glowc_value *inputs,
                                         int ninputs, glowc_value *outputs, int noutputs)
{
    if (!s)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_run: session is NULL");
    run_slots r;
    GLOWC_TRY_API(slots_init(&r, s));
    glow_exec *e = NULL;
    glowc_status st = api_bind(s->inputs, s->ninputs, inputs, ninputs, "input", true, r.in);
    if (st == GLOWC_OK)
        st = api_bind(s->outputs, s->noutputs, outputs, noutputs, "output", false, r.out);
    for (int k = 0; st == GLOWC_OK && k < s->noutputs; k++)
        if (r.out[k])
            st = api_check_value(r.out[k], &s->outputs[k], k, false);
    if (st == GLOWC_OK)
        st = run_inputs(s, r.in, &e);
    if (st == GLOWC_OK) {
        for (int k = 0; k < s->noutputs; k++) {
            if (!r.out[k])
                continue;
            glow_tensor t = glow_exec_output(e, k);
            api_copy_output(r.out[k]->data, s->outputs[k].bytes, &t);
        }
        glow_program_release(s->p, e);
    }
    free(r.heap);
    return st;
}

GLOWC_API glowc_status glowc_session_run_tensors(glowc_session *s, const glowc_value *inputs,
                                                 int ninputs, glowc_tensor **outputs)
{
    if (!s || !outputs)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_session_run_tensors: %s is NULL",
                        s ? "outputs" : "session");
    for (int k = 0; k < s->noutputs; k++)
        outputs[k] = NULL;
    run_slots r;
    GLOWC_TRY_API(slots_init(&r, s));
    glow_exec *e = NULL;
    glowc_status st = api_bind(s->inputs, s->ninputs, inputs, ninputs, "input", true, r.in);
    if (st == GLOWC_OK)
        st = run_inputs(s, r.in, &e);
    free(r.heap);
    if (st != GLOWC_OK)
        return st;
    for (int k = 0; k < s->noutputs && st == GLOWC_OK; k++) {
        const api_io *io = &s->outputs[k];
        /* A data-dependent output (docs/dynamic-shapes.md) comes back under its actual
         * extent, a prefix of the bound the output's info gives. */
        glow_tensor v = glow_exec_output(e, k);
        glowc_tensor *t = api_tensor_copy(io->name, io->dtype, &v);
        if (!t) {
            st = api_fail(GLOWC_ERR_NO_MEMORY, "cannot allocate output %d '%s' (%zu bytes)",
                          k, io->name, glow_tensor_bytes(&v));
            break;
        }
        outputs[k] = t;
    }
    glow_program_release(s->p, e);
    if (st != GLOWC_OK) {
        for (int k = 0; k < s->noutputs; k++) {
            glowc_tensor_destroy(outputs[k]);
            outputs[k] = NULL;
        }
    }
    return st;
}

/* ---- library-owned tensors ---- */

glowc_tensor *api_tensor_new(const char *name, glowc_dtype dtype, int rank,
                             const int64_t *shape, size_t bytes)
{
    glowc_tensor *t = calloc(1, sizeof *t);
    /* At least one aligned line: a zero-sized tensor still has a valid data pointer. */
    size_t cap = (bytes + 63) / 64 * 64;
    if (t)
        t->data = aligned_alloc(64, cap ? cap : 64);
    if (!t || !t->data) {
        free(t);
        return NULL;
    }
    t->name = name;
    t->dtype = dtype;
    t->rank = rank;
    for (int d = 0; d < rank; d++)
        t->shape[d] = shape[d];
    t->bytes = bytes;
    return t;
}

glowc_tensor *api_tensor_copy(const char *name, glowc_dtype dtype, const glow_tensor *v)
{
    size_t bytes = glow_tensor_bytes(v);
    if (v->type.dtype != GLOW_STRING) {
        glowc_tensor *t = api_tensor_new(name, dtype, v->type.rank, v->type.dims, bytes);
        if (t)
            memcpy(t->data, v->data, bytes);
        return t;
    }
    /* The handles, then one "" that every empty string shares, then the other strings'
     * bytes, in the tensor's one block: they live exactly as long as the tensor. */
    size_t n = bytes / sizeof(glow_str), total = bytes + 1;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(glow_str_at(v->data, i));
        total += len ? len + 1 : 0;
    }
    glowc_tensor *t = api_tensor_new(name, dtype, v->type.rank, v->type.dims, total);
    if (!t)
        return NULL;
    t->bytes = bytes;
    const char **h = t->data;
    char *empty = (char *)t->data + bytes, *p = empty + 1;
    *empty = 0;
    for (size_t i = 0; i < n; i++) {
        const char *str = glow_str_at(v->data, i);
        size_t len = strlen(str);
        h[i] = empty;
        if (len) {
            memcpy(p, str, len + 1);
            h[i] = p;
            p += len + 1;
        }
    }
    return t;
}

GLOWC_API glowc_status glowc_tensor_read_file(const char *path, glowc_tensor **out)
{
    if (!path || !out)
        return api_fail(GLOWC_ERR_INVALID_ARGUMENT, "glowc_tensor_read_file: %s is NULL",
                        path ? "out" : "path");
    *out = NULL;
    glow_diag *d = calloc(1, sizeof *d);
    if (!d)
        return api_fail(GLOWC_ERR_NO_MEMORY, "out of memory");
    glow_tensor t = { 0 };
    char *name = NULL;
    glowc_status st = GLOWC_OK;
    if (glow_tensor_read_file(path, &t, &name, d) != GLOW_OK) {
        st = api_fail_diag(d);
    } else {
        glowc_dtype dt = api_dtype_public(t.type.dtype);
        size_t bytes = glow_tensor_bytes(&t);
        glowc_tensor *r = NULL;
        if (dt == GLOWC_DTYPE_UNDEFINED)
            st = api_fail(GLOWC_ERR_UNSUPPORTED, "%s: element type %s has no public type", path,
                          glow_dtype_name(t.type.dtype));
        else if (!(r = api_tensor_copy(NULL, dt, &t)))
            st = api_fail(GLOWC_ERR_NO_MEMORY, "%s: cannot allocate %zu bytes", path, bytes);
        if (r) {
            r->own_name = name;  /* the tensor's name in the file ("" for .npy) */
            r->name = name ? name : "";
            name = NULL;
            *out = r;
        }
    }
    free(name);
    glow_tensor_free(&t);
    free(d);
    return st;
}

GLOWC_API void glowc_tensor_destroy(glowc_tensor *t)
{
    if (!t)
        return;
    free(t->data);
    free(t->own_name);
    free(t);
}

GLOWC_API const char *glowc_tensor_name(const glowc_tensor *t) { return t ? t->name : NULL; }

GLOWC_API glowc_dtype glowc_tensor_dtype(const glowc_tensor *t)
{
    return t ? t->dtype : GLOWC_DTYPE_UNDEFINED;
}

GLOWC_API int glowc_tensor_rank(const glowc_tensor *t) { return t ? t->rank : 0; }

GLOWC_API const int64_t *glowc_tensor_shape(const glowc_tensor *t)
{
    return t ? t->shape : NULL;
}

GLOWC_API const void *glowc_tensor_data(const glowc_tensor *t) { return t ? t->data : NULL; }

GLOWC_API size_t glowc_tensor_size_bytes(const glowc_tensor *t) { return t ? t->bytes : 0; }

GLOWC_API glowc_value glowc_tensor_value(const glowc_tensor *t)
{
    if (!t)
        return (glowc_value){ 0 };
    return (glowc_value){ .name = NULL, .dtype = t->dtype, .rank = t->rank, .shape = t->shape,
                          .data = t->data, .size_bytes = t->bytes };
}
