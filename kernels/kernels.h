// kernels.h - The kernel library's prototypes, declared from the rows of kernels.def, with the
// helpers every kernel file shares (gk.h) and the op codes (gk_ops.h).
//
// The backend (src/backend/cpu/select.c) picks a kernel per instruction and calls it by name;
// what each kernel computes is said beside its row in kernels.def, the blocked layouts in
// blocked.h. No prototype is written by hand: a kernel file that defines
// gk_<op>_<dtype>_<isa> includes this header, so its definition is checked against its row.
#ifndef GK_KERNELS_H
#define GK_KERNELS_H

#include "gk.h"

#define KERNEL(op, dtype, isa, params) void gk_##op##_##dtype##_##isa params;
#include "kernels.def"
#undef KERNEL

#endif
