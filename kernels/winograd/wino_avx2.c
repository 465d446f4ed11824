// wino_avx2.c - Winograd F(4x4,3x3) f32 convolution on NCHWc8 with AVX2 + FMA (wino_tmpl.h).
#define GK_VLEN 8
#include "../simd.h"
#include "../blocked.h"
#include "wino_tmpl.h"
