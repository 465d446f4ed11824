// conv_plan.h - The direct convolution's tile width (conv_tmpl.h): plain C shared by the kernel
// and the cpu backend (src/backend/cpu/select.c), which passes the width, the last tile's and
// the kernel's form as constants so that the layer's sizes can be run-time values
// (docs/cpu-backend.md, "Sizes at run time") without every tile width being compiled in.
#ifndef GK_CONV_PLAN_H
#define GK_CONV_PLAN_H

#include <stdbool.h>
#include <stddef.h>

/* The kernel's forms (its `form` argument; 0: it derives the form from the shape). */
enum {
    GK_CONV_TILED = 1, /* tiles of pixels of the output rows, gathered or interior */
    GK_CONV_1X1,       /* an unpadded 1x1 convolution, strided: a 1x1 tile per row segment */
    GK_CONV_FLAT       /* an unpadded stride-1 1x1: one GEMM over the flattened plane */
};

/* The form of a convolution of that shape: an unpadded 1x1 convolution has every tap inside
 * the input (checked: an end pad could still add pixels past it); without stride, and with
 * rows as wide as the input's, it is a GEMM over the flattened pixels. Written with & (no
 * branches): one value, which the inliner folds while it copies the kernel into a call site
 * with constant shapes. */
static inline int gk_conv_form(size_t ih, size_t iw, size_t oh, size_t ow, size_t kh,
                               size_t kw, size_t sh, size_t sw, size_t ph, size_t pw)
{
    bool is1x1 = (kh == 1) & (kw == 1) & (ph == 0) & (pw == 0) & ((oh - 1) * sh < ih) &
                 ((ow - 1) * sw < iw);
    bool flat = is1x1 & (sh == 1) & (sw == 1) & (ow == iw);
    return flat ? GK_CONV_FLAT : is1x1 ? GK_CONV_1X1 : GK_CONV_TILED;
}

/* The widest register tile at vector length V: 2 x 12 accumulators of 32 registers (AVX-512,
 * NEON), 2 x 6 of AVX2's 16. */
static inline size_t gk_conv_np_max(size_t V) { return V == 8 ? 6 : 12; }

/* Pixel columns (FMAs per weight vector and input channel) the tiles of a plane of P pixels
 * spend at width w: whole tiles, and the last one's pixels in a tile of w or, where `half` and
 * they fit, of np_max / 2. */
static inline size_t gk_conv_slots(size_t P, size_t w, bool half, size_t np_max)
{
    size_t r = P % w;
    return P / w * w + (r == 0 ? 0 : half && r <= np_max / 2 ? np_max / 2 : w);
}

/* The tile width for a plane of P pixels (the output plane of one image, flattened; tiles do
 * not span images), np_max the widest register tile. The FMAs of a tile's dead pixels are the
 * waste: 49 pixels (a 7x7 plane) in tiles of 12 ran as 5 x 12 = 60 columns in the 1x1 tile
 * (82%), as 4 x 12 + 6 in gathered tiles (91%). The plane is split into t = ceil(P / np_max)
 * tiles as evenly as widths allow (ceil(P / t): 49 = 4 x 10 + 9), or into t + 1 where that
 * wastes less (the 1x1 tile has no half-width tail: 196 = 17 x 12 + 4 runs as 204 columns at
 * 12, as 198 at 11); ties keep the wider tiles (fewer weight and broadcast loads per FMA).
 * Large planes keep np_max with a half-width tail (3136 = 261 x 12 + 4). Never below
 * np_max / 2, which keeps that many FMA chains in flight as the half-width tail does.
 * Selects only, no branch or loop: the inliner folds it while it copies the kernel into a call
 * site with constant shapes (a branch would leave a phi it does not see through). */
static inline size_t gk_conv_width(size_t P, bool half, size_t np_max)
{
    size_t t = (P + np_max - 1) / np_max, lo = np_max / 2;
    t = t < 1 ? 1 : t;
    size_t wa = (P + t - 1) / t, wb = (P + t) / (t + 1);
    wa = wa < lo ? lo : wa;
    wb = wb < lo ? lo : wb;
    return gk_conv_slots(P, wb, half, np_max) < gk_conv_slots(P, wa, half, np_max) ? wb : wa;
}

/* What the cpu backend passes the kernel for a shape (its form, npw and tail arguments): the
 * values the kernel derives itself when given 0, 0, 0. */
typedef struct gk_conv_tiling {
    int form;
    size_t npw, tail; /* tile width, pixels of the plane's last tile (0: whole) */
} gk_conv_tiling;
static inline gk_conv_tiling gk_conv_tiling_of(size_t ih, size_t iw, size_t oh, size_t ow,
                                               size_t kh, size_t kw, size_t sh, size_t sw,
                                               size_t ph, size_t pw, size_t V)
{
    int form = gk_conv_form(ih, iw, oh, ow, kh, kw, sh, sw, ph, pw);
    size_t plane = oh * ow, npw = gk_conv_width(plane, form == GK_CONV_TILED, gk_conv_np_max(V));
    return (gk_conv_tiling){ form, npw, plane % npw };
}

#endif
