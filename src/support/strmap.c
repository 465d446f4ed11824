// strmap.c - Open-addressing string map (FNV-1a hash, linear probing, grows at 70% load).
#include <stdlib.h>
#include <string.h>

#include "support/support.h"

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Index of `key`'s slot, or of the empty slot where it would go; cap is a power of two. */
static size_t find_slot(const char **keys, size_t cap, const char *key)
{
    size_t mask = cap - 1;
    size_t i = (size_t)hash_str(key) & mask;
    while (keys[i] && strcmp(keys[i], key) != 0)
        i = (i + 1) & mask;
    return i;
}

static void grow(glow_strmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 16;
    const char **keys = glow_xcalloc(cap, sizeof(*keys));
    void **vals = glow_xcalloc(cap, sizeof(*vals));
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = find_slot(keys, cap, m->keys[i]);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
}

void *glow_strmap_get(const glow_strmap *m, const char *key)
{
    if (!m->cap)
        return NULL;
    size_t i = find_slot(m->keys, m->cap, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

bool glow_strmap_has(const glow_strmap *m, const char *key)
{
    if (!m->cap)
        return false;
    return m->keys[find_slot(m->keys, m->cap, key)] != NULL;
}

void glow_strmap_put(glow_strmap *m, const char *key, void *val)
{
    /* Keep the load under 70% so probe sequences stay short and always end. */
    if (10 * (m->len + 1) > 7 * m->cap)
        grow(m);
    size_t i = find_slot(m->keys, m->cap, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->len++;
    }
    m->vals[i] = val;
}

void glow_strmap_free(glow_strmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->len = 0;
}
