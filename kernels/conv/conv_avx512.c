// conv_avx512.c - Direct, depthwise and fused pointwise-depthwise f32 convolution on NCHWc16 with
// AVX-512 (conv_tmpl.h, pwdw_tmpl.h).
#define GK_VLEN 16
#include "../simd.h"
#include "../blocked.h"
#include "conv_tmpl.h"
#include "pwdw_tmpl.h"
