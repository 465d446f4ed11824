// hook.c - `--quantize PROFILE`: the compile pipeline's quantization point. Loads the profile,
// keys the graph the way `glowc profile` did, and quantizes with the ranges it finds. A value
// the profile does not know fails the compile naming the key: the profile was made for
// another model, or with other --define / --no-optimize options.
#include "quant/quant.h"

typedef struct hook_cx {
    const glow_profile *pf;
    glow_profile_keys keys;
    glow_diag *d;
    glow_status status;         /* the first failed lookup */
} hook_cx;

static bool look(void *ctx, glow_value v, glow_quant_range *out)
{
    hook_cx *h = ctx;
    const glow_profile_entry *e = NULL;
    if (h->status != GLOW_OK)
        return false;
    h->status = glow_profile_lookup(h->pf, &h->keys, v, &e, h->d);
    if (h->status != GLOW_OK)
        return false;
    *out = (glow_quant_range){ .min = e->min, .max = e->max, .nbins = h->pf->bins,
                               .hist = e->histogram };
    return true;
}

glow_status glow_quant_hook(glow_function *f, void *ctx, glow_diag *d)
{
    const glow_quant_options *o = ctx;
    glow_profile *pf = NULL;
    GLOW_TRY(glow_profile_load(o->profile, &pf, d));
    hook_cx h = { .pf = pf, .d = d };
    glow_status s = glow_profile_keys_make(f, &h.keys, d);
    int nq = 0;
    if (s == GLOW_OK) {
        s = glow_quantize(f, o, look, &h, &nq, d);
        if (s == GLOW_OK && h.status != GLOW_OK)
            s = h.status;
        glow_profile_keys_free(&h.keys);
    }
    if (s == GLOW_OK && o->stats_out) {
        /* What is left in float: compute nodes with a float result (not the conversions). */
        int left = 0;
        for (glow_node *n = f->nodes.first; n; n = n->next)
            left += n->nout > 0 && glow_dtype_is_float(n->outs[0].dtype) &&
                    n->kind != NK_DEQUANTIZE && n->kind != NK_SAVE;
        fprintf(o->stats_out, "quantization: %d nodes converted to integer arithmetic, %d "
                "left in float (profile %s)\n", nq, left, o->profile);
    }
    glow_profile_free(pf);
    return s;
}
