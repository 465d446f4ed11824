// wino_avx512.c - Winograd F(4x4,3x3) f32 convolution on NCHWc16 with AVX-512 (wino_tmpl.h).
#define GK_VLEN 16
#include "../simd.h"
#include "../blocked.h"
#include "wino_tmpl.h"
