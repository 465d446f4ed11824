// qdwconv_avx512.c - Quantized 8-bit NHWC depthwise convolution with AVX-512 (qdwconv_tmpl.h).
#define GK_VLEN 16
#include "../kernels.h"
#include "../qsimd.h"
#include "qdwconv_tmpl.h"
