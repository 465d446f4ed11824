// onnx_ops_seq.c - Sequence and optional ops as edits of lists known at import:
// SequenceEmpty/Construct/At/Insert/Erase/Length, SplitToSequence, ConcatFromSequence,
// SequenceMap, Optional, OptionalHasElement, OptionalGetElement.
//
// Positions (SequenceAt/Insert/Erase, SplitToSequence's split) must be known at compile time:
// constants after folding, or graph inputs whose values the caller gave (as for every input
// that decides a shape). Lengths and presence are then constants, so SequenceLength and
// OptionalHasElement fold to constants and the graph keeps only tensors.
#include <string.h>

#include "onnx/onnx_internal.h"

enum { AT_GRAPH = 5 };

/* Input i as a sequence (not an optional, not a tensor). */
static glow_status seq_arg(onnx_ctx *cx, const Onnx__NodeProto *np, int i, onnx_seq **s)
{
    glow_value v;
    GLOW_TRY(onnx_input_any(cx, np, i, &v));
    onnx_seq *q = onnx_seq_of(v);
    if (!q || q->optional)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input %d '%s' is %s, expected a sequence",
                         i, np->input[i], onnx_seq_kind_str(v));
    *s = q;
    return GLOW_OK;
}

/* Input i as one position in [lo, hi], negative ones counted from n; *pos = dflt when the
 * input is absent. */
static glow_status position(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int n, int lo,
                            int hi, int dflt, int *pos)
{
    if (!onnx_has_input(np, i)) {
        *pos = dflt;
        return GLOW_OK;
    }
    int64_t *v;
    int cnt;
    GLOW_TRY(onnx_input_ints(cx, np, i, &v, &cnt));
    if (cnt != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "position '%s' holds %d values, expected "
                         "one", np->input[i], cnt);
    if (v[0] < lo || v[0] > hi)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "position %lld is out of range [%d, %d] "
                         "for a sequence of %d tensors", (long long)v[0], lo, hi, n);
    *pos = (int)(v[0] < 0 ? v[0] + n : v[0]);
    return GLOW_OK;
}

static glow_status set_seq(onnx_ctx *cx, const Onnx__NodeProto *np, int i, onnx_seq *s)
{
    return onnx_set_output(cx, np, i, onnx_seq_value(cx, s));
}

/* A tensor joining sequence s must have its element kind. */
static glow_status check_dtype(onnx_ctx *cx, const Onnx__NodeProto *np, const onnx_seq *s,
                               glow_value v)
{
    glow_dtype dt = glow_value_type(v)->dtype;
    if (s->dtype != GLOW_DTYPE_COUNT && dt != s->dtype)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "a %s tensor cannot join a sequence of %s",
                         glow_dtype_name(dt), glow_dtype_name(s->dtype));
    return GLOW_OK;
}

glow_status load_sequence_empty(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "dtype", 2));
    glow_dtype dt;
    int64_t code = onnx_attr_int(np, "dtype", 1);
    if (!onnx_dtype_of_code(code, &dt))
        return onnx_unsupported(cx, np, "dtype %lld", (long long)code);
    return set_seq(cx, np, 0, onnx_seq_new(cx, false, dt, 0));
}

glow_status load_sequence_construct(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                    glow_node_kind kind)
{
    int n = (int)np->n_input;
    if (n < 1 || n > ONNX_SEQ_MAX)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "%d inputs", n);
    onnx_seq *s = onnx_seq_new(cx, false, GLOW_DTYPE_COUNT, n);
    for (int i = 0; i < n; i++) {
        GLOW_TRY(onnx_input(cx, np, i, &s->elems[i]));
        GLOW_TRY(check_dtype(cx, np, s, s->elems[i]));
        s->dtype = glow_value_type(s->elems[i])->dtype;
    }
    return set_seq(cx, np, 0, s);
}

