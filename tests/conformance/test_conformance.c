// test_conformance.c - Runs the ONNX backend test suites through a backend and checks the
// results against the expected-failure list.
//
// Every test runs in a forked child (at most --jobs at a time) with a time limit, so a crash
// or a hang costs one test, not the run. A test fails the program only when its outcome
// differs from tests/conformance/expected_failures_<backend>.txt: an unlisted failure, or a
// listed test that passes (the list must shrink as coverage grows). Options (argv, or the
// environment variables in brackets):
//   FILTER              run only tests whose "suite/test" contains FILTER [GLOWC_CONF_FILTER]
//   --backend B         [GLOWC_CONF_BACKEND], default interpreter; "bundle" compiles each
//                       test into a cpu backend AOT bundle, links it to
//                       tests/bundle/node_driver.c with the system C compiler and runs that
//   --jobs N            parallel children [GLOWC_CONF_JOBS], default 2
//   --timeout S         seconds per test [GLOWC_CONF_TIMEOUT], default 120
//   --subset | --full   every 10th node test, simple and two light models (the default of the
//                       sanitizer build, where the whole run would take too long) | all
//   --update-expected   rewrite the expected-failure file from this run's results
// A summary (per test: pass/fail, reason, seconds) goes to conformance_<backend>.tsv in the
// build tree.
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "conformance/compare.h"
#include "testlib/files.h"

static const char *const suites[] = { "node", "simple", "pytorch-converted", "pytorch-operator",
                                      "light" };
#define NSUITES ((int)(sizeof suites / sizeof suites[0]))
/* The subset's light models: the two smallest networks. */
static const char *const subset_light[] = { "test_squeezenet", "test_shufflenet" };

typedef struct test_case {
    int suite;
    char name[160];          /* "suite/test_x" */
    char dir[4096];
    bool ran, passed, listed;
    char reason[CONF_REASON];
    char listed_reason[CONF_REASON];
    double seconds;
    int fallbacks;           /* instructions run by the evaluator fallback (-1: unknown) */
    char fallback_kinds[160];
} test_case;

typedef struct options {
    const char *filter, *backend;
    int jobs, timeout;
    bool subset, update;
    char expected_path[4096];
} options;

static test_case *tests;
static int ntests, cap_tests;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the sorted test dirs of suite k that the options select. */
static int add_suite(int k, const options *o)
{
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", nt_suite_dir(suites[k]));
    int n;
    char **names = nt_list_tests(dir, &n);
    for (int i = 0; i < n; i++) {
        char full[160];
        snprintf(full, sizeof full, "%s/%.*s", suites[k], 130, names[i]);
        bool keep = !o->filter || strstr(full, o->filter);
        if (o->subset && !strcmp(suites[k], "node"))
            keep = keep && i % 10 == 0;
        if (o->subset && !strcmp(suites[k], "light"))
            keep = keep && (!strcmp(names[i], subset_light[0]) ||
                            !strcmp(names[i], subset_light[1]));
        if (o->subset && (!strcmp(suites[k], "pytorch-converted") ||
                          !strcmp(suites[k], "pytorch-operator")))
            keep = keep && i % 10 == 0;
        if (keep) {
            if (ntests == cap_tests)
                tests = realloc(tests, (size_t)(cap_tests = cap_tests ? cap_tests * 2 : 512) *
                                           sizeof *tests);
            test_case *t = &tests[ntests++];
            memset(t, 0, sizeof *t);
            t->suite = k;
            snprintf(t->name, sizeof t->name, "%s", full);
            snprintf(t->dir, sizeof t->dir, "%s/%s", dir, names[i]);
        }
    }
    nt_free_tests(names, n);
    return n;
}

/* --- running: one forked child per test, at most o->jobs at once --- */

typedef struct child {
    pid_t pid;
    int fd;          /* read end of the result pipe */
    int test;
    double start;
} child;

