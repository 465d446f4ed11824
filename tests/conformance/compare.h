// compare.h - Runs one ONNX backend test directory through the compile pipeline and compares
// its outputs with node_test.c; the conformance driver calls it in a forked child.
#ifndef GLOW_TEST_COMPARE_H
#define GLOW_TEST_COMPARE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/bundle.h"
#include "conformance/node_test.h"
#include "onnx/onnx.h"
#include "runtime/runtime.h"

#define CONF_MAX_IO 64
#define CONF_REASON 480

/* Inputs and outputs glowc cannot take: maps and sparse tensors (sequences and optionals are
 * read as lists of tensors, nt_read_values). */
static bool non_tensor_io(const glow_onnx_summary *s, char *why, size_t wsize)
{
    for (int i = 0; i < s->ninputs + s->noutputs; i++) {
        const char *t = i < s->ninputs ? s->inputs[i].type_str
                                       : s->outputs[i - s->ninputs].type_str;
        size_t k = strcspn(t, "([");
        if (t[k] == '(' && glow_io_kind_of(t) == GLOW_IO_TENSOR) {
            snprintf(why, wsize, "%.*s %s", (int)k, t, i < s->ninputs ? "input" : "output");
            return true;
        }
    }
    return false;
}

/* Compares the program's outputs (flat: a sequence output's elements one after the other,
 * counts from the importer) with the expected files' tensors (their own counts). */
static bool conf_compare_outputs(const glow_tensor *got, const int *got_counts,
                                 const glow_tensor *want, const int *want_counts, int nfiles,
                                 double rtol, double atol, char *why, size_t wsize)
{
    int k = 0;
    for (int f = 0; f < nfiles; f++) {
        if (got_counts[f] != want_counts[f]) {
            snprintf(why, wsize, "mismatch: output %d holds %d tensors, expected %d (-1: an "
                     "absent optional)", f, got_counts[f], want_counts[f]);
            return false;
        }
        for (int j = 0; j < got_counts[f]; j++, k++) {
            char what[48];
            if (got_counts[f] == 1 && want_counts[f] == 1)
                snprintf(what, sizeof what, "output %d", f);
            else
                snprintf(what, sizeof what, "output %d[%d]", f, j);
            if (!nt_compare(what, &got[k], &want[k], rtol, atol, why, wsize))
                return false;
        }
    }
    return true;
}

/* --- backend "bundle": the cpu backend's AOT bundle, linked to tests/bundle/node_driver.c --- */

/* The driver's object file, compiled once by the runner before it forks (conf_bundle_init). */
static char conf_driver_obj[4096];

/* Compiles tests/bundle/node_driver.c (under GLOWC_SOURCE) into tmpdir with the system C
 * compiler; false with a message when it cannot. */
static bool conf_bundle_init(const char *tmpdir)
{
    const char *src = getenv("GLOWC_SOURCE");
    char cmd[9000];
    snprintf(conf_driver_obj, sizeof conf_driver_obj, "%s/node_driver.o", tmpdir);
    snprintf(cmd, sizeof cmd, "cc -O1 -c '%s/tests/bundle/node_driver.c' -o '%s'",
             src && *src ? src : ".", conf_driver_obj);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot compile the bundle driver: %s\n", cmd);
        return false;
    }
    return true;
}

