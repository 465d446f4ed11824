// layout_avx2.c - NCHW <-> NCHWc8 conversions (layout_tmpl.h), built with AVX2 flags.
#define GK_VLEN 8
#include "../simd.h"
#include "../blocked.h"
#include "layout_tmpl.h"
