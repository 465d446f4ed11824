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
