// eval_tfidf.c - TfIdfVectorizer: counts the pool's n-grams (with skips) in each row of x and
// weights the counts (TF, IDF or TFIDF), as ONNX specifies.
//
// The pool lists the n-grams grouped by length: ngram_counts[i] is where the (i+1)-grams
// start. The k-th n-gram of the pool (over all lengths) is counted into output column
// ngram_indexes[k]; the first of equal n-grams wins. An n-gram of length n at `start` with
// skip s takes the items start, start + (s+1), ..., start + (n-1)(s+1); every skip from 0 to
// max_skip_count is tried, and unigrams are counted at skip 0 only (skipping does not change
// them). Lengths outside [min_gram_length, max_gram_length] are never counted.
#include <stdlib.h>

#include "eval/eval_string.h"

typedef struct pool_gram {
    int64_t start;      /* first item in the pool */
    int n;              /* length */
    int64_t column;     /* output column */
} pool_gram;

static bool item_eq(glow_dtype t, const void *a, int64_t i, const void *b, int64_t j)
{
    if (t == GLOW_STRING)
        return strcmp(glow_str_at(a, (size_t)i), glow_str_at(b, (size_t)j)) == 0;
    return ev_ldi(t, a, i) == ev_ldi(t, b, j);
}

/* The pool's n-grams of the lengths counted, in pool order; -1 when the counts or indexes do
 * not describe the pool. */
static int64_t list_grams(const glow_node *n, const glow_tensor *ins, pool_gram *g,
                          int lo, int hi)
{
    int64_t items = ev_numel(&ins[1].type), groups = ev_numel(&ins[2].type);
    int64_t nidx = ev_numel(&ins[3].type), ordinal = 0, count = 0;
    const int64_t *starts = ins[2].data, *idx = ins[3].data;
    for (int64_t i = 0; i < groups; i++) {
        int len = (int)(i + 1);
        int64_t s = starts[i], e = i + 1 < groups ? starts[i + 1] : items;
        if (s < 0 || e < s || e > items)
            return -1;
        for (int64_t at = s; at + len <= e; at += len, ordinal++) {
            if (len < lo || len > hi)
                continue;
            if (ordinal >= nidx)
                return -1;
            g[count++] = (pool_gram){ at, len, idx[ordinal] };
        }
    }
    return count;
}

glow_status glow_ev_tfidf(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                          glow_diag *d)
{
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    glow_dtype t = x->dtype;
    if (ins[1].type.dtype != t || ins[2].type.dtype != GLOW_I64 ||
        ins[3].type.dtype != GLOW_I64 || ins[4].type.dtype != GLOW_F32 || y->dtype != GLOW_F32 ||
        (x->rank != 1 && x->rank != 2) || y->rank != x->rank)
        return glow_fail(d, GLOW_ERR_BAD_TYPE, "%s '%s': operand or result kinds",
                         glow_ev_kind(n), n->name);
    int lo = (int)glow_node_int(n, GA_MIN_GRAM, 1), hi = (int)glow_node_int(n, GA_MAX_GRAM, 1);
    int64_t skips = glow_node_int(n, GA_MAX_SKIP, 0);
    const char *mode = glow_node_str(n, GA_MODE, "TF");
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, len = x->dims[x->rank - 1];
    int64_t width = y->dims[y->rank - 1], nweights = ev_numel(&ins[4].type);
    pool_gram *g = glow_xmalloc((size_t)(ev_numel(&ins[1].type) + 1) * sizeof(pool_gram));
    int64_t ng = list_grams(n, ins, g, lo, hi);
    for (int64_t k = 0; k < ng; k++)
        if (g[k].column < 0 || g[k].column >= width)
            ng = -1;
    if (ng < 0 || lo < 1 || hi < lo || skips < 0) {
        free(g);
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': the pool, ngram_counts, ngram_indexes "
                         "and gram lengths do not agree", glow_ev_kind(n), n->name);
    }
    float *out = outs[0].data;
    if (rows > 0 && width > 0)
        memset(out, 0, (size_t)(rows * width) * sizeof(float));
    for (int64_t r = 0; r < rows; r++) {
        float *row = out + r * width;
        int64_t base = r * len;
        for (int64_t s = 0; s <= skips; s++) {
            for (int64_t start = 0; start < len; start++) {
                for (int64_t k = 0; k < ng; k++) {
                    const pool_gram *p = &g[k];
                    if ((p->n == 1 && s > 0) || start + (p->n - 1) * (s + 1) >= len)
                        continue;
                    bool eq = true;
                    for (int m = 0; m < p->n && eq; m++)
                        eq = item_eq(t, ins[0].data, base + start + m * (s + 1), ins[1].data,
                                     p->start + m);
                    if (!eq)
                        continue;
                    /* Equal n-grams later in the pool are not counted again. */
                    bool first = true;
                    for (int64_t q = 0; q < k && first; q++) {
                        if (g[q].n != p->n)
                            continue;
                        bool same = true;
                        for (int m = 0; m < p->n && same; m++)
                            same = item_eq(t, ins[1].data, g[q].start + m, ins[1].data,
                                           p->start + m);
                        first = !same;
                    }
                    if (first)
                        row[p->column] += 1;
                }
            }
        }
        for (int64_t c = 0; c < width; c++) {
            float w = c < nweights ? ((const float *)ins[4].data)[c] : 1.0f;
            if (!strcmp(mode, "IDF"))
                row[c] = row[c] > 0 ? (nweights ? w : 1.0f) : 0.0f;
            else if (!strcmp(mode, "TFIDF") && nweights)
                row[c] *= w;
        }
    }
    free(g);
    return GLOW_OK;
}
