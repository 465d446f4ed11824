// plan_bestfit.c - The memory planner: best fit over lifetime intervals (Glow's allocate-all),
// and the checker that proves a plan: no two live buffers overlap.
//
// Every activation is an interval of program positions, from its allocactivation to its
// deallocactivation, and an aligned size. Buffers are placed one at a time; each goes into
// the smallest free gap (address range) left by the already placed buffers whose intervals
// overlap its own, or above them all. The order matters, so a few orders are tried (largest
// first, longest-lived first, largest area first, program order) and the smallest region
// wins; every order is deterministic.
#include <stdlib.h>

#include "iropt/iropt_internal.h"

typedef struct pbuf {
    ir_value *v;
    uint32_t begin, end;        /* positions of allocactivation and deallocactivation */
    uint64_t size;              /* aligned, at least one alignment unit */
    uint64_t addr;
    double key;                 /* sort key of the order being tried */
} pbuf;

typedef struct range {
    uint64_t lo, hi;
} range;

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static int by_lo(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Orders tried; ties fall back to size, then program order (begin), so every order is total. */
enum { ORD_SIZE, ORD_LENGTH, ORD_AREA, ORD_PROGRAM, ORD_COUNT };

static double key_of(const pbuf *b, int order)
{
    double len = (double)(b->end - b->begin + 1);
    switch (order) {
    case ORD_SIZE: return (double)b->size;
    case ORD_LENGTH: return len;
    case ORD_AREA: return (double)b->size * len;
    default: return 0;
    }
}

static int by_order(const void *a, const void *b)
{
    const pbuf *x = *(pbuf *const *)a, *y = *(pbuf *const *)b;
    double kx = x->key, ky = y->key;
    if (kx != ky)
        return kx > ky ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static bool overlap_time(const pbuf *a, const pbuf *b)
{
    return a->begin <= b->end && b->begin <= a->end;
}

/* Places the buffers in the order of `ord`; returns the region size. */
static uint64_t place_all(pbuf **ord, size_t n, uint64_t align)
{
    GLOW_VEC(range) busy = { 0 };
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        pbuf *b = ord[i];
        busy.len = 0;
        for (size_t j = 0; j < i; j++) {
            if (overlap_time(b, ord[j])) {
                range r = { ord[j]->addr, ord[j]->addr + ord[j]->size };
                GLOW_VEC_PUSH(busy, r);
            }
        }
        if (busy.len)
            qsort(busy.data, busy.len, sizeof(range), by_lo);
        uint64_t at = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        for (size_t k = 0; k < busy.len; k++) {
            if (busy.data[k].lo > at) {
                uint64_t gap = busy.data[k].lo - at;
                if (gap >= b->size && gap < best_gap) {
                    best_gap = gap;
                    best = at;
                }
            }
            if (busy.data[k].hi > at)
                at = align_up(busy.data[k].hi, align);
        }
        b->addr = best != UINT64_MAX ? best : at;
        if (b->addr + b->size > top)
            top = b->addr + b->size;
    }
    GLOW_VEC_FREE(busy);
    return top;
}

/* Constants no instruction reads (a backend's prepare step replaced them by repacked copies)
 * are unused: they get no memory. */
static void mark_unused(ir_function *f)
{
    bool *used = glow_xcalloc(f->next_id ? f->next_id : 1, sizeof *used);
    for (const ir_instr *in = f->first; in; in = in->next)
        for (uint32_t i = 0; i < in->nops; i++)
            used[ir_root(in->ops[i].v)->id] = true;
    for (ir_value *v = f->values; v; v = v->next)
        v->unused = v->kind == IV_WEIGHT && !v->is_mutable && !used[v->id];
    free(used);
}

static void place_weights(ir_function *f, uint64_t align)
{
    f->constant_bytes = f->mutable_bytes = 0;
    mark_unused(f);
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT || v->unused)
            continue;
        uint64_t *region = v->is_mutable ? &f->mutable_bytes : &f->constant_bytes;
        v->addr = align_up(*region, align);
        *region = v->addr + glow_type_bytes(&v->type);
    }
    f->constant_bytes = align_up(f->constant_bytes, align);
    f->mutable_bytes = align_up(f->mutable_bytes, align);
}

