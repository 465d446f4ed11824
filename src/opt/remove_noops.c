// remove_noops.c - Removes nodes that return their operand unchanged: Reshape/Broadcast to the
// same shape, identity Transpose, full Slice, zero Pad, one-operand Concat, Cast to the same
// dtype, Tile by ones, and 1x1 pools with stride 1 and no padding.
// Requires: verified graph. Keeps: topological order; results bit-exact.
//
// The importer already drops Identity and inference Dropout; what arrives here comes from
// models that spell a no-op with general ops (Reshape to the input shape, Expand to it) and
// from other passes (a merged Transpose pair with an identity permutation).
#include "opt/opt_internal.h"

static bool all_equal(const int64_t *v, int n, int64_t x)
{
    for (int i = 0; i < n; i++)
        if (v[i] != x)
            return false;
    return true;
}

static bool is_noop(const glow_node *n)
{
    const glow_type *in = glow_value_type(n->ins[0]);
    int cnt = 0;
    const int64_t *v;
    switch (n->kind) {
    case NK_RESHAPE:
    case NK_BROADCAST:
    case NK_CAST:
        return true;   /* the caller compares the types */
    case NK_TRANSPOSE:
        v = glow_node_ints(n, GA_PERM, &cnt);
        for (int i = 0; i < cnt; i++)
            if (v[i] != i)
                return false;
        return true;
    case NK_SLICE: {
        int ns = 0, ne = 0, nt = 0;
        const int64_t *s = glow_node_ints(n, GA_STARTS, &ns);
        const int64_t *e = glow_node_ints(n, GA_ENDS, &ne);
        const int64_t *t = glow_node_ints(n, GA_STEPS, &nt);
        if (ns != in->rank || ne != in->rank || nt != in->rank)
            return false;
        for (int i = 0; i < in->rank; i++)
            if (s[i] != 0 || t[i] != 1 || e[i] < in->dims[i])
                return false;
        return true;
    }
    case NK_PAD:
        v = glow_node_ints(n, GA_PADS, &cnt);
        return all_equal(v, cnt, 0);
    case NK_TILE:
        v = glow_node_ints(n, GA_REPEATS, &cnt);
        return all_equal(v, cnt, 1);
    case NK_CONCAT:
        return n->nin == 1;
    case NK_MAX_POOL:
    case NK_AVG_POOL: {
        if (n->nout != 1)
            return false;
        int nk = 0, nst = 0, np = 0;
        const int64_t *k = glow_node_ints(n, GA_KERNEL, &nk);
        const int64_t *st = glow_node_ints(n, GA_STRIDES, &nst);
        const int64_t *p = glow_node_ints(n, GA_PADS, &np);
        return all_equal(k, nk, 1) && all_equal(st, nst, 1) && all_equal(p, np, 0);
    }
    default:
        return false;
    }
}

void glow_pass_remove_noops(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (n->nin < 1 || n->nout != 1)
            continue;
        /* The result must be the operand exactly: same dtype, shape and quantization. */
        if (!glow_type_equal(glow_value_type(n->ins[0]), &n->outs[0]))
            continue;
        if (is_noop(n))
            opt_replace(cx, n, n->ins[0]);
    }
}
