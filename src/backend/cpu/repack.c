// repack.c - Repacks constant weights at compile time into the blocked layouts the fast CPU
// kernels read (kernels/blocked.h): conv, depthwise conv, bias and GEMM B panels.
//
// Padding lanes are written as zeros: the kernels rely on them to keep the padded channels of
// the blocked activations zero and to need no tail code for M, C or N.
#include "backend/cpu/repack.h"

#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Product of the factors as a float count, 0 on overflow or a non-positive factor. */
static size_t count(const int64_t *f, int nf)
{
    uint64_t total = 1;
    for (int i = 0; i < nf; i++) {
        if (f[i] <= 0 || (uint64_t)f[i] > (UINT64_MAX >> 2) / total)
            return 0;
        total *= (uint64_t)f[i];
    }
    return total > (SIZE_MAX >> 2) ? 0 : (size_t)total;
}

size_t glow_repack_conv_floats(int64_t m, int64_t cpg, int64_t groups, int64_t kh, int64_t kw,
                               int v, int cv)
{
    if (v <= 0 || cv <= 0 || cv > v || groups <= 0 || m <= 0 || m % groups)
        return 0;
    if (groups > 1 && ((m / groups) % v || cpg % cv))
        return 0;
    int64_t f[] = { ceil_div(m, v), ceil_div(cpg, cv), kh, kw, cv, v };
    return count(f, 6);
}

void glow_repack_conv(float *out, const float *w, int64_t m, int64_t cpg, int64_t groups,
                      int64_t kh, int64_t kw, int v, int cv)
{
    (void)groups; /* the ONNX weight rows are already per group; blocks never straddle groups */
    int64_t mb = ceil_div(m, v), cb = ceil_div(cpg, cv), taps = kh * kw;
    float *o = out;
    for (int64_t bm = 0; bm < mb; bm++)
        for (int64_t bc = 0; bc < cb; bc++)
            for (int64_t t = 0; t < taps; t++)
                for (int64_t c = 0; c < cv; c++)
                    for (int64_t j = 0; j < v; j++) {
                        int64_t oc = bm * v + j, ic = bc * cv + c;
                        /* Within its group, output channel oc reads input channel ic of the
                         * group: the ONNX weight row oc already holds only that group. */
                        *o++ = oc < m && ic < cpg ? w[(oc * cpg + ic) * taps + t] : 0.0f;
                    }
}

size_t glow_repack_dwconv_floats(int64_t c, int64_t kh, int64_t kw, int v)
{
    int64_t f[] = { ceil_div(c, v), kh, kw, v };
    return v <= 0 ? 0 : count(f, 4);
}

void glow_repack_dwconv(float *out, const float *w, int64_t c, int64_t kh, int64_t kw, int v)
{
    int64_t cb = ceil_div(c, v), taps = kh * kw;
    float *o = out;
    for (int64_t b = 0; b < cb; b++)
        for (int64_t t = 0; t < taps; t++)
            for (int64_t j = 0; j < v; j++) {
                int64_t ch = b * v + j;
                *o++ = ch < c ? w[ch * taps + t] : 0.0f;
            }
}

size_t glow_repack_bias_floats(int64_t m, int v)
{
    int64_t f[] = { ceil_div(m, v), v };
    return v <= 0 ? 0 : count(f, 2);
}

void glow_repack_bias(float *out, const float *bias, int64_t m, int v)
{
    int64_t total = ceil_div(m, v) * v;
    for (int64_t i = 0; i < total; i++)
        out[i] = bias && i < m ? bias[i] : 0.0f;
}

size_t glow_repack_gemm_b_floats(int64_t k, int64_t n, int nr)
{
    int64_t f[] = { ceil_div(n, nr), k, nr };
    return nr <= 0 ? 0 : count(f, 3);
}

void glow_repack_gemm_b_rows(float *out, const float *b, int64_t k0, int64_t k1, int64_t k,
                             int64_t n, int64_t ldb, int nr)
{
    /* Row by row, each row dealt out to every panel: the panels fill evenly as B is read,
     * which is what lets a caller free B behind the read position. */
    int64_t panels = ceil_div(n, nr);
    for (int64_t kk = k0; kk < k1; kk++)
        for (int64_t p = 0; p < panels; p++) {
            int64_t n0 = p * nr, cnt = n - n0 < nr ? n - n0 : nr;
            float *o = out + (p * k + kk) * nr;
            memcpy(o, b + kk * ldb + n0, (size_t)cnt * sizeof(float));
            for (int64_t j = cnt; j < nr; j++)
                o[j] = 0.0f;
        }
}

void glow_repack_gemm_b(float *out, const float *b, int64_t k, int64_t n, int64_t ldb,
                        int trans_b, int nr)
{
    if (!trans_b) {
        glow_repack_gemm_b_rows(out, b, 0, k, k, n, ldb, nr);
        return;
    }
    int64_t panels = ceil_div(n, nr);
    float *o = out;
    for (int64_t p = 0; p < panels; p++)
        for (int64_t kk = 0; kk < k; kk++) {
            int64_t n0 = p * nr, cnt = n - n0 < nr ? n - n0 : nr;
            for (int64_t j = 0; j < cnt; j++)
                o[j] = b[(n0 + j) * ldb + kk];
            for (int64_t j = cnt; j < nr; j++)
                o[j] = 0.0f;
            o += nr;
        }
}
