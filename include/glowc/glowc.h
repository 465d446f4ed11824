/* glowc.h - The public C API of glowc (libglowc): load an ONNX model into a session, ask what
 * its inputs and outputs are, and run it, from any number of threads at once.
 *
 * C99 and C++ (extern "C"); nothing else of glowc needs to be included. Link with
 * `pkg-config --cflags --libs glowc`, or `find_package(glowc)` and `glowc::glowc` in CMake.
 *
 * A session compiles one model once (for the "cpu" backend: native code, JIT-compiled by LLVM;
 * or for the reference "interpreter") and then runs it as often as asked:
 *
 *     glowc_options *o = glowc_options_create();
 *     glowc_options_set_backend(o, "cpu");
 *     glowc_session *s = NULL;
 *     if (glowc_session_create(o, "model.onnx", &s) != GLOWC_OK)
 *         fprintf(stderr, "%s\n", glowc_last_error());
 *     glowc_options_destroy(o);
 *     int64_t shape[] = { 1, 1, 28, 28 };
 *     float image[784], scores[10];
 *     glowc_value in = { NULL, GLOWC_F32, 4, shape, image, sizeof image };
 *     glowc_value out = { NULL, GLOWC_F32, 0, NULL, scores, sizeof scores };
 *     if (glowc_session_run(s, &in, 1, &out, 1) != GLOWC_OK)
 *         fprintf(stderr, "%s\n", glowc_last_error());
 *     glowc_session_destroy(s);
 *
 * Errors: every call that can fail returns a glowc_status; the message that goes with it
 * (naming the input, the types, the model's node) is kept per thread and read with
 * glowc_last_error() on the same thread, before the next glowc call on it. A successful call
 * leaves the message of an earlier failure in place.
 *
 * Threads: every function may be called from any thread. Options objects are not locked: one
 * options object must not be changed by two threads at once (reading it to create sessions
 * concurrently is fine). A session is safe for concurrent use: glowc_session_run may run on many
 * threads at once on one session; each concurrent run takes an execution context (its own
 * activation and mutable memory and, on the cpu backend, its own worker threads) from the
 * session's pool, made on demand and reused, while the compiled code and the weights are
 * shared. Destroying a session while another thread uses it is an error of the caller.
 * Tensors returned by a run belong to the caller, who frees them with glowc_tensor_destroy.
 */
#ifndef GLOWC_GLOWC_H
#define GLOWC_GLOWC_H

#include <stddef.h>
#include <stdint.h>

#define GLOWC_VERSION_MAJOR 0
#define GLOWC_VERSION_MINOR 1
#define GLOWC_VERSION_PATCH 0
/* One number for comparisons: major * 10000 + minor * 100 + patch. */
#define GLOWC_VERSION (GLOWC_VERSION_MAJOR * 10000 + GLOWC_VERSION_MINOR * 100 + \
                       GLOWC_VERSION_PATCH)

/* Marks the library's exported functions (libglowc.so exports nothing else). */
#if defined(GLOWC_BUILDING_LIBRARY) && defined(__GNUC__)
#define GLOWC_API __attribute__((visibility("default")))
#else
#define GLOWC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions, statuses, element types ---- */

/* The library's version as "MAJOR.MINOR.PATCH" (the library's, which may be newer than the
 * header's GLOWC_VERSION_* a program was compiled with). */
GLOWC_API const char *glowc_version(void);
/* The library's version as GLOWC_VERSION computes it. */
GLOWC_API int glowc_version_number(void);

typedef enum glowc_status {
    GLOWC_OK = 0,
    GLOWC_ERR_INVALID_ARGUMENT = 1, /* a NULL handle, a bad option value, an unknown name */
    GLOWC_ERR_IO = 2,               /* the model file cannot be read */
    GLOWC_ERR_BAD_MODEL = 3,        /* malformed or inconsistent model */
    GLOWC_ERR_UNSUPPORTED = 4,      /* an operator or type glowc cannot compile or run */
    GLOWC_ERR_BAD_INPUT = 5,        /* a run's input or output: missing, wrong type or shape,
                                     * too small a buffer */
    GLOWC_ERR_NO_MEMORY = 6,        /* memory or threads could not be had */
    GLOWC_ERR_RUNTIME = 7,          /* the model failed while running (e.g. an index out of
                                     * range in a Gather) */
    GLOWC_ERR_INTERNAL = 8,         /* a bug in glowc */
} glowc_status;

