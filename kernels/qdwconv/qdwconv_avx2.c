// qdwconv_avx2.c - Quantized 8-bit NHWC depthwise convolution with AVX2 (qdwconv_tmpl.h).
#define GK_VLEN 8
#include "../kernels.h"
#include "../qsimd.h"
#include "qdwconv_tmpl.h"
