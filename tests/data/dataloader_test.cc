#include "data/dataloader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "data/synthetic.h"
#include "data/transformed_dataset.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

// Example i: data float [2] = {i, -i}, target i % 7. Optionally slow (so that workers finish out of
// order), failing at one index, and counting the examples it produced.
class Numbers : public Dataset {
 public:
  explicit Numbers(int64_t n, int64_t fail_at = -1, bool slow = false,
                   std::shared_ptr<std::atomic<int64_t>> loads = nullptr)
      : n_(n), fail_at_(fail_at), slow_(slow), loads_(std::move(loads)) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    if (loads_) ++*loads_;
    if (i == fail_at_) throw std::runtime_error("Numbers: example " + std::to_string(i) + " is cursed");
    if (slow_) std::this_thread::sleep_for(std::chrono::microseconds(50 + (i * 7919) % 400));
    Tensor data = raw::empty({2});
    data.data_ptr<float>()[0] = static_cast<float>(i);
    data.data_ptr<float>()[1] = -static_cast<float>(i);
    return {data, raw::scalar_tensor(static_cast<double>(i % 7), kInt64)};
  }

 private:
  int64_t n_, fail_at_;
  bool slow_;
  std::shared_ptr<std::atomic<int64_t>> loads_;
};

// The sampler order, as the loader returned it: the first column of every batch's data.
std::vector<int64_t> collect(DataLoader& loader, int64_t* batches = nullptr, std::vector<int64_t>* sizes = nullptr) {
  std::vector<int64_t> seen;
  int64_t count = 0;
  for (auto& batch : loader) {
    ++count;
    EXPECT_EQ(batch.data.dim(), 2);
    EXPECT_EQ(batch.data.size(0), batch.target.size(0));
    if (sizes) sizes->push_back(batch.size());
    for (int64_t r = 0; r < batch.size(); ++r) {
      const auto i = static_cast<int64_t>(batch.data.data_ptr<float>()[2 * r]);
      EXPECT_EQ(batch.data.data_ptr<float>()[2 * r + 1], -static_cast<float>(i));
      EXPECT_EQ(batch.target.data_ptr<int64_t>()[r], i % 7);
      seen.push_back(i);
    }
  }
  if (batches) *batches = count;
  return seen;
}

TEST(DataLoader, BatchesFollowTheSamplerWhateverTheWorkerCount) {
  for (int workers : {0, 1, 4}) {
    RandomSampler sampler(203, 17);
    DataLoader loader(Numbers(203, -1, /*slow=*/workers > 1), sampler, DataLoaderOptions(8).workers(workers));
    EXPECT_EQ(loader.size(), 26);
    std::vector<int64_t> expected = sampler.indices();
    int64_t batches = 0;
    std::vector<int64_t> sizes;
    EXPECT_EQ(collect(loader, &batches, &sizes), expected) << workers << " workers";
    EXPECT_EQ(batches, 26);
    EXPECT_EQ(sizes.back(), 203 % 8);
    EXPECT_EQ(sizes.front(), 8);
  }
}

TEST(DataLoader, DropLastAndSize) {
  SequentialSampler sampler(203);
  DataLoader loader(Numbers(203), sampler, DataLoaderOptions(8).drop_last(true).workers(2));
  EXPECT_EQ(loader.size(), 25);
  std::vector<int64_t> sizes;
  std::vector<int64_t> seen = collect(loader, nullptr, &sizes);
  EXPECT_EQ(seen.size(), 200u);
  EXPECT_EQ(sizes, std::vector<int64_t>(25, 8));
}

TEST(DataLoader, EpochsFollowTheSamplersEpoch) {
  DistributedSampler sampler(100, DistributedSamplerOptions().num_replicas(2).rank(1).seed(3));
  DataLoader loader(Numbers(100), sampler, DataLoaderOptions(10).workers(2).pin_memory(true));
  std::vector<int64_t> e0 = collect(loader);
  EXPECT_EQ(e0, sampler.indices());
  EXPECT_EQ(collect(loader), e0);  // no set_epoch: same order
  sampler.set_epoch(1);
  std::vector<int64_t> e1 = collect(loader);
  EXPECT_EQ(e1, sampler.indices());
  EXPECT_NE(e1, e0);
}

TEST(DataLoader, OwnSamplerSequentialOrShuffled) {
  DataLoader sequential(Numbers(30), DataLoaderOptions(7));
  std::vector<int64_t> expected(30);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(collect(sequential), expected);
  DataLoader shuffled(Numbers(30), DataLoaderOptions(7).shuffle(true).seed(5).workers(3));
  std::vector<int64_t> a = collect(shuffled), b = collect(shuffled);
  EXPECT_EQ(a, seeded_permutation(30, 5));
  EXPECT_EQ(b, seeded_permutation(30, 6));  // the owned RandomSampler moves on an epoch per pass
}

