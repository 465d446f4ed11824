// iropt_internal.h - What the IR pass driver (pipeline.c), the helpers (iropt_util.c) and the
// passes (one file each) share: the pass context, use analysis and rewriting helpers.
#ifndef GLOW_IROPT_INTERNAL_H
#define GLOW_IROPT_INTERNAL_H

#include "iropt/iropt.h"

/* One run of one pass: rewrites are counted in `changes`, failures go to status/d. */
typedef struct iropt_cx {
    ir_function *f;
    const ir_opt_options *o;
    glow_diag *d;
    glow_status status;
    int changes;
} iropt_cx;

#define IRPASS(id, name, desc) void ir_pass_##name(iropt_cx *cx);
#include "iropt/passes.def"
#undef IRPASS

/* --- iropt_util.c --- */

/* Uses of one buffer (a weight or an activation; views count as uses of their base). */
typedef struct iropt_use {
    ir_instr *alloc, *dealloc;      /* activations: their lifetime markers */
    ir_instr *first, *last;         /* first and last other instruction touching the buffer */
    uint32_t nwrites;               /* @out / @inout operands naming the buffer */
    uint32_t nuses;                 /* operands naming it, markers excluded */
} iropt_use;

/* Positions and uses of a function, valid until the next rewrite (arrays by id). */
typedef struct iropt_live {
    uint32_t n;                     /* ids covered: f->next_id when computed */
    uint32_t *pos;                  /* by instruction id: position in the program */
    iropt_use *use;                 /* by root value id */
} iropt_live;

void iropt_live_compute(const ir_function *f, iropt_live *lv);
void iropt_live_free(iropt_live *lv);
/* ir_root for const values. */
static inline const ir_value *iropt_croot(const ir_value *v)
{
    return v->kind == IV_VIEW ? v->base : v;
}
static inline const iropt_use *iropt_use_of(const iropt_live *lv, const ir_value *v)
{
    return &lv->use[iropt_croot(v)->id];
}

static inline bool iropt_is_marker(const ir_instr *in)
{
    return in->kind == IK_ALLOC || in->kind == IK_DEALLOC;
}
/* Byte offset of v in its root (0 for a root). */
static inline uint64_t iropt_offset(const ir_value *v)
{
    return v->kind == IV_VIEW ? v->view_offset : 0;
}
/* True when v covers its whole root (the root itself, or a view at 0 of the same size). */
bool iropt_is_whole(const ir_value *v);
/* Whether an instruction strictly between `after` and `before` (NULL: the program's ends)
 * touches root r (writes only when writes_only); alloc/dealloc markers do not count. */
bool iropt_touched_between(const ir_instr *after, const ir_instr *before, const ir_value *r,
                           bool writes_only);
/* Whether instruction `in` names root r in an operand other than index `skip` (-1: any). */
bool iropt_instr_uses(const ir_instr *in, const ir_value *r, int skip);
/* Replaces activation `from` (a root) by the bytes of `to` at byte offset `offset` (to may be a
 * view; its offset is added): operands naming `from` get `to` itself when the types agree and
 * the offset is 0, otherwise a view of to's root named like `from`; views of `from` are
 * re-based. from's allocactivation / deallocactivation are removed. The caller keeps the
 * program valid (iropt_fix_lifetimes extends to's lifetime). */
void iropt_replace_root(ir_function *f, ir_value *from, ir_value *to, uint64_t offset);
/* Moves allocactivations up and deallocactivations down as far as needed so every use of an
 * activation lies inside its lifetime. */
void iropt_fix_lifetimes(ir_function *f);
/* The first instruction after `in` that is not a lifetime marker (NULL at the end). Passes
 * walk with it: their rewrites remove or move markers and the rewritten instruction, never
 * another instruction, so it stays linked across a rewrite. */
static inline ir_instr *iropt_next(const ir_instr *in)
{
    ir_instr *n = in->next;
    while (n && (n->kind == IK_ALLOC || n->kind == IK_DEALLOC))
        n = n->next;
    return n;
}
/* The rename of iropt_replace_root + iropt_fix_lifetimes in time proportional to from's
 * lifetime, with lv kept up to date instead of recomputed (the general path walks every value
 * and instruction and then the analysis again, so a pass renaming along a chain of n
 * instructions took O(n^2)). Views of `from` used in the program are rebased as they are met
 * (every use lies in from's lifetime). The caller removes `gone` (NULL: nothing) right after,
 * so its operands leave the counts. False, nothing changed, where the merged first or last
 * use cannot be known without a scan (the caller then takes the general path). */
bool iropt_rename_local(ir_function *f, iropt_live *lv, ir_value *from, ir_value *to,
                        uint64_t offset, ir_instr *gone);
/* Removes instruction `in` from the program. */
static inline void iropt_erase(ir_function *f, ir_instr *in) { ir_instr_unlink(f, in); }
/* Attribute `id` of an instruction (NULL if absent). */
const glow_attr *iropt_attr(const ir_instr *in, glow_attr_id id);
/* A new instruction placed just before `pos` (NULL: at the end). */
ir_instr *iropt_insert(ir_function *f, ir_instr *pos, ir_instr_kind kind, const char *name,
                       const ir_operand *ops, int nops, int nout);

#endif
