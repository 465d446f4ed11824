// test_kernel_rows.c - Every row of kernels.def has a registered test: runs each kernel test
// program with --list and fails for a row none of them covers. Also tests the one scalar kernel
// no backend path calls yet (softmax) natively, against a naive reference, 1 and 3 threads.
//
// The kernel test programs are those built from tests/kernels/test_*.c (found in the source
// tree, the tests' working directory) and tests/cpu/test_cpu_kernels*.c, the scalar kernels'
// differential tests through the cpu backend (tests/cpu/cpu_diff.h); all are built beside
// this program.
#include "check.h"
#include "kernels_test.h"
#include "testlib/files.h"

#include <dirent.h>
#include <limits.h>
#include <unistd.h>

/* Softmax over the middle dim of [outer, axis, inner] in double, as the kernel specifies. */
static void test_softmax_shape(const gk_row *row, int outer, int axis, int inner)
{
    size_t count = (size_t)outer * axis * inner;
    float *x = rnd_buf(count), *want = rnd_buf(count), *y1 = rnd_buf(count), *y3 = rnd_buf(count);
    for (size_t i = 0; i < count; i++)
        x[i] *= 20.0f; /* large enough that exp without the max subtracted would overflow */
    for (int o = 0; o < outer; o++)
        for (int i = 0; i < inner; i++) {
            double mx = -INFINITY, sum = 0;
            for (int a = 0; a < axis; a++)
                mx = fmax(mx, x[((size_t)o * axis + a) * inner + i]);
            for (int a = 0; a < axis; a++)
                sum += exp(x[((size_t)o * axis + a) * inner + i] - mx);
            for (int a = 0; a < axis; a++) {
                size_t k = ((size_t)o * axis + a) * inner + i;
                want[k] = (float)(exp(x[k] - mx) / sum);
            }
        }
    __typeof__(gk_softmax_f32_scalar) *softmax = ROW_FN(row, gk_softmax_f32_scalar);
    softmax(x, y1, outer, axis, inner, 0, 1);
    for (int t = 0; t < 3; t++)
        softmax(x, y3, outer, axis, inner, t, 3);
    CHECK(max_rel_err(y1, want, count) < 1e-6);
    CHECK(memcmp(y1, y3, count * sizeof(float)) == 0);
    free(x), free(want), free(y1), free(y3);
}

static void test_softmax(const gk_row *row)
{
    test_softmax_shape(row, 1, 1, 1);
    test_softmax_shape(row, 3, 10, 1);
    test_softmax_shape(row, 2, 7, 5);
    test_softmax_shape(row, 1, 1000, 3);
}

/* Adds the rows `prog --list` prints to covered[]; false when the program did not run. */
static bool add_listed(const char *dir, const char *prog, bool *covered)
{
    char cmd[PATH_MAX + 64], line[256];
    snprintf(cmd, sizeof cmd, "'%s/%s' --list", dir, prog);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    while (fgets(line, sizeof line, p)) {
        char op[64], dtype[16], isa[16];
        if (sscanf(line, "%63s %15s %15s", op, dtype, isa) != 3)
            continue;
        for (int r = 0; r < GK_NROWS; r++)
            if (!strcmp(gk_rows[r].op, op) && !strcmp(gk_rows[r].dtype, dtype) &&
                !strcmp(gk_rows[r].isa, isa))
                covered[r] = true;
    }
    int status = pclose(p);
    if (status != 0)
        fprintf(stderr, "%s --list: exit status %d\n", prog, status);
    return status == 0;
}

/* Adds the rows of every program built from DIR/PREFIX*.c; returns how many ran. */
static int add_programs(const char *self, const char *dir, const char *prefix, bool *covered)
{
    int programs = 0;
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) || n < 3 ||
            strcmp(e->d_name + n - 2, ".c"))
            continue;
        char prog[256];
        snprintf(prog, sizeof prog, "%.*s", (int)(n - 2), e->d_name);
        CHECK(add_listed(self, prog, covered));
        programs++;
    }
    if (d)
        closedir(d);
    return programs;
}

static void check_coverage(void)
{
    char self[PATH_MAX];
    bool found = program_dir(self, sizeof self);
    CHECK(found);
    if (!found)
        return;

    bool covered[GK_NROWS] = { false };
    int programs = add_programs(self, "tests/kernels", "test_", covered);
    CHECK(programs >= 2);
    CHECK(add_programs(self, "tests/cpu", "test_cpu_kernels", covered) >= 1);
    int missing = 0;
    for (int r = 0; r < GK_NROWS; r++)
        if (!covered[r]) {
            fprintf(stderr, "kernels.def row %s has no registered test\n", gk_rows[r].name);
            missing++;
        }
    CHECK_EQ(missing, 0);
    printf("%d kernels.def rows, %d of them without a registered test\n", GK_NROWS, missing);
}

int main(int argc, char **argv)
{
    static const kernel_test tests[] = {
        { "softmax_f32", test_softmax },
    };
    srand(5);
    CHECK_EQ(kernel_tests_run(argc, argv, tests, sizeof tests / sizeof tests[0]), 0);
    check_coverage();
    return CHECK_DONE();
}
