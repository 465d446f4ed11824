// qeltwise_avx2.c - Quantized 8-bit elementwise kernels with AVX2 (qeltwise_tmpl.h).
#define GK_VLEN 8
#include "../kernels.h"
#include "../qsimd.h"
#include "qeltwise_tmpl.h"
