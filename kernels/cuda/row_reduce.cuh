// Building blocks of the row-wise CUDA kernels (reductions, softmax): a "group" of threads owns one
// row at a time — one warp for rows of up to kWarpRowLimit elements, the whole block for longer
// ones — and combines per-thread partial states with warp shuffles (and shared memory across the
// warps of a block).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace colony::kernels::cuda {

constexpr int kRowThreads = 256;
// Up to this many elements a warp per row keeps all lanes busy; beyond it a block per row does.
constexpr int64_t kWarpRowLimit = 1024;
constexpr int64_t kMaxRowBlocks = 1 << 16;

inline void check_launch(const char* op) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string(op) + ": CUDA kernel launch failed: " + cudaGetErrorString(err));
}

inline bool use_warp_rows(int64_t len) { return len <= kWarpRowLimit; }

// Blocks for `rows` rows: 8 rows per block with warp rows, one with block rows; larger counts loop.
inline unsigned row_blocks(int64_t rows, bool warp_rows) {
  int64_t per_block = warp_rows ? kRowThreads / 32 : 1;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min((rows + per_block - 1) / per_block, kMaxRowBlocks)));
}

template <bool kWarp>
struct RowGroup {
  int64_t first, stride;
  int lane, size;
  __device__ RowGroup() {
    if constexpr (kWarp) {
      int warps = blockDim.x / 32;
      first = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / 32;
      stride = static_cast<int64_t>(gridDim.x) * warps;
      lane = threadIdx.x & 31;
      size = 32;
    } else {
      first = blockIdx.x;
      stride = gridDim.x;
      lane = threadIdx.x;
      size = blockDim.x;
    }
  }
};

template <typename T>
__device__ __forceinline__ std::enable_if_t<std::is_arithmetic_v<T>, T> shfl_xor(T v, int mask) {
  if constexpr (sizeof(T) < 4) {
    return static_cast<T>(__shfl_xor_sync(0xffffffffu, static_cast<int>(v), mask));
  } else {
    return __shfl_xor_sync(0xffffffffu, v, mask);
  }
}

// Every lane ends with the combination of all 32 lanes' states.
template <typename S, typename F>
__device__ __forceinline__ S warp_allreduce(S s, F combine) {
  for (int mask = 16; mask > 0; mask >>= 1) s = combine(s, shfl_xor(s, mask));
  return s;
}

// Every thread of the block ends with the combination of all states; `shared` holds >= 32 states.
// Safe to call repeatedly in one kernel (it waits for the previous call's readers first).
template <bool kWarp, typename S, typename F>
__device__ __forceinline__ S group_allreduce(S s, F combine, S* shared) {
  s = warp_allreduce(s, combine);
  if constexpr (kWarp) {
    return s;
  } else {
    __syncthreads();
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x / 32] = s;
    __syncthreads();
    S r = shared[0];
    for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) r = combine(r, shared[w]);
    return r;
  }
}

struct Plus {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

template <typename T>
__device__ __forceinline__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// max that lets a NaN through (fmaxf would drop it): softmax of a row with a NaN is all NaN.
struct NanMax {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return (is_nan(a) || a > b) ? a : b; }
};

__device__ __forceinline__ float device_exp(float v) { return expf(v); }
__device__ __forceinline__ double device_exp(double v) { return exp(v); }
__device__ __forceinline__ float device_log(float v) { return logf(v); }
__device__ __forceinline__ double device_log(double v) { return log(v); }

}  // namespace colony::kernels::cuda
