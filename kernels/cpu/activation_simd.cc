// activation_simd.h: the AVX2 copy of the loops (the baseline ISA), the choice between it and the
// AVX-512 one, and the split over threads (the per-ISA copies stay serial, so nothing from
// parallel.h is instantiated under -march=x86-64-v4).
#include "kernels/cpu/activation_simd.h"

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

#define COLONY_ACTIVATION_ISA avx2
#define COLONY_ACTIVATION_TRAIT Avx2
#include "kernels/cpu/activation_simd_kernels.h"
#undef COLONY_ACTIVATION_ISA
#undef COLONY_ACTIVATION_TRAIT

namespace colony::kernels::cpu {

const ActivationSimdFns& active_activation_simd_fns() {
  static const ActivationSimdFns& fns =
      active_cpu_isa() >= CpuIsa::Avx512 ? avx512::activation_simd_fns() : avx2::activation_simd_fns();
  return fns;
}

// Chunks of kElementwiseGrain elements at least, as the strided elementwise loop splits.
void gelu_forward_f32(const float* x, float* y, int64_t n, GeluApproximate approximate) {
  const ActivationSimdFns& f = active_activation_simd_fns();
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { f.gelu_forward(x + b, y + b, e - b, approximate); });
}

void silu_forward_f32(const float* x, float* y, int64_t n) {
  const ActivationSimdFns& f = active_activation_simd_fns();
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { f.silu_forward(x + b, y + b, e - b); });
}

void gelu_backward_f32(const float* grad, const float* x, float* out, int64_t n, GeluApproximate approximate) {
  const ActivationSimdFns& f = active_activation_simd_fns();
  parallel_for(n, kElementwiseGrain,
               [&](int64_t b, int64_t e) { f.gelu_backward(grad + b, x + b, out + b, e - b, approximate); });
}

void silu_backward_f32(const float* grad, const float* x, float* out, int64_t n) {
  const ActivationSimdFns& f = active_activation_simd_fns();
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { f.silu_backward(grad + b, x + b, out + b, e - b); });
}

}  // namespace colony::kernels::cpu
