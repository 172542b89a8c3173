// BatchSampler and the DataLoader's batch_sampler: torch 2.15's batches for the deterministic
// samplers (the lists below are what torch printed for the same arguments), batches of any sizes
// from a batch sampler of one's own with 0, 1 and 3 workers, a DistributedSampler underneath, and
// torch's refusals.
#include "data/batch_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "data/dataloader.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;
using Batches = std::vector<std::vector<int64_t>>;

// Example i: data float [1] = {i}, target i % 5; slow with workers, so that they finish out of order.
class Indices : public Dataset {
 public:
  explicit Indices(int64_t n, bool slow = false) : n_(n), slow_(slow) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    check_index(i, "Indices");
    if (slow_) std::this_thread::sleep_for(std::chrono::microseconds(30 + (i * 7919) % 300));
    return {raw::full({1}, static_cast<double>(i)), raw::scalar_tensor(static_cast<double>(i % 5), kInt64)};
  }

 private:
  int64_t n_;
  bool slow_;
};

// The batches as the loader gave them: each batch's indices, read back from its data and targets.
Batches collect(DataLoader& loader) {
  Batches out;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.data.dim(), 2);
    EXPECT_EQ(batch.data.size(0), batch.size());
    std::vector<int64_t> ids;
    for (int64_t r = 0; r < batch.size(); ++r) {
      const auto i = static_cast<int64_t>(batch.data.data_ptr<float>()[r]);
      EXPECT_EQ(batch.target.data_ptr<int64_t>()[r], i % 5);
      ids.push_back(i);
    }
    out.push_back(ids);
  }
  return out;
}

TEST(BatchSampler, CutsTheSamplersOrderAsTorch) {
  SequentialSampler order(10);
  BatchSampler keep(order, 3, false), drop(order, 3, true);
  // torch: list(BatchSampler(SequentialSampler(range(10)), 3, drop_last))
  EXPECT_EQ(keep.next_pass(), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
  EXPECT_EQ(drop.next_pass(), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}));
  EXPECT_EQ(keep.size(), 4);
  EXPECT_EQ(drop.size(), 3);
  BatchSampler exact(SequentialSampler(6), 3, true);  // an owned sampler
  EXPECT_EQ(exact.next_pass(), (Batches{{0, 1, 2}, {3, 4, 5}}));
}

TEST(BatchSampler, OverADistributedSamplerAsTorch) {
  // torch: list(BatchSampler(DistributedSampler(range(10), num_replicas=3, rank=1, shuffle=False,
  //                                             drop_last=d), 2, d))
  DistributedSampler padded(10, DistributedSamplerOptions().num_replicas(3).rank(1).shuffle(false));
  EXPECT_EQ(BatchSampler(padded, 2, false).next_pass(), (Batches{{1, 4}, {7, 0}}));
  DistributedSampler dropped(10, DistributedSamplerOptions().num_replicas(3).rank(1).shuffle(false).drop_last(true));
  EXPECT_EQ(BatchSampler(dropped, 2, true).next_pass(), (Batches{{1, 4}}));
}

TEST(BatchSampler, ForwardsTheEpochAndReshufflesEachPass) {
  DistributedSampler ranks(40, DistributedSamplerOptions().num_replicas(2).rank(0).seed(7));
  BatchSampler batches(ranks, 4, false);
  const Batches e0 = batches.next_pass();
  EXPECT_EQ(batches.next_pass(), e0);  // DistributedSampler: the epoch is set_epoch's
  batches.set_epoch(1);
  EXPECT_EQ(ranks.epoch(), 1);
  EXPECT_EQ(batches.epoch(), 1);
  EXPECT_NE(batches.next_pass(), e0);
  // Over a RandomSampler every pass is another permutation, each index once.
  BatchSampler shuffled(RandomSampler(23, 3), 5, false);
  const Batches p0 = shuffled.next_pass(), p1 = shuffled.next_pass();
  EXPECT_NE(p0, p1);
  for (const Batches& pass : {p0, p1}) {
    std::vector<int64_t> all;
    for (const auto& b : pass) all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expected(23);
    for (int64_t i = 0; i < 23; ++i) expected[static_cast<size_t>(i)] = i;
    EXPECT_EQ(all, expected);
  }
}

TEST(BatchSampler, RefusesANonPositiveBatchSize) {
  SequentialSampler order(10);
  EXPECT_TRUE(throws_with([&] { BatchSampler(order, 0, false); },
                          "batch_size should be a positive integer value, but got batch_size=0"));
}

