// opt_util.c - Helpers the passes share: placing replacement nodes, rewiring uses while
// keeping user counts right, new constants, and recognizing splat constants.
#include <stdio.h>
#include <string.h>

#include "opt/opt_internal.h"

glow_node *opt_build(opt_cx *cx, glow_node *before, const glow_node *base, const char *what,
                     glow_node_kind k, const glow_value *ins, int nin, const glow_attr *attrs,
                     int nattr, const glow_type *declared)
{
    if (!opt_ok(cx))
        return NULL;
    char name[512];
    if (!what)
        snprintf(name, sizeof name, "%s", base->name);
    else if (base->name[0])
        snprintf(name, sizeof name, "%s/%s", base->name, what);
    else
        snprintf(name, sizeof name, "%u/%s", base->id, what);
    glow_node *n = glow_build(cx->f, k, name, ins, nin, attrs, nattr, declared,
                              declared ? 1 : 0, cx->d);
    if (!n) {
        cx->status = cx->d && cx->d->status != GLOW_OK ? cx->d->status : GLOW_ERR_INTERNAL;
        return NULL;
    }
    glow_node_move_before(n, before);
    for (int i = 0; i < nin; i++)
        ins[i].node->nusers++;
    n->nusers = 0;
    return n;
}

void opt_erase(glow_node *n)
{
    for (uint32_t i = 0; i < n->nin; i++)
        if (n->ins[i].node && n->ins[i].node->nusers > 0)
            n->ins[i].node->nusers--;
    glow_node_erase(n);
}

void opt_replace(opt_cx *cx, glow_node *n, glow_value to)
{
    glow_replace_all_uses(cx->f, glow_val(n, 0), to);
    to.node->nusers += n->nusers;
    n->nusers = 0;
    opt_erase(n);
    cx->changes++;
}

glow_node *opt_constant(opt_cx *cx, const glow_node *base, const char *what,
                        const glow_type *t, const void *data)
{
    if (!opt_ok(cx))
        return NULL;
    char name[512];
    if (base->name[0])
        snprintf(name, sizeof name, "%s/%s", base->name, what);
    else
        snprintf(name, sizeof name, "%u/%s", base->id, what);
    glow_node *c = glow_constant_create(cx->m, name, t, data);
    if (!c)
        cx->status = glow_fail(cx->d, GLOW_ERR_TOO_LARGE, "optimizer: no memory for constant "
                               "'%s'", name);
    return c;
}

bool opt_splat_value(glow_value v, double *value)
{
    const glow_node *n = v.node;
    if (!n)
        return false;
    if (n->kind == NK_SPLAT) {
        *value = glow_node_float(n, GA_VALUE, 0);
        return true;
    }
    if (n->kind != NK_CONSTANT || !n->payload.data)
        return false;
    const glow_type *t = &n->outs[0];
    if (glow_dtype_is_quantized(t->dtype))
        return false;
    int64_t numel = glow_type_numel(t);
    if (numel <= 0)
        return false;
    size_t es = glow_dtype_size(t->dtype);
    const uint8_t *p = n->payload.data;
    for (int64_t i = 1; i < numel; i++)
        if (memcmp(p, p + (size_t)i * es, es) != 0)
            return false;
    *value = glow_load_f64(t->dtype, p, 0);
    return true;
}

bool opt_is_splat_of(glow_value v, double value)
{
    double x;
    return opt_splat_value(v, &x) && x == value;
}

bool opt_is_unary_elem(glow_node_kind k)
{
    unsigned fl = glow_node_kind_flags(k);
    return (fl & NF_ELEMWISE) && glow_node_kind_max_in(k) == 1 && !(fl & NF_CMP);
}

bool opt_single_use(glow_value v)
{
    return v.node->nusers == 1;
}

void opt_set_operand(glow_node *n, uint32_t i, glow_value v)
{
    glow_node *old = n->ins[i].node;
    n->ins[i] = v;
    v.node->nusers++;
    if (old && old->nusers > 0 && --old->nusers == 0 && old->fn)
        opt_erase(old);
}
