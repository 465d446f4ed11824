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
    GLOWC_BUSY = 9,                 /* the host's request queue is full: try again later */
    GLOWC_CANCELLED = 10,           /* the request was cancelled before it started */
    GLOWC_DEADLINE = 11,            /* the request was still queued at its deadline: not run */
} glowc_status;

/* A short fixed text for a status ("invalid argument"); never NULL. */
GLOWC_API const char *glowc_status_name(glowc_status s);
/* The message of the last failed glowc call on the calling thread ("" when none failed):
 * valid until the next glowc call on this thread. */
GLOWC_API const char *glowc_last_error(void);

/* Element types, numbered as ONNX's TensorProto.DataType.
 *
 * The low-bit types (GLOWC_F8E4M3FN .. GLOWC_I2) take ONE BYTE PER ELEMENT in a glowc_value's
 * or glowc_tensor's data (glowc_dtype_size gives 1): a float8 or e8m0 element is its 8-bit
 * pattern; a float4 e2m1 element is its 4-bit pattern in the low nibble (high nibble 0); a 4-
 * or 2-bit integer is its value in a signed (I4, I2: sign-extended, e.g. -3 is 0xfd) or
 * unsigned byte. Only files (.pb tensors, model constants) pack two or four of them a byte.
 *
 * GLOWC_DTYPE_STRING (ONNX's code 8, listed last) takes sizeof(const char *) bytes per element:
 * the data is an array of `const char *`, each a NUL-terminated string of UTF-8 or any bytes
 * (an embedded NUL byte ends the string: lengths are not carried). A NULL element reads as "".
 * - Input: the caller's pointers are read during the run only (the run copies the bytes it
 *   keeps), so the strings may be freed when the run call returns - also after
 *   glowc_host_run_async, which copies them before it returns.
 * - Output in a library-owned glowc_tensor (glowc_session_run_tensors, a host callback's
 *   tensors): the pointers are never NULL ("" for empty strings) and point into the tensor's
 *   own memory, valid until glowc_tensor_destroy. glowc_tensor_size_bytes counts the
 *   pointers only.
 * - Output into a caller's buffer (glowc_session_run, glowc_host_run): refused with
 *   GLOWC_ERR_BAD_INPUT before anything runs, since the strings' bytes live in the run's
 *   memory, which the next run reuses; leave such outputs out (bind the others by name), or
 *   use glowc_session_run_tensors. */
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
    GLOWC_F8E4M3FN = 17,        /* float8: 4 exponent bits, 3 mantissa, finite, NaN 0x7f/0xff */
    GLOWC_F8E4M3FNUZ = 18,      /* float8 as e4m3fn, one NaN (0x80), no -0 */
    GLOWC_F8E5M2 = 19,          /* float8: 5 exponent bits, 2 mantissa, with infinities */
    GLOWC_F8E5M2FNUZ = 20,      /* float8 as e5m2, finite, one NaN (0x80), no -0 */
    GLOWC_U4 = 21,              /* 0..15 */
    GLOWC_I4 = 22,              /* -8..7 */
    GLOWC_F4E2M1 = 23,          /* float4: 2 exponent bits, 1 mantissa, finite, no NaN */
    GLOWC_F8E8M0 = 24,          /* a power of two 2^(e - 127), 0xff NaN (a scale type) */
    GLOWC_U2 = 25,              /* 0..3 */
    GLOWC_I2 = 26,              /* -2..1 */
    GLOWC_DTYPE_STRING = 8,     /* ONNX's string: an element is a `const char *` (below) */
} glowc_dtype;

/* "f32", "i64", "f8e4m3fn", "i4", ... as glowc prints them; "undefined" for an unknown value. */
GLOWC_API const char *glowc_dtype_name(glowc_dtype t);
/* Bytes per element (sizeof(const char *) for GLOWC_DTYPE_STRING, whose name is "string");
 * 0 for an unknown value. */
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
/* Weights of 7 bits, [-63, 63] (0 or 1; default 0): AVX2 hosts without VNNI then multiply
 * them with vpmaddubsw, which full 8-bit weights would saturate; a little less accurate. */
GLOWC_API glowc_status glowc_options_set_quant_reduce_range(glowc_options *o, int reduce_range);
/* Node kinds that stay float, comma-separated, e.g. "Conv,Add"; NULL: none. */
GLOWC_API glowc_status glowc_options_set_quant_keep_float(glowc_options *o, const char *kinds);
/* Refuses, when a session is created, a model whose planned memory (weights, inputs and
 * outputs, activations) exceeds `bytes`, with a message naming the sizes, before any of it is
 * allocated (GLOWC_ERR_NO_MEMORY). 0, the default: the machine's physical memory; UINT64_MAX:
 * no limit. */
