// onnx_ops_grad.c - Gradient (ai.onnx.preview.training): reverse-mode differentiation, at
// import, of the graph already built for `y`, with respect to the named inputs `xs`.
//
// The seed is ones of y's shape; adjoints flow back through the function's nodes in reverse
// order and are summed where a value has several users. Only elementwise arithmetic on
// identically shaped operands (Add, Sub, Mul, Div, Neg) is differentiated; any other node on
// a path from an x to y is reported as unsupported by name. An x that y does not depend on
// gets zeros.
#include <stdlib.h>

#include "onnx/onnx_internal.h"

typedef struct {
    onnx_ctx *cx;
    const Onnx__NodeProto *np;
    glow_value *adj;   /* by node id, result 0 */
    bool *has;
    uint32_t n;
} grad;

static glow_status binary(grad *g, glow_node_kind k, glow_value a, glow_value b, glow_value *out)
{
    glow_value ins[2] = { a, b };
    return onnx_build_elemwise(g->cx, g->np, k, ins, 2, NULL, 0, out);
}

static glow_status neg(grad *g, glow_value a, glow_value *out)
{
    return onnx_build(g->cx, g->np, NK_NEG, &a, 1, NULL, 0, NULL, 0, out);
}

/* adj[v] += d */
static glow_status accumulate(grad *g, glow_value v, glow_value d)
{
    uint32_t id = v.node->id;
    if (id >= g->n || v.res != 0)
        return onnx_unsupported(g->cx, g->np, "cannot differentiate through result %u of '%s'",
                                v.res, v.node->name);
    if (!g->has[id]) {
        g->adj[id] = d;
        g->has[id] = true;
        return GLOW_OK;
    }
    return binary(g, NK_ADD, g->adj[id], d, &g->adj[id]);
}

/* Passes the adjoint `d` of node k on to k's operands. */
static glow_status backprop(grad *g, glow_node *k, glow_value d)
{
    glow_value a = k->nin > 0 ? k->ins[0] : d, b = k->nin > 1 ? k->ins[1] : d, t, u;
    switch (k->kind) {
    case NK_ADD:
        GLOW_TRY(accumulate(g, a, d));
        return accumulate(g, b, d);
    case NK_SUB:
        GLOW_TRY(accumulate(g, a, d));
        GLOW_TRY(neg(g, d, &t));
        return accumulate(g, b, t);
    case NK_MUL:
        GLOW_TRY(binary(g, NK_MUL, d, b, &t));
        GLOW_TRY(accumulate(g, a, t));
        GLOW_TRY(binary(g, NK_MUL, d, a, &t));
        return accumulate(g, b, t);
    case NK_DIV: /* d(a/b) = d/b da - d*a/b^2 db */
        GLOW_TRY(binary(g, NK_DIV, d, b, &t));
        GLOW_TRY(accumulate(g, a, t));
        GLOW_TRY(binary(g, NK_DIV, t, b, &u));
        GLOW_TRY(binary(g, NK_MUL, u, a, &t));
        GLOW_TRY(neg(g, t, &u));
        return accumulate(g, b, u);
    case NK_NEG:
        GLOW_TRY(neg(g, d, &t));
        return accumulate(g, a, t);
    case NK_PLACEHOLDER:
    case NK_CONSTANT:
        return GLOW_OK;
    default:
        return onnx_unsupported(g->cx, g->np, "cannot differentiate through %s '%s' (only "
                                "Add, Sub, Mul, Div and Neg)", glow_node_kind_name(k->kind),
                                k->name);
    }
}

/* A constant of v's type filled with `value`. */
static glow_status filled_like(grad *g, glow_value v, double value, glow_value *out)
{
    const glow_type *t = glow_value_type(v);
    glow_value s = onnx_scalar(g->cx, glow_arena_printf(g->cx->arena, "%s/fill",
                                                      onnx_node_name(g->np)), t->dtype, value);
    return onnx_broadcast_to(g->cx, g->np, s, t->rank, t->dims, out);
}

glow_status load_gradient(onnx_ctx *cx, const Onnx__NodeProto *np, int opset, glow_node_kind kind)
{
    const Onnx__AttributeProto *xs = onnx_attr(np, "xs");
    const char *yname = onnx_attr_str(cx, np, "y", NULL);
    if (!xs || xs->n_strings == 0 || !yname)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "needs the attributes 'xs' and 'y'");
    if ((size_t)onnx_num_outputs(np) > xs->n_strings)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "%d outputs for %zu inputs in 'xs'",
                         onnx_num_outputs(np), xs->n_strings);
    const onnx_binding *yb = glow_strmap_get(&cx->values, yname);
    if (!yb || yb->poisoned)
        return onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'y' names unknown value '%s'", yname);
    if (!glow_dtype_is_float(glow_value_type(yb->v)->dtype))
        return onnx_unsupported(cx, np, "gradient of a non-float value");

    grad g = { .cx = cx, .np = np, .n = cx->m->next_id };
    g.adj = glow_xcalloc(g.n, sizeof(*g.adj));
    g.has = glow_xcalloc(g.n, sizeof(*g.has));
    glow_node *last = cx->f->nodes.last; /* nodes built from here on are adjoints */
    glow_value seed;
    glow_status s = filled_like(&g, yb->v, 1.0, &seed);
    if (s == GLOW_OK)
        s = accumulate(&g, yb->v, seed);
    for (glow_node *k = last; k && s == GLOW_OK; k = k->prev) {
        if (k->id < g.n && g.has[k->id])
            s = backprop(&g, k, g.adj[k->id]);
    }
    for (size_t i = 0; i < xs->n_strings && s == GLOW_OK; i++) {
        if (!onnx_has_output(np, (int)i))
            continue;
        char *xname = glow_arena_strndup(cx->arena, (const char *)xs->strings[i].data,
                                         xs->strings[i].len);
        const onnx_binding *xb = glow_strmap_get(&cx->values, xname);
        if (!xb || xb->poisoned) {
            s = onnx_fail(cx, np, GLOW_ERR_BAD_ATTR, "'xs' names unknown value '%s'", xname);
            break;
        }
        glow_value dx;
        uint32_t id = xb->v.node->id;
        if (id < g.n && g.has[id] && xb->v.res == 0)
            dx = g.adj[id];
        else
            s = filled_like(&g, xb->v, 0.0, &dx);
        if (s == GLOW_OK)
            s = onnx_set_output(cx, np, (int)i, dx);
    }
    free(g.adj);
    free(g.has);
    return s;
}
