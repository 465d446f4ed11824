// select_move.c - Picks the data-movement kernels of any element kind: Slice, Transpose,
// Broadcast, Tile, DepthToSpace and SpaceToDepth as one 6-D strided copy, InsertTensor, Pad
// (reflect, edge, wrap) and Trilu, each by element size (kernels.def's u8, b16, b32, b64).
//
// A strided copy is described over the result's index as extents with a source and a
// destination stride per dim; dims of extent 1 are dropped and neighbours that walk memory as
// one dim are merged, so ranks above 6 (Tile's and the depth/space ops' split dims) still fit
// when they are contiguous somewhere. Shapes and attributes are checked as the evaluator
// checks them: anything it would reject stays on it (and fails there with its message).
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_ops.h"

/* The row of family `k4` (a kernels.def quartet u8, b16, b32, b64) for elements of es bytes. */
bool cpu_kernel_by_size(const cpu_kernel *k4, size_t es, cpu_kernel *k)
{
    switch (es) {
    case 1: *k = k4[0]; return true;
    case 2: *k = k4[1]; return true;
    case 4: *k = k4[2]; return true;
    case 8: *k = k4[3]; return true;
    default: return false;
    }
}

static const cpu_kernel strided_k[4] = { CPU_K_strided_u8_scalar, CPU_K_strided_b16_scalar,
                                         CPU_K_strided_b32_scalar, CPU_K_strided_b64_scalar };
static const cpu_kernel insert_k[4] = { CPU_K_insert_u8_scalar, CPU_K_insert_b16_scalar,
                                        CPU_K_insert_b32_scalar, CPU_K_insert_b64_scalar };
static const cpu_kernel pad_k[4] = { CPU_K_pad_u8_scalar, CPU_K_pad_b16_scalar,
                                     CPU_K_pad_b32_scalar, CPU_K_pad_b64_scalar };
static const cpu_kernel trilu_k[4] = { CPU_K_trilu_u8_scalar, CPU_K_trilu_b16_scalar,
                                       CPU_K_trilu_b32_scalar, CPU_K_trilu_b64_scalar };

#define MAX_WALK (2 * GLOW_MAX_DIMS)

/* y[... t ...] = x[... s ...] over extents d[0..r) with x starting xoff elements into its
 * value: strided-copy calls into ops (at most max; *nops gets how many), one per index of the
 * outer dims a walk of more than 6 dims leaves over. False when more would be needed. */
static bool strided_ops(cpu_op *ops, int max, int *nops, const ir_value *x, int64_t xoff,
                        const ir_value *y, int r, const int64_t *d, const int64_t *s,
                        const int64_t *t)
{
    size_t es = glow_dtype_size(y->type.dtype);
    cpu_kernel k;
    if (!cpu_kernel_by_size(strided_k, es, &k) || glow_dtype_size(x->type.dtype) != es)
        return false;
    int64_t D[MAX_WALK], S[MAX_WALK], T[MAX_WALK];
    int m = 0;
    bool empty = false;
    for (int i = 0; i < r; i++) {
        empty |= d[i] == 0;
        if (d[i] == 1)
            continue;
        if (m > 0 && S[m - 1] == s[i] * d[i] && T[m - 1] == t[i] * d[i]) {
            D[m - 1] *= d[i];
            S[m - 1] = s[i];
            T[m - 1] = t[i];
        } else {
            D[m] = d[i], S[m] = s[i], T[m] = t[i];
            m++;
        }
    }
    if (empty)
        m = 1, D[0] = 0, S[0] = T[0] = 1, xoff = 0;
    int outer = m > 6 ? m - 6 : 0;
    int64_t calls = 1;
    for (int j = 0; j < outer; j++)
        calls *= D[j];
    if (calls > max)
        return false;
    for (int64_t c = 0; c < calls; c++) {
        int64_t xo = xoff, yo = 0;
        for (int64_t j = outer - 1, rest = c; j >= 0; j--) {
            xo += rest % D[j] * S[j];
            yo += rest % D[j] * T[j];
            rest /= D[j];
        }
        cpu_arg *a = ops[c].args;
        a[0] = cpu_ptr(x, (uint64_t)(xo * (int64_t)es));
        a[1] = cpu_ptr(y, (uint64_t)(yo * (int64_t)es));
        for (int i = 0; i < 6; i++) {
            int j = outer + i - (6 - (m - outer));
            a[2 + i] = cpu_num(j >= outer ? D[j] : 1);
            a[8 + i] = cpu_num(j >= outer ? S[j] : 0);
            a[14 + i] = cpu_num(j >= outer ? T[j] : 0);
        }
        ops[c].k = k;
        ops[c].nargs = 20;
    }
    *nops = (int)calls;
    return true;
}

