// gen_ops_tensor.c - The generator's elementwise and data-movement ops: activations,
// broadcasting binary ops and residual joins, reshapes, transposes, concatenations, slices,
// gathers, pads and reductions. Each op picks its input among the values computed so far,
// draws attributes that are valid for that input's shape, and computes its output shape by
// the ONNX rules (so the model is valid by construction).
#include <stdlib.h>
#include <string.h>

#include "fuzz/gen.h"
#include "testlib/onnx_build.h"

static bool activation(gen_graph *g)
{
    static const char *const ops[] = { "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu",
                                       "HardSigmoid", "HardSwish", "Softplus", "Softsign",
                                       "Abs", "Neg", "Erf", "Clip", "Relu", "Clip" };
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const char *op = GEN_PICK(ops);
    int ins[3] = { x, -1, -1 }, nin = 1;
    if (!strcmp(op, "Clip")) {
        /* min and max are optional inputs: either may be left out */
        float lo = (float)gen_int(g, -300, 0) / 100.0f, hi = (float)gen_int(g, 0, 300) / 100.0f;
        ins[1] = gen_chance(g, 80) ? gen_scalar(g, lo) : -1;
        ins[2] = gen_chance(g, 80) ? gen_scalar(g, hi) : -1;
        nin = ins[2] >= 0 ? 3 : ins[1] >= 0 ? 2 : 1;
    }
    gen_val *v = &g->vals[x];
    int n = gen_node_add(g, op, ins, nin, v->rank, v->dims);
    if (n < 0)
        return false;
    if (!strcmp(op, "LeakyRelu") || !strcmp(op, "Elu"))
        gen_attr_float(g, n, "alpha", (float)gen_int(g, 1, 50) / 100.0f);
    if (!strcmp(op, "HardSigmoid")) {
        gen_attr_float(g, n, "alpha", (float)gen_int(g, 5, 50) / 100.0f);
        gen_attr_float(g, n, "beta", (float)gen_int(g, 20, 80) / 100.0f);
    }
    return true;
}

/* The ONNX (numpy) broadcast of two shapes into out; its rank, or -1 when incompatible. */
static int broadcast(const gen_val *a, const gen_val *b, int64_t *out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = a->rank - r + i, ib = b->rank - r + i;
        int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b->dims[ib] : 1;
        if (x != y && x != 1 && y != 1)
            return -1;
        out[i] = x == 1 ? y : x;
    }
    return r;
}

/* A second operand for x: another computed value of the same shape (a residual join) or
 * one that broadcasts with it, else a constant of x's trailing dims with some set to 1. */
static int second_operand(gen_graph *g, int x, bool same_shape_only)
{
    const gen_val *a = &g->vals[x];
    if (gen_chance(g, 55)) {
        int best = -1;
        for (int tries = 0; tries < 12 && best < 0; tries++) {
            int y = gen_pick(g, 1, 4);
            int64_t d[GEN_MAX_RANK];
            if (y < 0 || y == x)
                continue;
            int r = broadcast(a, &g->vals[y], d);
            bool same = r == a->rank && !memcmp(d, a->dims, sizeof(int64_t) * (size_t)r) &&
                        g->vals[y].rank == a->rank;
            if (r > 0 && gen_fits(r, d) && (same || (!same_shape_only && gen_chance(g, 40))))
                best = y;
        }
        if (best >= 0)
            return best;
    }
    int r = same_shape_only ? a->rank : (int)gen_int(g, 1, a->rank);
    int64_t d[GEN_MAX_RANK];
    for (int i = 0; i < r; i++) {
        d[i] = a->dims[a->rank - r + i];
        if (!same_shape_only && gen_chance(g, 40))
            d[i] = 1;
    }
    return gen_value(g, GV_CONST, MK_F32, r, d, 1.0f);
}

