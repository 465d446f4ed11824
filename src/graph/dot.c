// dot.c - Graphviz dump of a function: storage as ellipses, operations as boxes, edges from
// each operand's node to its user (labelled with the result index when it is not 0).
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

/* Writes `s` inside a DOT double-quoted string. */
static void put_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20 || c == 0x7f)
            fputc(' ', out);
        else if (c < 0x80)
            fputc(c, out);
        else if (glow_utf8_len(s))   /* Graphviz wants UTF-8: stray bytes show as \xNN */
            s += fwrite(s, 1, glow_utf8_len(s), out) - 1;
        else
            fprintf(out, "\\\\x%02x", c);
    }
}

static void put_node(FILE *out, const glow_node *n)
{
    char buf[160];
    bool storage = glow_node_kind_flags(n->kind) & NF_STORAGE;
    fprintf(out, "  n%u [shape=%s, label=\"", n->id, storage ? "ellipse" : "box");
    put_escaped(out, glow_node_kind_name(n->kind));
    if (n->kind == NK_PLACEHOLDER)
        fputs(n->is_input ? " input" : " output", out);
    fputs("\\n", out);
    if (n->name[0])
        put_escaped(out, n->name);
    else
        fprintf(out, "%%%u", n->id);   /* unnamed nodes show their id, as in the text form */
    for (uint32_t i = 0; i < n->nout; i++) {
        fputs("\\n", out);
        put_escaped(out, glow_type_str(&n->outs[i], buf, sizeof(buf)));
    }
    fputs("\"];\n", out);
}

void glow_function_dump_dot(FILE *out, const glow_function *f)
{
    fputs("digraph \"", out);
    put_escaped(out, f->name);
    fputs("\" {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n", out);

    /* Storage used by f, each once; ids are below the module's next_id. */
    uint32_t nids = f->module->next_id;
    unsigned char *seen = glow_xcalloc(nids ? nids : 1, 1);
    for (const glow_node *n = f->nodes.first; n; n = n->next) {
        for (uint32_t i = 0; i < n->nin; i++) {
            const glow_node *s = n->ins[i].node;
            if (!s || !(glow_node_kind_flags(s->kind) & NF_STORAGE) || s->id >= nids ||
                seen[s->id])
                continue;
            seen[s->id] = 1;
            put_node(out, s);
        }
    }
    free(seen);

    for (const glow_node *n = f->nodes.first; n; n = n->next)
        put_node(out, n);
    for (const glow_node *n = f->nodes.first; n; n = n->next) {
        for (uint32_t i = 0; i < n->nin; i++) {
            glow_value v = n->ins[i];
            if (!v.node)
                continue;
            fprintf(out, "  n%u -> n%u", v.node->id, n->id);
            if (v.res > 0)
                fprintf(out, " [label=\"%u\"]", v.res);
            fputs(";\n", out);
        }
    }
    fputs("}\n", out);
}
