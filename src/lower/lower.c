// lower.c - The lowering driver: applies the per-kind rules until nothing changes, and the
// node builders the rules share.
//
// A rule builds its replacement with glow_build, which appends to the end of the function.
// The driver remembers the function's last node before the rule runs, so everything after
// it is the replacement: on success those nodes move (in order) to just before the lowered
// node, which keeps the function topologically ordered; on failure or when the rule declines
// they are erased, leaving the function as it was. Then every use of each result is rewired
// and the node erased. Rules may produce kinds that lower further (HardSwish builds a
// HardSigmoid), which is why the driver repeats whole passes until one changes nothing.
#include <stdio.h>

#include "lower/lower_internal.h"

/* Rules never produce their own kind in a lowerable form, so a few passes settle any graph;
 * the bound only turns a rule bug into an error instead of a hang. */
#define MAX_PASSES 16

static const lower_rule rules[NK_COUNT] = {
    [NK_GEMM] = lower_gemm,
    [NK_FULLY_CONNECTED] = lower_fully_connected,
    [NK_BATCH_NORM] = lower_batch_norm,
    [NK_INSTANCE_NORM] = lower_instance_norm,
    [NK_LAYER_NORM] = lower_layer_norm,
    [NK_GROUP_NORM] = lower_group_norm,
    [NK_RMS_NORM] = lower_rms_norm,
    [NK_LP_NORM] = lower_lp_norm,
    [NK_SOFTMAX] = lower_softmax,
    [NK_LOG_SOFTMAX] = lower_softmax,
    [NK_CLIP] = lower_clip,
    [NK_LEAKY_RELU] = lower_leaky_relu,
    [NK_PRELU] = lower_prelu,
    [NK_HARD_SIGMOID] = lower_hard_sigmoid,
    [NK_HARD_SWISH] = lower_hard_swish,
    [NK_PAD] = lower_pad,
    [NK_CONV] = lower_conv,
    [NK_CONV_TRANSPOSE] = lower_conv_transpose,
    [NK_MAX_POOL] = lower_spatial_1d,
    [NK_AVG_POOL] = lower_spatial_1d,
    [NK_LP_POOL] = lower_spatial_1d,
};

/* Rules that run only when asked for (glow_lower with a keep function that lets the node
 * through), never by default: splitting a grouped Conv per group multiplies nodes, and every
 * backend runs grouped convolutions whole. A 1-D Conv becomes 2-D by default. */
static bool on_request(const glow_node *n)
{
    return n->kind == NK_CONV && glow_value_type(n->ins[0])->rank != 3;
}

bool glow_lower_has_rule(glow_node_kind k)
{
    return (unsigned)k < NK_COUNT && rules[k] != NULL;
}

/* Removes the nodes a rule appended after `tail`. */
static void drop_after(glow_function *f, glow_node *tail)
{
    glow_node *p = tail ? tail->next : f->nodes.first;
    while (p) {
        glow_node *next = p->next;
        glow_node_erase(p);
        p = next;
    }
}

static glow_status apply(glow_function *f, glow_node *n, lower_rule rule, glow_diag *d,
                         bool *applied)
{
    glow_node *tail = f->nodes.last;
    lower_cx cx = { .f = f, .n = n, .d = d, .status = GLOW_OK };
    *applied = false;
    if (n->nout > LOWER_MAX_OUT)
        return GLOW_OK;
    rule(&cx, applied);
    if (cx.status == GLOW_OK && *applied) {
        for (uint32_t i = 0; i < n->nout; i++) {
            glow_value v = cx.out[i];
            if (!v.node || !glow_type_equal(glow_value_type(v), &n->outs[i])) {
                char want[112], got[112] = "nothing";
                glow_type_str(&n->outs[i], want, sizeof want);
                if (v.node)
                    glow_type_str(glow_value_type(v), got, sizeof got);
                cx.status = glow_fail(d, GLOW_ERR_INTERNAL, "lowering %s '%s': result %u "
                                      "became %s, expected %s", glow_node_kind_name(n->kind),
                                      n->name, i, got, want);
                break;
            }
        }
    }
    if (cx.status != GLOW_OK || !*applied) {
        drop_after(f, tail);
        *applied = false;
        return cx.status;
    }
    glow_node *p = tail->next;
    while (p) {
        glow_node *next = p->next;
        glow_node_move_before(p, n);
        p = next;
    }
    for (uint32_t i = 0; i < n->nout; i++)
        glow_replace_all_uses(f, glow_val(n, i), cx.out[i]);
    glow_node_erase(n);
    return GLOW_OK;
}

