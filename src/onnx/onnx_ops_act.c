// onnx_ops_act.c - Loaders for ONNX unary math ops and activations, including Clip and Swish.
//
// Most map one to one onto a graph node; the attributes that the node kinds require are
// always written, with ONNX's defaults filled in, so later stages never see a missing one.
#include <float.h>
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* Builds `kind` on input 0 and binds output 0. */
static glow_status unary(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind kind,
                         const glow_attr *attrs, int nattr)
{
    glow_value x, out;
    int n = onnx_num_inputs(np);
    if (n != 1)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects 1 input, has %d", n);
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    GLOW_TRY(onnx_build(cx, np, kind, &x, 1, attrs, nattr, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* A float attribute with its ONNX default, checked for the right AttributeProto type. */
static glow_status float_attr(onnx_ctx *cx, const Onnx__NodeProto *np, const char *name,
                              float dflt, glow_attr_id id, glow_attr *out)
{
    GLOW_TRY(onnx_attr_check(cx, np, name, 1));
    *out = (glow_attr){ .id = id, .v.f = onnx_attr_float(np, name, dflt) };
    return GLOW_OK;
}

/* Relu, Exp, Not, ... (the row's kind): one operand, no attributes. */
glow_status load_unary(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    return unary(cx, np, kind, NULL, 0);
}

/* The float attributes of activations and their ONNX defaults, by node kind. */
static const struct {
    glow_node_kind kind;
    struct {
        const char *name;
        glow_attr_id id;
        float dflt;
    } attr[2];
} float_acts[] = {
    { NK_ELU, { { "alpha", GA_ALPHA, 1.0f } } },
    { NK_CELU, { { "alpha", GA_ALPHA, 1.0f } } },
    { NK_LEAKY_RELU, { { "alpha", GA_ALPHA, 0.01f } } },
    { NK_THRESHOLDED_RELU, { { "alpha", GA_ALPHA, 1.0f } } },
    { NK_SELU, { { "alpha", GA_ALPHA, 1.67326319217681884765625f },
                 { "gamma", GA_GAMMA, 1.05070102214813232421875f } } },
    { NK_HARD_SIGMOID, { { "alpha", GA_ALPHA, 0.2f }, { "beta", GA_BETA, 0.5f } } },
    { NK_SHRINK, { { "bias", GA_BIAS, 0.0f }, { "lambd", GA_LAMBD, 0.5f } } },
};

/* Elu, LeakyRelu, Selu, HardSigmoid, Shrink, ... (the row's kind): one operand and the float
 * attributes float_acts lists for the kind, defaults filled in. */
glow_status load_float_act(onnx_ctx *cx, const Onnx__NodeProto *np, int opset,
                           glow_node_kind kind)
{
    for (size_t i = 0; i < sizeof float_acts / sizeof float_acts[0]; i++) {
        if (float_acts[i].kind != kind)
            continue;
        glow_attr a[2];
        int n = 0;
        for (; n < 2 && float_acts[i].attr[n].name; n++)
            GLOW_TRY(float_attr(cx, np, float_acts[i].attr[n].name, float_acts[i].attr[n].dflt,
                                float_acts[i].attr[n].id, &a[n]));
        return unary(cx, np, kind, a, n);
    }
    return onnx_fail(cx, np, GLOW_ERR_INTERNAL, "no float attributes listed for %s",
                     glow_node_kind_name(kind));
}

glow_status load_isinf(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "detect_positive", 2));
    GLOW_TRY(onnx_attr_check(cx, np, "detect_negative", 2));
    glow_attr a[2] = {
        GLOW_AI(DETECT_POS, onnx_attr_int(np, "detect_positive", 1) != 0),
        GLOW_AI(DETECT_NEG, onnx_attr_int(np, "detect_negative", 1) != 0),
    };
    return unary(cx, np, NK_ISINF, a, 2);
}

glow_status load_gelu(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    GLOW_TRY(onnx_attr_check(cx, np, "approximate", 3));
    const char *approx = onnx_attr_str(cx, np, "approximate", "none");
    if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
        return onnx_unsupported(cx, np, "approximate=\"%s\" (only \"none\" and \"tanh\")",
                                approx);
    glow_attr a = GLOW_ASTR(APPROXIMATE, approx);
    return unary(cx, np, NK_GELU, &a, 1);
}

/* Swish(x) = x * sigmoid(alpha * x), built from primitives (no node kind of its own). */
glow_status load_swish(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, s, out;
    int n = onnx_num_inputs(np);
    if (n != 1)
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects 1 input, has %d", n);
    GLOW_TRY(onnx_attr_check(cx, np, "alpha", 1));
    float alpha = onnx_attr_float(np, "alpha", 1.0f);
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    s = x;
    if (alpha != 1.0f) {
        const char *name = glow_arena_printf(cx->arena, "%s/alpha", onnx_node_name(np));
        glow_value ins[2] = { x, onnx_scalar(cx, name, glow_value_type(x)->dtype, alpha) };
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, ins, 2, NULL, 0, &s));
    }
    GLOW_TRY(onnx_build(cx, np, NK_SIGMOID, &s, 1, NULL, 0, NULL, 0, &s));
    glow_value ins[2] = { x, s };
    GLOW_TRY(onnx_build(cx, np, NK_MUL, ins, 2, NULL, 0, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}

/* --- Clip --- */

/* Reads the constant scalar bound in input i into *v when f64 holds it exactly; otherwise
 * leaves *exact false (the caller then uses a MAX/MIN node on the value itself). */
static glow_status clip_bound(onnx_ctx *cx, const Onnx__NodeProto *np, int i, glow_value b,
                              glow_dtype t, bool *exact, double *v)
{
    *exact = false;
    if (!glow_value_is_constant(b))
        return GLOW_OK;
    int64_t numel = glow_type_numel(glow_value_type(b));
    if (numel != 1)
        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "input %d ('%s') must be a scalar, has %lld "
                         "elements", i, i == 1 ? "min" : "max", (long long)numel);
    int count;
    if (glow_dtype_is_int(t)) {
        int64_t *vals;
        GLOW_TRY(onnx_input_ints(cx, np, i, &vals, &count));
        if (vals[0] < -(INT64_C(1) << 53) || vals[0] > (INT64_C(1) << 53))
            return GLOW_OK;
        *v = (double)vals[0];
    } else {
        double *vals;
        GLOW_TRY(onnx_input_floats(cx, np, i, &vals, &count));
        *v = vals[0];
    }
    *exact = true;
    return GLOW_OK;
}

