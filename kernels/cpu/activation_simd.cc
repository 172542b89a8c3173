// activation_simd.h: the choice between the AVX2 copy of the loops (activation_simd_avx2.cc) and
// the AVX-512 one, and the split over threads (the per-ISA copies stay serial, so nothing from
// parallel.h is instantiated under -march=x86-64-v4).
#include "kernels/cpu/activation_simd.h"

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/isa_dispatch_impl.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/strided_loop.h"

namespace colony::kernels::cpu {

const ActivationSimdFns& active_activation_simd_fns() {
  return *active_copy<ActivationSimdFns>(
      {{CpuIsa::Avx2, &avx2::activation_simd_fns}, {CpuIsa::Avx512, &avx512::activation_simd_fns}});
}

namespace {

// Elements widened at a time for the 16-bit types: 2 x 4 KiB of float32 on the stack.
constexpr int64_t kBlock = 1024;

// f(x, y, m) over [0, n) in chunks of kElementwiseGrain elements at least, as the strided
// elementwise loop splits; 16-bit inputs pass through float buffers.
template <typename T, typename F>
void forward(const T* x, T* y, int64_t n, const F& f) {
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if constexpr (std::is_same_v<T, float>) {
      f(x + b, y + b, e - b);
    } else {
      float buf[kBlock];
      for (int64_t i = b; i < e; i += kBlock) {
        const int64_t m = std::min(kBlock, e - i);
        for (int64_t j = 0; j < m; ++j) buf[j] = static_cast<float>(x[i + j]);
        f(buf, buf, m);
        for (int64_t j = 0; j < m; ++j) y[i + j] = static_cast<T>(buf[j]);
      }
    }
  });
}

template <typename T, typename F>
void backward(const T* g, const T* x, T* out, int64_t n, const F& f) {
  parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if constexpr (std::is_same_v<T, float>) {
      f(g + b, x + b, out + b, e - b);
    } else {
      float gb[kBlock], xb[kBlock];
      for (int64_t i = b; i < e; i += kBlock) {
        const int64_t m = std::min(kBlock, e - i);
        for (int64_t j = 0; j < m; ++j) {
          gb[j] = static_cast<float>(g[i + j]);
          xb[j] = static_cast<float>(x[i + j]);
        }
        f(gb, xb, gb, m);
        for (int64_t j = 0; j < m; ++j) out[i + j] = static_cast<T>(gb[j]);
      }
    }
  });
}

}  // namespace

template <typename T>
void gelu_forward_simd(const T* x, T* y, int64_t n, GeluApproximate approximate) {
  const ActivationSimdFns& fns = active_activation_simd_fns();
  if constexpr (std::is_same_v<T, BFloat16>) {
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      fns.gelu_forward_bf16(&x[b].bits, &y[b].bits, e - b, approximate);
    });
  } else {
    forward(x, y, n, [&](const float* a, float* o, int64_t m) { fns.gelu_forward(a, o, m, approximate); });
  }
}

template <typename T>
void silu_forward_simd(const T* x, T* y, int64_t n) {
  const ActivationSimdFns& fns = active_activation_simd_fns();
  forward(x, y, n, [&](const float* a, float* o, int64_t m) { fns.silu_forward(a, o, m); });
}

template <typename T>
void gelu_backward_simd(const T* grad, const T* x, T* out, int64_t n, GeluApproximate approximate) {
  const ActivationSimdFns& fns = active_activation_simd_fns();
  if constexpr (std::is_same_v<T, BFloat16>) {
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
      fns.gelu_backward_bf16(&grad[b].bits, &x[b].bits, &out[b].bits, e - b, approximate);
    });
  } else {
    backward(grad, x, out, n,
             [&](const float* g, const float* a, float* o, int64_t m) { fns.gelu_backward(g, a, o, m, approximate); });
  }
}

template <typename T>
void silu_backward_simd(const T* grad, const T* x, T* out, int64_t n) {
  const ActivationSimdFns& fns = active_activation_simd_fns();
  backward(grad, x, out, n, [&](const float* g, const float* a, float* o, int64_t m) { fns.silu_backward(g, a, o, m); });
}

#define COLONY_ACTIVATION_INSTANTIATE(T)                                                           \
  template void gelu_forward_simd<T>(const T*, T*, int64_t, GeluApproximate);                      \
  template void silu_forward_simd<T>(const T*, T*, int64_t);                                       \
  template void gelu_backward_simd<T>(const T*, const T*, T*, int64_t, GeluApproximate);           \
  template void silu_backward_simd<T>(const T*, const T*, T*, int64_t);
COLONY_ACTIVATION_INSTANTIATE(float)
COLONY_ACTIVATION_INSTANTIATE(Half)
COLONY_ACTIVATION_INSTANTIATE(BFloat16)
#undef COLONY_ACTIVATION_INSTANTIATE

}  // namespace colony::kernels::cpu
