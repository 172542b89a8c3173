// How the multi-tensor optimizer kernels cover many tensors with few launches (PyTorch's
// multi_tensor_apply): each tensor is cut into chunks of kMultiTensorChunk elements, each block
// of a launch updates one chunk, and one launch carries up to kMultiTensorMaxTensors tensors and
// kMultiTensorMaxBlocks chunks in its kernel parameters. Plain C++ so the packing is host-tested.
#pragma once

#include <cstdint>
#include <vector>

namespace colony::kernels {

// 64K elements per block (128 per thread with 512 threads): long enough to hide the block's
// start-up, short enough that a 10M-parameter model still spreads over ~150 blocks.
constexpr int64_t kMultiTensorChunk = 65536;
// Kernel parameters must stay under 4 KB: with 6 pointer lists (Adam with amsgrad and step
// counts on the device) 24 tensors take 6 x 24 x 8 + 24 x 8 = 1344 bytes, and 320 blocks
// 320 x (1 + 4) = 1600 bytes.
constexpr int kMultiTensorMaxTensors = 24;
constexpr int kMultiTensorMaxBlocks = 320;

struct MultiTensorLaunch {
  std::vector<int> tensors;       // indices into the caller's list, at most kMultiTensorMaxTensors
  std::vector<int> block_tensor;  // per block: position in `tensors`
  std::vector<int> block_chunk;   // per block: chunk index within that tensor
};

// The launches that update every element of tensors of the given sizes exactly once. Empty
// tensors get no block; a tensor whose chunks overflow a launch continues in the next one.
inline std::vector<MultiTensorLaunch> plan_multi_tensor_launches(const std::vector<int64_t>& sizes,
                                                                 int max_tensors = kMultiTensorMaxTensors,
                                                                 int max_blocks = kMultiTensorMaxBlocks,
                                                                 int64_t chunk = kMultiTensorChunk) {
  std::vector<MultiTensorLaunch> launches;
  MultiTensorLaunch cur;
  for (int t = 0; t < static_cast<int>(sizes.size()); ++t) {
    const int64_t chunks = (sizes[t] + chunk - 1) / chunk;
    for (int64_t c = 0; c < chunks; ++c) {
      const bool tensor_listed = !cur.tensors.empty() && cur.tensors.back() == t;
      if (static_cast<int>(cur.block_tensor.size()) == max_blocks ||
          (!tensor_listed && static_cast<int>(cur.tensors.size()) == max_tensors)) {
        launches.push_back(std::move(cur));
        cur = MultiTensorLaunch{};
      }
      if (cur.tensors.empty() || cur.tensors.back() != t) cur.tensors.push_back(t);
      cur.block_tensor.push_back(static_cast<int>(cur.tensors.size()) - 1);
      cur.block_chunk.push_back(static_cast<int>(c));
    }
  }
  if (!cur.block_tensor.empty()) launches.push_back(std::move(cur));
  return launches;
}

}  // namespace colony::kernels
