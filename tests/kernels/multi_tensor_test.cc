// Packing of the multi-tensor optimizer launches (kernels/common/multi_tensor.h): every element
// of every tensor is covered exactly once, and no launch exceeds its parameter-space limits.
#include "kernels/common/multi_tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace colony::kernels {
namespace {

// Elements covered per tensor, summed over every block of every launch; checks the limits.
std::vector<int64_t> coverage(const std::vector<int64_t>& sizes, int max_tensors, int max_blocks, int64_t chunk) {
  std::vector<int64_t> covered(sizes.size(), 0);
  std::map<std::pair<int, int>, int> seen;  // (tensor, chunk) -> times
  for (const MultiTensorLaunch& l : plan_multi_tensor_launches(sizes, max_tensors, max_blocks, chunk)) {
    EXPECT_LE(static_cast<int>(l.tensors.size()), max_tensors);
    EXPECT_LE(static_cast<int>(l.block_tensor.size()), max_blocks);
    EXPECT_FALSE(l.block_tensor.empty());
    EXPECT_EQ(l.block_tensor.size(), l.block_chunk.size());
    for (size_t b = 0; b < l.block_tensor.size(); ++b) {
      const int t = l.tensors.at(static_cast<size_t>(l.block_tensor[b]));
      const int64_t begin = l.block_chunk[b] * chunk;
      const int64_t end = std::min(begin + chunk, sizes[t]);
      EXPECT_LT(begin, end) << "an empty block";
      covered[t] += end - begin;
      ++seen[{t, l.block_chunk[b]}];
    }
  }
  for (const auto& [key, times] : seen) EXPECT_EQ(times, 1) << "tensor " << key.first << " chunk " << key.second;
  return covered;
}

TEST(MultiTensor, EveryElementOnceAcrossLaunches) {
  // Small and empty tensors, one that spans launches, more tensors than one launch holds.
  std::vector<int64_t> sizes = {1, 0, 6, 7, 65, 0, 3};
  for (int i = 0; i < 40; ++i) sizes.push_back(i * 13 + 1);
  sizes.push_back(1000);
  for (int max_tensors : {1, 2, 5, 24}) {
    for (int max_blocks : {1, 3, 320}) {
      EXPECT_EQ(coverage(sizes, max_tensors, max_blocks, 8), sizes) << max_tensors << " tensors " << max_blocks << " blocks";
    }
  }
}

TEST(MultiTensor, DefaultLimitsForAModel) {
  // LeNet-like: 10 parameters fit one launch.
  std::vector<int64_t> lenet = {450, 6, 2400, 16, 48000, 120, 10080, 84, 840, 10};
  EXPECT_EQ(plan_multi_tensor_launches(lenet).size(), 1u);
  EXPECT_EQ(coverage(lenet, kMultiTensorMaxTensors, kMultiTensorMaxBlocks, kMultiTensorChunk), lenet);
  // A tensor of more than 320 chunks continues in a second launch; 30 tensors need two.
  std::vector<int64_t> big = {kMultiTensorChunk * kMultiTensorMaxBlocks + 5};
  EXPECT_EQ(plan_multi_tensor_launches(big).size(), 2u);
  EXPECT_EQ(plan_multi_tensor_launches(std::vector<int64_t>(30, 100)).size(), 2u);
  EXPECT_TRUE(plan_multi_tensor_launches({0, 0}).empty());
}

}  // namespace
}  // namespace colony::kernels
