// chain.c - Fusion of runs of elementwise instructions into one loop (gk_chain_f32_scalar).
//
// Consecutive instructions that select one same-size f32 elementwise kernel (unary, binary,
// Clip) join a chain when every buffer a step reads or writes is either exactly a buffer of
// an earlier step (same bytes: element i then depends only on element i of the steps
// before it) or disjoint from all of them. The chain runs as one loop in which each element
// goes through every step: one pass over memory, no barrier between the steps (each thread
// computes the same share of every step), and values that stay in registers between steps.
#include <string.h>

#include "backend/cpu/cpu_internal.h"

enum { ST_OP, ST_P, ST_Q, ST_A, ST_B, ST_Y };

static cpu_arg num(int64_t i) { return (cpu_arg){ .kind = CA_INT, .i = i }; }
static cpu_arg real(double f) { return (cpu_arg){ .kind = CA_REAL, .f = f }; }

bool cpu_chain_step(const cpu_call *c, int64_t *n, cpu_arg st[CPU_STEP_ARGS])
{
    const cpu_arg *a = c->args;
    cpu_arg none = { .kind = CA_NULL };
    if (!strcmp(c->fn, "gk_unary_f32_scalar") && c->nargs == 4) {
        *n = a[1].i;
        cpu_arg s[CPU_STEP_ARGS] = { a[0], real(0), real(0), a[2], none, a[3] };
        memcpy(st, s, sizeof s);
    } else if (!strcmp(c->fn, "gk_binary_f32_scalar") && c->nargs == 5) {
        *n = a[1].i;
        cpu_arg s[CPU_STEP_ARGS] = { num(-a[0].i), real(0), real(0), a[2], a[3], a[4] };
        memcpy(st, s, sizeof s);
    } else if (!strcmp(c->fn, "gk_act_f32_scalar") && c->nargs == 6 && a[0].i == 2) {
        *n = a[3].i;   /* act 2: clip (the only act the selector calls this kernel for) */
        cpu_arg s[CPU_STEP_ARGS] = { num(CPU_OP_CLIP), a[1], a[2], a[4], none, a[5] };
        memcpy(st, s, sizeof s);
    } else {
        return false;
    }
    return *n > 0;
}

/* Same bytes, or none in common, for two n-float buffers. */
static bool compatible(const cpu_arg *x, const cpu_arg *y, int64_t n)
{
    if (x->kind != CA_PTR || y->kind != CA_PTR || x->region != y->region ||
        x->offset == y->offset)
        return true;
    uint64_t bytes = (uint64_t)n * sizeof(float);
    return x->offset + bytes <= y->offset || y->offset + bytes <= x->offset;
}

bool cpu_chain_fits(const cpu_chain *ch, int64_t n, const cpu_arg st[CPU_STEP_ARGS])
{
    if (ch->nsteps == 0 || ch->nsteps >= CPU_CHAIN_MAX || n != ch->n)
        return false;
    static const int ptrs[3] = { ST_A, ST_B, ST_Y };
    for (int k = 0; k < ch->nsteps; k++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                /* Two reads never conflict. */
                if (ptrs[i] != ST_Y && ptrs[j] != ST_Y)
                    continue;
                if (!compatible(&st[ptrs[i]], &ch->step[k][ptrs[j]], n))
                    return false;
            }
    return true;
}

void cpu_chain_add(cpu_chain *ch, int64_t n, const cpu_arg st[CPU_STEP_ARGS])
{
    ch->n = n;
    memcpy(ch->step[ch->nsteps++], st, sizeof(cpu_arg) * CPU_STEP_ARGS);
}

void cpu_chain_call(const cpu_chain *ch, cpu_call *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->fn, sizeof out->fn, "gk_chain_f32_scalar");
    out->args[out->nargs++] = num(ch->n);
    out->args[out->nargs++] = num(ch->nsteps);
    for (int k = 0; k < CPU_CHAIN_MAX; k++)
        for (int i = 0; i < CPU_STEP_ARGS; i++) {
            cpu_arg a = k < ch->nsteps ? ch->step[k][i]
                        : i <= ST_Q    ? (i == ST_OP ? num(0) : real(0))
                                       : (cpu_arg){ .kind = CA_NULL };
            out->args[out->nargs++] = a;
        }
}
