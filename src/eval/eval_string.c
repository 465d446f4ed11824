// eval_string.c - The string ops of the evaluator: Equal and Cast on strings,
// StringNormalizer, StringConcat, StringSplit, RegexFullMatch (PCRE2), LabelEncoder.
// TfIdfVectorizer is in eval_tfidf.c.
//
// New strings go to the arena bound on the calling thread (glow_eval_bind_strings): a run's
// own string store, which the runtime resets before each run and frees with the context.
// Nothing is bound while importing or optimizing, so folding a node that makes new strings
// fails as unsupported and the node stays in the graph.
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "eval/eval_internal.h"
#include "eval/eval_string.h"

static _Thread_local glow_arena *bound_strings;

glow_arena *glow_eval_bind_strings(glow_arena *a)
{
    glow_arena *old = bound_strings;
    bound_strings = a;
    return old;
}

const char *glow_eval_new_string(const char *s, size_t len)
{
    return bound_strings ? glow_arena_strndup(bound_strings, s, len) : NULL;
}

static glow_str *handles(const glow_tensor *t) { return (glow_str *)t->data; }

glow_status glow_ev_str_store(const glow_node *n, glow_str *dst, const char *s, size_t len,
                              glow_diag *d)
{
    /* The empty string needs no bytes: a NULL handle reads as "". */
    if (len == 0) {
        *dst = NULL;
        return GLOW_OK;
    }
    const char *p = glow_eval_new_string(s, len);
    if (!p)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': makes strings, which needs a run's "
                         "string store (not evaluated at compile time)", glow_ev_kind(n),
                         n->name);
    *dst = p;
    return GLOW_OK;
}

static glow_status want_string(const glow_node *n, const glow_tensor *t, const char *what,
                               glow_diag *d)
{
    if (t->type.dtype == GLOW_STRING)
        return GLOW_OK;
    return glow_fail(d, GLOW_ERR_BAD_TYPE, "%s '%s': %s is %s, not string", glow_ev_kind(n),
                     n->name, what, glow_dtype_name(t->type.dtype));
}

/* --- Equal and Cast --- */

glow_status glow_ev_str_compare(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                glow_diag *d)
{
    if (n->kind != NK_EQUAL || ins[1].type.dtype != GLOW_STRING)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': strings only compare for equality",
                         glow_ev_kind(n), n->name);
    const glow_type *a = &ins[0].type;
    GLOW_TRY(glow_ev_expect_shape(n, "operand 1", &ins[1].type, a->rank, a->dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, a->rank, a->dims, d));
    int64_t count = ev_numel(a);
    for (int64_t i = 0; i < count; i++)
        ((uint8_t *)outs[0].data)[i] =
            strcmp(glow_str_at(ins[0].data, (size_t)i), glow_str_at(ins[1].data, (size_t)i)) == 0;
    return GLOW_OK;
}

/* A number as ONNX's Cast writes it: integers in decimal, floats in the fewest significant
 * digits that read back as the same value of their own kind, "INF", "-INF", "NaN"; bool as
 * "1" or "0". */
static int format_number(glow_dtype t, const void *base, int64_t i, char *buf, size_t size)
{
    if (!glow_dtype_is_float(t)) {
        if (t == GLOW_U64)
            return snprintf(buf, size, "%llu", (unsigned long long)((const uint64_t *)base)[i]);
        return snprintf(buf, size, "%lld", (long long)ev_ldi(t, base, i));
    }
    double v = ev_ldf(t, base, i);
    if (isnan(v))
        return snprintf(buf, size, "NaN");
    if (isinf(v))
        return snprintf(buf, size, v > 0 ? "INF" : "-INF");
    int maxprec = t == GLOW_F64 ? 17 : 9, k = 0;
    for (int prec = 1; prec <= maxprec; prec++) {
        k = snprintf(buf, size, "%.*g", prec, v);
        char tmp[16];
        double back = strtod(buf, NULL);
        ev_stf(t, tmp, 0, back);
        if (ev_ldf(t, tmp, 0) == v)
            break;
    }
    return k;
}

/* A string read as a number of kind t: integer kinds take an integer literal exactly, other
 * literals through f64 (truncated, as "100.5" -> 100); float kinds through f64. */
static bool parse_number(glow_dtype t, const char *s, void *base, int64_t i)
{
    if (glow_dtype_is_int(t) || t == GLOW_BOOL) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end != s && !*end && errno == 0) {
            ev_sti(t, base, i, v);
            return true;
        }
    }
    double v = glow_str_to_f64(s);
    ev_stf(t, base, i, v);
    return !isnan(v) || strchr("nN+-", *s) != NULL;
}

