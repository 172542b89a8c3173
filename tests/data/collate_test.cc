// The DataLoader's collate_fn: a padding collate of variable-length sequences (the one in
// data/README.md, compiled here), in the sampler's order with 0, 1 and 3 workers, with a batch
// sampler, with an iterable dataset, random transforms seen through Dataset::fetch, and errors.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "autograd/factory.h"
#include "autograd/ops.h"
#include "data/dataloader.h"
#include "data/subset.h"
#include "data/synthetic.h"
#include "data/transformed_dataset.h"
#include "nn/sequence_utils.h"
#include "tests/test_util.h"

namespace colony {
namespace readme {
using namespace colony;

// data/README.md, "A collate_fn that pads": token sequences of different lengths in one batch.
data::Batch pad_collate(std::vector<data::Example> examples) {
  std::vector<Tensor> sequences, targets;
  std::vector<int64_t> lengths;
  for (data::Example& ex : examples) {
    lengths.push_back(ex.data.size(0));
    sequences.push_back(std::move(ex.data));
    targets.push_back(std::move(ex.target));
  }
  data::Batch batch;
  batch.data = nn::utils::rnn::pad_sequence(sequences, /*batch_first=*/true);  // int64 [B, longest]
  batch.target = stack(targets);                                                // int64 [B]
  batch.extra = {from_vector(lengths)};                                         // int64 [B]
  return batch;
}

}  // namespace readme

namespace data {
namespace {

using colony::testing::throws_with;

// Example i: int64 tokens [1 + i % 6] = {100 i, 100 i + 1, ...}, class i % 3; slow when asked, so
// that workers finish out of order.
class Sequences : public Dataset {
 public:
  explicit Sequences(int64_t n, bool slow = false, int64_t fail_at = -1) : n_(n), slow_(slow), fail_at_(fail_at) {}
  int64_t size() const override { return n_; }
  Example get(int64_t i) const override {
    check_index(i, "Sequences");
    if (i == fail_at_) throw std::runtime_error("Sequences: example " + std::to_string(i) + " is cursed");
    if (slow_) std::this_thread::sleep_for(std::chrono::microseconds(30 + (i * 7919) % 300));
    std::vector<int64_t> tokens;
    for (int64_t t = 0; t < 1 + i % 6; ++t) tokens.push_back(100 * i + t);
    return {raw::from_vector(tokens), raw::scalar_tensor(static_cast<double>(i % 3), kInt64)};
  }

 private:
  int64_t n_;
  bool slow_;
  int64_t fail_at_;
};

// Checks a padded batch against the examples it should hold; returns their indices.
std::vector<int64_t> check_padded(const Batch& batch) {
  std::vector<int64_t> ids;
  EXPECT_EQ(batch.data.dtype(), kInt64);
  EXPECT_EQ(batch.extra.size(), 1u);
  const int64_t b = batch.size(), longest = batch.data.size(1);
  const int64_t* data = batch.data.data_ptr<int64_t>();
  const int64_t* lengths = batch.extra[0].data_ptr<int64_t>();
  int64_t widest = 0;
  for (int64_t r = 0; r < b; ++r) {
    const int64_t i = data[r * longest] / 100;
    ids.push_back(i);
    EXPECT_EQ(lengths[r], 1 + i % 6);
    EXPECT_EQ(batch.target.data_ptr<int64_t>()[r], i % 3);
    for (int64_t t = 0; t < longest; ++t) EXPECT_EQ(data[r * longest + t], t < lengths[r] ? 100 * i + t : 0);
    widest = std::max(widest, lengths[r]);
  }
  EXPECT_EQ(longest, widest);  // padded to the batch's longest, not the dataset's
  return ids;
}

TEST(Collate, PadsVariableLengthsInTheSamplersOrderWhateverTheWorkerCount) {
  for (int workers : {0, 1, 3}) {
    RandomSampler sampler(59, 8);
    const std::vector<int64_t> expected = sampler.indices();
    DataLoader loader(Sequences(59, workers > 1), sampler,
                      DataLoaderOptions(4).workers(workers).collate_fn(readme::pad_collate));
    std::vector<int64_t> seen, sizes;
    for (auto& batch : loader) {
      sizes.push_back(batch.size());
      for (int64_t i : check_padded(batch)) seen.push_back(i);
    }
    EXPECT_EQ(seen, expected) << workers << " workers";
    EXPECT_EQ(sizes.size(), 15u);
    EXPECT_EQ(sizes.back(), 3);
  }
}

TEST(Collate, WithABatchSamplerAndDropLast) {
  SequentialSampler order(23);
  BatchSampler batches(order, 5, /*drop_last=*/true);
  DataLoader loader(Sequences(23), batches, DataLoaderOptions().workers(3).collate_fn(readme::pad_collate));
  std::vector<std::vector<int64_t>> seen;
  for (auto& batch : loader) seen.push_back(check_padded(batch));
  EXPECT_EQ(seen, batches.next_pass());
  // Without drop_last the loader's own cut keeps the short batch.
  DataLoader plain(Sequences(23), order, DataLoaderOptions(5).collate_fn(readme::pad_collate));
  int64_t last = 0;
  for (auto& batch : plain) last = batch.size();
  EXPECT_EQ(last, 3);
}

TEST(Collate, KeptBatchesAreTheCollatesOwn) {
  SequentialSampler order(12);
  DataLoader loader(Sequences(12), order, DataLoaderOptions(4).workers(2).prefetch(1).collate_fn(readme::pad_collate));
  std::vector<Batch> kept;
  for (auto& batch : loader) kept.push_back(batch);
  ASSERT_EQ(kept.size(), 3u);
  for (size_t k = 0; k < kept.size(); ++k) EXPECT_EQ(check_padded(kept[k]).front(), static_cast<int64_t>(4 * k));
}

// The stream 0, 1, ..., n - 1 of Sequences' examples (each worker reads all of it: no sharding).
class SequenceStream : public IterableDataset {
 public:
  explicit SequenceStream(int64_t n) : n_(n) {}
  std::unique_ptr<ExampleStream> iter() const override {
    struct Stream : ExampleStream {
      explicit Stream(int64_t n) : n(n) {}
      std::optional<Example> next() override {
        if (i == n) return std::nullopt;
        return Sequences(n).get(i++);
      }
      int64_t n, i = 0;
    };
    return std::make_unique<Stream>(n_);
  }

