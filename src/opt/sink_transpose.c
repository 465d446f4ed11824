// sink_transpose.c - Moves Transposes below elementwise ops, BatchNorm and Concat, and merges
// Transpose pairs (cancelling them when the permutations are inverse).
// Requires: verified graph. Keeps: topological order; results bit-exact (only data movement
// changes place).
//
// Layout changes in imported models come as Transposes around otherwise layout-agnostic
// ops. Moving every Transpose as far down as it goes lets pairs meet: T(T(x, p1), p2) is one
// Transpose with q[i] = p1[p2[i]], and nothing when q is the identity. The rules:
//   u(T(x, p))                    -> T(u(x), p)              u elementwise
//   op(T(x, p), T(y, p))          -> T(op(x, y), p)          same p for every moved operand
//   op(T(x, p), c)                -> T(op(x, T(c, p^-1)), p) c constant (folded later) or splat
//   BatchNorm(T(x, p), ...)       -> T(BatchNorm(x, ...), p) when p keeps the channel (p[1] = 1)
//   Concat(T(x_i, p) ..., axis a) -> T(Concat(x_i ..., axis p[a]), p)
// A Transpose is only moved when the node being rewritten is its only user, so no data
// movement is ever duplicated.
#include <string.h>

#include "opt/opt_internal.h"

static bool get_perm(const glow_node *t, int64_t *p, int *rank)
{
    int n = 0;
    const int64_t *v = glow_node_ints(t, GA_PERM, &n);
    if (!v || n > GLOW_MAX_DIMS)
        return false;
    memcpy(p, v, (size_t)n * sizeof *p);
    *rank = n;
    return true;
}

static bool is_identity(const int64_t *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] != i)
            return false;
    return true;
}

/* Uses of `producer` by node n. */
static uint32_t uses_by(const glow_node *n, const glow_node *producer)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->nin; i++)
        k += n->ins[i].node == producer;
    return k;
}

/* A transpose operand of n that n alone uses. */
static bool movable(const glow_node *n, glow_value v)
{
    return v.node->kind == NK_TRANSPOSE && v.node->nusers == uses_by(n, v.node);
}

static glow_value transpose(opt_cx *cx, glow_node *before, const glow_node *base,
                            const char *what, glow_value x, const int64_t *perm, int rank)
{
    glow_attr a = GLOW_AINTS(PERM, perm, rank);
    glow_node *t = opt_build(cx, before, base, what, NK_TRANSPOSE, &x, 1, &a, 1, NULL);
    return t ? glow_val(t, 0) : (glow_value){ NULL, 0 };
}

static void merge_pair(opt_cx *cx, glow_node *n)
{
    glow_node *inner = n->ins[0].node;
    int64_t p1[GLOW_MAX_DIMS], p2[GLOW_MAX_DIMS], q[GLOW_MAX_DIMS];
    int r1, r2;
    if (!get_perm(inner, p1, &r1) || !get_perm(n, p2, &r2) || r1 != r2)
        return;
    for (int i = 0; i < r1; i++)
        q[i] = p1[p2[i]];
    if (is_identity(q, r1)) {
        opt_replace(cx, n, inner->ins[0]);
        return;
    }
    glow_node_set_ints(n, GA_PERM, q, r1);
    opt_set_operand(n, 0, inner->ins[0]);
    cx->changes++;
}

/* Rebuilds n (operands `ins`, result types from `outs` moved back through p) under one
 * Transpose p, replacing n. */
static void rebuild(opt_cx *cx, glow_node *n, glow_value *ins, const glow_attr *attrs,
                    int nattr, const int64_t *p, int rank)
{
    int64_t inv[GLOW_MAX_DIMS];
    for (int i = 0; i < rank; i++)
        inv[p[i]] = i;
    glow_type decl = n->outs[0];
    for (int i = 0; i < rank; i++)
        decl.dims[i] = n->outs[0].dims[inv[i]];
    glow_node *nn = opt_build(cx, n, n, NULL, n->kind, ins, (int)n->nin, attrs, nattr, &decl);
    if (!nn)
        return;
    glow_value t = transpose(cx, n, n, "transpose", glow_val(nn, 0), p, rank);
    if (t.node)
        opt_replace(cx, n, t);
}

