#include "data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

bool is_permutation_of_range(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  return v == iota(n);
}

DistributedSampler make(int64_t size, int64_t replicas, int64_t rank, bool shuffle, bool drop_last, uint64_t seed = 0) {
  return DistributedSampler(
      size,
      DistributedSamplerOptions().num_replicas(replicas).rank(rank).shuffle(shuffle).drop_last(drop_last).seed(seed));
}

TEST(SequentialSampler, Order) {
  SequentialSampler s(5);
  EXPECT_EQ(s.size(), 5);
  EXPECT_EQ(s.indices(), iota(5));
}

TEST(RandomSampler, PermutationPerEpochDeterministicFromSeed) {
  RandomSampler a(1000, 42), b(1000, 42), c(1000, 43);
  std::vector<int64_t> e0 = a.indices();
  EXPECT_TRUE(is_permutation_of_range(e0, 1000));
  EXPECT_NE(e0, iota(1000));
  EXPECT_EQ(e0, b.indices());
  EXPECT_NE(e0, c.indices());
  // Each pass moves to the next epoch, so passes reshuffle; set_epoch picks the epoch explicitly.
  EXPECT_EQ(a.next_pass(), e0);
  EXPECT_EQ(a.epoch(), 1);
  std::vector<int64_t> e1 = a.next_pass();
  EXPECT_NE(e1, e0);
  b.set_epoch(1);
  EXPECT_EQ(b.indices(), e1);
}

TEST(RandomSampler, StateRoundTrip) {
  RandomSampler a(100, 5);
  a.next_pass();
  a.next_pass();
  SamplerState st = a.state();
  EXPECT_EQ(st.seed, 5u);
  EXPECT_EQ(st.epoch, 2);
  RandomSampler b(100, 0);
  b.load_state(st);
  EXPECT_EQ(b.next_pass(), a.next_pass());
}

TEST(DistributedSampler, DivisibleSizeSplitsStrided) {
  for (int64_t rank = 0; rank < 4; ++rank) {
    DistributedSampler s = make(12, 4, rank, /*shuffle=*/false, /*drop_last=*/false);
    EXPECT_EQ(s.num_samples(), 3);
    EXPECT_EQ(s.total_size(), 12);
    EXPECT_EQ(s.size(), 3);
    EXPECT_EQ(s.indices(), (std::vector<int64_t>{rank, rank + 4, rank + 8}));
  }
}

TEST(DistributedSampler, NonDivisiblePadsByRepeatingFromTheStart) {
  // 10 over 4 replicas: num_samples 3, total 12, the list 0..9 padded with 0, 1.
  const std::vector<std::vector<int64_t>> expected = {{0, 4, 8}, {1, 5, 9}, {2, 6, 0}, {3, 7, 1}};
  for (int64_t rank = 0; rank < 4; ++rank) {
    DistributedSampler s = make(10, 4, rank, false, false);
    EXPECT_EQ(s.num_samples(), 3);
    EXPECT_EQ(s.total_size(), 12);
    EXPECT_EQ(s.indices(), expected[rank]);
  }
}

TEST(DistributedSampler, PaddingCyclesWhenDatasetIsSmallerThanReplicas) {
  // 2 examples over 5 replicas: PyTorch repeats the list as often as needed: 0, 1, 0, 1, 0.
  std::vector<int64_t> got;
  for (int64_t rank = 0; rank < 5; ++rank) {
    DistributedSampler s = make(2, 5, rank, false, false);
    ASSERT_EQ(s.num_samples(), 1);
    got.push_back(s.indices()[0]);
  }
  EXPECT_EQ(got, (std::vector<int64_t>{0, 1, 0, 1, 0}));
}

TEST(DistributedSampler, DropLastTruncates) {
  // 10 over 4 with drop_last: num_samples floor(10 / 4) = 2, total 8, indices 8 and 9 dropped.
  const std::vector<std::vector<int64_t>> expected = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int64_t rank = 0; rank < 4; ++rank) {
    DistributedSampler s = make(10, 4, rank, false, true);
    EXPECT_EQ(s.num_samples(), 2);
    EXPECT_EQ(s.total_size(), 8);
    EXPECT_EQ(s.indices(), expected[rank]);
  }
  // Divisible sizes lose nothing.
  EXPECT_EQ(make(12, 4, 0, false, true).num_samples(), 3);
}

