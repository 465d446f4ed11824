// merge_reshape.c - Reshape(Reshape(x)) becomes one Reshape of x, and a Reshape used only by a
// unary elementwise op moves below it, so chains of Reshapes meet and merge.
// Requires: verified graph. Keeps: topological order; results bit-exact (Reshape moves no
// data, and unary elementwise ops do not care about shapes).
#include "opt/opt_internal.h"

static void merge(opt_cx *cx, glow_node *n)
{
    glow_node *inner = n->ins[0].node;
    opt_set_operand(n, 0, inner->ins[0]);
    cx->changes++;
}

/* u(Reshape(x)) -> Reshape(u(x)). */
static void sink(opt_cx *cx, glow_node *u)
{
    glow_node *r = u->ins[0].node;
    glow_value x = r->ins[0];
    glow_type t = *glow_value_type(x);
    glow_node *nu = opt_build(cx, u, u, NULL, u->kind, &x, 1, u->attrs, (int)u->nattr, NULL);
    if (!nu)
        return;
    if (!glow_type_same_shape(&nu->outs[0], &t) || nu->outs[0].dtype != u->outs[0].dtype) {
        opt_erase(nu);
        return;
    }
    glow_node *nr = opt_build(cx, u, r, NULL, NK_RESHAPE, &(glow_value){ nu, 0 }, 1, NULL, 0,
                              &u->outs[0]);
    if (!nr)
        return;
    opt_replace(cx, u, glow_val(nr, 0));
    if (r->nusers == 0)
        opt_erase(r);
}

void glow_pass_merge_reshape(opt_cx *cx)
{
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (n->nin != 1 || n->nout != 1)
            continue;
        glow_node *in = n->ins[0].node;
        if (n->kind == NK_RESHAPE && in->kind == NK_RESHAPE) {
            merge(cx, n);
        } else if (in->kind == NK_RESHAPE && opt_single_use(n->ins[0]) &&
                   opt_is_unary_elem(n->kind) && !glow_dtype_is_quantized(n->outs[0].dtype)) {
            sink(cx, n);
        }
    }
}
