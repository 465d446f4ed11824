// inline_control.c - Puts lazy IF nodes back inline for code that cannot run their bodies
// (bundles: no evaluator to run a body in): both branches are copied into the function and
// WHERE selects each result, as the importer did before IF existed (docs/dynamic-shapes.md).
// LOOP nodes cannot be inlined (their trip count is not known); the bundle refuses them.
#include <stdio.h>

#include "lower/lower.h"

/* Copies node n of a body into f before `pos`, its operands mapped through aux (body values
 * -> f's nodes), placeholders to the IF's operands `args`, constants copied into f's module.
 * Returns the copy (NULL on failure). */
static glow_node *copy_node(glow_function *f, glow_node *pos, const glow_node *n,
                            const char *prefix, const glow_value *args, int nargs,
                            glow_node *const *inputs, int ninputs)
{
    glow_value *ins = GLOW_NEW_ARRAY(&f->module->arena, glow_value, n->nin + 1);
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_node *src = n->ins[i].node;
        if (src->kind == NK_PLACEHOLDER) {
            int k = 0;
            while (k < ninputs && inputs[k] != src)
                k++;
            if (k >= ninputs || k >= nargs)
                return NULL;
            ins[i] = args[k];
            continue;
        }
        if (src->kind == NK_CONSTANT && !src->aux)
            src->aux = glow_constant_create(f->module, src->name, &src->outs[0],
                                            src->payload.data);
        if (!src->aux)
            return NULL;
        ins[i] = glow_val(src->aux, n->ins[i].res);
    }
    char name[512];
    snprintf(name, sizeof name, "%s/%s", prefix, n->name);
    glow_node *c = glow_node_create(f, n->kind, glow_arena_strdup(&f->module->arena, name), ins,
                                    (int)n->nin, n->outs, (int)n->nout);
    if (!c)
        return NULL;
    for (uint32_t i = 0; i < n->nattr; i++) {
        const glow_attr *a = &n->attrs[i];
        switch (glow_attr_kind_of(a->id)) {
        case AK_INT: glow_node_set_int(c, a->id, a->v.i); break;
        case AK_FLOAT: glow_node_set_float(c, a->id, a->v.f); break;
        case AK_INTS: glow_node_set_ints(c, a->id, a->v.ints, (int)a->n); break;
        case AK_FLOATS: glow_node_set_floats(c, a->id, a->v.floats, (int)a->n); break;
        case AK_STR: glow_node_set_str(c, a->id, a->v.s); break;
        }
    }
    glow_node_move_before(c, pos);
    return c;
}

/* Copies body `id` before `pos`; outs[i] gets the value saved into its i-th output. */
static glow_status copy_body(glow_function *f, glow_node *pos, int64_t id, const char *prefix,
                             const glow_value *args, int nargs, glow_value *outs, int nout,
                             glow_diag *d)
{
    glow_module *m = glow_subgraph_module(id);
    glow_function *bf = m ? glow_module_function(m, "main") : NULL;
    if (!bf)
        return glow_fail(d, GLOW_ERR_INTERNAL, "If '%s': its body %lld is gone", pos->name,
                         (long long)id);
    int ninputs = 0, k = 0;
    for (glow_node *p = m->placeholders.first; p; p = p->next)
        ninputs += p->is_input;
    glow_node **inputs = GLOW_NEW_ARRAY(&f->module->arena, glow_node *, ninputs + 1);
    ninputs = 0;
    for (glow_node *p = m->placeholders.first; p; p = p->next)
        if (p->is_input)
            inputs[ninputs++] = p;
    for (glow_node *c = m->constants.first; c; c = c->next)
        c->aux = NULL;
    GLOW_FOR_EACH_NODE(bf, n) {
        if (n->kind == NK_SAVE) {
            glow_node *src = n->ins[0].node;
            if (k >= nout)
                return glow_fail(d, GLOW_ERR_INTERNAL, "If '%s': body %lld has more outputs",
                                 pos->name, (long long)id);
            if (src->kind == NK_PLACEHOLDER) {
                int j = 0;
                while (j < ninputs && inputs[j] != src)
                    j++;
                if (j >= nargs)
                    return glow_fail(d, GLOW_ERR_INTERNAL, "If '%s': a body input is missing",
                                     pos->name);
                outs[k++] = args[j];
            } else {
                if (src->kind == NK_CONSTANT && !src->aux)
                    src->aux = glow_constant_create(f->module, src->name, &src->outs[0],
                                                    src->payload.data);
                outs[k++] = glow_val(src->aux, n->ins[0].res);
            }
            continue;
        }
        n->aux = copy_node(f, pos, n, prefix, args, nargs, inputs, ninputs);
        if (!n->aux)
            return glow_fail(d, GLOW_ERR_INTERNAL, "If '%s': cannot copy '%s' of its body",
                             pos->name, n->name);
    }
    if (k != nout)
        return glow_fail(d, GLOW_ERR_INTERNAL, "If '%s': body %lld gives %d outputs, not %d",
                         pos->name, (long long)id, k, nout);
    return GLOW_OK;
}

