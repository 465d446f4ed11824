// select_index.c - Picks the index-driven data-movement kernels of any element kind: Gather,
// GatherElements, GatherND, ScatterElements and ScatterND (with their reductions), OneHot and
// ReverseSequence, each by element size (kernels.def's u8, b16, b32, b64).
//
// Indices are data: any integer kind (OneHot: any kind), read at run time. The evaluator fails
// a run on an index out of range, and so do the kernels: they record it in the run's error
// record (prepare.c's cpu.err, the CA_ERR argument) with their instruction's code (1 + its
// id), which cpu.c turns into the evaluator's message and a bundle into a nonzero return.
// OneHot has no bad index (one out of range selects the off value).
#include <string.h>

#include "backend/cpu/cpu_internal.h"

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

/* The kernel's (kind, pointer) arguments of index operand v; false for a kind the kernels do
 * not read as indices. */
static bool index_args(const ir_value *v, cpu_arg *a)
{
    glow_dtype_class c = glow_dtype_class_of(v->type.dtype);
    a[0] = cpu_num(cpu_gk_dtype(v->type.dtype));
    a[1] = cpu_ptr(v, 0);
    return (c == DC_SINT || c == DC_UINT) && a[0].i;
}

/* The error record and the instruction's code, a failing kernel's last two arguments. */
static int error_args(const ir_instr *in, cpu_arg *a)
{
    a[0] = cpu_err();
    a[1] = cpu_num((int64_t)in->id + 1);
    return 2;
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
        !cpu_kernel_by_size(gather_k, glow_dtype_size(y->dtype), &k) || !cpu_no_alias(in) ||
        y->rank != x->rank + ix->rank - 1)
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
    cpu_arg a[10] = { cpu_ptr(xv, 0) };
    if (!index_args(iv, &a[1]))
        return false;
    a[3] = cpu_ptr(yv, 0), a[4] = cpu_num(outer), a[5] = cpu_num(x->dims[axis]);
    a[6] = cpu_num(inner);
    a[7] = cpu_num(glow_type_numel(ix));
    return set_op(op, k, a, 8 + error_args(in, &a[8]));
}

/* A scatter whose result is the data's type and overlaps neither its indices nor its
 * updates, and the data only when it is the data's very buffer (updated in place): its
 * arguments (count, reduction, element kind) at a. */
static bool scatter_ok(const ir_instr *in, const ir_value *yv, const ir_value *xv,
                       const ir_value *iv, const ir_value *uv, cpu_arg *a)
{
    static const char *const names[] = { "none", "add", "mul", "max", "min" };
    const glow_attr *ra = cpu_attr(in, GA_REDUCTION);
    int red = 0, t = cpu_gk_dtype(yv->type.dtype);
    while (ra && red < 5 && strcmp(ra->v.s, names[red]))
        red++;
    bool same = glow_value_region(yv) == glow_value_region(xv) && yv->addr == xv->addr;
    a[0] = cpu_num(glow_type_numel(&xv->type)), a[1] = cpu_num(red), a[2] = cpu_num(t);
    return red < 5 && (red == 0 || t) &&
           glow_type_equal(&yv->type, &xv->type) && uv->type.dtype == yv->type.dtype &&
           !cpu_overlap(yv, uv) && !cpu_overlap(yv, iv) && (!cpu_overlap(yv, xv) || same);
}

/* The loop of GatherElements/ScatterElements over the indices' dims d (with the data's
 * strides s): size-1 dims other than the axis dropped and neighbours merged where their
 * strides chain, so inputs of rank 7 and 8 usually fit the kernels' 6 dims. Returns the
 * count, the axis's new place in *ax. */
