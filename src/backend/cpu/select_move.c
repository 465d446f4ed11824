// select_move.c - Picks the data-movement kernels of any element kind: Slice, Transpose,
// Broadcast, Tile, DepthToSpace and SpaceToDepth as one 6-D strided copy, InsertTensor, Pad
// (reflect, edge, wrap), Trilu, and with constant indices Gather, GatherElements, GatherND,
// ScatterElements and ScatterND (no reduction), each by element size (kernels.def's u8, b16,
// b32, b64).
//
// A strided copy is described over the result's index as extents with a source and a
// destination stride per dim; dims of extent 1 are dropped and neighbours that walk memory as
// one dim are merged, so ranks above 6 (Tile's and the depth/space ops' split dims) still fit
// when they are contiguous somewhere. Shapes and attributes are checked as the evaluator
// checks them: anything it would reject stays on it (and fails there with its message).
#include <string.h>

#include "backend/cpu/cpu_internal.h"
#include "gk_ops.h"

static cpu_arg ptr(const ir_value *v, uint64_t extra)
{
    return (cpu_arg){ .kind = CA_PTR, .region = glow_value_region(v), .offset = v->addr + extra };
}
static cpu_arg num(int64_t i) { return (cpu_arg){ .kind = CA_INT, .i = i }; }

/* The row of family `k4` (a kernels.def quartet u8, b16, b32, b64) for elements of es bytes. */
static bool by_size(const cpu_kernel *k4, size_t es, cpu_kernel *k)
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

/* y[... t ...] = x[... s ...] over extents d[0..r): one strided-copy call with x starting
 * xoff elements into its value. False when the walk needs more than 6 dims. */
static bool strided_op(cpu_op *op, const ir_value *x, int64_t xoff, const ir_value *y, int r,
                       const int64_t *d, const int64_t *s, const int64_t *t)
{
    size_t es = glow_dtype_size(y->type.dtype);
    cpu_kernel k;
    if (!by_size(strided_k, es, &k) || glow_dtype_size(x->type.dtype) != es)
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
    if (m > 6)
        return false;
    cpu_arg a[20];
    a[0] = ptr(x, (uint64_t)(xoff * (int64_t)es));
    a[1] = ptr(y, 0);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - m);
        a[2 + i] = num(j >= 0 ? D[j] : 1);
        a[8 + i] = num(j >= 0 ? S[j] : 0);
        a[14 + i] = num(j >= 0 ? T[j] : 0);
    }
    op->k = k;
    memcpy(op->args, a, sizeof a);
    op->nargs = 20;
    return true;
}

/* Row-major element strides of t. */
static void strides_of(const glow_type *t, int64_t *st)
{
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= t->dims[i];
    }
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
    strides_of(x, xs);
    strides_of(y, ys);
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
    strides_of(x, xs);
    strides_of(y, ys);
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
    strides_of(x, xs);
    strides_of(y, ys);
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
 * the source with stride 0. */