TEST(DistributedSampler, ShuffledRanksAreDisjointAndCoverTheDataset) {
  for (bool drop_last : {false, true}) {
    std::vector<int64_t> all;
    for (int64_t rank = 0; rank < 3; ++rank) {
      DistributedSampler s = make(3000, 3, rank, true, drop_last, 11);
      s.set_epoch(5);
      std::vector<int64_t> mine = s.indices();
      EXPECT_EQ(static_cast<int64_t>(mine.size()), 1000);
      all.insert(all.end(), mine.begin(), mine.end());
    }
    EXPECT_TRUE(is_permutation_of_range(all, 3000));
  }
  // Non-divisible, shuffled: the union is the whole dataset plus the first (total - n) of the
  // epoch's permutation, each rank's share disjoint from the others' in positions.
  std::multiset<int64_t> seen;
  for (int64_t rank = 0; rank < 4; ++rank) {
    for (int64_t i : make(1001, 4, rank, true, false, 3).indices()) seen.insert(i);
  }
  EXPECT_EQ(seen.size(), 1004u);
  for (int64_t i = 0; i < 1001; ++i) EXPECT_GE(seen.count(i), 1u);
}

// The comment in sampler.cc: padding repeats the epoch's list from its start, so with shuffle the
// padded entries are the first of the epoch's permutation, not 0, 1, ...
TEST(DistributedSampler, ShuffledPaddingRepeatsTheStartOfTheEpochsPermutation) {
  // 10 over 4 replicas: total 12, list positions 10 and 11 (the last of ranks 2 and 3) are padding.
  const uint64_t seed = 3;
  const int64_t epoch = 2;
  const std::vector<int64_t> perm = seeded_permutation(10, seed + epoch);
  ASSERT_FALSE(perm[0] == 0 && perm[1] == 1) << "a seed whose permutation does not start 0, 1 tells them apart";
  for (int64_t rank = 0; rank < 4; ++rank) {
    DistributedSampler s = make(10, 4, rank, /*shuffle=*/true, /*drop_last=*/false, seed);
    s.set_epoch(epoch);
    std::vector<int64_t> expected;
    for (int64_t i = rank; i < 12; i += 4) expected.push_back(perm[i % 10]);
    EXPECT_EQ(s.indices(), expected) << "rank " << rank;
  }
  DistributedSampler rank2 = make(10, 4, 2, true, false, seed), rank3 = make(10, 4, 3, true, false, seed);
  rank2.set_epoch(epoch);
  rank3.set_epoch(epoch);
  EXPECT_EQ(rank2.indices().back(), perm[0]);
  EXPECT_EQ(rank3.indices().back(), perm[1]);
}

