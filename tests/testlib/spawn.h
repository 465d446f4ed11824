// spawn.h - Test support for programs that run the glowc binary: a temporary folder, glowc
// spawned with its stdout and stderr captured, files read whole and compared, and cleanup.
// Part of the test-support library (tests/testlib, linked into every test program).
//
//   if (!spawn_setup("glowc_test_x")) return 1;     // GLOWC_BIN, /tmp/glowc_test_x.XXXXXX
//   result r = RUN("info", "models/lenet.onnx");     // r.code, r.out, r.err
//   TMP(path, "out.pb");                             // char path[] = tmpdir/out.pb
//   result_free(&r);
//   spawn_cleanup();                                 // removes tmpdir and all in it
#ifndef GLOW_TEST_SPAWN_H
#define GLOW_TEST_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h> /* with unistd.h: mkdir, access, link, rmdir - what such tests use */
#include <unistd.h>

#include "testlib/files.h"

/* The glowc binary (from GLOWC_BIN) and the test's temporary folder, set by spawn_setup. */
extern const char *glowc_bin;
extern char tmpdir[256];

typedef struct result {
    int code;  /* exit status, or 128 + signal; -1 when glowc could not be started */
    char *out; /* captured stdout (malloc'd, NUL-terminated) */
    char *err; /* captured stderr (malloc'd, NUL-terminated) */
} result;

/* Sets glowc_bin from GLOWC_BIN and makes tmpdir (/tmp/<prefix>.XXXXXX); false on failure. */
bool spawn_setup(const char *prefix);

/* Runs glowc with args (NULL-terminated), its output captured in tmpdir/stdout and
 * tmpdir/stderr. Prints the command line and exit status, and stderr when it failed. */
result run(const char *const *args);

void result_free(result *r);

#define RUN(...) run((const char *const[]){ __VA_ARGS__, NULL })

/* Declares char var[] holding tmpdir/name. */
#define TMP(var, name) \
    char var[600];     \
    snprintf(var, sizeof var, "%s/%s", tmpdir, name)

/* Removes tmpdir and everything in it. */
void spawn_cleanup(void);

/* Runs the program argv[0] (a path) with argv (NULL-terminated), its stdout and stderr written
 * to out_path and err_path, and waits at most timeout_s seconds (0: no limit) before killing
 * it (*timed_out then set; may be NULL). Returns the exit status, 128 + the signal that ended
 * it, or -1 when it could not be started. For programs other than glowc (the fuzzer's bundle
 * drivers) and runs that may hang. */
int spawn_wait(const char *const *argv, const char *out_path, const char *err_path,
               int timeout_s, bool *timed_out);

/* spawn_wait in two halves, for children that run side by side: spawn_start returns the
 * child's pid (-1 when it could not start), spawn_finish waits for it as spawn_wait does
 * (the time limit counts from the call). */
pid_t spawn_start(const char *const *argv, const char *out_path, const char *err_path);
int spawn_finish(pid_t pid, int timeout_s, bool *timed_out);

#endif
