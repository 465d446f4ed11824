// layout_neon.c - NCHW <-> NCHWc4 conversions (layout_tmpl.h), for aarch64 bundles only
// (kernels/cross.cmake).
#define GK_VLEN 4
#include "../simd.h"
#include "../blocked.h"
#include "layout_tmpl.h"
