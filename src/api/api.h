// api.h - What the public API's files (src/api) share: the options, session and tensor
// objects behind the opaque handles of include/glowc/glowc.h, and the error helpers.
#ifndef GLOW_API_H
#define GLOW_API_H

#include "glowc/glowc.h"
#include "opt/opt.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

struct glowc_options {
    char *backend;               /* "cpu" or "interpreter" */
    int threads;                 /* 0: the backend's default */
    char **defines;              /* "SYM=VAL" */
    int ndefines;
    int no_optimize;
    char *profile;               /* NULL: float */
    glow_quant_schema schema;
    glow_quant_calibration calibration;
    int per_channel;
    int reduce_range;
    char *keep_float;
    glow_dtype precision;        /* GLOW_I8Q or GLOW_I16Q */
    char *cache_dir;             /* the compiled-code cache; NULL: none */
    int replicas;                /* a host network's devices at most; 0: all with room */
    uint64_t max_memory;         /* a session's planned bytes at most; 0: the machine's */
    int report;                  /* GLOWC_REPORT_* flags: what compiling prints to stderr */
};

/* One input or output as glowc_tensor_info shows it, with its dims in public types. */
typedef struct api_io {
    char *name;
    glowc_dtype dtype;
    int rank;
    int64_t shape[GLOW_MAX_DIMS];
    size_t bytes;
    glow_type type;              /* the placeholder's type */
} api_io;

struct glowc_session {
    glow_program *p;             /* compiled; serves concurrent runs through its pool */
    int ninputs, noutputs;
    api_io *inputs, *outputs;    /* model order, as the program's placeholders */
    char *backend;               /* glowc_session_info's */
    int threads;
    double load_ms, compile_ms;
};

struct glowc_tensor {
    const char *name;            /* the session's output name, or own_name */
    char *own_name;              /* read from a file; NULL for outputs */
    glowc_dtype dtype;
    int rank;
    int64_t shape[GLOW_MAX_DIMS];
    size_t bytes;
    void *data;                  /* 64-byte aligned, owned */
};

/* Returns from the calling function when expr gives a failure. */
#define GLOWC_TRY_API(expr)                  \
    do {                                     \
        glowc_status try_s_ = (expr);        \
        if (try_s_ != GLOWC_OK)              \
            return try_s_;                   \
    } while (0)

/* --- api_compile.c: what sessions, profilers and bundles share --- */

/* The compile options of the public options o (backend, threads, optimizer and its reports,
 * cache, memory limit, quantization). They point into c: c must stay where it is. */
typedef struct api_compile {
    glow_compile_options copt;
    glow_opt_options oo;
    glow_quant_options q;
} api_compile;
void api_compile_init(api_compile *c, const glowc_options *o);

/* Loads the model at path (or bytes[0..size) when path is NULL) with o's defines into a new
 * module, specialized to the types of spec[0..nspec) - and to their values when values is
 * set - as glow_onnx_options' input_types/input_values; *ms gets the time it took. Messages
 * name the file. */
glowc_status api_load(const glowc_options *o, const char *path, const void *bytes, size_t size,
                      const glow_tensor *spec, int nspec, bool values, glow_module **out,
                      double *ms);
/* api_fail_diag for a failed load or compile: a name not found is the model's fault. */
glowc_status api_fail_compile(glow_diag *d);
/* The caller's values as tensors borrowing their data (types from the public dtypes and
 * shapes); fails naming a value glowc has no type for. */
glowc_status api_tensors_of(const glowc_value *v, int n, glow_tensor *out);
/* Milliseconds of a monotonic clock. */
double api_now_ms(void);

/* --- api_run.c --- */

/* Binds values[0..n) to the rows of io (by name, or by position when a value has none):
 * slot[k] is the value bound to row k or NULL. `all` demands every row be bound. */
glowc_status api_bind(const api_io *io, int nio, const glowc_value *values, int n,
                      const char *what, bool all, const glowc_value **slot);
/* The value against its row: type, shape, data and size (inputs exactly, outputs at least). */
glowc_status api_check_value(const glowc_value *v, const api_io *io, int k, bool input);

/* A tensor with `bytes` of uninitialized 64-byte aligned data; NULL when out of memory. */
glowc_tensor *api_tensor_new(const char *name, glowc_dtype dtype, int rank,
                             const int64_t *shape, size_t bytes);

/* A new tensor holding a copy of v (its actual type), with the given public name and type;
 * a string tensor gets copies of the strings in its own block (never-NULL pointers, valid
 * until glowc_tensor_destroy). NULL when out of memory. */
glowc_tensor *api_tensor_copy(const char *name, glowc_dtype dtype, const glow_tensor *v);

/* --- api_options.c --- */

/* A deep copy of o (the defaults when o is NULL); NULL when out of memory. */
glowc_options *api_options_clone(const glowc_options *o);

/* --- api_status.c --- */

/* Records msg as the calling thread's last error and returns the public status for s. */
glowc_status api_fail_diag(const glow_diag *d);
/* Records a formatted message with the public status s, and returns s. */
glowc_status api_fail(glowc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The public element type of an internal one (GLOWC_DTYPE_UNDEFINED for quantized kinds). */
glowc_dtype api_dtype_public(glow_dtype t);
/* io's dtype, rank, shape, bytes and type from t (the name is the caller's). */
void api_io_set_type(api_io *io, const glow_type *t);

#endif