static void conf_rmdir(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

static bool conf_write(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

/* Emits p (compiled up to GLOW_STAGE_IR_OPTIMIZED for the cpu backend) as the bundle "model",
 * links it with the driver, runs it on ins and reads its outputs into outs (allocated). */
static bool conf_bundle_run(glow_program *p, const glow_tensor *ins, int nin, glow_tensor *outs,
                            char *why, size_t wsize)
{
    char dir[] = "/tmp/glowc-bundle-XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(why, wsize, "bundle: cannot make a temporary directory");
        return false;
    }
    int nio = p->ninputs + p->noutputs;
    glow_bundle_io *ios = calloc((size_t)nio + 1, sizeof *ios);
    for (int i = 0; i < nio; i++) {
        bool in = i < p->ninputs;
        const glow_node *ph = in ? p->inputs[i] : p->outputs[i - p->ninputs];
        ios[i] = (glow_bundle_io){ ph->name, &ph->outs[0],
                                   in ? p->input_vals[i] : p->output_vals[i - p->ninputs] };
    }
    glow_bundle_ios io = { ios, ios + p->ninputs, p->ninputs, p->noutputs };
    glow_bundle_options bo = { .dir = dir, .name = "model", .weights = GLOW_WEIGHTS_FILE };
    glow_bundle_info info;
    glow_diag d = { 0 };
    bool ok = false;
    size_t cap = 16384, len = 0;
    char *cmd = malloc(cap), path[4200];
    if (glow_bundle_emit(p->ir, &io, &bo, &info, &d) != GLOW_OK) {
        /* "bundle: 3 instructions (2 kinds) have no kernel, ... on: Acos on f32[3] (e.g.
         * 'a'), ..." -> "no kernel: Acos on f32[3] (e.g. 'a'), ...": the kinds first. */
        const char *kinds = strstr(d.msg, "fall back on: ");
        if (kinds)
            snprintf(why, wsize, "no kernel: %s", kinds + strlen("fall back on: "));
        else
            nt_shorten(why, wsize, "", d.msg);
        goto done;
    }
    len = (size_t)snprintf(cmd, cap, "cc -o '%s/run' '%s' '%s/model.o' -lm && '%s/run' "
                           "'%s/model.weights.bin' %llu %llu %llu %llu", dir, conf_driver_obj,
                           dir, dir, dir, (unsigned long long)info.constant_bytes,
                           (unsigned long long)info.mutable_bytes,
                           (unsigned long long)info.activation_bytes,
                           (unsigned long long)info.alignment);
    for (int i = 0; i < p->ninputs && i < nin; i++) {
        if (!p->input_vals[i])
            continue;
        snprintf(path, sizeof path, "%s/in%d", dir, i);
        if (!conf_write(path, ins[i].data, glow_type_bytes(&ins[i].type))) {
            snprintf(why, wsize, "bundle: cannot write input %d", i);
            goto done;
        }
        len += (size_t)snprintf(cmd + len, cap - len, " in %llu '%s'",
                                (unsigned long long)p->input_vals[i]->addr, path);
    }
    for (int k = 0; k < p->noutputs; k++) {
        if (!p->output_vals[k]) {
            snprintf(why, wsize, "bundle: output %d has no place in the mutable region", k);
            goto done;
        }
        len += (size_t)snprintf(cmd + len, cap - len, " out %llu %llu '%s/out%d'",
                                (unsigned long long)p->output_vals[k]->addr,
                                (unsigned long long)glow_type_bytes(&p->outputs[k]->outs[0]),
                                dir, k);
    }
    len += (size_t)snprintf(cmd + len, cap - len, " 2>'%s/err'", dir);
    if (len >= cap) {
        snprintf(why, wsize, "bundle: too many inputs and outputs");
        goto done;
    }
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(path, sizeof path, "%s/err", dir);
        FILE *f = fopen(path, "r");
        char line[256] = "";
        if (f && !fgets(line, sizeof line, f))
            line[0] = 0;
        if (f)
            fclose(f);
        line[strcspn(line, "\n")] = 0;
        snprintf(why, wsize, "bundle: the driver failed (status %d): %s", rc, line);
        goto done;
    }
    ok = true;
    for (int k = 0; k < p->noutputs && ok; k++) {
        snprintf(path, sizeof path, "%s/out%d", dir, k);
        glow_diag od = { 0 };
        ok = glow_tensor_alloc(&outs[k], &p->outputs[k]->outs[0], &od) == GLOW_OK;
        FILE *f = ok ? fopen(path, "rb") : NULL;
        size_t n = glow_type_bytes(&outs[k].type);
        ok = f && fread(outs[k].data, 1, n, f) == n;
        if (f)
            fclose(f);
        if (!ok)
            snprintf(why, wsize, "bundle: cannot read output %d", k);
    }
done:
    free(cmd);
    free(ios);
    conf_rmdir(dir);
    return ok;
}

/* The instructions of a compiled program that ran through the evaluator fallback (-1: none
 * compiled), and their distinct kinds ("Gather f32,Slice i64"). */
typedef struct conf_fallbacks {
    int count;
    char kinds[160];
} conf_fallbacks;

static void conf_count_fallbacks(const glow_program *p, conf_fallbacks *fb)
{
    const ir_instr *const *list;
    fb->count = glow_program_fallbacks(p, &list);
    size_t len = 0;
    for (int i = 0; i < fb->count; i++) {
        const ir_value *v = list[i]->ops[list[i]->nops > list[i]->nout ? list[i]->nout : 0].v;
        char kind[64];
        snprintf(kind, sizeof kind, "%s %s", ir_instr_kind_name(list[i]->kind),
                 glow_dtype_name(v->type.dtype));
        if (strstr(fb->kinds, kind) || len + strlen(kind) + 2 >= sizeof fb->kinds)
            continue;
        len += (size_t)snprintf(fb->kinds + len, sizeof fb->kinds - len, "%s%s",
                                len ? "," : "", kind);
    }
}

/* Loads, compiles and runs the test in `dir` on `backend` ("bundle": the cpu backend's AOT
 * bundle run by the driver); true when every output matches. Otherwise `why` gets a one-line
 * reason starting with its category. *fb says what fell back to the evaluator. */
