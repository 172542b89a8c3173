// The one elementwise kernel shape every CUDA elementwise launcher uses: a grid-stride loop over
// the output's row-major index, offsets from a coalesced MultiLayout (direct indexing when every
// operand is dense), and a functor f(const int64_t* offsets) that does the work for one element.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/common/multi_layout.h"

namespace colony::kernels::cuda {

constexpr int kElementwiseThreads = 256;
// Enough blocks to fill any current GPU several times over (an H200 holds 132 SMs x 8 such blocks);
// larger tensors loop.
constexpr int64_t kElementwiseMaxBlocks = 8192;

template <int K, typename F>
__global__ void elementwise_kernel(MultiLayout<K> layout, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t off[K];
  if (layout.contiguous) {
    for (; i < layout.numel; i += step) {
      for (int k = 0; k < K; ++k) off[k] = i;
      f(off);
    }
  } else {
    for (; i < layout.numel; i += step) {
      layout.offsets(i, off);
      f(off);
    }
  }
}

template <int K, typename F>
void launch_elementwise(const StridedLayout* const (&layouts)[K], const F& f, void* stream, const char* op) {
  MultiLayout<K> layout = make_multi_layout<K>(layouts);
  if (layout.numel == 0) return;
  int64_t blocks = std::min<int64_t>((layout.numel + kElementwiseThreads - 1) / kElementwiseThreads,
                                     kElementwiseMaxBlocks);
  elementwise_kernel<K, F><<<static_cast<unsigned>(blocks), kElementwiseThreads, 0,
                             static_cast<cudaStream_t>(stream)>>>(layout, f);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string(op) + ": CUDA kernel launch failed: " + cudaGetErrorString(err));
  }
}

}  // namespace colony::kernels::cuda
