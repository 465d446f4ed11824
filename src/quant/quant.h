// quant.h - Profile-guided quantization (docs/quantization.md): the profile of a float graph
// (min, max and a histogram per node output, recorded on sample inputs), and the conversion of
// the graph to quantized nodes from it. The compile pipeline calls both at one point, after
// lowering with glow_quant_keeps_node (glow_compile_options.quant_hook), so the profile's keys
// name the nodes the quantizer sees.
#ifndef GLOW_QUANT_H
#define GLOW_QUANT_H

#include <stdio.h>

#include "graph/graph.h"

/* The nodes lowering keeps whole when the graph will be profiled or quantized: those the
 * quantizer converts as they are (FullyConnected; Clip, a clamp in the integer domain). */
bool glow_quant_keeps_node(const glow_node *n);

/* --- the quantizer (quantize.c, schema.c, weights.c) --- */

/* How a real range [min, max] becomes a scale and an offset (schema.c). */
typedef enum {
    GLOW_QSCHEMA_ASYMMETRIC,       /* u8q, offset where real 0 falls */
    GLOW_QSCHEMA_SYMMETRIC,        /* i8q, offset 0 */
    GLOW_QSCHEMA_SYMMETRIC_UINT8,  /* u8q with offset 0 for ranges >= 0, else symmetric i8q */
    GLOW_QSCHEMA_SYMMETRIC_POWER2, /* symmetric with a power-of-2 scale */
} glow_quant_schema;

/* How the range is chosen from the profile: its min and max, or the clipping threshold that
 * loses the least information (KL divergence over the histogram, TensorRT's entropy
 * calibration). */
typedef enum { GLOW_QCALIB_MINMAX, GLOW_QCALIB_KL } glow_quant_calibration;

typedef struct glow_quant_options {
    const char *profile;            /* the profile file (`glowc profile`'s JSON) */
    glow_quant_schema schema;
    glow_quant_calibration calibration;
    bool per_channel;               /* convolution weights get one scale per output channel */
    bool reduce_range;              /* weights of 7 bits, [-63, 63]: AVX2 hosts without VNNI
                                     * run them with vpmaddubsw, which 8 bits would saturate */
    const char *keep_float;         /* comma-separated node kinds that stay float (NULL: none) */
    glow_dtype precision;           /* GLOW_I8Q (0 means the same) */
    FILE *stats_out;                /* non-NULL: a line on how many nodes were quantized */
} glow_quant_options;

/* glow_compile_options.quant_hook for --quantize: loads ctx's profile (a glow_quant_options)
 * and quantizes f with it. */
glow_status glow_quant_hook(glow_function *f, void *ctx, glow_diag *d);

/* The recorded range of one value: min, max and `nbins` histogram counts over [min, max]. */
typedef struct glow_quant_range {
    double min, max;
    int nbins;
    const uint64_t *hist;           /* may be NULL (minmax only) */
} glow_quant_range;

/* The range of graph value v, false when the profile has none. */
typedef bool (*glow_quant_lookup)(void *ctx, glow_value v, glow_quant_range *out);

/* Converts every node of f that has a quantized form, whose float operands and result have
 * ranges (constants need none), and whose kind is not kept float: Quantize where float values
 * enter, quantized weights and biases, RescaleQuantized where an operand's scale must change,
 * Dequantize where float consumers remain. A Relu or Clip that is the only user of a
 * Conv/FullyConnected/MatMul is folded into its requantization. *nquantized (may be NULL)
 * gets the number of nodes converted. */
glow_status glow_quantize(glow_function *f, const glow_quant_options *o, glow_quant_lookup look,
                          void *look_ctx, int *nquantized, glow_diag *d);

/* The quantized type (kind, scale, offset) of a value with real range [lo, hi] and the shape
 * of `shape` (schema.c). */
glow_type glow_quant_type(double lo, double hi, const glow_quant_options *o,
                          const glow_type *shape);
/* The range to quantize: [min, max], or narrowed by KL calibration when asked and a
 * histogram exists. */
void glow_quant_calibrate(const glow_quant_range *r, const glow_quant_options *o, double *lo,
                          double *hi);

/* Names of the options' values, for the CLI: false when unknown. */
bool glow_quant_schema_from_name(const char *name, glow_quant_schema *out);
bool glow_quant_calibration_from_name(const char *name, glow_quant_calibration *out);
/* Whether every comma-separated word of `list` is a node kind name (case-insensitive);
 * *bad gets the first one that is not. */
bool glow_quant_kind_list_ok(const char *list, char *bad, size_t badlen);
/* ---------------------------------------------------------------------------------------
 * Profile (profile.c: keys, instrumentation, accumulation, writing; profile_json.c: reading).
 * --------------------------------------------------------------------------------------- */

struct glow_program;

/* Histogram bins of a profile written by glowc (a reader accepts any count >= 1). */
#define GLOW_PROFILE_BINS 2048
/* The file's "format" and "version". */
#define GLOW_PROFILE_FORMAT "glowc-profile"
#define GLOW_PROFILE_VERSION 1

