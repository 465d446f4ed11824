// iropt_util.c - Helpers of the IR passes: use analysis (positions, first/last use, writes),
// renaming one buffer into another's bytes, and keeping lifetimes around the uses.
#include <stdlib.h>

#include "iropt/iropt_internal.h"

void iropt_live_compute(const ir_function *f, iropt_live *lv)
{
    lv->n = f->next_id;
    lv->pos = glow_xcalloc(lv->n ? lv->n : 1, sizeof(*lv->pos));
    lv->use = glow_xcalloc(lv->n ? lv->n : 1, sizeof(*lv->use));
    uint32_t p = 0;
    for (ir_instr *in = f->first; in; in = in->next) {
        lv->pos[in->id] = p++;
        for (uint32_t i = 0; i < in->nops; i++) {
            iropt_use *u = &lv->use[ir_root(in->ops[i].v)->id];
            if (in->kind == IK_ALLOC) {
                u->alloc = in;
                continue;
            }
            if (in->kind == IK_DEALLOC) {
                u->dealloc = in;
                continue;
            }
            if (!u->first)
                u->first = in;
            u->last = in;
            u->nuses++;
            if (in->ops[i].role != 'i')
                u->nwrites++;
        }
    }
}

void iropt_live_free(iropt_live *lv)
{
    free(lv->pos);
    free(lv->use);
    lv->pos = NULL;
    lv->use = NULL;
}

bool iropt_is_whole(const ir_value *v)
{
    if (v->kind != IV_VIEW)
        return true;
    return v->view_offset == 0 && glow_type_bytes(&v->type) == glow_type_bytes(&v->base->type);
}

bool iropt_instr_uses(const ir_instr *in, const ir_value *r, int skip)
{
    for (uint32_t i = 0; i < in->nops; i++)
        if ((int)i != skip && ir_root(in->ops[i].v) == r)
            return true;
    return false;
}

bool iropt_touched_between(const ir_instr *after, const ir_instr *before, const ir_value *r,
                           bool writes_only)
{
    for (const ir_instr *in = after ? after->next : NULL; in && in != before; in = in->next) {
        if (iropt_is_marker(in))
            continue;
        for (uint32_t i = 0; i < in->nops; i++) {
            if (ir_root(in->ops[i].v) == r && (!writes_only || in->ops[i].role != 'i'))
                return true;
        }
    }
    return false;
}

void iropt_replace_root(ir_function *f, ir_value *from, ir_value *to, uint64_t offset)
{
    GLOW_ASSERT(from->kind == IV_ALLOC);
    if (to->kind == IV_VIEW) {
        offset += to->view_offset;
        to = to->base;
    }
    GLOW_ASSERT(to != from);
    GLOW_ASSERT(offset + glow_type_bytes(&from->type) <= glow_type_bytes(&to->type));
    for (ir_value *v = f->values; v; v = v->next) {
        if (v->kind == IV_VIEW && v->base == from) {
            v->base = to;
            v->view_offset += offset;
        }
    }
    ir_value *as = NULL;
    if (offset == 0 && glow_type_equal(&from->type, &to->type))
        as = to;
    for (ir_instr *in = f->first, *next; in; in = next) {
        next = in->next;
        if (iropt_is_marker(in) && in->ops[0].v == from) {
            ir_instr_unlink(f, in);
            continue;
        }
        for (uint32_t i = 0; i < in->nops; i++) {
            if (in->ops[i].v != from)
                continue;
            if (!as)
                as = ir_view_create(f, from->name, to, &from->type, offset);
            in->ops[i].v = as;
        }
    }
}

void iropt_fix_lifetimes(ir_function *f)
{
    iropt_live lv;
    iropt_live_compute(f, &lv);
    for (ir_value *v = f->values; v; v = v->next) {
        iropt_use *u = &lv.use[v->id];
        if (v->kind != IV_ALLOC || !u->first)
            continue;
        /* Positions of moved markers are stale, but only the marker itself moves and the
         * uses' positions stay comparable: markers never count as uses. */
        if (u->alloc && lv.pos[u->alloc->id] > lv.pos[u->first->id]) {
            ir_instr_unlink(f, u->alloc);
            ir_instr_insert_before(f, u->first, u->alloc);
        }
        if (u->dealloc && lv.pos[u->dealloc->id] < lv.pos[u->last->id]) {
            ir_instr_unlink(f, u->dealloc);
            ir_instr_insert_before(f, u->last->next, u->dealloc);
        }
    }
    iropt_live_free(&lv);
}

const glow_attr *iropt_attr(const ir_instr *in, glow_attr_id id)
{
    for (uint32_t i = 0; i < in->nattr; i++)
        if (in->attrs[i].id == id)
            return &in->attrs[i];
    return NULL;
}

