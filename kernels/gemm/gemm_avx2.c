// gemm_avx2.c - f32 GEMM over packed B (6 x 16 register tile) with AVX2 + FMA (gemm_tmpl.h).
#define GK_VLEN 8
#include "../simd.h"
#include "../blocked.h"
#include "gemm_tmpl.h"
