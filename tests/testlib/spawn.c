// spawn.c - Test support: runs the glowc binary with its output captured, in a temporary
// folder the test owns (spawn.h), and reads files whole (files.h). Output goes to files rather
// than pipes so that a chatty glowc can never block on a full pipe while the test waits.
#include "testlib/spawn.h"

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/support.h"

extern char **environ;

const char *glowc_bin;
char tmpdir[256];

bool spawn_setup(const char *prefix)
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

uint8_t *read_whole(const char *path, size_t *size)
{
    uint8_t *data = NULL;
    size_t n = 0;
    glow_diag d = { 0 };
    if (glow_read_file(path, &data, &n, &d) != GLOW_OK)
        return NULL;
    *size = n;
    return data; /* glow_read_file NUL-terminates */
}

char *slurp(const char *path, size_t *len)
{
    size_t size = 0;
    uint8_t *data = read_whole(path, &size);
    if (!data)
        return strdup("");
    if (len)
        *len = size;
    return (char *)data;
}

result run(const char *const *args)
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
    if (posix_spawn(&pid, glowc_bin, &fa, NULL, (char *const *)argv, environ) != 0) {
        fprintf(stderr, "cannot run %s\n", glowc_bin);
    } else {
        int st = 0;
        waitpid(pid, &st, 0);
        r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    posix_spawn_file_actions_destroy(&fa);
    r.out = slurp(out_path, NULL);
    r.err = slurp(err_path, NULL);
    /* The log shows the arguments and glowc's errors escaped: tests feed names carrying
     * terminal escapes and invalid UTF-8 (test_untrusted_names), which must not reach the
     * terminal raw through the test's own echo either. */
    printf("$ glowc");
    for (int i = 1; argv[i]; i++) {
        putchar(' ');
        glow_escape_put(stdout, argv[i], GLOW_ESC_PLAIN);
    }
    printf("  -> %d\n", r.code);
    if (r.code != 0 && r.err[0]) {
        size_t n = glow_escape(NULL, 0, r.err, GLOW_ESC_PLAIN, GLOW_ESC_KEEP_NEWLINE, 0) + 1;
        char *safe = malloc(n);
        if (safe) {
            glow_escape(safe, n, r.err, GLOW_ESC_PLAIN, GLOW_ESC_KEEP_NEWLINE, 0);
            printf("%s", safe);
            free(safe);
        }
    }
    return r;
}

void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

bool same_file(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    bool same = la > 0 && la == lb && !memcmp(x, y, la);
    free(x);
    free(y);
    return same;
}

bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

bool program_dir(char *dir, size_t size)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return false;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return snprintf(dir, size, "%s", exe) < (int)size;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void spawn_cleanup(void)
{
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

pid_t spawn_start(const char *const *argv, const char *out_path, const char *err_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

int spawn_finish(pid_t pid, int timeout_s, bool *timed_out)
{
    if (timed_out)
        *timed_out = false;
    if (pid < 0)
        return -1;
    /* poll every 10 ms: a hung child is killed at the deadline instead of blocking us */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    pid_t w;
    while ((w = waitpid(pid, &st, WNOHANG)) == 0) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (timeout_s > 0 && t.tv_sec - t0.tv_sec >= timeout_s) {
            kill(pid, SIGKILL);
            w = waitpid(pid, &st, 0);
            if (timed_out)
                *timed_out = true;
            break;
        }
        nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
    }
    if (w < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int spawn_wait(const char *const *argv, const char *out_path, const char *err_path,
               int timeout_s, bool *timed_out)
{
    return spawn_finish(spawn_start(argv, out_path, err_path), timeout_s, timed_out);
}
