// bundle.h - Ahead-of-time bundles (`glowc compile --emit-bundle`): a compiled program as an
// object file, a C header and its constant weights, for any C program to link (DESIGN.md,
// "Bundle ABI").
#ifndef GLOW_BUNDLE_H
#define GLOW_BUNDLE_H

#include "ir/ir.h"

/* Where the constant region's bytes go. NAME.weights.bin is written in every case. */
typedef enum {
    GLOW_WEIGHTS_FILE,      /* only NAME.weights.bin: the caller loads it */
    GLOW_WEIGHTS_C_ARRAY,   /* also NAME.weights.c defining NAME_weights[] */
    GLOW_WEIGHTS_EMBEDDED,  /* NAME_weights[] inside NAME.o; the entry takes NULL for them */
} glow_bundle_weights;

typedef struct glow_bundle_options {
    const char *dir;          /* existing or creatable directory */
    const char *name;         /* a C identifier: the entry point and the files' stem */
    const char *triple;       /* NULL: the host; x86_64-* and aarch64-* are supported */
    const char *cpu;          /* NULL: the host CPU (host triple) or "generic" */
    glow_bundle_weights weights;
    int threads;              /* > 1: also NAME_thread for that many threads */
    const char *model;        /* for the header's comment (may be NULL) */
} glow_bundle_options;

typedef struct glow_bundle_info {
    char triple[96], cpu[64];
    uint64_t constant_bytes, mutable_bytes, activation_bytes, alignment;
    uint64_t object_bytes;
    int ninstr;               /* instructions compiled to kernel calls */
} glow_bundle_info;

/* One input or output of a bundle, in model order: its name and type, and the weight that
 * holds it in the mutable region (NULL when the program does not use it: no offset). */
typedef struct glow_bundle_io {
    const char *name;
    const glow_type *type;
    const ir_value *v;
} glow_bundle_io;

typedef struct glow_bundle_ios {
    const glow_bundle_io *inputs, *outputs;
    int ninputs, noutputs;
} glow_bundle_ios;

/* Writes DIR/NAME.o, NAME.h, NAME.weights.bin (and NAME.weights.c) for f, planned (compiled
 * up to GLOW_STAGE_IR_OPTIMIZED for the "cpu" backend), with the inputs and outputs io.
 * Fails with GLOW_ERR_UNSUPPORTED listing every instruction kind no kernel covers (a bundle has
 * no evaluator to fall back on). */
glow_status glow_bundle_emit(const ir_function *f, const glow_bundle_ios *io,
                             const glow_bundle_options *o, glow_bundle_info *info,
                             glow_diag *d);

/* True when s is a C identifier a bundle can be named (at most 63 characters). */
bool glow_bundle_name_ok(const char *s);

/* --- bundle_header.c --- */

/* NAME.h: region sizes, alignment, input/output offsets, the entry points. */
glow_status glow_bundle_write_header(const ir_function *f, const glow_bundle_ios *io,
                                     const glow_bundle_options *o, const char *triple,
                                     const char *cpu, const char *path, glow_diag *d);
/* NAME.weights.c: `const uint8_t NAME_weights[]` holding data. */
glow_status glow_bundle_write_c_array(const char *name, const uint8_t *data, uint64_t size,
                                      uint64_t align, const char *path, glow_diag *d);

#endif