TEST(DataLoader, WorkerErrorReachesTheLoopWithItsMessage) {
  for (int workers : {0, 1, 4}) {
    SequentialSampler sampler(100);
    DataLoader loader(Numbers(100, /*fail_at=*/37), sampler, DataLoaderOptions(8).workers(workers));
    int64_t batches_before = 0;
    auto run = [&] {
      for (auto& batch : loader) {
        (void)batch;
        ++batches_before;
      }
    };
    EXPECT_TRUE(throws_with<DataLoaderError>(run, "Numbers: example 37 is cursed")) << workers;
    EXPECT_EQ(batches_before, 4);  // batches 0..3 arrived, batch 4 (indices 32..39) failed
    batches_before = 0;
    EXPECT_TRUE(throws_with<DataLoaderError>(run, "batch 4 (dataset index 37)")) << workers;
    // The original exception is nested inside.
    try {
      run();
    } catch (const DataLoaderError& e) {
      EXPECT_THROW(std::rethrow_if_nested(e), std::runtime_error);
    }
  }
}

TEST(DataLoader, ErrorInTheFirstBatchComesFromBegin) {
  SequentialSampler sampler(10);
  DataLoader loader(Numbers(10, 1), sampler, DataLoaderOptions(4).workers(2));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { loader.begin(); }, "batch 0 (dataset index 1)"));
  // Example 0 is read first to learn the batch shape (the default example_shape()).
  DataLoader first(Numbers(10, 0), sampler, DataLoaderOptions(4).workers(2));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { first.begin(); }, "example 0 is cursed"));
}

TEST(DataLoader, BreakingOutStopsTheWorkers) {
  auto loads = std::make_shared<std::atomic<int64_t>>(0);
  SequentialSampler sampler(4000);
  DataLoader loader(Numbers(4000, -1, /*slow=*/true, loads), sampler, DataLoaderOptions(10).workers(4).prefetch(2));
  int64_t taken = 0;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.size(), 10);
    if (++taken == 3) break;
  }
  // The workers are joined when the loop ends: nothing loads afterwards, and at most the 8 buffers
  // ahead of the 3 consumed batches were filled.
  const int64_t after_break = loads->load();
  EXPECT_LE(after_break, (3 + 8) * 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loads->load(), after_break);
  // The loader still works afterwards, from the start.
  loads->store(0);
  int64_t batches = 0;
  for (auto it = loader.begin(); it != loader.end() && batches < 2; ++it) ++batches;
  EXPECT_EQ(batches, 2);
}

TEST(DataLoader, DestroyingTheLoaderMidPassDoesNotHang) {
  SequentialSampler sampler(2000);
  auto loader = std::make_unique<DataLoader>(Numbers(2000, -1, true), sampler, DataLoaderOptions(16).workers(4));
  {
    auto it = loader->begin();
    ++it;
    EXPECT_EQ(it->size(), 16);
  }  // the iterator (and its pass) ends here
  loader.reset();
  SUCCEED();
}

TEST(DataLoader, KeptBatchesStayIntact) {
  SequentialSampler sampler(64);
  DataLoader loader(Numbers(64), sampler, DataLoaderOptions(4).workers(2).prefetch(1));
  std::vector<Batch> kept;
  for (auto& batch : loader) kept.push_back(batch);
  ASSERT_EQ(kept.size(), 16u);
  for (int64_t b = 0; b < 16; ++b) {
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(kept[b].data.data_ptr<float>()[2 * r], static_cast<float>(4 * b + r));
  }
}

TEST(DataLoader, RandomTransformsDoNotDependOnTheWorkerCount) {
  auto ds = SyntheticCIFAR10(Split::kTest, 1)
                .transform(RandomCrop(32, 4), RandomHorizontalFlip(), Normalize({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}));
  auto batches = [&](int workers, int64_t epoch) {
    RandomSampler sampler(200, 4);
    sampler.set_epoch(epoch);
    DataLoader loader(ds, sampler, DataLoaderOptions(32).workers(workers).seed(12));
    std::vector<Tensor> out;
    for (auto& b : loader) {
      EXPECT_EQ(b.data.dtype(), kFloat32);
      EXPECT_EQ(b.data.sizes()[1], 3);
      out.push_back(raw::clone(b.data));
    }
    return out;
  };
  std::vector<Tensor> w0 = batches(0, 2), w4 = batches(4, 2), other_epoch = batches(4, 3);
  ASSERT_EQ(w0.size(), 7u);
  for (size_t i = 0; i < w0.size(); ++i) EXPECT_TRUE(raw::equal(w0[i], w4[i])) << "batch " << i;
  EXPECT_FALSE(raw::equal(w0[0], other_epoch[0]));
}

TEST(DataLoader, RejectsBadOptionsAndIndices) {
  SequentialSampler sampler(10);
  EXPECT_TRUE(throws_with([&] { DataLoader(Numbers(10), sampler, DataLoaderOptions(0)); }, "batch_size must be >= 1"));
  EXPECT_TRUE(
      throws_with([&] { DataLoader(Numbers(10), sampler, DataLoaderOptions(2).workers(-1)); }, "workers must be >= 0"));
  SequentialSampler too_long(11);
  DataLoader loader(Numbers(10), too_long, DataLoaderOptions(2));
  EXPECT_TRUE(throws_with([&] { loader.begin(); }, "the sampler yields index 10 but the dataset holds 10 examples"));
}

TEST(DataLoader, EmptySamplerGivesNoBatches) {
  SequentialSampler sampler(0);
  DataLoader loader(Numbers(0), sampler, DataLoaderOptions(4).workers(2));
  EXPECT_EQ(loader.size(), 0);
  EXPECT_TRUE(loader.begin() == loader.end());
}

}  // namespace
}  // namespace colony::data
