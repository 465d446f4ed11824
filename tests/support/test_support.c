// test_support.c - Arena, string map, diagnostics, file I/O and checked arithmetic.
#include <errno.h>
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "support/support.h"

static void test_arena(void)
{
    glow_arena a = { 0 };
    /* Every size from 1 to 100 gives a zeroed, 16-byte-aligned block. */
    for (size_t size = 1; size <= 100; size++) {
        unsigned char *p = glow_arena_alloc(&a, size);
        CHECK(((uintptr_t)p & 15) == 0);
        bool zero = true;
        for (size_t i = 0; i < size; i++)
            zero &= p[i] == 0;
        CHECK(zero);
        memset(p, 0xab, size);   /* must not disturb later allocations */
    }
    /* A large request gets its own chunk and is zeroed too; small ones keep working after. */
    size_t big = (size_t)1 << 20;
    unsigned char *b = glow_arena_alloc(&a, big);
    CHECK(((uintptr_t)b & 15) == 0);
    CHECK(b[0] == 0 && b[big / 2] == 0 && b[big - 1] == 0);
    memset(b, 0xcd, big);
    unsigned char *s = glow_arena_alloc(&a, 24);
    CHECK(((uintptr_t)s & 15) == 0);
    CHECK(s[0] == 0 && s[23] == 0);
    CHECK(s + 24 <= b || s >= b + big);
    CHECK(a.used_bytes >= big + 24);

    /* Absurd sizes fail cleanly. */
    CHECK(glow_arena_try_alloc(&a, SIZE_MAX / 2) == NULL);
    CHECK(glow_arena_try_alloc(&a, SIZE_MAX) == NULL);
    CHECK(glow_arena_try_alloc(&a, 0) != NULL);

    CHECK_STR_EQ(glow_arena_strdup(&a, "hello"), "hello");
    CHECK_STR_EQ(glow_arena_strndup(&a, "hello", 3), "hel");
    CHECK_STR_EQ(glow_arena_strndup(&a, "hi", 10), "hi");
    CHECK_STR_EQ(glow_arena_printf(&a, "%s-%d", "conv", 7), "conv-7");
    int arr[3] = { 1, 2, 3 };
    int *copy = glow_arena_memdup(&a, arr, sizeof(arr));
    CHECK(copy != arr && copy[0] == 1 && copy[2] == 3);

    /* Many allocations across chunks all stay distinct and intact. */
    int64_t *ptrs[2000];
    for (int i = 0; i < 2000; i++) {
        ptrs[i] = GLOW_NEW_ARRAY(&a, int64_t, 7);
        ptrs[i][0] = i;
        ptrs[i][6] = -i;
    }
    bool intact = true;
    for (int i = 0; i < 2000; i++)
        intact &= ptrs[i][0] == i && ptrs[i][6] == -i;
    CHECK(intact);

    glow_arena_reset(&a);
    CHECK(a.head == NULL);
    CHECK_EQ(a.used_bytes, 0);
    /* Reusable after reset. */
    CHECK(glow_arena_alloc(&a, 8) != NULL);
    glow_arena_release(&a);
}

static void test_strmap(void)
{
    glow_strmap m = { 0 };
    CHECK(glow_strmap_get(&m, "x") == NULL);
    CHECK(!glow_strmap_has(&m, "x"));
    enum { N = 10000 };
    static char keys[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "key%d", i);
        glow_strmap_put(&m, keys[i], (void *)(intptr_t)(i + 1));
    }
    CHECK_EQ(m.len, N);
    CHECK(10 * m.len <= 7 * m.cap);
    int found = 0;
    for (int i = 0; i < N; i++) {
        char probe[16];   /* a different pointer with the same text */
        snprintf(probe, sizeof(probe), "key%d", i);
        found += glow_strmap_get(&m, probe) == (void *)(intptr_t)(i + 1);
    }
    CHECK_EQ(found, N);
    CHECK(!glow_strmap_has(&m, "key10000"));
    CHECK(!glow_strmap_has(&m, ""));
    /* Overwrite keeps the count; NULL values still count as present. */
    glow_strmap_put(&m, keys[5], NULL);
    CHECK_EQ(m.len, N);
    CHECK(glow_strmap_has(&m, "key5"));
    CHECK(glow_strmap_get(&m, "key5") == NULL);
    glow_strmap_free(&m);
    CHECK(m.cap == 0 && m.keys == NULL);
}

