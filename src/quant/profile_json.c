// profile_json.c - Reading a profile file (profile.c writes it) with a small JSON parser of
// our own, checked field by field.
//
// A recursive-descent parser driven by the schema: it walks the text once and stores only
// what the profile keeps (a histogram goes straight into its counts), and skips fields it
// does not know so a later writer may add some. It accepts the tokens NaN, Infinity and
// -Infinity where a number may stand, only to say which key has a range that is not finite.
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"

#define MAX_BINS (1 << 20)
#define MAX_DEPTH 64

/* The bytes of a string being decoded. */
typedef GLOW_VEC(char) chars;

static void put(chars *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        GLOW_VEC_PUSH(*b, s[i]);
}

typedef struct parser {
    const char *path;
    const char *s, *end, *p;
    glow_profile *pf;
    glow_diag *d;
    bool failed;
} parser;

static void where(const parser *ps, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *q = ps->s; q < at && q < ps->end; q++) {
        if (*q == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

/* A syntax error at the current position: the first failure wins. */
static bool syntax(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool syntax(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line, col;
    where(ps, ps->p, &line, &col);
    glow_fail(ps->d, GLOW_ERR_PARSE, "profile '%s' is not valid JSON: line %d, column %d: %s",
              ps->path, line, col, msg);
    return false;
}

/* A well-formed file whose content is wrong. */
static bool bad(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    glow_fail(ps->d, GLOW_ERR_PARSE, "profile '%s': %s", ps->path, msg);
    return false;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
                               *ps->p == '\r'))
        ps->p++;
}

static bool peek(parser *ps, char c)
{
    skip_ws(ps);
    return ps->p < ps->end && *ps->p == c;
}

static bool expect(parser *ps, char c, const char *what)
{
    if (peek(ps, c)) {
        ps->p++;
        return true;
    }
    if (ps->p >= ps->end)
        return syntax(ps, "the text ends where %s was expected", what);
    unsigned char got = (unsigned char)*ps->p;
    if (got < 0x20 || got >= 0x7f)
        return syntax(ps, "expected %s, found the byte 0x%02x", what, got);
    return syntax(ps, "expected %s, found '%c'", what, got);
}

static void put_utf8(chars *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        u[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    put(b, u, n);
}

static bool hex4(parser *ps, unsigned *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++, ps->p++) {
        char c = ps->p < ps->end ? *ps->p : 0;
        unsigned v = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (v > 15)
            return syntax(ps, "\\u wants four hex digits");
        *out = *out << 4 | v;
    }
    return true;
}

/* A string into the profile's arena (NULL after an error). */
static const char *parse_string(parser *ps)
{
    if (!expect(ps, '"', "a string"))
        return NULL;
    chars b = { 0 };
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) {
            free(b.data);
            return syntax(ps, "a control character in a string"), NULL;
        }
        ps->p++;
        if (c != '\\') {
            put(&b, (const char *)&c, 1);
            continue;
        }
        char e = ps->p < ps->end ? *ps->p++ : 0;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            put(&b, &"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"], 1);
            continue;
        }
        unsigned cp = 0, lo = 0;
        if (e != 'u' || !hex4(ps, &cp)) {
            free(b.data);
            return syntax(ps, "a bad escape in a string"), NULL;
        }
        if (cp >= 0xd800 && cp < 0xdc00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
            ps->p[1] == 'u') {
            ps->p += 2;
            if (!hex4(ps, &lo) || lo < 0xdc00 || lo >= 0xe000) {
                free(b.data);
                return syntax(ps, "a bad surrogate pair in a string"), NULL;
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        put_utf8(&b, cp);
    }
    if (ps->p >= ps->end) {
        free(b.data);
        return syntax(ps, "the text ends inside a string"), NULL;
    }
    ps->p++;
    const char *s = glow_arena_strndup(&ps->pf->arena, b.data ? b.data : "", b.len);
    free(b.data);
    return s;
}

/* A number token: JSON's grammar, or NaN / Infinity / -Infinity. *integral is true for
 * digits only (no sign, fraction or exponent). */
