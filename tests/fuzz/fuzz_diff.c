// fuzz_diff.c - glowc-fuzz-diff, the differential fuzzer: generates random valid models
// (gen.h) for a range of seeds, runs each on the interpreter, the cpu backend at 1 and 2
// threads and every Nth as a bundle (fuzz_run.c), reduces a failing model (reduce.c) and saves
// it as a regression; and checks the saved regressions (what CTest runs). See
// docs/fuzzing.md, "Differential fuzzing".
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "support/support.h"
#include "testlib/files.h"

#define ALL_BACKENDS ((1u << FB_INTERP) | (1u << FB_CPU1) | (1u << FB_CPU2) | (1u << FB_BUNDLE))
/* --check's backends: all, but no bundle in the sanitizer tree (as its campaign: a bundle's
 * code is not instrumented, its compile is the cpu runs' and test_bundle checks the emitter
 * there; the system C compiler and the link were a third of the check's time). */
#ifdef GLOWC_SANITIZE
#define CHECK_BACKENDS (ALL_BACKENDS & ~(1u << FB_BUNDLE))
#else
#define CHECK_BACKENDS ALL_BACKENDS
#endif

static void usage(void)
{
    printf("usage: glowc-fuzz-diff [--seed S] [--count N] [--bundle-every K] [--reduce]\n"
           "                       [--save DIR] [--work DIR] [--timeout SEC] [--max-nodes M]\n"
           "                       [--tolerance-scale X] [--skip S,...] [--serial]\n"
           "                       [--split-every K] [--perturb-cpu X]\n"
           "                       [-v]\n"
           "       glowc-fuzz-diff --write SEED DIR\n"
           "       glowc-fuzz-diff --print SEED\n"
           "       glowc-fuzz-diff --check DIR [--only NAME]\n"
           "\n"
           "Generates a random valid ONNX model for each seed S..S+N-1 (default 1, 1), runs it\n"
           "on the interpreter and on the cpu backend with 1 and 2 threads, and every Kth seed\n"
           "(default 10; 0: never) also as an AOT bundle, each run in a child process; compares\n"
           "the outputs within a tolerance growing with the model's depth. Failures are\n"
           "mismatches, crashes or hangs, and errors on one backend; a model every backend\n"
           "refuses is a generator bug, counted as 'refused'. When a cpu run and the\n"
           "interpreter disagree, the interpreter runs a third time as the float64 reference\n"
           "(GLOWC_EVAL_REFERENCE=1); a disagreement it explains as amplified float32 rounding\n"
           "is 'rounding', counted apart and not a failure (docs/fuzzing.md).\n"
           "\n"
           "  --reduce       shrink each failing model by delta debugging over its nodes and\n"
           "                 save it (model.onnx, input_<i>.pb, README) under --save DIR\n"
           "                 (default tests/fuzz/regressions) as seed<S>_<verdict>\n"
           "  --work DIR     where each seed's files go (default a fresh folder in $TMPDIR or\n"
           "                 /tmp, removed at the end; failing seeds' folders are kept)\n"
           "  --timeout SEC  per child process (default 60)\n"
           "  --max-nodes M  models of 10..M nodes (default 60; a seed's model depends on M)\n"
           "  --tolerance-scale X  multiply the tolerance by X (0: outputs must be identical)\n"
           "  --skip S,...   leave these seeds out (ones known to hit a listed regression)\n"
           "  --serial       one backend at a time (default: the interpreter and cpu runs of\n"
           "                 a model side by side)\n"
           "  --split-every K  every Kth seed (default 10; 1: every seed) compiles the 2-thread\n"
           "                 program in its own parts, as a 2-core host does; the others run it\n"
           "                 on the 1-thread program's machine code (through the compiled-code\n"
           "                 cache, GLOWC_CPU_PARTS=1), as a 1-core host does, which saves the\n"
           "                 second LLVM compile, most of a seed's time. Reduction and --check\n"
           "                 always compile both\n"
           "  --perturb-cpu X  test-only: move element 0 of every cpu and bundle output by\n"
           "                 X * (|v| + rms), a wrong result that must stay a mismatch\n"
           "  --write S DIR  only write seed S's model and inputs into DIR\n"
           "  --print S      only print seed S's graph\n"
           "  --check DIR    run every regression folder in DIR on all backends; each must\n"
           "                 agree, except those listed in DIR/expected_failures.txt\n"
           "                 (<name> <reason>), which must still fail ('rounding' passes);\n"
           "                 --only NAME: only that folder\n"
           "environment: GLOWC_BIN the glowc binary (required), GLOWC_SOURCE the source tree\n"
           "(default .). Exit status 0 when every seed passed, 1 otherwise, 2 usage.\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What the reducer keeps failing: the same verdict on the same backend. */
typedef struct reduce_ctx {
    const fuzz_config *c;
    const char *dir;
    fuzz_outcome want;
    unsigned which;
} reduce_ctx;

static bool still_fails(const gen_graph *g, void *p)
{
    reduce_ctx *r = p;
    rm_tree(r->dir);
    mkdir(r->dir, 0755);
    if (!gen_write(g, r->dir))
        return false;
    fuzz_outcome o = fuzz_check_dir(r->c, r->dir, gen_num_inputs(g), r->which,
                                    fuzz_tolerance(gen_depth(g)));
    return o.verdict == r->want.verdict && o.culprit == r->want.culprit;
}

/* Reduces g (failing as o) and saves it under save/seed<S>_<verdict>. */
static void reduce_and_save(const fuzz_config *c, const gen_graph *g, fuzz_outcome o,
                            unsigned which, const char *work, const char *save)
{
    char dir[4200], out[4300];
    snprintf(dir, sizeof dir, "%.4000s/reduce", work);
    /* the interpreter (the reference) and the failing backend are enough to reproduce */
    reduce_ctx ctx = { c, dir, o, (1u << FB_INTERP) | (1u << o.culprit) };
    if (o.culprit == FB_BUNDLE || o.culprit == FB_INTERP)
        ctx.which = which;
    int tests = 0;
    double t0 = now();
    gen_graph *small = fuzz_reduce(g, still_fails, &ctx, &tests);
    printf("  reduced %d -> %d nodes in %d tries (%.0f s):\n", gen_live_nodes(g),
           gen_live_nodes(small), tests, now() - t0);
    gen_print(small, stdout);
    snprintf(out, sizeof out, "%s/seed%llu_%s", save, (unsigned long long)g->seed,
             fuzz_verdict_names[o.verdict]);
    mkdir(save, 0755);
    rm_tree(out);
    mkdir(out, 0755);
    rm_tree(dir);
    mkdir(dir, 0755);
    if (gen_write(small, dir) && gen_write(small, out)) { /* runs leave files: not in out */
        fuzz_outcome again = fuzz_check_dir(c, dir, gen_num_inputs(small), ctx.which,
                                            fuzz_tolerance(gen_depth(small)));
        char readme[4400];
        snprintf(readme, sizeof readme, "%s/README", out);
        FILE *f = fopen(readme, "w");
        if (f) {
            fprintf(f, "glowc-fuzz-diff seed %llu, reduced from %d to %d nodes: %s: %s\n",
                    (unsigned long long)g->seed, gen_live_nodes(g), gen_live_nodes(small),
                    fuzz_verdict_names[again.verdict], again.msg);
            fclose(f);
        }
        printf("  saved %s (%s)\n", out, fuzz_verdict_names[again.verdict]);
    }
    gen_free(small);
}

typedef struct campaign {
    unsigned long long seed, count;
    int bundle_every, timeout;
    int split_every;        /* --split-every K */
    bool reduce, verbose, serial;
    const char *save, *work;
    int max_nodes;
    const char *skip;       /* --skip S,S,...: seeds left out */
} campaign;

/* Whether seed s is in the comma-separated list. */
static bool listed(const char *list, unsigned long long s)
{
    for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
        if (strtoull(p, NULL, 10) == s)
            return true;
    return false;
}

static int run_campaign(const fuzz_config *c, const campaign *k, const char *work)
{
    int counts[FV_COUNT] = { 0 }, skipped_bundles = 0, bundles = 0, shared = 0, own_parts = 0;
    long nodes = 0;
    double t0 = now();
    int skipped = 0;
    for (unsigned long long s = k->seed; s < k->seed + k->count; s++) {
        if (listed(k->skip, s)) {
            printf("seed %llu: skipped (--skip)\n", s);
            skipped++;
            continue;
        }
        gen_options go = { 10, k->max_nodes, 10 };
        gen_graph *g = gen_generate(s, &go);
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/seed%llu", work, s);
        mkdir(dir, 0755);
        unsigned which = ALL_BACKENDS;
        if (k->bundle_every <= 0 || s % (unsigned long long)k->bundle_every != 0)
            which &= ~(1u << FB_BUNDLE);
        else
            bundles++;
        double ts = now();
        fuzz_outcome o = { FV_REFUSED, FB_INTERP, false, false, "cannot write the model" };
        fuzz_config cs = *c;
        cs.share_code = k->split_every != 1 &&
                        (k->split_every <= 0 || s % (unsigned long long)k->split_every != 0);
        if (gen_write(g, dir))
            o = fuzz_check_dir(&cs, dir, gen_num_inputs(g), which,
                               fuzz_tolerance(gen_depth(g)));
        counts[o.verdict]++;
        skipped_bundles += o.bundle_skipped;
        shared += o.code_shared;
        own_parts += !cs.share_code;
        nodes += gen_live_nodes(g);
        printf("seed %llu: %d nodes, depth %d, %d outputs%s%s: %s%s%s (%.1f s)\n", s,
               gen_live_nodes(g), gen_depth(g), g->nouts, g->specials ? ", NaN/Inf" : "",
               cs.share_code ? (o.code_shared ? "" : ", 2-thread code not shared")
                             : ", 2 parts",
               fuzz_verdict_names[o.verdict], o.msg[0] ? ": " : "", o.msg, now() - ts);
        fflush(stdout);
        if (o.verdict != FV_PASS && k->verbose)
            gen_print(g, stdout);
        if (o.verdict != FV_PASS && o.verdict != FV_REFUSED && o.verdict != FV_ROUNDING &&
            k->reduce)
            reduce_and_save(c, g, o, which, dir, k->save);
        if (o.verdict == FV_PASS || o.verdict == FV_ROUNDING)
            rm_tree(dir);
        gen_free(g);
    }
    double t = now() - t0;
    printf("%llu seeds (%ld nodes, %d also as bundles, %d of them without a kernel for some "
           "instruction): %d pass, %d rounding (explained), %d mismatch, %d crash, %d error on one "
           "backend, %d refused (generator bugs); %.1f s, %.2f s per seed\n",
           k->count, nodes, bundles, skipped_bundles, counts[FV_PASS], counts[FV_ROUNDING],
           counts[FV_MISMATCH],
           counts[FV_CRASH], counts[FV_ERROR], counts[FV_REFUSED], t,
           k->count ? t / (double)k->count : 0);
    printf("2-thread programs: %d compiled in their own parts, %d on the 1-thread code\n",
           own_parts, shared);
    if (skipped)
        printf("%d seeds skipped\n", skipped);
    return counts[FV_PASS] + counts[FV_ROUNDING] + skipped == (int)k->count ? 0 : 1;
}

/* The reason DIR/expected_failures.txt gives for `name`, or NULL when it is not listed. */
static const char *expected_reason(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (*p != '#' && !strncmp(p, name, n) && (p[n] == ' ' || p[n] == '\t'))
            return p + n + 1;
    }
    return NULL;
}

static int count_inputs(const char *dir)
{
    int n = 0;
    for (;; n++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/input_%d.pb", dir, n);
        if (!exists(path))
            return n;
    }
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Copies src/name to dst/name; false when src/name cannot be read. */
static bool copy_file(const char *src, const char *dst, const char *name)
{
    char from[4300], to[4300];
    size_t size = 0;
    glow_diag d = { 0 };
    snprintf(from, sizeof from, "%.4000s/%s", src, name);
    snprintf(to, sizeof to, "%.4000s/%s", dst, name);
    uint8_t *bytes = read_whole(from, &size);
    bool ok = bytes && glow_write_file(to, bytes, size, &d) == GLOW_OK;
    free(bytes);
    return ok;
}

/* Runs each regression in a copy under work, so that the runs' files stay out of the source
 * tree. */
static int check_regressions(const fuzz_config *c, const char *root, const char *work,
                             const char *only)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/expected_failures.txt", root);
    char *list = slurp(path, NULL);
    struct dirent **ents;
    int n = scandir(root, &ents, NULL, by_name), bad = 0, checked = 0;
    for (int i = 0; i < n; i++) {
        char dir[4200], model[4300];
        snprintf(dir, sizeof dir, "%s/%s", root, ents[i]->d_name);
        snprintf(model, sizeof model, "%s/model.onnx", dir);
        if (ents[i]->d_name[0] != '.' && exists(model) &&
            (!only || !strcmp(only, ents[i]->d_name))) {
            const char *why = expected_reason(list, ents[i]->d_name);
            char copy[4300];
            int nin = count_inputs(dir);
            snprintf(copy, sizeof copy, "%.4000s/%s", work, ents[i]->d_name);
            mkdir(copy, 0755);
            copy_file(dir, copy, "model.onnx");
            for (int k = 0; k < nin; k++) {
                char name[32];
                snprintf(name, sizeof name, "input_%d.pb", k);
                copy_file(dir, copy, name);
            }
            fuzz_outcome o = fuzz_check_dir(c, copy, nin, CHECK_BACKENDS, fuzz_tolerance(10));
            /* rounding the float64 reference explains is no failure */
            bool pass = o.verdict == FV_PASS || o.verdict == FV_ROUNDING;
            printf("%-40s %s%s%s%s\n", ents[i]->d_name, fuzz_verdict_names[o.verdict],
                   o.msg[0] ? ": " : "", o.msg, why ? " (expected to fail)" : "");
            if (why && pass)
                printf("  ^ listed in expected_failures.txt but passes now: remove it\n");
            bad += pass == (why != NULL);
            checked++;
        }
        free(ents[i]);
    }
    if (n > 0)
        free(ents);
    free(list);
    printf("%d regressions checked, %d not as expected\n", checked, bad);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    campaign k = { 1, 1, 10, 60, 10, false, false, false, "tests/fuzz/regressions", NULL, 60,
                   NULL };
    double perturb = 0;
    const char *check = NULL, *write_dir = NULL, *only = NULL;
    long long write_seed = -1, print_seed = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--seed") && more)
            k.seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--count") && more)
            k.count = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--bundle-every") && more)
            k.bundle_every = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout") && more)
            k.timeout = atoi(argv[++i]);
        else if (!strcmp(a, "--save") && more)
            k.save = argv[++i];
        else if (!strcmp(a, "--work") && more)
            k.work = argv[++i];
        else if (!strcmp(a, "--reduce"))
            k.reduce = true;
        else if (!strcmp(a, "--tolerance-scale") && more)
            fuzz_tolerance_scale = atof(argv[++i]);
        else if (!strcmp(a, "--skip") && more)
            k.skip = argv[++i];
        else if (!strcmp(a, "--split-every") && more)
            k.split_every = atoi(argv[++i]);
        else if (!strcmp(a, "--only") && more)
            only = argv[++i];
        else if (!strcmp(a, "--perturb-cpu") && more)
            perturb = atof(argv[++i]);
        else if (!strcmp(a, "--serial"))
            k.serial = true;
        else if (!strcmp(a, "--max-nodes") && more)
            k.max_nodes = atoi(argv[++i]);
        else if (!strcmp(a, "-v"))
            k.verbose = true;
        else if (!strcmp(a, "--check") && more)
            check = argv[++i];
        else if (!strcmp(a, "--write") && i + 2 < argc) {
            write_seed = atoll(argv[++i]);
            write_dir = argv[++i];
        } else if (!strcmp(a, "--print") && more)
            print_seed = atoll(argv[++i]);
        else {
            usage();
            return strcmp(a, "-h") && strcmp(a, "--help") ? 2 : 0;
        }
    }
    if (print_seed >= 0 || write_dir) {
        gen_options go = { 10, k.max_nodes, 10 };
        gen_graph *g = gen_generate((uint64_t)(print_seed >= 0 ? print_seed : write_seed), &go);
        printf("seed %llu: %d nodes, depth %d, %d inputs, %d outputs%s\n",
               (unsigned long long)g->seed, gen_live_nodes(g), gen_depth(g),
               gen_num_inputs(g), g->nouts, g->specials ? ", NaN/Inf inputs" : "");
        gen_print(g, stdout);
        bool ok = true;
        if (write_dir) {
            mkdir(write_dir, 0755);
            ok = gen_write(g, write_dir);
        }
        gen_free(g);
        return ok ? 0 : 1;
    }
    fuzz_config c = { getenv("GLOWC_BIN"), NULL, k.timeout, k.verbose, !k.serial, false,
                      perturb };
    if (!c.glowc) {
        fprintf(stderr, "GLOWC_BIN must name the glowc binary\n");
        return 2;
    }
    const char *source = getenv("GLOWC_SOURCE");
    /* $TMPDIR when set, so a long campaign can keep its folders away from cleanups of /tmp */
    const char *tmpdir = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/glowc-fuzz.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 2;
    }
    if (!fuzz_driver_init(&c, source && *source ? source : ".", tmp))
        return 2;
    int rc;
    if (check) {
        rc = check_regressions(&c, check, tmp, only);
    } else {
        const char *work = k.work ? k.work : tmp;
        mkdir(work, 0755);
        rc = run_campaign(&c, &k, work);
    }
    /* failing seeds' folders stay in --work; the temporary one goes unless a seed failed */
    if (k.work || rc == 0)
        rm_tree(tmp);
    else
        printf("failing seeds' files: %s\n", tmp);
    return rc;
}
