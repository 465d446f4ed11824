// profile.c - Profiling a float graph: the keys of its values at the quantization point, the
// instrumentation that saves every keyed value into an extra output, the two-pass
// accumulation of ranges and histograms over sample runs, and writing the profile as JSON.
//
// Pass 1 records the exact f32 range of each value's finite elements; pass 2 fills a
// histogram over that final range. Two passes cost a second run of every sample, but give a
// histogram whose bins are fixed before any element lands in them, so no rebinning rounds
// counts (Glow grows its histograms as the range grows, in one pass), and the result depends
// only on the elements seen, not on their order: the profile is the same for any thread count
// and, where the backends compute the same floats, for any backend.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "quant/quant.h"
#include "runtime/runtime.h"

/* --- keys --- */

static bool keyed_dtype(glow_dtype t)
{
    return t == GLOW_F32 || t == GLOW_F16 || t == GLOW_BF16;
}

/* Taken keys, and per base name the next "#k" to try so n nodes of one name cost O(n). */
typedef struct key_cx {
    glow_arena *a;
    glow_strmap taken;
    glow_strmap next;          /* base -> (next k) */
} key_cx;

static void take(key_cx *k, const char *key)
{
    glow_strmap_put(&k->taken, key, (void *)1);
}

/* The first of base, base#2, base#3, ... that is free together with its ":r" forms for the
 * results r > 0 listed in `res`. */
static const char *node_key(key_cx *k, const char *base, const uint32_t *res, int nres)
{
    intptr_t start = (intptr_t)glow_strmap_get(&k->next, base);
    for (intptr_t i = start ? start : 1;; i++) {
        const char *cand = i == 1 ? glow_arena_strdup(k->a, base)
                                  : glow_arena_printf(k->a, "%s#%ld", base, (long)i);
        bool free_ = !glow_strmap_has(&k->taken, cand);
        for (int r = 0; free_ && r < nres; r++) {
            if (res[r] == 0)
                continue;
            char buf[32];
            snprintf(buf, sizeof buf, ":%u", res[r]);
            const char *rk = glow_arena_printf(k->a, "%s%s", cand, buf);
            free_ = !glow_strmap_has(&k->taken, rk);
        }
        if (!free_)
            continue;
        glow_strmap_put(&k->next, glow_arena_strdup(k->a, base), (void *)(i + 1));
        return cand;
    }
}

static int cmp_key(const void *pa, const void *pb)
{
    const glow_profile_key *a = pa, *b = pb;
    if (a->v.node->id != b->v.node->id)
        return a->v.node->id < b->v.node->id ? -1 : 1;
    return a->v.res < b->v.res ? -1 : a->v.res > b->v.res;
}

glow_status glow_profile_keys_make(const glow_function *f, glow_profile_keys *ks, glow_diag *d)
{
    *ks = (glow_profile_keys){ 0 };
    const glow_module *m = f->module;
    int cap = 0;
    for (const glow_node *p = m->placeholders.first; p; p = p->next)
        cap += p->is_input;
    for (const glow_node *n = f->nodes.first; n; n = n->next)
        cap += (int)n->nout;
    ks->items = GLOW_NEW_ARRAY(&ks->arena, glow_profile_key, cap + 1);
    key_cx k = { .a = &ks->arena };
    for (glow_node *p = m->placeholders.first; p; p = p->next) {
        if (!p->is_input || !keyed_dtype(p->outs[0].dtype))
            continue;
        /* ONNX input names are unique; a clash could only come from a hand-built graph, and
         * then the numbering keeps keys unique all the same. */
        uint32_t r0 = 0;
        const char *key = node_key(&k, p->name, &r0, 1);
        take(&k, key);
        ks->items[ks->n++] = (glow_profile_key){ glow_val(p, 0), key };
    }
    uint32_t *res = GLOW_NEW_ARRAY(&ks->arena, uint32_t, 64);
    int rescap = 64;
    for (glow_node *n = f->nodes.first; n; n = n->next) {
        if (n->kind == NK_SAVE)
            continue;
        int nres = 0;
        if ((int)n->nout > rescap) {
            rescap = (int)n->nout;
            res = GLOW_NEW_ARRAY(&ks->arena, uint32_t, rescap);
        }
        for (uint32_t r = 0; r < n->nout; r++)
            if (keyed_dtype(n->outs[r].dtype))
                res[nres++] = r;
        if (!nres)
            continue;
        const char *base = n->name[0] ? n->name : glow_node_kind_name(n->kind);
        const char *key = node_key(&k, base, res, nres);
        for (int i = 0; i < nres; i++) {
            const char *rk = key;
            if (res[i] > 0)
                rk = glow_arena_printf(&ks->arena, "%s:%u", key, res[i]);
            take(&k, rk);
            ks->items[ks->n++] = (glow_profile_key){ glow_val(n, res[i]), rk };
        }
    }
    glow_strmap_free(&k.taken);
    glow_strmap_free(&k.next);
    ks->sorted = glow_arena_memdup(&ks->arena, ks->items,
                                   sizeof(*ks->items) * (size_t)(ks->n ? ks->n : 1));
    qsort(ks->sorted, (size_t)ks->n, sizeof(*ks->sorted), cmp_key);
    (void)d;
    return GLOW_OK;
}

