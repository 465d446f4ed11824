// schedule.c - Orders a function's nodes to keep peak live activation memory low.
//
// Glow's child-memory-size heuristic, in the Sethi-Ullman form: a node's requirement is the
// memory needed to compute it from scratch. Operands are evaluated one after another, each
// keeping its result alive while the next ones run, so the order that minimizes the peak is
// decreasing (requirement - result size). The schedule is a depth-first post-order from the
// function's SAVE nodes (in their original order) with operands in that order; shared
// operands are scheduled once. Ties keep the original order, so the result is deterministic.
// Nodes that no SAVE reaches keep their relative order at the end.
#include <stdlib.h>

#include "ir/ir.h"

typedef struct {
    uint64_t req;        /* memory to compute this node, results included */
    uint64_t size;       /* bytes of its results */
    uint32_t pos;        /* original position */
    bool done;
} sched_info;

typedef struct {
    glow_function *f;
    sched_info *info;    /* by node id */
    glow_node **order;
    uint32_t norder;
} sched;

static uint64_t result_bytes(const glow_node *n)
{
    uint64_t b = 0;
    for (uint32_t i = 0; i < n->nout; i++)
        b += glow_type_bytes(&n->outs[i]);
    return b;
}

static bool is_compute(const glow_node *n) { return !(glow_node_kind_flags(n->kind) & NF_STORAGE); }

/* Operand indices of n in evaluation order. */
static void operand_order(sched *s, const glow_node *n, uint32_t *idx)
{
    for (uint32_t i = 0; i < n->nin; i++)
        idx[i] = i;
    /* Insertion sort: decreasing (req - size), then original operand order. */
    for (uint32_t i = 1; i < n->nin; i++) {
        uint32_t k = idx[i];
        const glow_node *a = n->ins[k].node;
        int64_t ka = is_compute(a) ? (int64_t)(s->info[a->id].req - s->info[a->id].size) : -1;
        uint32_t j = i;
        while (j > 0) {
            const glow_node *b = n->ins[idx[j - 1]].node;
            int64_t kb = is_compute(b) ? (int64_t)(s->info[b->id].req - s->info[b->id].size) : -1;
            if (kb >= ka)
                break;
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = k;
    }
}

static void compute_requirements(sched *s)
{
    uint32_t idx[128];
    for (glow_node *n = s->f->nodes.first; n; n = n->next) {
        sched_info *si = &s->info[n->id];
        si->size = result_bytes(n);
        GLOW_ASSERT(n->nin <= 128);
        operand_order(s, n, idx);
        uint64_t held = 0, peak = 0;
        for (uint32_t i = 0; i < n->nin; i++) {
            const glow_node *a = n->ins[idx[i]].node;
            if (!is_compute(a))
                continue;
            uint64_t r = held + s->info[a->id].req;
            if (r > peak)
                peak = r;
            held += s->info[a->id].size;
        }
        si->req = peak > held + si->size ? peak : held + si->size;
    }
}

static void visit(sched *s, glow_node *n)
{
    /* Iterative post-order: deep networks would overflow the C stack recursively. */
    typedef struct { glow_node *n; uint32_t next; uint32_t idx[128]; } frame;
    GLOW_VEC(frame) st = { 0 };
    frame fr = { .n = n };
    operand_order(s, n, fr.idx);
    GLOW_VEC_PUSH(st, fr);
    s->info[n->id].done = true;
    while (st.len) {
        frame *top = &st.data[st.len - 1];
        if (top->next < top->n->nin) {
            glow_node *a = top->n->ins[top->idx[top->next++]].node;
            if (!is_compute(a) || s->info[a->id].done)
                continue;
            s->info[a->id].done = true;
            frame nf = { .n = a };
            operand_order(s, a, nf.idx);
            GLOW_VEC_PUSH(st, nf);
            continue;
        }
        s->order[s->norder++] = top->n;
        st.len--;
    }
    GLOW_VEC_FREE(st);
}

void glow_schedule(glow_function *f)
{
    sched s = { .f = f };
    uint32_t nids = f->module->next_id;
    s.info = glow_xcalloc(nids ? nids : 1, sizeof(*s.info));
    s.order = glow_xcalloc(f->nodes.count ? f->nodes.count : 1, sizeof(*s.order));
    uint32_t pos = 0;
    for (glow_node *n = f->nodes.first; n; n = n->next)
        s.info[n->id].pos = pos++;
    compute_requirements(&s);
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        if (n->kind == NK_SAVE && !s.info[n->id].done)
            visit(&s, n);
    }
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        if (!s.info[n->id].done)
            visit(&s, n);
    }
    /* Relink the list in the new order. */
    GLOW_ASSERT(s.norder == f->nodes.count);
    f->nodes.first = s.order[0];
    for (uint32_t i = 0; i < s.norder; i++) {
        s.order[i]->prev = i ? s.order[i - 1] : NULL;
        s.order[i]->next = i + 1 < s.norder ? s.order[i + 1] : NULL;
    }
    f->nodes.last = s.norder ? s.order[s.norder - 1] : NULL;
    if (!s.norder)
        f->nodes.first = NULL;
    free(s.info);
    free(s.order);
}