ir_instr *iropt_insert(ir_function *f, ir_instr *pos, ir_instr_kind kind, const char *name,
                       const ir_operand *ops, int nops, int nout)
{
    ir_instr *in = ir_instr_append(f, kind, name, ops, nops, nout, NULL, 0);
    if (pos) {
        ir_instr_unlink(f, in);
        ir_instr_insert_before(f, pos, in);
    }
    return in;
}

/* The earlier (want_first) or later of two uses, either possibly NULL. */
static ir_instr *pick(const iropt_live *lv, ir_instr *a, ir_instr *b, bool want_first)
{
    if (!a || !b)
        return a ? a : b;
    bool a_first = lv->pos[a->id] <= lv->pos[b->id];
    return a_first == want_first ? a : b;
}

bool iropt_rename_local(ir_function *f, iropt_live *lv, ir_value *from, ir_value *to,
                        uint64_t offset, ir_instr *gone)
{
    ir_value *rt = ir_root(to);
    offset += iropt_offset(to);
    if (from->kind != IV_ALLOC || rt == from || from->id >= lv->n || rt->id >= lv->n)
        return false;
    iropt_use *uo = &lv->use[from->id], *ut = &lv->use[rt->id];
    /* The merged first and last uses, `gone` left out. Exact when the one kept lies on the
     * far side of `gone` from where a record's dropped end was: every other use of a record
     * whose first (last) use was `gone` comes after (before) it. */
    ir_instr *first = pick(lv, ut->first == gone ? NULL : ut->first,
                           uo->first == gone ? NULL : uo->first, true);
    ir_instr *last = pick(lv, ut->last == gone ? NULL : ut->last,
                          uo->last == gone ? NULL : uo->last, false);
    /* A weight's first and last uses are never asked (it has no markers to place, and the
     * passes test the uses of activations alone), so only its counts are kept exact: a chain
     * starting at a graph input stays local too. */
    bool alloc = rt->kind == IV_ALLOC;
    if (gone && alloc) {
        bool first_dropped = ut->first == gone || uo->first == gone;
        bool last_dropped = ut->last == gone || uo->last == gone;
        if ((first_dropped && (!first || lv->pos[first->id] > lv->pos[gone->id])) ||
            (last_dropped && (!last || lv->pos[last->id] < lv->pos[gone->id])))
            return false;
    }
    if (alloc && (!first || !last))
        return false;
    /* gone's operands leave the counts (of both records: the caller removes it) */
    uint32_t uses = ut->nuses + uo->nuses, writes = ut->nwrites + uo->nwrites;
    for (uint32_t i = 0; gone && i < gone->nops; i++) {
        ir_value *r = ir_root(gone->ops[i].v);
        if (r == from || r == rt) {
            uses--;
            writes -= gone->ops[i].role != 'i';
        }
    }
    ir_value *as = offset == 0 && glow_type_equal(&from->type, &rt->type) ? rt : NULL;
    /* from's lifetime: its marker or first use up to its last use and its dealloc */
    bool need_last = uo->last != NULL, need_dealloc = uo->dealloc != NULL;
    ir_instr *start = uo->alloc ? uo->alloc : uo->first;
    for (ir_instr *p = start, *pnext; p && (need_last || need_dealloc); p = pnext) {
        pnext = p->next;
        need_last &= p != uo->last;
        need_dealloc &= p != uo->dealloc;
        if (iropt_is_marker(p) && p->ops[0].v == from) {
            ir_instr_unlink(f, p);
            continue;
        }
        for (uint32_t i = 0; i < p->nops; i++) {
            ir_value *v = p->ops[i].v;
            if (v->kind == IV_VIEW && v->base == from) {
                /* every use of a view of from lies in from's lifetime: rebased at its first;
                 * a view nothing uses stays on from, outside the program as from is */
                v->base = rt;
                v->view_offset += offset;
                continue;
            }
            if (v != from)
                continue;
            if (!as)
                as = ir_view_create(f, from->name, rt, &from->type, offset);
            p->ops[i].v = as;
        }
    }
    /* to's markers move out to cover the merged uses (as iropt_fix_lifetimes would); a moved
     * marker takes the position of the use it now sits next to */
    if (alloc && ut->alloc && lv->pos[ut->alloc->id] > lv->pos[first->id]) {
        ir_instr_unlink(f, ut->alloc);
        ir_instr_insert_before(f, first, ut->alloc);
        lv->pos[ut->alloc->id] = lv->pos[first->id];
    }
    if (alloc && ut->dealloc && lv->pos[ut->dealloc->id] < lv->pos[last->id]) {
        ir_instr_unlink(f, ut->dealloc);
        ir_instr_insert_before(f, last->next, ut->dealloc);
        lv->pos[ut->dealloc->id] = lv->pos[last->id];
    }
    ut->first = first;
    ut->last = last;
    ut->nuses = uses;
    ut->nwrites = writes;
    *uo = (iropt_use){ 0 };
    return true;
}