static bool number_token(parser *ps, char *tok, size_t size, bool *integral)
{
    skip_ws(ps);
    const char *q = ps->p;
    *integral = false;
    static const char *const words[] = { "NaN", "Infinity", "-Infinity" };
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(ps->end - q) >= n && !strncmp(q, words[i], n)) {
            snprintf(tok, size, "%s", words[i]);
            ps->p += n;
            return true;
        }
    }
    bool neg = q < ps->end && *q == '-';
    q += neg;
    const char *digits = q;
    while (q < ps->end && *q >= '0' && *q <= '9')
        q++;
    if (q == digits)
        return syntax(ps, "expected a number");
    if (*digits == '0' && q - digits > 1)
        return syntax(ps, "a number with a leading zero");
    *integral = !neg;
    if (q < ps->end && *q == '.') {
        const char *f = ++q;
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
        if (q == f)
            return syntax(ps, "a number without digits after '.'");
        *integral = false;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        const char *x = q;
        while (q < ps->end && *q >= '0' && *q <= '9')
            q++;
        if (q == x)
            return syntax(ps, "a number without digits in its exponent");
        *integral = false;
    }
    if ((size_t)(q - ps->p) >= size)
        return syntax(ps, "a number of more than %zu characters", size - 1);
    memcpy(tok, ps->p, (size_t)(q - ps->p));
    tok[q - ps->p] = '\0';
    ps->p = q;
    return true;
}

/* A non-negative integer count; `what` names it in the message. */
static bool parse_count(parser *ps, uint64_t *out, const char *what)
{
    char tok[64];
    bool integral;
    if (!number_token(ps, tok, sizeof tok, &integral))
        return false;
    errno = 0;
    unsigned long long v = integral ? strtoull(tok, NULL, 10) : 0;
    if (!integral || errno == ERANGE)
        return bad(ps, "%s is %s, not a count (a non-negative integer)", what, tok);
    *out = v;
    return true;
}

static bool parse_float(parser *ps, float *out)
{
    char tok[128];
    bool integral;
    if (!number_token(ps, tok, sizeof tok, &integral))
        return false;
    if (!strcmp(tok, "NaN"))
        *out = NAN;
    else if (!strcmp(tok, "Infinity") || !strcmp(tok, "-Infinity"))
        *out = tok[0] == '-' ? -INFINITY : INFINITY;
    else
        *out = strtof(tok, NULL); /* the nearest f32: exact for what %.9g printed */
    return true;
}

static bool skip_value(parser *ps, int depth);

static bool skip_container(parser *ps, char close, bool object, int depth)
{
    ps->p++;
    if (peek(ps, close)) {
        ps->p++;
        return true;
    }
    for (;;) {
        if (object && (!parse_string(ps) || !expect(ps, ':', "':'")))
            return false;
        if (!skip_value(ps, depth + 1))
            return false;
        if (peek(ps, ',')) {
            ps->p++;
            continue;
        }
        return expect(ps, close, object ? "',' or '}'" : "',' or ']'");
    }
}

/* Any JSON value, for fields the reader does not use. */
static bool skip_value(parser *ps, int depth)
{
    if (depth > MAX_DEPTH)
        return syntax(ps, "values nested more than %d deep", MAX_DEPTH);
    skip_ws(ps);
    if (ps->p >= ps->end)
        return syntax(ps, "the text ends where a value was expected");
    char c = *ps->p;
    if (c == '{' || c == '[')
        return skip_container(ps, c == '{' ? '}' : ']', c == '{', depth);
    if (c == '"')
        return parse_string(ps) != NULL;
    static const char *const words[] = { "true", "false", "null" };
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(ps->end - ps->p) >= n && !strncmp(ps->p, words[i], n)) {
            ps->p += n;
            return true;
        }
    }
    char tok[128];
    bool integral;
    return number_token(ps, tok, sizeof tok, &integral);
}

/* Loops over the members of an object: calls member(ps, name, ctx) positioned at each value. */
typedef bool (*member_fn)(parser *ps, const char *name, void *ctx);

