// hash.c - A fast non-cryptographic 128-bit hash of a byte string, for finding equal data
// (identical constants) and keying stored data (the compiled-code cache). Equal inputs always
// hash equal; different inputs collide with a chance near 2^-64 per lane, so users that must
// be exact (constant deduplication) still compare the bytes.
//
// Four independent lanes take 32 bytes per step, so the multiplies overlap instead of waiting
// on one another: hundreds of megabytes of weights hash in milliseconds, where a byte-at-a-time
// FNV-1a took a tenth of a second per pass.
#include <string.h>

#include "support/support.h"

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static uint64_t lane(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

void glow_hash_update(glow_hash *h, const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t l0 = h->s[0], l1 = h->s[1], l2 = h->s[2], l3 = h->s[3];
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        l0 = lane(l0, load64(p + i));
        l1 = lane(l1, load64(p + i + 8));
        l2 = lane(l2, load64(p + i + 16));
        l3 = lane(l3, load64(p + i + 24));
    }
    for (; i + 8 <= n; i += 8)
        l0 = lane(l0, load64(p + i));
    uint64_t tail = 0;
    memcpy(&tail, p + i, n - i);
    /* The length goes in so that inputs differing only by trailing zero bytes differ. */
    l1 = lane(l1, tail ^ ((uint64_t)n << 3));
    h->s[0] = l0;
    h->s[1] = l1;
    h->s[2] = l2;
    h->s[3] = l3;
}

void glow_hash_init(glow_hash *h, uint64_t seed)
{
    h->s[0] = 0x243f6a8885a308d3ull ^ seed;
    h->s[1] = 0x13198a2e03707344ull + seed;
    h->s[2] = 0xa4093822299f31d0ull ^ (seed << 1);
    h->s[3] = 0x082efa98ec4e6c89ull - seed;
}

void glow_hash_final(const glow_hash *h, uint64_t out[2])
{
    uint64_t a = mix64(h->s[0] ^ mix64(h->s[2])), b = mix64(h->s[1] ^ mix64(h->s[3]));
    out[0] = mix64(a + b);
    out[1] = mix64(b ^ (a >> 1) ^ 0x452821e638d01377ull);
}

uint64_t glow_hash64(const void *data, size_t n, uint64_t seed)
{
    glow_hash h;
    glow_hash_init(&h, seed);
    glow_hash_update(&h, data, n);
    uint64_t out[2];
    glow_hash_final(&h, out);
    return out[0];
}
