// fuzz_run.c - Runs one model folder through glowc's backends and compares them (fuzz.h).
// Every run is a child process (`glowc run`, `glowc compile --emit-bundle`, the bundle's
// driver) with a time limit, so a crash or a hang is a verdict rather than the end of the
// campaign.
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>

#include "fuzz/fuzz.h"
#include "onnx/onnx.h"
#include "testlib/files.h"
#include "testlib/spawn.h"

#define MAX_ARGS 48

const char *const fuzz_backend_names[FB_COUNT] = { "interpreter", "cpu", "cpu/2 threads",
                                                   "bundle" };
const char *const fuzz_verdict_names[] = { "pass", "refused", "mismatch", "crash", "error",
                                            "rounding" };

typedef struct run_result {
    int code;          /* exit status, 128 + signal, or -1 */
    bool timed_out;
    char msg[400];     /* the first line of its stderr when it failed */
    glow_tensor outs[GEN_MAX_OUTS];
    int nouts;
} run_result;

double fuzz_tolerance_scale = 1.0;

double fuzz_tolerance(int depth)
{
    return 2e-5 * (4 + depth) * fuzz_tolerance_scale;
}

bool fuzz_driver_init(fuzz_config *c, const char *source, const char *dir)
{
    static char obj[4200];
    char src[4200], out[4300], err[4300];
    snprintf(obj, sizeof obj, "%s/node_driver.o", dir);
    snprintf(src, sizeof src, "%s/tests/bundle/node_driver.c", source);
    snprintf(out, sizeof out, "%s/cc.out", dir);
    snprintf(err, sizeof err, "%s/cc.err", dir);
    const char *argv[] = { "/usr/bin/cc", "-O1", "-c", src, "-o", obj, NULL };
    if (spawn_wait(argv, out, err, 120, NULL) != 0) {
        fprintf(stderr, "cannot compile the bundle driver %s\n", src);
        return false;
    }
    c->driver_obj = obj;
    return true;
}

/* The first line of a file (for messages). */
static void first_line(const char *path, char *buf, size_t n)
{
    char *text = slurp(path, NULL);
    snprintf(buf, n, "%.*s", (int)strcspn(text, "\n"), text);
    free(text);
}

/* Starts argv with output in dir/<tag>.out and .err. */
static pid_t start_child(const char *dir, const char *tag, const char *const *argv)
{
    char out[4200], err[4200];
    snprintf(out, sizeof out, "%.4000s/%s.out", dir, tag);
    snprintf(err, sizeof err, "%.4000s/%s.err", dir, tag);
    return spawn_start(argv, out, err);
}

/* Waits for a child start_child started; fills code, timed_out, msg. */
static void finish_child(const fuzz_config *c, const char *dir, const char *tag, pid_t pid,
                         run_result *r)
{
    char err[4200];
    snprintf(err, sizeof err, "%.4000s/%s.err", dir, tag);
    r->code = spawn_finish(pid, c->timeout_s, &r->timed_out);
    if (r->timed_out)
        snprintf(r->msg, sizeof r->msg, "%s: timed out after %d s", tag, c->timeout_s);
    else if (r->code != 0)
        first_line(err, r->msg, sizeof r->msg);
}

static void run_child(const fuzz_config *c, const char *dir, const char *tag,
                      const char *const *argv, run_result *r)
{
    finish_child(c, dir, tag, start_child(dir, tag, argv), r);
}

static void read_outputs(const char *outdir, run_result *r)
{
    for (r->nouts = 0; r->nouts < GEN_MAX_OUTS; r->nouts++) {
        char path[4300];
        glow_diag d = { 0 };
        snprintf(path, sizeof path, "%s/output_%d.pb", outdir, r->nouts);
        if (!exists(path) || glow_tensor_read_file(path, &r->outs[r->nouts], NULL, &d) != GLOW_OK)
            break;
    }
}

