// onnx_seq.c - Sequences and optionals resolved at import: their handles, graph inputs and
// outputs that hold them, and selecting between two of them for a run-time If.
//
// glowc's graph has tensors only. A static compiler knows almost every sequence's length and
// element types while it imports (constant positions, splits of static tensors, loops it
// unrolls), so a sequence is just a list of graph values, and an optional is such a list of
// length 0 or 1 that is known to be present or absent. The list travels through the importer
// as an ordinary glow_value whose node is a detached handle (never part of the module) pointing
// at the list: subgraph import, If and Loop pass it around like any value, while onnx_input
// refuses it to every tensor op. docs/onnx-import.md, "Sequences and optionals".
#include <stdio.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Handles carry this id, which no node of a module ever gets (ids count up from 0). */
#define SEQ_HANDLE_ID UINT32_MAX

onnx_seq *onnx_seq_of(glow_value v)
{
    if (!v.node || v.node->id != SEQ_HANDLE_ID || v.node->kind != NK_PLACEHOLDER)
        return NULL;
    return v.node->aux;
}

onnx_seq *onnx_seq_new(onnx_ctx *cx, bool optional, glow_dtype dtype, int n)
{
    onnx_seq *s = GLOW_NEW(cx->arena, onnx_seq);
    s->optional = optional;
    s->dtype = dtype;
    s->n = n;
    s->elems = GLOW_NEW_ARRAY(cx->arena, glow_value, n > 0 ? n : 1);
    return s;
}

glow_value onnx_seq_value(onnx_ctx *cx, onnx_seq *s)
{
    glow_node *h = GLOW_NEW(cx->arena, glow_node);
    h->kind = NK_PLACEHOLDER;
    h->id = SEQ_HANDLE_ID;
    h->name = s->optional ? "<optional>" : "<sequence>";
    /* A type, so that generic code asking for one gets something harmless. */
    h->outs = GLOW_NEW(cx->arena, glow_type);
    *h->outs = glow_type_scalar(GLOW_BOOL);
    h->nout = 1;
    h->aux = s;
    return glow_val(h, 0);
}

const char *onnx_seq_kind_str(glow_value v)
{
    const onnx_seq *s = onnx_seq_of(v);
    return !s ? "a tensor" : s->optional ? "an optional" : "a sequence";
}

/* --- graph inputs --- */

/* The sequence or optional type of vi, or NULL when vi holds something else. */
static const Onnx__TypeProto *container_type(const Onnx__ValueInfoProto *vi, bool *optional)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp)
        return NULL;
    *optional = tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ||
        tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
        return tp;
    return NULL;
}

bool onnx_seq_is_container(const Onnx__ValueInfoProto *vi)
{
    bool opt;
    return container_type(vi, &opt) != NULL;
}

/* The element kind a declared tensor type names (GLOW_DTYPE_COUNT when it names none). */
static glow_dtype declared_dtype(const Onnx__TypeProto *tp)
{
    glow_dtype dt;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
        tp->tensor_type->has_elem_type && glow_dtype_from_onnx(tp->tensor_type->elem_type, &dt))
        return dt;
    return GLOW_DTYPE_COUNT;
}

/* A fed input placeholder "<name>[k]" (or "<name>" for an optional's tensor). */
static glow_value input_placeholder(onnx_ctx *cx, const char *name, int k, const glow_type *t)
{
    const char *ph = k < 0 ? glow_arena_strdup(cx->arena, name)
                           : glow_arena_printf(cx->arena, "%s[%d]", name, k);
    return glow_val(glow_placeholder_create(cx->m, ph, t, true), 0);
}