/* A short fixed text for a status ("invalid argument"); never NULL. */
GLOWC_API const char *glowc_status_name(glowc_status s);
/* The message of the last failed glowc call on the calling thread ("" when none failed):
 * valid until the next glowc call on this thread. */
GLOWC_API const char *glowc_last_error(void);

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum glowc_dtype {
    GLOWC_DTYPE_UNDEFINED = 0,
    GLOWC_F32 = 1,
    GLOWC_U8 = 2,
    GLOWC_I8 = 3,
    GLOWC_U16 = 4,
    GLOWC_I16 = 5,
    GLOWC_I32 = 6,
    GLOWC_I64 = 7,
    GLOWC_BOOL = 9,
    GLOWC_F16 = 10,
    GLOWC_F64 = 11,
    GLOWC_U32 = 12,
    GLOWC_U64 = 13,
    GLOWC_BF16 = 16,
} glowc_dtype;

/* "f32", "i64", ... as glowc prints them; "undefined" for an unknown value. */
GLOWC_API const char *glowc_dtype_name(glowc_dtype t);
/* Bytes per element; 0 for an unknown value. */
GLOWC_API size_t glowc_dtype_size(glowc_dtype t);

/* ---- options ---- */

typedef struct glowc_options glowc_options;

/* Defaults: the cpu backend, one worker thread per online core for each run, the graph
 * optimizer on, float (no quantization). NULL when out of memory. */
GLOWC_API glowc_options *glowc_options_create(void);
GLOWC_API void glowc_options_destroy(glowc_options *o);
/* "cpu" or "interpreter". */
GLOWC_API glowc_status glowc_options_set_backend(glowc_options *o, const char *backend);
/* Worker threads of each run (1..1024; 0: one per online core). The cpu backend splits each
 * operation across them; the interpreter uses one. */
GLOWC_API glowc_status glowc_options_set_threads(glowc_options *o, int threads);
/* Fixes a symbolic input dimension (an ONNX dim_param): "SYM=VAL", VAL a positive integer,
 * as the CLI's --define. Repeatable. */
GLOWC_API glowc_status glowc_options_add_define(glowc_options *o, const char *sym_eq_val);
/* Skips the graph optimizer (0 or 1; default 0). */
GLOWC_API glowc_status glowc_options_set_no_optimize(glowc_options *o, int no_optimize);
/* Keeps the cpu backend's machine code in directory dir (created with its parents when
 * missing; NULL: no cache, the default): a session created again from the same model with the
 * same options loads its code from there instead of compiling it. Entries are written
 * atomically, so sessions in several processes may share one directory. */
GLOWC_API glowc_status glowc_options_set_cache_dir(glowc_options *o, const char *dir);
/* Runs the model in 8-bit integers with the ranges of a profile `glowc profile` wrote
 * (docs/quantization.md); NULL turns quantization off. The file is read when a session is
 * created. */
GLOWC_API glowc_status glowc_options_set_quantize(glowc_options *o, const char *profile_path);
/* "asymmetric" (default), "symmetric", "symmetric-uint8" or "symmetric-power2". */
GLOWC_API glowc_status glowc_options_set_quant_schema(glowc_options *o, const char *schema);
/* "minmax" (default) or "kl". */
GLOWC_API glowc_status glowc_options_set_quant_calibration(glowc_options *o,
                                                           const char *calibration);
/* One weight scale per convolution output channel (0 or 1; default 0). */
GLOWC_API glowc_status glowc_options_set_quant_per_channel(glowc_options *o, int per_channel);
/* Node kinds that stay float, comma-separated, e.g. "Conv,Add"; NULL: none. */
GLOWC_API glowc_status glowc_options_set_quant_keep_float(glowc_options *o, const char *kinds);
/* "int8" (default) or "int16". */
GLOWC_API glowc_status glowc_options_set_quant_precision(glowc_options *o,
                                                         const char *precision);

/* ---- sessions ---- */

typedef struct glowc_session glowc_session;

/* Loads and compiles the ONNX model at `path` (options: NULL for the defaults; the session
 * keeps a copy). *out is NULL on failure. */
GLOWC_API glowc_status glowc_session_create(const glowc_options *o, const char *path,
                                            glowc_session **out);
