// IterableDataset and ChainDataset through the DataLoader: the batches' order under 0, 1 and 3
// workers (sharded by get_worker_info() and not), drop_last, WorkerInfo and worker_init_fn, seeded
// determinism, early stops, and every refusal with its message. The expected orders are what
// torch 2.15's DataLoader gives for the same streams (range(start, n, step) per worker), e.g.
//   DataLoader(R(10, shard=True), batch_size=2, num_workers=3)
//   -> [[0, 3], [1, 4], [2, 5], [6, 9], [7], [8]]
#include "data/iterable_dataset.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "data/dataloader.h"
#include "data/tensor_dataset.h"
#include "tests/data/data_test_util.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;

Example number(int64_t i, int64_t width = 2) {
  Tensor data = raw::empty({width});
  for (int64_t k = 0; k < width; ++k) data.data_ptr<float>()[k] = static_cast<float>(k == 0 ? i : -i);
  return {data, raw::scalar_tensor(static_cast<double>(i % 7), kInt64)};
}

// Examples start, start + step, ... below end (data float {i, -i}, target i % 7), where (start,
// step) = (first + worker id, num_workers) when sharded inside a worker, else (first, 1). Optionally
// failing at one example, giving example `odd_shape` a wider shape, slow, or endless.
struct RangeOptions {
  int64_t first = 0;
  int64_t end = 0;
  bool shard = false;
  int64_t fail_at = -1;
  int64_t odd_shape = -1;
  bool slow = false;
  bool endless = false;
};

class Range : public IterableDataset {
 public:
  explicit Range(RangeOptions o) : o_(o) {}
  std::unique_ptr<ExampleStream> iter() const override {
    int64_t start = o_.first, step = 1;
    if (const WorkerInfo* w = get_worker_info(); w && o_.shard) {
      start += w->id;
      step = w->num_workers;
    }
    return std::make_unique<Stream>(o_, start, step);
  }

 private:
  class Stream : public ExampleStream {
   public:
    Stream(RangeOptions o, int64_t start, int64_t step) : o_(o), i_(start), step_(step) {}
    std::optional<Example> next() override {
      if (!o_.endless && i_ >= o_.end) return std::nullopt;
      const int64_t i = i_;
      i_ += step_;
      if (i == o_.fail_at) throw std::runtime_error("Range: example " + std::to_string(i) + " is cursed");
      if (o_.slow) std::this_thread::sleep_for(std::chrono::microseconds(50 + (i * 7919) % 400));
      return number(i, i == o_.odd_shape ? 3 : 2);
    }

   private:
    RangeOptions o_;
    int64_t i_, step_;
  };
  RangeOptions o_;
};

Range range(int64_t end, bool shard = false) {
  RangeOptions o;
  o.end = end;
  o.shard = shard;
  return Range(o);
}

// Every batch's examples (the first column of its data), checking the rest of each row.
std::vector<std::vector<int64_t>> batches(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.data.dim(), 2);
    EXPECT_EQ(batch.data.size(0), batch.target.size(0));
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < batch.size(); ++r) {
      const auto i = static_cast<int64_t>(batch.data.data_ptr<float>()[2 * r]);
      EXPECT_EQ(batch.data.data_ptr<float>()[2 * r + 1], -static_cast<float>(i));
      EXPECT_EQ(batch.target.data_ptr<int64_t>()[r], i % 7);
      rows.push_back(i);
    }
    out.push_back(rows);
  }
  return out;
}

using Batches = std::vector<std::vector<int64_t>>;

TEST(IterableDataset, WithoutWorkersTheStreamComesInOrder) {
  DataLoader loader(range(10), DataLoaderOptions(3));
  EXPECT_EQ(batches(loader), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));
  EXPECT_EQ(batches(loader), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));  // every pass a fresh stream
  DataLoader dropping(range(10, /*shard=*/true), DataLoaderOptions(3).drop_last(true));
  EXPECT_EQ(batches(dropping), (Batches{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}));
  DataLoader exact(range(6), DataLoaderOptions(3).drop_last(true));
  EXPECT_EQ(batches(exact), (Batches{{0, 1, 2}, {3, 4, 5}}));
  DataLoader empty(range(0), DataLoaderOptions(3));
  EXPECT_EQ(batches(empty), Batches{});
}

