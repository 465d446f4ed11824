// arena.c - Chunked bump allocator: zeroed 16-byte-aligned allocations, freed all at once.
//
// Chunks come from calloc, so memory is zero from the start and, since nothing is reused
// before glow_arena_reset, every allocation is zeroed without a memset. Requests larger than
// a quarter of the standard chunk get a chunk of their own, placed behind the current bump
// chunk so the space left there is not wasted. The heap functions glow_xmalloc & co live
// here too: they are the only other allocation path outside arenas. An arena may also hold
// borrowed allocations: ranges of a file mapping (glow_arena_borrow), freed like big ones.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "support/support.h"

#define CHUNK_SIZE ((size_t)64 * 1024)
#define ALIGN 16
#define BIG_REQUEST (CHUNK_SIZE / 4)
/* Chunks this large are mapped directly (weights, mostly). */
#define MAP_REQUEST ((size_t)256 * 1024)
/* Sizes beyond this are refused outright: no model needs a single allocation this large,
 * and refusing early keeps the size arithmetic below far from overflow. */
#define MAX_REQUEST ((size_t)1 << 46)

#ifdef GLOWC_SANITIZE
/* Model-declared sizes may be absurd, and the library promises a clean failure for them;
 * ASan would otherwise abort inside calloc instead of returning NULL. Weak, so a program
 * can still choose its own options. */
__attribute__((weak)) const char *__asan_default_options(void);
__attribute__((weak)) const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

struct glow_arena_chunk {
    glow_arena_chunk *next;
    size_t cap;    /* usable bytes from data */
    size_t used;
    unsigned char *data; /* 16-byte aligned start inside this block */
    bool alone;          /* holds one big request alone (glow_arena_free_alone may free it) */
    size_t mapped;       /* bytes mapped with mmap (0: from calloc) */
    glow_mapping *borrowed; /* data lies in this file mapping (glow_arena_borrow) */
};

static _Noreturn void out_of_memory(size_t size)
{
    fprintf(stderr, "glowc: out of memory (requesting %zu bytes)\n", size);
    fflush(stderr);
    abort();
}

void *glow_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        out_of_memory(size);
    return p;
}

void *glow_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *glow_xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        out_of_memory(size);
    return q;
}