static bool sel_tile(const ir_instr *in, cpu_op *op)
{
    const glow_type *y = &in->ops[0].v->type, *x = &in->ops[1].v->type;
    const glow_attr *rep = cpu_attr(in, GA_REPEATS);
    int r = x->rank, m = 0;
    if (!plain_move(in) || y->rank != r || !rep || rep->n != (uint32_t)r)
        return false;
    int64_t xs[GLOW_MAX_DIMS], ys[GLOW_MAX_DIMS], d[MAX_WALK], s[MAX_WALK], t[MAX_WALK];
    strides_of(x, xs);
    strides_of(y, ys);
    for (int i = 0; i < r; i++) {
        int64_t n = x->dims[i], k = rep->v.ints[i];
        if (k < 0 || y->dims[i] != n * k)
            return false;
        d[m] = k, s[m] = 0, t[m] = n * ys[i], m++;
        d[m] = n, s[m] = xs[i], t[m] = ys[i], m++;
    }
    return strided_op(op, in->ops[1].v, 0, in->ops[0].v, m, d, s, t);
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
    if (in->nout != 1 || in->nops != 3 || !by_size(insert_k, glow_dtype_size(y->dtype), &k) ||
        big->dtype != y->dtype || small->dtype != y->dtype || !glow_type_equal(y, big) ||
        small->rank != r || !sa || sa->n != (uint32_t)r || cpu_overlap(yv, sv) ||
        cpu_overlap(bv, sv))
        return false;
    bool same = glow_value_region(yv) == glow_value_region(bv) && yv->addr == bv->addr;
    if (cpu_overlap(yv, bv) && !same)
        return false;
    cpu_arg a[21];
    a[0] = ptr(bv, 0), a[1] = ptr(sv, 0), a[2] = ptr(yv, 0);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - r);
        int64_t st = j >= 0 ? sa->v.ints[j] : 0;
        if (j >= 0 && (st < 0 || st > big->dims[j] || small->dims[j] > big->dims[j] - st))
            return false;
        a[3 + i] = num(j >= 0 ? big->dims[j] : 1);
        a[9 + i] = num(st);
        a[15 + i] = num(j >= 0 ? small->dims[j] : 1);
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
    if (!plain_move(in) || y->rank != r || !pa || pa->n != 2 * (uint32_t)r || !ma ||
        !by_size(pad_k, glow_dtype_size(y->dtype), &k))
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
    a[0] = ptr(in->ops[1].v, 0), a[1] = ptr(in->ops[0].v, 0), a[2] = num(mode);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - r);
        int64_t lo = j >= 0 ? pa->v.ints[j] : 0, hi = j >= 0 ? pa->v.ints[j + r] : 0;
        int64_t n = j >= 0 ? x->dims[j] : 1;
        if (lo < -n || hi < -n || lo > INT32_MAX || hi > INT32_MAX ||
            (j >= 0 && y->dims[j] != n + lo + hi) || (n == 0 && !empty_out))
            return false;
        a[3 + i] = num(n + lo + hi);
        a[9 + i] = num(n);
        a[15 + i] = num(lo);
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
        !by_size(trilu_k, glow_dtype_size(y->dtype), &k))
        return false;
    if (cpu_overlap(yv, xv) &&
        !(glow_value_region(yv) == glow_value_region(xv) && yv->addr == xv->addr))
        return false;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1], mats = 1;
    for (int i = 0; i < x->rank - 2; i++)
        mats *= x->dims[i];
    cpu_arg a[7] = { ptr(xv, 0), ptr(yv, 0), num(mats), num(rows), num(cols),
                     num(ua ? ua->v.i != 0 : 1), num(ka ? ka->v.i : 0) };
    op->k = k;
    memcpy(op->args, a, sizeof a);
    op->nargs = 7;
    return true;
}

/* --- index-driven moves: constant indices only --- */

static const cpu_kernel gather_k[4] = { CPU_K_gather_u8_scalar, CPU_K_gather_b16_scalar,
                                        CPU_K_gather_b32_scalar, CPU_K_gather_b64_scalar };
static const cpu_kernel gather_elements_k[4] = {
    CPU_K_gather_elements_u8_scalar, CPU_K_gather_elements_b16_scalar,
    CPU_K_gather_elements_b32_scalar, CPU_K_gather_elements_b64_scalar
};
static const cpu_kernel gather_nd_k[4] = { CPU_K_gather_nd_u8_scalar, CPU_K_gather_nd_b16_scalar,
                                           CPU_K_gather_nd_b32_scalar,
                                           CPU_K_gather_nd_b64_scalar };
static const cpu_kernel scatter_elements_k[4] = {
    CPU_K_scatter_elements_u8_scalar, CPU_K_scatter_elements_b16_scalar,
    CPU_K_scatter_elements_b32_scalar, CPU_K_scatter_elements_b64_scalar
};
static const cpu_kernel scatter_nd_k[4] = {
    CPU_K_scatter_nd_u8_scalar, CPU_K_scatter_nd_b16_scalar, CPU_K_scatter_nd_b32_scalar,
    CPU_K_scatter_nd_b64_scalar
};

/* Whether the index operand v is a constant (or a view of one), i32 or i64, whose element e
 * lies in [-sizes[e % m], sizes[e % m]): the evaluator fails a run on any other index, which
 * a kernel cannot, so indices computed at run time stay on the evaluator. */
static bool const_indices(const ir_value *v, int64_t m, const int64_t *sizes)
{
    const ir_value *root = v->kind == IV_VIEW ? v->base : v;
    glow_dtype t = v->type.dtype;
    if ((t != GLOW_I32 && t != GLOW_I64) || root->kind != IV_WEIGHT || root->is_mutable ||
        !root->storage || root->storage->kind != NK_CONSTANT || m <= 0)
        return false;
    const uint8_t *data = (const uint8_t *)root->storage->payload.data;
    if (!data)
        return false;
    data += v->kind == IV_VIEW ? v->view_offset : 0;
    int64_t n = glow_type_numel(&v->type);
    for (int64_t e = 0; e < n; e++) {
        int64_t i = t == GLOW_I32 ? ((const int32_t *)data)[e] : ((const int64_t *)data)[e];
        int64_t size = sizes[e % m];
        if (i < -size || i >= size)
            return false;
    }
    return true;
}