static int elements_loop(const glow_type *x, const glow_type *ix, int axis, int64_t *d,
                         int64_t *s, int *ax)
{
    int64_t xs[GLOW_MAX_DIMS];
    glow_type_strides(x, xs);
    int m = 0;
    *ax = -1;
    for (int i = 0; i < x->rank; i++) {
        if (i != axis && ix->dims[i] == 1)
            continue;
        if (m > 0 && i != axis && *ax != m - 1 && s[m - 1] == ix->dims[i] * xs[i]) {
            d[m - 1] *= ix->dims[i];
            s[m - 1] = xs[i];
            continue;
        }
        if (i == axis)
            *ax = m;
        d[m] = ix->dims[i];
        s[m] = xs[i];
        m++;
    }
    return m;
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
        !cpu_kernel_by_size(scatter ? scatter_elements_k : gather_elements_k,
                            glow_dtype_size(y->dtype), &k))
        return false;
    for (int i = 0; i < r; i++)
        if (i != axis && ix->dims[i] > x->dims[i])
            return false;
    /* The kernels take 6 dims; a loop of more falls back to the evaluator. */
    int64_t d[GLOW_MAX_DIMS], s[GLOW_MAX_DIMS];
    int ax, m = elements_loop(x, ix, axis, d, s, &ax);
    if (m > 6)
        return false;
    cpu_arg a[CPU_MAX_ARGS];
    int at = 0;
    a[at++] = cpu_ptr(xv, 0);
    if (!index_args(iv, &a[at]))
        return false;
    at += 2;
    if (scatter) {
        const ir_value *uv = in->ops[3].v;
        a[at++] = cpu_ptr(uv, 0);
        a[at++] = cpu_ptr(yv, 0);
        if (!scatter_ok(in, yv, xv, iv, uv, &a[at]) || uv->type.rank != r)
            return false;
        at += 3;
        for (int i = 0; i < r; i++)
            if (uv->type.dims[i] != ix->dims[i])
                return false;
    } else {
        if (!cpu_no_alias(in) || y->rank != r)
            return false;
        for (int i = 0; i < r; i++)
            if (y->dims[i] != ix->dims[i])
                return false;
        a[at++] = cpu_ptr(yv, 0);
    }
    a[at++] = cpu_num(ax + 6 - m);
    a[at++] = cpu_num(x->dims[axis]);
    for (int i = 0; i < 6; i++) {
        int j = i - (6 - m);
        a[at + i] = cpu_num(j >= 0 ? d[j] : 1);
        a[at + 6 + i] = cpu_num(j >= 0 ? s[j] : 0);
    }
    at += 12;
    return set_op(op, k, a, at + error_args(in, &a[at]));
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
        !cpu_kernel_by_size(scatter ? scatter_nd_k : gather_nd_k, glow_dtype_size(y->dtype), &k))
        return false;
    int64_t m = ix->dims[ix->rank - 1], xs[GLOW_MAX_DIMS];
    if (m < 1 || m > x->rank - b || m > 6)   /* the kernels walk at most 6 indexed dims */
        return false;
    for (int i = 0; i < b; i++)
        if (ix->dims[i] != x->dims[i])
            return false;
    glow_type_strides(x, xs);
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
    cpu_arg a[CPU_MAX_ARGS];
    int at = 0;
    a[at++] = cpu_ptr(xv, 0);
    if (!index_args(iv, &a[at]))
        return false;
    at += 2;
    if (scatter) {
        const ir_value *uv = in->ops[3].v;
        a[at++] = cpu_ptr(uv, 0);
        a[at++] = cpu_ptr(yv, 0);
        if (!scatter_ok(in, yv, xv, iv, uv, &a[at]))
            return false;
        at += 3;
    } else {
        if (!cpu_no_alias(in))
            return false;
        a[at++] = cpu_ptr(yv, 0);
        a[at++] = cpu_num(batches);
    }
    a[at++] = cpu_num(per * (scatter ? batches : 1));
    a[at++] = cpu_num(m);
    a[at++] = cpu_num(slice);
    if (!scatter)
        a[at++] = cpu_num(batch_stride);
    for (int j = 0; j < 6; j++) {
        a[at + j] = cpu_num(j < m ? x->dims[b + j] : 1);
        a[at + 6 + j] = cpu_num(j < m ? xs[b + j] : 0);
    }
    at += 12;
    return set_op(op, k, a, at + error_args(in, &a[at]));
}

static const cpu_kernel one_hot_k[4] = { CPU_K_one_hot_u8_scalar, CPU_K_one_hot_b16_scalar,
                                         CPU_K_one_hot_b32_scalar, CPU_K_one_hot_b64_scalar };

