// Which rank owns which parameter under ZeRO: the assignment ZeroRedundancyOptimizer steps by and
// DDP's gradient sharding (DistributedDataParallelOptions::zero_stage(2)) reduces to, computed alike
// on every rank from the parameters' sizes alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace colony::dist::zero_detail {

// PyTorch's ZeroRedundancyOptimizer's partition: group by group, the parameters in decreasing
// size (ties: the earlier one first), each to the rank with the fewest elements so far (ties: the
// lowest rank), the totals carried across groups. `group_numels[g][i]` is the element count of
// group g's i-th parameter; the result has the same shape and holds each one's owner.
std::vector<std::vector<int>> assign_by_size(const std::vector<std::vector<int64_t>>& group_numels, int world);

// A run of one parameter's elements and the rank that owns it.
struct Piece {
  size_t param = 0;    // index across the groups, in order
  int64_t start = 0;   // first element of the parameter (flattened) it covers
  int64_t length = 0;
  int owner = 0;
  int64_t offset = 0;  // where it sits in its owner's flat shard
};

// Whole parameters by assign_by_size, each owner's laid out in parameter order.
std::vector<Piece> pieces_by_parameter(const std::vector<std::vector<int64_t>>& group_numels, int world);
// DeepSpeed's partition: every parameter flattened and concatenated in order, rank r owning
// elements [r S, (r + 1) S) of that space, S = ceil(total / world): shards equal to the element
// (a parameter may be split between ranks), so each rank's state is 1/world of the whole.
std::vector<Piece> pieces_by_element(const std::vector<std::vector<int64_t>>& group_numels, int world);

// DeepSpeed stage 2's partition, aligned with DDP's gradient buckets: each bucket's gradients,
// flattened in bucket order (`buckets[b]` lists (parameter index, element count)) and padded to a
// multiple of world, fall in world equal blocks, and rank r owns block r of every bucket; its shard
// is its blocks one after another. A reduce-scatter of a bucket leaves each rank its own block.
std::vector<Piece> pieces_by_bucket(const std::vector<std::vector<std::pair<size_t, int64_t>>>& buckets, int world);
// A bucket of `numel` gradient elements: each rank's block, in elements.
int64_t bucket_block(int64_t numel, int world);

// The largest rank's shard, in elements (every shard is padded to it for the all-gather).
int64_t largest_shard(const std::vector<Piece>& pieces, int world);

}  // namespace colony::dist::zero_detail
