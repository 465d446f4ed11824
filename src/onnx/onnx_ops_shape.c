// onnx_ops_shape.c - ONNX loaders for reshaping and data movement: Reshape, Flatten, Squeeze,
// Unsqueeze, Transpose, Concat, Split, Slice, Pad, Expand, Tile, Trilu.
//
// Every loader turns ONNX's opset-dependent inputs and defaults into the fully normalized
// attributes of nodes.def (one entry per dim, non-negative axes), so later stages never see
// ONNX conventions. Shape operands must be constants once import-time folding has run; when
// they are not, the model has a data-dependent shape and is reported as unsupported.
#include <inttypes.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Writes dims as "[2, 3, 4]" into buf (truncated when too long). */
static const char *fmt_dims(char *buf, size_t size, int n, const int64_t *dims)
{
    size_t len = 0;
    len += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

/* Reads constant integer input i; a computed one means a data-dependent shape. */
static glow_status static_ints(onnx_ctx *cx, const Onnx__NodeProto *np, int i, const char *what,
                               int64_t **vals, int *count)
{
    GLOW_TRY(onnx_input_static(cx, np, i, what));
    return onnx_input_ints(cx, np, i, vals, count);
}

/* Axes from the attribute (opset < since_input) or the optional input 1; -1 count if absent. */
static glow_status axes_attr_or_input(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                      int since_input, const int64_t **axes, int *count)
{
    if (opset < since_input) {
        *count = onnx_attr_ints(np, "axes", axes);
        return GLOW_OK;
    }
    *count = -1;
    if (!onnx_has_input(np, 1))
        return GLOW_OK;
    int64_t *vals;
    GLOW_TRY(static_ints(cx, np, 1, "axes", &vals, count));
    *axes = vals;
    return GLOW_OK;
}

/* Normalizes `n` axes for `rank` into out (sorted flags in seen[]); fails on repeats. */
static glow_status norm_axes(onnx_ctx *cx, const Onnx__NodeProto *np, const int64_t *axes, int n,
                             int rank, bool *seen, int *out)
{
    for (int i = 0; i < rank; i++)
        seen[i] = false;
    for (int i = 0; i < n; i++) {
        int a;
        GLOW_TRY(onnx_axis(cx, np, axes[i], rank, &a));
        if (seen[a])
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %" PRId64 " is repeated", axes[i]);
        seen[a] = true;
        if (out)
            out[i] = a;
    }
    return GLOW_OK;
}

glow_status load_reshape(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    const int64_t *shape;
    int n;
    if (opset < 5) {
        n = onnx_attr_ints(np, "shape", &shape);
        if (n < 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'shape' is missing");
    } else {
        int64_t *vals;
        GLOW_TRY(static_ints(cx, np, 1, "shape", &vals, &n));
        shape = vals;
    }
    bool allowzero = opset >= 14 && onnx_attr_int(np, "allowzero", 0) != 0;
    char b1[128], b2[256];
    fmt_dims(b2, sizeof b2, n, shape);
    if (n > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "shape %s has %d dims; glowc supports up to %d", b2, n,
                                GLOW_MAX_DIMS);
    int64_t dims[GLOW_MAX_DIMS];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = shape[i];
        if (d == 0 && !allowzero) {
            if (i >= xt->rank)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                                 "shape %s copies dim %d (0) but the input %s has rank %d", b2, i,
                                 fmt_dims(b1, sizeof b1, xt->rank, xt->dims), xt->rank);
            d = xt->dims[i];
        } else if (d == -1) {
            if (infer >= 0)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "shape %s has more than one -1", b2);
            infer = i;
            dims[i] = 1;
            continue;
        } else if (d < 0) {
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "shape %s has a negative dim", b2);
        }
        dims[i] = d;
        if (!glow_mul_overflow_i64(known, d, &known))
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "shape %s is too large", b2);
    }
    int64_t numel = glow_type_numel(xt);
    fmt_dims(b1, sizeof b1, xt->rank, xt->dims);
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                             "cannot reshape %s (%" PRId64 " elements) to %s", b1, numel, b2);
        dims[infer] = numel / known;
    } else if (known != numel) {
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                         "cannot reshape %s (%" PRId64 " elements) to %s (%" PRId64 ")", b1,
                         numel, b2, known);
    }
    glow_value out;
    GLOW_TRY(onnx_reshape(cx, np, x, n, dims, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_flatten(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int64_t axis = onnx_attr_int(np, "axis", 1);
    /* Flatten's axis may equal the rank (everything goes to the first dim). */
    if (axis < -(int64_t)xt->rank || axis > xt->rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %" PRId64 " is out of range for rank %d",
                         axis, xt->rank);
    if (axis < 0)
        axis += xt->rank;
    int64_t dims[2] = { 1, 1 };
    for (int i = 0; i < xt->rank; i++)
        dims[i < axis ? 0 : 1] *= xt->dims[i];
    glow_value out;
    GLOW_TRY(onnx_reshape(cx, np, x, 2, dims, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_squeeze(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    const int64_t *axes = NULL;
    int naxes;
    GLOW_TRY(axes_attr_or_input(cx, np, opset, 13, &axes, &naxes));
    bool drop[GLOW_MAX_DIMS];
    if (naxes < 0) {
        for (int i = 0; i < xt->rank; i++)
            drop[i] = xt->dims[i] == 1;
    } else {
        GLOW_TRY(norm_axes(cx, np, axes, naxes, xt->rank, drop, NULL));
        for (int i = 0; i < xt->rank; i++) {
            char b[128];
            if (drop[i] && xt->dims[i] != 1)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE,
                                 "cannot squeeze dim %d of %s: its size is %" PRId64 ", not 1", i,
                                 fmt_dims(b, sizeof b, xt->rank, xt->dims), xt->dims[i]);
        }
    }
    int64_t dims[GLOW_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < xt->rank; i++)
        if (!drop[i])
            dims[n++] = xt->dims[i];
    glow_value out;
    GLOW_TRY(onnx_reshape(cx, np, x, n, dims, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_unsqueeze(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    const int64_t *axes = NULL;
    int naxes;
    GLOW_TRY(axes_attr_or_input(cx, np, opset, 13, &axes, &naxes));
    if (naxes < 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'axes' is missing");
    int rank = xt->rank + naxes;
    if (rank > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "the result would have %d dims; glowc supports up to %d",
                                rank, GLOW_MAX_DIMS);
    bool ins[GLOW_MAX_DIMS];
    GLOW_TRY(norm_axes(cx, np, axes, naxes, rank, ins, NULL));
    int64_t dims[GLOW_MAX_DIMS];
    for (int i = 0, j = 0; i < rank; i++)
        dims[i] = ins[i] ? 1 : xt->dims[j++];
    glow_value out;
    GLOW_TRY(onnx_reshape(cx, np, x, rank, dims, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_transpose(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    int rank = glow_value_type(x)->rank;
    const int64_t *p;
    int n = onnx_attr_ints(np, "perm", &p);
    int64_t perm[GLOW_MAX_DIMS];
    if (n < 0) {
        for (int i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
    } else {
        if (n != rank)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                             "'perm' has %d values but the input has rank %d", n, rank);
        bool seen[GLOW_MAX_DIMS] = { false };
        for (int i = 0; i < n; i++) {
            if (p[i] < 0 || p[i] >= rank || seen[p[i]])
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                                 "'perm' is not a permutation of 0..%d (value %" PRId64 ")",
                                 rank - 1, p[i]);
            seen[p[i]] = true;
            perm[i] = p[i];
        }
    }
    glow_attr a = GLOW_AINTS(PERM, perm, rank);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &x, 1, &a, 1, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_concat(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    int nin = onnx_num_inputs(np);
    if (nin < 1)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "has no inputs");
    if (opset >= 4 && !onnx_attr(np, "axis"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'axis' is missing");
    glow_value *ins = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nin);
    int n = 0, rank = -1, axis = 0;
    glow_value first = { 0 };
    for (int i = 0; i < nin; i++) {
        glow_value v;
        GLOW_TRY(onnx_input(cx, np, i, &v));
        const glow_type *t = glow_value_type(v);
        if (i == 0) {
            first = v;
            rank = t->rank;
            if (rank == 0)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 0 is a scalar");
            GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 1), rank, &axis));
        }
        /* Exporters concatenate empty tensors when building shapes; they add nothing. */
        if (glow_type_numel(t) == 0 && nin > 1)
            continue;
        if (t->rank != rank) {
            char b0[128], b1[128];
            const glow_type *t0 = glow_value_type(first);
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d %s and input 0 %s differ in rank",
                             i, fmt_dims(b0, sizeof b0, t->rank, t->dims),
                             fmt_dims(b1, sizeof b1, t0->rank, t0->dims));
        }
        ins[n++] = v;
    }
    if (n == 0)
        ins[n++] = first;
    glow_attr a = GLOW_AI(AXIS, axis);
    glow_value out = ins[0];
    if (n == 1) {
        GLOW_TRY(onnx_build(cx, np, NK_CONCAT, ins, 1, &a, 1, NULL, 0, &out));
        return onnx_set_output(cx, np, 0, out);
    }
    /* CONCAT takes at most 64 operands: longer lists are joined in chunks. */
    int max = glow_node_kind_max_in(NK_CONCAT);
    if (max > 64)
        max = 64;
    int done = 0;
    while (done < n) {
        int take = n - done;
        glow_value chunk[64];
        int k = 0;
        if (done > 0)
            chunk[k++] = out;
        if (take > max - k)
            take = max - k;
        for (int i = 0; i < take; i++)
            chunk[k++] = ins[done + i];
        done += take;
        GLOW_TRY(onnx_build(cx, np, NK_CONCAT, chunk, k, &a, 1, NULL, 0, &out));
    }
    return onnx_set_output(cx, np, 0, out);
}

/* A SLICE of x taking [start, start+len) along axis with step 1. */
static glow_status slice_axis(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x, int axis,
                              int64_t start, int64_t len, glow_value *out)
{
    const glow_type *xt = glow_value_type(x);
    int64_t *st = GLOW_NEW_ARRAY(&cx->scratch, int64_t, 3 * GLOW_MAX_DIMS);
    int64_t *en = st + GLOW_MAX_DIMS, *sp = en + GLOW_MAX_DIMS;
    for (int i = 0; i < xt->rank; i++) {
        st[i] = i == axis ? start : 0;
        en[i] = i == axis ? start + len : xt->dims[i];
        sp[i] = 1;
    }
    glow_attr attrs[3] = { GLOW_AINTS(STARTS, st, xt->rank), GLOW_AINTS(ENDS, en, xt->rank),
                           GLOW_AINTS(STEPS, sp, xt->rank) };
    return onnx_build(cx, np, NK_SLICE, &x, 1, attrs, 3, NULL, 0, out);
}

glow_status load_split(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), xt->rank, &axis));
    int64_t dim = xt->dims[axis];
    int nout = onnx_num_outputs(np);
    if (nout < 1)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "has no outputs");
    const int64_t *split = NULL;
    int nsplit = -1;
    if ((opset >= 13 || opset < 2) && onnx_has_input(np, 1)) {
        int64_t *vals;
        GLOW_TRY(static_ints(cx, np, 1, "split", &vals, &nsplit));
        split = vals;
    } else if (opset < 13) {
        nsplit = onnx_attr_ints(np, "split", &split);
    }
    int64_t *sizes = GLOW_NEW_ARRAY(&cx->scratch, int64_t, nout);
    if (nsplit >= 0) {
        if (nsplit != nout)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'split' has %d values for %d outputs",
                             nsplit, nout);
        int64_t sum = 0;
        for (int i = 0; i < nout; i++) {
            if (split[i] < 0 || split[i] > dim)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'split' value %" PRId64
                                 " is out of range for dim %" PRId64, split[i], dim);
            sizes[i] = split[i];
            sum += split[i];
        }
        if (sum != dim)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'split' sums to %" PRId64
                             " but axis %d has size %" PRId64, sum, axis, dim);
    } else if (opset >= 18 && onnx_attr(np, "num_outputs")) {
        /* Opset 18: chunks of ceil(dim / n), the last one smaller. */
        int64_t num = onnx_attr_int(np, "num_outputs", 0);
        if (num != nout)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                             "'num_outputs' is %" PRId64 " but the node has %d outputs", num, nout);
        int64_t chunk = (dim + num - 1) / num, left = dim;
        for (int i = 0; i < nout; i++) {
            sizes[i] = left < chunk ? left : chunk;
            left -= sizes[i];
        }
    } else {
        if (dim % nout != 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "axis %d of size %" PRId64
                             " cannot be split into %d equal parts", axis, dim, nout);
        for (int i = 0; i < nout; i++)
            sizes[i] = dim / nout;
    }
    int64_t start = 0;
    for (int i = 0; i < nout; i++) {
        if (onnx_has_output(np, i)) {
            glow_value out;
            GLOW_TRY(slice_axis(cx, np, x, axis, start, sizes[i], &out));
            GLOW_TRY(onnx_set_output(cx, np, i, out));
        }
        start += sizes[i];
    }
    return GLOW_OK;
}