// A run of one rank took 6 samples of the epoch (two batches of 3); the run resumed on two ranks
// takes exactly the rest: every sample of the epoch once over both runs, the same strided split.
TEST(DistributedSampler, SetStartResumesTheEpochWithAnotherWorldSize) {
  const uint64_t seed = 4;
  const std::vector<int64_t> perm = seeded_permutation(20, seed + 1);
  DistributedSampler first = make(20, 1, 0, true, false, seed);
  first.set_epoch(1);
  const std::vector<int64_t> epoch_list = first.indices();
  std::vector<int64_t> taken(epoch_list.begin(), epoch_list.begin() + 6);
  std::vector<int64_t> rest;
  for (int64_t rank = 0; rank < 2; ++rank) {
    DistributedSampler s = make(20, 2, rank, true, false, seed);
    s.set_epoch(1);
    s.set_start(6);
    EXPECT_EQ(s.start(), 6);
    EXPECT_EQ(s.size(), 7);  // (20 - 6) / 2
    const std::vector<int64_t> mine = s.indices();
    ASSERT_EQ(static_cast<int64_t>(mine.size()), s.size());
    for (size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(mine[i], perm[6 + rank + 2 * i]);
    rest.insert(rest.end(), mine.begin(), mine.end());
    s.set_epoch(2);  // the next epoch starts from its beginning
    EXPECT_EQ(s.start(), 0);
    EXPECT_EQ(s.size(), 10);
  }
  taken.insert(taken.end(), rest.begin(), rest.end());
  EXPECT_TRUE(is_permutation_of_range(taken, 20));
}

TEST(DistributedSampler, SetStartRefusesPositionsRanksCannotShare) {
  DistributedSampler s = make(20, 3, 0, true, false);  // total 21
  EXPECT_TRUE(throws_with([&] { s.set_start(4); }, "position 4 is not a multiple of num_replicas 3"));
  EXPECT_TRUE(throws_with([&] { s.set_start(24); }, "position 24 is outside the epoch's 21 samples"));
  EXPECT_TRUE(throws_with([&] { s.set_start(-3); }, "position -3 is outside"));
  s.set_start(21);
  EXPECT_EQ(s.size(), 0);
  EXPECT_TRUE(s.indices().empty());
}

TEST(DistributedSampler, ShuffleDependsOnSeedPlusEpoch) {
  DistributedSampler a = make(500, 2, 1, true, false, 10);
  std::vector<int64_t> e0 = a.indices();
  a.set_epoch(1);
  std::vector<int64_t> e1 = a.indices();
  EXPECT_NE(e0, e1);
  EXPECT_EQ(a.indices(), e1);  // no set_epoch, no reshuffle (PyTorch's behaviour)
  EXPECT_EQ(a.next_pass(), e1);
  // The generator is seeded with seed + epoch: seed 11 at epoch 0 equals seed 10 at epoch 1.
  EXPECT_EQ(make(500, 2, 1, true, false, 11).indices(), e1);
  // One replica, shuffled: the seeded permutation itself.
  EXPECT_EQ(make(500, 1, 0, true, false, 10).indices(), seeded_permutation(500, 10));
}

TEST(DistributedSampler, StateRoundTrip) {
  DistributedSampler a = make(100, 2, 0, true, false, 9);
  a.set_epoch(7);
  DistributedSampler b = make(100, 2, 0, true, false, 0);
  b.load_state(a.state());
  EXPECT_EQ(b.epoch(), 7);
  EXPECT_EQ(b.indices(), a.indices());
}

TEST(DistributedSampler, RanksFromTheEnvironment) {
  setenv("WORLD_SIZE", "3", 1);
  setenv("RANK", "2", 1);
  DistributedSampler s(10, DistributedSamplerOptions().shuffle(false));
  EXPECT_EQ(s.num_replicas(), 3);
  EXPECT_EQ(s.rank(), 2);
  EXPECT_EQ(s.indices(), (std::vector<int64_t>{2, 5, 8, 1}));
  setenv("RANK", "two", 1);
  EXPECT_TRUE(throws_with([] { DistributedSampler(10); }, "RANK='two' is not an integer"));
  unsetenv("WORLD_SIZE");
  unsetenv("RANK");
  DistributedSampler single(10);
  EXPECT_EQ(single.num_replicas(), 1);
  EXPECT_EQ(single.rank(), 0);
  EXPECT_TRUE(is_permutation_of_range(single.indices(), 10));
}

TEST(DistributedSampler, InvalidRankOrReplicas) {
  EXPECT_TRUE(
      throws_with([] { make(10, 2, 2, false, false); }, "invalid rank 2, rank should be in the interval [0, 1]"));
  EXPECT_TRUE(throws_with([] { make(10, 0, 0, false, false); }, "num_replicas must be >= 1"));
}

TEST(DistributedSampler, EmptyDataset) {
  DistributedSampler s = make(0, 2, 1, true, false);
  EXPECT_EQ(s.num_samples(), 0);
  EXPECT_TRUE(s.indices().empty());
}

}  // namespace
}  // namespace colony::data

TEST(SubsetSampler, StridedShardsCoverEverySampleExactlyOnce) {
  std::vector<int> seen(10, 0);
  for (int r = 0; r < 3; ++r) {
    auto s = colony::data::SubsetSampler::strided(10, r, 3);
    for (int64_t i : s.indices()) ++seen[i];
    EXPECT_EQ(s.size(), r == 0 ? 4 : 3);
  }
  for (int c : seen) EXPECT_EQ(c, 1);
  EXPECT_EQ(colony::data::SubsetSampler({5, 2, 7}).indices(), (std::vector<int64_t>{5, 2, 7}));
  EXPECT_THROW(colony::data::SubsetSampler::strided(10, 0, 0), std::invalid_argument);
  EXPECT_THROW(colony::data::SubsetSampler({1, -1}), std::invalid_argument);
}

namespace colony::data {
namespace {

TEST(SubsetRandomSampler, PermutesTheGivenIndicesAndReshufflesEachPass) {
  const std::vector<int64_t> chosen{40, 7, 13, 99, 2, 58, 21, 5};
  SubsetRandomSampler s(chosen, /*seed=*/3);
  EXPECT_EQ(s.size(), 8);
  const std::vector<int64_t> first = s.next_pass();
  std::vector<int64_t> sorted = first, want = chosen;
  std::sort(sorted.begin(), sorted.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(sorted, want);
  EXPECT_NE(first, chosen);
  EXPECT_EQ(s.epoch(), 1);
  const std::vector<int64_t> second = s.next_pass();
  EXPECT_NE(second, first);
  // The same seed and epoch give the same order.
  SubsetRandomSampler again(chosen, 3);
  EXPECT_EQ(again.indices(), first);
  again.set_epoch(1);
  EXPECT_EQ(again.indices(), second);
  EXPECT_NE(SubsetRandomSampler(chosen, 4).indices(), first);
  EXPECT_TRUE(SubsetRandomSampler({}).indices().empty());
  EXPECT_TRUE(throws_with([] { SubsetRandomSampler({1, -2}); }, "SubsetRandomSampler: index -2 is negative"));
}

}  // namespace
}  // namespace colony::data