static void run_child(const test_case *t, const options *o, int fd)
{
    alarm((unsigned)o->timeout);
    char why[CONF_REASON] = "";
    conf_fallbacks fb;
    bool pass = conformance_run(t->dir, o->backend, why, sizeof why, &fb);
    char msg[CONF_REASON + 200];
    /* "PASS|FAIL <fallbacks> <kinds or ->\t<reason>" */
    int n = snprintf(msg, sizeof msg, "%s %d %s\t%.*s", pass ? "PASS" : "FAIL", fb.count,
                     fb.kinds[0] ? fb.kinds : "-", CONF_REASON - 1, pass ? "" : why);
    if (write(fd, msg, (size_t)n) < 0)
        _exit(2);
    /* exit, not _exit: under the sanitizers the leak check runs at exit and turns a leak
     * into a failure ("crash: exit 23"). stdio was flushed before the fork. */
    free(tests);
    exit(0);
}

static void start(child *c, int test, const options *o)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        close(fds[0]);
        run_child(&tests[test], o, fds[1]);
    }
    close(fds[1]);
    c->pid = pid;
    c->fd = fds[0];
    c->test = test;
    c->start = now();
}

/* Records the outcome of a finished child from its pipe and wait status. */
static void finish(child *c, int status)
{
    test_case *t = &tests[c->test];
    char msg[CONF_REASON + 200];
    ssize_t n = 0, r;
    while (n < (ssize_t)sizeof msg - 1 &&
           (r = read(c->fd, msg + n, sizeof msg - 1 - (size_t)n)) > 0)
        n += r;
    msg[n > 0 ? n : 0] = '\0';
    close(c->fd);
    t->ran = true;
    t->seconds = now() - c->start;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
        snprintf(t->reason, sizeof t->reason, "timeout");
    } else if (WIFSIGNALED(status)) {
        snprintf(t->reason, sizeof t->reason, "crash: signal %d", WTERMSIG(status));
    } else if (WEXITSTATUS(status) != 0 || n < 5) {
        snprintf(t->reason, sizeof t->reason, "crash: exit %d", WEXITSTATUS(status));
    } else {
        t->passed = !strncmp(msg, "PASS", 4);
        char *tab = strchr(msg, '\t');
        if (tab)
            *tab = 0;
        if (sscanf(msg + 5, "%d", &t->fallbacks) != 1)
            t->fallbacks = -1;
        const char *kinds = strchr(msg + 5, ' ');
        snprintf(t->fallback_kinds, sizeof t->fallback_kinds, "%s",
                 kinds && strcmp(kinds + 1, "-") ? kinds + 1 : "");
        if (!t->passed)
            snprintf(t->reason, sizeof t->reason, "%.*s", CONF_REASON - 1, tab ? tab + 1 : "");
    }
    c->pid = 0;
}

static void run_all(const options *o)
{
    child *kids = calloc((size_t)o->jobs, sizeof *kids);
    /* Whole networks first: they are the slowest, and starting them last would leave the
     * other workers idle at the end. */
    int *order = malloc(((size_t)ntests + 1) * sizeof *order), norder = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < ntests; i++)
            if ((strcmp(suites[tests[i].suite], "light") == 0) == (pass == 0))
                order[norder++] = i;
    int next = 0, running = 0;
    while (next < ntests || running > 0) {
        for (int j = 0; j < o->jobs && next < ntests; j++) {
            if (!kids[j].pid) {
                start(&kids[j], order[next++], o);
                running++;
            }
        }
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int j = 0; j < o->jobs; j++) {
            if (kids[j].pid == pid) {
                finish(&kids[j], status);
                running--;
            }
        }
    }
    free(order);
    free(kids);
}

/* --- the expected-failure list --- */

static test_case *find_test(const char *name)
{
    for (int i = 0; i < ntests; i++)
        if (!strcmp(tests[i].name, name))
            return &tests[i];
    return NULL;
}

/* Marks the listed tests; lines for tests this run does not include are kept in `others`
 * (for --update-expected). Returns false when the file cannot be read. */
