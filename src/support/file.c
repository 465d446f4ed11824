// file.c - Whole-file reads, atomic writes (temp file + rename) and checked size arithmetic.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/support.h"

glow_status glow_read_file(const char *path, uint8_t **data, size_t *size, glow_diag *d)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return glow_fail(d, GLOW_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return glow_fail(d, GLOW_ERR_IO, "cannot stat '%s': %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return glow_fail(d, GLOW_ERR_IO, "cannot read '%s': %s", path, strerror(EISDIR));
    }
    /* Read in growing steps rather than trusting st_size: pipes and /proc report 0. */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot read '%s': %zu bytes do not fit in memory",
                         path, cap);
    }
    for (;;) {
        if (len + 1 >= cap) {
            size_t ncap = cap * 2;
            uint8_t *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return glow_fail(d, GLOW_ERR_TOO_LARGE, "cannot read '%s': out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - 1 - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                int e = errno;
                free(buf);
                fclose(f);
                return glow_fail(d, GLOW_ERR_IO, "cannot read '%s': %s", path,
                                 strerror(e ? e : EIO));
            }
            break;
        }
    }
    fclose(f);
    buf[len] = 0;
    *data = buf;
    *size = len;
    return GLOW_OK;
}

/* Writes `size` bytes at `offset` of fd; errno is set on failure. */
static bool write_all(int fd, const uint8_t *p, size_t size, uint64_t offset)
{
    while (size > 0) {
        ssize_t n = pwrite(fd, p, size, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        p += n;
        size -= (size_t)n;
        offset += (uint64_t)n;
    }
    return true;
}

glow_status glow_write_file_pieces(const char *path, uint64_t size, const glow_file_piece *pieces,
                                   size_t n, glow_diag *d)
{
    /* The temp file lives in the target's directory so rename() stays on one file system
     * and is atomic. */
    size_t plen = strlen(path);
    char *tmp = glow_xmalloc(plen + 16);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return glow_fail(d, GLOW_ERR_IO, "cannot create '%s': %s", path, strerror(e));
    }
    /* The gaps between pieces read as zeros (a sparse file where the file system allows). */
    bool ok = (uint64_t)(off_t)size == size && (off_t)size >= 0;
    if (!ok)
        errno = EFBIG;
    int r = -1;
    while (ok && (r = ftruncate(fd, (off_t)size)) != 0 && errno == EINTR)
        ;
    ok = ok && r == 0;
    for (size_t i = 0; ok && i < n; i++) {
        if (pieces[i].offset > size || pieces[i].size > size - pieces[i].offset) {
            errno = EINVAL; /* a piece past the end: the caller's mistake */
            ok = false;
        } else {
            ok = write_all(fd, pieces[i].data, pieces[i].size, pieces[i].offset);
        }
    }
    if (!ok) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return glow_fail(d, GLOW_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    /* mkstemp creates 0600; give the file the permissions a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return glow_fail(d, GLOW_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return glow_fail(d, GLOW_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    free(tmp);
    return GLOW_OK;
}

glow_status glow_write_file(const char *path, const void *data, size_t size, glow_diag *d)
{
    glow_file_piece whole = { 0, data, size };
    return glow_write_file_pieces(path, size, &whole, 1, d);
}

bool glow_make_dirs(const char *dir)
{
    size_t n = strlen(dir);
    char *p = glow_xmalloc(n + 1);
    memcpy(p, dir, n + 1);
    bool ok = n > 0;
    for (char *s = p + 1; ok && *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        ok = mkdir(p, 0777) == 0 || errno == EEXIST;
        *s = '/';
    }
    ok = ok && (mkdir(p, 0777) == 0 || errno == EEXIST);
    free(p);
    struct stat st;
    return ok && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

bool glow_mul_overflow_i64(int64_t a, int64_t b, int64_t *out)
{
    /* Despite the name, true means the product fits (support.h: false on overflow). */
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *out = 0;
        return false;
    }
    *out = r;
    return true;
}
