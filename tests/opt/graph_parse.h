// graph_parse.h - Reads the printer's text form (src/graph/print.c) back into a module, for the
// optimizer's golden tests: storage lines, node lines with attributes, and Save.
//
// Accepted beyond what the printer writes, to keep test inputs short: a function node may
// omit its result types (they are inferred; Reshape, Broadcast and Cast need them), and a
// Constant may list fewer values than it has elements (one value is a splat, several repeat
// cyclically, none gives 0.5, 1.5, ... -1.5, ...). Quantized types carry ":scale:offset";
// quoted names with escapes are not needed by the tests and not accepted.
#ifndef GLOW_TEST_GRAPH_PARSE_H
#define GLOW_TEST_GRAPH_PARSE_H

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

typedef struct gp {
    glow_module *m;
    glow_function *f;
    glow_strmap names;
    const char *p;      /* cursor in the current line */
    int line;
    char err[512];
} gp;

static bool gp_fail(gp *g, const char *what)
{
    if (!g->err[0])
        snprintf(g->err, sizeof g->err, "line %d: %s at '%.40s'", g->line, what, g->p);
    return false;
}

static void gp_ws(gp *g)
{
    while (*g->p == ' ' || *g->p == '\t')
        g->p++;
}

static bool gp_lit(gp *g, const char *s)
{
    gp_ws(g);
    size_t n = strlen(s);
    if (strncmp(g->p, s, n) != 0)
        return false;
    g->p += n;
    return true;
}

static bool gp_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' || c == ':' ||
           c == '-' || c == '#';
}

/* %name or %"name" (optionally .N for a result index when res is non-NULL). */
static bool gp_ref(gp *g, char *name, size_t size, uint32_t *res)
{
    gp_ws(g);
    if (*g->p != '%')
        return gp_fail(g, "expected %name");
    g->p++;
    size_t n = 0;
    if (*g->p == '"') {
        g->p++;
        while (*g->p && *g->p != '"' && n + 1 < size)
            name[n++] = *g->p++;
        if (*g->p++ != '"')
            return gp_fail(g, "unterminated name");
    } else {
        while (gp_name_char(*g->p) && n + 1 < size)
            name[n++] = *g->p++;
    }
    name[n] = '\0';
    if (res)
        *res = 0;
    /* A bare name never ends in .digits, so a trailing .N is the result index. */
    char *dot = strrchr(name, '.');
    if (res && dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
        *res = (uint32_t)atoi(dot + 1);
        *dot = '\0';
    } else if (res && *g->p == '.' && isdigit((unsigned char)g->p[1])) {
        *res = (uint32_t)strtoul(g->p + 1, (char **)&g->p, 10);
    }
    return n > 0 || gp_fail(g, "empty name");
}

static bool gp_type(gp *g, glow_type *t)
{
    gp_ws(g);
    char dt[16];
    size_t n = 0;
    while (isalnum((unsigned char)*g->p) && n + 1 < sizeof dt)
        dt[n++] = *g->p++;
    dt[n] = '\0';
    glow_dtype d;
    if (!glow_dtype_from_name(dt, &d))
        return gp_fail(g, "unknown dtype");
    if (!gp_lit(g, "["))
        return gp_fail(g, "expected [");
    int64_t dims[GLOW_MAX_DIMS];
    int rank = 0;
    gp_ws(g);
    while (*g->p != ']') {
        if (rank >= GLOW_MAX_DIMS)
            return gp_fail(g, "too many dims");
        dims[rank++] = strtoll(g->p, (char **)&g->p, 10);
        gp_lit(g, ",");
        gp_ws(g);
    }
    g->p++;
    *t = glow_type_make(d, rank, dims);
    /* Quantized kinds carry ":scale:offset", as the printer writes them. */
    if (glow_dtype_is_quantized(d) && *g->p == ':') {
        t->scale = strtof(g->p + 1, (char **)&g->p);
        if (*g->p != ':')
            return gp_fail(g, "expected :offset");
        t->offset = (int32_t)strtol(g->p + 1, (char **)&g->p, 10);
    }
    return true;
}

