// conv_avx2.c - Direct, depthwise and fused pointwise-depthwise f32 convolution on NCHWc8 with
// AVX2 + FMA (conv_tmpl.h, pwdw_tmpl.h).
#define GK_VLEN 8
#include "../simd.h"
#include "../blocked.h"
#include "conv_tmpl.h"
#include "pwdw_tmpl.h"
