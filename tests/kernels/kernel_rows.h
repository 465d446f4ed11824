// kernel_rows.h - The rows of kernels/kernels.def as a table for the kernel tests, and the
// driver every kernel test program runs: its own table of test functions keyed by kernel family
// ("<op>_<dtype>"), run once for every row of that family the host's ISA can run.
//
// `prog --list` prints the rows the program's table covers, one "op dtype isa" a line;
// test_kernel_rows runs every kernel test program that way and fails for a row no program
// covers, so adding a kernel family without a test fails the suite.
#ifndef GLOW_KERNEL_ROWS_H
#define GLOW_KERNEL_ROWS_H

#include <cpuid.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *op, *dtype, *isa;
    const char *name; /* gk_<op>_<dtype>_<isa> */
} gk_row;

static const gk_row gk_rows[] = {
#define KERNEL(op, dtype, isa, ...) { #op, #dtype, #isa, "gk_" #op "_" #dtype "_" #isa },
#include "../../kernels/kernels.def"
#undef KERNEL
};
enum { GK_NROWS = sizeof gk_rows / sizeof gk_rows[0] };

/* One test of a kernel family, called once per row of it the host can run. */
typedef struct {
    const char *family; /* "<op>_<dtype>" */
    void (*run)(const gk_row *row);
} kernel_test;

static inline bool gk_row_is(const gk_row *row, const char *family)
{
    size_t n = strlen(row->op);
    return !strncmp(family, row->op, n) && family[n] == '_' && !strcmp(family + n + 1, row->dtype);
}

/* Whether this CPU runs the row's ISA: the AVX2 kernels also use FMA; the AVX-512 ones
 * BW/VL/DQ (Zen 4 and Skylake-X have all); avx512vnni is avx512 plus VNNI, avxvnni is avx2
 * plus AVX-VNNI (CPUID leaf 7 subleaf 1, EAX bit 4: not every compiler's
 * __builtin_cpu_supports knows it). */
static inline bool gk_row_runs_here(const gk_row *row)
{
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#ifdef GLOWC_NATIVE_NO_AVX512 /* left out of this tree (kernels/native.cmake) */
    avx512 = false;
#endif
    if (!strcmp(row->isa, "avx2"))
        return avx2;
    if (!strcmp(row->isa, "avx512"))
        return avx512;
    if (!strcmp(row->isa, "avx512vnni")) {
#ifdef GLOWC_NATIVE_NO_AVX512VNNI
        return false;
#endif
        return avx512 && __builtin_cpu_supports("avx512vnni");
    }
    if (!strcmp(row->isa, "avxvnni")) {
#ifdef GLOWC_NATIVE_NO_AVXVNNI
        return false;
#endif
        unsigned a = 0, b = 0, c = 0, d = 0;
        return avx2 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
    }
    return !strcmp(row->isa, "scalar");
}

/* Runs every row covered by tests[] that this CPU can run; returns the number of table entries
 * that name no row of kernels.def (a stale entry is an error too). With --list it only prints
 * the rows covered and exits, with status 1 when an entry is stale. */
static inline int kernel_tests_run(int argc, char **argv, const kernel_test *tests, int ntests)
{
    bool list = argc > 1 && !strcmp(argv[1], "--list");
    int stale = 0;
    for (int t = 0; t < ntests; t++) {
        int rows = 0;
        for (int r = 0; r < GK_NROWS; r++) {
            const gk_row *row = &gk_rows[r];
            if (!gk_row_is(row, tests[t].family))
                continue;
            rows++;
            if (list)
                printf("%s %s %s\n", row->op, row->dtype, row->isa);
            else if (!gk_row_runs_here(row))
                printf("%s: no %s on this CPU, not tested\n", row->name, row->isa);
            else
                tests[t].run(row);
        }
        if (!rows) {
            fprintf(stderr, "test of '%s': no such kernel in kernels.def\n", tests[t].family);
            stale++;
        }
    }
    if (list)
        exit(stale ? 1 : 0);
    return stale;
}

#endif
