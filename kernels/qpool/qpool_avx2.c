// qpool_avx2.c - Quantized 8-bit NHWC max and average pooling with AVX2 (qpool_tmpl.h).
#define GK_VLEN 8
#include "../kernels.h"
#include "../qsimd.h"
#include "qpool_tmpl.h"
