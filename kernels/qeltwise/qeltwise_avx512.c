// qeltwise_avx512.c - Quantized 8-bit elementwise kernels with AVX-512 (qeltwise_tmpl.h).
#define GK_VLEN 16
#include "../kernels.h"
#include "../qsimd.h"
#include "qeltwise_tmpl.h"