glow_status load_sequence_at(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                             glow_node_kind kind)
{
    onnx_seq *s = NULL;
    GLOW_TRY(seq_arg(cx, np, 0, &s));
    if (!onnx_has_input(np, 1))
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "input 1 (position) is required");
    int p;
    GLOW_TRY(position(cx, np, 1, s->n, -s->n, s->n - 1, 0, &p));
    return onnx_set_output(cx, np, 0, s->elems[p]);
}

glow_status load_sequence_insert(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                 glow_node_kind kind)
{
    onnx_seq *s = NULL;
    glow_value t;
    int p;
    GLOW_TRY(seq_arg(cx, np, 0, &s));
    GLOW_TRY(onnx_input(cx, np, 1, &t));
    GLOW_TRY(check_dtype(cx, np, s, t));
    if (s->n >= ONNX_SEQ_MAX)
        return onnx_unsupported(cx, np, "more than %d tensors in a sequence", ONNX_SEQ_MAX);
    GLOW_TRY(position(cx, np, 2, s->n, -s->n, s->n, s->n, &p));
    onnx_seq *r = onnx_seq_new(cx, false, glow_value_type(t)->dtype, s->n + 1);
    memcpy(r->elems, s->elems, (size_t)p * sizeof *r->elems);
    r->elems[p] = t;
    memcpy(r->elems + p + 1, s->elems + p, (size_t)(s->n - p) * sizeof *r->elems);
    return set_seq(cx, np, 0, r);
}

glow_status load_sequence_erase(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                glow_node_kind kind)
{
    onnx_seq *s = NULL;
    int p;
    GLOW_TRY(seq_arg(cx, np, 0, &s));
    if (s->n == 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "erasing from an empty sequence");
    GLOW_TRY(position(cx, np, 1, s->n, -s->n, s->n - 1, s->n - 1, &p));
    onnx_seq *r = onnx_seq_new(cx, false, s->dtype, s->n - 1);
    memcpy(r->elems, s->elems, (size_t)p * sizeof *r->elems);
    memcpy(r->elems + p, s->elems + p + 1, (size_t)(s->n - p - 1) * sizeof *r->elems);
    return set_seq(cx, np, 0, r);
}

glow_status load_sequence_length(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                 glow_node_kind kind)
{
    onnx_seq *s = NULL;
    GLOW_TRY(seq_arg(cx, np, 0, &s));
    return onnx_set_output(cx, np, 0, onnx_sub_scalar(cx, np, "length", GLOW_I64, s->n));
}

glow_status load_split_to_sequence(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                   glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const glow_type *t = glow_value_type(x);
    int axis;
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), t->rank, &axis));
    int64_t len = t->dims[axis], chunk = 1, *sizes = NULL;
    int n = 0;
    bool squeeze = !onnx_has_input(np, 1) && onnx_attr_int(np, "keepdims", 1) == 0;
    if (onnx_has_input(np, 1)) {
        const glow_tensor *sp;
        GLOW_TRY(onnx_input_const(cx, np, 1, &sp));
        int cnt;
        GLOW_TRY(onnx_input_ints(cx, np, 1, &sizes, &cnt));
        if (sp->type.rank == 0) {
            chunk = sizes[0];
            sizes = NULL;
            if (chunk <= 0)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "split %lld must be positive",
                                 (long long)chunk);
        } else {
            int64_t sum = 0;
            for (int k = 0; k < cnt; k++) {
                if (sizes[k] < 0)
                    return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "split[%d] = %lld is negative",
                                     k, (long long)sizes[k]);
                sum += sizes[k];
            }
            if (sum != len)
                return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "the splits add up to %lld, but "
                                 "axis %d has %lld elements", (long long)sum, axis,
                                 (long long)len);
            n = cnt;
        }
    }
    if (!sizes)
        n = (int)((len + chunk - 1) / chunk);
    if (n > ONNX_SEQ_MAX)
        return onnx_unsupported(cx, np, "%d pieces; glowc builds sequences of up to %d", n,
                                ONNX_SEQ_MAX);
    onnx_seq *s = onnx_seq_new(cx, false, t->dtype, n);
    int64_t start = 0;
    for (int k = 0; k < n; k++) {
        int64_t size = sizes ? sizes[k] : (len - start < chunk ? len - start : chunk);
        GLOW_TRY(onnx_slice_axis(cx, np, x, axis, start, start + size, &s->elems[k]));
        start += size;
        if (squeeze) {
            int64_t dims[GLOW_MAX_DIMS];
            for (int j = 0, r = 0; j < t->rank; j++)
                if (j != axis)
                    dims[r++] = t->dims[j];
            GLOW_TRY(onnx_reshape(cx, np, s->elems[k], t->rank - 1, dims, &s->elems[k]));
        }
    }
    return set_seq(cx, np, 0, s);
}

