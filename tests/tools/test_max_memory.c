// test_max_memory.c - `--max-memory SIZE` on run, bench and compile: a model whose memory plan
// (constant + mutable + activation regions) exceeds the limit is refused at compile time with
// exit 2 and the figures; one within it runs; a bad SIZE is a usage error; and by default the
// limit is the machine's memory, so a model planning 256 GiB is refused before anything of
// that size is allocated (it would otherwise fail in mmap, or worse).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "testlib/onnx_build.h"
#include "testlib/spawn.h"

/* x f32[rows, cols] -> Relu -> Neg -> y: mutable region 2 * rows * cols * 4 bytes, plus an
 * activation of the same size. */
static bool write_model(const char *path, int64_t rows, int64_t cols)
{
    mk_model *mk = mk_new(13);
    mk_input(mk, "x", MK_F32, 2, (int64_t[]){ rows, cols });
    mk_node(mk, "Relu", "r", 1, (const char *[]){ "x" }, 1, (const char *[]){ "t" });
    mk_node(mk, "Neg", "n", 1, (const char *[]){ "t" }, 1, (const char *[]){ "y" });
    mk_output(mk, "y", MK_F32, 2, (int64_t[]){ rows, cols });
    bool ok = mk_write(mk, path);
    mk_free(mk);
    return ok;
}

int main(void)
{
    if (!spawn_setup("glowc_test_max_memory"))
        return 1;
    TMP(model, "m.onnx");     /* 1 MiB input and output: about 2-3 MiB planned */
    TMP(huge, "huge.onnx");   /* 256 GiB input and output */
    CHECK(write_model(model, 512, 512));
    CHECK(write_model(huge, (int64_t)1 << 20, (int64_t)1 << 15));

    /* Over the limit: refused with the figures, for every command that compiles. */
    result r = RUN("bench", model, "--iterations", "1", "--max-memory", "1M");
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "more than the limit of 1.00 MiB");
    CHECK_CONTAINS(r.err, "--max-memory");
    CHECK_CONTAINS(r.err, "mutable weights");
    CHECK_CONTAINS(r.err, "(1048576 bytes");
    result_free(&r);

    TMP(dir, "bundle");
    r = RUN("compile", model, "--emit-bundle", dir, "--max-memory=1536K");
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "more than the limit");
    result_free(&r);
    TMP(header, "bundle/m.h");
    CHECK(!exists(header));

    /* Within it: runs. */
    r = RUN("bench", model, "--iterations", "1", "--max-memory", "64MiB");
    CHECK_EQ(r.code, 0);
    result_free(&r);

    /* A size that is not one. */
    static const char *const bad[] = { "abc", "0", "12Q", "-5", "99999999999T", "" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = RUN("run", model, "--max-memory", bad[i]);
        CHECK_EQ(r.code, 1);
        CHECK_CONTAINS(r.err, "--max-memory wants a size");
        result_free(&r);
    }

    /* The default is the machine's memory: 256 GiB of plan is refused at compile time. */
    r = RUN("compile", huge, "--emit-bundle", dir);
    CHECK_EQ(r.code, 2);
    CHECK_CONTAINS(r.err, "more than the limit");
    CHECK_CONTAINS(r.err, "GiB");
    result_free(&r);

    spawn_cleanup();
    return CHECK_DONE();
}