static glow_status lower_all(glow_function *f, glow_keep_fn keep, bool by_default,
                             glow_diag *d)
{
    for (int pass = 0; pass < MAX_PASSES; pass++) {
        bool changed = false;
        GLOW_FOR_EACH_NODE(f, n) {
            lower_rule rule = glow_lower_has_rule(n->kind) ? rules[n->kind] : NULL;
            if (!rule || (keep && keep(n)) || (by_default && on_request(n)))
                continue;
            bool applied;
            GLOW_TRY(apply(f, n, rule, d, &applied));
            changed |= applied;
        }
        if (!changed) {
#ifndef NDEBUG
            GLOW_TRY(glow_function_verify(f, d));
#endif
            return GLOW_OK;
        }
    }
    return glow_fail(d, GLOW_ERR_INTERNAL, "lowering function '%s' did not settle after %d "
                     "passes", f->name, MAX_PASSES);
}

glow_status glow_lower(glow_function *f, glow_keep_fn keep, glow_diag *d)
{
    return lower_all(f, keep, false, d);
}

glow_status glow_lower_for_backend(glow_function *f, glow_keep_fn keeps, glow_diag *d)
{
    return lower_all(f, keeps, true, d);
}

/* ---- builders ---- */

static void node_name(const lower_cx *cx, const char *what, char *buf, size_t size)
{
    if (cx->n->name[0])
        snprintf(buf, size, "%s/%s", cx->n->name, what);
    else
        snprintf(buf, size, "%u/%s", cx->n->id, what);
}

glow_value lw_build(lower_cx *cx, glow_node_kind k, const char *what, const glow_value *ins,
                    int nin, const glow_attr *attrs, int nattr, const glow_type *declared)
{
    return lw_build_n(cx, k, what, ins, nin, attrs, nattr, declared, declared ? 1 : 0);
}

glow_value lw_build_n(lower_cx *cx, glow_node_kind k, const char *what, const glow_value *ins,
                      int nin, const glow_attr *attrs, int nattr, const glow_type *declared,
                      int ndeclared)
{
    if (!lw_ok(cx))
        return lw_none();
    for (int i = 0; i < nin; i++)
        if (!ins[i].node)
            return lw_none();
    char name[512];
    node_name(cx, what, name, sizeof name);
    glow_node *r = glow_build(cx->f, k, name, ins, nin, attrs, nattr, declared, ndeclared,
                              cx->d);
    if (!r) {
        cx->status = cx->d && cx->d->status != GLOW_OK ? cx->d->status : GLOW_ERR_INTERNAL;
        return lw_none();
    }
    return glow_val(r, 0);
}

glow_value lw_un(lower_cx *cx, glow_node_kind k, const char *what, glow_value x)
{
    return lw_build(cx, k, what, &x, 1, NULL, 0, NULL);
}

glow_value lw_bin(lower_cx *cx, glow_node_kind k, const char *what, glow_value a, glow_value b)
{
    glow_value ins[2] = { a, b };
    return lw_build(cx, k, what, ins, 2, NULL, 0, NULL);
}

glow_value lw_splat(lower_cx *cx, const char *what, const glow_type *t, double value)
{
    glow_attr a = GLOW_AF(VALUE, value);
    return lw_build(cx, NK_SPLAT, what, NULL, 0, &a, 1, t);
}

