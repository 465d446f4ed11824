// pool_tmpl.h - Max and average pooling on the channel-blocked layout, one vector per output
// pixel (the block is the vector), written once for any vector length V (pool_avx512.c,
// pool_avx2.c, pool_neon.c). Work is split over (image, channel block, output row).
#include <math.h>

/* First and one-past-last tap index t in [0, k) with 0 <= o*s - p + t*d < size. */
GK_INLINE void tap_range(size_t o, size_t s, size_t p, size_t d, size_t k, size_t size,
                         size_t *t0, size_t *t1)
{
    ptrdiff_t base = (ptrdiff_t)(o * s) - (ptrdiff_t)p;
    size_t a = 0, b = k;
    while (a < b && base + (ptrdiff_t)(a * d) < 0)
        a++;
    while (b > a && base + (ptrdiff_t)((b - 1) * d) >= (ptrdiff_t)size)
        b--;
    *t0 = a;
    *t1 = b;
}

/* Max over the taps of output pixels [oa, ob) of one row, generic: any window, one pixel at a
 * time (rows wider than the column buffer below allows). */
GK_INLINE void maxpool_row_taps(float *orow, const float *ib, size_t iy0, size_t y0, size_t y1,
                                size_t oa, size_t ob, size_t iw, size_t kw, size_t sw, size_t pw,
                                size_t dh, size_t dw)
{
    const size_t V = GK_VLEN;
    for (size_t ox = oa; ox < ob; ox++) {
        size_t x0, x1;
        tap_range(ox, sw, pw, dw, kw, iw, &x0, &x1);
        size_t ix0 = ox * sw + x0 * dw - pw;
        gk_vec m = VSET1(-INFINITY);
        for (size_t y = y0; y < y1; y++) {
            const float *ip = ib + ((iy0 + (y - y0) * dh) * iw + ix0) * V;
            for (size_t x = x0; x < x1; x++)
                m = VMAX(m, VLOAD(ip + (x - x0) * dw * V));
        }
        VSTORE(orow + ox * V, m);
    }
}

/* Columns of one row segment the max pool keeps (vectors, 8 KiB with V = 16). */
#define POOL_COLS 128

/* Max pooling in two passes per output row segment: the max over the window's rows of every
 * input column the segment reads (columns outside the input are -inf), into a buffer in L1;
 * then the max over kw columns of that buffer for each output pixel: no bounds checks in
 * either loop, and with a 3x3 window 6 loads per pixel instead of 9. */
