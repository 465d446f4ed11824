// onnx_string_ml.c - Loaders of the table-driven string ops: ai.onnx.ml LabelEncoder (every
// opset: keys_*/values_*/default_* lists, or opset 4's tensors) and TfIdfVectorizer. Their
// tables become constant operands (nodes.def, LABEL_ENCODER and TFIDF).
#include <string.h>

#include "onnx/onnx_internal.h"

/* A 1-D constant from a TENSOR attribute (rank kept when `keep_rank`), an INTS, FLOATS or
 * STRINGS attribute; false when none of them is present. */
static bool list_constant(onnx_ctx *cx, const Onnx__NodeProto *np, const char *tensor_attr,
                          const char *ints, const char *floats, const char *strs,
                          const char *what, glow_value *out, glow_status *st)
{
    const Onnx__AttributeProto *a;
    *st = GLOW_OK;
    if (tensor_attr && (a = onnx_attr(np, tensor_attr)) && a->t) {
        glow_tensor t;
        *st = onnx_tensor_from_proto(a->t, &cx->scratch, &t, tensor_attr, cx->d);
        if (*st == GLOW_OK) {
            int64_t n = glow_type_numel(&t.type);
            glow_type ty = glow_type_make(t.type.dtype, 1, &n);
            *out = onnx_constant(cx, onnx_sub_name(cx, np, what), &ty, t.data);
        }
        return true;
    }
    if (ints && (a = onnx_attr(np, ints))) {
        int64_t n = (int64_t)a->n_ints;
        glow_type ty = glow_type_make(GLOW_I64, 1, &n);
        *out = onnx_constant(cx, onnx_sub_name(cx, np, what), &ty, a->ints);
        return true;
    }
    if (floats && (a = onnx_attr(np, floats))) {
        int64_t n = (int64_t)a->n_floats;
        glow_type ty = glow_type_make(GLOW_F32, 1, &n);
        *out = onnx_constant(cx, onnx_sub_name(cx, np, what), &ty, a->floats);
        return true;
    }
    if (strs && (a = onnx_attr(np, strs))) {
        int64_t n = (int64_t)a->n_strings;
        glow_str *h = glow_arena_alloc(&cx->scratch, (size_t)(n ? n : 1) * sizeof(glow_str));
        for (int64_t i = 0; i < n; i++)
            h[i] = a->strings[i].len ? glow_arena_strndup(&cx->scratch,
                                                          (const char *)a->strings[i].data,
                                                          a->strings[i].len) : NULL;
        glow_type ty = glow_type_make(GLOW_STRING, 1, &n);
        *out = onnx_constant(cx, onnx_sub_name(cx, np, what), &ty, h);
        return true;
    }
    return false;
}

/* LabelEncoder's default for values of kind t when the model gives none: "_Unused", -1 or
 * -0.0, as ONNX specifies. */
static glow_value default_value(onnx_ctx *cx, const Onnx__NodeProto *np, glow_dtype t)
{
    int64_t one = 1;
    glow_type ty = glow_type_make(t, 1, &one);
    if (t == GLOW_STRING) {
        glow_str s = glow_arena_strdup(&cx->scratch, onnx_attr_str(cx, np, "default_string",
                                                                   "_Unused"));
        return onnx_constant(cx, onnx_sub_name(cx, np, "default"), &ty, &s);
    }
    double v = glow_dtype_is_float(t) ? onnx_attr_float(np, "default_float", -0.0f)
                                      : (double)onnx_attr_int(np, "default_int64", -1);
    uint8_t buf[16] = { 0 };
    glow_store_f64(t, buf, 0, v);
    return onnx_constant(cx, onnx_sub_name(cx, np, "default"), &ty, buf);
}