/* The key of one value of the function at the quantization point. A value is keyed when its
 * element kind is f32, f16 or bf16 and it is a result of a function node (not Save) or a
 * graph input placeholder. Keys are the placeholder's name for inputs; for node results
 * the node's name (its kind name when the name is empty), with "#2", "#3", ... for the 2nd,
 * 3rd keyed node of that base name in function order, and ":r" for result r > 0 ("conv1",
 * "conv1#2", "split:1"). Inputs are named first (model order), then nodes; a candidate that
 * is already taken (a node literally named "conv1#2") takes the next number, so every key
 * is unique and the same graph always gets the same keys. */
typedef struct glow_profile_key {
    glow_value v;
    const char *key;
} glow_profile_key;

typedef struct glow_profile_keys {
    int n;
    glow_profile_key *items;   /* inputs in model order, then node results in function order */
    glow_profile_key *sorted;  /* items sorted by (node id, result), for lookup */
    glow_arena arena;          /* owns the strings and arrays */
} glow_profile_keys;

/* Computes the keys of f's values (ks is overwritten; release with glow_profile_keys_free). */
glow_status glow_profile_keys_make(const glow_function *f, glow_profile_keys *ks,
                                   glow_diag *d);
/* The key of v, or NULL when v is not keyed (not float, a Save, created after the keys). */
const char *glow_profile_key_of(const glow_profile_keys *ks, glow_value v);
void glow_profile_keys_free(glow_profile_keys *ks);

/* A profile: per key the exact f32 range of the finite elements seen over all samples, the
 * NaN and +-infinity counts (outside the range and the histogram), and a histogram of the
 * finite elements over [min, max] in `bins` equal bins (bin = floor((x - min) / (max - min)
 * * bins), the maximum in the last bin; all in bin 0 when min == max). A value with no
 * finite element has min = max = 0 and an empty histogram. */
typedef struct glow_profile_entry {
    const char *key;
    const char *type;          /* e.g. "f32[1, 8, 26, 26]" */
    float min, max;
    uint64_t nan, inf;
    uint64_t *histogram;       /* `bins` counts */
} glow_profile_entry;

typedef struct glow_profile {
    const char *path;          /* the file it was read from ("" when made in memory) */
    const char *model;         /* the model file's base name */
    int64_t samples;
    int bins;
    int n;
    glow_profile_entry *entries; /* the file's order (key order of glow_profile_keys) */
    glow_strmap index;         /* key -> entry */
    glow_arena arena;          /* owns everything above */
} glow_profile;

/* The entry of `key`, or NULL. */
const glow_profile_entry *glow_profile_find(const glow_profile *pf, const char *key);
/* The lookup the quantizer uses: the entry of value v (its key from ks), checked. Fails naming
 * the profile file and the key when v has no key, the profile lacks it (made for another
 * model, or with other --define / --no-optimize), or recorded another type. */
glow_status glow_profile_lookup(const glow_profile *pf, const glow_profile_keys *ks,
                                glow_value v, const glow_profile_entry **out, glow_diag *d);
void glow_profile_free(glow_profile *pf);

/* Records a profile while a program runs samples: create it, pass glow_profiler_hook with the
 * profiler as quant_hook / quant_ctx when compiling (it keys the graph and saves every keyed
 * node result into an extra output placeholder), bind it to the compiled program, then for
 * pass 1 (min/max, NaN/inf counts) and pass 2 (histograms) run every sample and observe it.
 * Observing is serial and in sample order, so the profile does not depend on threads. */
typedef struct glow_profiler glow_profiler;

glow_profiler *glow_profiler_create(const char *model_path, int bins);
glow_status glow_profiler_hook(glow_function *f, void *profiler, glow_diag *d);
/* Finds the compiled program's memory of every instrumented value. */
glow_status glow_profiler_bind(glow_profiler *pr, const struct glow_program *p, glow_diag *d);
/* Starts pass 1 or 2 (pass 2 fixes each key's range; call in order). */
void glow_profiler_begin_pass(glow_profiler *pr, int pass);
/* Accumulates one sample after glow_program_run(p, inputs, ...). */
void glow_profiler_observe(glow_profiler *pr, const glow_tensor *inputs);
int glow_profiler_nkeys(const glow_profiler *pr);
/* Checks that pass 2 saw what pass 1 saw (the same finite, NaN and infinite counts: the
 * program is deterministic) and returns the profile, which the profiler keeps owning. */
glow_status glow_profiler_finish(glow_profiler *pr, const glow_profile **out, glow_diag *d);
void glow_profiler_destroy(glow_profiler *pr);

/* Writes the profile as JSON (format "glowc-profile", version 1), atomically: the same
 * profile always gives the same bytes. */
glow_status glow_profile_write(const glow_profile *pf, const char *path, glow_diag *d);
/* The same text in a malloc'd, NUL-terminated buffer. */
char *glow_profile_to_json(const glow_profile *pf, size_t *len);

/* --- profile_json.c --- */

/* Reads a profile file; every error names the file (and the key at fault). */
glow_status glow_profile_load(const char *path, glow_profile **out, glow_diag *d);
glow_status glow_profile_parse(const char *path, const char *text, size_t len,
                               glow_profile **out, glow_diag *d);

#endif