TEST(IterableDataset, CollatesAsTheMapStylePath) {
  // The same examples through a TensorDataset give the same batch, dtype and all.
  Tensor data = raw::from_vector(std::vector<double>{0, 0, 1, -1, 2, -2}, {3, 2});
  data = raw::to(data, kCPU, kFloat32);
  TensorDataset map_style(data, raw::from_vector(std::vector<int64_t>{0, 1, 2}));
  DataLoader map_loader(map_style, DataLoaderOptions(3));
  DataLoader stream_loader(range(3), DataLoaderOptions(3));
  Batch a = *map_loader.begin(), b = *stream_loader.begin();
  EXPECT_EQ(a.data.sizes(), b.data.sizes());
  EXPECT_EQ(a.data.dtype(), b.data.dtype());
  EXPECT_EQ(b.target.dtype(), kInt64);
  EXPECT_EQ(colony::testing::values(a.data), colony::testing::values(b.data));
  EXPECT_EQ(colony::testing::values(a.target), colony::testing::values(b.target));
}

TEST(IterableDataset, OneShardedWorkerGivesTheWholeStream) {
  DataLoader loader(range(10, /*shard=*/true), DataLoaderOptions(2).workers(1));
  EXPECT_EQ(batches(loader), (Batches{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}));
}

TEST(IterableDataset, ThreeShardedWorkersRoundRobinAsTorch) {
  DataLoader loader(range(10, /*shard=*/true), DataLoaderOptions(2).workers(3));
  const Batches expected{{0, 3}, {1, 4}, {2, 5}, {6, 9}, {7}, {8}};
  EXPECT_EQ(batches(loader), expected);
  EXPECT_EQ(batches(loader), expected);
  DataLoader dropping(range(10, /*shard=*/true), DataLoaderOptions(2).workers(3).drop_last(true));
  EXPECT_EQ(batches(dropping), (Batches{{0, 3}, {1, 4}, {2, 5}, {6, 9}}));
  // Workers whose stream has ended are skipped: worker 0 has the last batch alone.
  DataLoader uneven(range(7, /*shard=*/true), DataLoaderOptions(2).workers(3));
  EXPECT_EQ(batches(uneven), (Batches{{0, 3}, {1, 4}, {2, 5}, {6}}));
}

TEST(IterableDataset, SlowWorkersKeepTheRoundRobinOrder) {
  RangeOptions o;
  o.end = 200;
  o.shard = true;
  o.slow = true;
  DataLoader loader(Range(o), DataLoaderOptions(4).workers(3).prefetch(3).pin_memory(true));
  const Batches got = batches(loader);
  ASSERT_EQ(got.size(), 51u);  // 67, 67, 66 examples: 17, 17, 17 batches
  for (size_t k = 0; k < got.size(); ++k) {
    const auto worker = static_cast<int64_t>(k % 3);
    const auto j = static_cast<int64_t>(k / 3);
    std::vector<int64_t> want;
    for (int64_t e = 4 * j; e < 4 * j + 4; ++e) {
      if (worker + 3 * e < 200) want.push_back(worker + 3 * e);
    }
    EXPECT_EQ(got[k], want) << "batch " << k;
  }
}

TEST(IterableDataset, UnshardedWorkersEachYieldTheWholeStream) {
  // torch's documented duplication: each worker runs its own copy of the stream.
  DataLoader loader(range(4), DataLoaderOptions(2).workers(3));
  EXPECT_EQ(batches(loader), (Batches{{0, 1}, {0, 1}, {0, 1}, {2, 3}, {2, 3}, {2, 3}}));
}