// Batches of similar lengths: indices sorted by a length, cut where a token budget would overflow.
class LengthBuckets : public BatchSamplerBase {
 public:
  LengthBuckets(std::vector<int64_t> lengths, int64_t budget) : lengths_(std::move(lengths)), budget_(budget) {}
  int64_t size() const override { return static_cast<int64_t>(batches().size()); }
  Batches next_pass() override { return batches(); }

 private:
  Batches batches() const {
    std::vector<int64_t> order(lengths_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lengths_[a] < lengths_[b]; });
    Batches out;
    int64_t longest = 0;
    for (int64_t i : order) {
      longest = std::max(longest, lengths_[static_cast<size_t>(i)]);
      if (out.empty() || longest * static_cast<int64_t>(out.back().size() + 1) > budget_) {
        out.push_back({});
        longest = lengths_[static_cast<size_t>(i)];
      }
      out.back().push_back(i);
    }
    return out;
  }
  std::vector<int64_t> lengths_;
  int64_t budget_;
};

TEST(DataLoaderBatchSampler, BatchesOfAnySizeInTheBatchSamplersOrder) {
  std::vector<int64_t> lengths;
  for (int64_t i = 0; i < 97; ++i) lengths.push_back(1 + (i * 37) % 23);
  LengthBuckets buckets(lengths, 40);
  const Batches expected = buckets.next_pass();
  ASSERT_GT(expected.size(), 5u);
  for (int workers : {0, 1, 3}) {
    DataLoader loader(Indices(97, /*slow=*/workers > 1), buckets, DataLoaderOptions().workers(workers));
    EXPECT_EQ(loader.size(), static_cast<int64_t>(expected.size()));
    EXPECT_EQ(collect(loader), expected) << workers << " workers";
    EXPECT_EQ(collect(loader), expected) << workers << " workers, second pass";
  }
}

TEST(DataLoaderBatchSampler, DistributedSamplerUnderneathFollowsSetEpoch) {
  for (int workers : {0, 1, 3}) {
    DistributedSampler ranks(50, DistributedSamplerOptions().num_replicas(2).rank(1).seed(4));
    BatchSampler batches(ranks, 4, true);
    DataLoader loader(Indices(50, workers > 1), batches, DataLoaderOptions().workers(workers).pin_memory(true));
    EXPECT_EQ(loader.size(), 6);  // 25 samples for rank 1, drop_last
    const Batches e0 = collect(loader);
    EXPECT_EQ(e0, batches.next_pass());
    batches.set_epoch(1);
    const Batches e1 = collect(loader);
    EXPECT_EQ(e1, batches.next_pass());
    EXPECT_NE(e1, e0);
  }
}

TEST(DataLoaderBatchSampler, RefusesWhatTorchRefuses) {
  SequentialSampler order(10);
  BatchSampler batches(order, 3, false);
  const std::string exclusive = "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last";
  EXPECT_TRUE(throws_with([&] { DataLoader(Indices(10), batches, DataLoaderOptions(2)); }, exclusive));
  EXPECT_TRUE(throws_with([&] { DataLoader(Indices(10), batches, DataLoaderOptions().shuffle(true)); }, exclusive));
  EXPECT_TRUE(throws_with([&] { DataLoader(Indices(10), batches, DataLoaderOptions().drop_last(true)); }, exclusive));
  DataLoader loader(Indices(10), batches);
  EXPECT_TRUE(throws_with<std::logic_error>([&] { loader.sampler(); }, "takes its batches from batch_sampler()"));
  EXPECT_EQ(&loader.batch_sampler(), &batches);
  // Indices outside the dataset, and an empty batch.
  struct Fixed : BatchSamplerBase {
    explicit Fixed(Batches b) : b_(std::move(b)) {}
    int64_t size() const override { return static_cast<int64_t>(b_.size()); }
    Batches next_pass() override { return b_; }
    Batches b_;
  };
  Fixed outside({{0, 1}, {10}}), empty({{0}, {}});
  DataLoader past(Indices(10), outside), hollow(Indices(10), empty);
  EXPECT_TRUE(throws_with([&] { past.begin(); }, "the batch sampler yields index 10 but the dataset holds 10 examples"));
  EXPECT_TRUE(throws_with([&] { hollow.begin(); }, "batch 1 of the batch sampler is empty"));
  // An iterable dataset takes no batch sampler (torch names the object; Colony its type).
  struct Nothing : IterableDataset {
    std::unique_ptr<ExampleStream> iter() const override { return nullptr; }
  };
  EXPECT_TRUE(throws_with([&] { DataLoader(Nothing(), batches); },
                          "DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                          "batch_sampler=colony::data::BatchSampler"));
}

}  // namespace
}  // namespace colony::data