static void sink_elementwise(opt_cx *cx, glow_node *n)
{
    int64_t p[GLOW_MAX_DIMS], inv[GLOW_MAX_DIMS];
    int rank = 0;
    bool found = false;
    for (uint32_t i = 0; i < n->nin; i++) {
        glow_value v = n->ins[i];
        if (v.node->kind == NK_TRANSPOSE) {
            int64_t q[GLOW_MAX_DIMS];
            int r;
            if (!movable(n, v) || !get_perm(v.node, q, &r))
                return;
            if (found && (r != rank || memcmp(p, q, (size_t)r * sizeof *q) != 0))
                return;
            memcpy(p, q, sizeof q);
            rank = r;
            /* Transposed constants are fold_const's: moving them would ping-pong. */
            glow_node_kind k = v.node->ins[0].node->kind;
            found |= k != NK_CONSTANT && k != NK_SPLAT;
        } else if (v.node->kind != NK_CONSTANT && v.node->kind != NK_SPLAT) {
            return;
        }
    }
    if (!found)
        return;
    for (int i = 0; i < rank; i++)
        inv[p[i]] = i;
    glow_value ins[4];
    for (uint32_t i = 0; i < n->nin && i < 4; i++) {
        glow_value v = n->ins[i];
        if (v.node->kind == NK_TRANSPOSE)
            ins[i] = v.node->ins[0];
        else
            ins[i] = transpose(cx, n, v.node, "transpose", v, inv, rank);
        if (!ins[i].node)
            return;
    }
    rebuild(cx, n, ins, n->attrs, (int)n->nattr, p, rank);
}

static void sink_batch_norm(opt_cx *cx, glow_node *n)
{
    int64_t p[GLOW_MAX_DIMS];
    int rank;
    if (!movable(n, n->ins[0]) || !get_perm(n->ins[0].node, p, &rank) || rank < 2 || p[1] != 1)
        return;
    glow_value ins[5];
    memcpy(ins, n->ins, sizeof ins);
    ins[0] = n->ins[0].node->ins[0];
    rebuild(cx, n, ins, n->attrs, (int)n->nattr, p, rank);
}

static void sink_concat(opt_cx *cx, glow_node *n)
{
    int64_t p[GLOW_MAX_DIMS];
    int rank = 0;
    glow_value ins[64];
    if (n->nin > 64)
        return;
    for (uint32_t i = 0; i < n->nin; i++) {
        int64_t q[GLOW_MAX_DIMS];
        int r;
        if (!movable(n, n->ins[i]) || !get_perm(n->ins[i].node, q, &r))
            return;
        if (i && (r != rank || memcmp(p, q, (size_t)r * sizeof *q) != 0))
            return;
        memcpy(p, q, sizeof q);
        rank = r;
        ins[i] = n->ins[i].node->ins[0];
    }
    int64_t axis = glow_node_int(n, GA_AXIS, 0);
    if (axis < 0 || axis >= rank)
        return;
    glow_attr a = GLOW_AI(AXIS, p[axis]);
    rebuild(cx, n, ins, &a, 1, p, rank);
}

void glow_pass_sink_transpose(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->nout != 1 || n->nin == 0 || glow_dtype_is_quantized(n->outs[0].dtype))
            continue;
        if (n->kind == NK_TRANSPOSE && n->ins[0].node->kind == NK_TRANSPOSE)
            merge_pair(cx, n);
        else if ((glow_node_kind_flags(n->kind) & NF_ELEMWISE) && n->nin <= 4)
            sink_elementwise(cx, n);
        else if (n->kind == NK_BATCH_NORM)
            sink_batch_norm(cx, n);
        else if (n->kind == NK_CONCAT)
            sink_concat(cx, n);
    }
}