static bool read_expected(const char *path, char ***others, int *nothers)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        size_t k = strcspn(line, " \t");
        char name[200];
        snprintf(name, sizeof name, "%.*s", (int)(k < 199 ? k : 199), line);
        const char *why = line + k;
        while (*why == ' ' || *why == '\t')
            why++;
        test_case *t = find_test(name);
        if (t) {
            t->listed = true;
            snprintf(t->listed_reason, sizeof t->listed_reason, "%s", why);
        } else {
            *others = realloc(*others, (size_t)(*nothers + 1) * sizeof **others);
            (*others)[(*nothers)++] = strdup(line);
        }
    }
    fclose(f);
    return true;
}

/* Rewrites the list: this run's failures plus the kept lines of tests it did not run, in
 * suite order then name order. */
static void write_expected(const options *o, char **others, int nothers)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->expected_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", tmp);
        return;
    }
    fprintf(f, "# Tests of the ONNX backend suites the %s backend fails, with the reason:\n"
            "# suite/test_name  reason. Regenerate with: test_conformance --update-expected\n",
            o->backend);
    for (int k = 0; k < NSUITES; k++) {
        size_t plen = strlen(suites[k]);
        char **lines = NULL;
        int n = 0;
        for (int i = 0; i < ntests; i++) {
            const test_case *t = &tests[i];
            if (t->suite != k || !t->ran || t->passed)
                continue;
            lines = realloc(lines, (size_t)(n + 1) * sizeof *lines);
            char buf[400];
            snprintf(buf, sizeof buf, "%s  %.150s", t->name, t->reason);
            lines[n++] = strdup(buf);
        }
        for (int i = 0; i < nothers; i++) {
            if (!strncmp(others[i], suites[k], plen) && others[i][plen] == '/') {
                lines = realloc(lines, (size_t)(n + 1) * sizeof *lines);
                lines[n++] = strdup(others[i]);
            }
        }
        qsort(lines, (size_t)n, sizeof *lines, cmp_name);
        for (int i = 0; i < n; i++) {
            fprintf(f, "%s\n", lines[i]);
            free(lines[i]);
        }
        free(lines);
    }
    fclose(f);
    if (rename(tmp, o->expected_path) != 0)
        fprintf(stderr, "cannot replace %s\n", o->expected_path);
    else
        printf("rewrote %s\n", o->expected_path);
}

/* --- reporting --- */

/* conformance_<backend>.tsv beside the tests/ folder of the build tree. */
static void write_summary(const options *o)
{
    char dir[4096], exe[4300];
    if (!program_dir(dir, sizeof dir))
        return;
    snprintf(exe, sizeof exe, "%s/../conformance_%s.tsv", dir, o->backend);
    FILE *f = fopen(exe, "w");
    if (!f)
        return;
    fprintf(f, "test\tresult\tseconds\treason\tfallbacks\tfallback kinds\n");
    for (int i = 0; i < ntests; i++) {
        const test_case *t = &tests[i];
        if (t->ran)
            fprintf(f, "%s\t%s\t%.3f\t%s\t%d\t%s\n", t->name, t->passed ? "pass" : "fail",
                    t->seconds, t->reason, t->fallbacks, t->fallback_kinds);
    }
    fclose(f);
    printf("summary: %s\n", exe);
}

typedef struct reason_count {
    char key[64];
    int count;
} reason_count;

static int cmp_count(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    return x->count != y->count ? y->count - x->count : strcmp(x->key, y->key);
}

