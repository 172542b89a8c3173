// Building blocks of the row-wise CUDA kernels (reductions, softmax): a "group" of threads owns one
// row at a time — one warp for rows of up to kWarpRowLimit elements, the whole block for longer
// ones — and combines per-thread partial states with warp shuffles (and shared memory across the
// warps of a block).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {

constexpr int kRowThreads = kBlockThreads;
// Up to this many elements a warp per row keeps all lanes busy; beyond it a block per row does.
constexpr int64_t kWarpRowLimit = 1024;

inline bool use_warp_rows(int64_t len) { return len <= kWarpRowLimit; }

// Blocks for `rows` rows: 8 rows per block with warp rows, one with block rows; larger counts loop.
inline unsigned row_blocks(int64_t rows, bool warp_rows) {
  return row_grid_blocks(rows, warp_rows ? kRowThreads / 32 : 1);
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

// Every thread of the block ends with the combination of all states; `shared` holds >= 32 states.
// Safe to call repeatedly in one kernel (it waits for the previous call's readers first).
template <bool kWarp, typename S, typename F>
__device__ __forceinline__ S group_allreduce(S s, F combine, S* shared) {
  if constexpr (kWarp) {
    return warp_allreduce(s, combine);
  } else {
    return block_allreduce(s, combine, shared);
  }
}

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
