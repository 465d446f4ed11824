// pool_avx512.c - Max and average pooling on NCHWc16 with AVX-512 (pool_tmpl.h).
#define GK_VLEN 16
#include "../simd.h"
#include "../blocked.h"
#include "pool_tmpl.h"