static bool parse_object(parser *ps, member_fn member, void *ctx, const char *what)
{
    if (!expect(ps, '{', what))
        return false;
    if (peek(ps, '}')) {
        ps->p++;
        return true;
    }
    for (;;) {
        const char *name = parse_string(ps);
        if (!name || !expect(ps, ':', "':'") || !member(ps, name, ctx))
            return false;
        if (peek(ps, ',')) {
            ps->p++;
            continue;
        }
        return expect(ps, '}', "',' or '}'");
    }
}

/* One element of "values", with what the file said (the checks come after). */
typedef struct entry_cx {
    glow_profile_entry e;
    int index;
    GLOW_VEC(uint64_t) hist;
    bool has_hist, has_min, has_max, has_nan, has_inf;
} entry_cx;

static bool entry_member(parser *ps, const char *name, void *ctx)
{
    entry_cx *x = ctx;
    char what[64];
    snprintf(what, sizeof what, "values[%d].%s", x->index, name);
    if (!strcmp(name, "key"))
        return (x->e.key = parse_string(ps)) != NULL;
    if (!strcmp(name, "type"))
        return (x->e.type = parse_string(ps)) != NULL;
    if (!strcmp(name, "min"))
        return (x->has_min = parse_float(ps, &x->e.min));
    if (!strcmp(name, "max"))
        return (x->has_max = parse_float(ps, &x->e.max));
    if (!strcmp(name, "nan"))
        return (x->has_nan = parse_count(ps, &x->e.nan, what));
    if (!strcmp(name, "inf"))
        return (x->has_inf = parse_count(ps, &x->e.inf, what));
    if (strcmp(name, "histogram"))
        return skip_value(ps, 2);
    x->has_hist = true;
    x->hist.len = 0;
    if (!expect(ps, '[', "'[' (the histogram)"))
        return false;
    if (peek(ps, ']')) {
        ps->p++;
        return true;
    }
    for (;;) {
        uint64_t c = 0;
        if (!parse_count(ps, &c, what))
            return false;
        GLOW_VEC_PUSH(x->hist, c);
        if (peek(ps, ',')) {
            ps->p++;
            continue;
        }
        return expect(ps, ']', "',' or ']'");
    }
}

/* What the top level said. */
typedef struct top_cx {
    const char *format;
    uint64_t version, bins, samples;
    bool has_version, has_bins, has_samples, has_values;
    GLOW_VEC(entry_cx) values;
} top_cx;

static bool parse_values(parser *ps, top_cx *t)
{
    t->has_values = true;
    if (!expect(ps, '[', "'[' (the values)"))
        return false;
    if (peek(ps, ']')) {
        ps->p++;
        return true;
    }
    for (;;) {
        entry_cx x = { .index = (int)t->values.len };
        bool ok = parse_object(ps, entry_member, &x, "'{' (a value)");
        GLOW_VEC_PUSH(t->values, x);
        if (!ok)
            return false;
        if (peek(ps, ',')) {
            ps->p++;
            continue;
        }
        return expect(ps, ']', "',' or ']'");
    }
}

static bool top_member(parser *ps, const char *name, void *ctx)
{
    top_cx *t = ctx;
    if (!strcmp(name, "format"))
        return (t->format = parse_string(ps)) != NULL;
    if (!strcmp(name, "version"))
        return (t->has_version = parse_count(ps, &t->version, "'version'"));
    if (!strcmp(name, "model"))
        return (ps->pf->model = parse_string(ps)) != NULL;
    if (!strcmp(name, "samples"))
        return (t->has_samples = parse_count(ps, &t->samples, "'samples'"));
    if (!strcmp(name, "bins"))
        return (t->has_bins = parse_count(ps, &t->bins, "'bins'"));
    if (!strcmp(name, "values"))
        return parse_values(ps, t);
    return skip_value(ps, 1);
}

