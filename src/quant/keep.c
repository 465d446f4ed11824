// keep.c - Which nodes lowering keeps whole before the quantization point.
#include "quant/quant.h"

bool glow_quant_keeps_node(const glow_node *n)
{
    return n->kind == NK_FULLY_CONNECTED || (n->kind == NK_CLIP && n->outs[0].dtype == GLOW_F32);
}