GLOWC_API glowc_status glowc_options_set_max_memory(glowc_options *o, uint64_t bytes);
/* For a host's network: on at most n devices (0, the default: every device with room). */
GLOWC_API glowc_status glowc_options_set_replicas(glowc_options *o, int n);
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
 * size (for strings: the `const char *` array, "Element types" above). The library only
 * reads it.
 * As an output: name (NULL: by position, as for inputs); data is where the output is written
 * and size_bytes its capacity, at least the output's size. dtype and rank/shape may be left
 * 0/NULL; when given they are checked. A string output cannot be written to a caller's
 * buffer (GLOWC_ERR_BAD_INPUT; see "Element types"). */
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

/* ---- the host: devices, named networks, a bounded request queue ----
 *
 * A server's level (Glow's HostManager): a host owns devices - each a backend ("cpu" or
 * "interpreter") with its threads per run and its memory capacity, and its own worker thread
 * that runs one request at a time - and named networks placed on them. A network goes whole
 * onto every device with room for it (replicas; options: glowc_options_set_replicas), least
 * loaded first; when no device holds it whole it is partitioned over the devices' free memory
 * and its requests are pipelined (one request's second partition runs while the next
 * request's first does). Adding a network that fits nowhere fails with a message naming the
 * sizes.
 *
 * Requests wait in one FIFO queue of fixed capacity until a device of their network is idle.
 * When the queue is full a run returns GLOWC_BUSY at once (nothing is queued, no callback).
 * A queued request can be cancelled (GLOWC_CANCELLED) and may carry a deadline: one still
 * queued at its deadline completes with GLOWC_DEADLINE without running.
 *
 *     glowc_host *h = NULL;
 *     glowc_host_create_from_spec("cpu:t1,cpu:t1", 64, &h);       // two 1-thread devices
 *     glowc_host_add_network(h, "lenet", NULL, "models/lenet.onnx");
 *     glowc_host_run(h, "lenet", &in, 1, &out, 1, 0);              // as glowc_session_run
 *     glowc_host_destroy(h);
 *
 * Threads: every host function may be called from any thread at once, except
 * glowc_host_destroy, which must be the last call on the host (it cancels what is queued and
 * waits for what runs). Callbacks run on the library's threads (a device's worker, or the
 * host's timer thread for deadlines, or the cancelling thread): keep them short, and do not
 * call glowc_host_destroy or the synchronous glowc_host_run from one. */

typedef struct glowc_host glowc_host;

typedef struct glowc_device_desc {
    const char *backend;        /* "cpu" or "interpreter" */
    int threads;                /* worker threads of each run (0: one per online core) */
    uint64_t memory_bytes;      /* capacity: weights + one run's memory per network; 0: no
                                 * limit */
} glowc_device_desc;

/* A host with devices[0..ndevices) (1..64) and a queue of queue_capacity (>= 1) requests. */
GLOWC_API glowc_status glowc_host_create(const glowc_device_desc *devices, int ndevices,
                                         int queue_capacity, glowc_host **out);
/* The same from a list "BACKEND[:CAPACITY][:tTHREADS],...", e.g. "cpu:256MiB:t1,cpu:t1,
 * interpreter" (capacity in bytes or with B, KiB, MiB, GiB, TiB, KB, MB, GB, TB). */
GLOWC_API glowc_status glowc_host_create_from_spec(const char *devices, int queue_capacity,
                                                   glowc_host **out);
/* Cancels the queued requests (their callbacks get GLOWC_CANCELLED), waits for the running
 * ones, and frees the host with its networks. NULL is ignored. */
GLOWC_API void glowc_host_destroy(glowc_host *h);
GLOWC_API int glowc_host_device_count(const glowc_host *h);
/* paused != 0: no request starts (running ones finish; queued ones wait, deadlines still
 * expire); 0: they start again, in order. For maintenance, and for tests. */
GLOWC_API glowc_status glowc_host_pause(glowc_host *h, int paused);

/* Loads and places the ONNX model at path as network `name` (unique on the host). Options
 * (NULL: defaults): defines, no_optimize, cache_dir, replicas and the quantization options
 * are used; the backend and threads are the devices'. A quantized network is quantized
 * whole with the profile, then placed whole or partitioned like any other. */
