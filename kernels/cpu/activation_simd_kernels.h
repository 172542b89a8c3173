// The loops of activation_simd.h, written once over vec_math.h's ISA trait. Not a normal header:
// a file defines COLONY_ACTIVATION_ISA (the namespace of its copy, avx2 or avx512) and
// COLONY_ACTIVATION_TRAIT (vec::Avx2 or vec::Avx512), then includes this, which defines that
// copy's activation_simd_fns(). Everything but that function has internal linkage (see vec_math.h).
#if !defined(COLONY_ACTIVATION_ISA) || !defined(COLONY_ACTIVATION_TRAIT)
#error "define COLONY_ACTIVATION_ISA and COLONY_ACTIVATION_TRAIT before including activation_simd_kernels.h"
#endif

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/activation_simd.h"
#include "kernels/cpu/vec_math.h"

namespace colony::kernels::cpu::COLONY_ACTIVATION_ISA {
namespace {

using I = vec::COLONY_ACTIVATION_TRAIT;
using V = I::V;
constexpr int64_t kLanes = I::kLanes;

// 2u of the tanh form, u = sqrt(2/pi) (x + 0.044715 x^3) = k1 (x + k2 x^3): x (2 k1 + 2 k1 k2 x^2).
constexpr float kK1 = static_cast<float>(kSqrtTwoOverPi);
constexpr float k2K1 = static_cast<float>(2 * kSqrtTwoOverPi);
constexpr float k2K1K2 = static_cast<float>(2 * kSqrtTwoOverPi * kGeluCubic);
constexpr float k3K1K2 = static_cast<float>(3 * kSqrtTwoOverPi * kGeluCubic);

inline V gelu_exact(V x) {
  V cdf, unused, unscale;
  vec::normal_cdf_pdf<I, false>(x, &cdf, &unused, &unscale);
  return I::mul(I::mul(x, cdf), unscale);
}

inline V two_u(V x, V x2) { return I::mul(x, I::fmadd(x2, I::set1(k2K1K2), I::set1(k2K1))); }

// x (1 + tanh u) / 2 = x sigmoid(2u).
inline V gelu_tanh(V x) {
  V sigma, one_minus, unscale;
  vec::sigmoid_pair<I>(two_u(x, I::mul(x, x)), &sigma, &one_minus, &unscale);
  return I::mul(I::mul(x, sigma), unscale);
}

inline V silu(V x) {
  V sigma, one_minus, unscale;
  vec::sigmoid_pair<I>(x, &sigma, &one_minus, &unscale);
  return I::mul(I::mul(x, sigma), unscale);
}

// The derivatives come scaled as the functions of vec_math.h leave them: g d, with d scaled by
// `unscale`'s inverse (2^32 where d is tiny), is multiplied by unscale last. (So an incoming
// gradient over ~1e34 where d is tiny would overflow; gradients that size are out of float32
// training's range.)

// Phi(x) + x phi(x).
inline V gelu_exact_grad(V g, V x) {
  V cdf, pdf, unscale;
  vec::normal_cdf_pdf<I, true>(x, &cdf, &pdf, &unscale);
  return I::mul(I::mul(g, I::fmadd(x, pdf, cdf)), unscale);
}

// sigma + 2 x sigma (1 - sigma) du/dx with sigma = sigmoid(2u), du/dx = k1 (1 + 3 k2 x^2):
// 1 + tanh u = 2 sigma and 1 - tanh^2 u = 4 sigma (1 - sigma).
inline V gelu_tanh_grad(V g, V x) {
  V x2 = I::mul(x, x);
  V sigma, one_minus, unscale;
  vec::sigmoid_pair<I>(two_u(x, x2), &sigma, &one_minus, &unscale);
  V du = I::fmadd(x2, I::set1(k3K1K2), I::set1(kK1));
  V two_x_om = I::mul(I::add(x, x), one_minus);
  return I::mul(I::mul(g, I::mul(sigma, I::fmadd(two_x_om, du, I::set1(1.0f)))), unscale);
}

// s (1 + x (1 - s)), s = sigmoid(x).
inline V silu_grad(V g, V x) {
  V s, one_minus, unscale;
  vec::sigmoid_pair<I>(x, &s, &one_minus, &unscale);
  return I::mul(I::mul(g, I::mul(s, I::fmadd(x, one_minus, I::set1(1.0f)))), unscale);
}

// The last n % kLanes elements go through masked loads and stores (the other lanes compute on 0).
template <typename F>
inline void map1(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) I::store(y + i, f(I::load(x + i)));
  if (i < n) I::store_n(y + i, f(I::load_n(x + i, n - i)), n - i);
}

// The backward's x is the forward's input, saved a whole forward and half a backward earlier, so
// in a training step it comes from memory, not cache: in char_gpt's float32 step (perf annotate)
// 37 % of gelu_backward's samples sat on x's load. Each 16-float vector costs 12-14 ns of
// arithmetic, so fetching kPrefetchAhead floats (2 KiB, 32 such vectors, ~400 ns) ahead of both
// streams covers a memory access, which the hardware prefetchers did not: gelu_backward's share
// of that step fell from 7.9 to 4.0 % (docs/benchmarks.md). Hot in cache it costs nothing seen.
constexpr int64_t kPrefetchAhead = 512;

template <typename F>
inline void map_grad(const float* g, const float* x, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    if (i + kPrefetchAhead < n) {
      _mm_prefetch(reinterpret_cast<const char*>(x + i + kPrefetchAhead), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(g + i + kPrefetchAhead), _MM_HINT_T0);
    }
    I::store(out + i, f(I::load(g + i), I::load(x + i)));
  }
  if (i < n) I::store_n(out + i, f(I::load_n(g + i, n - i), I::load_n(x + i, n - i)), n - i);
}

void gelu_forward(const float* x, float* y, int64_t n, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    map1(x, y, n, gelu_tanh);
  } else {
    map1(x, y, n, gelu_exact);
  }
}

void silu_forward(const float* x, float* y, int64_t n) { map1(x, y, n, silu); }

void gelu_backward(const float* grad, const float* x, float* out, int64_t n, GeluApproximate approximate) {
  if (approximate == GeluApproximate::Tanh) {
    map_grad(grad, x, out, n, gelu_tanh_grad);
  } else {
    map_grad(grad, x, out, n, gelu_exact_grad);
  }
}

void silu_backward(const float* grad, const float* x, float* out, int64_t n) {
  map_grad(grad, x, out, n, silu_grad);
}

#define COLONY_ACTIVATION_STR2(s) #s
#define COLONY_ACTIVATION_STR(s) COLONY_ACTIVATION_STR2(s)
constexpr ActivationSimdFns kFns = {COLONY_ACTIVATION_STR(COLONY_ACTIVATION_ISA), gelu_forward, silu_forward,
                                    gelu_backward, silu_backward};
#undef COLONY_ACTIVATION_STR
#undef COLONY_ACTIVATION_STR2

}  // namespace

const ActivationSimdFns& activation_simd_fns() { return kFns; }

}  // namespace colony::kernels::cpu::COLONY_ACTIVATION_ISA
