// index_math.h - Index arithmetic of the data-movement ops, one coordinate at a time: where
// Pad's modes read from. Included by the move kernels (kernels/pad) and by the reference
// evaluator (src/eval/eval_move.c), so both map every coordinate the same way.
#ifndef GK_INDEX_MATH_H
#define GK_INDEX_MATH_H

#include <stdint.h>

#include "gk_ops.h"

/* The source coordinate of coordinate i (possibly outside [0, size)) of a dim of `size`
 * under Pad mode `mode` (gk_pad_mode); -1 means "use the constant". */
static inline int64_t gk_pad_index(int mode, int64_t i, int64_t size)
{
    if (i >= 0 && i < size)
        return i;
    switch (mode) {
    case GK_PAD_REFLECT: { /* mirror without repeating the edge, periodic for large pads */
        if (size == 1)
            return 0;
        int64_t period = 2 * (size - 1), r = i % period;
        if (r < 0)
            r += period;
        return r < size ? r : period - r;
    }
    case GK_PAD_EDGE: return i < 0 ? 0 : size - 1;
    case GK_PAD_WRAP: { int64_t r = i % size; return r < 0 ? r + size : r; }
    default: return -1;
    }
}

#endif
