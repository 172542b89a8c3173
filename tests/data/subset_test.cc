// Subset, ConcatDataset, random_split and WeightedRandomSampler: the examples each gives, through
// get and through the DataLoader (copy_into), torch's split sizes, the seeds, and the errors.
#include "data/subset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "data/dataloader.h"
#include "data/sampler.h"
#include "data/tensor_dataset.h"
#include "tests/test_util.h"

namespace colony::data {
namespace {

using colony::testing::throws_with;
using colony::testing::values;

// Example i: data {i + offset}, target i % 3.
std::shared_ptr<const Dataset> numbers(int64_t n, double offset = 0, DType dtype = kFloat32) {
  std::vector<double> d;
  std::vector<int64_t> t;
  for (int64_t i = 0; i < n; ++i) {
    d.push_back(static_cast<double>(i) + offset);
    t.push_back(i % 3);
  }
  return std::make_shared<const TensorDataset>(raw::to(raw::from_vector(d, {n, 1}), kCPU, dtype), raw::from_vector(t));
}

// The data of every example of `ds`, read through the DataLoader (copy_into) in order.
std::vector<double> loaded(const std::shared_ptr<const Dataset>& ds) {
  SequentialSampler sampler(ds->size());
  DataLoader loader(ds, sampler, DataLoaderOptions(3).workers(1));
  std::vector<double> out;
  for (auto& batch : loader) {
    for (double x : values(batch.data)) out.push_back(x);
  }
  return out;
}

TEST(Subset, GivesTheChosenExamplesThroughGetAndTheLoader) {
  auto base = numbers(10);
  auto sub = std::make_shared<const Subset>(base, std::vector<int64_t>{7, 2, 2, 9});
  EXPECT_EQ(sub->size(), 4);
  EXPECT_EQ(values(sub->get(0).data), (std::vector<double>{7}));
  EXPECT_EQ(sub->get(3).target.item<int64_t>(), 0);
  EXPECT_EQ(loaded(sub), (std::vector<double>{7, 2, 2, 9}));
  EXPECT_TRUE(throws_with([&] { sub->get(4); }, "Subset: index 4 out of range for a dataset of 4 examples"));
  EXPECT_TRUE(throws_with([&] { Subset(base, {3, 10}); },
                          "Subset: index 10 (position 1) out of range for a dataset of 10 examples"));
}

TEST(ConcatDataset, ChainsTheDatasetsSkippingEmptyOnes) {
  auto cat = std::make_shared<const ConcatDataset>(
      std::vector<std::shared_ptr<const Dataset>>{numbers(0), numbers(3, 100), numbers(0), numbers(2, 200)});
  EXPECT_EQ(cat->size(), 5);
  EXPECT_EQ(loaded(cat), (std::vector<double>{100, 101, 102, 200, 201}));
  EXPECT_EQ(values(cat->get(3).data), (std::vector<double>{200}));
  EXPECT_TRUE(throws_with([&] { cat->get(5); }, "ConcatDataset: index 5 out of range"));
  EXPECT_TRUE(throws_with([] { ConcatDataset({numbers(2), numbers(2, 0, kFloat64)}); },
                          "dataset 1 has examples [1] float64, dataset 0 [1] float32"));
  EXPECT_TRUE(throws_with([] { ConcatDataset({}); }, "needs at least one dataset"));
}

TEST(ConcatDataset, CumulativeSizesAndNegativeIndicesAsTorch) {
  // torch: ConcatDataset([TensorDataset(arange(3)), TensorDataset(arange(10, 12))]) has
  // cumulative_sizes [3, 5]; c[-1] is 11, c[-5] is 0, c[-6] raises "absolute value of index should
  // not exceed dataset length".
  ConcatDataset cat({numbers(3), numbers(0), numbers(2, 10)});
  EXPECT_EQ(cat.cumulative_sizes(), (std::vector<int64_t>{3, 3, 5}));
  EXPECT_EQ(values(cat.get(-1).data), (std::vector<double>{11}));
  EXPECT_EQ(values(cat.get(-2).data), (std::vector<double>{10}));
  EXPECT_EQ(values(cat.get(-3).data), (std::vector<double>{2}));
  EXPECT_EQ(values(cat.get(-5).data), (std::vector<double>{0}));
  EXPECT_TRUE(throws_with<std::invalid_argument>(
      [&] { cat.get(-6); }, "ConcatDataset: absolute value of index should not exceed dataset length (index -6, 5 examples)"));
  EXPECT_TRUE(throws_with([] { ConcatDataset({}); }, "datasets should not be an empty iterable"));
}

TEST(RandomSplit, FractionsAsTorchRoundsThemAndEveryExampleOnce) {
  // torch: floor(10 * 0.33) = 3 each, the remainder 1 to the first split: [4, 3, 3].
  std::vector<Subset> parts = random_split(numbers(10), {0.34, 0.33, 0.33}, 5);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].size(), 4);
  EXPECT_EQ(parts[1].size(), 3);
  EXPECT_EQ(parts[2].size(), 3);
  std::vector<int64_t> all;
  for (const Subset& p : parts) all.insert(all.end(), p.indices().begin(), p.indices().end());
  std::vector<int64_t> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_NE(all, sorted);  // shuffled
  // The same seed gives the same split; another seed another one.
  EXPECT_EQ(random_split(numbers(10), {0.34, 0.33, 0.33}, 5)[0].indices(), parts[0].indices());
  EXPECT_NE(random_split(numbers(10), {0.34, 0.33, 0.33}, 6)[0].indices(), parts[0].indices());
  // Counts, and a dataset given by value.
  TensorDataset by_value(raw::zeros({6, 2}), raw::zeros({6}, kInt64));
  std::vector<Subset> counted = random_split(by_value, {2, 4});
  EXPECT_EQ(counted[0].size(), 2);
  EXPECT_EQ(counted[1].size(), 4);
}

