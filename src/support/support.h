// support.h - Arena allocation, status codes with messages, string maps and small helpers.
#ifndef GLOW_SUPPORT_H
#define GLOW_SUPPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* --- status.c --- */

/* Every fallible library function returns a glow_status; the text goes to a glow_diag. */
typedef enum {
#define STATUS(id, text) GLOW_##id,
#include "status.def"
#undef STATUS
    GLOW_STATUS_COUNT
} glow_status;

/* Collects the message of the first failure (later ones append, one per line). */
typedef struct glow_diag {
    glow_status status;
    char msg[4096];
    size_t len;
} glow_diag;

const char *glow_status_name(glow_status s);
/* Records a failure and returns `s`, so callers can write `return glow_fail(d, ...)`. */
glow_status glow_fail(glow_diag *d, glow_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
glow_status glow_failv(glow_diag *d, glow_status s, const char *fmt, va_list ap);
void glow_diag_clear(glow_diag *d);

#define GLOW_TRY(expr)                         \
    do {                                       \
        glow_status glow_try_s_ = (expr);      \
        if (glow_try_s_ != GLOW_OK)            \
            return glow_try_s_;                \
    } while (0)

_Noreturn void glow_unreachable_at(const char *file, int line, const char *what);
#define GLOW_UNREACHABLE() glow_unreachable_at(__FILE__, __LINE__, __func__)
#define GLOW_ASSERT(c) ((c) ? (void)0 : glow_unreachable_at(__FILE__, __LINE__, #c))

/* --- escape.c --- */

/* How text read from a model (names, doc strings) is made safe where it is printed. All modes
 * keep printable ASCII and valid UTF-8 and show other bytes as \xNN; they differ in what the
 * surrounding syntax needs escaped besides. */
typedef enum {
    GLOW_ESC_PLAIN,    /* messages and text dumps */
    GLOW_ESC_QUOTED,   /* inside a C or DOT "string": \" and \\ as well */
    GLOW_ESC_JSON,     /* a JSON string body: \" \\ and \u00NN for control characters */
    GLOW_ESC_XML,      /* SVG/XML text and attributes: &lt; &gt; &amp; &quot; &#39; */
    GLOW_ESC_COMMENT,  /* inside a C block comment: never a comment end, start or trigraph */
} glow_esc_mode;
#define GLOW_ESC_KEEP_NEWLINE 1u   /* flag: a newline stays a newline (multi-line messages) */

/* Writes the escaped form of s into out (always NUL-terminated when size > 0); max_chars > 0
 * keeps that many characters of s and adds "...". Returns the full escaped length, as
 * snprintf does. */
size_t glow_escape(char *out, size_t size, const char *s, glow_esc_mode mode, unsigned flags,
                   size_t max_chars);
void glow_escape_put(FILE *out, const char *s, glow_esc_mode mode);
/* The plain escaped form of s, at most 160 characters and "...", in one of 8 per-thread
 * buffers: for quoting untrusted names in messages. */
const char *glow_esc(const char *s);
/* Length (2..4) of the valid, non-control UTF-8 sequence starting at s, or 0. */
size_t glow_utf8_len(const char *s);
/* True when s[0..len) holds only printable ASCII, valid UTF-8 (no C1 controls) and, when
 * allowed, newlines: what every escaped text satisfies (tests and fuzz targets check it). */
bool glow_text_is_safe(const char *s, size_t len, bool allow_newline);

/* --- sysmem.c --- */

/* The machine's physical memory in bytes (sysconf, else /proc/meminfo); 0 when unknown. */
uint64_t glow_machine_memory(void);
/* Reads a positive size: bytes, or with a binary unit K, M, G, T (also KiB, MB, ...). */
bool glow_parse_size(const char *s, uint64_t *out);
/* This process's resident memory now, anonymous and file-backed, in bytes; false when the
 * system does not say (no /proc). */
bool glow_process_rss(uint64_t *anon, uint64_t *file);

/* --- arena.c --- */

/* A bump allocator. Allocations are zeroed and 16-byte aligned; large ones get their own
 * chunk. Nothing is freed one by one: glow_arena_release frees everything. */
typedef struct glow_arena_chunk glow_arena_chunk;
typedef struct glow_arena {
    glow_arena_chunk *head;
    size_t used_bytes; /* payload bytes handed out, for statistics */
} glow_arena;

void *glow_arena_alloc(glow_arena *a, size_t size);
/* Like glow_arena_alloc, but returns NULL instead of aborting when memory runs out
 * (used for model-declared sizes, which may be absurd). */
void *glow_arena_try_alloc(glow_arena *a, size_t size);
char *glow_arena_strdup(glow_arena *a, const char *s);
char *glow_arena_strndup(glow_arena *a, const char *s, size_t n);
char *glow_arena_printf(glow_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *glow_arena_memdup(glow_arena *a, const void *p, size_t size);
void glow_arena_reset(glow_arena *a);   /* frees all chunks; the arena can be reused */
/* Frees the big allocations among ptrs[0 .. n) that have a chunk of their own (requests of
 * 16 KiB and more usually do), setting those entries to NULL; the others stay allocated
 * until the arena is reset. Returns how many were freed. For payloads nothing will read
 * again (weights once copied into a program's constant region). */
size_t glow_arena_free_alone(glow_arena *a, void **ptrs, size_t n);
#define glow_arena_release glow_arena_reset

/* --- mapfile.c --- */

/* A read-only mapping of a whole file, shared by reference count. */
typedef struct glow_mapping glow_mapping;

/* Maps a regular non-empty file read-only (one reference); NULL when it cannot, and the
 * caller then reads the file instead (glow_read_file says why it fails, if it does). */
glow_mapping *glow_map_file(const char *path);
const uint8_t *glow_mapping_data(const glow_mapping *m);
size_t glow_mapping_size(const glow_mapping *m);
/* True when [p, p + len) lies inside the mapping. */
bool glow_mapping_holds(const glow_mapping *m, const void *p, size_t len);
void glow_mapping_ref(glow_mapping *m);
/* Drops a reference; the last one unmaps the file. */
void glow_mapping_unref(glow_mapping *m);
/* Gives the whole pages of [p, p + len) back (a later read maps them in again). */
void glow_mapping_drop(const glow_mapping *m, const void *p, size_t len);
/* Gives the whole pages inside [p, p + len) of any private mapping back; an anonymous
 * mapping's dropped pages read as zeros afterwards, so only for bytes nothing reads again. */
void glow_drop_pages(const void *p, size_t len);

/* Records [p, p + len) of mapping m as an allocation of arena a that the arena does not
 * own: it holds a reference to m, and freeing it (glow_arena_free_alone, reset) drops the
 * pages and the reference. Returns p, or NULL when out of memory. The bytes are read-only. */
void *glow_arena_borrow(glow_arena *a, glow_mapping *m, const void *p, size_t len);
/* The mapping an allocation of a was borrowed from, or NULL for the arena's own memory. */
glow_mapping *glow_arena_borrowed_from(const glow_arena *a, const void *p);
/* Gives back the whole pages inside [p, p + len) of a's allocation starting at `alloc`
 * when it has a chunk of its own that is mapped (big payloads): for a payload read once
 * front to back whose read part nothing reads again. A no-op for other allocations. */
void glow_arena_drop_pages(glow_arena *a, const void *alloc, const void *p, size_t len);

#define GLOW_NEW(a, T) ((T *)glow_arena_alloc((a), sizeof(T)))
#define GLOW_NEW_ARRAY(a, T, n) ((T *)glow_arena_alloc((a), sizeof(T) * (size_t)(n)))

/* Aborting malloc/calloc/realloc for the few heap users outside arenas. */
void *glow_xmalloc(size_t size);
void *glow_xcalloc(size_t n, size_t size);
void *glow_xrealloc(void *p, size_t size);

/* --- strmap.c --- */

/* Open-addressing map from NUL-terminated string to pointer. Keys are not copied. */
typedef struct glow_strmap {
    const char **keys;
    void **vals;
    size_t cap, len;
} glow_strmap;

void *glow_strmap_get(const glow_strmap *m, const char *key);
bool glow_strmap_has(const glow_strmap *m, const char *key);
void glow_strmap_put(glow_strmap *m, const char *key, void *val);
void glow_strmap_free(glow_strmap *m);

/* --- vec.h (header-only growable arrays on the heap) --- */
#define GLOW_VEC(T) struct { T *data; size_t len, cap; }
#define GLOW_VEC_PUSH(v, x)                                                         \
    do {                                                                            \
        if ((v).len == (v).cap) {                                                   \
            (v).cap = (v).cap ? 2 * (v).cap : 8;                                    \
            (v).data = glow_xrealloc((v).data, (v).cap * sizeof(*(v).data));        \
        }                                                                           \
        (v).data[(v).len++] = (x);                                                  \
    } while (0)
#define GLOW_VEC_FREE(v) (free((v).data), (v).data = NULL, (v).len = (v).cap = 0)

/* --- file.c --- */

/* Reads a whole file into a malloc'd buffer (NUL-terminated beyond *size). */
glow_status glow_read_file(const char *path, uint8_t **data, size_t *size, glow_diag *d);
/* Writes atomically: to a temporary file beside `path`, then rename, so nothing is left
 * half-written on failure. */
glow_status glow_write_file(const char *path, const void *data, size_t size, glow_diag *d);
/* One run of a file being written: `size` bytes from `data`, `offset` bytes into the file. */
typedef struct glow_file_piece {
    uint64_t offset;
    const void *data;
    size_t size;
} glow_file_piece;
/* Writes a file of `size` bytes made of the n pieces, zeros between them, atomically as
 * glow_write_file does, without gathering them in memory first (a bundle's weights: each
 * Constant at its planned offset). Pieces may come in any order; they must not overlap. */
glow_status glow_write_file_pieces(const char *path, uint64_t size, const glow_file_piece *pieces,
                                   size_t n, glow_diag *d);
/* Creates directory dir and its missing parents; true when it then exists and this process
 * may create files in it. */
bool glow_make_dirs(const char *dir);

/* --- hash.c: a fast non-cryptographic hash (equal bytes hash equal; compare to be exact) --- */

typedef struct glow_hash {
    uint64_t s[4];
} glow_hash;
void glow_hash_init(glow_hash *h, uint64_t seed);
/* Adds n bytes. Updating in pieces hashes the piece boundaries too: hash a string whole, or
 * always in the same pieces. */
void glow_hash_update(glow_hash *h, const void *data, size_t n);
/* The 128-bit digest (h is unchanged). */
void glow_hash_final(const glow_hash *h, uint64_t out[2]);
/* The first 64 bits of the digest of one string. */
uint64_t glow_hash64(const void *data, size_t n, uint64_t seed);

/* Checked arithmetic on sizes derived from untrusted models. Return false on overflow. */
bool glow_mul_overflow_i64(int64_t a, int64_t b, int64_t *out);

#endif
