// glowc_spawn.h - For tests that run the glowc binary: a temporary folder, spawning glowc with
// its stdout and stderr captured, reading files whole, comparing them, and cleaning up.
// Include once per test program (after check.h); call spawn_setup first.
#ifndef GLOW_TEST_GLOWC_SPAWN_H
#define GLOW_TEST_GLOWC_SPAWN_H

#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/support.h"

extern char **environ;

static const char *glowc_bin;
static char tmpdir[256];

typedef struct result {
    int code;
    char *out, *err;
} result;

/* Sets glowc_bin from GLOWC_BIN and makes tmpdir (/tmp/<prefix>.XXXXXX); false on failure. */
static bool spawn_setup(const char *prefix)
{
    glowc_bin = getenv("GLOWC_BIN");
    if (!glowc_bin) {
        fprintf(stderr, "GLOWC_BIN must be set (CTest sets it)\n");
        return false;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%s.XXXXXX", prefix);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return false;
    }
    return true;
}

/* The whole file, NUL-terminated (an empty string when unreadable); *len its size. */
static char *slurp(const char *path, size_t *len)
{
    uint8_t *data = NULL;
    size_t size = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &size, &d) != GLOW_OK)
        return strdup("");
    if (len)
        *len = size;
    return (char *)data;
}

/* Runs glowc with args (NULL-terminated), its output captured in tmpdir. */
static result run(const char *const *args)
{
    char out_path[512], err_path[512];
    snprintf(out_path, sizeof out_path, "%s/stdout", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/stderr", tmpdir);
    const char *argv[40];
    int n = 0;
    argv[n++] = glowc_bin;
    for (; args[n - 1] && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    result r = { -1, NULL, NULL };
    if (posix_spawn(&pid, glowc_bin, &fa, NULL, (char *const *)argv, environ) == 0) {
        int st = 0;
        waitpid(pid, &st, 0);
        r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    posix_spawn_file_actions_destroy(&fa);
    r.out = slurp(out_path, NULL);
    r.err = slurp(err_path, NULL);
    printf("$ glowc");
    for (int i = 1; argv[i]; i++)
        printf(" %s", argv[i]);
    printf("  -> %d\n", r.code);
    if (r.code != 0 && r.err[0])
        printf("%s", r.err);
    return r;
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

#define RUN(...) run((const char *const[]){ __VA_ARGS__, NULL })

/* Declares char var[] holding tmpdir/name. */
#define TMP(var, name)  \
    char var[600];      \
    snprintf(var, sizeof var, "%s/%s", tmpdir, name)

/* Two non-empty files with the same bytes. */
static bool same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    bool same = la > 0 && la == lb && !memcmp(x, y, la);
    free(x);
    free(y);
    return same;
}

static int spawn_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes tmpdir and everything in it. */
static void spawn_cleanup(void)
{
    nftw(tmpdir, spawn_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