const char *glow_profile_key_of(const glow_profile_keys *ks, glow_value v)
{
    if (!v.node || !ks->n)
        return NULL;
    glow_profile_key want = { v, NULL };
    const glow_profile_key *hit = bsearch(&want, ks->sorted, (size_t)ks->n,
                                          sizeof(*ks->sorted), cmp_key);
    return hit && hit->v.node == v.node ? hit->key : NULL;
}

void glow_profile_keys_free(glow_profile_keys *ks)
{
    glow_arena_release(&ks->arena);
    *ks = (glow_profile_keys){ 0 };
}

/* --- the profile --- */

const glow_profile_entry *glow_profile_find(const glow_profile *pf, const char *key)
{
    return pf ? glow_strmap_get(&pf->index, key) : NULL;
}

glow_status glow_profile_lookup(const glow_profile *pf, const glow_profile_keys *ks,
                                glow_value v, const glow_profile_entry **out, glow_diag *d)
{
    *out = NULL;
    const char *path = pf->path && pf->path[0] ? pf->path : "(in memory)";
    const char *key = glow_profile_key_of(ks, v);
    if (!key)
        return glow_fail(d, GLOW_ERR_INTERNAL, "profile '%s': node '%s' result %u has no "
                         "profile key (not a float value at the quantization point)", path,
                         v.node->name, v.res);
    const glow_profile_entry *e = glow_profile_find(pf, key);
    if (!e)
        return glow_fail(d, GLOW_ERR_NOT_FOUND, "profile '%s' has no value '%s': it was made "
                         "for another model, or with other --define / --no-optimize options",
                         path, key);
    char ty[160];
    glow_type_str(glow_value_type(v), ty, sizeof ty);
    if (strcmp(e->type, ty))
        return glow_fail(d, GLOW_ERR_BAD_TYPE, "profile '%s': value '%s' was profiled as %s, "
                         "the graph has %s", path, key, e->type, ty);
    *out = e;
    return GLOW_OK;
}

void glow_profile_free(glow_profile *pf)
{
    if (!pf)
        return;
    glow_strmap_free(&pf->index);
    glow_arena_release(&pf->arena);
    free(pf);
}

/* --- the profiler --- */

/* Where one keyed value comes from and what has been counted of it. */
typedef struct slot {
    glow_value v;
    glow_node *ph;             /* the output placeholder saving it; NULL for graph inputs */
    int input;                 /* graph inputs: the program input index */
    const uint8_t *data;       /* node results: their memory in the compiled program */
    bool seen;                 /* pass 1 met a finite element */
    uint64_t finite, nan2, inf2, finite2, outside; /* for the check between passes */
    double lo, scale;          /* pass 2: bin = (x - lo) * scale */
} slot;

struct glow_profiler {
    glow_profile *pf;
    slot *slots;
    int pass;
    bool hooked, bound;
};

glow_profiler *glow_profiler_create(const char *model_path, int bins)
{
    glow_profiler *pr = glow_xcalloc(1, sizeof(*pr));
    pr->pf = glow_xcalloc(1, sizeof(*pr->pf));
    const char *slash = model_path ? strrchr(model_path, '/') : NULL;
    pr->pf->model = glow_arena_strdup(&pr->pf->arena,
                                      slash ? slash + 1 : model_path ? model_path : "");
    pr->pf->bins = bins > 0 ? bins : GLOW_PROFILE_BINS;
    pr->pf->path = "";
    return pr;
}

