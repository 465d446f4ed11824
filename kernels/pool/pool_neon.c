// pool_neon.c - Max and average pooling on NCHWc4 with NEON (pool_tmpl.h), for aarch64 bundles
// only (kernels/cross.cmake).
#define GK_VLEN 4
#include "../simd.h"
#include "../blocked.h"
#include "pool_tmpl.h"
