// onnx_ops.c - The table of ONNX op loaders, generated from onnx_ops.def, and its lookup.
#include <string.h>

#include "onnx/onnx_internal.h"

static const onnx_op op_rows[] = {
#define ONNX_OP(name, since, fn, kind) { name, since, fn, kind },
#include "onnx_ops.def"
#undef ONNX_OP
};

/* ai.onnx.preview.training: Gradient (reverse-mode differentiation at import) and the
 * optimizers (onnx_ops_train.c). */
static const onnx_op training_rows[] = {
    { "Gradient", 1, load_gradient, ONNX_CUSTOM },
    { "Adagrad", 1, load_adagrad, ONNX_CUSTOM },
    { "Adam", 1, load_adam, ONNX_CUSTOM },
    { "Momentum", 1, load_momentum, ONNX_CUSTOM },
};

/* ai.onnx.ml ops on numbers (onnx_ops_ml.c; TreeEnsemble is ai.onnx.ml opset 5's) and
 * LabelEncoder (onnx_string_ml.c; its attributes tell the opset's form apart). */
static const onnx_op ml_rows[] = {
    { "LabelEncoder", 1, load_label_encoder, ONNX_CUSTOM },
    { "Binarizer", 1, load_binarizer, ONNX_CUSTOM },
    { "ArrayFeatureExtractor", 1, load_array_feature_extractor, ONNX_CUSTOM },
    { "TreeEnsemble", 5, load_tree_ensemble, ONNX_CUSTOM },
};

/* ai.onnx.preview (onnx_ops_flex.c). */
static const onnx_op preview_rows[] = {
    { "FlexAttention", 1, load_flex_attention, ONNX_CUSTOM },
};

/* A linear scan: a few hundred rows, once per node of the model, is not worth an index. */
const onnx_op *onnx_find_op(const char *op_type, int opset)
{
    if (!op_type)
        return NULL;
    const onnx_op *best = NULL;
    for (size_t i = 0; i < sizeof(op_rows) / sizeof(op_rows[0]); i++) {
        const onnx_op *r = &op_rows[i];
        if (r->since <= opset && strcmp(r->op_type, op_type) == 0 &&
            (!best || r->since > best->since))
            best = r;
    }
    return best;
}

/* Ops of other domains glowc imports (training preview: reverse-mode Gradient at import). */
const onnx_op *onnx_find_domain_op(const char *domain, const char *op_type, int opset)
{
    if (!domain || !*domain || strcmp(domain, "ai.onnx") == 0)
        return onnx_find_op(op_type, opset);
    if (op_type && strcmp(domain, "ai.onnx.preview.training") == 0)
        for (size_t i = 0; i < sizeof(training_rows) / sizeof(training_rows[0]); i++)
            if (strcmp(op_type, training_rows[i].op_type) == 0)
                return &training_rows[i];
    if (op_type && strcmp(domain, "ai.onnx.preview") == 0)
        for (size_t i = 0; i < sizeof(preview_rows) / sizeof(preview_rows[0]); i++)
            if (strcmp(op_type, preview_rows[i].op_type) == 0)
                return &preview_rows[i];
    if (op_type && strcmp(domain, "ai.onnx.ml") == 0)
        for (size_t i = 0; i < sizeof(ml_rows) / sizeof(ml_rows[0]); i++)
            if (strcmp(op_type, ml_rows[i].op_type) == 0)
                return &ml_rows[i];
    return NULL;
}

glow_node_kind onnx_op_kind(const char *op_type, int opset)
{
    const onnx_op *op = onnx_find_op(op_type, opset);
    return op ? op->kind : ONNX_CUSTOM;
}

bool glow_onnx_op_supported(const char *domain, const char *op_type, int opset)
{
    return onnx_find_domain_op(domain, op_type, opset) != NULL;
}