glow_status glow_ev_str_cast(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             glow_diag *d)
{
    const glow_tensor *x = &ins[0];
    glow_tensor *y = &outs[0];
    GLOW_TRY(glow_ev_expect_shape(n, "result", &y->type, x->type.rank, x->type.dims, d));
    glow_dtype tx = x->type.dtype, ty = y->type.dtype;
    int64_t count = ev_numel(&x->type);
    if (tx == GLOW_STRING && ty == GLOW_STRING) {
        if (count)
            memmove(y->data, x->data, (size_t)count * sizeof(glow_str));
        return GLOW_OK;
    }
    if (tx == GLOW_STRING) {
        for (int64_t i = 0; i < count; i++) {
            const char *s = glow_str_at(x->data, (size_t)i);
            if (!parse_number(ty, s, y->data, i))
                return glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': element %lld \"%.40s\" is not "
                                 "a number", glow_ev_kind(n), n->name, (long long)i, s);
        }
        return GLOW_OK;
    }
    if (ev_class(tx) == DC_QUANT)
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': quantized to string",
                         glow_ev_kind(n), n->name);
    for (int64_t i = 0; i < count; i++) {
        char buf[64];
        int k = format_number(tx, x->data, i, buf, sizeof buf);
        GLOW_TRY(glow_ev_str_store(n, &handles(y)[i], buf, (size_t)k, d));
    }
    return GLOW_OK;
}

/* --- StringNormalizer --- */

static bool same_word(const char *a, const char *b, bool case_sensitive)
{
    if (case_sensitive)
        return strcmp(a, b) == 0;
    /* ASCII letters only: the locale attribute is not applied (docs/onnx-import.md). */
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

static glow_status ev_normalizer(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                                 glow_diag *d)
{
    GLOW_TRY(want_string(n, &ins[0], "input", d));
    const char *mode = glow_node_str(n, GA_MODE, "NONE");
    bool cs = glow_node_int(n, GA_CASE_SENSITIVE, 0) != 0;
    int64_t count = ev_numel(&ins[0].type), nstop = n->nin > 1 ? ev_numel(&ins[1].type) : 0;
    int64_t want = ev_numel(&outs[0].type), kept = 0;
    if (n->nin > 1)
        GLOW_TRY(want_string(n, &ins[1], "stopwords", d));
    glow_str *y = handles(&outs[0]);
    for (int64_t i = 0; i < count; i++) {
        const char *s = glow_str_at(ins[0].data, (size_t)i);
        bool stop = false;
        for (int64_t k = 0; k < nstop && !stop; k++)
            stop = same_word(s, glow_str_at(ins[1].data, (size_t)k), cs);
        if (stop)
            continue;
        if (kept >= want)
            return glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': more than the %lld words the model "
                             "declares remain after removing stopwords", glow_ev_kind(n),
                             n->name, (long long)want);
        size_t len = strlen(s);
        if (!strcmp(mode, "NONE") || len == 0) {
            y[kept++] = len ? s : NULL;
            continue;
        }
        char *tmp = glow_xmalloc(len + 1);
        for (size_t c = 0; c <= len; c++)
            tmp[c] = (char)(!strcmp(mode, "LOWER") ? tolower((unsigned char)s[c])
                                                   : toupper((unsigned char)s[c]));
        glow_status st = glow_ev_str_store(n, &y[kept++], tmp, len, d);
        free(tmp);
        GLOW_TRY(st);
    }
    /* ONNX keeps one empty string when every word was a stopword. */
    if (kept == 0 && want == 1)
        y[kept++] = NULL;
    if (kept != want)
        return glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': %lld words remain after removing "
                         "stopwords, the model declares %lld", glow_ev_kind(n), n->name,
                         (long long)kept, (long long)want);
    return GLOW_OK;
}

/* --- StringConcat --- */

