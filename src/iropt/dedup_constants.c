// dedup_constants.c - Stores identical constant weights once: equal type and equal bytes make
// every use (and every view) of the later weight refer to the first, and the later weight
// leaves the declare section, so the constant region holds it once.
//
// Candidates are found by a hash of each weight's first and last SAMPLE_BYTES only, and the
// whole bytes compared where that hash matches: hashing every byte read each weight in full
// (a model's weights borrowed from the file mapping all came back into memory at once, before
// repacking reads them one layer at a time), and weights that differ almost always differ in
// their first values.
#include <stdlib.h>
#include <string.h>

#include "iropt/iropt_internal.h"

typedef struct {
    ir_value *v;
    uint64_t hash;
} entry;

static int by_hash(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->v->id < y->v->id ? -1 : x->v->id > y->v->id;
}

static const uint8_t *payload(const ir_value *v) { return v->storage->payload.data; }

#define SAMPLE_BYTES 4096

/* A hash of v's type, its size and its first and last SAMPLE_BYTES. */
static uint64_t sample_hash(const ir_value *v)
{
    size_t n = glow_type_bytes(&v->type);
    const uint8_t *p = payload(v);
    uint64_t h = glow_hash64(v->type.dims, sizeof(int64_t) * (size_t)v->type.rank,
                             (uint64_t)v->type.dtype * 1000003u + n);
    if (n <= 2 * SAMPLE_BYTES)
        return glow_hash64(p, n, h);
    return glow_hash64(p + n - SAMPLE_BYTES, SAMPLE_BYTES, glow_hash64(p, SAMPLE_BYTES, h));
}

static bool same_constant(const ir_value *a, const ir_value *b)
{
    size_t n = glow_type_bytes(&a->type);
    if (!glow_type_equal(&a->type, &b->type))
        return false;
    if (n == 0)
        return true;
    return payload(a) && payload(b) && memcmp(payload(a), payload(b), n) == 0;
}

/* Points every use of `dup` at `keep` and drops dup from the value list. */
static void merge(ir_function *f, ir_value *dup, ir_value *keep)
{
    for (ir_value *v = f->values; v; v = v->next)
        if (v->kind == IV_VIEW && v->base == dup)
            v->base = keep;
    for (ir_instr *in = f->first; in; in = in->next)
        for (uint32_t i = 0; i < in->nops; i++)
            if (in->ops[i].v == dup)
                in->ops[i].v = keep;
    ir_value *prev = NULL;
    for (ir_value *v = f->values; v; prev = v, v = v->next) {
        if (v != dup)
            continue;
        if (prev)
            prev->next = v->next;
        else
            f->values = v->next;
        if (f->values_last == v)
            f->values_last = prev;
        break;
    }
}

void ir_pass_dedup_constants(iropt_cx *cx)
{
    ir_function *f = cx->f;
    GLOW_VEC(entry) cs = { 0 };
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT || v->is_mutable || v->storage->kind != NK_CONSTANT)
            continue;
        if (glow_type_bytes(&v->type) && !payload(v))
            continue;
        entry e = { v, sample_hash(v) };
        GLOW_VEC_PUSH(cs, e);
    }
    if (cs.len)
        qsort(cs.data, cs.len, sizeof(entry), by_hash);
    /* Within a run of equal hashes, each weight merges into the earliest equal one (by id,
     * so the result does not depend on the sort's tie order). */
    for (size_t i = 0; i < cs.len; i++) {
        if (!cs.data[i].v)
            continue;
        for (size_t j = i + 1; j < cs.len && cs.data[j].hash == cs.data[i].hash; j++) {
            if (cs.data[j].v && same_constant(cs.data[i].v, cs.data[j].v)) {
                merge(f, cs.data[j].v, cs.data[i].v);
                cs.data[j].v = NULL;
                cx->changes++;
            }
        }
    }
    GLOW_VEC_FREE(cs);
}