glow_status load_label_encoder(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                               glow_node_kind kind)
{
    glow_value ins[4], y;
    glow_status st;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    if (!list_constant(cx, np, "keys_tensor", "keys_int64s", "keys_floats", "keys_strings",
                       "keys", &ins[1], &st) &&
        !list_constant(cx, np, NULL, NULL, NULL, "classes_strings", "keys", &ins[1], &st))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "no keys");
    GLOW_TRY(st);
    if (!list_constant(cx, np, "values_tensor", "values_int64s", "values_floats",
                       "values_strings", "values", &ins[2], &st))
        return onnx_unsupported(cx, np, "opset-1 form (classes_strings without values)");
    GLOW_TRY(st);
    glow_dtype vt = glow_value_type(ins[2])->dtype, xt = glow_value_type(ins[0])->dtype;
    if (!list_constant(cx, np, "default_tensor", NULL, NULL, NULL, "default", &ins[3], &st))
        ins[3] = default_value(cx, np, vt);
    GLOW_TRY(st);
    /* Integer and float keys take the input's kind (keys_int64s for an i32 input, say). */
    if (glow_value_type(ins[1])->dtype != xt && xt != GLOW_STRING)
        GLOW_TRY(onnx_cast(cx, np, ins[1], xt, &ins[1]));
    GLOW_TRY(onnx_build(cx, np, NK_LABEL_ENCODER, ins, 4, NULL, 0, NULL, 0, &y));
    return onnx_set_output(cx, np, 0, y);
}

glow_status load_tfidf(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value ins[5], y;
    glow_status st;
    GLOW_TRY(onnx_input(cx, np, 0, &ins[0]));
    const glow_type *xt = glow_value_type(ins[0]);
    if (xt->rank != 1 && xt->rank != 2)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input 0 has rank %d; it must be [C] or "
                         "[N, C]", xt->rank);
    if (!list_constant(cx, np, NULL, "pool_int64s", NULL, "pool_strings", "pool", &ins[1], &st))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "needs pool_int64s or pool_strings");
    GLOW_TRY(st);
    if (glow_value_type(ins[1])->dtype != xt->dtype && xt->dtype != GLOW_STRING)
        GLOW_TRY(onnx_cast(cx, np, ins[1], xt->dtype, &ins[1]));
    if (!list_constant(cx, np, NULL, "ngram_counts", NULL, NULL, "counts", &ins[2], &st) ||
        !list_constant(cx, np, NULL, "ngram_indexes", NULL, NULL, "indexes", &ins[3], &st))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "needs ngram_counts and ngram_indexes");
    if (!list_constant(cx, np, NULL, NULL, "weights", NULL, "weights", &ins[4], &st)) {
        int64_t zero = 0;
        glow_type ty = glow_type_make(GLOW_F32, 1, &zero);
        ins[4] = onnx_constant(cx, onnx_sub_name(cx, np, "weights"), &ty, NULL);
    }
    /* The result's width: the largest output column the pool names, plus one. */
    const int64_t *idx;
    int nidx = onnx_attr_ints(np, "ngram_indexes", &idx);
    int64_t width = 0;
    for (int i = 0; i < nidx; i++)
        width = idx[i] + 1 > width ? idx[i] + 1 : width;
    int64_t dims[2] = { xt->rank == 2 ? xt->dims[0] : width, width };
    glow_type decl = glow_type_make(GLOW_F32, xt->rank, xt->rank == 2 ? dims : dims + 1);
    const char *mode = onnx_attr_str(cx, np, "mode", "TF");
    glow_attr attrs[] = { GLOW_ASTR(MODE, mode),
                          GLOW_AI(MIN_GRAM, onnx_attr_int(np, "min_gram_length", 1)),
                          GLOW_AI(MAX_GRAM, onnx_attr_int(np, "max_gram_length", 1)),
                          GLOW_AI(MAX_SKIP, onnx_attr_int(np, "max_skip_count", 0)) };
    GLOW_TRY(onnx_build(cx, np, NK_TFIDF, ins, 5, attrs, 4, &decl, 1, &y));
    return onnx_set_output(cx, np, 0, y);
}
