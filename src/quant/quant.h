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

#endif