glow_status glow_profiler_hook(glow_function *f, void *ctx, glow_diag *d)
{
    glow_profiler *pr = ctx;
    if (pr->hooked)
        return glow_fail(d, GLOW_ERR_INTERNAL, "the profiler instruments one graph only");
    pr->hooked = true;
    glow_profile_keys ks;
    GLOW_TRY(glow_profile_keys_make(f, &ks, d));
    glow_profile *pf = pr->pf;
    glow_arena *a = &pf->arena;
    pf->n = ks.n;
    pf->entries = GLOW_NEW_ARRAY(a, glow_profile_entry, ks.n + 1);
    pr->slots = glow_xcalloc((size_t)ks.n + 1, sizeof(*pr->slots));
    for (int i = 0; i < ks.n; i++) {
        glow_value v = ks.items[i].v;
        const glow_type *t = glow_value_type(v);
        char ty[160];
        glow_profile_entry *e = &pf->entries[i];
        e->key = glow_arena_strdup(a, ks.items[i].key);
        e->type = glow_arena_strdup(a, glow_type_str(t, ty, sizeof ty));
        e->histogram = GLOW_NEW_ARRAY(a, uint64_t, pf->bins);
        glow_strmap_put(&pf->index, e->key, e);
        slot *s = &pr->slots[i];
        s->v = v;
        s->input = -1;
        if (v.node->kind == NK_PLACEHOLDER)
            continue;
        /* A second user of the value: a backend that fuses an activation into its producer
         * only does so when the producer has no other user, so nothing hides the value. */
        char *name = glow_arena_printf(a, "__profile_%d", i);
        s->ph = glow_placeholder_create(f->module, name, t, false);
        glow_save_create(f, name, v, s->ph);
    }
    glow_profile_keys_free(&ks);
    return GLOW_OK;
}

glow_status glow_profiler_bind(glow_profiler *pr, const glow_program *p, glow_diag *d)
{
    if (!pr->hooked)
        return glow_fail(d, GLOW_ERR_INTERNAL, "the program was compiled without the "
                         "profiler's hook");
    if (!p->ir || !glow_program_mutable(p))
        return glow_fail(d, GLOW_ERR_INTERNAL, "the program was not compiled for running");
    /* The extra outputs are not in p->outputs (the pipeline lists the model's placeholders
     * before the hook runs), so their memory is found through the IR's weights. */
    for (int i = 0; i < pr->pf->n; i++) {
        slot *s = &pr->slots[i];
        if (!s->ph) {
            for (int k = 0; k < p->ninputs; k++)
                if (p->inputs[k] == s->v.node)
                    s->input = k;
            if (s->input < 0)
                return glow_fail(d, GLOW_ERR_INTERNAL, "profile: input '%s' is not an input "
                                 "of the program", s->v.node->name);
            continue;
        }
        for (const ir_value *v = p->ir->values; v && !s->data; v = v->next)
            if (v->kind == IV_WEIGHT && v->storage == s->ph)
                s->data = glow_program_mutable(p) + v->addr;
        if (!s->data)
            return glow_fail(d, GLOW_ERR_INTERNAL, "profile: the compiled program lost the "
                             "value '%s'", pr->pf->entries[i].key);
    }
    pr->bound = true;
    return GLOW_OK;
}

int glow_profiler_nkeys(const glow_profiler *pr)
{
    return pr->pf->n;
}

void glow_profiler_begin_pass(glow_profiler *pr, int pass)
{
    pr->pass = pass;
    if (pass == 1) {
        pr->pf->samples = 0;
        return;
    }
    for (int i = 0; i < pr->pf->n; i++) {
        slot *s = &pr->slots[i];
        glow_profile_entry *e = &pr->pf->entries[i];
        if (!s->seen)
            e->min = e->max = 0;
        /* In double, where max - min of two floats never overflows; the last bin is closed
         * so the maximum lands in it. */
        double width = (double)e->max - (double)e->min;
        s->lo = e->min;
        s->scale = width > 0 ? pr->pf->bins / width : 0;
    }
}

static float element(glow_dtype t, const uint8_t *base, int64_t i)
{
    uint16_t h;
    switch (t) {
    case GLOW_F16:
        memcpy(&h, base + 2 * i, 2);
        return glow_f16_to_f32(h);
    case GLOW_BF16:
        memcpy(&h, base + 2 * i, 2);
        return glow_bf16_to_f32(h);
    default: {
        float x;
        memcpy(&x, base + 4 * i, 4);
        return x;
    }
    }
}

/* Pass 1: the range of the finite elements. -0 counts as below +0, so the range does not
 * depend on which of the two comes first. */
static void observe_range(slot *s, glow_profile_entry *e, glow_dtype t, const uint8_t *data,
                          int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float x = element(t, data, i);
        if (isnan(x)) {
            e->nan++;
        } else if (isinf(x)) {
            e->inf++;
        } else {
            s->finite++;
            if (!s->seen) {
                e->min = e->max = x;
                s->seen = true;
                continue;
            }
            if (x < e->min || (x == e->min && signbit(x) && !signbit(e->min)))
                e->min = x;
            if (x > e->max || (x == e->max && !signbit(x) && signbit(e->max)))
                e->max = x;
        }
    }
}

