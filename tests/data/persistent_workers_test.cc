// persistent_workers and timeout: the same worker threads every pass, worker_init_fn once in each
// (its thread_local state lives on), each epoch still reshuffled, a new pass ending the live one,
// iterable datasets too; a worker batch that takes longer than `timeout`; torch's refusals.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "data/dataloader.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

thread_local int worker_tag = 0;  // set by worker_init_fn: 1 + the worker id

// Example i: data float [1] = {i}, target 0. Records the worker threads that load it and the tag they carry;
// sleeps `sleep_ms` per example.
class Recorded : public Dataset {
 public:
  struct Log {
    std::mutex mu;
    std::set<std::thread::id> threads;
    std::atomic<int> untagged{0};
  };
  Recorded(int64_t n, std::shared_ptr<Log> log, int sleep_ms = 0) : n_(n), log_(std::move(log)), sleep_ms_(sleep_ms) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    if (sleep_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    if (log_ && get_worker_info()) {  // not the calling thread's example_shape() reads
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->threads.insert(std::this_thread::get_id());
      if (worker_tag == 0) ++log_->untagged;
    }
    return {raw::full({1}, static_cast<double>(i)), raw::scalar_tensor(0, kInt64)};
  }

 private:
  int64_t n_;
  std::shared_ptr<Log> log_;
  int sleep_ms_;
};

std::vector<int64_t> order_of(DataLoader& loader) {
  std::vector<int64_t> seen;
  for (auto& batch : loader) {
    for (int64_t r = 0; r < batch.size(); ++r) seen.push_back(static_cast<int64_t>(batch.data.data_ptr<float>()[r]));
  }
  return seen;
}

TEST(PersistentWorkers, SameThreadsInitOnceAndEachEpochReshuffled) {
  for (int workers : {1, 3}) {
    auto log = std::make_shared<Recorded::Log>();
    std::atomic<int> inits{0};
    auto init = [&](int id) {
      ++inits;
      worker_tag = id + 1;
    };
    DataLoader loader(Recorded(30, log), DataLoaderOptions(4).shuffle(true).seed(5).workers(workers).persistent_workers(
                                                 true).worker_init_fn(init));
    for (uint64_t epoch = 0; epoch < 3; ++epoch) EXPECT_EQ(order_of(loader), seeded_permutation(30, 5 + epoch));
    EXPECT_EQ(inits.load(), workers);  // once per worker, not per pass
    // At most `workers` threads over all passes (a fast worker may take every batch), and each one
    // still carries the tag its worker_init_fn set in the first pass.
    EXPECT_GE(log->threads.size(), 1u);
    EXPECT_LE(log->threads.size(), static_cast<size_t>(workers));
    EXPECT_EQ(log->untagged.load(), 0);
  }
  // Without persistent workers worker_init_fn runs every pass, in fresh threads.
  auto log = std::make_shared<Recorded::Log>();
  std::atomic<int> inits{0};
  DataLoader loader(Recorded(30, log), DataLoaderOptions(4).workers(2).worker_init_fn([&](int) { ++inits; }));
  for (int epoch = 0; epoch < 3; ++epoch) order_of(loader);
  EXPECT_EQ(inits.load(), 6);
}

TEST(PersistentWorkers, WorkerSeedStaysAcrossPasses) {
  auto seeds_per_pass = [](bool persistent) {
    std::mutex mu;
    std::vector<uint64_t> seeds;
    DataLoader loader(Recorded(8, nullptr), DataLoaderOptions(4).workers(1).seed(3).persistent_workers(persistent));
    for (int pass = 0; pass < 2; ++pass) {
      for (auto& batch : loader) {
        (void)batch;
      }
    }
    // The seed a worker sees: read through a worker_init_fn-free dataset is awkward, so ask the
    // loader's workers via a collate_fn, which runs in them.
    DataLoader probe(Recorded(4, nullptr), DataLoaderOptions(4).workers(1).seed(3).persistent_workers(persistent).collate_fn(
                                               [&](std::vector<Example> ex) {
                                                 std::lock_guard<std::mutex> lock(mu);
                                                 seeds.push_back(get_worker_info()->seed);
                                                 return Batch{ex.front().data, ex.front().target, {}};
                                               }));
    for (int pass = 0; pass < 3; ++pass) {
      for (auto& batch : probe) (void)batch;
    }
    return seeds;
  };
  const std::vector<uint64_t> kept = seeds_per_pass(true), fresh = seeds_per_pass(false);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0], kept[1]);
  EXPECT_EQ(kept[1], kept[2]);
  ASSERT_EQ(fresh.size(), 3u);
  EXPECT_NE(fresh[0], fresh[1]);
  EXPECT_EQ(fresh[0], kept[0]);  // the first pass's seed either way
}