/* The kernel's (i32, i64) index pointers for index operand v: one of them NULL. */
static void index_args(const ir_value *v, cpu_arg *a)
{
    cpu_arg none = { .kind = CA_NULL };
    a[0] = v->type.dtype == GLOW_I32 ? ptr(v, 0) : none;
    a[1] = v->type.dtype == GLOW_I32 ? none : ptr(v, 0);
}

static bool set_op(cpu_op *op, cpu_kernel k, const cpu_arg *a, int n)
{
    op->k = k;
    memcpy(op->args, a, sizeof(*a) * (size_t)n);
    op->nargs = n;
    return true;
}

/* The normalized `axis` attribute of rank r (default 0), or -1. */
static int axis_of(const ir_instr *in, int r)
{
    const glow_attr *a = cpu_attr(in, GA_AXIS);
    int64_t ax = a ? a->v.i : 0;
    ax = ax < 0 ? ax + r : ax;
    return ax >= 0 && ax < r ? (int)ax : -1;
}

/* Gather [y, x, idx] along axis: result dims x[:axis] + idx + x[axis+1:]. */
static bool sel_gather(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *iv = in->ops[2].v;
    const glow_type *y = &yv->type, *x = &xv->type, *ix = &iv->type;
    int axis = axis_of(in, x->rank), r = 0;
    cpu_kernel k;
    if (in->nout != 1 || in->nops != 3 || axis < 0 || y->dtype != x->dtype ||
        !by_size(gather_k, glow_dtype_size(y->dtype), &k) || !cpu_no_alias(in) ||
        y->rank != x->rank + ix->rank - 1 || !const_indices(iv, 1, &x->dims[axis]))
        return false;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i == axis) {
            for (int j = 0; j < ix->rank; j++)
                if (y->dims[r++] != ix->dims[j])
                    return false;
            continue;
        }
        if (y->dims[r++] != x->dims[i])
            return false;
        *(i < axis ? &outer : &inner) *= x->dims[i];
    }
    cpu_arg a[10] = { ptr(xv, 0) };
    index_args(iv, &a[1]);
    a[3] = ptr(yv, 0), a[4] = num(outer), a[5] = num(x->dims[axis]), a[6] = num(inner);
    a[7] = num(glow_type_numel(ix));
    return set_op(op, k, a, 8);
}

/* GatherElements [y, x, idx] and ScatterElements [y, x, idx, updates] (reduction none):
 * indices of the data's rank, no larger than it but along axis. */
static bool sel_elements(const ir_instr *in, cpu_op *op)
{
    bool scatter = in->kind == IK_SCATTER_ELEMENTS;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *iv = in->ops[2].v;
    const glow_type *y = &yv->type, *x = &xv->type, *ix = &iv->type;
    int r = x->rank, axis = axis_of(in, r);
    cpu_kernel k;
    if (in->nout != 1 || in->nops != (scatter ? 4u : 3u) || axis < 0 || ix->rank != r ||
        y->dtype != x->dtype ||
        !by_size(scatter ? scatter_elements_k : gather_elements_k, glow_dtype_size(y->dtype),
                 &k) || !const_indices(iv, 1, &x->dims[axis]))
        return false;
    for (int i = 0; i < r; i++)
        if (i != axis && ix->dims[i] > x->dims[i])
            return false;
    int64_t xs[GLOW_MAX_DIMS];
    strides_of(x, xs);
    cpu_arg a[22];
    int at = 0;
    a[at++] = ptr(xv, 0);
    index_args(iv, &a[at]);
    at += 2;
    if (scatter) {
        const ir_value *uv = in->ops[3].v;
        const glow_attr *red = cpu_attr(in, GA_REDUCTION);
        bool same = glow_value_region(yv) == glow_value_region(xv) && yv->addr == xv->addr;
        if ((red && strcmp(red->v.s, "none")) || !glow_type_equal(y, x) ||
            uv->type.dtype != y->dtype || uv->type.rank != r || cpu_overlap(yv, uv) ||
            cpu_overlap(yv, iv) || (cpu_overlap(yv, xv) && !same))
            return false;
        for (int i = 0; i < r; i++)
            if (uv->type.dims[i] != ix->dims[i])
                return false;
        a[at++] = ptr(uv, 0);
        a[at++] = ptr(yv, 0);
        a[at++] = num(glow_type_numel(x));
    } else {
        if (!cpu_no_alias(in) || y->rank != r)
            return false;
        for (int i = 0; i < r; i++)
            if (y->dims[i] != ix->dims[i])
                return false;
        a[at++] = ptr(yv, 0);
    }
    a[at++] = num(axis + 6 - r);
    a[at++] = num(x->dims[axis]);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - r);
        a[at + i] = num(j >= 0 ? ix->dims[j] : 1);
        a[at + 6 + i] = num(j >= 0 ? xs[j] : 0);
    }
    return set_op(op, k, a, at + 12);
}