glow_status onnx_seq_graph_input(onnx_ctx *cx, const Onnx__ValueInfoProto *vi, int count,
                                 const glow_type *const *types, glow_value *out, glow_diag *d)
{
    const char *name = vi->name ? vi->name : "";
    bool optional;
    const Onnx__TypeProto *tp = container_type(vi, &optional);
    const char *what = optional ? "an optional" : "a sequence";
    if (count != ONNX_SEQ_UNKNOWN && (count < -1 || count > ONNX_SEQ_MAX))
        return glow_fail(d, GLOW_ERR_USAGE, "input '%s' is %s of %d tensors; glowc takes up to "
                         "%d", name, what, count, ONNX_SEQ_MAX);
    if (count == ONNX_SEQ_UNKNOWN || !types)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' is %s; glowc resolves sequences "
                         "and optionals at compile time and needs its length and element types "
                         "(glowc run reads them from its SequenceProto/OptionalProto file)",
                         name, what);
    /* What the container holds: tensors, or (an optional's) a sequence of tensors. */
    const Onnx__TypeProto *inner = optional ? tp->optional_type->elem_type
                                            : tp->sequence_type->elem_type;
    bool opt_seq = optional && inner &&
                   inner->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    const Onnx__TypeProto *elem = opt_seq ? inner->sequence_type->elem_type : inner;
    if (elem && elem->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "input '%s' is %s of something other than "
                         "tensors; glowc supports sequences of tensors, optional tensors and "
                         "optional sequences of tensors", name, what);
    if (count == -1 && !optional)
        return glow_fail(d, GLOW_ERR_USAGE, "input '%s' is a sequence, not an optional; it "
                         "cannot be absent", name);
    if (optional && !opt_seq && count > 1)
        return glow_fail(d, GLOW_ERR_USAGE, "input '%s' is an optional tensor but %d tensors "
                         "were given", name, count);
    glow_dtype dt = declared_dtype(elem);
    for (int k = 0; k < count; k++) {
        if (!types[k])
            return glow_fail(d, GLOW_ERR_USAGE, "input '%s': element %d has no type", name, k);
        if (dt != GLOW_DTYPE_COUNT && types[k]->dtype != dt)
            return glow_fail(d, GLOW_ERR_BAD_TYPE, "input '%s': element %d is %s, the model "
                             "declares %s", name, k, glow_dtype_name(types[k]->dtype),
                             glow_dtype_name(dt));
        if (dt == GLOW_DTYPE_COUNT)
            dt = types[k]->dtype;
    }
    if (optional && !opt_seq) {
        onnx_seq *o = onnx_seq_new(cx, true, dt, count > 0);
        if (count > 0)
            o->elems[0] = input_placeholder(cx, name, -1, types[0]);
        *out = onnx_seq_value(cx, o);
        return GLOW_OK;
    }
    onnx_seq *o = opt_seq ? onnx_seq_new(cx, true, dt, count >= 0) : NULL;
    if (count >= 0) {
        onnx_seq *s = onnx_seq_new(cx, false, dt, count);
        for (int k = 0; k < count; k++)
            s->elems[k] = input_placeholder(cx, name, k, types[k]);
        *out = onnx_seq_value(cx, s);
        if (!o)
            return GLOW_OK;
        o->elems[0] = *out;
    }
    *out = onnx_seq_value(cx, o);
    return GLOW_OK;
}

/* --- graph outputs --- */

static void save(onnx_ctx *cx, const char *name, glow_value v)
{
    glow_node *ph = glow_placeholder_create(cx->m, glow_arena_strdup(cx->arena, name),
                                            glow_value_type(v), false);
    glow_save_create(cx->f, glow_arena_printf(cx->arena, "save_%s", name), v, ph);
}