TEST(RandomSplit, LengthsThatDoNotFitAreRefused) {
  EXPECT_TRUE(throws_with([] { random_split(numbers(10), {3, 4}); },
                          "the lengths add up to 7.000000, expected the dataset's size 10"));
  EXPECT_TRUE(throws_with([] { random_split(numbers(10), {2.5, 7.5}); }, "length 0 is 2.500000, expected a non-negative count"));
  EXPECT_TRUE(throws_with([] { random_split(numbers(10), {1.5, -0.5}); }, "fraction 0 is 1.500000, expected a value in [0, 1]"));
  EXPECT_TRUE(throws_with([] { random_split(numbers(10), {}); }, "needs at least one length"));
}

TEST(WeightedRandomSampler, DrawsInProportionAndReshufflesEachPass) {
  WeightedRandomSampler sampler({1.0, 0.0, 3.0}, 4000, true, 9);
  std::map<int64_t, int> counts;
  const std::vector<int64_t> first = sampler.next_pass();
  for (int64_t i : first) ++counts[i];
  EXPECT_EQ(counts[1], 0);
  EXPECT_NEAR(counts[2] / 4000.0, 0.75, 0.03);
  EXPECT_NE(sampler.next_pass(), first);  // epoch 1
  sampler.set_epoch(0);
  EXPECT_EQ(sampler.indices(), first);
  // Without replacement every nonzero index once.
  WeightedRandomSampler once({0.2, 0.0, 5.0, 1.0}, 3, false, 1);
  std::vector<int64_t> drawn = once.indices();
  std::sort(drawn.begin(), drawn.end());
  EXPECT_EQ(drawn, (std::vector<int64_t>{0, 2, 3}));
}

TEST(WeightedRandomSampler, BadWeightsAreRefused) {
  EXPECT_TRUE(throws_with([] { WeightedRandomSampler({1.0, -1.0}, 2); }, "weight 1 is -1.000000, expected a finite value >= 0"));
  EXPECT_TRUE(throws_with([] { WeightedRandomSampler({0.0, 0.0}, 2); }, "the weights are all 0"));
  EXPECT_TRUE(throws_with([] { WeightedRandomSampler({1.0, 0.0, 1.0}, 3, false); },
                          "cannot draw 3 samples without replacement from 2 nonzero weights"));
  EXPECT_TRUE(throws_with([] { WeightedRandomSampler({1.0}, 0); }, "num_samples should be a positive integer value, but got num_samples=0"));
}

}  // namespace
}  // namespace colony::data
