// gather_slice.c - Gather with a constant scalar (or one-element) index becomes a Slice of one
// position along the axis, plus a Reshape dropping that dim for a scalar index.
// Requires: verified graph. Keeps: topological order; results bit-exact.
//
// A Slice is plain data movement the other passes (Concat/Slice elimination, constant
// folding) and the backends understand, where Gather is a general indexed load. An index out
// of range stays a Gather, so running reports it as before.
#include "opt/opt_internal.h"

static void rewrite(opt_cx *cx, glow_node *g)
{
    glow_value idx = g->ins[1];
    const glow_type *it = glow_value_type(idx), *dt = glow_value_type(g->ins[0]);
    if (idx.node->kind != NK_CONSTANT || !idx.node->payload.data || glow_type_numel(it) != 1 ||
        it->rank > 1 || !glow_dtype_is_int(it->dtype))
        return;
    int64_t axis = glow_node_int(g, GA_AXIS, 0);
    if (axis < 0 || axis >= dt->rank)
        return;
    int64_t i = glow_load_i64(it->dtype, idx.node->payload.data, 0);
    if (i < 0)
        i += dt->dims[axis];
    if (i < 0 || i >= dt->dims[axis])
        return;
    int64_t starts[GLOW_MAX_DIMS], ends[GLOW_MAX_DIMS], steps[GLOW_MAX_DIMS];
    for (int k = 0; k < dt->rank; k++) {
        starts[k] = k == axis ? i : 0;
        ends[k] = k == axis ? i + 1 : dt->dims[k];
        steps[k] = 1;
    }
    glow_attr a[3] = { GLOW_AINTS(STARTS, starts, dt->rank), GLOW_AINTS(ENDS, ends, dt->rank),
                       GLOW_AINTS(STEPS, steps, dt->rank) };
    glow_node *s = opt_build(cx, g, g, it->rank ? NULL : "slice", NK_SLICE, g->ins, 1, a, 3,
                             NULL);
    if (!s)
        return;
    glow_node *r = s;
    if (!glow_type_equal(&s->outs[0], &g->outs[0])) {
        r = opt_build(cx, g, g, NULL, NK_RESHAPE, &(glow_value){ s, 0 }, 1, NULL, 0,
                      &g->outs[0]);
        if (!r)
            return;
    }
    opt_replace(cx, g, glow_val(r, 0));
}

void glow_pass_gather_slice(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind == NK_GATHER)
            rewrite(cx, n);
    }
}
