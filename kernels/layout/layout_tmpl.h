// layout_tmpl.h - Conversions between NCHW and the channel-blocked layout at a graph's edges,
// written once for any vector length V (layout_avx512.c, layout_avx2.c, layout_neon.c). Work is
// split over (image, channel block).

void GK_FN(to_nchwc)(float *out, const float *in, size_t n, size_t c, size_t hw, size_t cv,
                     int tid, int nthreads)
{
    size_t cb = (c + cv - 1) / cv, total = n * cb;
    size_t lo, hi;
    gk_share(total, tid, nthreads, &lo, &hi);
    for (size_t u = lo; u < hi; u++) {
        size_t img = u / cb, b = u % cb, c0 = b * cv;
        size_t cnt = c - c0 < cv ? c - c0 : cv;
        const float *ip = in + (img * c + c0) * hw;
        float *op = out + u * hw * cv;
        /* Pixel-major writes, channel-strided reads: each read stream is sequential. */
        for (size_t p = 0; p < hw; p++) {
            for (size_t j = 0; j < cnt; j++)
                op[p * cv + j] = ip[j * hw + p];
            for (size_t j = cnt; j < cv; j++)
                op[p * cv + j] = 0.0f;
        }
    }
}

void GK_FN(from_nchwc)(float *out, const float *in, size_t n, size_t c, size_t hw, int tid,
                       int nthreads)
{
    const size_t V = GK_VLEN;
    size_t cb = (c + V - 1) / V, total = n * cb;
    size_t lo, hi;
    gk_share(total, tid, nthreads, &lo, &hi);
    for (size_t u = lo; u < hi; u++) {
        size_t img = u / cb, c0 = (u % cb) * V;
        size_t cnt = c - c0 < V ? c - c0 : V;
        const float *ip = in + u * hw * V;
        float *op = out + (img * c + c0) * hw;
        for (size_t j = 0; j < cnt; j++)
            for (size_t p = 0; p < hw; p++)
                op[j * hw + p] = ip[p * V + j];
    }
}
