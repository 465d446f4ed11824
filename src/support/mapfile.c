// mapfile.c - Read-only file mappings that constants may borrow, shared by reference count.
//
// A model's weights are most of its bytes. Mapping the file lets the loader hand its large
// payloads to the module without copying them: the pages are the page cache's, resident only
// while something reads them, and glow_mapping_drop gives them back (MADV_DONTNEED on a
// private read-only mapping just unmaps the pages from this process; a later read faults them
// in again from the file). The mapping goes when its last borrower does.
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/support.h"

struct glow_mapping {
    const uint8_t *data;
    size_t size;
    atomic_int refs;
};

glow_mapping *glow_map_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    /* Only regular, non-empty files: pipes and /proc files report no size, and the caller's
     * read path gives the messages for everything else (directories, missing files). */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);   /* the mapping keeps the file */
    if (p == MAP_FAILED)
        return NULL;
    glow_mapping *m = malloc(sizeof *m);
    if (!m) {
        munmap(p, size);
        return NULL;
    }
    m->data = p;
    m->size = size;
    atomic_init(&m->refs, 1);
    return m;
}

const uint8_t *glow_mapping_data(const glow_mapping *m)
{
    return m->data;
}

size_t glow_mapping_size(const glow_mapping *m)
{
    return m->size;
}

bool glow_mapping_holds(const glow_mapping *m, const void *p, size_t len)
{
    if (!m)
        return false;
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)m->data;
    return a >= b && a - b <= m->size && len <= m->size - (a - b);
}

void glow_mapping_ref(glow_mapping *m)
{
    atomic_fetch_add(&m->refs, 1);
}

void glow_mapping_unref(glow_mapping *m)
{
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1)
        return;
    munmap((void *)m->data, m->size);
    free(m);
}

void glow_mapping_drop(const glow_mapping *m, const void *p, size_t len)
{
    if (!m || !glow_mapping_holds(m, p, len))
        return;
    glow_drop_pages(p, len);
}

void glow_drop_pages(const void *p, size_t len)
{
    /* Only whole pages inside the range: the pages at its ends may hold a neighbour's bytes,
     * which must stay as they are (for an anonymous mapping DONTNEED zeroes the pages). */
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