/* cond (bool []) reshaped and broadcast to t's shape, before pos. */
static glow_status spread(glow_function *f, glow_node *pos, glow_value cond, const glow_type *t,
                          glow_value *out, glow_diag *d)
{
    *out = cond;
    if (t->rank == 0)
        return GLOW_OK;
    int64_t ones[GLOW_MAX_DIMS];
    for (int i = 0; i < t->rank; i++)
        ones[i] = 1;
    glow_type rt = glow_type_make(GLOW_BOOL, t->rank, ones), bt = glow_type_make(GLOW_BOOL,
                                                                                 t->rank, t->dims);
    glow_node *r = glow_build(f, NK_RESHAPE, pos->name, out, 1, NULL, 0, &rt, 1, d);
    if (!r)
        return d->status;
    glow_node_move_before(r, pos);
    glow_value rv = glow_val(r, 0);
    glow_node *b = glow_build(f, NK_BROADCAST, pos->name, &rv, 1, NULL, 0, &bt, 1, d);
    if (!b)
        return d->status;
    glow_node_move_before(b, pos);
    *out = glow_val(b, 0);
    return GLOW_OK;
}

glow_status glow_inline_if(glow_function *f, glow_diag *d)
{
    GLOW_FOR_EACH_NODE(f, n) {
        if (n->kind != NK_IF)
            continue;
        int k = (int)glow_node_int(n, GA_K, 0), nout = (int)n->nout;
        if (k < 0 || 1 + k > (int)n->nin)
            return glow_fail(d, GLOW_ERR_INTERNAL, "If '%s': bad operands", n->name);
        glow_value *a = GLOW_NEW_ARRAY(&f->module->arena, glow_value, 2 * nout);
        glow_value *b = a + nout;
        char prefix[512];
        snprintf(prefix, sizeof prefix, "%s/then", n->name);
        GLOW_TRY(copy_body(f, n, glow_node_int(n, GA_THEN_BRANCH, 0), prefix, n->ins + 1, k, a,
                           nout, d));
        snprintf(prefix, sizeof prefix, "%s/else", n->name);
        GLOW_TRY(copy_body(f, n, glow_node_int(n, GA_ELSE_BRANCH, 0), prefix, n->ins + 1 + k,
                           (int)n->nin - 1 - k, b, nout, d));
        for (int i = 0; i < nout; i++) {
            glow_value sel[3];
            GLOW_TRY(spread(f, n, n->ins[0], &n->outs[i], &sel[0], d));
            sel[1] = a[i];
            sel[2] = b[i];
            glow_node *w = glow_build(f, NK_WHERE, n->name, sel, 3, NULL, 0, NULL, 0, d);
            if (!w)
                return d->status;
            glow_node_move_before(w, n);
            glow_replace_all_uses(f, glow_val(n, (uint32_t)i), glow_val(w, 0));
        }
        glow_node_erase(n);
    }
    return GLOW_OK;
}