TEST(PersistentWorkers, ANewPassEndsTheLiveOne) {
  SequentialSampler order(40);
  DataLoader loader(Recorded(40, nullptr), order, DataLoaderOptions(4).workers(2).persistent_workers(true));
  auto first = loader.begin();
  ++first;
  EXPECT_EQ(first->data.data_ptr<float>()[0], 4.0f);
  auto second = loader.begin();  // PyTorch resets the old iterator: here it reaches the end
  EXPECT_TRUE(first == loader.end());
  int64_t batches = 0;
  for (; second != loader.end(); ++second) ++batches;
  EXPECT_EQ(batches, 10);
  // Breaking out mid-pass leaves the workers ready for the next one.
  for (auto& batch : loader) {
    (void)batch;
    break;
  }
  EXPECT_EQ(order_of(loader).size(), 40u);
  // The loader may go before a pass it started.
  auto loader2 = std::make_unique<DataLoader>(Recorded(40, nullptr), order,
                                              DataLoaderOptions(4).workers(3).persistent_workers(true));
  auto it = loader2->begin();
  loader2.reset();
  ++it;
  EXPECT_EQ(it->data.data_ptr<float>()[0], 4.0f);
}

// The stream 0..n-1 for worker 0 only (the others yield nothing).
class FirstWorkerCounts : public IterableDataset {
 public:
  explicit FirstWorkerCounts(int64_t n, int sleep_ms = 0) : n_(n), sleep_ms_(sleep_ms) {}
  std::unique_ptr<ExampleStream> iter() const override {
    struct Stream : ExampleStream {
      Stream(int64_t n, int sleep_ms) : n(n), sleep_ms(sleep_ms) {}
      std::optional<Example> next() override {
        if (i == n) return std::nullopt;
        if (sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
        return Example{raw::full({1}, static_cast<double>(i++)), raw::scalar_tensor(0, kInt64)};
      }
      int64_t n, i = 0;
      int sleep_ms;
    };
    const WorkerInfo* w = get_worker_info();
    return std::make_unique<Stream>(w && w->id > 0 ? 0 : n_, sleep_ms_);
  }

 private:
  int64_t n_;
  int sleep_ms_;
};

TEST(PersistentWorkers, IterableDatasetsReadAFreshStreamEachPass) {
  std::atomic<int> inits{0};
  DataLoader loader(FirstWorkerCounts(10),
                    DataLoaderOptions(3).workers(3).persistent_workers(true).worker_init_fn([&](int) { ++inits; }));
  for (int pass = 0; pass < 3; ++pass) {
    EXPECT_EQ(order_of(loader), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << pass;
  }
  EXPECT_EQ(inits.load(), 3);
}

TEST(PersistentWorkers, AFailedWorkerInitFnIsRetriedOnTheNextPass) {
  std::atomic<int> inits{0};
  DataLoader loader(Recorded(8, nullptr), DataLoaderOptions(4).workers(2).persistent_workers(true).worker_init_fn(
                                              [&](int id) {
                                                ++inits;
                                                if (id == 1) throw std::runtime_error("no GPU for worker 1");
                                              }));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { loader.begin(); }, "worker 1 failed in worker_init_fn: no GPU"));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { loader.begin(); }, "worker 1 failed in worker_init_fn: no GPU"));
  EXPECT_EQ(inits.load(), 4);  // a fresh pool each time: the failed one is not reused
}

TEST(PersistentWorkers, NeedsWorkers) {
  EXPECT_TRUE(throws_with([] { DataLoader(Recorded(8, nullptr), DataLoaderOptions(2).persistent_workers(true)); },
                          "persistent_workers option needs num_workers > 0"));
  EXPECT_TRUE(throws_with([] { DataLoader(FirstWorkerCounts(8), DataLoaderOptions(2).persistent_workers(true)); },
                          "persistent_workers option needs num_workers > 0"));
}

TEST(Timeout, ASlowWorkerBatchFailsThePass) {
  for (bool persistent : {false, true}) {
    DataLoader slow(Recorded(8, nullptr, /*sleep_ms=*/300),
                    DataLoaderOptions(2).workers(1).timeout(0.05).persistent_workers(persistent));
    EXPECT_TRUE(throws_with<DataLoaderError>([&] { slow.begin(); }, "DataLoader timed out after 0.05 seconds"));
  }
  DataLoader stream(FirstWorkerCounts(4, /*sleep_ms=*/300), DataLoaderOptions(2).workers(1).timeout(0.05));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { stream.begin(); }, "DataLoader timed out after 0.05 seconds"));
  // Within the limit, or in the calling thread (no workers: as torch, no limit), it loads.
  DataLoader patient(Recorded(4, nullptr, 1), DataLoaderOptions(2).workers(2).timeout(5));
  EXPECT_EQ(order_of(patient).size(), 4u);
  DataLoader inline_loader(Recorded(2, nullptr, 100), DataLoaderOptions(2).timeout(0.01));
  EXPECT_EQ(order_of(inline_loader).size(), 2u);
  EXPECT_TRUE(throws_with([] { DataLoader(Recorded(8, nullptr), DataLoaderOptions(2).timeout(-1)); },
                          "timeout option should be non-negative"));
}

}  // namespace
}  // namespace colony::data