/* The same from a serialized ONNX model in memory (the bytes are not kept). */
GLOWC_API glowc_status glowc_session_create_from_bytes(const glowc_options *o,
                                                       const void *bytes, size_t size,
                                                       glowc_session **out);
/* Waits for nothing: no run may be going on. NULL is ignored. */
GLOWC_API void glowc_session_destroy(glowc_session *s);

/* What a session's input or output is; the strings and the shape belong to the session. */
typedef struct glowc_tensor_info {
    const char *name;
    glowc_dtype dtype;
    int rank;                   /* 0 for a scalar */
    const int64_t *shape;       /* rank dims, all fixed (symbolic dims were resolved) */
    size_t size_bytes;          /* of the whole tensor */
} glowc_tensor_info;

/* The inputs a run must feed (graph inputs that are not initializers), in model order. */
GLOWC_API int glowc_session_input_count(const glowc_session *s);
GLOWC_API int glowc_session_output_count(const glowc_session *s);
/* Input or output i (0-based); GLOWC_ERR_INVALID_ARGUMENT when out of range. */
GLOWC_API glowc_status glowc_session_input_info(const glowc_session *s, int i,
                                                glowc_tensor_info *info);
GLOWC_API glowc_status glowc_session_output_info(const glowc_session *s, int i,
                                                 glowc_tensor_info *info);
/* The index of the input or output called `name`, or -1. */
GLOWC_API int glowc_session_input_index(const glowc_session *s, const char *name);
GLOWC_API int glowc_session_output_index(const glowc_session *s, const char *name);

/* A tensor the caller owns, given to a run.
 * As an input: name (NULL: the i-th value binds to input i), dtype, rank and shape must equal
 * the input's exactly; data holds size_bytes bytes, row-major, which must equal the input's
 * size. The library only reads it.
 * As an output: name (NULL: by position, as for inputs); data is where the output is written
 * and size_bytes its capacity, at least the output's size. dtype and rank/shape may be left
 * 0/NULL; when given they are checked. */
typedef struct glowc_value {
    const char *name;
    glowc_dtype dtype;
    int rank;
    const int64_t *shape;
    void *data;
    size_t size_bytes;
} glowc_value;

/* Runs the model once: every input given exactly once (any order when named), outputs
 * written into the caller's buffers (noutputs may be fewer than the model has when they are
 * named; by position, the first noutputs). Thread-safe; concurrent runs on one session are
 * allowed. On failure no output buffer is written. */
GLOWC_API glowc_status glowc_session_run(glowc_session *s, const glowc_value *inputs,
                                         int ninputs, glowc_value *outputs, int noutputs);

/* ---- library-owned output tensors ---- */

typedef struct glowc_tensor glowc_tensor;

/* Runs as glowc_session_run, and returns every output of the model (model order) as a new
 * tensor in outputs[0 .. glowc_session_output_count(s) - 1]; the caller frees each with
 * glowc_tensor_destroy. On failure every outputs[i] is NULL. */
GLOWC_API glowc_status glowc_session_run_tensors(glowc_session *s, const glowc_value *inputs,
                                                 int ninputs, glowc_tensor **outputs);
/* Reads a tensor file as `glowc run` does: an ONNX TensorProto (.pb) or a NumPy .npy file,
 * told apart by content. The tensor's name is the file's (empty for .npy). */
GLOWC_API glowc_status glowc_tensor_read_file(const char *path, glowc_tensor **out);
GLOWC_API void glowc_tensor_destroy(glowc_tensor *t);
/* The tensor as a run's input, bound by position (name NULL), borrowing its data. */
GLOWC_API glowc_value glowc_tensor_value(const glowc_tensor *t);
/* The output's name, element type, rank, dims (rank of them), and bytes (row-major). */
GLOWC_API const char *glowc_tensor_name(const glowc_tensor *t);
GLOWC_API glowc_dtype glowc_tensor_dtype(const glowc_tensor *t);
GLOWC_API int glowc_tensor_rank(const glowc_tensor *t);
GLOWC_API const int64_t *glowc_tensor_shape(const glowc_tensor *t);
GLOWC_API const void *glowc_tensor_data(const glowc_tensor *t);
GLOWC_API size_t glowc_tensor_size_bytes(const glowc_tensor *t);

#ifdef __cplusplus
}
#endif

#endif