/* The glowc runs' tags, by backend, then the float64 reference and the noisy ones. */
static const char *const glowc_tags[] = { "interp", "cpu1", "cpu2", "ref", "noise1", "noise2",
                                          "noise3", "noise4" };
#define REF_RUN FB_BUNDLE /* the reference's slot in glowc_tags, the noisy ones after it */
_Static_assert(REF_RUN + FUZZ_NOISY_RUNS + 1 == sizeof glowc_tags / sizeof *glowc_tags,
               "a tag per reference run");

/* Starts `glowc run` of the model in dir on backend b, its outputs into dir/out_<tag>; with
 * `share`, the cpu runs keep their code in the compiled-code cache dir/jit, and the 2-thread
 * run compiles in one part, so that it finds the 1-thread run's code there. b == REF_RUN is
 * the interpreter with GLOWC_EVAL_REFERENCE=1, REF_RUN + j with noise:j. */
static pid_t start_glowc(const fuzz_config *c, const char *dir, int nin, int b, bool share)
{
    char model[4200], ins[32][4200], outdir[4200], cache[4200];
    const char *argv[MAX_ARGS];
    int n = 0;
    snprintf(model, sizeof model, "%.4000s/model.onnx", dir);
    snprintf(outdir, sizeof outdir, "%.4000s/out_%s", dir, glowc_tags[b]);
    argv[n++] = c->glowc;
    argv[n++] = "run";
    argv[n++] = model;
    for (int i = 0; i < nin && i < 32; i++) {
        snprintf(ins[i], sizeof ins[i], "%.4000s/input_%d.pb", dir, i);
        argv[n++] = ins[i];
    }
    argv[n++] = "--backend";
    bool interp = b == FB_INTERP || b >= REF_RUN;
    argv[n++] = interp ? "interpreter" : "cpu";
    if (!interp) {
        argv[n++] = "--threads";
        argv[n++] = b == FB_CPU2 ? "2" : "1";
    }
    argv[n++] = "--output-dir";
    argv[n++] = outdir;
    if (share && !interp) {
        snprintf(cache, sizeof cache, "%.4000s/jit", dir);
        argv[n++] = "--cache";
        argv[n++] = cache;
    }
    argv[n] = NULL;
    if (share && b == FB_CPU2) /* the child inherits the environment at the spawn */
        setenv("GLOWC_CPU_PARTS", "1", 1);
    char mode[32];
    snprintf(mode, sizeof mode, b == REF_RUN ? "1" : "noise:%d", b - REF_RUN);
    if (b >= REF_RUN)
        setenv("GLOWC_EVAL_REFERENCE", mode, 1);
    pid_t pid = start_child(dir, glowc_tags[b], argv); /* posix_spawn copies argv */
    if (share && b == FB_CPU2)
        unsetenv("GLOWC_CPU_PARTS");
    if (b >= REF_RUN)
        unsetenv("GLOWC_EVAL_REFERENCE");
    return pid;
}

/* The entries in dir/jit: 1 when the 2-thread run found the 1-thread run's code; a second
 * one means the module differed between the two, so the code was not shared. */