/* The same as one call: false when the walk needs more than 6 dims. */
static bool strided_op(cpu_op *op, const ir_value *x, int64_t xoff, const ir_value *y, int r,
                       const int64_t *d, const int64_t *s, const int64_t *t)
{
    int n;
    return strided_ops(op, 1, &n, x, xoff, y, r, d, s, t);
}

/* An instruction [y, x] of one element kind whose result overlaps no operand. */
static bool plain_move(const ir_instr *in)
{
    return in->nout == 1 && in->nops == 2 &&
           in->ops[0].v->type.dtype == in->ops[1].v->type.dtype && cpu_no_alias(in);
}

static bool sel_transpose(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *perm = cpu_attr(in, GA_PERM);
    int r = x->rank;
    if (!plain_move(in) || !perm || perm->n != (uint32_t)r || y->rank != r)
        return false;
    int64_t xs[GLOW_MAX_DIMS], ys[GLOW_MAX_DIMS], s[GLOW_MAX_DIMS];
    bool seen[GLOW_MAX_DIMS] = { false };
    glow_type_strides(x, xs);
    glow_type_strides(y, ys);
    for (int i = 0; i < r; i++) {
        int64_t p = perm->v.ints[i];
        if (p < 0 || p >= r || seen[p] || y->dims[i] != x->dims[p])
            return false;
        seen[p] = true;
        s[i] = xs[p];
    }
    return strided_op(op, in->ops[1].v, 0, in->ops[0].v, r, y->dims, s, ys);
}

/* The operand right-aligned against the result, NumPy style; stride 0 on broadcast dims. */
static bool sel_broadcast(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    int r = y->rank, shift = r - x->rank;
    if (!plain_move(in) || shift < 0)
        return false;
    int64_t xs[GLOW_MAX_DIMS], ys[GLOW_MAX_DIMS], s[GLOW_MAX_DIMS] = { 0 };
    glow_type_strides(x, xs);
    glow_type_strides(y, ys);
    for (int j = 0; j < x->rank; j++) {
        if (x->dims[j] != 1 && x->dims[j] != y->dims[j + shift])
            return false;
        s[j + shift] = x->dims[j] == 1 ? 0 : xs[j];
    }
    return strided_op(op, in->ops[1].v, 0, in->ops[0].v, r, y->dims, s, ys);
}

/* Slice with the evaluator's clamped attributes: a start and a (possibly negative) step per
 * dim. */
static bool sel_slice(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *sa = cpu_attr(in, GA_STARTS), *ea = cpu_attr(in, GA_ENDS);
    const glow_attr *ta = cpu_attr(in, GA_STEPS);
    int r = x->rank;
    if (!plain_move(in) || y->rank != r || !sa || !ea || !ta || sa->n != (uint32_t)r ||
        ea->n != (uint32_t)r || ta->n != (uint32_t)r)
        return false;
    int64_t xs[GLOW_MAX_DIMS], ys[GLOW_MAX_DIMS], s[GLOW_MAX_DIMS], base = 0;
    glow_type_strides(x, xs);
    glow_type_strides(y, ys);
    for (int i = 0; i < r; i++) {
        int64_t dim = x->dims[i], st = ta->v.ints[i], b = sa->v.ints[i], e = ea->v.ints[i];
        if (st > dim + 1)
            st = dim + 1;
        if (st < -(dim + 1))
            st = -(dim + 1);
        if (st == 0 || b < -1 || b > dim || e < -1 || e > dim)
            return false;
        int64_t cnt = st > 0 ? (e - b + st - 1) / st : (b - e + (-st) - 1) / (-st);
        cnt = cnt < 0 ? 0 : cnt;
        if (cnt != y->dims[i] || (cnt > 0 && (b < 0 || b >= dim)))
            return false;
        base += cnt > 0 ? b * xs[i] : 0;
        s[i] = st * xs[i];
    }
    return strided_op(op, in->ops[1].v, base, in->ops[0].v, r, y->dims, s, ys);
}

/* Tile: each tiled dim of the result splits into (repeat, source dim), the repeat walking
 * the source with stride 0; past 6 such dims, one call per index of the outer ones. */