/* Opset >= 11: min and max are optional inputs. Constant bounds become a CLIP node's f64
 * attributes; bounds computed at run time (or not exact in f64) become MAX / MIN nodes with
 * broadcasting, so such models still load. */
static glow_status clip_inputs(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x)
{
    glow_dtype t = glow_value_type(x)->dtype;
    double bound[2];
    bool have_default = onnx_dtype_range(t, &bound[0], &bound[1]);
    glow_value node_bound[2];
    bool use_node[2] = { false, false }, in_clip[2] = { false, false };
    for (int k = 0; k < 2; k++) {
        if (!onnx_has_input(np, k + 1))
            continue;
        glow_value b;
        bool exact;
        GLOW_TRY(onnx_input(cx, np, k + 1, &b));
        GLOW_TRY(clip_bound(cx, np, k + 1, b, t, &exact, &bound[k]));
        if (exact)
            in_clip[k] = true;
        else
            use_node[k] = true, node_bound[k] = b;
    }
    /* A CLIP needs both bounds exact: without a default for the absent one, the present
     * constant bound goes through a MAX / MIN node as well. */
    if (!have_default)
        for (int k = 0; k < 2; k++)
            if (in_clip[k] && !in_clip[1 - k]) {
                in_clip[k] = false;
                use_node[k] = true;
                GLOW_TRY(onnx_input(cx, np, k + 1, &node_bound[k]));
            }
    glow_value out = x;
    if (use_node[0]) {
        glow_value ins[2] = { out, node_bound[0] };
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MAX, ins, 2, NULL, 0, &out));
    }
    if (in_clip[0] || in_clip[1]) {
        glow_attr a[2] = { GLOW_AF(MIN, bound[0]), GLOW_AF(MAX, bound[1]) };
        GLOW_TRY(onnx_build(cx, np, NK_CLIP, &out, 1, a, 2, NULL, 0, &out));
    }
    if (use_node[1]) {
        glow_value ins[2] = { out, node_bound[1] };
        GLOW_TRY(onnx_build_elemwise(cx, np, NK_MIN, ins, 2, NULL, 0, &out));
    }
    return onnx_set_output(cx, np, 0, out);
}

glow_status load_clip(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    glow_value x, out;
    int n = onnx_num_inputs(np);
    if (n < 1 || n > (opset >= 11 ? 3 : 1))
        return onnx_fail(cx, np, GLOW_ERR_PARSE, "expects %s, has %d inputs",
                         opset >= 11 ? "1 to 3 inputs" : "1 input", n);
    GLOW_TRY(onnx_input(cx, np, 0, &x));
    if (opset >= 11)
        return clip_inputs(cx, np, x);
    /* Opsets 1 and 6: float attributes defaulting to the float range. */
    GLOW_TRY(onnx_attr_check(cx, np, "min", 1));
    GLOW_TRY(onnx_attr_check(cx, np, "max", 1));
    glow_attr a[2] = {
        GLOW_AF(MIN, onnx_attr_float(np, "min", -FLT_MAX)),
        GLOW_AF(MAX, onnx_attr_float(np, "max", FLT_MAX)),
    };
    GLOW_TRY(onnx_build(cx, np, NK_CLIP, &x, 1, a, 2, NULL, 0, &out));
    return onnx_set_output(cx, np, 0, out);
}
