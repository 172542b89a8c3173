// GELU (both approximations) and SiLU, forward and backward, over contiguous float32 with AVX2+FMA
// or AVX-512 (vec_math.h) instead of a libm call per element (float16 and bfloat16 through
// float32); also float32's sigmoid, tanh, exp and log (log2, log10) forward, and the softmax's rows (ActivationSimdFns
// below). The elementwise kernels
// (elementwise_unary.cc, elementwise.cc) call these for contiguous float32 operands; what GELU and
// SiLU are stays defined by kernels/common/elementwise_functors.h (gelu, gelu_derivative, silu's
// unary_fn and activation_grad_fn), which these evaluate in a different order for accuracy:
//  - exact GELU x Phi(x) through erfc, so the lower tail keeps its relative accuracy where
//    1 + erf(x / sqrt2) cancels (vec_math.h);
//  - tanh GELU x (1 + tanh(u)) / 2 as x / (1 + e^(-2u)), the same function without the cancellation
//    of 1 + tanh(u) for negative u; its derivative from sigma = 1 / (1 + e^(-2u)) and
//    1 - sigma = e^(-2u) sigma, with 1 + tanh = 2 sigma and 1 - tanh^2 = 4 sigma (1 - sigma).
// Infinities and NaNs come out as the scalar functors give them (and PyTorch's CPU kernels):
// gelu(inf) = inf, gelu(-inf) = NaN, silu(-inf) = NaN, derivatives at +-inf NaN.
#pragma once

#include <cstdint>

#include "kernels/common/elementwise_functors.h"
#include "kernels/common/half.h"

namespace colony::kernels::cpu {

// y[i] = gelu(x[i]) or silu(x[i]), i < n; parallel over elements (parallel.h). x may be y.
// T: float, or Half / BFloat16, which are widened to float32 and each result rounded once, as the
// scalar loops compute 16-bit types in float (Half in blocks on the stack; BFloat16 in registers,
// GELU's through ActivationSimdFns::gelu_forward_bf16 / gelu_backward_bf16 below).
template <typename T>
void gelu_forward_simd(const T* x, T* y, int64_t n, GeluApproximate approximate);
template <typename T>
void silu_forward_simd(const T* x, T* y, int64_t n);
// out[i] = grad[i] * d/dx at x[i]; out may be grad or x.
template <typename T>
void gelu_backward_simd(const T* grad, const T* x, T* out, int64_t n, GeluApproximate approximate);
template <typename T>
void silu_backward_simd(const T* grad, const T* x, T* out, int64_t n);

// One ISA's serial loops (tests call each copy directly; the functions above go through the
// active one, cpu_isa.h).
struct ActivationSimdFns {
  const char* isa;  // "avx2", "avx512"
  void (*gelu_forward)(const float* x, float* y, int64_t n, GeluApproximate approximate);
  void (*silu_forward)(const float* x, float* y, int64_t n);
  void (*gelu_backward)(const float* grad, const float* x, float* out, int64_t n, GeluApproximate approximate);
  void (*silu_backward)(const float* grad, const float* x, float* out, int64_t n);
  // GELU over bfloat16 bits, widened and rounded in registers (one pass over each operand, no
  // float32 copy between). The exact form runs shorter polynomials than the float32 loops, enough
  // for a bfloat16 result: it equals the float32 loop's rounded, or is 1 ulp from it where that
  // value lies within about 9e-6 (relative) of a halfway point (activation_simd_kernels.h).
  void (*gelu_forward_bf16)(const uint16_t* x, uint16_t* y, int64_t n, GeluApproximate approximate);
  void (*gelu_backward_bf16)(const uint16_t* grad, const uint16_t* x, uint16_t* out, int64_t n,
                             GeluApproximate approximate);
  // y[i] = sigmoid(x[i]), tanh(x[i]), exp(x[i]) (vec_math.h's: ~1-2 ulp, NaN kept, the limits at
  // +-inf); the elementwise kernels' contiguous float32 path (elementwise_unary.cc).
  void (*sigmoid_forward)(const float* x, float* y, int64_t n);
  void (*tanh_forward)(const float* x, float* y, int64_t n);
  void (*exp_forward)(const float* x, float* y, int64_t n);
  // y[i] = log(x[i]), log2(x[i]), log10(x[i]) (vec_math.h's: within 1.5 ulp, denormals included;
  // std::log's values at +-0, below 0, +inf and NaN); elementwise_unary.cc's contiguous float32 path.
  void (*log_forward)(const float* x, float* y, int64_t n);
  void (*log2_forward)(const float* x, float* y, int64_t n);
  void (*log10_forward)(const float* x, float* y, int64_t n);
  // One contiguous row of the softmax (log: the log-softmax) and its backward, the formulas of
  // kernels/common/softmax.h: softmax.cc's float32 path along the last axis. A NaN anywhere in a
  // row makes the whole row NaN, as the scalar loops and PyTorch. gx may alias g.
  void (*softmax_row)(const float* x, float* y, int64_t n, bool log);
  void (*softmax_backward_row)(const float* g, const float* y, float* gx, int64_t n, bool log);
  // Cross-entropy's rows (cross_entropy.cc, float32): returns sum(exp(x - m)) with *max = m, the
  // row's max; and y = exp((x - m) - log_sum), the probabilities (log_softmax_value's order).
  float (*max_and_sum_exp_row)(const float* x, int64_t n, float* max);
  void (*exp_log_softmax_row)(const float* x, float* y, int64_t n, float m, float log_sum);
};

namespace avx2 {
const ActivationSimdFns& activation_simd_fns();
}
namespace avx512 {  // built with -march=x86-64-v4 (activation_simd_avx512.cc); call only where the CPU has it
const ActivationSimdFns& activation_simd_fns();
}

// avx512's where active_cpu_isa() allows it, else avx2's.
const ActivationSimdFns& active_activation_simd_fns();

}  // namespace colony::kernels::cpu