static bool binary(gen_graph *g)
{
    static const char *const ops[] = { "Add", "Add", "Sub", "Mul", "Mul", "Max", "Min", "Div",
                                       "PRelu", "Sum", "Mean" };
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const char *op = GEN_PICK(ops);
    int y;
    if (!strcmp(op, "Div")) {
        /* a constant divisor away from zero: the quotient stays as well-conditioned as x */
        const gen_val *a = &g->vals[x];
        int r = (int)gen_int(g, 1, a->rank);
        int64_t d[GEN_MAX_RANK];
        for (int i = 0; i < r; i++)
            d[i] = gen_chance(g, 50) ? 1 : a->dims[a->rank - r + i];
        y = gen_value(g, GV_CONST, MK_F32, r, d, 1.0f);
        if (y < 0)
            return false;
        float *p = g->vals[y].data;
        for (int64_t i = 0; i < gen_dims_numel(r, d); i++)
            p[i] = (gen_chance(g, 50) ? 1.0f : -1.0f) * (float)gen_int(g, 50, 400) / 100.0f;
    } else if (!strcmp(op, "PRelu")) {
        /* the slope broadcasts to x one way only: a constant of x's trailing dims or 1s */
        const gen_val *a = &g->vals[x];
        int r = (int)gen_int(g, 1, a->rank);
        int64_t d[GEN_MAX_RANK];
        for (int i = 0; i < r; i++)
            d[i] = gen_chance(g, 50) ? 1 : a->dims[a->rank - r + i];
        y = gen_value(g, GV_CONST, MK_F32, r, d, 0.5f);
    } else {
        y = second_operand(g, x, false);
    }
    if (y < 0)
        return false;
    int ins[3] = { x, y, -1 }, nin = 2;
    if (gen_chance(g, 30) && strcmp(op, "Div") && strcmp(op, "PRelu")) {
        int t = ins[0]; /* the broadcast operand first */
        ins[0] = ins[1];
        ins[1] = t;
    }
    if ((!strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "Max")) && gen_chance(g, 40))
        ins[nin++] = second_operand(g, x, false);
    int64_t d[GEN_MAX_RANK];
    int r = broadcast(&g->vals[ins[0]], &g->vals[ins[1]], d);
    if (r >= 0 && nin == 3 && ins[2] >= 0) {
        gen_val tmp = { 0 };
        tmp.rank = r;
        memcpy(tmp.dims, d, sizeof d);
        r = broadcast(&tmp, &g->vals[ins[2]], d);
    }
    if (r < 1 || !gen_fits(r, d) || (!strcmp(op, "PRelu") && r != g->vals[x].rank))
        return false;
    return gen_node_add(g, op, ins, nin, r, d) >= 0;
}

static bool reshape(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t d[GEN_MAX_RANK], shape[GEN_MAX_RANK];
    int r = 0;
    int how = (int)gen_int(g, 0, 3);
    if (how == 0 && a->rank >= 2) { /* merge two neighbours */
        int k = (int)gen_int(g, 0, a->rank - 2);
        for (int i = 0; i < a->rank; i++) {
            if (i == k + 1)
                d[r - 1] *= a->dims[i];
            else
                d[r++] = a->dims[i];
        }
    } else if (how == 1 && a->rank < 4) { /* split a dim by one of its factors */
        int k = (int)gen_int(g, 0, a->rank - 1);
        int64_t f = 1;
        for (int64_t c = 2; c <= a->dims[k]; c++)
            if (a->dims[k] % c == 0 && (f == 1 || gen_chance(g, 50)))
                f = c;
        for (int i = 0; i < a->rank; i++) {
            if (i == k) {
                d[r++] = f;
                d[r++] = a->dims[i] / f;
            } else {
                d[r++] = a->dims[i];
            }
        }
    } else if (how == 2) { /* flatten to 2-D at a random axis */
        int k = (int)gen_int(g, 0, a->rank);
        d[0] = gen_dims_numel(k, a->dims);
        d[1] = gen_dims_numel(a->rank - k, a->dims + k);
        r = 2;
        if (gen_chance(g, 30)) {
            int n = gen_node_add(g, "Flatten", &x, 1, 2, d);
            if (n >= 0)
                gen_attr_int(g, n, "axis", k < a->rank && gen_chance(g, 30) ? k - a->rank : k);
            return n >= 0;
        }
    } else { /* everything into one dim */
        d[0] = gen_numel(a);
        r = 1;
    }
    /* the shape as written: 0 copies the input's dim, -1 is inferred (once) */
    int minus = gen_chance(g, 50) ? (int)gen_int(g, 0, r - 1) : -1;
    for (int i = 0; i < r; i++) {
        shape[i] = d[i];
        if (i == minus)
            shape[i] = -1;
        else if (i < a->rank && a->dims[i] == d[i] && gen_chance(g, 30))
            shape[i] = 0;
    }
    int s = gen_i64s(g, r, shape);
    return s >= 0 && gen_node_add(g, "Reshape", (int[]){ x, s }, 2, r, d) >= 0;
}

static bool squeeze_unsqueeze(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t d[GEN_MAX_RANK];
    int ones[GEN_MAX_RANK], no = 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] == 1)
            ones[no++] = i;
    if (no && a->rank > 1 && gen_chance(g, 50)) {
        int k = ones[gen_int(g, 0, no - 1)], r = 0;
        for (int i = 0; i < a->rank; i++)
            if (i != k)
                d[r++] = a->dims[i];
        int ax = gen_i64s(g, 1, (int64_t[]){ gen_chance(g, 30) ? k - a->rank : k });
        return ax >= 0 && gen_node_add(g, "Squeeze", (int[]){ x, ax }, 2, r, d) >= 0;
    }
    if (a->rank >= 4)
        return false;
    int k = (int)gen_int(g, 0, a->rank), r = 0;
    for (int i = 0; i <= a->rank; i++)
        d[r++] = i == k ? 1 : a->dims[i < k ? i : i - 1];
    int ax = gen_i64s(g, 1, (int64_t[]){ k });
    return ax >= 0 && gen_node_add(g, "Unsqueeze", (int[]){ x, ax }, 2, r, d) >= 0;
}

