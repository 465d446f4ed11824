// node_eval_prefix.h - Runs every node-suite test whose name starts with given prefixes through
// node_eval.h and counts the outcomes, so op-family tests cover all of their ONNX tests.
#ifndef GLOW_TEST_NODE_EVAL_PREFIX_H
#define GLOW_TEST_NODE_EVAL_PREFIX_H

#include <dirent.h>

#include "node_eval.h"

typedef struct ne_totals {
    int total, pass, no_load, no_eval, mismatch;
} ne_totals;

/* Whether the node suite is present (tests skip otherwise). */
static inline bool ne_have_suite(void)
{
    DIR *dp = opendir(node_eval_dir());
    if (dp)
        closedir(dp);
    return dp != NULL;
}

static int ne_cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Tests named <prefix>... for one of `prefixes` (NULL-terminated); `expanded` picks the
 * *_expanded variants (ONNX's function bodies) or the op's own tests. Prints one line for
 * each test that does not pass. */
static inline ne_totals ne_run_prefixes(const char *const *prefixes, bool expanded)
{
    ne_totals t = { 0 };
    DIR *dp = opendir(node_eval_dir());
    if (!dp)
        return t;
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        bool match = false;
        for (const char *const *p = prefixes; *p; p++)
            match = match || strncmp(e->d_name, *p, strlen(*p)) == 0;
        size_t len = strlen(e->d_name);
        bool is_exp = len > 9 && strcmp(e->d_name + len - 9, "_expanded") == 0;
        if (!match || is_exp != expanded)
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(dp);
    if (count)
        qsort(names, count, sizeof *names, ne_cmp_name);
    static const char *const tag[] = { "pass", "not loaded", "no evaluator", "MISMATCH" };
    for (size_t i = 0; i < count; i++) {
        char why[600];
        node_eval_result r = node_eval(names[i], why, sizeof why);
        /* Test data glowc cannot read (rank above GLOW_MAX_DIMS) counts as not loaded. */
        if (r == NE_MISMATCH && strcmp(why, "no test data") == 0)
            r = NE_NO_LOAD;
        if (r != NE_PASS)
            printf("  %-12s %s: %.300s\n", tag[r], names[i], why);
        t.total++;
        t.pass += r == NE_PASS;
        t.no_load += r == NE_NO_LOAD;
        t.no_eval += r == NE_NO_EVAL;
        t.mismatch += r == NE_MISMATCH;
        free(names[i]);
    }
    free(names);
    return t;
}

static inline void ne_print_totals(const char *what, ne_totals t)
{
    printf("%s: %d tests, %d pass, %d not loaded, %d without evaluator, %d mismatch\n", what,
           t.total, t.pass, t.no_load, t.no_eval, t.mismatch);
}

#endif