void GK_FN(maxpool_nchwc)(float *out, const float *in, size_t n, size_t cb, size_t ih,
                          size_t iw, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh,
                          size_t sw, size_t ph, size_t pw, size_t dh, size_t dw, int tid,
                          int nthreads)
{
    const size_t V = GK_VLEN;
    float cm[POOL_COLS * GK_VLEN];
    size_t span = (kw - 1) * dw + 1; /* columns one output pixel reads */
    size_t seg = span <= POOL_COLS ? (POOL_COLS - span) / sw + 1 : 0; /* pixels per segment */
    size_t total = n * cb * oh;
    size_t lo, hi;
    gk_share(total, tid, nthreads, &lo, &hi);
    for (size_t u = lo; u < hi; u++) {
        size_t oy = u % oh, blk = u / oh;
        const float *ib = in + blk * ih * iw * V;
        float *orow = out + u * ow * V;
        size_t y0, y1;
        tap_range(oy, sh, ph, dh, kh, ih, &y0, &y1);
        size_t iy0 = oy * sh + y0 * dh - ph;
        if (seg == 0 || y0 == y1) {
            maxpool_row_taps(orow, ib, iy0, y0, y1, 0, ow, iw, kw, sw, pw, dh, dw);
            continue;
        }
        for (size_t oa = 0; oa < ow; oa += seg) {
            size_t ob = oa + seg < ow ? oa + seg : ow;
            /* Buffer column j is input column c0 + j. */
            ptrdiff_t c0 = (ptrdiff_t)(oa * sw) - (ptrdiff_t)pw;
            size_t ncol = (ob - 1 - oa) * sw + span;
            size_t ja = c0 < 0 ? (size_t)-c0 : 0, jb = ncol;
            if (c0 + (ptrdiff_t)jb > (ptrdiff_t)iw)
                jb = (ptrdiff_t)iw > c0 ? (size_t)((ptrdiff_t)iw - c0) : 0;
            if (ja > jb)
                ja = jb;
            for (size_t j = 0; j < ja; j++)
                VSTORE(cm + j * V, VSET1(-INFINITY));
            for (size_t j = jb; j < ncol; j++)
                VSTORE(cm + j * V, VSET1(-INFINITY));
            const float *r0 = ib + (iy0 * iw + (size_t)(c0 + (ptrdiff_t)ja)) * V;
            for (size_t j = ja; j < jb; j++)
                VSTORE(cm + j * V, VLOAD(r0 + (j - ja) * V));
            for (size_t y = y0 + 1; y < y1; y++) {
                const float *ry = r0 + (y - y0) * dh * iw * V;
                for (size_t j = ja; j < jb; j++)
                    VSTORE(cm + j * V, VMAX(VLOAD(cm + j * V), VLOAD(ry + (j - ja) * V)));
            }
            for (size_t ox = oa; ox < ob; ox++) {
                const float *cp = cm + (ox - oa) * sw * V;
                gk_vec m = VLOAD(cp);
                for (size_t x = 1; x < kw; x++)
                    m = VMAX(m, VLOAD(cp + x * dw * V));
                VSTORE(orow + ox * V, m);
            }
        }
    }
}

void GK_FN(avgpool_nchwc)(float *out, const float *in, size_t n, size_t cb, size_t ih,
                          size_t iw, size_t oh, size_t ow, size_t kh, size_t kw, size_t sh,
                          size_t sw, size_t ph, size_t pw, size_t phe, size_t pwe,
                          int count_include_pad, int tid, int nthreads)
{
    const size_t V = GK_VLEN;
    size_t total = n * cb * oh;
    size_t lo, hi;
    gk_share(total, tid, nthreads, &lo, &hi);
    for (size_t u = lo; u < hi; u++) {
        size_t oy = u % oh, blk = u / oh;
        const float *ib = in + blk * ih * iw * V;
        float *orow = out + u * ow * V;
        size_t y0, y1;
        tap_range(oy, sh, ph, 1, kh, ih, &y0, &y1);
        size_t iy0 = oy * sh + y0 - ph;
        for (size_t ox = 0; ox < ow; ox++) {
            size_t x0, x1;
            tap_range(ox, sw, pw, 1, kw, iw, &x0, &x1);
            size_t ix0 = ox * sw + x0 - pw;
            /* Two partial sums halve the add chain of large windows (global pooling). */
            gk_vec s0 = VZERO(), s1 = VZERO();
            for (size_t y = y0; y < y1; y++) {
                const float *ip = ib + ((iy0 + y - y0) * iw + ix0) * V;
                size_t x = 0, nx = x1 - x0;
                for (; x + 2 <= nx; x += 2) {
                    s0 = VADD(s0, VLOAD(ip + x * V));
                    s1 = VADD(s1, VLOAD(ip + (x + 1) * V));
                }
                if (x < nx)
                    s0 = VADD(s0, VLOAD(ip + x * V));
            }
            /* count_include_pad counts taps on the padding [-ph, ih + phe), never past it. */
            size_t cnt = (y1 - y0) * (x1 - x0);
            if (count_include_pad) {
                size_t ry = oy * sh + kh > ih + ph + phe ? ih + ph + phe - oy * sh : kh;
                size_t rx = ox * sw + kw > iw + pw + pwe ? iw + pw + pwe - ox * sw : kw;
                cnt = ry * rx;
            }
            gk_vec r = VMUL(VADD(s0, s1), VSET1(cnt ? 1.0f / (float)cnt : 0.0f));
            VSTORE(orow + ox * V, r);
        }
    }
}