static bool sel_tile(const ir_instr *in, cpu_op *ops, int *nops)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *rep = cpu_attr(in, GA_REPEATS);
    int r = x->rank, m = 0;
    if (!plain_move(in) || y->rank != r || !rep || rep->n != (uint32_t)r)
        return false;
    int64_t xs[GLOW_MAX_DIMS], ys[GLOW_MAX_DIMS], d[MAX_WALK], s[MAX_WALK], t[MAX_WALK];
    glow_type_strides(x, xs);
    glow_type_strides(y, ys);
    for (int i = 0; i < r; i++) {
        int64_t n = x->dims[i], k = rep->v.ints[i];
        if (k < 0 || y->dims[i] != n * k)
            return false;
        d[m] = k, s[m] = 0, t[m] = n * ys[i], m++;
        d[m] = n, s[m] = xs[i], t[m] = ys[i], m++;
    }
    return strided_ops(ops, CPU_MAX_CALLS, nops, in->ops[1].v, 0, in->ops[0].v, m, d, s, t);
}

/* DepthToSpace (DCR or CRD) and SpaceToDepth (DCR) on NCHW, walked over the space-side
 * tensor [N][C][H][b][W][b] (H, W: the depth side's) in the result's order. */
static bool sel_depth_space(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *ba = cpu_attr(in, GA_BLOCKSIZE), *ma = cpu_attr(in, GA_MODE);
    bool to_space = in->kind == IK_DEPTH_TO_SPACE;
    const glow_type *deep = to_space ? x : y, *space = to_space ? y : x;
    if (!plain_move(in) || !ba || x->rank != 4 || y->rank != 4)
        return false;
    int64_t b = ba->v.i, N = space->dims[0], C = space->dims[1];
    int64_t H = deep->dims[2], W = deep->dims[3];
    bool crd = to_space && ma && !strcmp(ma->v.s, "CRD");
    if (to_space && ma && !crd && strcmp(ma->v.s, "DCR"))
        return false;
    if (b <= 0 || b > 4096 || deep->dims[0] != N || deep->dims[1] != C * b * b ||
        space->dims[2] != H * b || space->dims[3] != W * b)
        return false;
    /* Strides of the space side's [N][C][H][b][W][b] and the depth side's on the same
     * index (channel (i*b + j)*C + c for DCR, c*b*b + i*b + j for CRD). */
    int64_t sp[6] = { C * H * b * W * b, H * b * W * b, b * W * b, W * b, b, 1 };
    int64_t dp[6] = { C * b * b * H * W, H * W, W, b * C * H * W, 1, C * H * W };
    if (crd)
        dp[1] = b * b * H * W, dp[3] = b * H * W, dp[5] = H * W;
    int64_t d[6] = { N, C, H, b, W, b };
    if (to_space)
        return strided_op(op, in->ops[1].v, 0, in->ops[0].v, 6, d, dp, sp);
    /* SpaceToDepth writes in its own order: walk (n, i, j, c, h, w), contiguous in y. */
    int64_t d2[6] = { N, b, b, C, H, W }, s2[6] = { sp[0], sp[3], sp[5], sp[1], sp[2], sp[4] };
    int64_t t2[6] = { dp[0], dp[3], dp[5], dp[1], dp[2], dp[4] };
    return strided_op(op, in->ops[1].v, 0, in->ops[0].v, 6, d2, s2, t2);
}

/* InsertTensor [y, big, small]: y may be big itself, nothing else may overlap. */
static bool sel_insert(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *bv = in->ops[1].v, *sv = in->ops[2].v;
    const glow_type *y = &yv->type, *big = &bv->type, *small = &sv->type;
    const glow_attr *sa = cpu_attr(in, GA_STARTS);
    int r = big->rank;
    cpu_kernel k;
    if (in->nout != 1 || in->nops != 3 ||
        !cpu_kernel_by_size(insert_k, glow_dtype_size(y->dtype), &k) || big->dtype != y->dtype ||
        small->dtype != y->dtype || !glow_type_equal(y, big) || small->rank != r || r > 6 || !sa ||
        sa->n != (uint32_t)r || cpu_overlap(yv, sv) || cpu_overlap(bv, sv))
        return false;
    bool same = glow_value_region(yv) == glow_value_region(bv) && yv->addr == bv->addr;
    if (cpu_overlap(yv, bv) && !same)
        return false;
    cpu_arg a[21];
    a[0] = cpu_ptr(bv, 0), a[1] = cpu_ptr(sv, 0), a[2] = cpu_ptr(yv, 0);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - r);
        int64_t st = j >= 0 ? sa->v.ints[j] : 0;
        if (j >= 0 && (st < 0 || st > big->dims[j] || small->dims[j] > big->dims[j] - st))
            return false;
        a[3 + i] = cpu_num(j >= 0 ? big->dims[j] : 1);
        a[9 + i] = cpu_num(st);
        a[15 + i] = cpu_num(j >= 0 ? small->dims[j] : 1);
    }
    op->k = k;
    memcpy(op->args, a, sizeof a);
    op->nargs = 21;
    return true;
}