glow_status load_concat_from_sequence(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                      glow_node_kind kind)
{
    onnx_seq *s = NULL;
    GLOW_TRY(seq_arg(cx, np, 0, &s));
    if (!onnx_attr(np, "axis"))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required attribute 'axis'");
    if (s->n == 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "concatenating an empty sequence");
    bool new_axis = onnx_attr_int(np, "new_axis", 0) != 0;
    const glow_type *t0 = glow_value_type(s->elems[0]);
    int rank = t0->rank + (new_axis ? 1 : 0), axis;
    if (rank > GLOW_MAX_DIMS)
        return onnx_unsupported(cx, np, "stacking rank-%d tensors needs more than %d dims",
                                t0->rank, GLOW_MAX_DIMS);
    GLOW_TRY(onnx_axis(cx, np, onnx_attr_int(np, "axis", 0), rank, &axis));
    glow_value *vs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, s->n);
    for (int k = 0; k < s->n; k++) {
        vs[k] = s->elems[k];
        if (!new_axis)
            continue;
        const glow_type *t = glow_value_type(vs[k]);
        int64_t dims[GLOW_MAX_DIMS];
        for (int j = 0, r = 0; j < rank; j++)
            dims[j] = j == axis ? 1 : t->dims[r++];
        GLOW_TRY(onnx_reshape(cx, np, vs[k], rank, dims, &vs[k]));
    }
    glow_value out;
    GLOW_TRY(onnx_concat_many(cx, np, vs, s->n, axis, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* The body's output i element kind as declared (GLOW_DTYPE_COUNT when it declares none). */
static glow_dtype body_output_dtype(const Onnx__GraphProto *g, int i)
{
    const Onnx__TypeProto *tp = g->output[i]->type;
    glow_dtype dt;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
        glow_dtype_from_onnx(tp->tensor_type->elem_type, &dt))
        return dt;
    return GLOW_DTYPE_COUNT;
}

/* SequenceMap imports its body once per element: element k of every sequence input and the
 * tensor inputs as they are give element k of every output sequence. */
glow_status load_sequence_map(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "body", AT_GRAPH));
    const Onnx__AttributeProto *a = onnx_attr(np, "body");
    if (!a || !a->g)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "missing required graph attribute 'body'");
    const Onnx__GraphProto *body = a->g;
    int nin = (int)np->n_input, nout = (int)np->n_output;
    if (nin < 1 || nin > 1024 || nout < 1 || nout > 1024 || body->n_output != (size_t)nout)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "%d inputs and %d outputs for a body with %zu "
                         "outputs", nin, nout, body->n_output);
    glow_value *args = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nin);
    glow_value *ins = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nin);
    glow_value *outs = GLOW_NEW_ARRAY(&cx->scratch, glow_value, nout);
    int n = -1;
    for (int i = 0; i < nin; i++) {
        GLOW_TRY(onnx_input_any(cx, np, i, &args[i]));
        const onnx_seq *s = onnx_seq_of(args[i]);
        if (s && s->optional)
            return onnx_unsupported(cx, np, "input %d is an optional", i);
        if (!s && i == 0)
            return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input 0 must be a sequence");
        if (s && n >= 0 && s->n != n)
            return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d holds %d tensors, input 0 "
                             "holds %d", i, s->n, n);
        if (s)
            n = s->n;
    }
    onnx_seq **res = GLOW_NEW_ARRAY(&cx->scratch, onnx_seq *, nout);
    for (int o = 0; o < nout; o++)
        res[o] = onnx_seq_new(cx, false, body_output_dtype(body, o), n);
    const char *name = onnx_node_name(np);
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < nin; i++) {
            const onnx_seq *s = onnx_seq_of(args[i]);
            ins[i] = s ? s->elems[k] : args[i];
        }
        const char *scope = glow_arena_printf(cx->arena, "%s/it%d", name, k);
        GLOW_TRY(onnx_import_graph(cx, np, scope, body, ins, nin, outs, nout));
        for (int o = 0; o < nout; o++) {
            if (onnx_seq_of(outs[o]))
                return onnx_unsupported(cx, np, "body output %d is %s; glowc maps bodies "
                                        "giving tensors", o, onnx_seq_kind_str(outs[o]));
            res[o]->elems[k] = outs[o];
            res[o]->dtype = glow_value_type(outs[o])->dtype;
        }
    }
    for (int o = 0; o < nout; o++)
        GLOW_TRY(set_seq(cx, np, o, res[o]));
    return GLOW_OK;
}

