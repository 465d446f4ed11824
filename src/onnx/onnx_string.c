// onnx_string.c - String tensors in ONNX files (TensorProto.string_data), the types a model
// declares for its values, and the string ops' loaders: StringNormalizer, StringConcat,
// StringSplit, RegexFullMatch, TfIdfVectorizer and ai.onnx.ml LabelEncoder.
//
// ONNX gives several of these ops lists as attributes (stopwords, label keys and values,
// n-gram pools); they become constant operands here, so that the graph needs no
// string-list attribute and the strings live where every constant's do (docs/onnx-import.md,
// "String tensors").
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

glow_status onnx_strings_from_proto(const Onnx__TensorProto *tp, glow_arena *a, glow_tensor *t,
                                    int64_t numel, const char *what, glow_diag *d)
{
    if (tp->has_raw_data || (int64_t)tp->n_string_data != numel)
        return glow_fail(d, GLOW_ERR_PARSE, "tensor '%s' has %zu values in string_data; its "
                         "shape needs %lld", what, tp->n_string_data, (long long)numel);
    glow_str *h = glow_arena_try_alloc(a, (size_t)(numel ? numel : 1) * sizeof(glow_str));
    if (!h)
        return glow_fail(d, GLOW_ERR_TOO_LARGE, "tensor '%s' does not fit in memory", what);
    for (int64_t i = 0; i < numel; i++) {
        const ProtobufCBinaryData *b = &tp->string_data[i];
        if (b->len && memchr(b->data, 0, b->len))
            return glow_fail(d, GLOW_ERR_UNSUPPORTED, "tensor '%s': string %lld holds a NUL "
                             "byte, which glowc's strings cannot", what, (long long)i);
        h[i] = b->len ? glow_arena_strndup(a, (const char *)b->data, b->len) : NULL;
    }
    glow_type ty = glow_type_make(GLOW_STRING, (int)tp->n_dims, tp->dims);
    *t = glow_tensor_borrow(&ty, h);
    return GLOW_OK;
}

void *onnx_strings_to_proto(const glow_tensor *t, Onnx__TensorProto *tp)
{
    int64_t n = glow_type_numel(&t->type);
    ProtobufCBinaryData *b = glow_xcalloc((size_t)(n > 0 ? n : 1), sizeof(*b));
    for (int64_t i = 0; i < n; i++) {
        const char *s = glow_str_at(t->data, (size_t)i);
        b[i].data = (uint8_t *)s;
        b[i].len = strlen(s);
    }
    tp->n_string_data = (size_t)n;
    tp->string_data = b;
    return b;
}

bool onnx_declared_type(onnx_ctx *cx, const char *name, glow_type *t)
{
    const Onnx__GraphProto *g = cx->graph;
    if (!g || !name)
        return false;
    for (int pass = 0; pass < 2; pass++) {
        size_t count = pass ? g->n_value_info : g->n_output;
        for (size_t i = 0; i < count; i++) {
            const Onnx__ValueInfoProto *vi = pass ? g->value_info[i] : g->output[i];
            if (!vi->name || strcmp(vi->name, name) != 0)
                continue;
            glow_diag d = { 0 };
            return onnx_value_info_type(vi, cx->opt, t, &d) == GLOW_OK;
        }
    }
    return false;
}

/* A declared type for output i of np, or an unsupported failure saying what is missing. */
static glow_status declared_output(onnx_ctx *cx, const Onnx__NodeProto *np, int i,
                                   const char *what, glow_type *t)
{
    if (onnx_has_output(np, i) && onnx_declared_type(cx, np->output[i], t))
        return GLOW_OK;
    return onnx_unsupported(cx, np, "%s is only known at run time and the model declares no "
                            "shape for output %d", what, i);
}

/* A 1-D string constant from a STRINGS attribute (absent: an empty list). */
static glow_value string_list(onnx_ctx *cx, const Onnx__NodeProto *np, const char *attr,
                              const char *what, int64_t *count)
{
    const Onnx__AttributeProto *a = onnx_attr(np, attr);
    int64_t n = a ? (int64_t)a->n_strings : 0;
    glow_str *h = glow_arena_alloc(&cx->scratch, (size_t)(n ? n : 1) * sizeof(glow_str));
    for (int64_t i = 0; i < n; i++)
        h[i] = a->strings[i].len ? glow_arena_strndup(&cx->scratch,
                                                      (const char *)a->strings[i].data,
                                                      a->strings[i].len) : NULL;
    glow_type t = glow_type_make(GLOW_STRING, 1, &n);
    *count = n;
    return onnx_constant(cx, onnx_sub_name(cx, np, what), &t, h);
}