 private:
  int64_t n_;
};

TEST(Collate, IterableDatasetsToo) {
  for (int workers : {0, 1, 3}) {
    DataLoader loader(SequenceStream(10), DataLoaderOptions(4).workers(workers).collate_fn(readme::pad_collate));
    std::vector<int64_t> seen;
    for (auto& batch : loader) {
      for (int64_t i : check_padded(batch)) seen.push_back(i);
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(10 * std::max(workers, 1))) << workers;
    if (workers == 0) {
      EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    }
  }
}

TEST(Collate, RandomTransformsReachTheCollateWithTheirEpoch) {
  // Dataset::fetch passes the pass's context through Subset to the transforms: the collate sees
  // exactly the images the default collation would stack, epoch by epoch.
  auto images = std::make_shared<TransformedDataset>(SyntheticCIFAR10(Split::kTest, 1).transform(RandomCrop(32, 4)));
  Subset part(images, {5, 3, 9, 1, 0, 7});
  auto stack_collate = [](std::vector<Example> examples) {
    std::vector<Tensor> data;
    for (auto& ex : examples) data.push_back(ex.data);
    return Batch{raw::stack(data), Tensor(), {}};
  };
  for (int64_t epoch : {0, 3}) {
    SequentialSampler order(6);
    order.set_epoch(epoch);
    DataLoader plain(part, order, DataLoaderOptions(3).seed(2).workers(1));
    DataLoader collated(part, order, DataLoaderOptions(3).seed(2).workers(1).collate_fn(stack_collate));
    std::vector<Tensor> a, b;
    for (auto& batch : plain) a.push_back(raw::clone(batch.data));
    for (auto& batch : collated) {
      EXPECT_EQ(batch.size(), 3);  // no target: the size is data's first dimension
      b.push_back(batch.data);
    }
    ASSERT_EQ(a.size(), 2u);
    ASSERT_EQ(b.size(), 2u);
    for (size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(raw::equal(a[k], b[k])) << "epoch " << epoch << " batch " << k;
  }
}

TEST(Collate, ErrorsNameTheCollateOrTheExample) {
  for (int workers : {0, 2}) {
    SequentialSampler order(12);
    auto failing = [](std::vector<Example> examples) -> Batch {
      if (examples.front().data.data_ptr<int64_t>()[0] == 400) throw std::runtime_error("collate says no");
      return readme::pad_collate(std::move(examples));
    };
    DataLoader loader(Sequences(12), order, DataLoaderOptions(4).workers(workers).collate_fn(failing));
    auto run = [&] {
      for (auto& batch : loader) (void)batch;
    };
    EXPECT_TRUE(throws_with<DataLoaderError>(run, "batch 1 in collate_fn: collate says no")) << workers;
    DataLoader cursed(Sequences(12, false, 6), order, DataLoaderOptions(4).workers(workers).collate_fn(failing));
    EXPECT_TRUE(throws_with<DataLoaderError>([&] { for (auto& b : cursed) (void)b; },
                                             "batch 1 (dataset index 6): Sequences: example 6 is cursed"))
        << workers;
  }
}

}  // namespace
}  // namespace data
}  // namespace colony
