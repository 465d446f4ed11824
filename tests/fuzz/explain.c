// explain.c - Tells amplified float32 rounding from a backend bug (fuzz.h, fuzz_explain):
// when the cpu backend and the interpreter disagree, both are compared with the float64
// reference, the interpreter run with GLOWC_EVAL_REFERENCE=1 (every float reduction
// accumulated in double and rounded once). See docs/fuzzing.md, "Telling rounding from bugs".
//
// The two backends sum convolutions and products in different orders, each within float32
// error of float64; an ill-conditioned node after them (Softmax of logits of 1e4, a
// normalization of rows whose spread is 1e-6 of their magnitude) amplifies the few ulps apart
// past the tolerance. Then neither is closer to the reference than the other by much. A
// kernel bug moves one backend away from the reference while the other stays: the rule asks,
// element by element, that each backend be no further from the reference than twice the
// other one's distance or twice the tolerance, whichever is larger.
#include <math.h>
#include <stdio.h>

#include "fuzz/fuzz.h"
#include "onnx/onnx.h"

/* |a - b| with NaN equal to NaN and equal infinities equal; INFINITY when only one is NaN. */
static double dist(double a, double b)
{
    if ((isnan(a) && isnan(b)) || a == b)
        return 0;
    double e = fabs(a - b);
    return isnan(e) ? INFINITY : e;
}

double fuzz_rms(const glow_tensor *x)
{
    int64_t count = glow_type_numel(&x->type), finite = 0;
    double sq = 0;
    for (int64_t i = 0; i < count; i++) {
        double v = glow_load_f64(x->type.dtype, x->data, (size_t)i);
        if (isfinite(v)) {
            sq += v * v;
            finite++;
        }
    }
    return finite ? sqrt(sq / (double)finite) : 0;
}

bool fuzz_explain(const glow_tensor *interp, const glow_tensor *cpu, const glow_tensor *ref,
                  const glow_tensor *noisy, int nnoisy, double rel_tol, fuzz_figures *f)
{
    *f = (fuzz_figures){ 0 };
    bool same = glow_type_equal(&cpu->type, &interp->type) &&
                glow_type_equal(&ref->type, &interp->type);
    for (int j = 0; j < nnoisy; j++)
        same = same && glow_type_equal(&noisy[j].type, &interp->type);
    if (!same || nnoisy < 1)
        return false;
    glow_dtype t = ref->type.dtype;
    int64_t count = glow_type_numel(&ref->type);
    double rms = fuzz_rms(ref), rms_i = fuzz_rms(interp);
    f->count = count;
    f->rms = rms;
    for (int64_t i = 0; i < count; i++) {
        double r = glow_load_f64(t, ref->data, (size_t)i);
        double a = glow_load_f64(t, interp->data, (size_t)i);
        double c = glow_load_f64(t, cpu->data, (size_t)i);
        double d = dist(c, a);
        if (d <= rel_tol * ((isfinite(a) ? fabs(a) : 0) + rms_i))
            continue; /* agrees within the runner's tolerance: nothing to explain here */
        /* the rounding envelope: how far noise of a few ulps in the sums moves this element,
         * plus the runner's own tolerance at it */
        double s = 0;
        for (int j = 0; j < nnoisy; j++)
            s = fmax(s, dist(glow_load_f64(t, noisy[j].data, (size_t)i), r));
        double lim = rel_tol * ((isfinite(r) ? fabs(r) : 0) + rms);
        double ei = dist(a, r), ec = dist(c, r), e = fmax(ei, ec);
        double k = e <= lim ? 0 : s > 0 ? (e - lim) / s : INFINITY;
        f->differ++;
        f->d = fmax(f->d, d);
        f->e_interp = fmax(f->e_interp, ei);
        f->e_cpu = fmax(f->e_cpu, ec);
        f->noise = fmax(f->noise, s);
        f->k = fmax(f->k, k);
        if (!(k <= FUZZ_ROUNDING_K))
            f->unexplained++;
    }
    return f->unexplained == 0;
}

void fuzz_figures_str(const fuzz_figures *f, char *buf, size_t n)
{
    snprintf(buf, n, "%lld of %lld differ: |cpu-interp| <= %.2g, |interp-ref| <= %.2g, "
             "|cpu-ref| <= %.2g, noise <= %.2g, %.3g x noise needed (rms %.3g), %lld "
             "unexplained", f->differ, f->count, f->d, f->e_interp, f->e_cpu, f->noise, f->k,
             f->rms, f->unexplained);
}
