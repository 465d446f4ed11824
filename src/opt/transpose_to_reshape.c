// transpose_to_reshape.c - A Transpose that keeps the order of the dims larger than 1 (it only
// moves size-1 dims) moves no data: it becomes a Reshape.
// Requires: verified graph. Keeps: topological order; results bit-exact.
#include "opt/opt_internal.h"

static bool preserves_data(const glow_node *t)
{
    const glow_type *in = glow_value_type(t->ins[0]);
    int n = 0;
    const int64_t *p = glow_node_ints(t, GA_PERM, &n);
    if (!p || n != in->rank)
        return false;
    int64_t last = -1;
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n)
            return false;
        if (in->dims[p[i]] == 1)
            continue;
        if (p[i] < last)
            return false;
        last = p[i];
    }
    return true;
}

void glow_pass_transpose_to_reshape(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->kind != NK_TRANSPOSE || !preserves_data(n))
            continue;
        glow_node *r = opt_build(cx, n, n, NULL, NK_RESHAPE, n->ins, 1, NULL, 0, &n->outs[0]);
        if (r)
            opt_replace(cx, n, glow_val(r, 0));
    }
}