/* GatherND [y, x, idx] (batch_dims b) and ScatterND [y, x, idx, updates] (b = 0, reduction
 * none): index tuples of m entries over the data's dims b .. b+m. */
static bool sel_nd(const ir_instr *in, cpu_op *op)
{
    bool scatter = in->kind == IK_SCATTER_ND;
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *iv = in->ops[2].v;
    const glow_type *y = &yv->type, *x = &xv->type, *ix = &iv->type;
    const glow_attr *ba = cpu_attr(in, GA_BATCH_DIMS);
    int64_t b = scatter || !ba ? 0 : ba->v.i;
    cpu_kernel k;
    if (in->nout != 1 || in->nops != (scatter ? 4u : 3u) || y->dtype != x->dtype ||
        ix->rank < 1 || b < 0 || b >= ix->rank || b > x->rank ||
        !by_size(scatter ? scatter_nd_k : gather_nd_k, glow_dtype_size(y->dtype), &k))
        return false;
    int64_t m = ix->dims[ix->rank - 1], xs[GLOW_MAX_DIMS];
    if (m < 1 || m > x->rank - b || !const_indices(iv, m, &x->dims[b]))
        return false;
    for (int i = 0; i < b; i++)
        if (ix->dims[i] != x->dims[i])
            return false;
    strides_of(x, xs);
    int64_t batches = 1, per = 1, slice = 1, batch_stride = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < b)
            batches *= x->dims[i];
        else
            batch_stride *= x->dims[i];
        if (i >= b + m)
            slice *= x->dims[i];
    }
    for (int i = (int)b; i < ix->rank - 1; i++)
        per *= ix->dims[i];
    /* The result (GatherND) or the updates (ScatterND): idx[:-1] + x[b+m:]. */
    const glow_type *moved = scatter ? &in->ops[3].v->type : y;
    int rank = ix->rank - 1 + x->rank - (int)(b + m), r = 0;
    if (moved->rank != rank || moved->dtype != x->dtype)
        return false;
    for (int i = 0; i < ix->rank - 1; i++)
        if (moved->dims[r++] != ix->dims[i])
            return false;
    for (int i = (int)(b + m); i < x->rank; i++)
        if (moved->dims[r++] != x->dims[i])
            return false;
    cpu_arg a[24];
    int at = 0;
    a[at++] = ptr(xv, 0);
    index_args(iv, &a[at]);
    at += 2;
    if (scatter) {
        const ir_value *uv = in->ops[3].v;
        const glow_attr *red = cpu_attr(in, GA_REDUCTION);
        bool same = glow_value_region(yv) == glow_value_region(xv) && yv->addr == xv->addr;
        if ((red && strcmp(red->v.s, "none")) || !glow_type_equal(y, x) ||
            cpu_overlap(yv, uv) || cpu_overlap(yv, iv) || (cpu_overlap(yv, xv) && !same))
            return false;
        a[at++] = ptr(uv, 0);
        a[at++] = ptr(yv, 0);
        a[at++] = num(glow_type_numel(x));
    } else {
        if (!cpu_no_alias(in))
            return false;
        a[at++] = ptr(yv, 0);
        a[at++] = num(batches);
    }
    a[at++] = num(per * (scatter ? batches : 1));
    a[at++] = num(m);
    a[at++] = num(slice);
    if (!scatter)
        a[at++] = num(batch_stride);
    for (int j = 0; j < 6; j++) {
        a[at + j] = num(j < m ? x->dims[b + j] : 1);
        a[at + 6 + j] = num(j < m ? xs[b + j] : 0);
    }
    return set_op(op, k, a, at + 12);
}

bool cpu_select_move(const ir_instr *in, cpu_op *ops, int *nops)
{
    *nops = 1;
    switch ((int)in->kind) {
    case IK_TRANSPOSE: return sel_transpose(in, ops);
    case IK_BROADCAST: return sel_broadcast(in, ops);
    case IK_SLICE: return sel_slice(in, ops);
    case IK_TILE: return sel_tile(in, ops);
    case IK_DEPTH_TO_SPACE: case IK_SPACE_TO_DEPTH: return sel_depth_space(in, ops);
    case IK_INSERT_TENSOR: return sel_insert(in, ops);
    case IK_PAD: return sel_pad(in, ops);
    case IK_TRILU: return sel_trilu(in, ops);
    case IK_GATHER: return sel_gather(in, ops);
    case IK_GATHER_ELEMENTS: case IK_SCATTER_ELEMENTS: return sel_elements(in, ops);
    case IK_GATHER_ND: case IK_SCATTER_ND: return sel_nd(in, ops);
    default: return false;
    }
}