/* Failure reasons grouped by their first words ("unsupported: If", "mismatch: output"). */
static void print_top_reasons(void)
{
    reason_count rc[512];
    int n = 0;
    for (int i = 0; i < ntests; i++) {
        const test_case *t = &tests[i];
        if (!t->ran || t->passed)
            continue;
        /* Quoted names dropped; cut before the first '(' and a mismatch's figures. */
        char key[64];
        size_t cut = 0;
        bool quoted = false;
        for (const char *p = t->reason; *p && *p != '(' && cut + 1 < sizeof key; p++) {
            if (!strncmp(p, " max rel err", 12))
                break;
            if (*p == '\'')
                quoted = !quoted;
            else if (!quoted && !(*p == ' ' && cut > 0 && key[cut - 1] == ' '))
                key[cut++] = *p;
        }
        while (cut > 0 && (key[cut - 1] == ' ' || key[cut - 1] == ':' || key[cut - 1] == ','))
            cut--;
        key[cut] = '\0';
        int k = 0;
        while (k < n && strcmp(rc[k].key, key) != 0)
            k++;
        if (k == n && n < 512) {
            snprintf(rc[n].key, sizeof rc[0].key, "%s", key);
            rc[n++].count = 0;
        }
        if (k < n)
            rc[k].count++;
    }
    qsort(rc, (size_t)n, sizeof *rc, cmp_count);
    printf("\ntop failure reasons:\n");
    for (int k = 0; k < n && k < 25; k++)
        printf("  %5d  %s\n", rc[k].count, rc[k].key);
}

/* The evaluator fallbacks of the passing tests (backends that have them): the total, the
 * tests with any, and the most common kinds. */
static void print_fallbacks(void)
{
    int total = 0, with = 0, known = 0;
    for (int i = 0; i < ntests; i++) {
        const test_case *t = &tests[i];
        if (!t->ran || !t->passed || t->fallbacks < 0)
            continue;
        known++;
        total += t->fallbacks;
        with += t->fallbacks > 0;
    }
    if (!known)
        return;
    printf("\nevaluator fallbacks: %d instructions in %d of the %d passing tests (per test in "
           "the summary file)\n", total, with, known);
    /* Tests per fallback kind, the most common first. */
    reason_count *kinds = calloc((size_t)with * 8 + 1, sizeof *kinds);
    int nk = 0;
    for (int i = 0; i < ntests && kinds; i++) {
        if (!tests[i].ran || !tests[i].passed || tests[i].fallbacks <= 0)
            continue;
        char buf[160];
        snprintf(buf, sizeof buf, "%s", tests[i].fallback_kinds);
        for (char *k = strtok(buf, ","); k && nk < with * 8; k = strtok(NULL, ",")) {
            int j = 0;
            while (j < nk && strcmp(kinds[j].key, k))
                j++;
            if (j == nk)
                snprintf(kinds[nk++].key, sizeof kinds[0].key, "%s", k);
            kinds[j].count++;
        }
    }
    if (kinds)
        qsort(kinds, (size_t)nk, sizeof *kinds, cmp_count);
    for (int j = 0; j < nk && j < 20; j++)
        printf("  %4d tests  %s\n", kinds[j].count, kinds[j].key);
    free(kinds);
}

static void parse_options(int argc, char **argv, options *o)
{
    const char *env;
    o->backend = (env = getenv("GLOWC_CONF_BACKEND")) && *env ? env : "interpreter";
    o->filter = (env = getenv("GLOWC_CONF_FILTER")) && *env ? env : NULL;
    o->jobs = (env = getenv("GLOWC_CONF_JOBS")) && *env ? atoi(env) : 2;
    o->timeout = (env = getenv("GLOWC_CONF_TIMEOUT")) && *env ? atoi(env) : 120;
#ifdef GLOWC_SANITIZE
    o->subset = true;
#endif
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--backend") && i + 1 < argc)
            o->backend = argv[++i];
        else if (!strcmp(a, "--jobs") && i + 1 < argc)
            o->jobs = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout") && i + 1 < argc)
            o->timeout = atoi(argv[++i]);
        else if (!strcmp(a, "--subset"))
            o->subset = true;
        else if (!strcmp(a, "--full"))
            o->subset = false;
        else if (!strcmp(a, "--update-expected"))
            o->update = true;
        else if (a[0] == '-') {
            fprintf(stderr, "unknown option %s\n", a);
            exit(1);
        } else
            o->filter = a;
    }
    if (o->jobs < 1 || o->jobs > 64)
        o->jobs = 2;
    if (o->timeout < 1)
        o->timeout = 120;
    const char *src = (env = getenv("GLOWC_SOURCE")) && *env ? env : ".";
    snprintf(o->expected_path, sizeof o->expected_path,
             "%s/tests/conformance/expected_failures_%s.txt", src, o->backend);
}

