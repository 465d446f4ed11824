// test_robust.c - Feeds truncated and byte-flipped models to the importer: it must fail
// cleanly (a status and a message) or load, never crash, hang or leak.
//
// Models come from every suite in a fixed order, so a failure reproduces exactly; the
// variant that failed is printed with its model, kind and offset. Under ASan, LeakSanitizer
// turns a leak on an error path into a failure of this program.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "conformance/node_test.h"
#include "onnx/onnx.h"

#define NTRUNC 12
#define NFLIP 10
/* One load of a small model takes milliseconds, even under ASan. The limit is on the
 * process's CPU time (ITIMER_PROF), not the wall clock, which a loaded machine stretches. */
#define VARIANT_SECONDS 20

/* Model-declared sizes may be absurd after a flip; under ASan, an allocation beyond its limit
 * must come back as NULL (as it would from malloc) so the importer's clean failure path is
 * what gets tested, not ASan's own abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

static char current[512];

/* Arms (seconds > 0) or disarms the CPU-time limit of one load. */
static void set_limit(int seconds)
{
    struct itimerval t = { .it_value = { .tv_sec = seconds } };
    setitimer(ITIMER_PROF, &t, NULL);
}

static void on_alarm(int sig)
{
    (void)sig;
    /* Only async-signal-safe calls here. */
    static const char msg[] = "TIMEOUT: the importer did not return within the limit for ";
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(2, current, strlen(current));
    r = write(2, "\n", 1);
    (void)r;
    _exit(1);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng_next(void)
{
    /* xorshift64*: fixed seed, so the variants are the same on every run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static int nvariants, nloaded, nbad;
static int nflip_loaded, nintact_loaded; /* figures showing the variants reach deep code */

/* Loads one variant in-process; records a failure when the outcome is not clean. */
static void try_variant(const char *model, const char *kind, size_t where, const uint8_t *data,
                        size_t size)
{
    snprintf(current, sizeof current, "%s (%s at %zu, %zu bytes)", model, kind, where, size);
    glow_diag d = { 0 };
    glow_module *m = glow_module_create();
    set_limit(VARIANT_SECONDS);
    glow_status s = glow_onnx_load_bytes(m, data, size, NULL, &d);
    set_limit(0);
    glow_module_destroy(m);
    nvariants++;
    if (s == GLOW_OK) {
        nloaded++;
        nflip_loaded += kind[0] == 'f';
        nintact_loaded += kind[0] == 'i';
        return;
    }
    if (s >= GLOW_STATUS_COUNT || d.len == 0 || d.msg[0] == '\0') {
        fprintf(stderr, "BAD %s: status %d with an empty message\n", current, (int)s);
        nbad++;
    } else if (s == GLOW_ERR_INTERNAL) {
        fprintf(stderr, "BAD %s: internal error: %s\n", current, d.msg);
        nbad++;
    }
}

/* Truncations at `ntrunc` offsets spread over the file, then NFLIP variants with 1-4 bytes
 * overwritten (when flips is set). */
static void fuzz_model(const char *path, const char *label, int ntrunc, bool flips)
{
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &size, &d) != GLOW_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, d.msg);
        CHECK(false);
        return;
    }
    uint8_t *buf = malloc(size + 1);
    /* The intact model first: the baseline the variants are compared against in the counts. */
    try_variant(label, "intact", size, data, size);

    for (int k = 0; k < ntrunc; k++) {
        /* Offsets 0 and size-1 are the edge cases; the rest are spread evenly, plus a
         * little jitter so they do not all land on field boundaries. */
        size_t cut = k == 0 ? 0 : k == ntrunc - 1 ? size - 1 : size * (size_t)k / (size_t)ntrunc;
        if (k > 0 && k < ntrunc - 1 && cut > 2)
            cut -= rng_next() % 3;
        memcpy(buf, data, cut);
        try_variant(label, "truncated", cut, buf, cut);
    }
    for (int k = 0; flips && k < NFLIP && size > 0; k++) {
        memcpy(buf, data, size);
        int nflip = 1 + (int)(rng_next() % 4);
        size_t first = 0;
        for (int j = 0; j < nflip; j++) {
            size_t at = (size_t)(rng_next() % size);
            if (j == 0)
                first = at;
            /* Half plain bit flips, half arbitrary bytes (which hit varint continuation
             * bits and wire types more often). */
            if (rng_next() & 1)
                buf[at] ^= (uint8_t)(1u << (rng_next() % 8));
            else
                buf[at] = (uint8_t)rng_next();
        }
        try_variant(label, "flipped", first, buf, size);
    }
    free(buf);
    free(data);
}

/* Every `step`-th test of a suite (at most `limit`), in sorted order. */
static int fuzz_suite(const char *suite, int step, int limit, int ntrunc,
                      bool flips)
{
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", nt_suite_dir(suite));
    int n = 0, used = 0;
    char **tests = nt_list_tests(dir, &n);
    for (int i = 0; i < n; i++) {
        if (i % step == 0 && used < limit) {
            char path[4096], label[512];
            snprintf(path, sizeof path, "%s/%s/model.onnx", dir, tests[i]);
            snprintf(label, sizeof label, "%s/%s", suite, tests[i]);
            fuzz_model(path, label, ntrunc, flips);
            used++;
        }
    }
    nt_free_tests(tests, n);
    return used;
}

int main(void)
{
    signal(SIGPROF, on_alarm);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    int nmodels = 0;
    nmodels += fuzz_suite("node", 40, 50, NTRUNC, true);
    nmodels += fuzz_suite("simple", 2, 12, NTRUNC, true);
    nmodels += fuzz_suite("pytorch-converted", 8, 11, NTRUNC, true);
    nmodels += fuzz_suite("pytorch-operator", 4, 9, NTRUNC, true);
    /* Whole CNNs import slowly (weights are folded ConstantOfShape nodes): a few cuts only. */
    nmodels += fuzz_suite("light", 1, 9, 4, false);
    /* The demo model that ships with the repository, fully. */
    fuzz_model("models/lenet.onnx", "models/lenet.onnx", NTRUNC, true);
    nmodels++;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%d models, %d variants: %d loaded, %d failed cleanly, %d bad; %.1f s\n", nmodels,
           nvariants, nloaded, nvariants - nloaded - nbad, nbad,
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    printf("intact models loaded: %d; flipped variants that still loaded: %d\n",
           nintact_loaded, nflip_loaded);
    CHECK(nmodels >= 50);
    CHECK_EQ(nbad, 0);
    return CHECK_DONE();
}
