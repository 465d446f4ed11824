// gemm_neon.c - f32 GEMM over packed B (12 x 8 register tile) with NEON (gemm_tmpl.h), for
// aarch64 bundles only (kernels/cross.cmake).
#define GK_VLEN 4
#include "../simd.h"
#include "../blocked.h"
#include "gemm_tmpl.h"