/* OneHot [y, idx, depth, values] with indices of any kind (which may hold anything: the
 * kernel maps them as the evaluator does); the depth is the attribute. */
static bool sel_one_hot(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *iv = in->ops[1].v, *vv = in->ops[3].v;
    const glow_type *y = &yv->type, *ix = &iv->type;
    const glow_attr *da = cpu_attr(in, GA_DEPTH), *aa = cpu_attr(in, GA_AXIS);
    int64_t depth = da ? da->v.i : -1, axis = aa ? aa->v.i : -1;
    cpu_kernel k;
    axis = axis < 0 ? axis + ix->rank + 1 : axis;
    if (in->nout != 1 || in->nops != 4 || depth < 0 || axis < 0 || axis > ix->rank ||
        !cpu_gk_dtype(ix->dtype) || vv->type.dtype != y->dtype ||
        glow_type_numel(&vv->type) != 2 || y->rank != ix->rank + 1 ||
        !cpu_kernel_by_size(one_hot_k, glow_dtype_size(y->dtype), &k) || !cpu_no_alias(in))
        return false;
    int64_t outer = 1, inner = 1;
    for (int i = 0, j = 0; i < y->rank; i++) {
        int64_t want = i == axis ? depth : ix->dims[j++];
        if (y->dims[i] != want)
            return false;
        if (i != axis)
            *(i < axis ? &outer : &inner) *= want;
    }
    cpu_arg a[7] = { cpu_num(cpu_gk_dtype(ix->dtype)), cpu_ptr(iv, 0) };
    a[2] = cpu_ptr(vv, 0), a[3] = cpu_ptr(yv, 0), a[4] = cpu_num(outer), a[5] = cpu_num(depth);
    a[6] = cpu_num(inner);
    return set_op(op, k, a, 7);
}

static const cpu_kernel reverse_k[4] = {
    CPU_K_reverse_sequence_u8_scalar, CPU_K_reverse_sequence_b16_scalar,
    CPU_K_reverse_sequence_b32_scalar, CPU_K_reverse_sequence_b64_scalar
};

/* ReverseSequence [y, x, lens]: time and batch along dims 0 and 1 in either order, the
 * lengths of any integer kind checked at run time. */
static bool sel_reverse(const ir_instr *in, cpu_op *op)
{
    const ir_value *yv = in->ops[0].v, *xv = in->ops[1].v, *lv = in->ops[2].v;
    const glow_type *x = &xv->type;
    const glow_attr *ta = cpu_attr(in, GA_TIME_AXIS), *ba = cpu_attr(in, GA_BATCH_AXIS);
    int64_t t = ta ? ta->v.i : 0, b = ba ? ba->v.i : 1;
    cpu_kernel k;
    cpu_arg a[12] = { cpu_ptr(xv, 0) };
    if (in->nout != 1 || in->nops != 3 || x->rank < 2 || t < 0 || t > 1 || b != 1 - t ||
        !glow_type_equal(&yv->type, x) || glow_type_numel(&lv->type) != x->dims[b] ||
        !cpu_kernel_by_size(reverse_k, glow_dtype_size(x->dtype), &k) || !cpu_no_alias(in) ||
        !index_args(lv, &a[1]) || !x->dims[0] || !x->dims[1])
        return false;
    a[3] = cpu_ptr(yv, 0), a[4] = cpu_num(t == 0), a[5] = cpu_num(x->dims[0]);
    a[6] = cpu_num(x->dims[1]), a[7] = cpu_num(glow_type_numel(x) / (x->dims[0] * x->dims[1]));
    return set_op(op, k, a, 8 + error_args(in, &a[8]));
}

bool cpu_select_index(const ir_instr *in, cpu_op *ops, int *nops)
{
    *nops = 1;
    switch ((int)in->kind) {
    case IK_GATHER: return sel_gather(in, ops);
    case IK_GATHER_ELEMENTS: case IK_SCATTER_ELEMENTS: return sel_elements(in, ops);
    case IK_GATHER_ND: case IK_SCATTER_ND: return sel_nd(in, ops);
    case IK_ONE_HOT: return sel_one_hot(in, ops);
    case IK_REVERSE_SEQUENCE: return sel_reverse(in, ops);
    default: return false;
    }
}
