// What every CUDA kernel file shares, defined once: the launch check (after_launch of
// runtime/cuda/runtime.h: counts the launch, names the op on failure, honours COLONY_CUDA_SYNC),
// the 1-D grid sizing and grid-stride loop (kernels/common/launch_geometry.h, host-tested), warp
// and block reductions, and atomic adds for every dtype (the 16-bit floats use the native
// sm_70/sm_80 instructions; 8-bit types and bool compare-and-swap the 32-bit word that holds them).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/dtype.h"
#include "kernels/common/launch_geometry.h"
#include "runtime/cuda/runtime.h"

namespace colony::kernels::cuda {

inline cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// for (int64_t i = ...; i < n; i += ...): every index in [0, n) once over the whole grid, in 64 bits.
#define COLONY_GRID_LOOP(i, n)                                                                              \
  for (int64_t i = ::colony::kernels::grid_stride_first(blockIdx.x, blockDim.x, threadIdx.x); i < (n); \
       i += ::colony::kernels::grid_stride_step(gridDim.x, blockDim.x))

// ---- warp and block reductions ---------------------------------------------------------------

template <typename T>
__device__ __forceinline__ std::enable_if_t<std::is_arithmetic_v<T>, T> shfl_xor(T v, int mask) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_xor_sync(0xffffffffu, static_cast<int>(v), mask));
  } else {
    return __shfl_xor_sync(0xffffffffu, v, mask);
  }
}

// Every lane ends with the combination of all 32 lanes' states. A struct state S joins in by
// providing its own __device__ shfl_xor(S, int) overload next to its definition.
template <typename S, typename F>
__device__ __forceinline__ S warp_allreduce(S s, F combine) {
  for (int mask = 16; mask > 0; mask >>= 1) s = combine(s, shfl_xor(s, mask));
  return s;
}

// Every thread of the block ends with the combination of all states; `shared` holds >= 32 states
// and blockDim.x is a multiple of 32. Safe to call repeatedly in one kernel (it waits for the
// previous call's readers first).
template <typename S, typename F>
__device__ __forceinline__ S block_allreduce(S s, F combine, S* shared) {
  s = warp_allreduce(s, combine);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x / 32] = s;
  __syncthreads();
  S r = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) r = combine(r, shared[w]);
  return r;
}

struct Plus {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

// ---- atomics ---------------------------------------------------------------------------------

// a += v for 8-bit types: compare-and-swap on the aligned 32-bit word that holds the element.
template <typename T>
__device__ void atomic_add_byte(T* address, T v) {
  static_assert(sizeof(T) == 1, "8-bit types only");
  using C = compute_t<T>;
  auto addr = reinterpret_cast<uintptr_t>(address);
  auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
  const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
  const unsigned mask = 0xffu << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    T cur;
    uint8_t cur_bits = static_cast<uint8_t>((assumed & mask) >> shift);
    ::memcpy(&cur, &cur_bits, 1);
    T sum = static_cast<T>(static_cast<C>(cur) + static_cast<C>(v));
    uint8_t sum_bits;
    ::memcpy(&sum_bits, &sum, 1);
    old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned>(sum_bits) << shift));
  } while (old != assumed);
}

// *address += v, atomically, for every Colony dtype.
template <typename T>
__device__ __forceinline__ void atomic_add(T* address, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    atomicAdd(address, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: adding as unsigned wraps exactly like signed addition.
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<T, Half>) {
    // colony::Half and __half share their 16-bit layout; native since sm_70.
    atomicAdd(reinterpret_cast<__half*>(address), __float2half_rn(static_cast<float>(v)));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    // colony::BFloat16 and __nv_bfloat16 share their layout; native since sm_80.
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(address), __float2bfloat16_rn(static_cast<float>(v)));
  } else {
    atomic_add_byte(address, v);
  }
}

// *address = f(*address, v) computed in compute_t<T>, atomically, for every Colony dtype: a
// compare-and-swap loop on the element's bits, or on the aligned 32-bit word holding a 1- or 2-byte
// element (scatter_reduce's products, maxima and minima, which have no native instruction).
template <typename T, typename F>
__device__ void atomic_combine(T* address, T v, F f) {
  using C = compute_t<T>;
  auto combined = [&](T cur) { return static_cast<T>(f(static_cast<C>(cur), static_cast<C>(v))); };
  if constexpr (sizeof(T) == 8 || sizeof(T) == 4) {
    using Bits = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned int>;
    auto* word = reinterpret_cast<Bits*>(address);
    Bits old = *word, assumed;
    do {
      assumed = old;
      T cur;
      ::memcpy(&cur, &assumed, sizeof(T));
      T next = combined(cur);
      Bits next_bits;
      ::memcpy(&next_bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, next_bits);
    } while (old != assumed);
  } else {
    using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>;
    auto addr = reinterpret_cast<uintptr_t>(address);
    auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned mask = (sizeof(T) == 2 ? 0xffffu : 0xffu) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      Bits cur_bits = static_cast<Bits>((assumed & mask) >> shift);
      T cur;
      ::memcpy(&cur, &cur_bits, sizeof(T));
      T next = combined(cur);
      Bits next_bits;
      ::memcpy(&next_bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (static_cast<unsigned>(next_bits) << shift));
    } while (old != assumed);
  }
}

}  // namespace colony::kernels::cuda
