// qpool_avx512.c - Quantized 8-bit NHWC max and average pooling with AVX-512 (qpool_tmpl.h).
#define GK_VLEN 16
#include "../kernels.h"
#include "../qsimd.h"
#include "qpool_tmpl.h"