static glow_status ev_concat(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                             glow_diag *d)
{
    GLOW_TRY(want_string(n, &ins[0], "operand 0", d));
    GLOW_TRY(want_string(n, &ins[1], "operand 1", d));
    const glow_type *a = &ins[0].type;
    GLOW_TRY(glow_ev_expect_shape(n, "operand 1", &ins[1].type, a->rank, a->dims, d));
    GLOW_TRY(glow_ev_expect_shape(n, "result", &outs[0].type, a->rank, a->dims, d));
    int64_t count = ev_numel(a);
    for (int64_t i = 0; i < count; i++) {
        const char *x = glow_str_at(ins[0].data, (size_t)i);
        const char *z = glow_str_at(ins[1].data, (size_t)i);
        size_t lx = strlen(x), lz = strlen(z);
        char *tmp = glow_xmalloc(lx + lz + 1);
        memcpy(tmp, x, lx);
        memcpy(tmp + lx, z, lz + 1);
        glow_status st = glow_ev_str_store(n, &handles(&outs[0])[i], tmp, lx + lz, d);
        free(tmp);
        GLOW_TRY(st);
    }
    return GLOW_OK;
}

/* --- StringSplit --- */

static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Splits s as Python's str.split(sep, maxsplit) does (sep NULL: runs of whitespace, no empty
 * pieces); calls back with each piece, at most `cap` of them written; returns the count. */
static int64_t split_one(const glow_node *n, const char *s, const char *sep, int64_t maxsplit,
                         glow_str *out, int64_t cap, glow_status *st, glow_diag *d)
{
    int64_t k = 0;
    size_t seplen = sep ? strlen(sep) : 0;
    const char *p = s;
    for (;;) {
        const char *start, *end;
        if (!sep) {
            while (*p && is_space(*p))
                p++;
            if (!*p)
                break;
            start = p;
            if (maxsplit >= 0 && k == maxsplit) {
                /* The rest, trailing whitespace removed. */
                end = p + strlen(p);
                while (end > start && is_space(end[-1]))
                    end--;
            } else {
                end = start;
                while (*end && !is_space(*end))
                    end++;
            }
        } else {
            start = p;
            const char *hit = maxsplit >= 0 && k == maxsplit ? NULL : strstr(p, sep);
            end = hit ? hit : p + strlen(p);
        }
        if (k < cap && *st == GLOW_OK)
            *st = glow_ev_str_store(n, &out[k], start, (size_t)(end - start), d);
        k++;
        if (!sep) {
            p = end;
            if (maxsplit >= 0 && k > maxsplit)
                break;
        } else {
            if (!*end)
                break;
            p = end + seplen;
        }
    }
    return k;
}

static glow_status ev_split(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    GLOW_TRY(want_string(n, &ins[0], "input", d));
    const char *sep = glow_node_str(n, GA_DELIMITER, "");
    int64_t maxsplit = glow_node_int(n, GA_MAXSPLIT, -1);
    const glow_type *x = &ins[0].type, *y = &outs[0].type;
    int64_t count = ev_numel(x), width = y->rank ? y->dims[y->rank - 1] : 0, most = 0;
    glow_str *out = handles(&outs[0]);
    if (count > 0 && width > 0)
        memset(out, 0, (size_t)(count * width) * sizeof(glow_str));
    glow_status st = GLOW_OK;
    for (int64_t i = 0; i < count && st == GLOW_OK; i++) {
        int64_t k = split_one(n, glow_str_at(ins[0].data, (size_t)i), *sep ? sep : NULL,
                              maxsplit, out + i * width, width, &st, d);
        if (n->nout > 1)
            ((int64_t *)outs[1].data)[i] = k;
        most = k > most ? k : most;
    }
    GLOW_TRY(st);
    /* ONNX pads to the longest split; the declared width is that bound. */
    if (most != width)
        return glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': the longest split has %lld pieces, the "
                         "model declares %lld", glow_ev_kind(n), n->name, (long long)most,
                         (long long)width);
    return GLOW_OK;
}

/* --- RegexFullMatch --- */

static glow_status ev_regex(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                            glow_diag *d)
{
    GLOW_TRY(want_string(n, &ins[0], "input", d));
    const char *pattern = glow_node_str(n, GA_PATTERN, "");
    int err;
    PCRE2_SIZE at;
    /* RE2 matches UTF-8 text; PCRE2 with UTF does too (docs/onnx-import.md lists the
     * syntax that differs). The whole string must match: anchored at both ends. */
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED, &err, &at,
                                   NULL);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(err, msg, sizeof msg);
        return glow_fail(d, GLOW_ERR_BAD_ATTR, "%s '%s': pattern \"%.80s\" at offset %zu: %s",
                         glow_ev_kind(n), n->name, pattern, (size_t)at, (const char *)msg);
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int64_t count = ev_numel(&ins[0].type);
    glow_status st = GLOW_OK;
    for (int64_t i = 0; i < count && st == GLOW_OK; i++) {
        const char *s = glow_str_at(ins[0].data, (size_t)i);
        int rc = pcre2_match(re, (PCRE2_SPTR)s, strlen(s), 0, 0, md, NULL);
        if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
            st = glow_fail(d, GLOW_ERR_RUNTIME, "%s '%s': element %lld: PCRE2 error %d",
                           glow_ev_kind(n), n->name, (long long)i, rc);
        ((uint8_t *)outs[0].data)[i] = rc >= 0;
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return st;
}

