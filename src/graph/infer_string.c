// infer_string.c - Type inference of the string ops (nodes.def: StringNormalizer,
// StringConcat, StringSplit, RegexFullMatch, LabelEncoder, TfIdfVectorizer).
//
// Two of them have results whose size depends on the data (the substrings StringSplit finds,
// the words StringNormalizer keeps after removing stopwords) and TfIdfVectorizer's width comes
// from a constant operand's largest entry; those take the declared types the importer chose
// and are checked here for what can be checked: kind, rank and the dims the operands fix.
#include "graph/infer_internal.h"

static glow_status want_string(infer_cx *cx, int i, const char *role)
{
    const glow_type *t = in_type(cx, i);
    if (t->dtype == GLOW_STRING)
        return GLOW_OK;
    return ifail(cx, GLOW_ERR_BAD_TYPE, "%s %s must be a string tensor", role, ts(t).s);
}

static glow_status want_declared(infer_cx *cx, int i, glow_dtype dt, int rank)
{
    if (!cx->declared || cx->ndeclared <= i)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "result %d needs a declared type", i);
    const glow_type *r = &cx->declared[i];
    if (r->dtype != dt || r->rank != rank)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "declared result %d %s must be %s of rank %d", i,
                     ts(r).s, glow_dtype_name(dt), rank);
    return GLOW_OK;
}

static glow_status infer_normalizer(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_string(cx, 0, "input"));
    GLOW_TRY(want_str_in(cx, GA_MODE, "LOWER UPPER NONE"));
    if (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1))
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "input %s must be [C] or [1, C]", ts(x).s);
    if (cx->n->nin < 2) {
        set_out(cx, 0, x);
        return GLOW_OK;
    }
    GLOW_TRY(want_string(cx, 1, "stopwords"));
    GLOW_TRY(want_declared(cx, 0, GLOW_STRING, x->rank));
    if (x->rank == 2 && cx->declared[0].dims[0] != 1)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s must be [1, C]",
                     ts(&cx->declared[0]).s);
    set_out(cx, 0, &cx->declared[0]);
    return GLOW_OK;
}

static glow_status infer_split(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    GLOW_TRY(want_string(cx, 0, "input"));
    if (x->rank >= GLOW_MAX_DIMS)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "input %s has no room for the substring dim",
                     ts(x).s);
    GLOW_TRY(want_declared(cx, 0, GLOW_STRING, x->rank + 1));
    const glow_type *r = &cx->declared[0];
    for (int k = 0; k < x->rank; k++)
        if (r->dims[k] != x->dims[k])
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s must start with the "
                         "input's shape %s", ts(r).s, ts(x).s);
    set_out(cx, 0, r);
    if (cx->nout > 1)
        set_out_dims(cx, 1, GLOW_I64, x->rank, x->dims);
    return GLOW_OK;
}

static glow_status infer_label_encoder(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0), *k = in_type(cx, 1), *v = in_type(cx, 2);
    const glow_type *dflt = in_type(cx, 3);
    if (k->dtype != x->dtype || dflt->dtype != v->dtype)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "keys %s must be of the input's kind %s and the "
                     "default %s of the values' kind %s", ts(k).s, ts(x).s, ts(dflt).s, ts(v).s);
    if (k->rank != 1 || v->rank != 1 || k->dims[0] != v->dims[0] || glow_type_numel(dflt) != 1)
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "keys %s and values %s must be 1-D of one length "
                     "and the default %s one value", ts(k).s, ts(v).s, ts(dflt).s);
    if (glow_dtype_is_quantized(x->dtype) || glow_dtype_is_quantized(v->dtype))
        return ifail(cx, GLOW_ERR_BAD_TYPE, "quantized keys or values");
    set_out_dims(cx, 0, v->dtype, x->rank, x->dims);
    return GLOW_OK;
}

static glow_status infer_tfidf(infer_cx *cx)
{
    const glow_type *x = in_type(cx, 0);
    glow_dtype t = x->dtype;
    if (t != GLOW_STRING && t != GLOW_I32 && t != GLOW_I64)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "input %s must be string, i32 or i64", ts(x).s);
    GLOW_TRY(want_rank(cx, 0, "input", 1, 2));
    if (in_type(cx, 1)->dtype != t)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "pool %s must be of the input's kind",
                     ts(in_type(cx, 1)).s);
    for (int i = 2; i <= 3; i++)
        if (in_type(cx, i)->dtype != GLOW_I64 || in_type(cx, i)->rank != 1)
            return ifail(cx, GLOW_ERR_BAD_TYPE, "operand %d %s must be i64 [n]", i,
                         ts(in_type(cx, i)).s);
    if (in_type(cx, 4)->dtype != GLOW_F32)
        return ifail(cx, GLOW_ERR_BAD_TYPE, "weights %s must be f32", ts(in_type(cx, 4)).s);
    GLOW_TRY(want_str_in(cx, GA_MODE, "TF IDF TFIDF"));
    GLOW_TRY(want_declared(cx, 0, GLOW_F32, x->rank));
    if (x->rank == 2 && cx->declared[0].dims[0] != x->dims[0])
        return ifail(cx, GLOW_ERR_BAD_SHAPE, "declared result %s must keep the batch of %s",
                     ts(&cx->declared[0]).s, ts(x).s);
    set_out(cx, 0, &cx->declared[0]);
    return GLOW_OK;
}

glow_status infer_string(infer_cx *cx, bool *handled)
{
    *handled = true;
    const glow_type *x = in_type(cx, 0);
    switch (cx->n->kind) {
    case NK_STRING_NORMALIZER: return infer_normalizer(cx);
    case NK_STRING_CONCAT:
        GLOW_TRY(want_string(cx, 0, "operand 0"));
        GLOW_TRY(want_string(cx, 1, "operand 1"));
        if (!glow_type_same_shape(x, in_type(cx, 1)))
            return ifail(cx, GLOW_ERR_BAD_SHAPE, "operands %s and %s must have one shape",
                         ts(x).s, ts(in_type(cx, 1)).s);
        set_out(cx, 0, x);
        return GLOW_OK;
    case NK_STRING_SPLIT: return infer_split(cx);
    case NK_REGEX_FULL_MATCH:
        GLOW_TRY(want_string(cx, 0, "input"));
        set_out_dims(cx, 0, GLOW_BOOL, x->rank, x->dims);
        return GLOW_OK;
    case NK_LABEL_ENCODER: return infer_label_encoder(cx);
    case NK_TFIDF: return infer_tfidf(cx);
    default:
        *handled = false;
        return GLOW_OK;
    }
}
