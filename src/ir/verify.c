// verify.c - Checks an IR function: operand roles, and activation lifetimes.
//
// For every activation: one allocactivation before any other use, one deallocactivation
// after every use, and no read (@in / @inout) of a buffer before something wrote it. Views
// count as uses of their base. Weights are always readable; only mutable weights (the
// placeholders) may be written.
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

enum { ST_NONE, ST_ALLOCATED, ST_WRITTEN, ST_FREED };

static bool role_ok(const char *roles, uint32_t i, char role)
{
    size_t n = strlen(roles);
    if (i < n && roles[i] != '*')
        return roles[i] == role;
    /* Past the end: only a trailing "<letter>*" repeats. */
    return n >= 2 && roles[n - 1] == '*' && roles[n - 2] == role;
}

static uint32_t max_ops(const char *roles)
{
    size_t n = strlen(roles);
    return (n >= 1 && roles[n - 1] == '*') ? UINT32_MAX : (uint32_t)n;
}

static const char *vname(const ir_value *v) { return v->name[0] ? v->name : "(unnamed)"; }

glow_status ir_function_verify(const ir_function *f, glow_diag *d)
{
    uint8_t *state = glow_xcalloc(f->next_id ? f->next_id : 1, 1);
    glow_status s = GLOW_OK;
    for (const ir_instr *in = f->first; in && s == GLOW_OK; in = in->next) {
        const char *roles = ir_instr_roles(in->kind);
        const char *kname = ir_instr_kind_name(in->kind);
        if (in->nops > max_ops(roles)) {
            s = glow_fail(d, GLOW_ERR_INTERNAL, "IR %s '%s': %u operands, at most %u",
                          kname, in->name, in->nops, max_ops(roles));
            break;
        }
        for (uint32_t i = 0; i < in->nops && s == GLOW_OK; i++) {
            const ir_operand *op = &in->ops[i];
            ir_value *r = ir_root(op->v);
            /* Node-mirroring kinds may have fewer results than max_out (MaxPool without
             * its indices): nout says where the @in operands start. */
            bool ok = ir_kind_is_node(in->kind) ? op->role == (i < in->nout ? 'o' : 'i')
                                                : role_ok(roles, i, op->role);
            if (!ok) {
                s = glow_fail(d, GLOW_ERR_INTERNAL, "IR %s '%s': operand %u has role '%c'",
                              kname, in->name, i, op->role);
                break;
            }
            if (r->kind == IV_WEIGHT) {
                if (op->role != 'i' && !r->is_mutable)
                    s = glow_fail(d, GLOW_ERR_INTERNAL, "IR %s '%s': writes constant %s",
                                  kname, in->name, vname(r));
                continue;
            }
            uint8_t *st = &state[r->id];
            if (in->kind == IK_ALLOC) {
                if (*st != ST_NONE)
                    s = glow_fail(d, GLOW_ERR_INTERNAL, "IR: %s allocated twice", vname(r));
                *st = ST_ALLOCATED;
                continue;
            }
            if (in->kind == IK_DEALLOC) {
                if (*st != ST_ALLOCATED && *st != ST_WRITTEN)
                    s = glow_fail(d, GLOW_ERR_INTERNAL, "IR: %s deallocated while not live",
                                  vname(r));
                *st = ST_FREED;
                continue;
            }
            if (*st == ST_NONE || *st == ST_FREED) {
                s = glow_fail(d, GLOW_ERR_INTERNAL, "IR %s '%s': uses %s outside its lifetime",
                              kname, in->name, vname(r));
            } else if (op->role != 'o' && *st != ST_WRITTEN) {
                s = glow_fail(d, GLOW_ERR_INTERNAL, "IR %s '%s': reads %s before any write",
                              kname, in->name, vname(r));
            }
        }
        /* Results become readable only after the instruction: mark them afterwards. */
        if (in->kind != IK_ALLOC && in->kind != IK_DEALLOC) {
            for (uint32_t i = 0; i < in->nops; i++) {
                ir_value *r = ir_root(in->ops[i].v);
                if (r->kind == IV_ALLOC && in->ops[i].role != 'i' && state[r->id] == ST_ALLOCATED)
                    state[r->id] = ST_WRITTEN;
            }
        }
    }
    for (const ir_value *v = f->values; v && s == GLOW_OK; v = v->next) {
        if (v->kind == IV_ALLOC && state[v->id] != ST_FREED && state[v->id] != ST_NONE)
            s = glow_fail(d, GLOW_ERR_INTERNAL, "IR: %s is never deallocated", vname(v));
    }
    free(state);
    return s;
}