static bool conformance_run(const char *dir, const char *backend, char *why, size_t wsize,
                            conf_fallbacks *fb)
{
    fb->count = -1;
    fb->kinds[0] = 0;
    glow_tensor ins[CONF_MAX_IO] = { 0 }, outs[CONF_MAX_IO] = { 0 };
    char model[4096];
    if ((size_t)snprintf(model, sizeof model, "%s/model.onnx", dir) >= sizeof model) {
        snprintf(why, wsize, "load: the path of %s is too long", dir);
        return false;
    }
    /* The declared types say which files are sequences or optionals. */
    glow_arena sa = { 0 };
    glow_onnx_summary sum;
    glow_diag sd = { 0 };
    if (glow_onnx_summarize(model, &sa, &sum, &sd) != GLOW_OK) {
        nt_shorten(why, wsize, "load: ", sd.msg);
        glow_arena_release(&sa);
        return false;
    }
    int in_counts[CONF_MAX_IO], out_counts[CONF_MAX_IO], got_counts[CONF_MAX_IO];
    int nin_files = 0, nout_files = 0, nin = -1, nout = -1;
    if (sum.ninputs > CONF_MAX_IO || sum.noutputs > CONF_MAX_IO)
        snprintf(why, wsize, "load: more than %d inputs or outputs", CONF_MAX_IO);
    else if (!non_tensor_io(&sum, why, wsize) &&
             (nin = nt_read_values(dir, "input", sum.inputs, sum.ninputs, ins, CONF_MAX_IO,
                                   in_counts, &nin_files, why, wsize)) >= 0)
        nout = nt_read_values(dir, "output", sum.outputs, sum.noutputs, outs, CONF_MAX_IO,
                              out_counts, &nout_files, why, wsize);
    glow_arena_release(&sa);
    if (nout < 0) {
        for (int k = 0; k < nin; k++)
            glow_tensor_free(&ins[k]);
        return false;
    }
    const glow_type *types[CONF_MAX_IO];
    const glow_tensor *values[CONF_MAX_IO];
    for (int k = 0; k < nin; k++) {
        types[k] = &ins[k].type;
        values[k] = &ins[k];
    }
    for (int k = 0; k < nout_files; k++)
        got_counts[k] = 1;
    glow_onnx_options opt = { .input_types = types, .ninput_types = nin,
                              .input_values = values, .ninput_values = nin,
                              .input_counts = in_counts, .ninput_counts = nin_files,
                              .output_counts = got_counts, .noutput_counts = nout_files };
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    glow_program *p = NULL;
    bool pass = false;
    bool bundle = !strcmp(backend, "bundle");
    glow_tensor got[CONF_MAX_IO] = { 0 };
    glow_compile_options copt = { .backend = bundle ? "cpu" : backend,
                                  .stop_after = bundle ? GLOW_STAGE_IR_OPTIMIZED
                                                       : GLOW_STAGE_COMPILED,
                                  .inline_control_flow = bundle };
    /* GLOWC_CONF_NO_OPTIMIZE=1 runs without the graph optimizer: the pass list must match. */
    const char *noopt = getenv("GLOWC_CONF_NO_OPTIMIZE");
    copt.no_optimize = noopt && *noopt && strcmp(noopt, "0") != 0;
    if (glow_onnx_load(m, model, &opt, &d) != GLOW_OK) {
        glow_module_destroy(m);
        nt_shorten(why, wsize, d.status == GLOW_ERR_UNSUPPORTED ? "unsupported: " : "load: ",
                   d.msg);
    } else if (glow_program_create(m, &copt, &p, &d) != GLOW_OK) {
        nt_shorten(why, wsize, d.status == GLOW_ERR_UNSUPPORTED ? "unsupported: " : "compile: ",
                   d.msg);
    } else if (p->noutputs != nout) {
        snprintf(why, wsize, "mismatch: %d outputs, expected %d", p->noutputs, nout);
    } else if (bundle && !conf_bundle_run(p, ins, nin, got, why, wsize)) {
        /* why says it */
    } else if (!bundle && glow_program_run(p, ins, nin, &d) != GLOW_OK) {
        nt_shorten(why, wsize, "run: ", d.msg);
    } else {
        double rtol, atol;
        nt_read_tolerances(dir, &rtol, &atol);
        if (!bundle)
            for (int k = 0; k < nout; k++)
                got[k] = glow_program_output(p, k);   /* borrowed: forgotten below */
        pass = conf_compare_outputs(got, got_counts, outs, out_counts, nout_files, rtol, atol,
                                    why, wsize);
        if (!bundle)
            memset(got, 0, sizeof got);
    }
    if (p && !bundle)
        conf_count_fallbacks(p, fb);
    glow_program_destroy(p);
    for (int k = 0; k < CONF_MAX_IO; k++)
        glow_tensor_free(&got[k]);
    for (int k = 0; k < nin; k++)
        glow_tensor_free(&ins[k]);
    for (int k = 0; k < nout; k++)
        glow_tensor_free(&outs[k]);
    return pass;
}

#endif