static bool transpose(gen_graph *g)
{
    int x = gen_pick(g, 2, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t perm[GEN_MAX_RANK], d[GEN_MAX_RANK];
    for (int i = 0; i < a->rank; i++)
        perm[i] = i;
    for (int i = a->rank - 1; i > 0; i--) {
        int j = (int)gen_int(g, 0, i);
        int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < a->rank; i++)
        d[i] = a->dims[perm[i]];
    bool reverse = true; /* no perm attribute: the dims reversed */
    for (int i = 0; i < a->rank; i++)
        reverse = reverse && perm[i] == a->rank - 1 - i;
    int n = gen_node_add(g, "Transpose", &x, 1, a->rank, d);
    if (n >= 0 && !(reverse && gen_chance(g, 50)))
        gen_attr_ints(g, n, "perm", perm, a->rank);
    return n >= 0;
}

static bool concat(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int axis = (int)gen_int(g, 0, a->rank - 1);
    int ins[3] = { x, -1, -1 }, nin = 2 + gen_chance(g, 25);
    int64_t d[GEN_MAX_RANK];
    memcpy(d, a->dims, sizeof d);
    for (int k = 1; k < nin; k++) {
        int y = -1;
        for (int tries = 0; tries < 8 && y < 0; tries++) {
            int c = gen_pick(g, a->rank, a->rank);
            bool ok = c >= 0;
            for (int i = 0; ok && i < a->rank; i++)
                ok = i == axis || g->vals[c].dims[i] == a->dims[i];
            y = ok ? c : -1;
        }
        if (y < 0) { /* a constant slab of 1..5 along the axis */
            int64_t cd[GEN_MAX_RANK];
            memcpy(cd, a->dims, sizeof cd);
            cd[axis] = gen_int(g, 1, 5);
            y = gen_value(g, GV_CONST, MK_F32, a->rank, cd, 1.0f);
        }
        if (y < 0)
            return false;
        ins[k] = y;
        d[axis] += g->vals[y].dims[axis];
    }
    if (!gen_fits(a->rank, d))
        return false;
    int n = gen_node_add(g, "Concat", ins, nin, a->rank, d);
    if (n >= 0)
        gen_attr_int(g, n, "axis", gen_chance(g, 30) ? axis - a->rank : axis);
    return n >= 0;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static bool slice(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int64_t starts[GEN_MAX_RANK], ends[GEN_MAX_RANK], axes[GEN_MAX_RANK], steps[GEN_MAX_RANK];
    int64_t d[GEN_MAX_RANK];
    memcpy(d, a->dims, sizeof d);
    int k = 0;
    for (int ax = 0; ax < a->rank; ax++) {
        if (k && !gen_chance(g, 40))
            continue;
        int64_t n = a->dims[ax], st = GEN_PICK(((int64_t[]){ 1, 1, 1, 2, 3, -1, -2 }));
        int64_t s = gen_int(g, -n, n), e = gen_int(g, -n - 1, n + 1);
        if (gen_chance(g, 15))
            e = st > 0 ? INT64_MAX : INT64_MIN; /* "to the end", as exporters write it */
        /* the length by the ONNX rules */
        int64_t s1 = s < 0 ? s + n : s, e1 = e == INT64_MAX || e == INT64_MIN ? e
                                                : e < 0 ? e + n : e, len;
        if (st > 0) {
            s1 = clamp64(s1, 0, n);
            e1 = clamp64(e1, 0, n);
            len = e1 > s1 ? (e1 - s1 + st - 1) / st : 0;
        } else {
            s1 = clamp64(s1, 0, n - 1);
            e1 = clamp64(e1, -1, n - 1);
            len = s1 > e1 ? (s1 - e1 - st - 1) / -st : 0;
        }
        if (len <= 0)
            return false;
        d[ax] = len;
        starts[k] = s;
        ends[k] = e;
        axes[k] = gen_chance(g, 25) ? ax - a->rank : ax;
        steps[k++] = st;
    }
    int ins[5] = { x, gen_i64s(g, k, starts), gen_i64s(g, k, ends), gen_i64s(g, k, axes),
                   gen_i64s(g, k, steps) };
    for (int i = 0; i < 5; i++)
        if (ins[i] < 0)
            return false;
    return gen_node_add(g, "Slice", ins, 5, a->rank, d) >= 0;
}

static bool gather(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    int axis = (int)gen_int(g, 0, a->rank - 1);
    int ir = (int)gen_int(g, 0, 2);
    if (a->rank - 1 + ir > 4 || a->rank - 1 + ir < 1)
        return false;
    int64_t id[2] = { gen_int(g, 1, 6), gen_int(g, 1, 3) }, d[GEN_MAX_RANK];
    int idx = gen_value(g, GV_CONST, MK_I64, ir, id, 0);
    if (idx < 0)
        return false;
    int64_t *p = g->vals[idx].data, n = a->dims[axis];
    for (int64_t i = 0; i < gen_dims_numel(ir, id); i++)
        p[i] = gen_int(g, -n, n - 1); /* negative indices count from the end */
    int r = 0;
    for (int i = 0; i < a->rank; i++) {
        if (i == axis)
            for (int j = 0; j < ir; j++)
                d[r++] = id[j];
        else
            d[r++] = a->dims[i];
    }
    if (!gen_fits(r, d))
        return false;
    int nd = gen_node_add(g, "Gather", (int[]){ x, idx }, 2, r, d);
    if (nd >= 0)
        gen_attr_int(g, nd, "axis", gen_chance(g, 30) ? axis - a->rank : axis);
    return nd >= 0;
}

static bool pad(gen_graph *g)
{
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    static const char *const modes[] = { "constant", "constant", "reflect", "edge" };
    const char *mode = GEN_PICK(modes);
    int64_t pads[2 * GEN_MAX_RANK], d[GEN_MAX_RANK];
    for (int i = 0; i < a->rank; i++) {
        for (int e = 0; e < 2; e++) {
            int64_t n = a->dims[i], p = gen_chance(g, 50) ? 0 : gen_int(g, 1, 3);
            if (!strcmp(mode, "reflect"))
                p = n > 1 ? clamp64(p, 0, n - 1) : 0;
            else if (!strcmp(mode, "constant") && n > 2 && gen_chance(g, 8))
                p = -1; /* negative pads crop */
            pads[e * a->rank + i] = p;
        }
        d[i] = a->dims[i] + pads[i] + pads[a->rank + i];
        if (d[i] < 1)
            return false;
    }
    if (!gen_fits(a->rank, d))
        return false;
    int ins[3] = { x, gen_i64s(g, 2 * a->rank, pads), -1 }, nin = 2;
    if (!strcmp(mode, "constant") && gen_chance(g, 50))
        ins[nin++] = gen_scalar(g, (float)gen_int(g, -20, 20) / 4.0f);
    int n = gen_node_add(g, "Pad", ins, nin, a->rank, d);
    if (n >= 0 && (strcmp(mode, "constant") || gen_chance(g, 50)))
        gen_attr_str(g, n, "mode", mode);
    return n >= 0;
}

static bool reduce(gen_graph *g)
{
    static const char *const ops[] = { "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                       "ReduceSumSquare", "ReduceLogSumExp", "ReduceProd",
                                       "ReduceMean" };
    int x = gen_pick(g, 1, 4);
    if (x < 0)
        return false;
    const gen_val *a = &g->vals[x];
    const char *op = GEN_PICK(ops);
    int64_t axes[GEN_MAX_RANK], d[GEN_MAX_RANK];
    int k = 0, r = 0;
    bool keep = gen_chance(g, 50), red[GEN_MAX_RANK] = { false };
    for (int i = 0; i < a->rank; i++)
        if (gen_chance(g, 40) || (i == a->rank - 1 && !k)) {
            red[i] = true;
            axes[k++] = gen_chance(g, 25) ? i - a->rank : i;
        }
    if (k == a->rank)
        keep = true; /* keep every result at rank >= 1 */
    for (int i = 0; i < a->rank; i++)
        if (!red[i] || keep)
            d[r++] = red[i] ? 1 : a->dims[i];
    bool sum = !strcmp(op, "ReduceSum");
    int ins[2] = { x, sum ? gen_i64s(g, k, axes) : -1 };
    int n = gen_node_add(g, op, ins, sum ? 2 : 1, r, d);
    if (n < 0)
        return false;
    if (!sum)
        gen_attr_ints(g, n, "axes", axes, k);
    if (!keep || gen_chance(g, 50))
        gen_attr_int(g, n, "keepdims", keep);
    return true;
}

const gen_op_fn gen_tensor_ops[] = { activation, activation, binary, binary, binary,
                                     reshape, squeeze_unsqueeze, transpose, concat, slice,
                                     gather, pad, reduce };
const int gen_num_tensor_ops = (int)(sizeof gen_tensor_ops / sizeof gen_tensor_ops[0]);