int main(int argc, char **argv)
{
    options o = { 0 };
    parse_options(argc, argv, &o);
    const char *shared = getenv("GLOWC_SHARED");
    if (!shared || !shared[0])
        shared = "../shared";
    int found = 0;
    for (int k = 0; k < NSUITES; k++)
        found += add_suite(k, &o);
    if (!found) {
        fprintf(stderr, "no tests under %s/onnx-node-tests\n", shared);
        return 1;
    }
    char bundle_tmp[] = "/tmp/glowc-conf-XXXXXX";
    if (!strcmp(o.backend, "bundle") && (!mkdtemp(bundle_tmp) || !conf_bundle_init(bundle_tmp)))
        return 1;
    char **others = NULL;
    int nothers = 0;
    if (!read_expected(o.expected_path, &others, &nothers))
        printf("note: no expected-failure list at %s\n", o.expected_path);
    printf("%d tests (%s%s%s), backend %s, %d jobs, %d s per test\n", ntests,
           o.subset ? "subset" : "all", o.filter ? ", filter " : "", o.filter ? o.filter : "",
           o.backend, o.jobs, o.timeout);
    fflush(stdout);

    double t0 = now();
    run_all(&o);
    double elapsed = now() - t0;

    int passed = 0, failed = 0, unexpected_fail = 0, unexpected_pass = 0;
    printf("\n");
    for (int k = 0; k < NSUITES; k++) {
        int p = 0, f = 0;
        for (int i = 0; i < ntests; i++)
            if (tests[i].suite == k && tests[i].ran)
                tests[i].passed ? p++ : f++;
        if (p + f)
            printf("%s: %d passed, %d failed (of %d)\n", suites[k], p, f, p + f);
        passed += p;
        failed += f;
    }
    print_top_reasons();
    print_fallbacks();
    printf("\nunexpected failures (not in the expected-failure list):\n");
    for (int i = 0; i < ntests; i++) {
        const test_case *t = &tests[i];
        if (t->ran && !t->passed && !t->listed) {
            printf("  %s  %s\n", t->name, t->reason);
            unexpected_fail++;
        }
    }
    printf("unexpected passes (listed as failing; remove them from the list):\n");
    for (int i = 0; i < ntests; i++) {
        const test_case *t = &tests[i];
        if (t->ran && t->passed && t->listed) {
            printf("  %s  (listed: %s)\n", t->name, t->listed_reason);
            unexpected_pass++;
        }
    }
    write_summary(&o);
    if (o.update)
        write_expected(&o, others, nothers);
    for (int i = 0; i < nothers; i++)
        free(others[i]);
    free(others);
    int bad = unexpected_fail + unexpected_pass;
    printf("\nall suites: %d passed, %d failed (of %d) in %.1f s; %d unexpected failures, %d "
           "unexpected passes\n", passed, failed, passed + failed, elapsed, unexpected_fail,
           unexpected_pass);
    /* The closing line CI reads: tests that pass as expected, tests whose outcome differs
     * from the expected-failure list (the failures of this test), and the listed known
     * failures as skipped, so the line never counts a failing model as passed. */
    printf("%d passed, %d failed, %d skipped\n", passed - unexpected_pass, bad,
           failed - unexpected_fail);
    free(tests);
    if (!strcmp(o.backend, "bundle"))
        conf_rmdir(bundle_tmp);
    return bad && !o.update ? 1 : 0;
}
