// gemm_avx512.c - f32 GEMM over packed B (12 x 32 register tile) with AVX-512 (gemm_tmpl.h).
#define GK_VLEN 16
#include "../simd.h"
#include "../blocked.h"
#include "gemm_tmpl.h"