GLOWC_API glowc_status glowc_host_add_network(glowc_host *h, const char *name,
                                              const glowc_options *o, const char *path);
GLOWC_API glowc_status glowc_host_add_network_from_bytes(glowc_host *h, const char *name,
                                                         const glowc_options *o,
                                                         const void *bytes, size_t size);
/* Takes the network off the host at once (new runs on the name fail; the name may be added
 * again). Requests already accepted for it are not refused: they complete normally, and the
 * network's memory is released when the last has completed (removal is deferred, never
 * waits). GLOWC_ERR_INVALID_ARGUMENT for an unknown name. */
GLOWC_API glowc_status glowc_host_remove_network(glowc_host *h, const char *name);

/* How a network was placed. */
typedef struct glowc_network_info {
    int ninputs, noutputs;
    int partitions;             /* 1: whole (on one device or several as replicas) */
    uint64_t devices;           /* bit i set: on device i */
} glowc_network_info;

GLOWC_API glowc_status glowc_host_network_info(glowc_host *h, const char *network,
                                               glowc_network_info *info);
/* As glowc_session_input_info/output_info; the strings and shape stay valid while the
 * network is on the host. */
GLOWC_API glowc_status glowc_host_network_input_info(glowc_host *h, const char *network, int i,
                                                     glowc_tensor_info *info);
GLOWC_API glowc_status glowc_host_network_output_info(glowc_host *h, const char *network, int i,
                                                      glowc_tensor_info *info);

typedef uint64_t glowc_request_id;

/* Runs one request on network and waits for it: inputs and outputs as glowc_session_run
 * (checked before queueing). deadline_us > 0: give up (GLOWC_DEADLINE) if it has not started
 * within that many microseconds. GLOWC_BUSY at once when the queue is full. */
GLOWC_API glowc_status glowc_host_run(glowc_host *h, const char *network,
                                      const glowc_value *inputs, int ninputs,
                                      glowc_value *outputs, int noutputs, int64_t deadline_us);

/* Completion of an asynchronous request, called exactly once for each request that
 * glowc_host_run_async accepted. status GLOWC_OK: outputs[0..noutputs) are every output of
 * the network in model order; they are freed when the callback returns, unless it keeps one
 * by setting outputs[i] to NULL (and later frees it with glowc_tensor_destroy). Otherwise
 * noutputs is 0 and glowc_last_error() (on the calling thread, during the callback) says
 * why: the run failed, or GLOWC_CANCELLED, or GLOWC_DEADLINE. */
typedef void (*glowc_host_callback)(void *user, glowc_request_id id, glowc_status status,
                                    glowc_tensor **outputs, int noutputs);

/* Queues a request and returns at once; the inputs are copied (the caller's buffers are
 * free again on return). GLOWC_OK: accepted, *id (may be NULL) is the request's and
 * callback(user, ...) will be called once. Any other status (GLOWC_BUSY for a full queue, a
 * bad input, an unknown network): not accepted, and no callback. */
GLOWC_API glowc_status glowc_host_run_async(glowc_host *h, const char *network,
                                            const glowc_value *inputs, int ninputs,
                                            int64_t deadline_us, glowc_host_callback callback,
                                            void *user, glowc_request_id *id);
/* Cancels a request that is still queued: GLOWC_OK and its callback has been called (on this
 * thread, with GLOWC_CANCELLED) before this returns. GLOWC_ERR_INVALID_ARGUMENT when it is
 * running, finished or unknown. */
GLOWC_API glowc_status glowc_host_cancel(glowc_host *h, glowc_request_id id);

/* Counts since the host was created (per network: since it was added). Every accepted
 * request is in exactly one of queued, running, done, failed, cancelled, expired, so those
 * add up to submitted; rejected (GLOWC_BUSY) ones are counted apart. Latencies are of done
 * requests, from acceptance to completion: min, mean, max over all, median and 99th
 * percentile of the last 4096. */
typedef struct glowc_host_stats {
    uint64_t submitted, rejected;
    uint64_t queued, running;
    uint64_t done, failed, cancelled, expired;
    double latency_min_us, latency_mean_us, latency_p50_us, latency_p99_us, latency_max_us;
    uint64_t quarantined;       /* bit i set: device i is quarantined (a network's stats: of
                                 * the devices it is placed on) */
} glowc_host_stats;

/* The host's statistics (network NULL) or one network's. */
GLOWC_API glowc_status glowc_host_get_stats(glowc_host *h, const char *network,
                                            glowc_host_stats *out);