TEST(IterableDataset, WorkerInfoAndWorkerInitFn) {
  struct Seen {
    std::mutex mu;
    std::map<int, WorkerInfo> in_iter;
    std::multiset<int> init_ids;
  };
  auto seen = std::make_shared<Seen>();
  class Recording : public IterableDataset {
   public:
    explicit Recording(std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {}
    std::unique_ptr<ExampleStream> iter() const override {
      const WorkerInfo* w = get_worker_info();
      if (w) {
        std::lock_guard<std::mutex> lock(seen_->mu);
        seen_->in_iter[w->id] = *w;
      }
      return range(w ? 1 : 2).iter();
    }
    std::shared_ptr<Seen> seen_;
  };
  auto dataset = std::make_shared<const Recording>(seen);
  auto init = [seen](int id) {
    const WorkerInfo* w = get_worker_info();
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->id, id);
    std::lock_guard<std::mutex> lock(seen->mu);
    seen->init_ids.insert(id);
  };
  EXPECT_EQ(get_worker_info(), nullptr);

  DataLoader loader(dataset, DataLoaderOptions(1).workers(3).seed(7).worker_init_fn(init));
  EXPECT_EQ(batches(loader).size(), 3u);
  ASSERT_EQ(seen->in_iter.size(), 3u);
  EXPECT_EQ(seen->init_ids, (std::multiset<int>{0, 1, 2}));
  const uint64_t base = seen->in_iter[0].seed;
  for (int id = 0; id < 3; ++id) {
    const WorkerInfo& w = seen->in_iter[id];
    EXPECT_EQ(w.id, id);
    EXPECT_EQ(w.num_workers, 3);
    EXPECT_EQ(w.seed, base + static_cast<uint64_t>(id));  // as torch: base_seed + id
    EXPECT_EQ(w.iterable_dataset, dataset.get());
    EXPECT_EQ(w.dataset, nullptr);
  }
  // Each pass draws a new base seed; the same loader seed gives the same ones.
  EXPECT_EQ(batches(loader).size(), 3u);
  EXPECT_EQ(seen->init_ids.size(), 6u);  // worker_init_fn runs every pass
  const uint64_t second = seen->in_iter[0].seed;
  EXPECT_NE(second, base);
  DataLoader again(dataset, DataLoaderOptions(1).workers(3).seed(7));
  batches(again);
  EXPECT_EQ(seen->in_iter[0].seed, base);
  batches(again);
  EXPECT_EQ(seen->in_iter[0].seed, second);
  DataLoader other(dataset, DataLoaderOptions(1).workers(3).seed(8));
  batches(other);
  EXPECT_NE(seen->in_iter[0].seed, base);

  // Without workers there is no WorkerInfo (as torch's get_worker_info() is None in the main
  // process) and worker_init_fn is not called.
  seen->in_iter.clear();
  seen->init_ids.clear();
  DataLoader inline_loader(dataset, DataLoaderOptions(1).worker_init_fn(init));
  EXPECT_EQ(batches(inline_loader), (Batches{{0}, {1}}));
  EXPECT_TRUE(seen->in_iter.empty());
  EXPECT_TRUE(seen->init_ids.empty());
}