/* Reads Slice's starts/ends/axes/steps: attributes before opset 10, inputs after. */
static glow_status slice_params(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                const int64_t **v, int *n)
{
    static const char *const names[4] = { "starts", "ends", "axes", "steps" };
    for (int k = 0; k < 4; k++) {
        v[k] = NULL;
        n[k] = -1;
        if (opset < 10) {
            if (k < 3)
                n[k] = onnx_attr_ints(np, names[k], &v[k]);
        } else if (onnx_has_input(np, k + 1)) {
            int64_t *vals;
            GLOW_TRY(static_ints(cx, np, k + 1, names[k], &vals, &n[k]));
            v[k] = vals;
        }
    }
    if (n[0] < 0 || n[1] < 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'starts' and 'ends' are required");
    if (n[1] != n[0] || (n[2] >= 0 && n[2] != n[0]) || (n[3] >= 0 && n[3] != n[0]))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                         "'starts', 'ends', 'axes' and 'steps' differ in length (%d, %d, %d, %d)",
                         n[0], n[1], n[2], n[3]);
    return GLOW_OK;
}

glow_status load_slice(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    const int64_t *v[4];
    int n[4];
    GLOW_TRY(slice_params(cx, np, opset, v, n));
    int rank = xt->rank;
    int64_t *st = GLOW_NEW_ARRAY(&cx->scratch, int64_t, 3 * GLOW_MAX_DIMS);
    int64_t *en = st + GLOW_MAX_DIMS, *sp = en + GLOW_MAX_DIMS;
    for (int i = 0; i < rank; i++) {
        st[i] = 0;
        en[i] = xt->dims[i];
        sp[i] = 1;
    }
    bool seen[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < n[0]; i++) {
        int a = i;
        if (v[2]) {
            GLOW_TRY(onnx_axis(cx, np, v[2][i], rank, &a));
        } else if (i >= rank) {
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR,
                             "%d starts given for an input of rank %d", n[0], rank);
        }
        if (seen[a])
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %d is repeated", a);
        seen[a] = true;
        int64_t dim = xt->dims[a], step = v[3] ? v[3][i] : 1;
        if (step == 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "step for axis %d is 0", a);
        /* Per the spec: negative positions count from the end, then clamp to [0, dim] for
         * positive steps and to [0, dim-1] / [-1, dim-1] for negative ones. Adding dim to a
         * negative value cannot overflow. */
        int64_t s = v[0][i], e = v[1][i];
        if (s < 0)
            s += dim;
        if (e < 0)
            e += dim;
        if (step > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
        } else {
            s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
        }
        st[a] = s;
        en[a] = e;
        sp[a] = step;
    }
    glow_attr attrs[3] = { GLOW_AINTS(STARTS, st, rank), GLOW_AINTS(ENDS, en, rank),
                           GLOW_AINTS(STEPS, sp, rank) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_SLICE, &x, 1, attrs, 3, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_pad(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int rank = xt->rank;
    const char *mode = onnx_attr_str(cx, np, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") &&
        (opset < 19 || strcmp(mode, "wrap")))
        return onnx_unsupported(cx, np, "mode '%s' is not supported", mode);
    const int64_t *pads;
    int npads;
    double value = 0;
    const int64_t *axes = NULL;
    int naxes = -1;
    if (opset < 11) {
        npads = onnx_attr_ints(np, opset < 2 ? "paddings" : "pads", &pads);
        if (npads < 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'pads' is missing");
        value = onnx_attr_float(np, "value", 0.0f);
    } else {
        int64_t *vals;
        GLOW_TRY(static_ints(cx, np, 1, "pads", &vals, &npads));
        pads = vals;
        if (onnx_has_input(np, 2)) {
            glow_value cv;
            GLOW_TRY(onnx_input(cx, np, 2, &cv));
            if (!glow_value_is_constant(cv))
                return onnx_unsupported(cx, np, "input 2 'constant_value' is computed at run "
                                        "time; glowc needs it constant");
            double *fv;
            int nfv;
            GLOW_TRY(onnx_input_floats(cx, np, 2, &fv, &nfv));
            if (nfv > 0)
                value = fv[0];
        }
        if (opset >= 18 && onnx_has_input(np, 3)) {
            int64_t *av;
            GLOW_TRY(static_ints(cx, np, 3, "axes", &av, &naxes));
            axes = av;
        }
    }
    int nax = naxes >= 0 ? naxes : rank;
    if (npads != 2 * nax)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'pads' has %d values; expected %d for %d axes",
                         npads, 2 * nax, nax);
    int64_t *p = GLOW_NEW_ARRAY(&cx->scratch, int64_t, 2 * GLOW_MAX_DIMS);
    bool seen[GLOW_MAX_DIMS] = { false };
    for (int i = 0; i < nax; i++) {
        int a = i;
        if (axes)
            GLOW_TRY(onnx_axis(cx, np, axes[i], rank, &a));
        if (seen[a])
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "axis %d is repeated", a);
        seen[a] = true;
        p[a] = pads[i];
        p[rank + a] = pads[nax + i];
        /* Bounded first so that the sum below cannot overflow. */
        const int64_t lim = (int64_t)1 << 40;
        if (p[a] < -lim || p[a] > lim || p[rank + a] < -lim || p[rank + a] > lim)
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "pads %" PRId64 ", %" PRId64
                             " for axis %d are too large", p[a], p[rank + a], a);
        if (p[a] + xt->dims[a] + p[rank + a] < 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "pads %" PRId64 ", %" PRId64
                             " remove more than the %" PRId64 " elements of axis %d",
                             p[a], p[rank + a], xt->dims[a], a);
    }
    glow_attr attrs[3] = { GLOW_AINTS(PADS, p, 2 * rank), GLOW_ASTR(MODE, mode),
                           GLOW_AF(VALUE, value) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_PAD, &x, 1, attrs, 3, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_expand(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int64_t *shape;
    int n;
    GLOW_TRY(static_ints(cx, np, 1, "shape", &shape, &n));
    char b1[128], b2[128];
    if (n > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "shape %s has %d dims; glowc supports up to %d",
                                fmt_dims(b2, sizeof b2, n, shape), n, GLOW_MAX_DIMS);
    int rank;
    int64_t dims[GLOW_MAX_DIMS];
    if (!glow_broadcast_shapes(xt->rank, xt->dims, n, shape, &rank, dims))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "cannot broadcast the input %s to shape %s",
                         fmt_dims(b1, sizeof b1, xt->rank, xt->dims),
                         fmt_dims(b2, sizeof b2, n, shape));
    glow_value out;
    GLOW_TRY(onnx_broadcast_to(cx, np, x, rank, dims, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_tile(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *xt = glow_value_type(x);
    int64_t *reps;
    int n;
    GLOW_TRY(static_ints(cx, np, 1, "repeats", &reps, &n));
    if (n != xt->rank)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'repeats' has %d values for rank %d", n,
                         xt->rank);
    for (int i = 0; i < n; i++) {
        int64_t d;
        if (reps[i] < 0 || !glow_mul_overflow_i64(xt->dims[i], reps[i], &d))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "repeat %" PRId64 " for axis %d is invalid",
                             reps[i], i);
    }
    glow_attr a = GLOW_AINTS(REPEATS, reps, n);
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_TILE, &x, 1, &a, 1, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_trilu(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    if (glow_value_type(x)->rank < 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "the input has rank %d; Trilu needs >= 2",
                         glow_value_type(x)->rank);
    int64_t k = 0;
    if (onnx_has_input(np, 1)) {
        int64_t *kv;
        int nk;
        GLOW_TRY(static_ints(cx, np, 1, "k", &kv, &nk));
        if (nk != 1)
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "input 1 'k' has %d values, not 1", nk);
        k = kv[0];
    }
    glow_attr attrs[2] = { GLOW_AI(UPPER, onnx_attr_int(np, "upper", 1) != 0), GLOW_AI(K, k) };
    glow_value out;
    GLOW_TRY(onnx_build(cx, np, NK_TRILU, &x, 1, attrs, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}
