// merge_concat.c - Concat rewrites: a Concat operand that is a Concat along the same axis (and
// used only there) is replaced by its operands; a Slice taking exactly one operand of a
// Concat is that operand; a Concat of adjacent Slices of one tensor along the axis is one
// Slice.
// Requires: verified graph. Keeps: topological order; results bit-exact.
#include <string.h>

#include "opt/opt_internal.h"

#define MAX_IN 64

static void flatten(opt_cx *cx, glow_node *n)
{
    int64_t axis = glow_node_int(n, GA_AXIS, 0);
    glow_value ins[MAX_IN];
    int k = 0;
    bool any = false;
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_node *in = n->ins[i].node;
        if (in->kind == NK_CONCAT && in->nusers == 1 && glow_node_int(in, GA_AXIS, 0) == axis &&
            k + (int)in->nin + (int)(n->nin - i - 1) <= MAX_IN) {
            for (uint32_t j = 0; j < in->nin; j++)
                ins[k++] = in->ins[j];
            any = true;
        } else if (k < MAX_IN) {
            ins[k++] = n->ins[i];
        } else {
            return;
        }
    }
    if (!any)
        return;
    glow_node *nn = opt_build(cx, n, n, NULL, NK_CONCAT, ins, k, n->attrs, (int)n->nattr, NULL);
    if (!nn)
        return;
    opt_replace(cx, n, glow_val(nn, 0));
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_node *in = n->ins[i].node;
        if (in->kind == NK_CONCAT && in->nusers == 0 && in->fn)
            opt_erase(in);
    }
}

/* Slice parameters of s if it has unit steps and takes whole dims except along `axis`:
 * [*start, *end) along it. */
static bool simple_slice(const glow_node *s, int axis, int64_t *start, int64_t *end)
{
    const glow_type *t = glow_value_type(s->ins[0]);
    int ns = 0, ne = 0, nt = 0;
    const int64_t *st = glow_node_ints(s, GA_STARTS, &ns);
    const int64_t *en = glow_node_ints(s, GA_ENDS, &ne);
    const int64_t *sp = glow_node_ints(s, GA_STEPS, &nt);
    if (ns != t->rank || ne != t->rank || nt != t->rank || axis >= t->rank)
        return false;
    for (int k = 0; k < t->rank; k++) {
        if (sp[k] != 1)
            return false;
        if (k != axis && (st[k] != 0 || en[k] < t->dims[k]))
            return false;
    }
    *start = st[axis];
    *end = en[axis] < t->dims[axis] ? en[axis] : t->dims[axis];
    return *start <= *end;
}

static void slice_of_concat(opt_cx *cx, glow_node *s)
{
    glow_node *c = s->ins[0].node;
    int64_t axis = glow_node_int(c, GA_AXIS, 0), start, end, off = 0;
    if (!simple_slice(s, (int)axis, &start, &end))
        return;
    for (uint32_t i = 0; i < c->nin; i++) {
        int64_t len = glow_value_type(c->ins[i])->dims[axis];
        if (start == off && end == off + len &&
            glow_type_equal(glow_value_type(c->ins[i]), &s->outs[0])) {
            opt_replace(cx, s, c->ins[i]);
            return;
        }
        off += len;
    }
}

static void concat_of_slices(opt_cx *cx, glow_node *n)
{
    int64_t axis = glow_node_int(n, GA_AXIS, 0), first = 0, next = 0;
    glow_value src = { NULL, 0 };
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_node *s = n->ins[i].node;
        int64_t start, end;
        if (s->kind != NK_SLICE || !simple_slice(s, (int)axis, &start, &end))
            return;
        if (i == 0) {
            src = s->ins[0];
            first = start;
        } else if (s->ins[0].node != src.node || s->ins[0].res != src.res || start != next) {
            return;
        }
        next = end;
    }
    if (n->nin < 2 || !src.node)
        return;
    const glow_type *t = glow_value_type(src);
    int64_t starts[GLOW_MAX_DIMS] = { 0 }, ends[GLOW_MAX_DIMS], steps[GLOW_MAX_DIMS];
    for (int k = 0; k < t->rank; k++) {
        ends[k] = t->dims[k];
        steps[k] = 1;
    }
    starts[axis] = first;
    ends[axis] = next;
    glow_attr a[3] = { GLOW_AINTS(STARTS, starts, t->rank), GLOW_AINTS(ENDS, ends, t->rank),
                       GLOW_AINTS(STEPS, steps, t->rank) };
    glow_node *s = opt_build(cx, n, n, NULL, NK_SLICE, &src, 1, a, 3, NULL);
    if (!s)
        return;
    if (!glow_type_equal(&s->outs[0], &n->outs[0])) {
        opt_erase(s);
        return;
    }
    glow_node *old[MAX_IN];
    uint32_t nold = n->nin;
    for (uint32_t i = 0; i < nold; i++)
        old[i] = n->ins[i].node;
    opt_replace(cx, n, glow_val(s, 0));
    for (uint32_t i = 0; i < nold; i++)
        if (old[i]->nusers == 0 && old[i]->fn)
            opt_erase(old[i]);
}

void glow_pass_merge_concat(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_CONCAT && n->nin <= MAX_IN) {
            flatten(cx, n);
        } else if (n->kind == NK_SLICE && n->ins[0].node->kind == NK_CONCAT) {
            slice_of_concat(cx, n);
        }
    }
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_CONCAT && n->nin <= MAX_IN)
            concat_of_slices(cx, n);
    }
}
