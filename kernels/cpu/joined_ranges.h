// Elementwise work over many tensors split across the threads as one range: the tensors' elements
// laid end to end, each thread's piece cut at the tensors' boundaries. The multi-tensor optimizer
// steps use it (PyTorch's fused / foreach optimizers): a model's many small tensors (biases,
// LayerNorm's weights) share the threads instead of each running on one, and the whole step costs
// one wake-up of the pool instead of one per tensor.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/parallel.h"

namespace colony::kernels::cpu {

// Elements a thread takes at least in an optimizer step: 16K (about 5 us of AdamW's update, ~20
// bytes moved per element) outweighs waking the other thread.
constexpr int64_t kOptimStepGrain = 1 << 14;

// Calls fn(t, begin, end) for elements [begin, end) of tensor t (sizes[t] elements), covering
// every element once; pieces of at least `grain` elements run on the pool's threads.
template <typename Fn>
void for_each_joined_range(const std::vector<int64_t>& sizes, int64_t grain, Fn&& fn) {
  std::vector<int64_t> offsets(sizes.size() + 1, 0);  // where each tensor starts in the joined range
  for (size_t i = 0; i < sizes.size(); ++i) offsets[i + 1] = offsets[i] + sizes[i];
  parallel_for(offsets.back(), grain, [&](int64_t begin, int64_t end) {
    size_t t = static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), begin) - offsets.begin()) - 1;
    for (; begin < end; ++t) {
      const int64_t stop = std::min(end, offsets[t + 1]);
      if (stop > begin) fn(t, begin - offsets[t], stop - offsets[t]);
      begin = stop;
    }
  });
}

}  // namespace colony::kernels::cpu
