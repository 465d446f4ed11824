// quant.h - Profile-guided quantization (docs/quantization.md): the profile of a float graph
// (min, max and a histogram per node output, recorded on sample inputs), and the conversion of
// the graph to quantized nodes from it. The compile pipeline calls both at one point, after
// lowering with glow_quant_keeps_node (glow_compile_options.quant_hook), so the profile's keys
// name the nodes the quantizer sees.
#ifndef GLOW_QUANT_H
#define GLOW_QUANT_H

#include "graph/graph.h"

/* The nodes lowering keeps whole when the graph will be profiled or quantized: those the
 * quantizer converts as they are (FullyConnected; Clip, a clamp in the integer domain). */
bool glow_quant_keeps_node(const glow_node *n);

#endif