/* Failing devices: when a device fails (a device fault, not a request's own error such as
 * an index out of range), the request that met the fault fails with a message naming the
 * device, and the device is quarantined at once - no other request is started on it and no
 * network is placed on it, while the other devices keep serving: a network placed whole on
 * several devices goes on on the others; a request of a network with no device left (placed
 * only there, or with a partition there) fails at once (GLOWC_ERR_RUNTIME) naming the device
 * and its fault. glowc_host_stats.quarantined says which devices are out.
 * This puts device back in service (once its fault is cleared); GLOWC_ERR_INVALID_ARGUMENT
 * when it is not quarantined. */
GLOWC_API glowc_status glowc_host_restore_device(glowc_host *h, int device);

/* ---- what compiling reports, and what a session is made of ---- */

/* What creating a session, a profiler or a bundle prints to stderr while it compiles (flags,
 * OR-ed; 0, the default: nothing) - the CLI's --stats and --time-passes. */
#define GLOWC_REPORT_PASSES 1       /* per graph-optimizer pass: runs, nodes removed, rewrites,
                                     * time; and how many nodes quantization converted */
#define GLOWC_REPORT_PASS_TIMES 2   /* only the time of each optimizer pass */
#define GLOWC_REPORT_BACKEND 4      /* how many instructions the backend runs natively, which
                                     * fall back to its evaluator, and whether the machine code
                                     * came from the cache directory */
GLOWC_API glowc_status glowc_options_set_report(glowc_options *o, int flags);

/* As glowc_session_create, with the model specialized to these inputs (bound by position,
 * inputs[i] to the model's input i; ninputs may be fewer than the model has): their shapes
 * fix the inputs' symbolic dims, and an input whose values decide shapes (a Reshape's
 * shape, a Pad's pads, ...) is folded to the given values. Runs must then feed inputs of
 * the same types. */
GLOWC_API glowc_status glowc_session_create_for_inputs(const glowc_options *o, const char *path,
                                                       const glowc_value *inputs, int ninputs,
                                                       glowc_session **out);

/* What a session is made of and what making it cost. */
typedef struct glowc_session_info {
    const char *backend;        /* "cpu" or "interpreter" (the session's string) */
    int threads;                /* threads per run as asked (0: the backend's default) */
    uint64_t constant_bytes;    /* the weights: one copy, shared by every run */
    uint64_t mutable_bytes;     /* inputs and outputs: one region per execution context */
    uint64_t activation_bytes;  /* intermediate values: one region per execution context */
    double load_ms;             /* reading and importing the model */
    double compile_ms;          /* optimizing, lowering, planning and generating code */
    int fallbacks;              /* instructions the backend runs through its evaluator */
    int code_cached;            /* 1: the machine code came from the cache directory */
    /* The compiler's own memory once compiled (0 when unknown or none, the interpreter):
     * the machine code kept, and what code generation left resident in this process, as
     * anonymous memory (code, JIT state, compiler heap kept) and file pages (mostly the
     * compiler library's code). */
    uint64_t code_bytes;
    uint64_t codegen_anon_bytes;
    uint64_t codegen_file_bytes;
} glowc_session_info;

GLOWC_API glowc_status glowc_session_get_info(const glowc_session *s, glowc_session_info *info);

/* ---- profiling: the ranges quantization needs ----
 *
 * A profiler runs the float model on sample inputs and records, for every value the
 * quantizer sees, its range, NaN/infinity counts and a histogram: the JSON profile that
 * glowc_options_set_quantize reads (docs/quantization.md, "Profiling"). Every sample is run
 * twice, pass 1 for the ranges and pass 2 for the histograms, in the same order:
 *
 *     glowc_profiler_create(o, "model.onnx", &p);
 *     for (int pass = 1; pass <= 2; pass++) {
 *         glowc_profiler_begin_pass(p, pass);
 *         for (each sample) glowc_profiler_run(p, inputs, ninputs);
 *     }
 *     glowc_profiler_finish(p);
 *     glowc_profiler_write(p, "profile.json");
 *     glowc_profiler_destroy(p);
 *
 * The options' backend, threads, defines, optimizer switch and reports are used (the
 * profile is the same whatever the backend and threads); quantization options are not. One
 * thread at a time per profiler. */

typedef struct glowc_profiler glowc_profiler;

/* The histogram bins of each recorded value. */
#define GLOWC_PROFILE_BINS 2048

/* Nothing is compiled yet: the first sample's types fix the model's symbolic dims. */
GLOWC_API glowc_status glowc_profiler_create(const glowc_options *o, const char *path,
                                             glowc_profiler **out);
