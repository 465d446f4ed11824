// conv_neon.c - Direct and depthwise f32 convolution on NCHWc4 with NEON (conv_tmpl.h), for
// aarch64 bundles only (kernels/cross.cmake; not part of the x86-64 library).
#define GK_VLEN 4
#include "../simd.h"
#include "../blocked.h"
#include "conv_tmpl.h"