static void test_diag(void)
{
    glow_diag d;
    memset(&d, 0x55, sizeof(d));
    glow_diag_clear(&d);
    CHECK_EQ(d.status, GLOW_OK);
    CHECK_STR_EQ(d.msg, "");
    CHECK_STR_EQ(glow_status_name(GLOW_OK), "ok");
    CHECK_STR_EQ(glow_status_name(GLOW_ERR_TOO_LARGE), "too large");
    CHECK_STR_EQ(glow_status_name((glow_status)999), "unknown status");

    CHECK_EQ(glow_fail(&d, GLOW_ERR_BAD_ATTR, "Conv '%s': bad pads", "c1"), GLOW_ERR_BAD_ATTR);
    CHECK_EQ(d.status, GLOW_ERR_BAD_ATTR);
    CHECK_STR_EQ(d.msg, "Conv 'c1': bad pads");
    CHECK_EQ(d.len, strlen(d.msg));
    /* Later failures keep the first status and append a line. */
    CHECK_EQ(glow_fail(&d, GLOW_ERR_PARSE, "while loading %d", 3), GLOW_ERR_PARSE);
    CHECK_EQ(d.status, GLOW_ERR_BAD_ATTR);
    CHECK_STR_EQ(d.msg, "Conv 'c1': bad pads\nwhile loading 3");

    /* Truncation: the buffer stays NUL-terminated and len consistent, however much we add. */
    char big[3000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    for (int i = 0; i < 5; i++)
        glow_fail(&d, GLOW_ERR_IO, "%s", big);
    CHECK(d.len < sizeof(d.msg));
    CHECK_EQ(strlen(d.msg), d.len);
    CHECK(d.len >= sizeof(d.msg) - 2);
    CHECK_EQ(d.status, GLOW_ERR_BAD_ATTR);
    CHECK(strncmp(d.msg, "Conv 'c1'", 9) == 0);

    glow_diag_clear(&d);
    glow_fail(&d, GLOW_ERR_IO, "%s", big);
    glow_fail(&d, GLOW_ERR_IO, "%s", big);
    CHECK_EQ(d.status, GLOW_ERR_IO);
    CHECK_EQ(strlen(d.msg), d.len);
    CHECK(d.msg[2999] == '\n');

    /* A NULL diag is allowed: the status still comes back. */
    CHECK_EQ(glow_fail(NULL, GLOW_ERR_USAGE, "ignored"), GLOW_ERR_USAGE);
}

static int count_entries_with_prefix(const char *dir, const char *prefix)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(dp);
    return n;
}