glow_status load_string_normalizer(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                   glow_node_kind kind)
{
    glow_value x, ins[2];
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const char *mode = onnx_attr_str(cx, np, "case_change_action", "NONE");
    int64_t cs = onnx_attr_int(np, "is_case_sensitive", 0), nstop;
    glow_value stop = string_list(cx, np, "stopwords", "stopwords", &nstop);
    glow_attr attrs[] = { GLOW_ASTR(MODE, mode), GLOW_AI(CASE_SENSITIVE, cs) };
    ins[0] = x;
    ins[1] = stop;
    glow_type decl;
    if (nstop > 0)
        GLOW_TRY(declared_output(cx, np, 0, "the number of words left after removing stopwords",
                                 &decl));
    glow_value y;
    GLOW_TRY(onnx_build(cx, np, NK_STRING_NORMALIZER, ins, nstop > 0 ? 2 : 1, attrs, 2,
                        nstop > 0 ? &decl : NULL, nstop > 0 ? 1 : 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_string_concat(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                               glow_node_kind kind)
{
    glow_value ins[2], y;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    GLOW_TRY(onnx_input(cx, np, 1, &ins[1]));
    /* NumPy broadcasting made explicit, as for the elementwise kinds. */
    const glow_type *a = glow_value_type(ins[0]), *b = glow_value_type(ins[1]);
    int rank;
    int64_t dims[GLOW_MAX_DIMS];
    if (!glow_broadcast_shapes(a->rank, a->dims, b->rank, b->dims, &rank, dims))
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "operand shapes do not broadcast");
    for (int i = 0; i < 2; i++)
        GLOW_TRY(onnx_broadcast_to(cx, np, ins[i], rank, dims, &ins[i]));
    GLOW_TRY(onnx_build(cx, np, NK_STRING_CONCAT, ins, 2, NULL, 0, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_string_split(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                              glow_node_kind kind)
{
    glow_value x;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const char *sep = onnx_attr_str(cx, np, "delimiter", "");
    int64_t maxsplit = onnx_attr_int(np, "maxsplit", -1);
    glow_type decl[2];
    const glow_type *xt = glow_value_type(x);
    if (glow_type_numel(xt) == 0 && xt->rank < GLOW_MAX_DIMS) {
        /* No strings, no substrings: the width is 0 whatever the model declares. */
        decl[0] = glow_type_make(GLOW_STRING, xt->rank + 1, xt->dims);
        decl[0].dims[xt->rank] = 0;
    } else {
        GLOW_TRY(declared_output(cx, np, 0, "the number of substrings", &decl[0]));
    }
    decl[1] = glow_type_make(GLOW_I64, xt->rank, xt->dims);
    glow_attr attrs[] = { GLOW_ASTR(DELIMITER, sep), GLOW_AI(MAXSPLIT, maxsplit) };
    glow_diag d = { 0 };
    glow_node *n = glow_build(cx->f, NK_STRING_SPLIT,
                              glow_arena_strdup(cx->arena, onnx_node_name(np)), &x, 1, attrs, 2,
                              decl, 2, &d);
    if (!n)
        return onnx_fail(cx, np, d.status, "%s", d.msg);
    GLOW_TRY(onnx_set_output(cx, np, 0, glow_val(n, 0)));
    return onnx_has_output(np, 1) ? onnx_set_output(cx, np, 1, glow_val(n, 1)) : GLOW_OK;
}

glow_status load_regex_full_match(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                                  glow_node_kind kind)
{
    glow_value x, y;
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    const char *pattern = onnx_attr_str(cx, np, "pattern", NULL);
    if (!pattern)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "attribute 'pattern' is missing");
    glow_attr attrs[] = { GLOW_ASTR(PATTERN, pattern) };
    GLOW_TRY(onnx_build(cx, np, NK_REGEX_FULL_MATCH, &x, 1, attrs, 1, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}