/* [v, v, ...] as doubles (nan, inf, true, false accepted). */
static int gp_values(gp *g, double *v, int max)
{
    int n = 0;
    if (!gp_lit(g, "["))
        return -1;
    for (;;) {
        gp_ws(g);
        if (*g->p == ']') {
            g->p++;
            return n;
        }
        double x;
        if (!strncmp(g->p, "true", 4)) {
            x = 1;
            g->p += 4;
        } else if (!strncmp(g->p, "false", 5)) {
            x = 0;
            g->p += 5;
        } else {
            char *end;
            x = strtod(g->p, &end);
            if (end == g->p)
                return gp_fail(g, "bad number"), -1;
            g->p = end;
        }
        if (n < max)
            v[n++] = x;
        gp_lit(g, ",");
    }
}

static glow_node *gp_lookup(gp *g, const char *name)
{
    glow_node *n = glow_strmap_get(&g->names, name);
    if (!n)
        gp_fail(g, "unknown name");
    return n;
}

static void gp_define(gp *g, const char *name, glow_node *n)
{
    glow_strmap_put(&g->names, glow_arena_strdup(&g->m->arena, name), n);
}

static bool gp_storage(gp *g)
{
    char name[256];
    if (!gp_ref(g, name, sizeof name, NULL) || !gp_lit(g, "="))
        return gp_fail(g, "expected %name =");
    glow_type t;
    if (gp_lit(g, "Placeholder")) {
        bool in = gp_lit(g, "input");
        if (!in && !gp_lit(g, "output"))
            return gp_fail(g, "expected input or output");
        if (!gp_lit(g, ":") || !gp_type(g, &t))
            return false;
        gp_define(g, name, glow_placeholder_create(g->m, name, &t, in));
        return true;
    }
    if (!gp_lit(g, "Constant"))
        return gp_fail(g, "expected Placeholder or Constant");
    static double vals[4096];
    gp_ws(g);
    int nv = *g->p == '[' ? gp_values(g, vals, 4096) : 0;
    if (nv < 0 || !gp_lit(g, ":") || !gp_type(g, &t))
        return gp_fail(g, "bad constant");
    glow_node *c = glow_constant_create(g->m, name, &t, NULL);
    int64_t numel = glow_type_numel(&t);
    for (int64_t i = 0; i < numel; i++) {
        double v = nv ? vals[i % nv] : (double)(i % 4) + 0.5 - (double)(i % 3);
        glow_store_f64(t.dtype, c->payload.data, (size_t)i, v);
    }
    gp_define(g, name, c);
    return true;
}

static bool gp_attr(gp *g, glow_attr *a)
{
    gp_ws(g);
    char key[64];
    size_t n = 0;
    while ((isalnum((unsigned char)*g->p) || *g->p == '_') && n + 1 < sizeof key)
        key[n++] = *g->p++;
    key[n] = '\0';
    if (!glow_attr_from_name(key, &a->id) || !gp_lit(g, "="))
        return gp_fail(g, "unknown attribute");
    gp_ws(g);
    static double vals[64];
    switch (glow_attr_kind_of(a->id)) {
    case AK_INT:
        a->v.i = strtoll(g->p, (char **)&g->p, 10);
        return true;
    case AK_FLOAT:
        a->v.f = strtod(g->p, (char **)&g->p);
        return true;
    case AK_INTS:
    case AK_FLOATS: {
        int cnt = gp_values(g, vals, 64);
        if (cnt < 0)
            return gp_fail(g, "bad list");
        a->n = (uint32_t)cnt;
        if (glow_attr_kind_of(a->id) == AK_INTS) {
            int64_t *v = GLOW_NEW_ARRAY(&g->m->arena, int64_t, cnt + 1);
            for (int i = 0; i < cnt; i++)
                v[i] = (int64_t)vals[i];
            a->v.ints = v;
        } else {
            float *v = GLOW_NEW_ARRAY(&g->m->arena, float, cnt + 1);
            for (int i = 0; i < cnt; i++)
                v[i] = (float)vals[i];
            a->v.floats = v;
        }
        return true;
    }
    case AK_STR: {
        if (*g->p++ != '"')
            return gp_fail(g, "expected string");
        const char *s = g->p;
        while (*g->p && *g->p != '"')
            g->p++;
        a->v.s = glow_arena_strndup(&g->m->arena, s, (size_t)(g->p - s));
        g->p++;
        return true;
    }
    }
    return false;
}

