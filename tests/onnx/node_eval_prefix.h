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

/* Tests named <prefix>... for one of `prefixes` (NULL-terminated, each starting "test_"); `expanded` picks the
 * *_expanded variants (ONNX's function bodies) or the op's own tests. Prints one line for
 * each test that does not pass. */
static inline ne_totals ne_run_prefixes(const char *const *prefixes, bool expanded)
{
    ne_totals t = { 0 };
    int count;
    char **names = nt_list_tests(node_eval_dir(), &count);
    static const char *const tag[] = { "pass", "not loaded", "no evaluator", "MISMATCH" };
    for (int i = 0; i < count; i++) {
        bool match = false;
        for (const char *const *p = prefixes; *p; p++)
            match = match || strncmp(names[i], *p, strlen(*p)) == 0;
        size_t len = strlen(names[i]);
        bool is_exp = len > 9 && strcmp(names[i] + len - 9, "_expanded") == 0;
        if (!match || is_exp != expanded)
            continue;
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
    }
    nt_free_tests(names, count);
    return t;
}

static inline void ne_print_totals(const char *what, ne_totals t)
{
    printf("%s: %d tests, %d pass, %d not loaded, %d without evaluator, %d mismatch\n", what,
           t.total, t.pass, t.no_load, t.no_eval, t.mismatch);
}

#endif