glow_status onnx_seq_graph_output(onnx_ctx *cx, const char *name, glow_value v, int *count,
                                  glow_diag *d)
{
    const onnx_seq *s = onnx_seq_of(v);
    if (!s) {
        save(cx, name, v);
        *count = 1;
        return GLOW_OK;
    }
    if (s->optional && s->n == 0) {
        *count = -1;
        return GLOW_OK;
    }
    if (s->optional && !onnx_seq_of(s->elems[0])) {
        save(cx, name, s->elems[0]);
        *count = 1;
        return GLOW_OK;
    }
    const onnx_seq *q = s->optional ? onnx_seq_of(s->elems[0]) : s;
    if (q->optional)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "graph output '%s' is an optional of an "
                         "optional, which glowc does not support", name);
    for (int k = 0; k < q->n; k++) {
        if (onnx_seq_of(q->elems[k]))
            return glow_fail(d, GLOW_ERR_UNSUPPORTED, "graph output '%s' is a sequence of "
                             "sequences or optionals, which glowc does not support", name);
        save(cx, glow_arena_printf(cx->arena, "%s[%d]", name, k), q->elems[k]);
    }
    *count = q->n;
    return GLOW_OK;
}

/* --- If with a condition known only at run time --- */

glow_status onnx_seq_select(onnx_ctx *cx, const Onnx__NodeProto *np, int out, glow_value cond,
                            glow_value a, glow_value b, glow_value *res)
{
    const onnx_seq *sa = onnx_seq_of(a), *sb = onnx_seq_of(b);
    bool same = sa && sb && sa->optional == sb->optional && sa->n == sb->n;
    for (int k = 0; same && k < sa->n; k++) {
        const onnx_seq *ea = onnx_seq_of(sa->elems[k]), *eb = onnx_seq_of(sb->elems[k]);
        same = !ea && !eb && glow_type_equal(glow_value_type(sa->elems[k]),
                                             glow_value_type(sb->elems[k]));
    }
    if (!same) {
        /* The branches give differently shaped results: only the condition's value (when the
         * caller gave the input it comes from) can decide, as for any input deciding a shape. */
        const glow_tensor *t;
        glow_diag quiet = { 0 }, *saved = cx->d;
        cx->d = &quiet;
        glow_status s = onnx_input_const(cx, np, 0, &t);
        cx->d = saved;
        if (s == GLOW_OK && glow_type_numel(&t->type) == 1) {
            *res = glow_load_f64(t->type.dtype, t->data, 0) != 0 ? a : b;
            return GLOW_OK;
        }
        return onnx_unsupported(cx, np, "the condition is only known at run time and output "
                                "%d is %s in one branch and %s in the other, or their lengths "
                                "or element types differ; glowc resolves sequences and "
                                "optionals at compile time", out, onnx_seq_kind_str(a),
                                onnx_seq_kind_str(b));
    }
    onnx_seq *r = onnx_seq_new(cx, sa->optional, sa->dtype, sa->n);
    for (int k = 0; k < sa->n; k++) {
        const glow_type *t = glow_value_type(sa->elems[k]);
        glow_value ins[3] = { cond, sa->elems[k], sb->elems[k] };
        GLOW_TRY(onnx_broadcast_to(cx, np, cond, t->rank, t->dims, &ins[0]));
        GLOW_TRY(onnx_build(cx, np, NK_WHERE, ins, 3, NULL, 0, NULL, 0, &r->elems[k]));
    }
    *res = onnx_seq_value(cx, r);
    return GLOW_OK;
}

/* --- Loop carrying a sequence --- */

bool onnx_seq_loop_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int64_t *out)
{
    glow_diag quiet = { 0 }, *saved = cx->d;
    cx->d = &quiet;
    bool carries = false;
    for (int k = 2; k < (int)np->n_input && !carries; k++) {
        glow_value v;
        carries = onnx_has_input(np, k) && onnx_input_any(cx, np, k, &v) == GLOW_OK &&
                  onnx_seq_of(v);
    }
    int64_t *vals;
    int n = 0;
    /* A graph input with a known value is specialized, as inputs deciding shapes are. */
    bool known = carries && onnx_input_ints(cx, np, i, &vals, &n) == GLOW_OK && n == 1;
    cx->d = saved;
    if (known)
        *out = vals[0];
    return known;
}