/* --- LabelEncoder --- */

/* Keys of one kind compared as strings, as f64 (floats: NaN equals NaN, as ONNX's map does)
 * or as i64. */
static int key_cmp(glow_dtype t, const void *a, int64_t i, const void *b, int64_t j)
{
    if (t == GLOW_STRING)
        return strcmp(glow_str_at(a, (size_t)i), glow_str_at(b, (size_t)j));
    if (glow_dtype_is_float(t)) {
        double x = ev_ldf(t, a, i), y = ev_ldf(t, b, j);
        if (isnan(x) || isnan(y))
            return isnan(x) - isnan(y);
        return (x > y) - (x < y);
    }
    int64_t x = ev_ldi(t, a, i), y = ev_ldi(t, b, j);
    return (x > y) - (x < y);
}

typedef struct key_order {
    glow_dtype t;
    const void *keys;
} key_order;

static int order_cmp(const void *a, const void *b, void *arg)
{
    const key_order *o = arg;
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    int c = key_cmp(o->t, o->keys, i, o->keys, j);
    return c ? c : (i > j) - (i < j); /* the first of equal keys wins */
}

static glow_status ev_label_encoder(const glow_node *n, const glow_tensor *ins,
                                    glow_tensor *outs, glow_diag *d)
{
    glow_dtype kt = ins[0].type.dtype, vt = outs[0].type.dtype;
    if (ins[1].type.dtype != kt || ins[2].type.dtype != vt || ins[3].type.dtype != vt)
        return glow_fail(d, GLOW_ERR_BAD_TYPE, "%s '%s': operand kinds do not match",
                         glow_ev_kind(n), n->name);
    int64_t nkeys = ev_numel(&ins[1].type), count = ev_numel(&ins[0].type);
    if (ev_numel(&ins[2].type) != nkeys || ev_numel(&ins[3].type) != 1)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': keys and values differ in length",
                         glow_ev_kind(n), n->name);
    if (ev_numel(&outs[0].type) != count)
        return glow_fail(d, GLOW_ERR_BAD_SHAPE, "%s '%s': the result has %lld elements for "
                         "%lld inputs", glow_ev_kind(n), n->name,
                         (long long)ev_numel(&outs[0].type), (long long)count);
    /* Sorted key positions, searched by bisection: vocabularies have thousands of keys. */
    int64_t *order = glow_xmalloc((size_t)(nkeys ? nkeys : 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nkeys; k++)
        order[k] = k;
    key_order o = { kt, ins[1].data };
    qsort_r(order, (size_t)nkeys, sizeof(int64_t), order_cmp, &o);
    size_t es = ev_size(vt);
    for (int64_t i = 0; i < count; i++) {
        int64_t lo = 0, hi = nkeys;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (key_cmp(kt, ins[1].data, order[mid], ins[0].data, i) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        bool hit = lo < nkeys && key_cmp(kt, ins[1].data, order[lo], ins[0].data, i) == 0;
        if (hit)
            ev_copy(outs[0].data, i, ins[2].data, order[lo], es);
        else
            ev_copy(outs[0].data, i, ins[3].data, 0, es);
    }
    free(order);
    return GLOW_OK;
}

glow_status glow_ev_string_op(const glow_node *n, const glow_tensor *ins, glow_tensor *outs,
                              glow_diag *d)
{
    switch (n->kind) {
    case NK_STRING_NORMALIZER: return ev_normalizer(n, ins, outs, d);
    case NK_STRING_CONCAT: return ev_concat(n, ins, outs, d);
    case NK_STRING_SPLIT: return ev_split(n, ins, outs, d);
    case NK_REGEX_FULL_MATCH: return ev_regex(n, ins, outs, d);
    case NK_LABEL_ENCODER: return ev_label_encoder(n, ins, outs, d);
    case NK_TFIDF: return glow_ev_tfidf(n, ins, outs, d);
    default:
        return glow_fail(d, GLOW_ERR_UNSUPPORTED, "%s '%s': not a string op", glow_ev_kind(n),
                         n->name);
    }
}
