// pool_avx2.c - Max and average pooling on NCHWc8 with AVX2 (pool_tmpl.h).
#define GK_VLEN 8
#include "../simd.h"
#include "../blocked.h"
#include "pool_tmpl.h"
