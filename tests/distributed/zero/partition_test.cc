// Which rank owns what under ZeRO: PyTorch's greedy assignment of whole parameters, and the
// element partition that splits parameters into equal shards.
#include "distributed/zero/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace colony::dist::zero_detail {
namespace {

TEST(ZeroPartition, LargestFirstToTheLeastLoadedRank) {
  // 100 -> 0; 50 -> 1; 50 -> 1 (50 < 100); 30 -> 0 (100 = 100: the lower rank); 20 -> 1.
  EXPECT_EQ(assign_by_size({{30, 50, 100, 20, 50}}, 2), (std::vector<std::vector<int>>{{0, 1, 0, 1, 1}}));
  // The totals carry over from group to group: group 1's first parameter goes to the rank group 0
  // left lighter.
  EXPECT_EQ(assign_by_size({{10, 4}, {3}}, 2), (std::vector<std::vector<int>>{{0, 1}, {1}}));
  // More ranks than parameters: the rest own nothing.
  EXPECT_EQ(assign_by_size({{5, 7}}, 4), (std::vector<std::vector<int>>{{1, 0}}));
  EXPECT_THROW(assign_by_size({{1}}, 0), std::invalid_argument);
}

// LeNet's parameters (conv1 w, b, conv2 w, b, fc1 w, b, fc2 w, b, fc3 w, b).
const std::vector<std::vector<int64_t>> kLeNet = {{450, 6, 2400, 16, 48000, 120, 10080, 84, 840, 10}};

std::vector<int64_t> shard_sizes(const std::vector<Piece>& pieces, int world) {
  std::vector<int64_t> size(world, 0);
  for (const Piece& p : pieces) size[p.owner] += p.length;
  return size;
}

TEST(ZeroPartition, WholeParametersAreLaidOutInParameterOrderPerRank) {
  const auto pieces = pieces_by_parameter(kLeNet, 2);
  ASSERT_EQ(pieces.size(), 10u);
  // fc1's weight alone on rank 0; everything else on rank 1, in order.
  EXPECT_EQ(pieces[4].owner, 0);
  EXPECT_EQ(pieces[4].offset, 0);
  EXPECT_EQ(shard_sizes(pieces, 2), (std::vector<int64_t>{48000, 14006}));
  EXPECT_EQ(pieces[0].owner, 1);
  EXPECT_EQ(pieces[0].offset, 0);
  EXPECT_EQ(pieces[1].offset, 450);
  EXPECT_EQ(largest_shard(pieces, 2), 48000);
}

TEST(ZeroPartition, ElementShardsAreEqualAndCoverEveryElementOnce) {
  const int64_t total = 62006;
  for (int world : {1, 2, 3, 4, 7}) {
    const auto pieces = pieces_by_element(kLeNet, world);
    const int64_t shard = (total + world - 1) / world;
    EXPECT_EQ(largest_shard(pieces, world), shard) << world;
    const auto sizes = shard_sizes(pieces, world);
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), int64_t{0}), total);
    for (int r = 0; r + 1 < world; ++r) EXPECT_EQ(sizes[r], shard) << "rank " << r << " of " << world;
    // Each parameter's pieces tile it in order, and each rank's pieces tile its shard.
    std::vector<int64_t> next(10, 0), filled(world, 0);
    for (const Piece& p : pieces) {
      EXPECT_EQ(p.start, next[p.param]);
      next[p.param] += p.length;
      EXPECT_EQ(p.offset, filled[p.owner]);
      filled[p.owner] += p.length;
    }
    for (size_t i = 0; i < 10; ++i) EXPECT_EQ(next[i], kLeNet[0][i]);
  }
  // fc1's weight is split across both ranks of two.
  const auto two = pieces_by_element(kLeNet, 2);
  EXPECT_EQ(two[4].param, 4u);
  EXPECT_EQ(two[4].owner, 0);
  EXPECT_EQ(two[4].length, 31003 - (450 + 6 + 2400 + 16));
  EXPECT_EQ(two[5].param, 4u);
  EXPECT_EQ(two[5].owner, 1);
  EXPECT_EQ(two[5].offset, 0);
}

TEST(ZeroPartition, BucketShardsAreEachBucketsEqualBlocks) {
  // Two buckets: params 3 (5 elements) and 1 (4) = 9 elements, blocks of 3 over 3 ranks; then param
  // 0 alone (2 elements), blocks of 1 (the third rank's is padding).
  const auto pieces = pieces_by_bucket({{{3, 5}, {1, 4}}, {{0, 2}}}, 3);
  const std::vector<Piece> want = {
      {3, 0, 3, 0, 0}, {3, 3, 2, 1, 0}, {1, 0, 1, 1, 2}, {1, 1, 3, 2, 0},  // bucket 0
      {0, 0, 1, 0, 3}, {0, 1, 1, 1, 3},                                      // bucket 1
  };
  ASSERT_EQ(pieces.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(pieces[i].param, want[i].param) << i;
    EXPECT_EQ(pieces[i].start, want[i].start) << i;
    EXPECT_EQ(pieces[i].length, want[i].length) << i;
    EXPECT_EQ(pieces[i].owner, want[i].owner) << i;
    EXPECT_EQ(pieces[i].offset, want[i].offset) << i;
  }
  EXPECT_EQ(bucket_block(9, 3), 3);
  EXPECT_EQ(bucket_block(2, 3), 1);
  EXPECT_EQ(largest_shard(pieces, 3), 4);
}

}  // namespace
}  // namespace colony::dist::zero_detail