glow_value lw_splat_like(lower_cx *cx, const char *what, glow_value v, double value)
{
    if (!lw_ok(cx) || !v.node)
        return lw_none();
    return lw_splat(cx, what, lw_type(v), value);
}

glow_value lw_scalar(lower_cx *cx, glow_node_kind k, const char *what, glow_value x,
                     double value)
{
    char sw[256];
    snprintf(sw, sizeof sw, "%s_c", what);
    return lw_bin(cx, k, what, x, lw_splat_like(cx, sw, x, value));
}

glow_value lw_reshape(lower_cx *cx, const char *what, glow_value x, int rank,
                      const int64_t *dims)
{
    if (!lw_ok(cx) || !x.node)
        return lw_none();
    glow_type t = *lw_type(x);
    glow_type r = glow_type_make(t.dtype, rank, dims);
    r.scale = t.scale;
    r.offset = t.offset;
    if (glow_type_same_shape(&r, &t))
        return x;
    return lw_build(cx, NK_RESHAPE, what, &x, 1, NULL, 0, &r);
}

glow_value lw_broadcast(lower_cx *cx, const char *what, glow_value x, const glow_type *t)
{
    if (!lw_ok(cx) || !x.node)
        return lw_none();
    const glow_type *xt = lw_type(x);
    if (glow_type_same_shape(xt, t))
        return x;
    glow_type r = glow_type_make(xt->dtype, t->rank, t->dims);
    r.scale = xt->scale;
    r.offset = xt->offset;
    return lw_build(cx, NK_BROADCAST, what, &x, 1, NULL, 0, &r);
}

glow_value lw_reduce(lower_cx *cx, glow_node_kind k, const char *what, glow_value x,
                     const int64_t *axes, int naxes, bool back)
{
    glow_attr a[2] = { GLOW_AINTS(AXES, axes, naxes), GLOW_AI(KEEPDIMS, 1) };
    glow_value r = lw_build(cx, k, what, &x, 1, a, 2, NULL);
    if (!back || !r.node)
        return r;
    char bw[256];
    snprintf(bw, sizeof bw, "%s_bcast", what);
    return lw_broadcast(cx, bw, r, lw_type(x));
}

glow_value lw_expand(lower_cx *cx, const char *what, glow_value v, const glow_type *t,
                     int axis)
{
    if (!lw_ok(cx) || !v.node)
        return lw_none();
    const glow_type *vt = lw_type(v);
    int64_t dims[GLOW_MAX_DIMS];
    for (int k = 0; k < t->rank; k++)
        dims[k] = k >= axis && k < axis + vt->rank ? vt->dims[k - axis] : 1;
    char rw[256], bw[256];
    snprintf(rw, sizeof rw, "%s_shape", what);
    snprintf(bw, sizeof bw, "%s_bcast", what);
    return lw_broadcast(cx, bw, lw_reshape(cx, rw, v, t->rank, dims), t);
}

glow_value lw_transpose(lower_cx *cx, const char *what, glow_value x, const int64_t *perm)
{
    if (!lw_ok(cx) || !x.node)
        return lw_none();
    glow_attr a = GLOW_AINTS(PERM, perm, lw_type(x)->rank);
    return lw_build(cx, NK_TRANSPOSE, what, &x, 1, &a, 1, NULL);
}

glow_value lw_slice(lower_cx *cx, const char *what, glow_value x, const int64_t *starts,
                    const int64_t *ends)
{
    if (!lw_ok(cx) || !x.node)
        return lw_none();
    int r = lw_type(x)->rank;
    int64_t steps[GLOW_MAX_DIMS];
    for (int k = 0; k < r; k++)
        steps[k] = 1;
    glow_attr a[3] = { GLOW_AINTS(STARTS, starts, r), GLOW_AINTS(ENDS, ends, r),
                       GLOW_AINTS(STEPS, steps, r) };
    return lw_build(cx, NK_SLICE, what, &x, 1, a, 3, NULL);
}
