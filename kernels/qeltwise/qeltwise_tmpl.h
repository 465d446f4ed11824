// qeltwise_tmpl.h - Quantized 8-bit elementwise kernels, QL elements per vector (qsimd.h),
// written once for AVX-512 (qeltwise_avx512.c) and AVX2 (qeltwise_avx2.c): every lane computes
// what qeltwise_scalar.c computes for its element, so results equal the scalar kernels'.
// Each thread's share is a multiple of 64 elements but the last; its tail takes a partial
// vector.

void QFN(quantize)(int64_t n, const float *x, uint8_t *y, float scale, int zero, int lo,
                   int hi, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    qvf s = QF_SET1(scale);
    qvi z = QI_SET1(zero), l = QI_SET1(lo), h = QI_SET1(hi);
    for (int64_t i = i0; i < i1; i += QL) {
        /* x / scale as ONNX divides; NaN becomes 0 before the clamp, as gk_q_round does. */
        qvf v = QF_NAN_TO_ZERO(QF_DIV(q_loadf(x + i, i1 - i), s));
        q_store8(y + i, q_round_sat(v, z, l, h), i1 - i);
    }
}

void QFN(dequantize)(int64_t n, const uint8_t *x, float *y, int x_signed, float scale,
                     int zero, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    qvf s = QF_SET1(scale);
    qvi z = QI_SET1(zero);
    for (int64_t i = i0; i < i1; i += QL)
        q_storef(y + i, QF_MUL(QF_CVT(QI_SUB(q_load8(x + i, i1 - i, x_signed), z)), s), i1 - i);
}

void QFN(rescale)(int64_t n, const uint8_t *x, uint8_t *y, int x_signed, int x_zero, float mult,
                  int y_zero, int lo, int hi, int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    qvf m = QF_SET1(mult);
    qvi zx = QI_SET1(x_zero), z = QI_SET1(y_zero), l = QI_SET1(lo), h = QI_SET1(hi);
    for (int64_t i = i0; i < i1; i += QL) {
        qvi v = QI_SUB(q_load8(x + i, i1 - i, x_signed), zx);
        q_store8(y + i, q_round_sat(QF_MUL(QF_CVT(v), m), z, l, h), i1 - i);
    }
}

/* One vector of the binary op `op` (a constant where it is inlined) on offset operands. */
GK_INLINE qvi qadd_vec(int op, qvi a, qvi b, qvf ma, qvf mb, qvi z, qvi l, qvi h)
{
    switch (op) {
    case GK_BIN_MUL: return q_round_sat(QF_MUL(QF_CVT(QI_MUL(a, b)), ma), z, l, h);
    case GK_BIN_MAX:
        return QI_MAX(q_round_sat(QF_MUL(QF_CVT(a), ma), z, l, h),
                      q_round_sat(QF_MUL(QF_CVT(b), mb), z, l, h));
    case GK_BIN_MIN:
        return QI_MIN(q_round_sat(QF_MUL(QF_CVT(a), ma), z, l, h),
                      q_round_sat(QF_MUL(QF_CVT(b), mb), z, l, h));
    default: /* two rounded multiplies, one rounded add (gk_qadd) */
        return q_round_sat(QF_ADD(QF_MUL(QF_CVT(a), ma), QF_MUL(QF_CVT(b), mb)), z, l, h);
    }
}

/* POST: the folded rescale of the result (a constant where it is inlined), as the rescale
 * kernel computes it on the stored byte (whose value is the lane's). */
#define QADD_LOOP(OP, POST)                                                                   \
    for (int64_t i = i0; i < i1; i += QL) {                                                   \
        qvi va = QI_SUB(q_load8(a + i, i1 - i, a_signed), za);                                \
        qvi vb = QI_SUB(q_load8(b + i, i1 - i, b_signed), zb);                                \
        qvi r = qadd_vec(OP, va, vb, ma, mb, z, l, h);                                        \
        if (POST)                                                                             \
            r = q_round_sat(QF_MUL(QF_CVT(QI_SUB(r, z)), pm), pz, pl, ph);                    \
        q_store8(y + i, r, i1 - i);                                                           \
    }

void QFN(qadd)(int op, int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *y, int a_signed,
               int a_zero, float a_mult, int b_signed, int b_zero, float b_mult, int y_zero,
               int lo, int hi, float post_mult, int post_zero, int post_lo, int post_hi,
               int tid, int nthreads)
{
    int64_t i0, i1;
    gk_split(n, 64, tid, nthreads, &i0, &i1);
    qvf ma = QF_SET1(a_mult), mb = QF_SET1(op == GK_BIN_SUB ? -b_mult : b_mult);
    qvi za = QI_SET1(a_zero), zb = QI_SET1(b_zero);
    qvi z = QI_SET1(y_zero), l = QI_SET1(lo), h = QI_SET1(hi);
    qvf pm = QF_SET1(post_mult);
    qvi pz = QI_SET1(post_zero), pl = QI_SET1(post_lo), ph = QI_SET1(post_hi);
    if (post_mult != 0.0f) {
        switch (op) {
        case GK_BIN_MUL: QADD_LOOP(GK_BIN_MUL, 1) break;
        case GK_BIN_MAX: QADD_LOOP(GK_BIN_MAX, 1) break;
        case GK_BIN_MIN: QADD_LOOP(GK_BIN_MIN, 1) break;
        default: QADD_LOOP(GK_BIN_ADD, 1) break;
        }
        return;
    }
    switch (op) {
    case GK_BIN_MUL: QADD_LOOP(GK_BIN_MUL, 0) break;
    case GK_BIN_MAX: QADD_LOOP(GK_BIN_MAX, 0) break;
    case GK_BIN_MIN: QADD_LOOP(GK_BIN_MIN, 0) break;
    default: QADD_LOOP(GK_BIN_ADD, 0) break;
    }
}

#undef QADD_LOOP