TEST(IterableDataset, SeededStreamsAreReproducible) {
  // A stream that draws its examples from WorkerInfo::seed.
  class Noise : public IterableDataset {
   public:
    std::unique_ptr<ExampleStream> iter() const override {
      class S : public ExampleStream {
       public:
        explicit S(uint64_t seed) : gen_(seed) {}
        std::optional<Example> next() override {
          if (n_++ == 4) return std::nullopt;
          return Example{raw::rand({2}, TensorOptions(kFloat32), &gen_), raw::scalar_tensor(0.0, kInt64)};
        }
        Generator gen_;
        int n_ = 0;
      };
      return std::make_unique<S>(get_worker_info()->seed);
    }
  };
  auto run = [](uint64_t seed, int passes) {
    DataLoader loader(Noise(), DataLoaderOptions(2).workers(3).seed(seed));
    std::vector<double> out;
    for (int p = 0; p < passes; ++p) {
      for (auto& b : loader) {
        for (double x : colony::testing::values(b.data)) out.push_back(x);
      }
    }
    return out;
  };
  const std::vector<double> one = run(3, 1), two = run(3, 2);
  EXPECT_EQ(one.size(), 24u);
  EXPECT_EQ(run(3, 1), one);
  EXPECT_NE(run(4, 1), one);
  EXPECT_EQ(std::vector<double>(two.begin(), two.begin() + 24), one);
  EXPECT_NE(std::vector<double>(two.begin() + 24, two.end()), one);  // the second pass reseeds
  // The workers' streams differ from one another (seed = base + id).
  EXPECT_NE(std::vector<double>(one.begin(), one.begin() + 4), std::vector<double>(one.begin() + 4, one.begin() + 8));
}

TEST(IterableDataset, ChainDatasetChainsTheStreamsAndShardsInside) {
  RangeOptions a, b;
  a.end = 3;
  b.first = 10;
  b.end = 13;
  a.shard = b.shard = true;
  auto chain = std::make_shared<const ChainDataset>(std::vector<std::shared_ptr<const IterableDataset>>{
      std::make_shared<const Range>(a), std::make_shared<const ChainDataset>(
                                            std::vector<std::shared_ptr<const IterableDataset>>{}),
      std::make_shared<const Range>(b)});
  DataLoader loader(chain, DataLoaderOptions(2));
  EXPECT_EQ(batches(loader), (Batches{{0, 1}, {2, 10}, {11, 12}}));
  // Two workers: worker 0 chains 0, 2, 10, 12; worker 1 chains 1, 11.
  DataLoader sharded(chain, DataLoaderOptions(2).workers(2));
  EXPECT_EQ(batches(sharded), (Batches{{0, 2}, {1, 11}, {10, 12}}));
  EXPECT_TRUE(throws_with([] { ChainDataset({nullptr}); }, "ChainDataset: dataset 0 is null"));
}

TEST(IterableDataset, RefusesASamplerAndShuffleAsTorch) {
  EXPECT_TRUE(throws_with([] { DataLoader(range(3), DataLoaderOptions(1).shuffle(true)); },
                          "DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=true"));
  RandomSampler sampler(3);
  EXPECT_TRUE(throws_with([&] { DataLoader(range(3), sampler, DataLoaderOptions(1)); },
                          "DataLoader with IterableDataset: expected unspecified sampler option, but got "
                          "sampler=colony::data::RandomSampler"));
  // Shuffle is checked first, as torch checks it.
  EXPECT_TRUE(throws_with([&] { DataLoader(range(3), sampler, DataLoaderOptions(1).shuffle(true)); },
                          "expected unspecified shuffle option, but got shuffle=true"));
  // Map-style: a sampler of one's own and shuffle together are refused too, as torch refuses them.
  TensorDataset map_style(raw::zeros({3, 1}), raw::zeros({3}, TensorOptions(kInt64)));
  EXPECT_TRUE(throws_with([&] { DataLoader(map_style, sampler, DataLoaderOptions(1).shuffle(true)); },
                          "DataLoader: sampler option is mutually exclusive with shuffle"));
  DataLoader loader(range(3), DataLoaderOptions(1));
  EXPECT_TRUE(loader.iterable());
  EXPECT_TRUE(throws_with<std::logic_error>([&] { loader.size(); }, "DataLoader::size: an IterableDataset has no length"));
  EXPECT_TRUE(throws_with<std::logic_error>([&] { loader.sampler(); }, "has no sampler"));
  EXPECT_TRUE(throws_with<std::logic_error>([&] { loader.dataset(); }, "reads an IterableDataset"));
  EXPECT_TRUE(throws_with([] { DataLoader(range(3), DataLoaderOptions(0)); }, "batch_size must be >= 1, got 0"));
  EXPECT_TRUE(throws_with([] { DataLoader(std::shared_ptr<const IterableDataset>(), DataLoaderOptions(1)); },
                          "DataLoader: the dataset is null"));
}

