// arena.c - Chunked bump allocator: zeroed 16-byte-aligned allocations, freed all at once.
//
// Chunks come from calloc, so memory is zero from the start and, since nothing is reused
// before glow_arena_reset, every allocation is zeroed without a memset. Requests larger than
// a quarter of the standard chunk get a chunk of their own, placed behind the current bump
// chunk so the space left there is not wasted. The heap functions glow_xmalloc & co live
// here too: they are the only other allocation path outside arenas.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

#define CHUNK_SIZE ((size_t)64 * 1024)
#define ALIGN 16
#define BIG_REQUEST (CHUNK_SIZE / 4)
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
    glow_arena_chunk *c = calloc(1, header + ALIGN + cap);
    if (!c)
        return NULL;
    uintptr_t start = (uintptr_t)c + header;
    start = (start + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    c->data = (unsigned char *)start;
    c->cap = cap;
    c->used = 0;
    return c;
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
        if (head) {
            c->next = head->next;
            head->next = c;
        } else {
            a->head = c;
        }
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
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used_bytes = 0;
}
