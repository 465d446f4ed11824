// layout_avx512.c - NCHW <-> NCHWc16 conversions (layout_tmpl.h), built with AVX-512 flags.
#define GK_VLEN 16
#include "../simd.h"
#include "../blocked.h"
#include "layout_tmpl.h"