static bool gp_node(gp *g, glow_diag *d)
{
    char name[256] = "";
    gp_ws(g);
    if (*g->p == '%' && (!gp_ref(g, name, sizeof name, NULL) || !gp_lit(g, "=")))
        return gp_fail(g, "expected %name =");
    gp_ws(g);
    char kname[64];
    size_t n = 0;
    while (isalnum((unsigned char)*g->p) && n + 1 < sizeof kname)
        kname[n++] = *g->p++;
    kname[n] = '\0';
    int kind = -1;
    for (int k = 0; k < NK_COUNT; k++)
        if (!strcmp(glow_node_kind_name((glow_node_kind)k), kname))
            kind = k;
    if (kind < 0)
        return gp_fail(g, "unknown node kind");
    glow_value ins[64];
    int nin = 0;
    if (!gp_lit(g, "("))
        return gp_fail(g, "expected (");
    while (!gp_lit(g, ")")) {
        char ref[256];
        uint32_t res;
        if (nin >= 64 || !gp_ref(g, ref, sizeof ref, &res))
            return false;
        glow_node *in = gp_lookup(g, ref);
        if (!in)
            return false;
        ins[nin++] = glow_val(in, res);
        gp_lit(g, ",");
    }
    glow_attr attrs[16];
    int nattr = 0;
    if (gp_lit(g, "{")) {
        while (!gp_lit(g, "}")) {
            if (nattr >= 16 || !gp_attr(g, &attrs[nattr++]))
                return false;
            gp_lit(g, ",");
        }
    }
    glow_type types[4];
    int ntypes = 0;
    if (gp_lit(g, ":")) {
        do {
            if (ntypes >= 4 || !gp_type(g, &types[ntypes++]))
                return false;
        } while (gp_lit(g, ","));
    }
    if (kind == NK_SAVE) {
        if (nin != 2)
            return gp_fail(g, "Save takes two operands");
        glow_save_create(g->f, name, ins[0], ins[1].node);
        return true;
    }
    glow_node *node = glow_build(g->f, (glow_node_kind)kind, name, ins, nin, attrs, nattr,
                                 ntypes ? types : NULL, ntypes, d);
    if (!node) {
        snprintf(g->err, sizeof g->err, "line %d: %.400s", g->line, d->msg);
        return false;
    }
    gp_define(g, name, node);
    return true;
}

/* Parses `text` into a new module (NULL with g->err set on failure). */
static glow_module *gp_parse(gp *g, const char *text)
{
    memset(g, 0, sizeof *g);
    g->m = glow_module_create();
    glow_diag d = { 0 };
    enum { TOP, STORAGE, FUNCTION } where = TOP;
    const char *s = text;
    char line[4096];
    bool ok = true;
    while (ok && *s) {
        size_t len = strcspn(s, "\n");
        snprintf(line, sizeof line, "%.*s", (int)len, s);
        s += len + (s[len] == '\n');
        g->line++;
        g->p = line;
        gp_ws(g);
        if (!*g->p || *g->p == '#')
            continue;
        if (where == TOP && gp_lit(g, "module {")) {
            where = STORAGE;
        } else if (where == TOP && gp_lit(g, "function ")) {
            char fname[128];
            if (sscanf(g->p, "%127s", fname) != 1)
                ok = gp_fail(g, "function name");
            else
                g->f = glow_function_create(g->m, fname);
            where = FUNCTION;
        } else if (where != TOP && gp_lit(g, "}")) {
            where = TOP;
        } else if (where == STORAGE) {
            ok = gp_storage(g);
        } else if (where == FUNCTION) {
            ok = gp_node(g, &d);
        } else {
            ok = gp_fail(g, "unexpected line");
        }
    }
    glow_strmap_free(&g->names);
    if (!ok) {
        glow_module_destroy(g->m);
        return NULL;
    }
    return g->m;
}

#endif