/* Pad in reflect, edge or wrap mode (constant Pad is lowered to Splat + InsertTensor). */
static bool sel_pad(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *pa = cpu_attr(in, GA_PADS), *ma = cpu_attr(in, GA_MODE);
    int r = x->rank, mode;
    cpu_kernel k;
    if (!plain_move(in) || y->rank != r || r > 6 || !pa || pa->n != 2 * (uint32_t)r || !ma ||
        !cpu_kernel_by_size(pad_k, glow_dtype_size(y->dtype), &k))
        return false;
    if (!strcmp(ma->v.s, "reflect"))
        mode = GK_PAD_REFLECT;
    else if (!strcmp(ma->v.s, "edge"))
        mode = GK_PAD_EDGE;
    else if (!strcmp(ma->v.s, "wrap"))
        mode = GK_PAD_WRAP;
    else
        return false;
    bool empty_out = glow_type_numel(y) == 0;
    cpu_arg a[21];
    a[0] = cpu_ptr(in->ops[1].v, 0), a[1] = cpu_ptr(in->ops[0].v, 0), a[2] = cpu_num(mode);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - r);
        int64_t lo = j >= 0 ? pa->v.ints[j] : 0, hi = j >= 0 ? pa->v.ints[j + r] : 0;
        int64_t n = j >= 0 ? x->dims[j] : 1;
        if (lo < -n || hi < -n || lo > INT32_MAX || hi > INT32_MAX ||
            (j >= 0 && y->dims[j] != n + lo + hi) || (n == 0 && !empty_out))
            return false;
        a[3 + i] = cpu_num(n + lo + hi);
        a[9 + i] = cpu_num(n);
        a[15 + i] = cpu_num(lo);
    }
    op->k = k;
    memcpy(op->args, a, sizeof a);
    op->nargs = 21;
    return true;
}

/* Trilu over the last two dims; in place only onto itself. */
static bool sel_trilu(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v;
    const glow_type *y = &yv->type, *x = &xv->type;
    const glow_attr *ua = cpu_attr(in, GA_UPPER), *ka = cpu_attr(in, GA_K);
    cpu_kernel k;
    if (in->nout != 1 || in->nops != 2 || x->rank < 2 || !glow_type_equal(x, y) ||
        !cpu_kernel_by_size(trilu_k, glow_dtype_size(y->dtype), &k))
        return false;
    if (cpu_overlap(yv, xv) &&
        !(glow_value_region(yv) == glow_value_region(xv) && yv->addr == xv->addr))
        return false;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1], mats = 1;
    for (int i = 0; i < x->rank - 2; i++)
        mats *= x->dims[i];
    cpu_arg a[7] = { cpu_ptr(xv, 0), cpu_ptr(yv, 0), cpu_num(mats), cpu_num(rows), cpu_num(cols),
                     cpu_num(ua ? ua->v.i != 0 : 1), cpu_num(ka ? ka->v.i : 0) };
    op->k = k;
    memcpy(op->args, a, sizeof a);
    op->nargs = 7;
    return true;
}

bool cpu_select_move(const ir_instr *in, cpu_op *ops, int *nops)
{
    *nops = 1;
    switch ((int)in->kind) {
    case IK_TRANSPOSE: return sel_transpose(in, ops);
    case IK_BROADCAST: return sel_broadcast(in, ops);
    case IK_SLICE: return sel_slice(in, ops);
    case IK_TILE: return sel_tile(in, ops, nops);
    case IK_DEPTH_TO_SPACE: case IK_SPACE_TO_DEPTH: return sel_depth_space(in, ops);
    case IK_INSERT_TENSOR: return sel_insert(in, ops);
    case IK_PAD: return sel_pad(in, ops);
    case IK_TRILU: return sel_trilu(in, ops);
    default: return false;
    }
}