TEST(IterableDataset, StreamErrorsReachTheLoopWithWhereTheyHappened) {
  RangeOptions o;
  o.end = 20;
  o.fail_at = 5;
  DataLoader inline_loader(Range(o), DataLoaderOptions(2));
  std::vector<int64_t> seen;
  EXPECT_TRUE(throws_with<DataLoaderError>(
      [&] {
        for (auto& b : inline_loader) seen.push_back(b.size());
      },
      "DataLoader: loading batch 2 (example 5 of the stream): Range: example 5 is cursed"));
  EXPECT_EQ(seen.size(), 2u);

  // Sharded over 3 workers, example 5 is worker 2's (2, 5, ...): its batch 0, example 1 of its stream.
  o.shard = true;
  DataLoader workers(Range(o), DataLoaderOptions(2).workers(3));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { batches(workers); },
                                           "DataLoader: worker 2 failed on its batch 0 (example 1 of the stream): "
                                           "Range: example 5 is cursed"));
  o.fail_at = -1;
  o.odd_shape = 3;
  DataLoader odd(Range(o), DataLoaderOptions(2).workers(3));
  EXPECT_TRUE(throws_with<DataLoaderError>(
      [&] { batches(odd); },
      "DataLoader: worker 0 failed on its batch 0: DataLoader: example 1 has shape [3], the batch expects [2]"));

  auto bad_init = [](int id) {
    if (id == 1) throw std::runtime_error("no GPU for worker 1");
  };
  DataLoader init_fails(range(10, true), DataLoaderOptions(2).workers(3).worker_init_fn(bad_init));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { batches(init_fails); },
                                           "DataLoader: worker 1 failed in worker_init_fn: no GPU for worker 1"));

  class NoStream : public IterableDataset {
   public:
    std::unique_ptr<ExampleStream> iter() const override { return nullptr; }
  };
  DataLoader none(NoStream(), DataLoaderOptions(2));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { batches(none); },
                                           "DataLoader: the dataset's iter() failed: iter() returned no stream"));
  DataLoader none_workers(NoStream(), DataLoaderOptions(2).workers(2));
  EXPECT_TRUE(throws_with<DataLoaderError>(
      [&] { batches(none_workers); }, "DataLoader: worker 0 failed in the dataset's iter(): iter() returned no stream"));
}

TEST(IterableDataset, BreakingOutOfAnEndlessStreamStopsTheWorkers) {
  RangeOptions o;
  o.endless = true;
  o.shard = true;
  DataLoader loader(Range(o), DataLoaderOptions(4).workers(3).prefetch(2));
  for (int pass = 0; pass < 3; ++pass) {
    int64_t taken = 0;
    for (auto& b : loader) {
      EXPECT_EQ(b.size(), 4);
      if (++taken == 5) break;
    }
    EXPECT_EQ(taken, 5);
  }
  auto it = loader.begin();  // destroyed mid-pass with the loader's workers running
  EXPECT_EQ(it->size(), 4);
}

// The example of data/README.md, verbatim between the markers: a text file's lines as a stream,
// sharded across the workers by line number.
// README begin
class LinesDataset : public data::IterableDataset {
 public:
  explicit LinesDataset(std::string path) : path_(std::move(path)) {}
  std::unique_ptr<data::ExampleStream> iter() const override {
    const data::WorkerInfo* w = data::get_worker_info();  // null without workers
    return std::make_unique<Lines>(path_, w ? w->id : 0, w ? w->num_workers : 1);
  }