static void test_files(void)
{
    glow_diag d;
    glow_diag_clear(&d);
    char dir[] = "/tmp/glowc_test_support_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof(path), "%s/out.bin", dir);

    const char payload[] = "hello\0world";
    CHECK_EQ(glow_write_file(path, payload, sizeof(payload), &d), GLOW_OK);
    /* Overwrite with different content: atomic replace. */
    CHECK_EQ(glow_write_file(path, "abc", 3, &d), GLOW_OK);
    CHECK_EQ(count_entries_with_prefix(dir, "out.bin"), 1);   /* no temp file left */

    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_EQ(glow_read_file(path, &data, &size, &d), GLOW_OK);
    CHECK_EQ(size, 3);
    CHECK(data && memcmp(data, "abc", 3) == 0 && data[3] == 0);
    free(data);

    CHECK_EQ(glow_write_file(path, "", 0, &d), GLOW_OK);
    CHECK_EQ(glow_read_file(path, &data, &size, &d), GLOW_OK);
    CHECK_EQ(size, 0);
    CHECK(data && data[0] == 0);
    free(data);

    /* Errors name the path and the reason. */
    char missing[300];
    snprintf(missing, sizeof(missing), "%s/missing.onnx", dir);
    CHECK_EQ(glow_read_file(missing, &data, &size, &d), GLOW_ERR_IO);
    CHECK(data == NULL);
    CHECK_CONTAINS(d.msg, "missing.onnx");
    CHECK_CONTAINS(d.msg, strerror(ENOENT));
    glow_diag_clear(&d);
    CHECK_EQ(glow_read_file(dir, &data, &size, &d), GLOW_ERR_IO);
    CHECK_CONTAINS(d.msg, dir);
    glow_diag_clear(&d);
    snprintf(missing, sizeof(missing), "%s/no/such/dir/x.bin", dir);
    CHECK_EQ(glow_write_file(missing, "x", 1, &d), GLOW_ERR_IO);
    CHECK_CONTAINS(d.msg, "x.bin");

    /* Pieces in any order, zeros between them; a piece past the end is refused and the old
     * file stays as it was. */
    glow_diag_clear(&d);
    const glow_file_piece pieces[] = { { 6, "xyz", 3 }, { 1, "ab", 2 }, { 9, "", 0 } };
    CHECK_EQ(glow_write_file_pieces(path, 10, pieces, 3, &d), GLOW_OK);
    CHECK_EQ(glow_read_file(path, &data, &size, &d), GLOW_OK);
    CHECK_EQ(size, 10);
    CHECK(data && memcmp(data, "\0ab\0\0\0xyz\0", 10) == 0);
    free(data);
    const glow_file_piece wraps[] = { { 10, "x", SIZE_MAX } }; /* offset + size wraps */
    CHECK_EQ(glow_write_file_pieces(path, 10, wraps, 1, &d), GLOW_ERR_IO);
    CHECK_CONTAINS(d.msg, strerror(EINVAL));
    glow_diag_clear(&d);
    const glow_file_piece past[] = { { 0, "new", 3 }, { 8, "long", 4 } };
    CHECK_EQ(glow_write_file_pieces(path, 10, past, 2, &d), GLOW_ERR_IO);
    CHECK_CONTAINS(d.msg, "out.bin");
    CHECK_EQ(count_entries_with_prefix(dir, "out.bin"), 1);
    CHECK_EQ(glow_read_file(path, &data, &size, &d), GLOW_OK);
    CHECK(size == 10 && data && memcmp(data, "\0ab", 3) == 0);
    free(data);

    unlink(path);
    CHECK_EQ(rmdir(dir), 0);
}

static void test_checked_mul(void)
{
    int64_t r = 0;
    CHECK(glow_mul_overflow_i64(3, 4, &r) && r == 12);
    CHECK(glow_mul_overflow_i64(-3, 4, &r) && r == -12);
    CHECK(!glow_mul_overflow_i64(INT64_MAX, 2, &r));
    CHECK(!glow_mul_overflow_i64((int64_t)1 << 32, (int64_t)1 << 31, &r));
    CHECK(glow_mul_overflow_i64((int64_t)1 << 31, (int64_t)1 << 31, &r) && r == (int64_t)1 << 62);
    CHECK(!glow_mul_overflow_i64(INT64_MIN, -1, &r));
}

static void test_vec(void)
{
    GLOW_VEC(int) v = { 0 };
    for (int i = 0; i < 100; i++)
        GLOW_VEC_PUSH(v, i * i);
    CHECK_EQ(v.len, 100);
    CHECK_EQ(v.data[99], 99 * 99);
    GLOW_VEC_FREE(v);
    CHECK(v.data == NULL);
}

int main(void)
{
    test_arena();
    test_strmap();
    test_diag();
    test_files();
    test_checked_mul();
    test_vec();
    return CHECK_DONE();
}
