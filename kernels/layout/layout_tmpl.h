// layout_tmpl.h - Conversions between NCHW and the channel-blocked layout at a graph's edges,
// written once for any vector length V (layout_avx512.c, layout_avx2.c, layout_neon.c). Work is
// split over (image, channel block).
//
// Both directions move square tiles of T x T floats (T = 8 on x86, 4 on NEON) through
// registers: T rows loaded, transposed, T rows stored. Written as plain loops, the strided
// side made LLVM's vectorizer build interleaved groups of T * V floats (<64 x float> shuffles
// for AVX2), whose instruction selection took most of a small conv model's compile (LeNet's
// three conversions 1.5 of its 3.5 s). Only the pixels past the last whole tile take the
// scalar loop, kept a loop.

#if defined(__clang__)
#define LAYOUT_SCALAR_LOOP _Pragma("clang loop vectorize(disable) unroll(disable)")
#else
#define LAYOUT_SCALAR_LOOP
#endif

#if GK_VLEN == 4
#define LAYOUT_T 4

/* dst row i (of drows stored) = column i of the 4 x 4 tile whose first srows rows are read
 * from src (rows past srows are zero). */
GK_INLINE void layout_tile(const float *src, size_t ss, int srows, float *dst, size_t ds,
                           int drows)
{
    float32x4_t r[4];
    for (int i = 0; i < 4; i++)
        r[i] = i < srows ? vld1q_f32(src + (size_t)i * ss) : vdupq_n_f32(0.0f);
    float32x4x2_t a = vtrnq_f32(r[0], r[1]), b = vtrnq_f32(r[2], r[3]);
    float32x4_t t[4] = { vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0])),
                         vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1])),
                         vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0])),
                         vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1])) };
    for (int i = 0; i < drows; i++)
        vst1q_f32(dst + (size_t)i * ds, t[i]);
}
#else
#define LAYOUT_T 8

/* The same with 8 x 8 tiles in 256-bit registers (AVX-512 builds have them too). */
GK_INLINE void layout_tile(const float *src, size_t ss, int srows, float *dst, size_t ds,
                           int drows)
{
    __m256 r[8];
    for (int i = 0; i < 8; i++)
        r[i] = i < srows ? _mm256_loadu_ps(src + (size_t)i * ss) : _mm256_setzero_ps();
    __m256 u[8], s[8];
    for (int i = 0; i < 8; i += 2) {
        u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);       /* r_i0 r_j0 r_i1 r_j1 | lanes 4-5 */
        u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);   /* r_i2 r_j2 r_i3 r_j3 | lanes 6-7 */
    }
    for (int i = 0; i < 8; i += 4) {
        s[i] = _mm256_shuffle_ps(u[i], u[i + 2], 0x44);       /* column 0 (and 4) */
        s[i + 1] = _mm256_shuffle_ps(u[i], u[i + 2], 0xee);   /* column 1 (and 5) */
        s[i + 2] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0x44);
        s[i + 3] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0xee);
    }
    __m256 t[8];
    for (int i = 0; i < 4; i++) {
        t[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        t[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
    for (int i = 0; i < drows; i++)
        _mm256_storeu_ps(dst + (size_t)i * ds, t[i]);
}
#endif

/* The pixels from p0 of one block past its last whole tile, one at a time: cnt channels read,
 * the rest of the block's cv zero. */
GK_INLINE void to_nchwc_tail(float *op, const float *ip, size_t hw, size_t cv, size_t cnt,
                             size_t p0)
{
    LAYOUT_SCALAR_LOOP
    for (size_t p = p0; p < hw; p++) {
        for (size_t j = 0; j < cnt; j++)
            op[p * cv + j] = ip[j * hw + p];
        for (size_t j = cnt; j < cv; j++)
            op[p * cv + j] = 0.0f;
    }
}

/* cv: the block's channels, V or (a first convolution's input) C. */
void GK_FN(to_nchwc)(float *out, const float *in, size_t n, size_t c, size_t hw, size_t cv,
                     int tid, int nthreads)
{
    const size_t T = LAYOUT_T;
    size_t cb = (c + cv - 1) / cv, total = n * cb;
    size_t lo, hi;
    gk_share(total, tid, nthreads, &lo, &hi);
    for (size_t u = lo; u < hi; u++) {
        size_t img = u / cb, b = u % cb, c0 = b * cv;
        size_t cnt = c - c0 < cv ? c - c0 : cv;
        const float *ip = in + (img * c + c0) * hw;
        float *op = out + u * hw * cv;
        if (cv < T) {
            /* A first convolution's few channels (cv = C < T, one block): the tile's T
             * pixel rows are stored cv floats apart, in order, each T floats wide, so a
             * row's zero lanes land on the next pixels and are overwritten by their rows;
             * the last row's spill lands in the next tile, hence one whole tile is left
             * for after. LLVM's vectorization of the plain loop was an interleave group of
             * cv * V floats, 0.33 s of ResNet-50's compile. */
            size_t p = 0;
            for (; p + 2 * T <= hw; p += T)
                layout_tile(ip + p, hw, (int)cnt, op + p * cv, cv, (int)T);
            to_nchwc_tail(op, ip, hw, cv, cnt, p);
            continue;
        }
        if (cv % T != 0) {
            /* Block widths past T that T does not divide (12 channels under AVX-512):
             * pixel-major writes, channel-strided reads, each read stream sequential.
             * to_nchwc_tail's loop, but left to the vectorizer: a whole plane, not a tail. */
            for (size_t p = 0; p < hw; p++) {
                for (size_t j = 0; j < cnt; j++)
                    op[p * cv + j] = ip[j * hw + p];
                for (size_t j = cnt; j < cv; j++)
                    op[p * cv + j] = 0.0f;
            }
            continue;
        }
        /* Tile (pixels p.., channels j..): channel rows in, pixel rows out; the channels past
         * cnt read as zero, the block's padding. */
        size_t p = 0;
        for (; p + T <= hw; p += T)
            for (size_t j = 0; j < cv; j += T) {
                size_t rows = j < cnt ? (cnt - j < T ? cnt - j : T) : 0;
                layout_tile(ip + j * hw + p, hw, (int)rows, op + p * cv + j, cv, (int)T);
            }
        to_nchwc_tail(op, ip, hw, cv, cnt, p);
    }
}

void GK_FN(from_nchwc)(float *out, const float *in, size_t n, size_t c, size_t hw, int tid,
                       int nthreads)
{
    const size_t V = GK_VLEN, T = LAYOUT_T;
    size_t cb = (c + V - 1) / V, total = n * cb;
    size_t lo, hi;
    gk_share(total, tid, nthreads, &lo, &hi);
    for (size_t u = lo; u < hi; u++) {
        size_t img = u / cb, c0 = (u % cb) * V;
        size_t cnt = c - c0 < V ? c - c0 : V;
        const float *ip = in + u * hw * V;
        float *op = out + (img * c + c0) * hw;
        /* Tile (pixels p.., channels j..): pixel rows in (every block holds V channels),
         * channel rows out, the channels past cnt not stored. */
        size_t p = 0;
        for (; p + T <= hw; p += T)
            for (size_t j = 0; j < cnt; j += T) {
                size_t rows = cnt - j < T ? cnt - j : T;
                layout_tile(ip + p * V + j, V, (int)T, op + j * hw + p, hw, (int)rows);
            }
        LAYOUT_SCALAR_LOOP
        for (; p < hw; p++)
            for (size_t j = 0; j < cnt; j++)
                op[j * hw + p] = ip[p * V + j];
    }
}

#undef LAYOUT_SCALAR_LOOP
#undef LAYOUT_T