/* Compiles for inputs of these types (by position; every input of the model) now, so that
 * compile errors come apart from a sample's; glowc_profiler_run does it when not yet done. */
GLOWC_API glowc_status glowc_profiler_compile(glowc_profiler *p, const glowc_value *inputs,
                                              int ninputs);
/* pass 1, then 2. */
GLOWC_API glowc_status glowc_profiler_begin_pass(glowc_profiler *p, int pass);
/* Runs one sample (inputs as glowc_session_run's, every one given, all samples of the same
 * types) and records it in the current pass. */
GLOWC_API glowc_status glowc_profiler_run(glowc_profiler *p, const glowc_value *inputs,
                                          int ninputs);
/* How many values are recorded (0 before compiling). */
GLOWC_API int glowc_profiler_value_count(const glowc_profiler *p);
/* Ends profiling after pass 2, checking that both passes saw the same values. */
GLOWC_API glowc_status glowc_profiler_finish(glowc_profiler *p);
/* Writes the finished profile as JSON to path, atomically; the same samples in the same
 * order give the same bytes. */
GLOWC_API glowc_status glowc_profiler_write(glowc_profiler *p, const char *path);
GLOWC_API void glowc_profiler_destroy(glowc_profiler *p);

/* ---- bundles: a model compiled ahead of time into C-linkable files ----
 *
 * A bundle (DESIGN.md, "Bundle ABI"; `glowc compile --help`) is DIR/NAME.o with the entry
 * int NAME(uint8_t *constant_weights, uint8_t *mutable_weights, uint8_t *activations),
 * NAME.h (region sizes, alignment, each input's and output's offset, a table of names, types
 * and shapes) and NAME.weights.bin (and NAME.weights.c), for the cpu backend. It needs no
 * glowc at run time. */

typedef enum glowc_bundle_weights {
    GLOWC_WEIGHTS_FILE = 0,     /* NAME.weights.bin, which the caller loads */
    GLOWC_WEIGHTS_C_ARRAY = 1,  /* also NAME.weights.c defining NAME_weights[] */
    GLOWC_WEIGHTS_EMBEDDED = 2, /* the weights inside NAME.o (pass NULL as constant_weights) */
} glowc_bundle_weights;

typedef struct glowc_bundle glowc_bundle;

typedef struct glowc_bundle_info {
    char name[64];              /* the entry point and file stem */
    char triple[96], cpu[64];   /* what the code is for */
    uint64_t constant_bytes, mutable_bytes, activation_bytes, alignment;
    uint64_t object_bytes;      /* of NAME.o */
    int instructions;           /* compiled to kernel calls */
} glowc_bundle_info;

/* Loads and compiles the model at path for target `triple` (NULL: this machine; x86_64-*
 * and aarch64-*) and CPU `cpu` (NULL: this machine's for the host target, "generic" for
 * another; the host's vector kernels are used only when both are NULL). Options: defines,
 * optimizer switch, reports, quantization, max_memory; threads > 1 also makes an entry
 * NAME_thread for that many threads; the backend must be "cpu". Nothing is written yet. */
GLOWC_API glowc_status glowc_bundle_create(const glowc_options *o, const char *path,
                                           const char *triple, const char *cpu,
                                           glowc_bundle **out);
/* Writes the bundle into dir (created with its parents when missing) as `name` (a C
 * identifier of at most 63 characters; NULL: the model file's name, made one, "model" for
 * bytes). GLOWC_ERR_UNSUPPORTED lists the instructions without a kernel (a bundle has no
 * evaluator to fall back on); GLOWC_ERR_IO when a file cannot be written. info may be NULL. */
GLOWC_API glowc_status glowc_bundle_write(glowc_bundle *b, const char *dir, const char *name,
                                          glowc_bundle_weights weights,
                                          glowc_bundle_info *info);
GLOWC_API void glowc_bundle_destroy(glowc_bundle *b);
/* glowc_bundle_create, glowc_bundle_write and glowc_bundle_destroy in one call. */
GLOWC_API glowc_status glowc_compile_bundle(const glowc_options *o, const char *path,
                                            const char *triple, const char *cpu,
                                            const char *dir, const char *name,
                                            glowc_bundle_weights weights,
                                            glowc_bundle_info *info);
/* 1 when name can name a bundle (a C identifier of at most 63 characters), else 0. */
GLOWC_API int glowc_bundle_name_ok(const char *name);

#ifdef __cplusplus
}
#endif

#endif