/* The checks of one value, once the whole file is read (bins may follow the values). */
static bool check_entry(parser *ps, const top_cx *t, entry_cx *x)
{
    glow_profile_entry *e = &x->e;
    if (!e->key)
        return bad(ps, "values[%d] has no 'key'", x->index);
    const char *missing = !e->type ? "type" : !x->has_min ? "min" : !x->has_max ? "max"
                        : !x->has_nan ? "nan" : !x->has_inf ? "inf"
                        : !x->has_hist ? "histogram" : NULL;
    if (missing)
        return bad(ps, "value '%s' has no '%s'", e->key, missing);
    if (!isfinite(e->min) || !isfinite(e->max))
        return bad(ps, "value '%s': the range [%g, %g] is not finite", e->key,
                   (double)e->min, (double)e->max);
    if (e->min > e->max)
        return bad(ps, "value '%s': min %.9g is above max %.9g", e->key, (double)e->min,
                   (double)e->max);
    if (x->hist.len != t->bins)
        return bad(ps, "value '%s': the histogram has %zu counts, 'bins' is %llu", e->key,
                   x->hist.len, (unsigned long long)t->bins);
    if (glow_strmap_has(&ps->pf->index, e->key))
        return bad(ps, "value '%s' appears twice", e->key);
    return true;
}

static bool check_top(parser *ps, top_cx *t)
{
    if (!t->format)
        return bad(ps, "not a glowc profile (no 'format')");
    if (strcmp(t->format, GLOW_PROFILE_FORMAT))
        return bad(ps, "not a glowc profile ('format' is '%s', not '" GLOW_PROFILE_FORMAT "')",
                   t->format);
    if (!t->has_version)
        return bad(ps, "no 'version'");
    if (t->version != GLOW_PROFILE_VERSION)
        return bad(ps, "version %llu; this glowc reads version %d",
                   (unsigned long long)t->version, GLOW_PROFILE_VERSION);
    const char *missing = !t->has_samples ? "samples" : !t->has_bins ? "bins"
                        : !t->has_values ? "values" : NULL;
    if (missing)
        return bad(ps, "no '%s'", missing);
    if (t->bins < 1 || t->bins > MAX_BINS)
        return bad(ps, "'bins' is %llu, expected 1 to %d", (unsigned long long)t->bins,
                   MAX_BINS);
    if (t->samples > INT64_MAX)
        return bad(ps, "'samples' is too large");
    glow_profile *pf = ps->pf;
    pf->bins = (int)t->bins;
    pf->samples = (int64_t)t->samples;
    pf->n = (int)t->values.len;
    pf->entries = GLOW_NEW_ARRAY(&pf->arena, glow_profile_entry, pf->n + 1);
    for (int i = 0; i < pf->n; i++) {
        entry_cx *x = &t->values.data[i];
        if (!check_entry(ps, t, x))
            return false;
        pf->entries[i] = x->e;
        pf->entries[i].histogram = glow_arena_memdup(&pf->arena, x->hist.data,
                                                     sizeof(uint64_t) * pf->bins);
        glow_strmap_put(&pf->index, pf->entries[i].key, &pf->entries[i]);
    }
    return true;
}

glow_status glow_profile_parse(const char *path, const char *text, size_t len,
                               glow_profile **out, glow_diag *d)
{
    *out = NULL;
    parser ps = { .path = path, .s = text, .end = text + len, .p = text, .d = d };
    ps.pf = glow_xcalloc(1, sizeof(*ps.pf));
    ps.pf->path = glow_arena_strdup(&ps.pf->arena, path);
    top_cx t = { 0 };
    bool ok = parse_object(&ps, top_member, &t, "'{' (a JSON object)");
    if (ok) {
        skip_ws(&ps);
        if (ps.p < ps.end)
            ok = syntax(&ps, "text after the end of the profile");
    }
    if (ok)
        ok = check_top(&ps, &t);
    for (size_t i = 0; i < t.values.len; i++)
        GLOW_VEC_FREE(t.values.data[i].hist);
    GLOW_VEC_FREE(t.values);
    if (!ok) {
        glow_profile_free(ps.pf);
        return d->status ? d->status : GLOW_ERR_PARSE;
    }
    if (!ps.pf->model)
        ps.pf->model = "";
    *out = ps.pf;
    return GLOW_OK;
}

glow_status glow_profile_load(const char *path, glow_profile **out, glow_diag *d)
{
    *out = NULL;
    uint8_t *data = NULL;
    size_t size = 0;
    GLOW_TRY(glow_read_file(path, &data, &size, d));
    glow_status s = glow_profile_parse(path, (const char *)data, size, out, d);
    free(data);
    return s;
}