/* The tensor element kind an Optional's `type` attribute names (GLOW_DTYPE_COUNT if none). */
static glow_dtype optional_type_attr(const Onnx__NodeProto *np)
{
    const Onnx__AttributeProto *a = onnx_attr(np, "type");
    const Onnx__TypeProto *tp = a ? a->tp : NULL;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
        tp = tp->sequence_type->elem_type;
    glow_dtype dt;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
        glow_dtype_from_onnx(tp->tensor_type->elem_type, &dt))
        return dt;
    return GLOW_DTYPE_COUNT;
}

glow_status load_optional(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                          glow_node_kind kind)
{
    if (!onnx_has_input(np, 0)) {
        if (!onnx_attr(np, "type"))
            return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "an empty Optional needs attribute "
                             "'type'");
        return set_seq(cx, np, 0, onnx_seq_new(cx, true, optional_type_attr(np), 0));
    }
    glow_value v;
    GLOW_TRY(onnx_input_any(cx, np, 0, &v));
    const onnx_seq *in = onnx_seq_of(v);
    if (in && in->optional)
        return onnx_unsupported(cx, np, "an optional of an optional");
    onnx_seq *s = onnx_seq_new(cx, true, in ? in->dtype : glow_value_type(v)->dtype, 1);
    s->elems[0] = v;
    return set_seq(cx, np, 0, s);
}

glow_status load_optional_has_element(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                      glow_node_kind kind)
{
    bool has = false;
    if (onnx_has_input(np, 0)) {   /* no input at all (opset 18) is an empty optional */
        glow_value v;
        GLOW_TRY(onnx_input_any(cx, np, 0, &v));
        const onnx_seq *s = onnx_seq_of(v);
        has = !s || !s->optional || s->n > 0;
    }
    return onnx_set_output(cx, np, 0, onnx_sub_scalar(cx, np, "has", GLOW_BOOL, has));
}

glow_status load_optional_get_element(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                      glow_node_kind kind)
{
    glow_value v;
    GLOW_TRY(onnx_input_any(cx, np, 0, &v));
    const onnx_seq *s = onnx_seq_of(v);
    if (s && s->optional && s->n == 0)
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "input '%s' is an optional that is empty "
                         "(known at import), so it has no element to get", np->input[0]);
    return onnx_set_output(cx, np, 0, s && s->optional ? s->elems[0] : v);
}