static glow_arena_chunk *chunk_new(size_t cap)
{
    size_t header = sizeof(glow_arena_chunk);
    /* Header plus slack so the data start can be rounded up to ALIGN. */
    size_t total = header + ALIGN + cap;
    glow_arena_chunk *c;
    if (cap >= MAP_REQUEST) {
        /* Mapped, so that freeing it alone gives the memory back at once: a freed heap
         * block inside the heap stays resident until everything above it goes. */
        void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        c = m;
        c->mapped = total;
    } else {
        c = calloc(1, total);
        if (!c)
            return NULL;
    }
    uintptr_t start = (uintptr_t)c + header;
    start = (start + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    c->data = (unsigned char *)start;
    c->cap = cap;
    c->used = 0;
    return c;
}

static void chunk_free(glow_arena_chunk *c)
{
    if (c->borrowed) {
        /* Pages of a file: the process need not keep them, whoever else maps the file. */
        glow_mapping_drop(c->borrowed, c->data, c->cap);
        glow_mapping_unref(c->borrowed);
        free(c);
    } else if (c->mapped) {
        munmap(c, c->mapped);
    } else {
        free(c);
    }
}

/* Links a chunk holding one allocation behind the bump chunk (as big requests are). */
static void link_alone(glow_arena *a, glow_arena_chunk *c)
{
    c->alone = true;
    if (a->head) {
        c->next = a->head->next;
        a->head->next = c;
    } else {
        a->head = c;
    }
}

void *glow_arena_try_alloc(glow_arena *a, size_t size)
{
    if (size > MAX_REQUEST)
        return NULL;
    size_t rounded = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (rounded == 0)
        rounded = ALIGN;   /* distinct non-NULL pointers even for empty requests */
    glow_arena_chunk *head = a->head;
    if (head && head->cap - head->used >= rounded) {
        void *p = head->data + head->used;
        head->used += rounded;
        a->used_bytes += size;
        return p;
    }
    if (rounded >= BIG_REQUEST) {
        glow_arena_chunk *c = chunk_new(rounded);
        if (!c)
            return NULL;
        c->used = rounded;
        link_alone(a, c);
        a->used_bytes += size;
        return c->data;
    }
    glow_arena_chunk *c = chunk_new(CHUNK_SIZE);
    if (!c)
        return NULL;
    c->next = head;
    a->head = c;
    c->used = rounded;
    a->used_bytes += size;
    return c->data;
}

typedef struct addr_index {
    uintptr_t addr;
    size_t index;
} addr_index;

static int by_address(const void *a, const void *b)
{
    uintptr_t x = ((const addr_index *)a)->addr, y = ((const addr_index *)b)->addr;
    return x < y ? -1 : x > y;
}

size_t glow_arena_free_alone(glow_arena *a, void **ptrs, size_t n)
{
    if (n == 0)
        return 0;
    addr_index *sorted = glow_xmalloc(n * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sorted[i] = (addr_index){ (uintptr_t)ptrs[i], i };
    qsort(sorted, n, sizeof *sorted, by_address);
    size_t freed = 0;
    for (glow_arena_chunk **link = &a->head; *link;) {
        glow_arena_chunk *c = *link;
        addr_index key = { (uintptr_t)c->data, 0 };
        addr_index *hit = c->alone ? bsearch(&key, sorted, n, sizeof *sorted, by_address)
                                   : NULL;
        if (!hit) {
            link = &c->next;
            continue;
        }
        *link = c->next;
        a->used_bytes -= c->used <= a->used_bytes ? c->used : a->used_bytes;
        chunk_free(c);
        /* Every entry naming the chunk: equal addresses sit side by side once sorted. */
        addr_index *lo = hit, *hi = hit;
        while (lo > sorted && lo[-1].addr == key.addr)
            lo--;
        while (hi + 1 < sorted + n && hi[1].addr == key.addr)
            hi++;
        for (addr_index *e = lo; e <= hi; e++)
            ptrs[e->index] = NULL;
        freed++;
    }
    free(sorted);
    return freed;
}

void *glow_arena_borrow(glow_arena *a, glow_mapping *m, const void *p, size_t len)
{
    glow_arena_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    glow_mapping_ref(m);
    c->borrowed = m;
    c->data = (unsigned char *)p;
    c->cap = c->used = len;
    link_alone(a, c);
    a->used_bytes += len;
    return (void *)p;
}

static const glow_arena_chunk *find_alone(const glow_arena *a, const void *p)
{
    for (const glow_arena_chunk *c = a->head; c; c = c->next)
        if (c->alone && c->data == p)
            return c;
    return NULL;
}

glow_mapping *glow_arena_borrowed_from(const glow_arena *a, const void *p)
{
    const glow_arena_chunk *c = p ? find_alone(a, p) : NULL;
    return c ? c->borrowed : NULL;
}

void glow_arena_drop_pages(glow_arena *a, const void *alloc, const void *p, size_t len)
{
    const glow_arena_chunk *c = alloc ? find_alone(a, alloc) : NULL;
    if (!c || (!c->mapped && !c->borrowed))
        return;
    uintptr_t lo = (uintptr_t)c->data, x = (uintptr_t)p;
    if (x < lo || x - lo > c->cap || len > c->cap - (x - lo))
        return;
    glow_drop_pages(p, len);
}

void *glow_arena_alloc(glow_arena *a, size_t size)
{
    void *p = glow_arena_try_alloc(a, size);
    if (!p)
        out_of_memory(size);
    return p;
}

char *glow_arena_strndup(glow_arena *a, const char *s, size_t n)
{
    size_t len = 0;
    while (len < n && s[len])
        len++;
    char *p = glow_arena_alloc(a, len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *glow_arena_strdup(glow_arena *a, const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    char *p = glow_arena_alloc(a, len + 1);
    memcpy(p, s, len + 1);
    return p;
}

char *glow_arena_printf(glow_arena *a, const char *fmt, ...)
{
    /* Most strings fit the stack buffer; longer ones are formatted a second time. */
    char small[256];
    if (!fmt)
        fmt = "";   /* also keeps gcc 12 + UBSan from warning about a NULL format path */
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    char *p = glow_arena_alloc(a, (size_t)n + 1);
    if ((size_t)n < sizeof(small))
        memcpy(p, small, (size_t)n);
    else
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    p[n] = '\0';
    return p;
}

void *glow_arena_memdup(glow_arena *a, const void *p, size_t size)
{
    void *q = glow_arena_alloc(a, size);
    if (size)
        memcpy(q, p, size);
    return q;
}

void glow_arena_reset(glow_arena *a)
{
    glow_arena_chunk *c = a->head;
    while (c) {
        glow_arena_chunk *next = c->next;
        chunk_free(c);
        c = next;
    }
    a->head = NULL;
    a->used_bytes = 0;
}