static int cache_entries(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/jit", dir);
    DIR *d = opendir(path);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void finish_glowc(const fuzz_config *c, const char *dir, int b, pid_t pid,
                         run_result *r)
{
    char outdir[4200];
    snprintf(outdir, sizeof outdir, "%.4000s/out_%s", dir, glowc_tags[b]);
    finish_child(c, dir, glowc_tags[b], pid, r);
    if (r->code == 0)
        read_outputs(outdir, r);
}

/* The value of `#define MODEL_<key> N` in the bundle header, or -1. */
static long long header_value(const char *header, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "#define MODEL_%s ", key);
    const char *p = strstr(header, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* Compiles the model as a bundle, links it to the driver and runs it; the outputs get the
 * types of ref's (the bundle writes raw bytes). */
static void run_bundle(const fuzz_config *c, const char *dir, int nin, const run_result *ref,
                       run_result *r)
{
    char model[4200], bdir[4200], path[4300];
    snprintf(model, sizeof model, "%s/model.onnx", dir);
    snprintf(bdir, sizeof bdir, "%s/bundle", dir);
    const char *cargv[] = { c->glowc, "compile", model, "--emit-bundle", bdir, "--name",
                            "model", NULL };
    run_child(c, dir, "bundle_compile", cargv, r);
    if (r->code != 0)
        return;
    snprintf(path, sizeof path, "%s/model.h", bdir);
    char *h = slurp(path, NULL);
    char exe[4300], obj[4300];
    snprintf(exe, sizeof exe, "%s/run", bdir);
    snprintf(obj, sizeof obj, "%s/model.o", bdir);
    const char *largv[] = { "/usr/bin/cc", "-o", exe, c->driver_obj, obj, "-lm", NULL };
    run_child(c, dir, "bundle_link", largv, r);
    /* node_driver WEIGHTS CONSTANT MUTABLE ACTIVATIONS ALIGN [in OFF FILE]... [out OFF SIZE
     * FILE]... */
    static char args[MAX_ARGS][4300];
    const char *argv[MAX_ARGS];
    int n = 0;
    argv[n++] = exe;
    snprintf(args[n], sizeof args[n], "%s/model.weights.bin", bdir);
    argv[n] = args[n];
    n++;
    static const char *const keys[] = { "CONSTANT_MEM_SIZE", "MUTABLE_MEM_SIZE",
                                        "ACTIVATIONS_MEM_SIZE", "MEM_ALIGN" };
    for (int k = 0; k < 4; k++, n++) {
        snprintf(args[n], sizeof args[n], "%lld", header_value(h, keys[k]));
        argv[n] = args[n];
    }
    for (int i = 0; i < nin && n + 3 < MAX_ARGS - 1 && r->code == 0; i++) {
        char key[64], in[4300], raw[4300];
        glow_tensor t;
        glow_diag d = { 0 };
        snprintf(in, sizeof in, "%s/input_%d.pb", dir, i);
        snprintf(raw, sizeof raw, "%s/in%d.raw", bdir, i);
        if (glow_tensor_read_file(in, &t, NULL, &d) != GLOW_OK ||
            glow_write_file(raw, t.data, glow_type_bytes(&t.type), &d) != GLOW_OK) {
            r->code = -1;
            snprintf(r->msg, sizeof r->msg, "bundle: %.300s", d.msg);
        } else {
            glow_tensor_free(&t);
        }
        snprintf(key, sizeof key, "INPUT_%d_OFFSET", i);
        long long off = header_value(h, key);
        if (off < 0) /* an input the program does not read has no place in the bundle */
            continue;
        argv[n++] = "in";
        snprintf(args[n], sizeof args[n], "%lld", off);
        argv[n] = args[n];
        n++;
        snprintf(args[n], sizeof args[n], "%s", raw);
        argv[n] = args[n];
        n++;
    }
    for (int k = 0; k < ref->nouts && n + 4 < MAX_ARGS - 1; k++) {
        char key[64];
        argv[n++] = "out";
        snprintf(key, sizeof key, "OUTPUT_%d_OFFSET", k);
        snprintf(args[n], sizeof args[n], "%lld", header_value(h, key));
        argv[n] = args[n];
        n++;
        snprintf(key, sizeof key, "OUTPUT_%d_SIZE", k);
        snprintf(args[n], sizeof args[n], "%lld", header_value(h, key));
        argv[n] = args[n];
        n++;
        snprintf(args[n], sizeof args[n], "%s/out%d.raw", bdir, k);
        argv[n] = args[n];
        n++;
    }
    argv[n] = NULL;
    free(h);
    if (r->code != 0)
        return;
    run_child(c, dir, "bundle_run", argv, r);
    if (r->code != 0)
        return;
    for (r->nouts = 0; r->nouts < ref->nouts; r->nouts++) {
        glow_diag d = { 0 };
        size_t size = 0;
        snprintf(path, sizeof path, "%s/out%d.raw", bdir, r->nouts);
        uint8_t *bytes = read_whole(path, &size);
        glow_tensor *t = &r->outs[r->nouts];
        if (!bytes || glow_tensor_alloc(t, &ref->outs[r->nouts].type, &d) != GLOW_OK ||
            size != glow_type_bytes(&t->type)) {
            free(bytes);
            break;
        }
        memcpy(t->data, bytes, size);
        free(bytes);
    }
}

/* Compares got with ref; the first difference goes into msg. */
static bool agree(const glow_tensor *got, const glow_tensor *ref, double tol, char *msg,
                  size_t n)
{
    if (!glow_type_equal(&got->type, &ref->type)) {
        snprintf(msg, n, "types differ");
        return false;
    }
    int64_t count = glow_type_numel(&ref->type);
    double rms = fuzz_rms(ref);
    int64_t bad = 0, first = -1;
    double worst = 0;
    for (int64_t i = 0; i < count; i++) {
        double x = glow_load_f64(ref->type.dtype, ref->data, (size_t)i);
        double y = glow_load_f64(got->type.dtype, got->data, (size_t)i);
        if ((isnan(x) && isnan(y)) || x == y)
            continue;
        double err = fabs(x - y), lim = tol * (fabs(x) + rms);
        if (isfinite(err) && err <= lim && !isnan(err))
            continue;
        if (first < 0)
            first = i;
        if (!(err <= worst))
            worst = err;
        bad++;
    }
    if (bad) {
        double x = glow_load_f64(ref->type.dtype, ref->data, (size_t)first);
        double y = glow_load_f64(got->type.dtype, got->data, (size_t)first);
        snprintf(msg, n, "%lld of %lld elements differ, first [%lld] %.9g vs %.9g (rms %.3g, "
                 "tol %.2g)", (long long)bad, (long long)count, (long long)first, y, x, rms,
                 tol);
    }
    return bad == 0;
}

static void free_result(run_result *r)
{
    for (int k = 0; k < r->nouts; k++)
        glow_tensor_free(&r->outs[k]);
    r->nouts = 0;
}

/* Test-only: moves element 0 of each output by c->perturb * (|v| + rms) (fuzz_config). */
static void perturb(const fuzz_config *c, run_result *r)
{
    for (int k = 0; k < r->nouts && c->perturb != 0; k++) {
        glow_tensor *t = &r->outs[k];
        int64_t count = glow_type_numel(&t->type);
        if (count < 1 || !glow_dtype_is_float(t->type.dtype))
            continue;
        double sq = 0;
        for (int64_t i = 0; i < count; i++) {
            double v = glow_load_f64(t->type.dtype, t->data, (size_t)i);
            sq += isfinite(v) ? v * v : 0;
        }
        double v = glow_load_f64(t->type.dtype, t->data, 0);
        glow_store_f64(t->type.dtype, t->data, 0,
                       v + c->perturb * (fabs(v) + sqrt(sq / (double)count)));
    }
}

/* Why backend b's outputs disagree with the reference backend's (ref), or "" when they
 * agree within rel_tol. */
static bool disagrees(const run_result *r, int b, int ref, double rel_tol, char *why,
                      size_t n)
{
    why[0] = 0;
    if (r[b].nouts != r[ref].nouts) {
        snprintf(why, n, "%d outputs, %s has %d", r[b].nouts, fuzz_backend_names[ref],
                 r[ref].nouts);
        return true;
    }
    for (int k = 0; k < r[ref].nouts; k++) {
        char tmp[400];
        if (!agree(&r[b].outs[k], &r[ref].outs[k], rel_tol, tmp, sizeof tmp)) {
            snprintf(why, n, "output %d: %.370s", k, tmp);
            return true;
        }
    }
    return false;
}

/* Whether every output of cpu backend b that disagrees with the interpreter's is explained
 * as rounding by the float64 reference run (refr); the figures of the worst output go into
 * figs. */
static bool explained(const run_result *r, int b, const run_result *refr, double rel_tol,
                      char *figs, size_t n)
{
    for (int j = 0; j <= FUZZ_NOISY_RUNS; j++)
        if (refr[j].nouts != r[FB_INTERP].nouts)
            return false;
    if (r[b].nouts != r[FB_INTERP].nouts)
        return false;
    bool all = true, shown_bad = false;
    double shown_d = -1;
    for (int k = 0; k < r[FB_INTERP].nouts; k++) {
        fuzz_figures f;
        glow_tensor noisy[FUZZ_NOISY_RUNS];
        for (int j = 0; j < FUZZ_NOISY_RUNS; j++)
            noisy[j] = refr[1 + j].outs[k];
        bool ok = fuzz_explain(&r[FB_INTERP].outs[k], &r[b].outs[k], &refr[0].outs[k], noisy,
                               FUZZ_NOISY_RUNS, rel_tol, &f);
        all = all && ok;
        /* shows the first unexplained output, else the one furthest apart */
        if (f.differ && !shown_bad && (!ok || f.d > shown_d)) {
            char line[300];
            shown_bad = !ok;
            shown_d = f.d;
            fuzz_figures_str(&f, line, sizeof line);
            snprintf(figs, n, "output %d: %.260s", k, line);
        }
    }
    return all;
}

/* Compares every backend that ran with the first (ref); when cpu runs disagree with the
 * interpreter, runs the float64 reference and gives `rounding` when it explains each of
 * them (fuzz_explain), else `mismatch` for the first unexplained one. */
static void compare(const fuzz_config *c, const char *dir, int nin, unsigned which,
                    double rel_tol, int ref, run_result *r, fuzz_outcome *o)
{
    char why[FB_COUNT][400];
    unsigned differ = 0;
    for (int b = ref + 1; b < FB_COUNT; b++)
        if ((which & (1u << b)) && disagrees(r, b, ref, rel_tol, why[b], sizeof why[b]))
            differ |= 1u << b;
    if (!differ)
        return;
    /* the reference and the noisy ones, side by side (interpreter runs are cheap) */
    run_result refr[1 + FUZZ_NOISY_RUNS];
    memset(refr, 0, sizeof refr);
    bool have_ref = ref == FB_INTERP;
    pid_t rp[1 + FUZZ_NOISY_RUNS];
    for (int j = 0; have_ref && j <= FUZZ_NOISY_RUNS; j++)
        rp[j] = start_glowc(c, dir, nin, REF_RUN + j, false);
    for (int j = 0; have_ref && j <= FUZZ_NOISY_RUNS; j++) {
        finish_glowc(c, dir, REF_RUN + j, rp[j], &refr[j]);
        if (c->verbose)
            printf("    %-14s exit %d %s\n", glowc_tags[REF_RUN + j], refr[j].code,
                   refr[j].msg);
    }
    for (int j = 0; have_ref && j <= FUZZ_NOISY_RUNS; j++)
        have_ref = refr[j].code == 0;
    char figs[FB_COUNT][300];
    o->verdict = FV_ROUNDING;
    bool first = true;
    for (int b = ref + 1; b < FB_COUNT; b++) {
        if (!(differ & (1u << b)))
            continue;
        figs[b][0] = 0;
        bool ok = have_ref && explained(r, b, refr, rel_tol, figs[b], sizeof figs[b]);
        if (o->verdict == FV_ROUNDING && (first || !ok)) {
            /* the message names the first unexplained backend, else the first explained */
            first = false;
            o->verdict = ok ? FV_ROUNDING : FV_MISMATCH;
            o->culprit = (fuzz_backend)b;
            snprintf(o->msg, sizeof o->msg, "%s vs %s: %s%s%s", fuzz_backend_names[b],
                     fuzz_backend_names[ref], why[b], figs[b][0] ? "; float64 reference: " : "",
                     figs[b]);
        }
    }
    for (int j = 0; j <= FUZZ_NOISY_RUNS; j++)
        free_result(&refr[j]);
}

fuzz_outcome fuzz_check_dir(const fuzz_config *c, const char *dir, int nin, unsigned which,
                            double rel_tol)
{
    run_result r[FB_COUNT];
    memset(r, 0, sizeof r);
    fuzz_outcome o = { FV_PASS, FB_INTERP, false, false, "" };
    int ref = -1, ran = 0, refused = 0, crashed = -1, failed = -1;
    unsigned cpus = (1u << FB_CPU1) | (1u << FB_CPU2);
    bool share = c->share_code && (which & cpus) == cpus;
    /* the glowc runs side by side (the JIT's compile time dominates); the bundle after them;
     * a 2-thread run sharing the 1-thread run's code after that one */
    pid_t pids[FB_COUNT] = { -1, -1, -1, -1 };
    for (int b = 0; b < FB_BUNDLE && c->parallel; b++)
        if ((which & (1u << b)) && !(share && b == FB_CPU2))
            pids[b] = start_glowc(c, dir, nin, (fuzz_backend)b, share);
    for (int b = 0; b < FB_COUNT; b++) {
        if (!(which & (1u << b)))
            continue;
        if (crashed >= 0) {
            /* the verdict is known: a hang need not be waited out once per backend */
            if (c->parallel && b < FB_BUNDLE && pids[b] > 0) {
                kill(pids[b], SIGKILL);
                waitpid(pids[b], NULL, 0);
            }
            continue;
        }
        ran++;
        if (b == FB_BUNDLE) {
            if (ref < 0) { /* the bundle needs a reference's output types */
                refused++;
                continue;
            }
            run_bundle(c, dir, nin, &r[ref], &r[b]);
            perturb(c, &r[b]);
        } else {
            if (!c->parallel || (share && b == FB_CPU2))
                pids[b] = start_glowc(c, dir, nin, (fuzz_backend)b, share);
            finish_glowc(c, dir, (fuzz_backend)b, pids[b], &r[b]);
            if (b != FB_INTERP)
                perturb(c, &r[b]);
            if (share && b == FB_CPU2)
                o.code_shared = r[b].code == 0 && cache_entries(dir) == 1;
        }
        if (r[b].code == 0 && ref < 0)
            ref = b;
        else if (r[b].timed_out || r[b].code >= 128 || r[b].code < 0)
            crashed = crashed < 0 ? b : crashed;
        else if (b == FB_BUNDLE && r[b].code == 2 && strstr(r[b].msg, "no kernel")) {
            /* instructions without a bundle kernel: a documented limit, not a failure */
            o.bundle_skipped = true;
            ran--;
            which &= ~(1u << b);
        } else if (r[b].code != 0) {
            failed = failed < 0 ? b : failed;
            refused++;
        }
        if (c->verbose)
            printf("    %-14s exit %d %s\n", fuzz_backend_names[b], r[b].code, r[b].msg);
    }
    if (crashed >= 0) {
        o.verdict = FV_CRASH;
        o.culprit = (fuzz_backend)crashed;
        snprintf(o.msg, sizeof o.msg, "%s: exit %d %s", fuzz_backend_names[crashed],
                 r[crashed].code, r[crashed].msg);
    } else if (refused == ran) {
        o.verdict = FV_REFUSED;
        o.culprit = (fuzz_backend)(failed >= 0 ? failed : 0);
        snprintf(o.msg, sizeof o.msg, "%s", failed >= 0 ? r[failed].msg : "");
    } else if (failed >= 0) {
        o.verdict = FV_ERROR;
        o.culprit = (fuzz_backend)failed;
        snprintf(o.msg, sizeof o.msg, "%s: exit %d %s", fuzz_backend_names[failed],
                 r[failed].code, r[failed].msg);
    } else {
        compare(c, dir, nin, which, rel_tol, ref, r, &o);
    }
    for (int b = 0; b < FB_COUNT; b++)
        free_result(&r[b]);
    return o;
}
