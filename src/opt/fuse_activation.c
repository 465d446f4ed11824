// fuse_activation.c - Fuses Relu, Clip, LeakyRelu, Sigmoid and Tanh into the Conv,
// FullyConnected or MatMul producing their operand, when the backend's hook asks for it.
// Requires: verified graph. Keeps: topological order; results bit-exact (the evaluator applies
// the fused activation to each result element exactly as the separate node would).
//
// The fused form is the producer with fused_act (the activation's kind name) and fused_alpha
// / fused_beta (Clip: min / max; LeakyRelu: alpha). The producer must have no other user
// (they need the value before the activation) and no fused activation already. Without a
// hook (the interpreter) nothing changes.
#include "opt/opt_internal.h"

static bool fusable_act(glow_node_kind k)
{
    return k == NK_RELU || k == NK_CLIP || k == NK_LEAKY_RELU || k == NK_SIGMOID ||
           k == NK_TANH;
}

static void fuse(opt_cx *cx, glow_node *act)
{
    glow_node *p = act->ins[0].node;
    if ((p->kind != NK_CONV && p->kind != NK_FULLY_CONNECTED && p->kind != NK_MATMUL) ||
        p->nusers != 1 || p->nout != 1 || glow_node_attr(p, GA_FUSED_ACT) ||
        !glow_dtype_is_float(p->outs[0].dtype) || !glow_type_equal(&p->outs[0], &act->outs[0]))
        return;
    if (!cx->o->fuse_activation(p, act))
        return;
    glow_node *np = opt_build(cx, act, p, NULL, p->kind, p->ins, (int)p->nin, p->attrs,
                              (int)p->nattr, &p->outs[0]);
    if (!np)
        return;
    glow_node_set_str(np, GA_FUSED_ACT, glow_node_kind_name(act->kind));
    if (act->kind == NK_CLIP) {
        glow_node_set_float(np, GA_FUSED_ALPHA, glow_node_float(act, GA_MIN, 0));
        glow_node_set_float(np, GA_FUSED_BETA, glow_node_float(act, GA_MAX, 0));
    } else if (act->kind == NK_LEAKY_RELU) {
        glow_node_set_float(np, GA_FUSED_ALPHA, glow_node_float(act, GA_ALPHA, 0.01));
    }
    opt_replace(cx, act, glow_val(np, 0));
    if (p->nusers == 0)
        opt_erase(p);
}

void glow_pass_fuse_activation(opt_cx *cx)
{
    if (!cx->o->fuse_activation)
        return;
    GLOW_FOR_EACH_NODE(cx->f, n) {
        if (!opt_ok(cx))
            return;
        if (fusable_act(n->kind) && n->nout == 1)
            fuse(cx, n);
    }
}
