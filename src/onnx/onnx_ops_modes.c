// onnx_ops_modes.c - Less common modes of ops whose main form is imported elsewhere, built from
// the graph's existing nodes: MaxPool's column-major indices (storage_order=1), Resize with
// antialias=1, and Einsum's ellipsis and diagonals (rewritten into the plain form).
//
// Keeping them here leaves the main loaders short and the common path untouched: a model
// that does not use a mode builds exactly the graph it built before.
#include <math.h>
#include <string.h>

#include "onnx/onnx_internal.h"
#include "resize_math.h"

static glow_value i64c(onnx_ctx *cx, const Onnx__NodeProto *np, int64_t v)
{
    return onnx_sub_scalar(cx, np, "c", GLOW_I64, (double)v);
}

static glow_status ibin(onnx_ctx *cx, const Onnx__NodeProto *np, glow_node_kind k, glow_value a,
                        glow_value b, glow_value *out)
{
    glow_attr fmod = GLOW_AI(FMOD, 0);   /* Mod's required attribute: integer remainder */
    return onnx_build_elemwise(cx, np, k, (glow_value[]){ a, b }, 2, &fmod, k == NK_MOD, out);
}

/* MaxPool's indices with storage_order=1. The pool node gives each max's flat row-major NCHW
 * index; ONNX's column-major form keeps the (n, c) plane offset and numbers the positions
 * inside the plane with the first spatial dim fastest: for [H, W], h + w * H instead of
 * h * W + w. The index is split into its spatial coordinates (non-negative, so truncating
 * division and remainder are exact) and recombined with the reversed strides. */
glow_status onnx_column_major_indices(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value idx,
                                      const glow_type *xt, glow_value *out)
{
    int k = xt->rank - 2;
    if (k <= 1) {
        *out = idx;   /* one spatial dim: both orders agree */
        return GLOW_OK;
    }
    glow_value q = idx, coord[GLOW_MAX_DIMS];
    for (int i = k - 1; i >= 0; i--) {
        glow_value s = i64c(cx, np, xt->dims[2 + i]);
        GLOW_TRY(ibin(cx, np, NK_MOD, q, s, &coord[i]));
        GLOW_TRY(ibin(cx, np, NK_DIV, q, s, &q));
    }
    int64_t plane = 1;
    for (int i = 0; i < k; i++)
        plane *= xt->dims[2 + i];
    glow_value col;
    GLOW_TRY(ibin(cx, np, NK_MUL, q, i64c(cx, np, plane), &col));
    int64_t stride = 1;
    for (int i = 0; i < k; i++) {
        glow_value term = coord[i];
        if (stride != 1)
            GLOW_TRY(ibin(cx, np, NK_MUL, term, i64c(cx, np, stride), &term));
        GLOW_TRY(ibin(cx, np, NK_ADD, col, term, &col));
        stride *= xt->dims[2 + i];
    }
    *out = col;
    return GLOW_OK;
}

/* --- Resize with antialias=1 --- */

/* Keys' cubic kernel with coefficient a at distance x. */
static double cubic_kernel(double x, double a)
{
    x = fabs(x);
    if (x <= 1)
        return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0;
}

/* Row o of the [out, in] interpolation matrix of one axis, added into w[0..in). ONNX's
 * reference widens the kernel by 1 / scale when downsampling (the antialias filter): the taps
 * are the 2 - 2 * start source positions around the mapped coordinate, start = floor(-r / s) + 1
 * for the kernel radius r (1 linear, 2 cubic) and s = min(scale, 1); their weights are the
 * kernel at s * distance, normalized to sum 1. Taps past the edges read the edge element, or
 * are dropped (and the rest renormalized) under exclude_outside. */
static void antialias_row(const resize_aa *aa, double scale, int64_t o, int64_t out,
                          int64_t in, double *w)
{
    bool outside = false;
    double xo = gk_resize_coord(aa->coord, (double)o, scale, out, in, 0, 1, &outside);
    double s = scale < 1 ? scale : 1;
    /* The tap left of xo is at distance `ratio` in (0, 1]: an integer xo counts as 1. */
    double base = floor(xo), ratio = xo - base;
    if (ratio == 0) {
        ratio = 1;
        base -= 1;
    }
    int64_t start = (int64_t)floor(-(aa->cubic ? 2.0 : 1.0) / s) + 1, n = 2 - 2 * start;
    double tw[64], sum = 0;
    int64_t ti[64];
    for (int64_t j = 0; j < n && j < 64; j++) {
        double dist = s * ((double)(start + j) - ratio);
        double v = aa->cubic ? cubic_kernel(dist, aa->cubic_a) : fmax(0.0, 1 - fabs(dist));
        int64_t idx = (int64_t)base + start + j;
        if (aa->exclude && (idx < 0 || idx >= in))
            v = 0;
        ti[j] = idx < 0 ? 0 : idx >= in ? in - 1 : idx;
        tw[j] = v;
        sum += v;
    }
    for (int64_t j = 0; j < n && j < 64; j++)
        w[ti[j]] += sum != 0 ? tw[j] / sum : 0;
}

