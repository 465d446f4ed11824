// plan.c - Memory planner v1: weights packed into their regions, activations placed at fixed
// offsets of one region with first-fit reuse over lifetimes.
//
// Walking the program in order, allocactivation takes the lowest aligned offset where the
// buffer fits between the buffers live at that moment, and deallocactivation releases it.
// The IR optimizer's planner improves on this (size-ordered best fit); this version is
// deterministic, lifetime-aware, and checks its own result: no two live buffers overlap.
#include <stdlib.h>

#include "ir/ir.h"

typedef struct {
    uint64_t begin, end;  /* [begin, end) bytes */
    uint32_t id;
} live_buf;

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static int by_begin(const void *a, const void *b)
{
    const live_buf *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Lowest aligned offset where `size` bytes fit among the (sorted) live buffers. */
static uint64_t first_fit(const live_buf *live, size_t n, uint64_t size, uint64_t align)
{
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (at + size <= live[i].begin)
            return at;
        if (live[i].end > at)
            at = align_up(live[i].end, align);
    }
    return at;
}

glow_status ir_plan_memory(ir_function *f, glow_diag *d)
{
    uint64_t align = f->alignment ? f->alignment : 64;
    f->constant_bytes = f->mutable_bytes = f->activation_bytes = 0;
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind != IV_WEIGHT || v->unused)
            continue;
        uint64_t *region = v->is_mutable ? &f->mutable_bytes : &f->constant_bytes;
        v->addr = align_up(*region, align);
        *region = v->addr + glow_type_bytes(&v->type);
    }
    f->constant_bytes = align_up(f->constant_bytes, align);
    f->mutable_bytes = align_up(f->mutable_bytes, align);

    GLOW_VEC(live_buf) live = { 0 };
    glow_status s = GLOW_OK;
    for (ir_instr *in = f->first; in && s == GLOW_OK; in = in->next) {
        if (in->kind == IK_ALLOC) {
            ir_value *v = in->ops[0].v;
            uint64_t size = align_up(glow_type_bytes(&v->type), align);
            if (size == 0)
                size = align; /* empty tensors still get a distinct address */
            v->addr = first_fit(live.data, live.len, size, align);
            live_buf b = { v->addr, v->addr + size, v->id };
            GLOW_VEC_PUSH(live, b);
            qsort(live.data, live.len, sizeof(live_buf), by_begin);
            if (b.end > f->activation_bytes)
                f->activation_bytes = b.end;
            for (size_t i = 0; i + 1 < live.len; i++) {
                if (live.data[i].end > live.data[i + 1].begin)
                    s = glow_fail(d, GLOW_ERR_INTERNAL, "planner: buffers %u and %u overlap",
                                  live.data[i].id, live.data[i + 1].id);
            }
        } else if (in->kind == IK_DEALLOC) {
            ir_value *v = ir_root(in->ops[0].v);
            for (size_t i = 0; i < live.len; i++) {
                if (live.data[i].id == v->id) {
                    live.data[i] = live.data[--live.len];
                    break;
                }
            }
            qsort(live.data, live.len, sizeof(live_buf), by_begin);
        }
    }
    GLOW_VEC_FREE(live);
    /* Views share their base's address. */
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind == IV_VIEW)
            v->addr = v->base->addr + v->view_offset;
    }
    return s;
}
