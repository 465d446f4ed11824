// onnx_dropout.c - Training-mode Dropout with a seed: the mask is drawn at import, as the ONNX
// reference draws it, so the node becomes a multiplication by a constant.
//
// The reference (and the node suite's expected outputs) seeds NumPy's legacy generator with
// the node's `seed` and keeps the elements where uniform(0, 1) >= ratio: RandomState(seed) is
// MT19937 initialized from one 32-bit word, and each uniform double is 53 bits taken from two
// 32-bit outputs (a >> 5, b >> 6). Drawing the same numbers gives the same mask bit for bit.
// The shape is static, so the mask is a constant; Y = X * (mask ? 1 / (1 - ratio) : 0) in the
// input's type, as NumPy computes mask * X * scale for a float32 X.
#include <string.h>

#include "onnx/onnx_internal.h"

enum { MT_N = 624, MT_M = 397 };

typedef struct mt19937 {
    uint32_t s[MT_N];
    int next;
} mt19937;

static void mt_seed(mt19937 *g, uint32_t seed)
{
    g->s[0] = seed;
    for (int i = 1; i < MT_N; i++)
        g->s[i] = 1812433253u * (g->s[i - 1] ^ (g->s[i - 1] >> 30)) + (uint32_t)i;
    g->next = MT_N;
}

static uint32_t mt_u32(mt19937 *g)
{
    if (g->next >= MT_N) {
        /* In place and in order: entries past k already hold the new generation when the
         * recurrence wraps around, as the algorithm's definition has it. */
        for (int k = 0; k < MT_N; k++) {
            uint32_t y = (g->s[k] & 0x80000000u) | (g->s[(k + 1) % MT_N] & 0x7fffffffu);
            g->s[k] = g->s[(k + MT_M) % MT_N] ^ (y >> 1) ^ ((y & 1) ? 0x9908b0dfu : 0);
        }
        g->next = 0;
    }
    uint32_t y = g->s[g->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

static double mt_double(mt19937 *g)
{
    uint32_t a = mt_u32(g) >> 5, b = mt_u32(g) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

glow_status onnx_dropout_seeded(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                double ratio, int opset)
{
    const glow_type *xt = glow_value_type(x);
    if (!glow_dtype_is_float(xt->dtype))
        return onnx_fail(cx, np, GLOW_ERR_BAD_TYPE, "training-mode Dropout of %s values",
                         glow_dtype_name(xt->dtype));
    if (!(ratio >= 0 && ratio < 1))
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "ratio %g is not in [0, 1)", ratio);
    int64_t n = glow_type_numel(xt);
    size_t esize = glow_dtype_size(xt->dtype);
    if (n < 0 || (size_t)n > ONNX_FOLD_MAX_BYTES / esize)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "a mask of %lld elements is too large to "
                         "draw at import", (long long)n);
    uint8_t *scale = glow_arena_try_alloc(&cx->scratch, n ? (size_t)n * esize : esize);
    uint8_t *mask = glow_arena_try_alloc(&cx->scratch, n ? (size_t)n : 1);
    mt19937 *g = glow_arena_try_alloc(&cx->scratch, sizeof *g);
    if (!scale || !mask || !g)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "the mask does not fit in memory");
    mt_seed(g, (uint32_t)onnx_attr_int(np, "seed", 0));
    /* NumPy multiplies a float32 array by the Python float 1 / (1 - ratio) in float32. */
    double keep = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < n; i++) {
        mask[i] = mt_double(g) >= ratio;
        glow_store_f64(xt->dtype, scale, (size_t)i, mask[i] ? keep : 0.0);
    }
    glow_value c = onnx_constant(cx, onnx_sub_name(cx, np, "scale"), xt, scale), y;
    if (!c.node)
        return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "the mask does not fit in memory");
    glow_value ops[2] = { x, c };
    GLOW_TRY(onnx_build_elemwise(cx, np, NK_MUL, ops, 2, NULL, 0, &y));
    GLOW_TRY(onnx_set_output(cx, np, 0, y));
    if (onnx_has_output(np, 1)) {
        glow_type mt = glow_type_make(opset >= 10 ? GLOW_BOOL : xt->dtype, xt->rank, xt->dims);
        if (mt.dtype != GLOW_BOOL)
            for (int64_t i = 0; i < n; i++)
                glow_store_f64(mt.dtype, scale, (size_t)i, mask[i]);
        glow_value m = onnx_constant(cx, onnx_sub_name(cx, np, "mask"), &mt,
                                     mt.dtype == GLOW_BOOL ? (void *)mask : (void *)scale);
        if (!m.node)
            return onnx_fail(cx, np, GLOW_ERR_TOO_LARGE, "the mask does not fit in memory");
        GLOW_TRY(onnx_set_output(cx, np, 1, m));
    }
    return GLOW_OK;
}