static void observe_histogram(slot *s, glow_profile_entry *e, int bins, glow_dtype t,
                              const uint8_t *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float x = element(t, data, i);
        if (isnan(x)) {
            s->nan2++;
            continue;
        }
        if (isinf(x)) {
            s->inf2++;
            continue;
        }
        s->finite2++;
        if (x < e->min || x > e->max)
            s->outside++;
        /* Compared before converting: an element outside the range (counted above as an
         * error) could be beyond what an integer holds. */
        double pos = ((double)x - s->lo) * s->scale;
        int64_t b = pos <= 0 ? 0 : pos >= bins ? bins - 1 : (int64_t)pos;
        e->histogram[b]++;
    }
}

void glow_profiler_observe(glow_profiler *pr, const glow_tensor *inputs)
{
    glow_profile *pf = pr->pf;
    if (pr->pass == 1)
        pf->samples++;
    for (int i = 0; i < pf->n; i++) {
        slot *s = &pr->slots[i];
        const glow_type *t = glow_value_type(s->v);
        const uint8_t *data = s->ph ? s->data : inputs[s->input].data;
        int64_t n = glow_type_numel(t);
        if (pr->pass == 1)
            observe_range(s, &pf->entries[i], t->dtype, data, n);
        else
            observe_histogram(s, &pf->entries[i], pf->bins, t->dtype, data, n);
    }
}

glow_status glow_profiler_finish(glow_profiler *pr, const glow_profile **out, glow_diag *d)
{
    for (int i = 0; i < pr->pf->n; i++) {
        const slot *s = &pr->slots[i];
        const glow_profile_entry *e = &pr->pf->entries[i];
        if (s->finite2 != s->finite || s->nan2 != e->nan || s->inf2 != e->inf || s->outside)
            return glow_fail(d, GLOW_ERR_RUNTIME, "profile: value '%s' changed between the "
                             "two passes over the same samples (%llu finite, %llu NaN, %llu "
                             "infinite elements, then %llu, %llu, %llu, %llu outside the "
                             "range): the program or the inputs are not deterministic", e->key,
                             (unsigned long long)s->finite, (unsigned long long)e->nan,
                             (unsigned long long)e->inf, (unsigned long long)s->finite2,
                             (unsigned long long)s->nan2, (unsigned long long)s->inf2,
                             (unsigned long long)s->outside);
    }
    *out = pr->pf;
    return GLOW_OK;
}

void glow_profiler_destroy(glow_profiler *pr)
{
    if (!pr)
        return;
    glow_profile_free(pr->pf);
    free(pr->slots);
    free(pr);
}

/* --- the file: floats as %.9g (every f32 exactly), counts as integers, so the same profile
 * always gives the same bytes --- */

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = glow_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void putf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(b, tmp, n < (int)sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void put_string(buf *b, const char *s)
{
    /* Control characters round-trip as \u00NN; a byte that is not UTF-8 cannot be written
     * in JSON and shows as the text \xNN (such a name then matches nothing on reading). */
    size_t n = glow_escape(NULL, 0, s, GLOW_ESC_JSON, 0, 0);
    char *e = glow_xmalloc(n + 1);
    glow_escape(e, n + 1, s, GLOW_ESC_JSON, 0, 0);
    put(b, "\"", 1);
    put(b, e, n);
    put(b, "\"", 1);
    free(e);
}

char *glow_profile_to_json(const glow_profile *pf, size_t *len)
{
    buf b = { 0 };
    puts_(&b, "{\n  \"format\": \"" GLOW_PROFILE_FORMAT "\",\n");
    putf(&b, "  \"version\": %d,\n  \"model\": ", GLOW_PROFILE_VERSION);
    put_string(&b, pf->model ? pf->model : "");
    putf(&b, ",\n  \"samples\": %lld,\n  \"bins\": %d,\n  \"values\": [",
         (long long)pf->samples, pf->bins);
    for (int i = 0; i < pf->n; i++) {
        const glow_profile_entry *e = &pf->entries[i];
        puts_(&b, i ? ",\n    {\"key\": " : "\n    {\"key\": ");
        put_string(&b, e->key);
        puts_(&b, ", \"type\": ");
        put_string(&b, e->type);
        putf(&b, ", \"min\": %.9g, \"max\": %.9g", (double)e->min, (double)e->max);
        putf(&b, ", \"nan\": %llu, \"inf\": %llu, \"histogram\": [",
             (unsigned long long)e->nan, (unsigned long long)e->inf);
        for (int k = 0; k < pf->bins; k++)
            putf(&b, k ? ", %llu" : "%llu", (unsigned long long)e->histogram[k]);
        puts_(&b, "]}");
    }
    puts_(&b, pf->n ? "\n  ]\n}\n" : "]\n}\n");
    *len = b.len;
    return b.p;
}

glow_status glow_profile_write(const glow_profile *pf, const char *path, glow_diag *d)
{
    size_t len = 0;
    char *text = glow_profile_to_json(pf, &len);
    glow_status s = glow_write_file(path, text, len, d);
    free(text);
    return s;
}
