// run.h - What the files of `glowc run` share (cmd_run.c: arguments and the ways a model is
// compiled and run; run_inputs.c: binding and reading the input files against the model's
// declared inputs; run_outputs.c: printing or writing the outputs).
#ifndef GLOWC_RUN_H
#define GLOWC_RUN_H

#include "cli.h"
#include "runtime/partition.h"
#include "runtime/runtime.h"

typedef struct run_args {
    const char *path;
    const char **files;     /* positional input files */
    int nfiles;
    const char **named;     /* --input NAME=FILE */
    int nnamed;
    cli_model_opts model;   /* --backend, --threads, --define, ... */
    const char *outdir;
    bool compare_float;     /* the positional inputs are samples (cmd_compare.c) */
    const char *devices;    /* --devices SPEC: run partitioned */
    const char **assign;    /* --assign NODE=DEVICE */
    int nassign;
    bool split_nodes;       /* --split-nodes */
} run_args;

/* --- run_inputs.c --- */

/* The inputs as the program takes them: every input's tensors one after the other (a
 * sequence's elements, docs/onnx-import.md "Sequences and optionals"), borrowed from the
 * per-input tensors and sequences, and the count of each input. */
typedef struct flat_inputs {
    glow_seq_value *seqs;   /* per input; sequence and optional inputs only */
    int *counts;
    glow_tensor *t;
    int n;
} flat_inputs;

/* Assigns a file to every fed input (files[i], NULL-initialized). Returns -1 on success,
 * else the exit code after reporting every problem it found. */
int run_bind_files(const run_args *a, const glow_onnx_summary *s, const char **files);
/* Reads every input file and checks it against the declared input type; -1 or the exit
 * code. */
int run_read_inputs(const run_args *a, const glow_onnx_summary *s, const char **files,
                    glow_tensor *tensors, glow_seq_value *seqs);
void run_flatten_inputs(const glow_onnx_summary *s, const glow_tensor *tensors,
                        flat_inputs *f);

/* --- run_outputs.c --- */

/* A run's outputs, from a program, a partitioned executor or a session. */
typedef struct run_outputs {
    int n;
    const char **names;
    glow_tensor *t;         /* borrowing the program's or executor's memory */
    /* Graph outputs that are sequences or optionals span counts[i] of the n outputs (-1: an
     * absent optional, none); NULL: graph output i is output i. */
    const glow_onnx_summary *summary;
    const int *counts;
} run_outputs;

void run_outputs_of_program(const glow_program *p, run_outputs *o);
void run_outputs_of_executor(const glow_executor *e, run_outputs *o);
/* The end of a run of a program or an executor: its failure's message, or its outputs
 * (filled by the caller after a successful run) shown and freed. */
int run_finish(const run_args *a, glow_status s, const glow_diag *d, run_outputs *o);

#endif
