// print.c - Deterministic text form of modules and functions (golden tests compare it).
//
// Names: a node prints as %name when its name is non-empty, uses only [A-Za-z0-9_./:#-], is not
// all digits and does not end in ".<digits>"; an empty name prints as %<id> (the module-unique
// id); any other name is quoted, %"like this", with \" and \\ escaped. These rules keep every
// operand unambiguous: result r > 0 of a node prints as %name.r (%topk.1, %"x.1".1, %7.1).
// Storage is printed first, in id order, then each function in order. Attributes print in
// attrs.def order; floats in the shortest form that reads back as the same value; constants
// with at most 8 elements show their values.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

#define SMALL_CONSTANT 8

static bool bare_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '/' || c == ':' || c == '-' || c == '#';
}

static bool name_is_bare(const char *s)
{
    size_t len = strlen(s);
    bool all_digits = true;
    for (size_t i = 0; i < len; i++) {
        if (!bare_char(s[i]))
            return false;
        if (s[i] < '0' || s[i] > '9')
            all_digits = false;
    }
    if (all_digits)
        return false;
    /* A trailing ".<digits>" would read as a result index. */
    size_t i = len;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        i--;
    return !(i < len && i > 0 && s[i - 1] == '.');
}

static void print_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\x%02x", c);
        else if (c < 0x80)
            fputc(c, out);
        else if (glow_utf8_len(s))   /* valid UTF-8 is kept; stray bytes show as \xNN */
            s += fwrite(s, 1, glow_utf8_len(s), out) - 1;
        else
            fprintf(out, "\\x%02x", c);
    }
    fputc('"', out);
}

static void print_name(FILE *out, const glow_node *n)
{
    fputc('%', out);
    if (!n) {
        fputs("<null>", out);
        return;
    }
    if (!n->name || !n->name[0])
        fprintf(out, "%u", n->id);
    else if (name_is_bare(n->name))
        fputs(n->name, out);
    else
        print_quoted(out, n->name);
}

static void print_value(FILE *out, glow_value v)
{
    print_name(out, v.node);
    if (v.node && v.res > 0)
        fprintf(out, ".%u", v.res);
}

/* Shortest %g form that reads back as `v`; values exactly representable in f32 (most
 * attributes come from ONNX floats) use f32's shortest form: 0.1f prints as 0.1. */
static void print_double(FILE *out, double v)
{
    if (isnan(v)) {
        fputs("nan", out);
        return;
    }
    char num[40];
    bool is_f32 = isinf(v) || (double)(float)v == v;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(num, sizeof(num), "%.*g", prec, v);
        double back = strtod(num, NULL);
        if (is_f32 ? (float)back == (float)v : back == v)
            break;
    }
    fputs(num, out);
}

void glow_attr_print(FILE *out, const glow_attr *a)
{
    fprintf(out, "%s=", glow_attr_name(a->id));
    switch (glow_attr_kind_of(a->id)) {
    case AK_INT:
        fprintf(out, "%lld", (long long)a->v.i);
        break;
    case AK_FLOAT:
        print_double(out, a->v.f);
        break;
    case AK_INTS:
        fputc('[', out);
        for (uint32_t i = 0; i < a->n; i++)
            fprintf(out, i ? ", %lld" : "%lld", (long long)a->v.ints[i]);
        fputc(']', out);
        break;
    case AK_FLOATS:
        fputc('[', out);
        for (uint32_t i = 0; i < a->n; i++) {
            if (i)
                fputs(", ", out);
            print_double(out, a->v.floats[i]);
        }
        fputc(']', out);
        break;
    case AK_STR:
        print_quoted(out, a->v.s ? a->v.s : "");
        break;
    }
}

static void print_attrs(FILE *out, const glow_node *n)
{
    if (!n->nattr)
        return;
    /* attrs.def order, whatever order they were set in. */
    fputs(" {", out);
    bool first = true;
    for (int id = 0; id < GA_COUNT; id++) {
        for (uint32_t i = 0; i < n->nattr; i++) {
            if (n->attrs[i].id != (glow_attr_id)id)
                continue;
            if (!first)
                fputs(", ", out);
            first = false;
            glow_attr_print(out, &n->attrs[i]);
            break;
        }
    }
    fputc('}', out);
}

static void print_types(FILE *out, const glow_node *n)
{
    char buf[160];
    fputs(" :", out);
    for (uint32_t i = 0; i < n->nout; i++)
        fprintf(out, "%s %s", i ? "," : "", glow_type_str(&n->outs[i], buf, sizeof(buf)));
}

static void print_storage(FILE *out, const glow_node *n)
{
    fputs("  ", out);
    print_name(out, n);
    if (n->kind == NK_CONSTANT) {
        fputs(" = Constant", out);
        int64_t numel = glow_type_numel(&n->outs[0]);
        if (numel >= 0 && numel <= SMALL_CONSTANT && n->payload.data) {
            fputc(' ', out);
            glow_tensor_print(out, &n->payload, SMALL_CONSTANT);
        }
    } else {
        fprintf(out, " = Placeholder %s", n->is_input ? "input" : "output");
    }
    print_types(out, n);
    fputc('\n', out);
}

static void print_node(FILE *out, const glow_node *n)
{
    fputs("  ", out);
    if (n->nout > 0) {
        print_name(out, n);
        fputs(" = ", out);
    }
    fprintf(out, "%s(", glow_node_kind_name(n->kind));
    for (uint32_t i = 0; i < n->nin; i++) {
        if (i)
            fputs(", ", out);
        print_value(out, n->ins[i]);
    }
    fputc(')', out);
    print_attrs(out, n);
    if (n->nout > 0)
        print_types(out, n);
    fputc('\n', out);
}

void glow_module_print(FILE *out, const glow_module *m)
{
    fputs("module {\n", out);
    /* Merge the two storage lists by id, i.e. creation order. */
    const glow_node *c = m->constants.first, *p = m->placeholders.first;
    while (c || p) {
        if (c && (!p || c->id < p->id)) {
            print_storage(out, c);
            c = c->next;
        } else {
            print_storage(out, p);
            p = p->next;
        }
    }
    fputs("}\n", out);
    for (const glow_function *f = m->functions; f; f = f->next)
        glow_function_print(out, f);
}

void glow_function_print(FILE *out, const glow_function *f)
{
    fputs("function ", out);
    if (f->name[0] && name_is_bare(f->name))
        fputs(f->name, out);
    else
        print_quoted(out, f->name);
    fputs(" {\n", out);
    for (const glow_node *n = f->nodes.first; n; n = n->next)
        print_node(out, n);
    fputs("}\n", out);
}
