// onnx_quant.h - What the quantization loaders (onnx_ops_quant.c, onnx_ops_qlinear.c) share:
// reading constant per-tensor quantization parameters, the views (Reinterpret) between ONNX's
// plain integer tensors and the graph's quantized kinds, and the float-path arithmetic helpers.
#ifndef GLOW_ONNX_QUANT_H
#define GLOW_ONNX_QUANT_H

#include "onnx/onnx_internal.h"

/* One scale and zero point, as a quantized type holds them. */
typedef struct onnx_qparam {
    float scale;
    int32_t offset;
} onnx_qparam;

/* The quantized kind storing the same integers as plain kind t (u8 -> u8q, i8 -> i8q,
 * i16 -> i16q, i32 -> i32q); false for kinds without one (u16 has no u16q). */
bool onnx_q_kind(glow_dtype t, glow_dtype *out);

/* Input i read as one constant number: present, a constant after folding, one element.
 * False otherwise (absent, computed at run time, per-axis). */
bool onnx_q_const_scalar(onnx_ctx *cx, const Onnx__NodeProto *np, int i, double *v);

/* A scale input usable as a quantized type's scale: a one-element constant of f32, f16 or
 * bf16 (exact as f32), positive and finite. */
bool onnx_q_const_scale(onnx_ctx *cx, const Onnx__NodeProto *np, int i, float *out);

/* A zero point input usable as a quantized type's offset: absent (0) or a one-element
 * constant. */
bool onnx_q_const_zero(onnx_ctx *cx, const Onnx__NodeProto *np, int i, int32_t *out);

/* v seen as kind `to` (scale and offset used when `to` is quantized): a Reinterpret node, no
 * copy. When v is itself a view of a value that already has the wanted type (a quantized
 * result handed out as plain integers and read back with the same parameters), that value is
 * returned instead, so chains of quantized ONNX ops stay in the quantized kinds. */
glow_status onnx_q_view(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, glow_dtype to,
                        onnx_qparam q, glow_value *out);

/* A float constant DequantizeLinear computed from constant integers (a QDQ model's weights
 * and biases): the integers and their parameters, per tensor or along one axis. */
typedef struct onnx_dq_const {
    const glow_node *result;      /* the f32 constant */
    glow_value q;                 /* the plain u8 / i8 / i32 constant it came from */
    int axis;                     /* the parameters' axis, -1 per tensor */
    int64_t n;                    /* parameter count: 1, or q's dim `axis` */
    const double *scales, *offsets;
    struct onnx_dq_const *next;
} onnx_dq_const;

/* The record behind constant v, or NULL. */
const onnx_dq_const *onnx_q_find_dq(const onnx_ctx *cx, glow_value v);

/* QuantizeLinear(x) with constant per-tensor parameters q into 8-bit kind `qk`, where x is a
 * float Conv or MatMul of DequantizeLinear'd values (activations quantized at run time,
 * weights and bias constant integers): the product is rebuilt as ChannelwiseQuantizedConv or
 * a quantized MatMul with result (qk, q), *out being its quantized result. *fused is false
 * (nothing built) when x is not such a product. */
glow_status onnx_q_fuse_product(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                glow_dtype qk, onnx_qparam q, glow_value *out, bool *fused);

/* The saturation range of an integer quantized ONNX kind (u8, i8, u16, i16). */
bool onnx_q_range(glow_dtype t, double *lo, double *hi);
/* Float-path helpers: a broadcasting binary op, and Clip to [lo, hi]. */
glow_status onnx_q_elem2(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                         glow_value b, glow_value *out);
glow_status onnx_q_clip(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value v, double lo,
                        double hi, glow_value *out);

#endif
