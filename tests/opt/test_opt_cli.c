// test_opt_cli.c - The optimizer's command-line options: glowc dump --stage optimized,
// --print-pipeline, --dump-after, --stats, --time-passes and --no-optimize for dump and run.
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static char out[1 << 20], err[1 << 16];

static char *slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* Runs `glowc ARGS` through the shell; returns the exit code, stdout and stderr in out/err. */
static int glowc(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "\"%s\" %s >/tmp/glowc_opt_cli.%d.out 2>/tmp/glowc_opt_cli.%d.err",
             getenv("GLOWC_BIN"), args, (int)getpid(), (int)getpid());
    int rc = system(cmd);
    char path[128];
    snprintf(path, sizeof path, "/tmp/glowc_opt_cli.%d.out", (int)getpid());
    slurp(path, out, sizeof out);
    remove(path);
    snprintf(path, sizeof path, "/tmp/glowc_opt_cli.%d.err", (int)getpid());
    slurp(path, err, sizeof err);
    remove(path);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int main(void)
{
    const char *shared = getenv("GLOWC_SHARED");
    if (!getenv("GLOWC_BIN") || !shared) {
        printf("GLOWC_BIN or GLOWC_SHARED not set; skipped\n");
        return 0;
    }
    char model[1024], input[1024], args[4096];
    snprintf(model, sizeof model, "%s/onnx-node-tests/light/test_shufflenet/model.onnx", shared);
    snprintf(input, sizeof input, "%s/onnx-node-tests/light/test_shufflenet/test_data_set_0/"
             "input_0.pb", shared);

    CHECK_EQ(glowc("dump --print-pipeline"), 0);
    CHECK_CONTAINS(out, "before lowering:");
    CHECK_CONTAINS(out, "fold_batchnorm");

    snprintf(args, sizeof args, "dump \"%s\" --stage optimized --stats", model);
    CHECK_EQ(glowc(args), 0);
    CHECK(!strstr(out, "BatchNormalization"));
    CHECK_CONTAINS(out, "function main");
    CHECK_CONTAINS(err, "fold_batchnorm");
    CHECK_CONTAINS(err, "removed");

    snprintf(args, sizeof args, "dump \"%s\" --stage optimized --no-optimize", model);
    CHECK_EQ(glowc(args), 0);
    CHECK_CONTAINS(out, "BatchNormalization");

    snprintf(args, sizeof args, "dump \"%s\" --stage lowered --dump-after=fold-batchnorm "
             "--time-passes", model);
    CHECK_EQ(glowc(args), 0);
    CHECK_CONTAINS(out, "# after fold_batchnorm (49 changes)");
    CHECK_CONTAINS(err, "after lowering");
    CHECK_CONTAINS(err, "total");

    snprintf(args, sizeof args, "dump \"%s\" --dump-after=nope", model);
    CHECK_EQ(glowc(args), 1);
    CHECK_CONTAINS(err, "--dump-after");

    snprintf(args, sizeof args, "run \"%s\" \"%s\" --stats", model, input);
    CHECK_EQ(glowc(args), 0);
    CHECK_CONTAINS(err, "fold_batchnorm");
    snprintf(args, sizeof args, "run \"%s\" \"%s\" --no-optimize", model, input);
    CHECK_EQ(glowc(args), 0);
    return CHECK_DONE();
}
