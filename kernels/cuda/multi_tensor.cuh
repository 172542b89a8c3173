// The CUDA side of kernels/common/multi_tensor.h, shared by every multi-tensor kernel (the
// optimizer steps, GradScaler's unscale): a launch's tensors and chunks packed into the kernel
// parameters, the range of elements a block owns, and the host loop that plans the launches and
// packs `Depth` parallel pointer lists into each.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/multi_tensor.h"
#include "kernels/cuda/launch.cuh"

namespace colony::kernels::cuda {

// One launch's tensors and chunks, passed by value in the kernel parameters (< 4 KB).
template <int Depth>
struct TensorChunks {
  void* ptr[Depth][kMultiTensorMaxTensors];
  int64_t numel[kMultiTensorMaxTensors];
  unsigned char block_tensor[kMultiTensorMaxBlocks];
  int block_chunk[kMultiTensorMaxBlocks];
};

constexpr int kMultiTensorThreads = 512;

// Block b works on chunk block_chunk[b] of tensor block_tensor[b]: [begin, end) of its elements.
// Returns the tensor's position in the launch.
template <int Depth>
__device__ __forceinline__ int block_range(const TensorChunks<Depth>& c, int64_t& begin, int64_t& end) {
  const int t = c.block_tensor[blockIdx.x];
  begin = static_cast<int64_t>(c.block_chunk[blockIdx.x]) * kMultiTensorChunk;
  end = begin + kMultiTensorChunk < c.numel[t] ? begin + kMultiTensorChunk : c.numel[t];
  return t;
}

// Runs launch(chunks, blocks) for each planned launch, with `lists` (Depth parallel pointer lists,
// an empty list meaning null pointers) packed into the kernel parameters; checks each launch.
template <int Depth, typename Launch>
void for_each_launch(const std::vector<const void*> (&lists)[Depth], const std::vector<int64_t>& numels,
                     const char* op, Launch&& launch) {
  for (int d = 0; d < Depth; ++d) {
    if (!lists[d].empty() && lists[d].size() != numels.size()) {
      throw std::invalid_argument(std::string(op) + ": tensor lists of different lengths");
    }
  }
  for (const MultiTensorLaunch& plan : plan_multi_tensor_launches(numels)) {
    TensorChunks<Depth> c{};
    for (size_t k = 0; k < plan.tensors.size(); ++k) {
      const int t = plan.tensors[k];
      for (int d = 0; d < Depth; ++d) c.ptr[d][k] = lists[d].empty() ? nullptr : const_cast<void*>(lists[d][t]);
      c.numel[k] = numels[t];
    }
    for (size_t b = 0; b < plan.block_tensor.size(); ++b) {
      c.block_tensor[b] = static_cast<unsigned char>(plan.block_tensor[b]);
      c.block_chunk[b] = plan.block_chunk[b];
    }
    launch(c, static_cast<unsigned>(plan.block_tensor.size()));
    after_launch(op);
  }
}

}  // namespace colony::kernels::cuda
