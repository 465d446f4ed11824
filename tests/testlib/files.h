// files.h - Test support: reading files whole and comparing them (defined in spawn.c, beside
// the spawning whose output files they read). Part of the test-support library (tests/testlib).
#ifndef GLOW_TEST_FILES_H
#define GLOW_TEST_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The whole file, NUL-terminated (an empty string when unreadable); *len its size (len may be
 * NULL). */
char *slurp(const char *path, size_t *len);

/* The whole file (malloc'd, NUL-terminated), or NULL when it cannot be read; *size its size. */
uint8_t *read_whole(const char *path, size_t *size);

/* Two non-empty files with the same bytes. */
bool same_file(const char *a, const char *b);

/* The path exists. */
bool exists(const char *path);

/* The folder holding the running test program (build/<type>/tests): tests write figures
 * into the build tree beside it and find their sibling programs there. False when
 * /proc/self/exe cannot be read or does not fit. */
bool program_dir(char *dir, size_t size);

#endif
