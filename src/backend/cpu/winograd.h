// winograd.h - The Winograd F(4x4,3x3) convolution on the cpu backend: which 3x3 convolutions
// take it (a cost model against the direct kernel, GLOWC_WINOGRAD overrides it) and the
// compile-time transform of their weights (kernels/winograd).
#ifndef GLOW_CPU_WINOGRAD_H
#define GLOW_CPU_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether a 3x3, stride-1, dilation-1, group-1 convolution of n images, c -> m channels, output
 * oh x ow, runs Winograd on vector length v, on a core issuing `rate` vector FMAs per cycle
 * (cpu_wino_fma_rate). GLOWC_WINOGRAD=0 says never, =1 always (where the kernel applies),
 * unset or anything else asks the cost model. */
bool cpu_wino_choose(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v,
                     double rate);

/* Vector FMAs of v lanes this host's core issues per cycle: 2, or 1 for 512-bit vectors on
 * Zen 4 (AMD family 19h). The plan (cpu_wino_plan) and the choice are made for it. */
double cpu_wino_fma_rate(int v);

/* Whether an int8 3x3, stride-1, dilation-1, group-1 convolution (n images, c -> m channels,
 * output oh x ow) on an AVX2 host without VNNI runs the exact integer Winograd F(2x2,3x3)
 * (kernels/qconv/qwino_avx2.c) instead of the direct int8 kernel. GLOWC_WINOGRAD=0/1 as
 * above, within the kernel's exactness bound (GK_QWINO_MAX_C input channels). */
bool cpu_qwino_choose(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow);

/* Bytes the transformed weight takes beyond the direct kernel's repacked one (the memory
 * rule of cpu_wino_choose charges them). */
size_t cpu_wino_extra_bytes(int64_t c, int64_t m, int v);

/* The cost model's two estimates (cycles at one thread), for `glowc dump --stats` and tests. */
void cpu_wino_estimates(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v,
                        double rate, double *direct, double *wino);

/* Floats of the transformed weight: [ceil(m/v)][36][ceil(c/v) * v][v], 0 on overflow. */
size_t cpu_wino_weight_floats(int64_t m, int64_t c, int v);
/* ONNX weight [m][c][3][3] -> U = G g G^T per (output, input) channel, in double and rounded
 * once, zero-padded past m and c. */
void cpu_wino_weights(float *out, const float *w, int64_t m, int64_t c, int v);

/* Scratch floats of one thread, and the threads given a slot: one per online core (at most
 * 16); threads past them take no units of the kernel. */
size_t cpu_wino_slot_floats(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v);
/* The same, and the plan's tile group, output group and chunk (plan[0..2]), which the kernel
 * gets as constants instead of searching them at every call (wino_plan.h gk_wino_plan_at). */
size_t cpu_wino_plan(int64_t n, int64_t c, int64_t m, int64_t oh, int64_t ow, int v,
                     size_t plan[3]);
int cpu_wino_slots(void);

#endif
