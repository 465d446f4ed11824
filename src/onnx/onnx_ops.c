// onnx_ops.c - The table of ONNX op loaders, generated from onnx_ops.def, and its lookup.
#include <string.h>

#include "onnx/onnx_internal.h"

typedef struct onnx_op_row {
    const char *op_type;
    int since;
    onnx_loader fn;
} onnx_op_row;

static const onnx_op_row op_rows[] = {
#define ONNX_OP(name, since, fn) { name, since, fn },
#include "onnx_ops.def"
#undef ONNX_OP
};

/* A linear scan: a few hundred rows, once per node of the model, is not worth an index. */
onnx_loader onnx_find_loader(const char *op_type, int opset)
{
    if (!op_type)
        return NULL;
    const onnx_op_row *best = NULL;
    for (size_t i = 0; i < sizeof(op_rows) / sizeof(op_rows[0]); i++) {
        const onnx_op_row *r = &op_rows[i];
        if (r->since <= opset && strcmp(r->op_type, op_type) == 0 &&
            (!best || r->since > best->since))
            best = r;
    }
    return best ? best->fn : NULL;
}

/* Ops of other domains glowc imports (training preview: reverse-mode Gradient at import). */
onnx_loader onnx_find_domain_loader(const char *domain, const char *op_type, int opset)
{
    if (!domain || !*domain || strcmp(domain, "ai.onnx") == 0)
        return onnx_find_loader(op_type, opset);
    if (op_type && strcmp(domain, "ai.onnx.preview.training") == 0 &&
        strcmp(op_type, "Gradient") == 0)
        return load_gradient;
    return NULL;
}

bool glow_onnx_op_supported(const char *domain, const char *op_type, int opset)
{
    return onnx_find_domain_loader(domain, op_type, opset) != NULL;
}