glow_status onnx_resize_antialias(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value x,
                                  const int64_t *out_dims, const double *scales,
                                  const resize_aa *aa, glow_value *out)
{
    const glow_type *xt = glow_value_type(x);
    int r = xt->rank;
    glow_dtype ft = xt->dtype;
    if (!glow_dtype_is_float(ft))
        return onnx_unsupported(cx, np, "antialias=1 on %s (float inputs only)",
                                glow_dtype_name(ft));
    for (int a = 0; a < r; a++) {
        int64_t in = xt->dims[a], o = out_dims[a];
        if (in == o && scales[a] == 1.0)
            continue;   /* an axis kept as it is samples itself */
        /* The kernel is 2 - 2 * start taps wide: bound it like the row buffer. */
        double s = scales[a] < 1 ? scales[a] : 1;
        if (in == 0 || o == 0 || floor((aa->cubic ? 2.0 : 1.0) / s) > 31)
            return onnx_unsupported(cx, np, "antialias=1 with scale %g on axis %d of %lld (a "
                                    "kernel above 64 taps or an empty dim)", scales[a], a,
                                    (long long)in);
        /* x moved so that axis a is last and flattened to [rest, in], times M^T [in, out]. */
        int64_t perm[GLOW_MAX_DIMS], inv[GLOW_MAX_DIMS], dims[GLOW_MAX_DIMS], rest = 1;
        for (int i = 0, k = 0; i < r; i++)
            if (i != a)
                perm[k++] = i;
        perm[r - 1] = a;
        for (int i = 0; i < r; i++) {
            inv[perm[i]] = i;
            dims[i] = glow_value_type(x)->dims[perm[i]];
            if (i < r - 1)
                rest *= dims[i];
        }
        double *m;
        void *buf;
        GLOW_TRY(onnx_const_buffer(cx, np, in * o, sizeof(double), (void **)&m));
        GLOW_TRY(onnx_const_buffer(cx, np, in * o, glow_dtype_size(ft), &buf));
        double *row = GLOW_NEW_ARRAY(&cx->scratch, double, in);
        for (int64_t k = 0; k < o; k++) {
            memset(row, 0, sizeof(double) * (size_t)in);
            antialias_row(aa, scales[a], k, o, in, row);
            for (int64_t i = 0; i < in; i++)
                m[i * o + k] = row[i];
        }
        glow_value mt = onnx_f64_constant(cx, np, "antialias", ft, 2, (int64_t[]){ in, o }, m,
                                          buf);
        glow_value v = x;
        if (a != r - 1) {
            glow_attr pa = GLOW_AINTS(PERM, perm, r);
            GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &v, 1, &pa, 1, NULL, 0, &v));
        }
        GLOW_TRY(onnx_reshape(cx, np, v, 2, (int64_t[]){ rest, in }, &v));
        GLOW_TRY(onnx_matmul(cx, np, v, mt, NULL, &v));
        dims[r - 1] = o;
        GLOW_TRY(onnx_reshape(cx, np, v, r, dims, &v));
        if (a != r - 1) {
            glow_attr ia = GLOW_AINTS(PERM, inv, r);
            GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, &v, 1, &ia, 1, NULL, 0, &v));
        }
        x = v;
    }
    *out = x;
    return GLOW_OK;
}

/* --- Einsum: ellipsis and repeated subscripts --- */

#define EINSUM_MAX 160

/* v's diagonal over axes i < j (equal sizes n), as a new last axis: the two axes moved last,
 * merged to n * n, and every (n + 1)-th element taken. */
static glow_status diagonal(onnx_ctx *cx, const Onnx__NodeProto *np, glow_value *v, int i,
                            int j)
{
    const glow_type *t = glow_value_type(*v);
    int r = t->rank;
    int64_t n = t->dims[i], perm[GLOW_MAX_DIMS], dims[GLOW_MAX_DIMS];
    for (int a = 0, k = 0; a < r; a++)
        if (a != i && a != j)
            perm[k++] = a;
    perm[r - 2] = i;
    perm[r - 1] = j;
    for (int a = 0; a < r; a++)
        dims[a] = t->dims[perm[a]];
    glow_attr pa = GLOW_AINTS(PERM, perm, r);
    GLOW_TRY(onnx_build(cx, np, NK_TRANSPOSE, v, 1, &pa, 1, NULL, 0, v));
    dims[r - 2] = n * n;
    GLOW_TRY(onnx_reshape(cx, np, *v, r - 1, dims, v));
    int64_t *st = GLOW_NEW_ARRAY(&cx->scratch, int64_t, 3 * GLOW_MAX_DIMS);
    int64_t *en = st + GLOW_MAX_DIMS, *sp = en + GLOW_MAX_DIMS;
    for (int a = 0; a < r - 1; a++) {
        st[a] = 0;
        en[a] = dims[a];
        sp[a] = a == r - 2 ? n + 1 : 1;
    }
    glow_attr sa[3] = { GLOW_AINTS(STARTS, st, r - 1), GLOW_AINTS(ENDS, en, r - 1),
                        GLOW_AINTS(STEPS, sp, r - 1) };
    return onnx_build(cx, np, NK_SLICE, v, 1, sa, 3, NULL, 0, v);
}

static bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Rewrites an equation with "..." or a subscript repeated inside one term into the form
 * load_einsum handles: the ellipsis becomes subscripts the equation does not use (right-aligned
 * across operands, as NumPy broadcasts them), a repeated subscript becomes the operand's
 * diagonal, and an implicit result is made explicit first (NumPy's rule: the ellipsis dims,
 * then the subscripts that occur exactly once, in alphabetical order). Equations without
 * either are left as they are. */
glow_status onnx_einsum_prepare(onnx_ctx *cx, const Onnx__NodeProto *np, const char **eq,
                                glow_value *v, int nin)
{
    char e[EINSUM_MAX];
    size_t len = 0;
    for (const char *p = *eq; *p; p++)
        if (*p != ' ' && len < sizeof e - 1)
            e[len++] = *p;
    e[len] = '\0';
    char *arrow = strstr(e, "->");
    char *rhs = arrow ? arrow + 2 : NULL;
    if (arrow)
        *arrow = '\0';
    /* The operand terms. */
    char *term[2] = { NULL, NULL };
    int nt = 0;
    for (char *p = e, *q; nt < 2; p = q + 1) {
        term[nt++] = p;
        if (!(q = strchr(p, ',')))
            break;
        *q = '\0';
    }
    if (nt != nin || strchr(term[nt - 1], ','))
        return GLOW_OK;   /* load_einsum reports the malformed equation */
    bool used[128] = { false }, special = rhs && strstr(rhs, "...");
    int count[128] = { 0 }, ell[2] = { 0, 0 }, ell_max = 0;
    for (int k = 0; k < nt; k++) {
        int letters = 0;
        for (const char *p = term[k]; *p; p++)
            if (is_letter(*p)) {
                special = special || (count[(int)*p] > 0 && strchr(term[k], *p) != p);
                used[(int)*p] = true;
                count[(int)*p]++;
                letters++;
            }
        if (strstr(term[k], "...")) {
            special = true;
            ell[k] = glow_value_type(v[k])->rank - letters;
            if (ell[k] < 0)
                return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "term %d has more subscripts than "
                                 "its operand has dims", k);
            ell_max = ell[k] > ell_max ? ell[k] : ell_max;
        }
    }
    if (!special)
        return GLOW_OK;
    char fresh[GLOW_MAX_DIMS];
    for (int c = 'A', n = 0; n < ell_max && c <= 'z'; c++)
        if (is_letter((char)c) && !used[c])
            fresh[n++] = (char)c;
    /* Terms and result with the ellipsis spelled out. */
    char out[3][EINSUM_MAX];
    for (int k = 0; k <= nt; k++) {
        const char *src = k < nt ? term[k] : rhs;
        size_t o = 0;
        if (k == nt && !src) {
            /* Implicit result: ellipsis dims, then the subscripts used exactly once. */
            for (int i = 0; i < ell_max; i++)
                out[k][o++] = fresh[i];
            for (int c = 'A'; c <= 'z'; c++)
                if (is_letter((char)c) && count[c] == 1)
                    out[k][o++] = (char)c;
            out[k][o] = '\0';
            continue;
        }
        int skip = k < nt ? ell_max - ell[k] : 0;
        for (const char *p = src; *p && o < EINSUM_MAX - GLOW_MAX_DIMS - 1; p++) {
            if (!strncmp(p, "...", 3)) {
                for (int i = skip; i < ell_max; i++)
                    out[k][o++] = fresh[i];
                p += 2;
            } else {
                out[k][o++] = *p;
            }
        }
        out[k][o] = '\0';
    }
    /* Diagonals: each repeated subscript taken once, as the operand's last axis. */
    for (int k = 0; k < nt; k++) {
        for (bool again = true; again;) {
            again = false;
            char *t = out[k];
            int n = (int)strlen(t);
            for (int i = 0; i < n && !again; i++)
                for (int j = i + 1; j < n && !again; j++) {
                    if (t[i] != t[j])
                        continue;
                    const glow_type *vt = glow_value_type(v[k]);
                    if (n != vt->rank || vt->dims[i] != vt->dims[j])
                        return onnx_fail(cx, np, GLOW_ERR_BAD_SHAPE, "subscript '%c' repeats "
                                         "over dims of different sizes (or the term does not "
                                         "match its operand's rank)", t[i]);
                    GLOW_TRY(diagonal(cx, np, &v[k], i, j));
                    char rest[EINSUM_MAX];
                    int m = 0;
                    for (int a = 0; a < n; a++)
                        if (a != i && a != j)
                            rest[m++] = t[a];
                    rest[m++] = t[i];
                    rest[m] = '\0';
                    memcpy(t, rest, (size_t)m + 1);
                    again = true;
                }
        }
    }
    *eq = nt == 1 ? glow_arena_printf(cx->arena, "%s->%s", out[0], out[1])
                  : glow_arena_printf(cx->arena, "%s,%s->%s", out[0], out[1], out[2]);
    return GLOW_OK;
}
