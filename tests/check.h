// check.h - Minimal assertions for test programs: failures print the expression and values.
#ifndef GLOW_TEST_CHECK_H
#define GLOW_TEST_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(c)                                                                  \
    do {                                                                          \
        check_count++;                                                            \
        if (!(c)) {                                                               \
            check_failures++;                                                     \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
        }                                                                         \
    } while (0)

#define CHECK_EQ(a, b)                                                                 \
    do {                                                                               \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                \
        check_count++;                                                                 \
        if (check_a_ != check_b_) {                                                    \
            check_failures++;                                                          \
            fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: %lld != %lld\n", __FILE__, \
                    __LINE__, #a, #b, check_a_, check_b_);                             \
        }                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                           \
    do {                                                                                \
        double check_a_ = (double)(a), check_b_ = (double)(b);                          \
        check_count++;                                                                  \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                                    \
            check_failures++;                                                           \
            fprintf(stderr, "%s:%d: CHECK_NEAR(%s, %s) failed: %.9g vs %.9g\n", __FILE__, \
                    __LINE__, #a, #b, check_a_, check_b_);                              \
        }                                                                               \
    } while (0)

#define CHECK_STR_EQ(a, b)                                                              \
    do {                                                                                \
        const char *check_a_ = (a), *check_b_ = (b);                                    \
        check_count++;                                                                  \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                \
            check_failures++;                                                           \
            fprintf(stderr, "%s:%d: CHECK_STR_EQ(%s, %s) failed:\n  got:      %s\n  expected: %s\n", \
                    __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",        \
                    check_b_ ? check_b_ : "(null)");                                    \
        }                                                                               \
    } while (0)

/* True when `hay` contains `needle`. */
#define CHECK_CONTAINS(hay, needle)                                                     \
    do {                                                                                \
        const char *check_h_ = (hay), *check_n_ = (needle);                             \
        check_count++;                                                                  \
        if (!check_h_ || !strstr(check_h_, check_n_)) {                                 \
            check_failures++;                                                           \
            fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__,  \
                    check_h_ ? check_h_ : "(null)", check_n_);                          \
        }                                                                               \
    } while (0)

/* Ends main(): prints a summary and returns the exit code. */
#define CHECK_DONE()                                                              \
    (printf("%d checks, %d failed\n", check_count, check_failures), check_failures ? 1 : 0)

#endif