glow_status ir_plan_memory_best_fit(ir_function *f, glow_diag *d)
{
    uint64_t align = f->alignment ? f->alignment : 64;
    place_weights(f, align);
    iropt_live lv;
    iropt_live_compute(f, &lv);
    uint32_t nins = 0;
    for (ir_instr *in = f->first; in; in = in->next)
        nins++;
    GLOW_VEC(pbuf) bufs = { 0 };
    for (ir_instr *in = f->first; in; in = in->next) {
        if (in->kind != IK_ALLOC)
            continue;
        ir_value *v = in->ops[0].v;
        const iropt_use *u = &lv.use[v->id];
        uint64_t size = align_up(glow_type_bytes(&v->type), align);
        pbuf b = { v, lv.pos[in->id], u->dealloc ? lv.pos[u->dealloc->id] : nins,
                   size ? size : align, 0, 0 };
        GLOW_VEC_PUSH(bufs, b);
    }
    iropt_live_free(&lv);
    size_t n = bufs.len;
    pbuf **ord = glow_xcalloc(n ? n : 1, sizeof(*ord));
    uint64_t *best_addr = glow_xcalloc(n ? n : 1, sizeof(*best_addr));
    uint64_t best = UINT64_MAX;
    /* Placement is quadratic in the buffers; huge programs try one order only. */
    int orders = n > 20000 ? 1 : ORD_COUNT;
    for (int order = 0; order < orders; order++) {
        for (size_t i = 0; i < n; i++) {
            ord[i] = &bufs.data[i];
            ord[i]->key = key_of(ord[i], order);
        }
        if (order != ORD_PROGRAM && n)
            qsort(ord, n, sizeof(*ord), by_order);
        uint64_t top = place_all(ord, n, align);
        if (top < best) {
            best = top;
            for (size_t i = 0; i < n; i++)
                best_addr[i] = bufs.data[i].addr;
        }
    }
    f->activation_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        bufs.data[i].v->addr = best_addr[i];
        if (best_addr[i] + bufs.data[i].size > f->activation_bytes)
            f->activation_bytes = best_addr[i] + bufs.data[i].size;
    }
    free(ord);
    free(best_addr);
    GLOW_VEC_FREE(bufs);
    for (ir_value *v = f->values; v; v = v->next)
        if (v->kind == IV_VIEW)
            v->addr = v->base->addr + v->view_offset;
    return ir_memory_check(f, d);
}

static const char *vname(const ir_value *v) { return v->name[0] ? v->name : "(unnamed)"; }

glow_status ir_memory_check(const ir_function *f, glow_diag *d)
{
    uint64_t align = f->alignment ? f->alignment : 64;
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (const ir_value *v = f->values; v; v = v->next) {
        uint64_t bytes = glow_type_bytes(&v->type);
        /* Activations the passes renamed away are no longer in the program. */
        if (v->kind == IV_ALLOC && !lv.use[v->id].alloc)
            continue;
        if (v->kind == IV_VIEW && v->base->kind == IV_ALLOC && !lv.use[v->base->id].alloc)
            continue;
        /* Weights nothing reads have no memory (ir_value.unused). */
        if (ir_root((ir_value *)v)->unused)
            continue;
        if (v->kind == IV_VIEW) {
            if (v->view_offset + bytes > glow_type_bytes(&v->base->type) ||
                v->addr != v->base->addr + v->view_offset) {
                iropt_live_free(&lv);
                return glow_fail(d, GLOW_ERR_INTERNAL, "memory plan: view %s leaves its base %s",
                                 vname(v), vname(v->base));
            }
            continue;
        }
        uint64_t region = v->kind == IV_ALLOC ? f->activation_bytes
                          : v->is_mutable     ? f->mutable_bytes
                                              : f->constant_bytes;
        if (v->addr % align || v->addr + bytes > region) {
            iropt_live_free(&lv);
            return glow_fail(d, GLOW_ERR_INTERNAL, "memory plan: %s at %llu (%llu bytes) is "
                             "misaligned or outside its region of %llu bytes", vname(v),
                             (unsigned long long)v->addr, (unsigned long long)bytes,
                             (unsigned long long)region);
        }
    }
    /* Weights of a region, and activations live at once, must not share a byte. */
    GLOW_VEC(pbuf) bufs = { 0 };
    uint32_t nins = 0;
    for (const ir_instr *in = f->first; in; in = in->next)
        nins++;
    for (ir_value *v = f->values; v; v = v->next) {
        const iropt_use *u = &lv.use[v->id];
        if (v->kind == IV_VIEW || (v->kind == IV_ALLOC && !u->alloc) || v->unused)
            continue;
        pbuf b = { v, 0, nins, glow_type_bytes(&v->type), v->addr, 0 };
        if (v->kind == IV_ALLOC) {
            b.begin = lv.pos[u->alloc->id];
            b.end = u->dealloc ? lv.pos[u->dealloc->id] : nins;
        }
        GLOW_VEC_PUSH(bufs, b);
    }
    iropt_live_free(&lv);
    glow_status s = GLOW_OK;
    for (size_t i = 0; i < bufs.len && s == GLOW_OK; i++) {
        const pbuf *a = &bufs.data[i];
        for (size_t j = i + 1; j < bufs.len; j++) {
            const pbuf *b = &bufs.data[j];
            bool same_region = a->v->kind == b->v->kind &&
                               (a->v->kind == IV_ALLOC || a->v->is_mutable == b->v->is_mutable);
            if (!same_region || !a->size || !b->size || !overlap_time(a, b))
                continue;
            if (a->addr < b->addr + b->size && b->addr < a->addr + a->size) {
                s = glow_fail(d, GLOW_ERR_INTERNAL, "memory plan: %s [%llu, %llu) and %s "
                              "[%llu, %llu) overlap while both are live", vname(a->v),
                              (unsigned long long)a->addr,
                              (unsigned long long)(a->addr + a->size), vname(b->v),
                              (unsigned long long)b->addr,
                              (unsigned long long)(b->addr + b->size));
                break;
            }
        }
    }
    GLOW_VEC_FREE(bufs);
    return s;
}