 private:
  // Line k (a number x) is example (x, class x > 0) of the worker k % step == start.
  class Lines : public data::ExampleStream {
   public:
    Lines(const std::string& path, int start, int step) : in_(path), start_(start), step_(step) {}
    std::optional<data::Example> next() override {
      std::string text;
      while (std::getline(in_, text)) {
        if (line_++ % step_ != start_) continue;  // another worker's line
        const double x = std::stod(text);
        return data::Example{raw::full({1}, x), raw::scalar_tensor(x > 0, kInt64)};
      }
      return std::nullopt;
    }

   private:
    std::ifstream in_;
    int64_t line_ = 0;
    int start_, step_;
  };
  std::string path_;
};
// README end

TEST(IterableDataset, ReadmeExampleShardsAFileByLine) {
  const std::string path = (testing::scratch_dir("iterable_lines") / "numbers.txt").string();
  {
    std::ofstream out(path);
    for (int k = 0; k < 7; ++k) out << (k % 2 ? -k : k) << "\n";  // 0 -1 2 -3 4 -5 6
  }
  // README begin loop
  data::DataLoader loader(LinesDataset(path), data::DataLoaderOptions(2).workers(2));
  std::vector<double> xs;
  for (auto& batch : loader) {
    for (double x : colony::testing::values(batch.data)) xs.push_back(x);  // batch.data [<=2, 1], batch.target [<=2]
  }
  // README end loop
  // Worker 0 reads lines 0, 2, 4, 6; worker 1 lines 1, 3, 5; their batches alternate.
  EXPECT_EQ(xs, (std::vector<double>{0, 2, -1, -3, 4, 6, -5}));
}

TEST(MapStyleWorkers, SeeWorkerInfoAndRunWorkerInitFn) {
  // A map-style dataset's workers get the same WorkerInfo (dataset set, iterable_dataset null).
  class WhoLoads : public Dataset {
   public:
    int64_t size() const override { return 12; }
    Example get(int64_t i) const override {
      const WorkerInfo* w = get_worker_info();
      Example ex = number(i);
      ex.data.data_ptr<float>()[1] = w ? static_cast<float>(w->id) : -1.f;
      if (w) {
        EXPECT_EQ(w->num_workers, 3);
        EXPECT_EQ(w->dataset, expected_);
        EXPECT_EQ(w->iterable_dataset, nullptr);
      }
      return ex;
    }
    const Dataset* expected_ = nullptr;
  };
  auto dataset = std::make_shared<WhoLoads>();
  dataset->expected_ = dataset.get();
  std::atomic<int> inits{0};
  std::atomic<uint64_t> seed_sum{0};
  DataLoader loader(std::shared_ptr<const Dataset>(dataset),
                    DataLoaderOptions(2).workers(3).worker_init_fn([&](int id) {
                      ++inits;
                      seed_sum += get_worker_info()->seed - static_cast<uint64_t>(id);
                    }));
  std::set<float> workers;
  int64_t n = 0;
  for (auto& b : loader) {
    for (int64_t r = 0; r < b.size(); ++r) {
      EXPECT_EQ(b.data.data_ptr<float>()[2 * r], static_cast<float>(n++));  // still in sampler order
      workers.insert(b.data.data_ptr<float>()[2 * r + 1]);
    }
  }
  EXPECT_EQ(n, 12);
  EXPECT_EQ(inits.load(), 3);
  for (float w : workers) EXPECT_TRUE(w >= 0 && w < 3) << w;
  DataLoader inline_loader(std::shared_ptr<const Dataset>(dataset), DataLoaderOptions(2));
  EXPECT_EQ((*inline_loader.begin()).data.data_ptr<float>()[1], -1.f);  // no WorkerInfo in the loop's thread

  DataLoader init_fails(std::shared_ptr<const Dataset>(dataset),
                        DataLoaderOptions(2).workers(3).worker_init_fn([](int id) {
                          if (id == 2) throw std::runtime_error("worker 2 cannot start");
                        }));
  EXPECT_TRUE(throws_with<DataLoaderError>([&] { init_fails.begin(); },
                                           "DataLoader: worker 2 failed in worker_init_fn: worker 2 cannot start"));
}

}  // namespace
}  // namespace colony::data
